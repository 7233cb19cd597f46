// Shared by the faults whose request function, after STATUS_PENDING, calls the consumer's
// completion callback twice: once from the completion path and once more from a retry path that
// does not know the first ran (*-ST-02 / IFR-ST-02: exactly one RequestCompletion after
// STATUS_PENDING; GEN-ASYNC-01). A request the reference finishes inline is pended too (a
// provider may always pend), so every request of the function shows the fault.
#pragma once

#include "faulty.hpp"

namespace ndkct::faulty::pended_callback_twice {

// The consumer's callback and context, carried through the reference's completion.
struct Forward {
    NDK_FN_REQUEST_COMPLETION* completion;
    void* context;
};

// The reference's completion callback for a request it pended.
inline void twice(void* forward, NTSTATUS status) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    f.completion(f.context, status);
    f.completion(f.context, status);  // the fault
}

// Runs `request(callback, context)` (the reference's request function with its completion
// arguments replaced) and reports its result through the consumer's callback twice.
template <typename Request>
NTSTATUS run(NDK_FN_REQUEST_COMPLETION* completion, void* context, Request&& request) {
    if (!completion) return request(completion, context);
    auto* forward = new Forward{completion, context};
    NTSTATUS status = request(&twice, static_cast<void*>(forward));
    if (status == STATUS_PENDING) return status;
    delete forward;
    // An inline failure stays inline (its own rules are other faults'); an inline success is
    // reported through the callback instead (allowed), but twice (the fault).
    if (status != STATUS_SUCCESS) return status;
    completion(context, status);
    completion(context, status);
    return STATUS_PENDING;
}

}  // namespace ndkct::faulty::pended_callback_twice
