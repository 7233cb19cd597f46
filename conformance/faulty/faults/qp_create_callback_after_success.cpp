// NdkCreateQp creates the QP inline, returns STATUS_SUCCESS with *ppNdkQp written, and calls its
// CreateCompletion with the QP as well (its common completion routine runs on the inline path
// too): CQP-ST-01, a create finished inline gets no callback (GEN-ASYNC-03).
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
    if (fires(When::success, s))  // the fault
        create_callback(completion, context, s, reinterpret_cast<NDK_OBJECT_HEADER*>(*out));
    return s;
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp calls its CreateCompletion after an inline STATUS_SUCCESS",
                   ndkct::faulty::install);
