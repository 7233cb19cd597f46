// NdkBuildLam's size check counts one page more than its required-size report (an off-by-one
// in the pages spanned, (FBO + Length) / PAGE_SIZE + 1, in one of the two places): a buffer of
// exactly the size it reported is refused with STATUS_BUFFER_TOO_SMALL again, the same size
// written back, so a consumer retrying with the reported size never succeeds (LAM-SIZE-05).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    if (mdl && lam && size && length) {
        const SIZE_T pages = (MmGetMdlByteOffset(mdl) + length + PAGE_SIZE - 1) / PAGE_SIZE;
        const SIZE_T reported = NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages);
        if (*size >= reported && *size < reported + sizeof(NDK_LOGICAL_ADDRESS)) {
            // The fault: checked against one entry more. The reference answers a buffer one
            // byte short as it should (STATUS_BUFFER_TOO_SMALL, the required size written).
            *size = ULONG(reported - 1);
            return base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size,
                                              fbo);
        }
    }
    return base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size, fbo);
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam refuses a buffer of exactly the size it reported",
                   ndkct::faulty::install);
