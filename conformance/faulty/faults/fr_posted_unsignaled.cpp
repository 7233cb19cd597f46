// NdkFastRegister posts every fast registration unsignaled, as if it carried
// NDK_OP_FLAG_SILENT_SUCCESS (the vendor reads a registration as bookkeeping the consumer need
// not hear of): one that succeeds makes no CQ entry, though the call returned STATUS_SUCCESS
// without SILENT_SUCCESS (FR-ST-01; WR-10).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va,
                                     flags | NDK_OP_FLAG_SILENT_SUCCESS);  // the fault
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister makes no CQ entry for a fast registration that succeeds",
                   ndkct::faulty::install);
