// Shared by the faults whose pended request completes with the wrong Context: the provider keeps
// its own object (the MR, the LAM buffer) in the completion it queues and hands that to
// RequestCompletion instead of the consumer's RequestContext (*-CTX-01, GEN-CB-03). The right
// callback never comes; a request finished inline is unaffected.
#pragma once

#include "faulty.hpp"

namespace ndkct::faulty::wrong_context {

struct Forward {
    NDK_FN_REQUEST_COMPLETION* completion;
    void* wrong;  // what the provider passes as Context
};

inline void complete(void* forward, NTSTATUS status) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    f.completion(f.wrong, status);  // the fault
}

// Calls `base(completion, context)` with a completion that passes `wrong` as the Context.
template <typename Base>
NTSTATUS call(NDK_FN_REQUEST_COMPLETION* completion, void* wrong, Base base) {
    if (!completion) return base(completion, nullptr);
    auto* forward = new Forward{completion, wrong};
    NTSTATUS s = base(complete, forward);
    if (s != STATUS_PENDING) delete forward;
    return s;
}

}  // namespace ndkct::faulty::wrong_context
