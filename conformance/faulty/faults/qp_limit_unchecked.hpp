// Shared by the faults whose NdkCreateQp leaves one of its five limits unchecked (CQP-LIM-01..05):
// a value past the adapter's maximum for that one size is not refused but clamped to the
// maximum (the vendor sizes the hardware queue from the capped value), and the QP is created.
// The other four limits are checked as the page says. Field: 0 ReceiveQueueDepth,
// 1 InitiatorQueueDepth, 2 MaxReceiveRequestSge, 3 MaxInitiatorRequestSge, 4 InlineDataSize.
#pragma once
#include <algorithm>

#include "faulty.hpp"

namespace ndkct::faulty {

template <int Field>
struct QpLimitUnchecked {
    static NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                              PVOID qp_context, ULONG receive_depth, ULONG initiator_depth,
                              ULONG receive_sge, ULONG initiator_sge, ULONG inline_size,
                              NDK_FN_CREATE_COMPLETION* completion, PVOID context, NDK_QP** out) {
        const NDK_ADAPTER_INFO& info = adapter_info();
        // the fault: this one limit is not checked, only capped
        if constexpr (Field == 0)
            receive_depth = std::min(receive_depth, info.MaxReceiveQueueDepth);
        if constexpr (Field == 1)
            initiator_depth = std::min(initiator_depth, info.MaxInitiatorQueueDepth);
        if constexpr (Field == 2) receive_sge = std::min(receive_sge, info.MaxReceiveRequestSge);
        if constexpr (Field == 3)
            initiator_sge = std::min(initiator_sge, info.MaxInitiatorRequestSge);
        if constexpr (Field == 4) inline_size = std::min(inline_size, info.MaxInlineDataSize);
        return base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                     initiator_depth, receive_sge, initiator_sge, inline_size,
                                     completion, context, out);
    }

    static void install(Tables& t) { t.pd.NdkCreateQp = create_qp; }
};

}  // namespace ndkct::faulty
