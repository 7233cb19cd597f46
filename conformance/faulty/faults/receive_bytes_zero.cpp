// NdkGetCqResultsEx leaves BytesTransferred 0 in receive completions instead of the number of
// bytes received (CQ-RES-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    for (ULONG i = 0; i < n; ++i)
        if (results[i].Type == NdkOperationTypeReceive ||
            results[i].Type == NdkOperationTypeReceiveAndInvalidate)
            results[i].BytesTransferred = 0;  // the fault
    return n;
}

void install(Tables& t) {
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("receive completions report 0 bytes transferred", ndkct::faulty::install);
