// NdkFastRegister grants remote read to every region it can, though without
// NDK_OP_FLAG_ALLOW_REMOTE_READ a peer's RDMA read of it must fail (FR-FLG-04). Where the added
// right is refused (remote rights on an MR initialized without RemoteAccess:
// STATUS_ACCESS_VIOLATION), the request is passed on as the consumer made it.
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    const ULONG granted = flags | NDK_OP_FLAG_ALLOW_REMOTE_READ;  // the fault
    if (granted != flags) {
        NTSTATUS status =
            base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, granted);
        if (status != STATUS_ACCESS_VIOLATION) return status;
    }
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister grants remote read whatever the Flags", ndkct::faulty::install);
