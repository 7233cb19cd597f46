// NdkFastRegister programs the region's remote key on the device but not its local key, so no
// local SGE reaches a fast-registered region (sources and targets alike), though local SGEs with
// the MR's local token and addresses inside the region must work (FR-TOK-02;
// local_access_denied.hpp: such a request fails in its completion).
#include "local_access_denied.hpp"

namespace ndkct::faulty {
namespace {

using namespace local_access;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS status =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (status == STATUS_SUCCESS) remember(mr, true);  // the fault: the local key stays unset
    return status;
}

void install(Tables& t) {
    install_data_path<both>(t);
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister sets up the remote key only: local SGEs do not reach the region",
    ndkct::faulty::install);
