// NdkCreateQpWithSrq hands pReceiveCq and pInitiatorCq to the hardware in each other's places:
// the receives the QP takes from its SRQ complete on its initiator CQ, its initiator requests on
// its receive CQ. NdkCreateQp is right (CQP-SRQ-01: a QP made with an SRQ receives from it with
// its completions on pReceiveCq; CQP-OBJ-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, NDK_SRQ* srq,
                            PVOID qp_context, ULONG initiator_depth, ULONG initiator_sge,
                            ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                            NDK_QP** out) {
    // the fault: the CQs swapped
    return base().pd.NdkCreateQpWithSrq(pd, initiator_cq, receive_cq, srq, qp_context,
                                        initiator_depth, initiator_sge, inline_size, completion,
                                        context, out);
}

void install(Tables& t) {
    t.pd.NdkCreateQpWithSrq = create_qp_with_srq;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQpWithSrq sends the SRQ receives' completions to pInitiatorCq",
                   ndkct::faulty::install);
