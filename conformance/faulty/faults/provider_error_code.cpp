// NdkGetCqResultsEx leaves a stale non-zero ProviderErrorCode in successful completions (2.1:
// it must be 0 when Status is STATUS_SUCCESS, CQ-RES-04).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    for (ULONG i = 0; i < n; ++i)
        if (results[i].Status == STATUS_SUCCESS)
            results[i].ProviderErrorCode = 0x5EA1;  // the fault
    return n;
}

void install(Tables& t) {
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("successful completions carry a non-zero ProviderErrorCode",
                   ndkct::faulty::install);
