// NdkFastRegister refuses BaseVirtualAddress 0 with STATUS_INVALID_PARAMETER (a NULL-pointer
// check on the address), though with FBO 0 it is an ordinary start address (FR-ALIGN-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    if (base_va == nullptr) return STATUS_INVALID_PARAMETER;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister refuses BaseVirtualAddress 0 (FBO 0 too)",
                   ndkct::faulty::install);
