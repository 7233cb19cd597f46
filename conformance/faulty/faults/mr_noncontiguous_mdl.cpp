// NdkRegisterMr accepts an MDL chain whose first Length bytes are not virtually contiguous
// (a hole, a misaligned joint) and reports success, where it must fail with
// STATUS_INVALID_PARAMETER (RMR-MDL-01).
#include "faulty.hpp"
#include "ndkct/platform/mdl.hpp"

namespace ndkct::faulty {
namespace {

bool broken_chain(const MDL* mdl, SIZE_T length) {
    SIZE_T bytes = 0;
    for (const MDL* m = mdl; m; m = m->Next)
        bytes += MmGetMdlByteCount(m);
    return mdl && length <= bytes && !platform::chain_pages(mdl, length).contiguous;
}

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
