// Requests flushed after an error (or by NdkFlush) are reported with STATUS_SUCCESS instead of
// STATUS_CANCELLED (FLS-02, CQ-CST-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

template <typename Result>
void uncancel(Result* results, ULONG n) {
    for (ULONG i = 0; i < n; ++i)
        if (results[i].Status == STATUS_CANCELLED) results[i].Status = STATUS_SUCCESS;  // the fault
}

ULONG get_results(NDK_CQ* cq, NDK_RESULT results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResults(cq, results, count);
    uncancel(results, n);
    return n;
}

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    uncancel(results, n);
    return n;
}

void install(Tables& t) {
    t.cq.NdkGetCqResults = get_results;
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("cancelled requests complete with STATUS_SUCCESS", ndkct::faulty::install);
