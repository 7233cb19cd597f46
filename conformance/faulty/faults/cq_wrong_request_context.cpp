// NdkGetCqResults(Ex) fills RequestContext from the QP's QPContext instead of the work
// request's RequestContext (CQ-RES-05).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

template <typename Result>
void mix_up(Result* results, ULONG n) {
    for (ULONG i = 0; i < n; ++i)
        results[i].RequestContext = results[i].QPContext;  // the fault
}

ULONG get_results(NDK_CQ* cq, NDK_RESULT results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResults(cq, results, count);
    mix_up(results, n);
    return n;
}

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    mix_up(results, n);
    return n;
}

void install(Tables& t) {
    t.cq.NdkGetCqResults = get_results;
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("completions carry the QPContext in RequestContext", ndkct::faulty::install);
