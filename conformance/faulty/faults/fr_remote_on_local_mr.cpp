// NdkFastRegister with remote rights on an MR initialized with RemoteAccess = FALSE registers
// the region with the local rights only and returns STATUS_SUCCESS, where it must fail inline
// with STATUS_ACCESS_VIOLATION (FR-ACC-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

constexpr ULONG kRemoteBits = NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS status =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (status == STATUS_ACCESS_VIOLATION &&
        (flags & kRemoteBits))  // the fault: drop the rights, succeed
        status = base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va,
                                           flags & ~kRemoteBits);
    return status;
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister accepts remote rights on an MR initialized without RemoteAccess",
    ndkct::faulty::install);
