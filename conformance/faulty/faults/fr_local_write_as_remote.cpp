// NdkFastRegister tests remote write with Flags & NDK_OP_FLAG_ALLOW_REMOTE_WRITE (0x30), which
// is non-zero for local write alone (0x10): an MR initialized without RemoteAccess refuses a
// local-write registration with STATUS_ACCESS_VIOLATION (FR-ACC-02).
#include "fr_remote_access.hpp"

namespace ndkct::faulty {
namespace {

using namespace fr_remote_access;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    // the fault: 0x10 & 0x30 != 0
    if ((flags & NDK_OP_FLAG_ALLOW_REMOTE_WRITE) && !remote_access(mr))
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
                   ndkct::faulty::install, ndkct::faulty::fr_remote_access::forget_reused);
