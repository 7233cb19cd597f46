// NdkRegisterMr tests Flags & NDK_MR_FLAG_ALLOW_REMOTE_WRITE (0x5) for remote write, so local write
// 0x1 grants it too, though remote write is the 0x4 bit (RMR-FLG-04).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE)
        flags |= NDK_MR_FLAG_ALLOW_REMOTE_WRITE;  // the fault
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr takes local write 0x1 for remote write", ndkct::faulty::install);
