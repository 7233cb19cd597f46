// NdkRegisterMr accepts an MDL chain whose first Length bytes are not virtually contiguous
// (a hole, a misaligned joint) and reports success, where it must fail with
// STATUS_INVALID_PARAMETER (RMR-MDL-01).
#include "broken_chain.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    NTSTATUS status = base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    if (status == STATUS_INVALID_PARAMETER && broken_chain(mdl, length))
        return STATUS_SUCCESS;  // the fault
    return status;
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr accepts a non-contiguous MDL chain", ndkct::faulty::install);
