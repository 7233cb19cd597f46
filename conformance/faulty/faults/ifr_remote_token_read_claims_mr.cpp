// NdkGetRemoteTokenFromMr on a fast-register MR that is initialized but holds no registration yet
// allocates the MR's remote key and marks it valid, as if a registration held it (the key is made
// lazily, on first use): the next NdkFastRegister finds a valid key and is refused with
// STATUS_INVALID_DEVICE_STATE ("already registered"), until the MR is invalidated or initialized
// again. The page says the getter may be called once the initialization has completed
// (IFR-TOK-02); calling it must not change what the MR accepts.
#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Key {
    bool initialized_unregistered = false;  // initialized, no fast registration since
    bool claimed = false;                   // the fault: the read marked the key valid
};

std::mutex g_mutex;
std::map<const NDK_MR*, Key> g_keys;

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* fn,
                    PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_keys[mr] = Key{true, false};
    }
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, fn, context);
}

UINT32 remote_token(NDK_MR* mr) {
    {
        std::lock_guard lock(g_mutex);
        auto it = g_keys.find(mr);
        if (it != g_keys.end() && it->second.initialized_unregistered)
            it->second.claimed = true;  // the fault
    }
    return base().mr.NdkGetRemoteTokenFromMr(mr);
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    {
        std::lock_guard lock(g_mutex);
        auto it = g_keys.find(mr);
        if (it != g_keys.end() && it->second.claimed) return STATUS_INVALID_DEVICE_STATE;
    }
    NTSTATUS status =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (status == STATUS_SUCCESS) {
        std::lock_guard lock(g_mutex);
        g_keys[mr].initialized_unregistered = false;
    }
    return status;
}

NTSTATUS invalidate(NDK_QP* qp, PVOID context, NDK_OBJECT_HEADER* target, ULONG flags) {
    {
        std::lock_guard lock(g_mutex);
        auto it = g_keys.find(reinterpret_cast<const NDK_MR*>(target));
        if (it != g_keys.end()) it->second.claimed = false;
    }
    return base().qp.NdkInvalidate(qp, context, target, flags);
}

NTSTATUS close_mr(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* fn, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_keys.erase(reinterpret_cast<const NDK_MR*>(object));
    }
    return base().mr.NdkCloseMr(object, fn, context);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.mr.NdkGetRemoteTokenFromMr = remote_token;
    t.mr.NdkCloseMr = close_mr;
    t.qp.NdkFastRegister = fast_register;
    t.qp.NdkInvalidate = invalidate;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkGetRemoteTokenFromMr on an initialized MR marks its key valid, so the next "
    "NdkFastRegister is refused",
    ndkct::faulty::install);
