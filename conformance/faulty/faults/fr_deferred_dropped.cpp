// NdkFastRegister with NDK_OP_FLAG_DEFER stages the work request for a batch doorbell that the
// vendor's later requests never ring (a request without DEFER rings the doorbell for its own slot
// only): it returns STATUS_SUCCESS and the request never reaches the hardware, whatever is
// posted after it, so it never completes (FR-DEFER-01: DEFER is a hint, the request must still
// complete once one without DEFER follows; DEFER-03).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    if (flags & NDK_OP_FLAG_DEFER) return STATUS_SUCCESS;  // the fault: staged, never rung
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister accepts a DEFER fast registration and never posts it",
                   ndkct::faulty::install);
