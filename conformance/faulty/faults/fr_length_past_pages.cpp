// NdkFastRegister shortens a Length that reaches past the pages supplied to what they hold and
// registers, where such a request must not result in a registration (FR-LEN-02: Length is at
// most AdapterPageCount * PAGE_SIZE - FBO).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    const SIZE_T held = SIZE_T(count) * PAGE_SIZE;
    if (count && fbo < held && length > held - fbo) length = held - fbo;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister registers a Length past the pages supplied, cut to what the pages hold",
    ndkct::faulty::install);
