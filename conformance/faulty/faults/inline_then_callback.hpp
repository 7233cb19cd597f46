// Shared by the faults whose request function finishes a request inline and reports it through
// its completion callback as well: the provider's common completion routine runs on every exit
// path, the inline ones included, before the function returns its final status (*-ST-01 after
// STATUS_SUCCESS, *-ST-04 / IFR-ST-03 after an inline failure; GEN-ASYNC-03). Called on the
// caller's thread before the return, the callback is seen at the call that caused it (a worker
// thread's would land a step later at random, as callback_after_success's may).
#pragma once

#include "faulty.hpp"

namespace ndkct::faulty::inline_then_callback {

// Which inline results also get the callback.
enum class When { success, failure };

inline bool fires(When when, NTSTATUS status) {
    if (status == STATUS_PENDING) return false;
    return when == When::success ? status == STATUS_SUCCESS : !NT_SUCCESS(status);
}

// A request callback (NDK_FN_REQUEST_COMPLETION) for a request about to return `status`.
inline void request_callback(NDK_FN_REQUEST_COMPLETION* completion, void* context,
                             NTSTATUS status) {
    if (completion) completion(context, status);
}

// A create callback (NDK_FN_CREATE_COMPLETION): with the object created inline, if any.
inline void create_callback(NDK_FN_CREATE_COMPLETION* completion, void* context, NTSTATUS status,
                            NDK_OBJECT_HEADER* object) {
    if (completion) completion(context, status, object);
}

}  // namespace ndkct::faulty::inline_then_callback
