// NdkBuildLam waits for the provider's callback thread to go idle before it maps (to walk the
// IOMMU tables while no completion is being processed); called from inside a CQ notification
// callback it waits for itself (LAM-IRQL-01: IRQL <= DISPATCH_LEVEL, no blocking; GEN-IRQL-01).
#include "waits_for_callback_thread.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    callback_thread::wait_for_callback_thread();  // the fault
    return base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size, fbo);
}

void install(Tables& t) {
    callback_thread::track_notifications(t);
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam waits for the callback thread, even when called from it",
                   ndkct::faulty::install);
