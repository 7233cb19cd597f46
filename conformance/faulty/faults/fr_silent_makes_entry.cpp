// NdkFastRegister ignores NDK_OP_FLAG_SILENT_SUCCESS: a fast registration that succeeds makes a
// CQ entry anyway (FR-SILENT-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va,
                                     flags & ~ULONG(NDK_OP_FLAG_SILENT_SUCCESS));  // the fault
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister makes a CQ entry for a silent fast registration that succeeds",
                   ndkct::faulty::install);
