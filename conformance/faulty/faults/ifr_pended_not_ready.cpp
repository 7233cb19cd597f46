// NdkInitializeFastRegisterMr programs the MR on its worker and completes every initialization
// through RequestCompletion (STATUS_PENDING; allowed), but only its old inline path set the MR's
// "ready" bit: NdkFastRegister refuses the MR with STATUS_INVALID_DEVICE_STATE, as if it were
// never initialized, where after a successful initialization it must be accepted (IFR-POST-01).
// Its argument checks (the rights, Length, the pages, FBO and the base's alignment) come first,
// as the reference's do: a request they refuse is left to the reference.
#include <mutex>
#include <unordered_set>

#include "fr_remote_access.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::unordered_set<const NDK_MR*> g_not_ready;  // initialized through the worker path

struct Forward {
    NDK_MR* mr;
    NDK_FN_REQUEST_COMPLETION* completion;
    void* context;
};

void completed(Forward f, NTSTATUS status) {
    if (status == STATUS_SUCCESS) {
        std::lock_guard lock(g_mutex);
        g_not_ready.insert(f.mr);  // the fault: the worker path never marks the MR ready
    }
    f.completion(f.context, status);
}

void on_done(void* forward, NTSTATUS status) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    completed(f, status);
}

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* completion,
                    PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_not_ready.erase(mr);
    }
    fr_remote_access::remember(mr, pages, remote);
    if (!completion)
        return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, completion, context);
    auto* forward = new Forward{mr, completion, context};
    NTSTATUS s = base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, on_done, forward);
    if (s == STATUS_PENDING) return s;
    Forward f = *forward;
    delete forward;
    if (s != STATUS_SUCCESS) return s;
    completed(f, s);  // finished at once, reported through the callback all the same
    return STATUS_PENDING;
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG pages,
                       const NDK_LOGICAL_ADDRESS* array, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    const bool arguments_refused = fr_remote_access::rights_refused(mr, flags) || length == 0 ||
                                   pages == 0 || !array || fbo >= PAGE_SIZE ||
                                   reinterpret_cast<uintptr_t>(base_va) % PAGE_SIZE != fbo ||
                                   length > SIZE_T(pages) * PAGE_SIZE - fbo;
    if (!arguments_refused) {
        std::lock_guard lock(g_mutex);
        if (g_not_ready.contains(mr)) return STATUS_INVALID_DEVICE_STATE;  // the fault
    }
    return base().qp.NdkFastRegister(qp, context, mr, pages, array, fbo, length, base_va, flags);
}

// A new MR was never initialized, whatever MR had its address before (a closed MR's memory is
// reused).
void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeMr) return;
    fr_remote_access::forget_reused(object);
    std::lock_guard lock(g_mutex);
    g_not_ready.erase(reinterpret_cast<NDK_MR*>(object));
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister refuses an MR whose NdkInitializeFastRegisterMr completed through "
    "RequestCompletion",
    ndkct::faulty::install, ndkct::faulty::on_object);
