// NdkInitializeFastRegisterMr's pended initialization completes with the MR as Context, not the
// consumer's RequestContext (IFR-CTX-01, GEN-CB-03).
#include "wrong_context.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* completion,
                    PVOID context) {
    if (!completion)
        return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, completion, context);
    return wrong_context::call(completion, mr, [&](NDK_FN_REQUEST_COMPLETION* c, void* ctx) {
        return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, c, ctx);
    });
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkInitializeFastRegisterMr completes a pended initialization with the MR "
    "as Context",
    ndkct::faulty::install);
