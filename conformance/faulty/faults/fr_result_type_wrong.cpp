// NdkGetCqResultsEx reports a fast registration's completion with Type = NdkOperationTypeBind
// (the memory-window path's type reused), where it must be NdkOperationTypeFastRegister
// (FR-RES-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    for (ULONG i = 0; i < n; ++i)
        if (results[i].Type == NdkOperationTypeFastRegister)
            results[i].Type = NdkOperationTypeBind;  // the fault
    return n;
}

void install(Tables& t) {
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NDK_RESULT_EX.Type says Bind for a FastRegister", ndkct::faulty::install);
