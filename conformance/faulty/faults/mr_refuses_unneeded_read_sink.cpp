// On an adapter that needs no read-sink right (read_sink_not_required.hpp), NdkRegisterMr refuses
// NDK_MR_FLAG_RDMA_READ_SINK with STATUS_NOT_SUPPORTED as a flag it does not handle, though it
// may only ignore it (RMR-SINK-02).
#include "read_sink_not_required.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if ((flags & NDK_MR_FLAG_RDMA_READ_SINK) &&
        (adapter_info().AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED))
        return STATUS_NOT_SUPPORTED;  // the fault
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "on an adapter with RDMA_READ_SINK_NOT_REQUIRED, NdkRegisterMr refuses the read-sink flag "
    "with STATUS_NOT_SUPPORTED",
    ndkct::faulty::install, nullptr, ndkct::faulty::read_sink_not_required);
