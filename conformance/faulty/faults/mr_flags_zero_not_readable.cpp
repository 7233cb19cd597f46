// NdkRegisterMr gives a region registered with Flags 0 no device rights at all (its device's
// local-read bit is set only beside another right), so the region cannot be the source of a
// send or a write, though NDK_MR_FLAG_ALLOW_LOCAL_READ is 0 and local read always granted
// (RMR-FLG-02; local_access_denied.hpp: such a source fails in its completion).
#include "local_access_denied.hpp"

namespace ndkct::faulty {
namespace {

using namespace local_access;

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    NTSTATUS status = base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    if (!NT_ERROR(status))
        remember(mr, (flags & NDKCT_MR_FLAGS_DOCUMENTED) == 0);  // the fault: no right asked
    return status;
}

void install(Tables& t) {
    install_data_path<source>(t);
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr with Flags 0 grants no local read: such a region is no source",
                   ndkct::faulty::install);
