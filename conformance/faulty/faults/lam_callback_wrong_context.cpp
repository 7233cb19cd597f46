// NdkBuildLam's pended build completes with the mapping buffer (pNdkLAM) as Context, not the
// consumer's RequestContext (LAM-CTX-01, GEN-CB-03).
#include "wrong_context.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    if (!completion)
        return base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size,
                                          fbo);
    return wrong_context::call(completion, lam, [&](NDK_FN_REQUEST_COMPLETION* c, void* ctx) {
        return base().adapter.NdkBuildLAM(adapter, mdl, length, c, ctx, lam, size, fbo);
    });
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam completes a pended build with the mapping buffer as Context",
                   ndkct::faulty::install);
