// NdkFastRegister takes an FBO of PAGE_SIZE or more modulo PAGE_SIZE, as if it were an offset in
// the first page, and registers, where such a request must not result in a registration
// (FR-FBO-02: FBO is a byte offset within the first page).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo % PAGE_SIZE,  // the fault
                                     length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister registers an FBO of PAGE_SIZE or more taken modulo PAGE_SIZE",
                   ndkct::faulty::install);
