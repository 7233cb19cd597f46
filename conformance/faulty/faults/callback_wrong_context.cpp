// NdkListen completes through its callback with the listener as Context instead of the
// RequestContext the consumer passed (GEN-CB-03).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Forward {
    NDK_FN_REQUEST_COMPLETION* completion;
    NDK_LISTENER* listener;
};

void wrong_context(void* forward, NTSTATUS status) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    f.completion(f.listener, status);  // the fault
}

NTSTATUS listen(NDK_LISTENER* listener, const PSOCKADDR address, ULONG length,
                NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (!completion)
        return base().listener.NdkListen(listener, address, length, completion, context);
    auto* forward = new Forward{completion, listener};
    NTSTATUS status = base().listener.NdkListen(listener, address, length, wrong_context, forward);
    if (status == STATUS_PENDING) return status;
    delete forward;
    if (status != STATUS_SUCCESS) return status;
    completion(listener,
               status);  // reported through the callback (allowed), with the wrong Context
    return STATUS_PENDING;
}

void install(Tables& t) {
    t.listener.NdkListen = listen;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkListen's completion callback gets the listener as Context, not RequestContext",
    ndkct::faulty::install);
