// NdkGetRemoteTokenFromMr of a fast-register MR returns the MR's local token (the vendor's
// fast-register path fills the MR's remote key from the local key it just programmed), which
// does not reach the region from the peer: the token a consumer hands out after NdkFastRegister
// returned is not the one that reaches the new region (FR-TOK-01). Registered (NdkRegisterMr)
// MRs keep the right remote token (remote_token_is_local breaks those, RMR-TOK-02).
#include <mutex>
#include <set>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::set<const NDK_MR*> g_fast_register;  // MRs given to NdkInitializeFastRegisterMr

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                    NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_fast_register.insert(mr);
    }
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote_access, completion, context);
}

// An MR's address may be reused by a later NdkCreateMr: a registration makes it an ordinary MR.
NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_fast_register.erase(mr);
    }
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

UINT32 remote_token(NDK_MR* mr) {
    bool fast;
    {
        std::lock_guard lock(g_mutex);
        fast = g_fast_register.count(mr) != 0;
    }
    if (fast) return base().mr.NdkGetLocalTokenFromMr(mr);  // the fault
    return base().mr.NdkGetRemoteTokenFromMr(mr);
}

// A new MR was never initialized, whatever MR had its address before.
void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeMr) return;
    std::lock_guard lock(g_mutex);
    g_fast_register.erase(reinterpret_cast<NDK_MR*>(object));
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.mr.NdkRegisterMr = register_mr;
    t.mr.NdkGetRemoteTokenFromMr = remote_token;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkGetRemoteTokenFromMr of a fast-register MR returns its local token",
                   ndkct::faulty::install, ndkct::faulty::on_object);
