// Shared by the NdkFastRegister faults that must know how the MR was initialized, with how many
// pages and whether with RemoteAccess (the reference keeps that to itself): the wrapper's
// NdkInitializeFastRegisterMr remembers both per MR, and rights_refused() says whether the
// reference refuses the request's remote rights (FR-ACC-01, checked before anything else), so that
// a fault can leave those requests to it and break only its own rule.
#pragma once

#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty::fr_remote_access {

struct Initialized {
    ULONG pages = 0;
    bool remote_access = false;
};

struct Remembered {
    std::mutex mutex;
    std::map<const NDK_MR*, Initialized> initialized;  // as each MR was last initialized
};

inline Remembered& remembered() {
    static Remembered r;
    return r;
}

inline void remember(const NDK_MR* mr, ULONG pages, BOOLEAN remote_access) {
    std::lock_guard lock(remembered().mutex);
    remembered().initialized[mr] = {pages, remote_access != 0};
}

// A new MR was never initialized, whatever MR had its address before (a closed MR's memory is
// reused): the faults' on_object.
inline void forget_reused(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeMr) return;
    std::lock_guard lock(remembered().mutex);
    remembered().initialized.erase(reinterpret_cast<const NDK_MR*>(object));
}

// NdkInitializeFastRegisterMr, remembering AdapterPageCount and RemoteAccess on the way to the
// reference.
inline NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                           NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    remember(mr, pages, remote_access);
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote_access, completion, context);
}

// How the MR was last initialized (zero pages, no RemoteAccess: never).
inline Initialized initialized(const NDK_MR* mr) {
    std::lock_guard lock(remembered().mutex);
    auto it = remembered().initialized.find(mr);
    return it == remembered().initialized.end() ? Initialized{} : it->second;
}

inline bool remote_access(const NDK_MR* mr) {
    return initialized(mr).remote_access;
}

// The reference refuses these Flags on this MR for its rights (FR-ACC-01).
inline bool rights_refused(const NDK_MR* mr, ULONG flags) {
    return !remote_access(mr) &&
           (flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT));
}

}  // namespace ndkct::faulty::fr_remote_access
