// Shared by the faults whose NdkCreateQpWithSrq leaves one of its three limits unchecked
// (CQP-SRQ-02..04): a value past the adapter's maximum for that one size is not refused but
// clamped to the maximum (the vendor checked NdkCreateQp's limits and forgot the SRQ variant's),
// and the QP is created. The other two limits are checked as the page says. Field:
// 0 InitiatorQueueDepth, 1 MaxInitiatorRequestSge, 2 InlineDataSize.
#pragma once
#include <algorithm>

#include "faulty.hpp"

namespace ndkct::faulty {

template <int Field>
struct SrqQpLimitUnchecked {
    static NTSTATUS create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                                       NDK_SRQ* srq, PVOID qp_context, ULONG initiator_depth,
                                       ULONG initiator_sge, ULONG inline_size,
                                       NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                                       NDK_QP** out) {
        const NDK_ADAPTER_INFO& info = adapter_info();
        // the fault: this one limit is not checked, only capped (CQP-SRQ-05: never clamped)
        if constexpr (Field == 0)
            initiator_depth = std::min(initiator_depth, info.MaxInitiatorQueueDepth);
        if constexpr (Field == 1)
            initiator_sge = std::min(initiator_sge, info.MaxInitiatorRequestSge);
        if constexpr (Field == 2) inline_size = std::min(inline_size, info.MaxInlineDataSize);
        return base().pd.NdkCreateQpWithSrq(pd, receive_cq, initiator_cq, srq, qp_context,
                                            initiator_depth, initiator_sge, inline_size, completion,
                                            context, out);
    }

    static void install(Tables& t) { t.pd.NdkCreateQpWithSrq = create_qp_with_srq; }
};

}  // namespace ndkct::faulty
