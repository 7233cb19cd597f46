// NdkCreateQpWithSrq refuses an over-limit InitiatorQueueDepth, MaxInitiatorRequestSge or
// InlineDataSize with STATUS_INSUFFICIENT_RESOURCES instead of the STATUS_INVALID_PARAMETER the
// page names for them (CQP-SRQ-05; the limit's own rule, CQP-SRQ-02..04, names the status too).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, NDK_SRQ* srq,
                            PVOID qp_context, ULONG initiator_depth, ULONG initiator_sge,
                            ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                            NDK_QP** out) {
    const NDK_ADAPTER_INFO& info = adapter_info();
    if (initiator_depth > info.MaxInitiatorQueueDepth ||
        initiator_sge > info.MaxInitiatorRequestSge || inline_size > info.MaxInlineDataSize)
        return STATUS_INSUFFICIENT_RESOURCES;  // the fault: the wrong refusal
    return base().pd.NdkCreateQpWithSrq(pd, receive_cq, initiator_cq, srq, qp_context,
                                        initiator_depth, initiator_sge, inline_size, completion,
                                        context, out);
}

void install(Tables& t) {
    t.pd.NdkCreateQpWithSrq = create_qp_with_srq;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQpWithSrq refuses over-limit sizes with STATUS_INSUFFICIENT_RESOURCES",
                   ndkct::faulty::install);
