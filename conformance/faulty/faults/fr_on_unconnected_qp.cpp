// NdkFastRegister skips the connection check (a fast registration is a local operation, the
// vendor reasons) and returns STATUS_SUCCESS on a QP that is not connected: the request is put
// on an initiator queue nothing processes until a connection exists, so no entry comes. The page
// says STATUS_CONNECTION_INVALID when the QP is not connected (FR-ST-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS s =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    return s == STATUS_CONNECTION_INVALID ? STATUS_SUCCESS : s;  // the fault
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister returns STATUS_SUCCESS on a QP that is not connected",
                   ndkct::faulty::install);
