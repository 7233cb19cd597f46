// NdkInitializeFastRegisterMr waits for the provider's callback thread to go idle before it
// initializes (to program the MR's translation table while no completion is being processed);
// called from inside a CQ notification callback it waits for itself (IFR-IRQL-01: IRQL <=
// DISPATCH_LEVEL, no blocking; GEN-IRQL-01).
#include "waits_for_callback_thread.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* completion,
                    PVOID context) {
    callback_thread::wait_for_callback_thread();  // the fault
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, completion, context);
}

void install(Tables& t) {
    callback_thread::track_notifications(t);
    t.mr.NdkInitializeFastRegisterMr = initialize;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkInitializeFastRegisterMr waits for the callback thread, even when called "
    "from it",
    ndkct::faulty::install);
