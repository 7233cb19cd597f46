// NdkFastRegister refuses remote rights on a non-remote MR with STATUS_ACCESS_VIOLATION, as it
// must, but has already posted the request (with the local rights): a CQ entry appears for a
// request that failed inline (WR-05).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

constexpr ULONG kRemoteBits = NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS status =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (status == STATUS_ACCESS_VIOLATION && (flags & kRemoteBits))  // the fault: posted anyway
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va,
                                  flags & ~kRemoteBits);
    return status;
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister makes a CQ entry for a request it refused inline",
                   ndkct::faulty::install);
