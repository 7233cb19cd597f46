// NdkRegisterMr refuses a call inline (a broken MDL chain, too many bytes...) and calls its
// completion callback with that failure as well (its common completion routine runs on the error
// path too): RMR-ST-04, a request refused inline is finished: no callback (GEN-ASYNC-03).
#include "inline_then_callback.hpp"

namespace ndkct::faulty {
namespace {

using namespace inline_then_callback;

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    NTSTATUS s = base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    if (fires(When::failure, s)) request_callback(completion, context, s);  // the fault
    return s;
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr calls its completion callback after an inline failure",
                   ndkct::faulty::install);
