// NdkFastRegister refuses an FBO of 2048 or more with STATUS_INVALID_PARAMETER (the vendor's
// fast-register work-queue entry holds the first byte offset in an 11-bit field), though the
// FBO is a byte offset within the first page and every value 0..PAGE_SIZE-1 must be accepted
// (FR-FBO-01).
#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::map<const NDK_MR*, bool> g_remote_access;  // as each MR was last initialized

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
    // The rights are checked first, as the reference does (FR-ACC-01 keeps its status): the
    // fault is the FBO alone, refused where the request is otherwise valid.
    const bool rights_refused =
        !remote_access &&
        (flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT));
    if (!rights_refused && fbo >= 2048 && fbo < PAGE_SIZE)
        return STATUS_INVALID_PARAMETER;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister refuses an FBO of 2048 or more inside the page",
                   ndkct::faulty::install);
