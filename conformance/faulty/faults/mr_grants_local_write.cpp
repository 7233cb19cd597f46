// NdkRegisterMr grants local write to every region, though without NDK_MR_FLAG_ALLOW_LOCAL_WRITE
// receives must not write into it (RMR-ACC-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    flags |= NDK_MR_FLAG_ALLOW_LOCAL_WRITE;  // the fault
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr grants local write whatever the Flags", ndkct::faulty::install);
