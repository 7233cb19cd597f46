// NdkGetCqResultsEx reports RDMA writes with Type = NdkOperationTypeRead (CQ-RES-03).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    for (ULONG i = 0; i < n; ++i)
        if (results[i].Type == NdkOperationTypeWrite)
            results[i].Type = NdkOperationTypeRead;  // the fault
    return n;
}

void install(Tables& t) {
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NDK_RESULT_EX.Type says Read for a Write", ndkct::faulty::install);
