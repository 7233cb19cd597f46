// NdkFastRegister gives a region fast-registered with no right in Flags (0, or only
// SILENT_SUCCESS, READ_FENCE, DEFER) no device rights at all, so it cannot be the source of a
// send or a write, though local read needs no flag (FR-FLG-02; local_access_denied.hpp: such a
// source fails in its completion).
#include "local_access_denied.hpp"

namespace ndkct::faulty {
namespace {

using namespace local_access;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS status =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    constexpr ULONG rights = NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ |
                             NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_RDMA_READ_SINK;
    if (status == STATUS_SUCCESS) remember(mr, (flags & rights) == 0);  // the fault
    return status;
}

void install(Tables& t) {
    install_data_path<source>(t);
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister with no right in Flags grants no local read either",
                   ndkct::faulty::install);
