// The provider keeps requests posted with NDK_OP_FLAG_DEFER back until a request without DEFER
// comes (allowed: DEFER is a hint; the reference provider does so), but when it refuses a fast
// registration inline (remote rights on an MR initialized without RemoteAccess) it returns at
// once and never hands the held ones to the hardware: the deferred chain is stranded, its
// requests never complete (DEFER-04, FR-DEFER-02, DEFER-06).
#include <mutex>
#include <unordered_map>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex lock;
std::unordered_map<NDK_MR*, bool> remote_access;  // as initialized

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* completion,
                    PVOID context) {
    {
        std::lock_guard guard(lock);
        remote_access[mr] = remote != 0;
    }
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, completion, context);
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    bool remote_requested =
        flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT);
    bool local_only;
    {
        std::lock_guard guard(lock);
        auto it = remote_access.find(mr);
        local_only = it != remote_access.end() && !it->second;
    }
    // FR-ACC-01, right; the fault: refused here, before the reference (the "hardware" queue)
    // sees the call, so the requests it holds with DEFER stay held.
    if (remote_requested && local_only) return STATUS_ACCESS_VIOLATION;
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

// A new MR was never initialized, whatever MR had its address before (a closed MR's memory is
// reused).
void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeMr) return;
    std::lock_guard guard(lock);
    remote_access.erase(reinterpret_cast<NDK_MR*>(object));
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "an inline refusal of NdkFastRegister leaves the earlier DEFER requests held forever",
    ndkct::faulty::install, ndkct::faulty::on_object);
