// On an adapter that needs no read-sink right (read_sink_not_required.hpp), NdkFastRegister
// refuses NDK_OP_FLAG_RDMA_READ_SINK (0x80) with STATUS_INVALID_PARAMETER as a flag it does not
// handle, though it may only ignore it (FR-SINK-02).
#include "read_sink_not_required.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    if ((flags & NDK_OP_FLAG_RDMA_READ_SINK) &&
        (adapter_info().AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED))
        return STATUS_INVALID_PARAMETER;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "on an adapter with RDMA_READ_SINK_NOT_REQUIRED, NdkFastRegister refuses the read-sink flag "
    "0x80",
    ndkct::faulty::install, nullptr, ndkct::faulty::read_sink_not_required);
