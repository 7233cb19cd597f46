// NdkCreateQp refuses over-limit depths, SGE counts and InlineDataSize with
// STATUS_INSUFFICIENT_RESOURCES instead of the STATUS_INVALID_PARAMETER the page names for them
// (CQP-LIM-06).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    const NDK_ADAPTER_INFO& info = adapter_info();
    if (receive_depth > info.MaxReceiveQueueDepth ||
        initiator_depth > info.MaxInitiatorQueueDepth || receive_sge > info.MaxReceiveRequestSge ||
        initiator_sge > info.MaxInitiatorRequestSge || inline_size > info.MaxInlineDataSize)
        return STATUS_INSUFFICIENT_RESOURCES;  // the fault: the wrong refusal
    return base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                 initiator_depth, receive_sge, initiator_sge, inline_size,
                                 completion, context, out);
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp refuses over-limit sizes with STATUS_INSUFFICIENT_RESOURCES",
                   ndkct::faulty::install);
