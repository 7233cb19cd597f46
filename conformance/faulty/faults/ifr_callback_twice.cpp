// NdkInitializeFastRegisterMr reports every initialization through RequestCompletion twice after
// STATUS_PENDING (pended_callback_twice.hpp): IFR-ST-02, exactly one callback after
// STATUS_PENDING.
#include "pended_callback_twice.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* completion,
                    PVOID context) {
    return pended_callback_twice::run(
        completion, context, [&](NDK_FN_REQUEST_COMPLETION* callback, void* forward) {
            return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, callback, forward);
        });
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkInitializeFastRegisterMr calls its completion callback twice after STATUS_PENDING",
    ndkct::faulty::install);
