// NdkFastRegister posts the request and returns STATUS_PENDING instead of STATUS_SUCCESS; it
// takes no completion callback and must never pend (FR-ST-03).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS status =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    return status == STATUS_SUCCESS ? STATUS_PENDING : status;  // the fault
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister returns STATUS_PENDING for a posted request",
                   ndkct::faulty::install);
