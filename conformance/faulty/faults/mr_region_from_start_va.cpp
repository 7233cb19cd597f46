// NdkRegisterMr takes the region's base from the first MDL's StartVa, not from
// MmGetMdlVirtualAddress (StartVa + ByteOffset): a vendor's translation setup that reads the
// page-aligned StartVa and never adds ByteOffset. The region becomes [StartVa, StartVa + Length):
// the first ByteOffset bytes before the real start answer, the last ByteOffset bytes of the
// region do not (RMR-VA-01: the region is [VA, VA + Length) with VA = StartVa + ByteOffset, and
// may start in the middle of a page). The bytes an address reaches are the right ones: only the
// span is off.
#include <cstring>
#include <vector>

#include "faulty.hpp"
#include "ndkct/platform/mdl.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    // The chain is checked as it is (over [VA, VA + Length), RMR-MDL-01): only a valid one is
    // registered from the page's start.
    if (!mdl || mdl->ByteOffset == 0 || size_t(mdl->Size) < sizeof(MDL) ||
        !platform::chain_pages(mdl, length).contiguous)
        return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    // The first MDL as the vendor's code reads it: from its page's start (the same pages; the
    // chain after it unchanged). The reference reads the chain during the call.
    std::vector<std::byte> copy(size_t(mdl->Size));
    std::memcpy(copy.data(), mdl, copy.size());
    auto* first = reinterpret_cast<MDL*>(copy.data());
    first->ByteCount += first->ByteOffset;  // the fault: the region starts at StartVa
    first->ByteOffset = 0;
    return base().mr.NdkRegisterMr(mr, first, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr takes the region's base from StartVa, leaving out ByteOffset",
                   ndkct::faulty::install);
