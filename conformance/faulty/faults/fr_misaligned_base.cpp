// NdkFastRegister does not check BaseVirtualAddress against FBO: it rounds the address to the
// page position FBO names and registers, where the request must not result in a successful
// registration (FR-ALIGN-03; the congruence is FR-ALIGN-01's).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    auto va = reinterpret_cast<uintptr_t>(base_va);
    uintptr_t congruent = (va & ~uintptr_t(PAGE_SIZE - 1)) + fbo % PAGE_SIZE;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length,
                                     reinterpret_cast<PVOID>(congruent), flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister registers a BaseVirtualAddress not congruent to FBO (rounded "
    "to FBO's page position)",
    ndkct::faulty::install);
