// NdkCreateQp holds InlineDataSize to half of the MaxInlineDataSize it advertises and refuses a
// larger value with STATUS_INVALID_PARAMETER, though every value up to the maximum is within the
// limit and must not be refused for it (CQP-LIM-07).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    if (inline_size > adapter_info().MaxInlineDataSize / 2 &&
        inline_size <= adapter_info().MaxInlineDataSize)
        return STATUS_INVALID_PARAMETER;  // the fault: a lower limit than the one advertised
    return base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                 initiator_depth, receive_sge, initiator_sge, inline_size,
                                 completion, context, out);
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp refuses an InlineDataSize above half the advertised maximum",
                   ndkct::faulty::install);
