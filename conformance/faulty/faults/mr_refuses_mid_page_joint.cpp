// NdkRegisterMr refuses a chain of several MDLs whose joint falls in the middle of a page: the
// vendor's chain walker assumes every MDL after the first starts on a page boundary (as the
// buffers its own stack chains do) and takes a later MDL with a ByteOffset for a misaligned
// joint, STATUS_INVALID_PARAMETER. Such a chain is virtually contiguous and describes the same
// range one MDL would: both must be accepted and give the same region (RMR-MDL-05).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    for (const MDL* m = mdl ? mdl->Next : nullptr; m; m = m->Next)
        if (m->ByteOffset != 0) return STATUS_INVALID_PARAMETER;  // the fault
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr refuses a chain of several MDLs joined in the middle of a page",
                   ndkct::faulty::install);
