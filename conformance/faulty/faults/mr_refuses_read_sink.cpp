// NdkRegisterMr refuses NDK_MR_FLAG_RDMA_READ_SINK on an adapter that needs sink rights, though
// the flag exists so that such a provider can support the registration (RMR-SINK-03).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if ((flags & NDK_MR_FLAG_RDMA_READ_SINK) &&
        !(adapter_info().AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED))
        return STATUS_NOT_SUPPORTED;  // the fault
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr refuses the read-sink flag with STATUS_NOT_SUPPORTED",
                   ndkct::faulty::install);
