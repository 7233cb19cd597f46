// NdkFastRegister refuses NDK_OP_FLAG_RDMA_READ_SINK (0x80, the header's value, missing from the
// page's table) on an adapter that needs sink rights (FR-SINK-03, AMB-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    if ((flags & NDK_OP_FLAG_RDMA_READ_SINK) &&
        !(adapter_info().AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED))
        return STATUS_INVALID_PARAMETER;  // the fault: "an unknown flag"
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister refuses the read-sink flag 0x80", ndkct::faulty::install);
