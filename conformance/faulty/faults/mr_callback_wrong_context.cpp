// NdkRegisterMr's pended registration completes with the MR as Context, not the consumer's
// RequestContext (RMR-CTX-01, GEN-CB-03).
#include "wrong_context.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (!completion) return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    return wrong_context::call(completion, mr, [&](NDK_FN_REQUEST_COMPLETION* c, void* ctx) {
        return base().mr.NdkRegisterMr(mr, mdl, length, flags, c, ctx);
    });
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr completes a pended registration with the MR as Context",
                   ndkct::faulty::install);
