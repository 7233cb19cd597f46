// NdkRegisterMr takes the region's pages from what MmGetMdlVirtualAddress maps, not from the
// MDL's PFN array: a vendor's software path that copies through the VA. RMR-VA-03: the VA is
// only a label for the region (token and offset arithmetic); data moves through the PFNs. With
// an ordinary MDL the two are the same pages; with a decoy-VA MDL a peer's write lands in the
// decoy and a send carries the decoy's bytes.
#include "through_va.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (!mdl || size_t(mdl->Size) < sizeof(MDL))
        return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    // The reference reads the chain during the call: the copy may go when it returns.
    ChainThroughVa through_va(mdl);
    return base().mr.NdkRegisterMr(mr, through_va.head, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkRegisterMr moves data through the pages the MDL's virtual address maps, "
    "not its PFN array",
    ndkct::faulty::install);
