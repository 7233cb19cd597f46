// NdkFastRegister refuses a Length that ends exactly at the end of the last page (an off-by-one
// in its bound: >= instead of >) with STATUS_INVALID_PARAMETER, though every Length up to
// AdapterPageCount * PAGE_SIZE - FBO must be accepted (FR-LEN-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    const SIZE_T held = SIZE_T(count) * PAGE_SIZE;
    if (count && fbo < held && length == held - fbo) return STATUS_INVALID_PARAMETER;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister refuses a Length that ends exactly at the last page's end",
                   ndkct::faulty::install);
