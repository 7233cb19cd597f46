// NdkCreateQp hands pReceiveCq and pInitiatorCq to the hardware in each other's places (the
// vendor's queue-pair context lists the send queue's CQ first): receive completions go to the
// initiator CQ and initiator completions to the receive CQ. A QP with one CQ for both is right by
// luck (CQP-OBJ-02: receive completions go to pReceiveCq, initiator completions to pInitiatorCq).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    // the fault: the CQs swapped (the depths and SGE counts stay with their own queues)
    return base().pd.NdkCreateQp(pd, initiator_cq, receive_cq, qp_context, receive_depth,
                                 initiator_depth, receive_sge, initiator_sge, inline_size,
                                 completion, context, out);
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkCreateQp sends receive completions to pInitiatorCq and initiator "
    "completions to pReceiveCq",
    ndkct::faulty::install);
