// Receive completions carry the receive's RequestContext as QPContext too (the receive path
// fills both fields from the work request), where every completion of a request posted on the QP,
// on either queue, must carry the QPContext given to NdkCreateQp (CQP-CTX-01). Only
// NdkGetCqResultsEx says an entry's type, so only that form shows the fault.
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

bool receive(NDK_OPERATION_TYPE type) {
    return type == NdkOperationTypeReceive || type == NdkOperationTypeReceiveAndInvalidate;
}

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    for (ULONG i = 0; i < n; ++i)
        if (receive(results[i].Type))
            results[i].QPContext = results[i].RequestContext;  // the fault
    return n;
}

void install(Tables& t) {
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("receive completions carry their RequestContext as QPContext",
                   ndkct::faulty::install);
