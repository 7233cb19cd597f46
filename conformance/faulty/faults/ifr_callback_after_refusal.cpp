// NdkInitializeFastRegisterMr refuses a call inline (STATUS_IMPLEMENTATION_LIMIT and the like)
// and calls its completion callback with that failure as well (its common completion routine
// runs on the error path too): IFR-ST-03, a request refused inline is finished: no callback
// (GEN-ASYNC-03).
#include "inline_then_callback.hpp"

namespace ndkct::faulty {
namespace {

using namespace inline_then_callback;

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* completion,
                    PVOID context) {
    NTSTATUS s = base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, completion, context);
    if (fires(When::failure, s)) request_callback(completion, context, s);  // the fault
    return s;
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkInitializeFastRegisterMr calls its completion callback after an inline "
    "failure",
    ndkct::faulty::install);
