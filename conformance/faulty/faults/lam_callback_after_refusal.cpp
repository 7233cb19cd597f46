// NdkBuildLam refuses a call inline (a buffer too small, a broken chain) and calls its
// completion callback with that failure as well (its common completion routine runs on the error
// path too): LAM-ST-04, a request refused inline is finished: no callback (GEN-ASYNC-03).
#include "inline_then_callback.hpp"

namespace ndkct::faulty {
namespace {

using namespace inline_then_callback;

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    NTSTATUS s =
        base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size, fbo);
    if (fires(When::failure, s)) request_callback(completion, context, s);  // the fault
    return s;
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam calls its completion callback after an inline failure",
                   ndkct::faulty::install);
