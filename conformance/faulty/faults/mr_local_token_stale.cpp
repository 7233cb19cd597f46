// NdkGetLocalTokenFromMr returns the local token of the MR's first registration forever: the
// vendor caches the key in its MR object the first time it is asked and never refreshes it when
// the MR is deregistered and registered again. After a new registration has completed, the
// getter must return the token local SGEs use to reach it (RMR-TOK-01); the cached one is the
// old registration's, which the device no longer accepts.
#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::map<NDK_MR*, UINT32> g_cached;  // MR (NdkRegisterMr's) -> the local token it reported first

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_cached.try_emplace(mr, 0);  // a plain MR: its token is cached once reported
    }
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

UINT32 local_token(NDK_MR* mr) {
    std::lock_guard lock(g_mutex);
    auto it = g_cached.find(mr);
    if (it == g_cached.end()) return base().mr.NdkGetLocalTokenFromMr(mr);  // fast-register MR
    if (it->second == 0) it->second = base().mr.NdkGetLocalTokenFromMr(mr);
    return it->second;  // the fault: never refreshed after a new registration
}

NTSTATUS close_mr(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_cached.erase(reinterpret_cast<NDK_MR*>(object));  // the MR object goes with its cache
    }
    return base().mr.NdkCloseMr(object, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
    t.mr.NdkGetLocalTokenFromMr = local_token;
    t.mr.NdkCloseMr = close_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkGetLocalTokenFromMr keeps returning the local token of the MR's first "
    "registration after it is registered again",
    ndkct::faulty::install);
