// NdkFastRegister waits for the provider's callback thread to go idle before it posts (to write
// the MR's translation entries while no completion is being processed); called from inside a CQ
// notification callback it waits for itself (FR-IRQL-01: IRQL <= DISPATCH_LEVEL, no blocking;
// GEN-IRQL-01).
#include "waits_for_callback_thread.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    callback_thread::wait_for_callback_thread();  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    callback_thread::track_notifications(t);
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister waits for the callback thread, even when called from it",
                   ndkct::faulty::install);
