// NdkCreateQp clamps queue depths, SGE counts and InlineDataSize to the adapter's limits
// instead of refusing them with STATUS_INVALID_PARAMETER (CQP-LIM-06).
#include <algorithm>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    const NDK_ADAPTER_INFO& info = adapter_info();  // the fault: clamp, do not refuse
    return base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context,
                                 std::min(receive_depth, info.MaxReceiveQueueDepth),
                                 std::min(initiator_depth, info.MaxInitiatorQueueDepth),
                                 std::min(receive_sge, info.MaxReceiveRequestSge),
                                 std::min(initiator_sge, info.MaxInitiatorRequestSge),
                                 std::min(inline_size, info.MaxInlineDataSize), completion, context,
                                 out);
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp clamps over-limit depths and sizes instead of refusing them",
                   ndkct::faulty::install);
