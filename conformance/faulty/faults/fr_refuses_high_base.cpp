// NdkFastRegister validates BaseVirtualAddress as if it were a pointer: it refuses, with
// STATUS_INVALID_PARAMETER, an address that is not canonical on x86-64 (bits 63 to 47 not all
// equal), though the address is only a label and every FBO + n * PAGE_SIZE, small or large, is a
// valid start (FR-ALIGN-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

bool canonical(uint64_t address) {
    uint64_t top = address >> 47;  // bits 63..47: all clear or all set
    return top == 0 || top == (uint64_t{1} << 17) - 1;
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    if (!canonical(reinterpret_cast<uintptr_t>(base_va)))
        return STATUS_INVALID_PARAMETER;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister refuses a BaseVirtualAddress that is not a canonical pointer",
                   ndkct::faulty::install);
