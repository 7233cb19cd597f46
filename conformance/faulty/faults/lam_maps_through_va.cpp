// NdkBuildLam maps the pages MmGetMdlVirtualAddress points at, not the MDL's PFN array: a
// vendor's software path that resolves the range through the VA. LAM-VA-01: the VA is only a
// label for the start of the range; the mapping reaches memory through the PFNs. With an
// ordinary MDL the two are the same pages; with a decoy-VA MDL the LAM's logical addresses map
// the decoy's pages, so a send through them carries the decoy's bytes and a receive into them
// lands in the decoy.
#include "through_va.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    if (!mdl || size_t(mdl->Size) < sizeof(MDL))
        return base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size,
                                          fbo);
    // The reference reads the chain during the call (even when it pends): the copy may go
    // when it returns.
    ChainThroughVa through_va(mdl);
    return base().adapter.NdkBuildLAM(adapter, through_va.head, length, completion, context, lam,
                                      size, fbo);
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkBuildLam maps the pages the MDL's virtual address points at, not its PFN array",
    ndkct::faulty::install);
