// NdkFastRegister tests remote write with Flags & NDK_OP_FLAG_ALLOW_REMOTE_WRITE (0x30), which
// is non-zero for local write alone (0x10): an MR initialized without RemoteAccess refuses a
// local-write registration with STATUS_ACCESS_VIOLATION (FR-ACC-02).
#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::map<const NDK_MR*, bool> g_remote_access;  // as each MR was initialized

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                    NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_remote_access[mr] = remote_access != 0;
    }
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote_access, completion, context);
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    bool remote_access;
    {
        std::lock_guard lock(g_mutex);
        remote_access = g_remote_access[mr];
    }
    if ((flags & NDK_OP_FLAG_ALLOW_REMOTE_WRITE) && !remote_access)  // the fault: 0x10 & 0x30 != 0
        return STATUS_ACCESS_VIOLATION;
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister treats local write (0x10) as a remote right on a non-remote MR",
                   ndkct::faulty::install);
