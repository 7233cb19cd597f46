// NdkRegisterMr reads Flags as one of the page's listed values (0x0, 0x1, 0x2, 0x5, 0x8) rather
// than as a bitmask, and refuses every OR of them (0x3, 0x7, 0x9, 0xF ...) with
// STATUS_INVALID_PARAMETER, though any OR of them is a valid Flags value (RMR-FLG-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    switch (flags) {  // the fault: a switch over the table's rows
        case NDK_MR_FLAG_ALLOW_LOCAL_READ:
        case NDK_MR_FLAG_ALLOW_LOCAL_WRITE:
        case NDK_MR_FLAG_ALLOW_REMOTE_READ:
        case NDK_MR_FLAG_ALLOW_REMOTE_WRITE:
        case NDK_MR_FLAG_RDMA_READ_SINK:
            return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
        default:
            return STATUS_INVALID_PARAMETER;
    }
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr accepts only the listed Flags values, not their ORs",
                   ndkct::faulty::install);
