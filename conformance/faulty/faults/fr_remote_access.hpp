// Shared by the NdkFastRegister faults that must know whether the MR was initialized with
// RemoteAccess (the reference keeps that to itself): the wrapper's NdkInitializeFastRegisterMr
// remembers it per MR, and rights_refused() says whether the reference refuses the request's
// remote rights (FR-ACC-01, checked before anything else), so that a fault can leave those
// requests to it and break only its own rule.
#pragma once

#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty::fr_remote_access {

struct Remembered {
    std::mutex mutex;
    std::map<const NDK_MR*, bool> remote_access;  // as each MR was last initialized
};

inline Remembered& remembered() {
    static Remembered r;
    return r;
}

// NdkInitializeFastRegisterMr, remembering RemoteAccess on the way to the reference.
inline NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                           NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(remembered().mutex);
        remembered().remote_access[mr] = remote_access != 0;
    }
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote_access, completion, context);
}

inline bool remote_access(const NDK_MR* mr) {
    std::lock_guard lock(remembered().mutex);
    return remembered().remote_access[mr];
}

// The reference refuses these Flags on this MR for its rights (FR-ACC-01).
inline bool rights_refused(const NDK_MR* mr, ULONG flags) {
    return !remote_access(mr) &&
           (flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT));
}

}  // namespace ndkct::faulty::fr_remote_access
