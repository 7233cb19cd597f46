// NdkRegisterMr turns Flags into device rights one bit at a time and treats the remote-write bit
// (0x4) as "remote write" alone: a region registered with NDK_MR_FLAG_ALLOW_REMOTE_WRITE (0x5)
// gets remote write but no local write, though 0x5 carries NDK_MR_FLAG_ALLOW_LOCAL_WRITE
// (RMR-FLG-03; local_access_denied.hpp: a receive or read into it fails in its completion).
#include "local_access_denied.hpp"

namespace ndkct::faulty {
namespace {

using namespace local_access;

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    constexpr ULONG remote_write_bit =
        NDK_MR_FLAG_ALLOW_REMOTE_WRITE & ~NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
    NTSTATUS status = base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    if (!NT_ERROR(status)) remember(mr, (flags & remote_write_bit) != 0);  // the fault
    return status;
}

void install(Tables& t) {
    install_data_path<target>(t);
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr with NDK_MR_FLAG_ALLOW_REMOTE_WRITE grants no local write",
                   ndkct::faulty::install);
