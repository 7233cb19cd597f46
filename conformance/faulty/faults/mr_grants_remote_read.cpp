// NdkRegisterMr grants remote read to every region, though without NDK_MR_FLAG_ALLOW_REMOTE_READ a
// peer's RDMA read of it must fail (RMR-ACC-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    flags |= NDK_MR_FLAG_ALLOW_REMOTE_READ;  // the fault
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr grants remote read whatever the Flags", ndkct::faulty::install);
