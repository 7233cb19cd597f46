// NdkBuildLam checks every joint of the MDL chain, not only those of the first Length bytes: a
// chain contiguous for Length bytes but broken after them is refused with
// STATUS_INVALID_PARAMETER, where it must be mapped (LAM-MDL-04).
#include "faulty.hpp"
#include "ndkct/platform/mdl.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    SIZE_T chain_bytes = 0;
    for (const MDL* m = mdl; m; m = m->Next)
        chain_bytes += MmGetMdlByteCount(m);
    if (mdl && length <= chain_bytes && !platform::chain_pages(mdl, chain_bytes).contiguous)
        return STATUS_INVALID_PARAMETER;  // the fault: the whole chain, not Length bytes
    return base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size, fbo);
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam refuses a chain broken only past Length bytes",
                   ndkct::faulty::install);
