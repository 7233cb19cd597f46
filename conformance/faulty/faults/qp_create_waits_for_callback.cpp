// NdkCreateQp waits for the provider's callback thread to go idle before it creates the QP (to
// attach the new queues to the CQs while no completion is being processed); called from inside a
// CQ notification callback it waits for itself (CQP-IRQL-01: IRQL <= DISPATCH_LEVEL, no
// blocking; GEN-IRQL-01).
#include "waits_for_callback_thread.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    callback_thread::wait_for_callback_thread();  // the fault
    return base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                 initiator_depth, receive_sge, initiator_sge, inline_size,
                                 completion, context, out);
}

void install(Tables& t) {
    callback_thread::track_notifications(t);
    t.pd.NdkCreateQp = create_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp waits for the callback thread, even when called from it",
                   ndkct::faulty::install);
