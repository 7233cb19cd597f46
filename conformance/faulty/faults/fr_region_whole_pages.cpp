// NdkFastRegister registers whole pages: it takes the Length as reaching the end of the last
// page supplied (AdapterPageCount * PAGE_SIZE - FBO), so accesses past BaseVirtualAddress +
// Length reach memory the consumer never registered, where they must fail and touch nothing
// (FR-LEN-03).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    const SIZE_T held = SIZE_T(count) * PAGE_SIZE;
    if (length && fbo < held && length < held - fbo) length = held - fbo;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister registers to the end of the last page supplied",
                   ndkct::faulty::install);
