// NdkBuildLam accepts an MDL chain whose first Length bytes are not virtually contiguous (a
// hole, a misaligned joint) and reports success with an empty mapping, where it must fail with
// STATUS_INVALID_PARAMETER and return no mapping (LAM-MDL-01).
#include "broken_chain.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    NTSTATUS status =
        base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size, fbo);
    if (status == STATUS_INVALID_PARAMETER && lam && size && *size >= sizeof(*lam) &&
        broken_chain(mdl, length)) {
        // the fault: a mapping of no pages (NdkReleaseLam ignores it)
        lam->AdapterContext = nullptr;
        lam->AdapterPageCount = 0;
        *size = static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(0));
        if (fbo) *fbo = MmGetMdlByteOffset(mdl);
        return STATUS_SUCCESS;
    }
    return status;
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam accepts a non-contiguous MDL chain", ndkct::faulty::install);
