// Shared by the faults that build a QP smaller than the consumer asked for: NdkCreateQp accepts
// the sizes (they are within the adapter's limits) but creates the QP with Edit's sizes, so the
// QP refuses requests its own sizes promise. Edit(receive depth, initiator depth, receive SGEs,
// initiator SGEs, inline data size).
#pragma once
#include "faulty.hpp"

namespace ndkct::faulty {

using QpShapeEdit = void (*)(ULONG& receive_depth, ULONG& initiator_depth, ULONG& receive_sge,
                             ULONG& initiator_sge, ULONG& inline_size);

template <QpShapeEdit Edit>
struct QpShapeFault {
    static NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                              PVOID qp_context, ULONG receive_depth, ULONG initiator_depth,
                              ULONG receive_sge, ULONG initiator_sge, ULONG inline_size,
                              NDK_FN_CREATE_COMPLETION* completion, PVOID context, NDK_QP** out) {
        const NDK_ADAPTER_INFO& info = adapter_info();
        if (receive_depth <= info.MaxReceiveQueueDepth &&
            initiator_depth <= info.MaxInitiatorQueueDepth &&
            receive_sge <= info.MaxReceiveRequestSge &&
            initiator_sge <= info.MaxInitiatorRequestSge && inline_size <= info.MaxInlineDataSize)
            Edit(receive_depth, initiator_depth, receive_sge, initiator_sge,
                 inline_size);  // the fault
        return base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                     initiator_depth, receive_sge, initiator_sge, inline_size,
                                     completion, context, out);
    }

    static void install(Tables& t) { t.pd.NdkCreateQp = create_qp; }
};

}  // namespace ndkct::faulty
