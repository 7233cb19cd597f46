// NdkBuildLam reports every build through RequestCompletion twice after STATUS_PENDING
// (pended_callback_twice.hpp): LAM-ST-02, exactly one callback after STATUS_PENDING.
#include "pended_callback_twice.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    return pended_callback_twice::run(
        completion, context, [&](NDK_FN_REQUEST_COMPLETION* callback, void* forward) {
            return base().adapter.NdkBuildLAM(adapter, mdl, length, callback, forward, lam, size,
                                              fbo);
        });
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam calls its completion callback twice after STATUS_PENDING",
                   ndkct::faulty::install);
