// NdkGetLocalTokenFromMr of a fast-register MR returns 0 until the MR's first NdkFastRegister:
// the vendor allocates the device key lazily, when the first fast registration is posted, and
// the getter returns the MR object's key field, still 0 before that. The token page lets the
// getter be called once NdkInitializeFastRegisterMr completed, and the value it returns then
// is the MR's local token (IFR-TOK-01; AMB-40 from_initialize: local SGEs with it reach the
// region the next fast registration makes). 0 reaches nothing.
#include <mutex>
#include <set>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::set<const NDK_MR*> g_initialized;  // MRs given to NdkInitializeFastRegisterMr
std::set<const NDK_MR*> g_keyed;        // ...and, of those, the fast-registered ever since

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                    NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_initialized.insert(mr);
    }
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote_access, completion, context);
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS status =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (status == STATUS_SUCCESS) {  // the device key exists from now on
        std::lock_guard lock(g_mutex);
        g_keyed.insert(mr);
    }
    return status;
}

UINT32 local_token(NDK_MR* mr) {
    {
        std::lock_guard lock(g_mutex);
        if (g_initialized.count(mr) && !g_keyed.count(mr)) return 0;  // the fault
    }
    return base().mr.NdkGetLocalTokenFromMr(mr);
}

// An MR's address may be reused by a later NdkCreateMr: a registration or a close forgets it.
NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_initialized.erase(mr);
        g_keyed.erase(mr);
    }
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

NTSTATUS close_mr(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_initialized.erase(reinterpret_cast<NDK_MR*>(object));
        g_keyed.erase(reinterpret_cast<NDK_MR*>(object));
    }
    return base().mr.NdkCloseMr(object, completion, context);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.mr.NdkRegisterMr = register_mr;
    t.mr.NdkGetLocalTokenFromMr = local_token;
    t.mr.NdkCloseMr = close_mr;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkGetLocalTokenFromMr of a fast-register MR returns 0 until its first NdkFastRegister",
    ndkct::faulty::install);
