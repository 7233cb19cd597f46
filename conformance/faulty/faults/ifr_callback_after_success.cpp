// NdkInitializeFastRegisterMr finishes inline with STATUS_SUCCESS and calls its completion
// callback as well (its common completion routine runs on the inline path too): IFR-ST-01, a
// request finished inline gets no callback (GEN-ASYNC-03).
#include "inline_then_callback.hpp"

namespace ndkct::faulty {
namespace {

using namespace inline_then_callback;

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* completion,
                    PVOID context) {
    NTSTATUS s = base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, completion, context);
    if (fires(When::success, s)) request_callback(completion, context, s);  // the fault
    return s;
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkInitializeFastRegisterMr calls its completion callback after an inline "
    "STATUS_SUCCESS",
    ndkct::faulty::install);
