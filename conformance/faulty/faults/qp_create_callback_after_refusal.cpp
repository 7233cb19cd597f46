// NdkCreateQp refuses a call inline (sizes past the adapter's limits...) and calls its
// CreateCompletion with that failure and no QP as well (its common completion routine runs on
// the error path too): CQP-ST-04, a create refused inline is finished: no callback
// (GEN-ASYNC-03).
#include "inline_then_callback.hpp"

namespace ndkct::faulty {
namespace {

using namespace inline_then_callback;

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    NTSTATUS s = base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                       initiator_depth, receive_sge, initiator_sge, inline_size,
                                       completion, context, out);
    if (fires(When::failure, s)) create_callback(completion, context, s, nullptr);  // the fault
    return s;
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp calls its CreateCompletion after an inline failure",
                   ndkct::faulty::install);
