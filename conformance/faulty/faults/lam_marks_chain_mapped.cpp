// NdkBuildLam maps every MDL of the chain to system space as MmGetSystemAddressForMdlSafe does
// (MdlFlags gains MDL_MAPPED_TO_SYSTEM_VA), to have the bytes at hand for a debug dump, and
// NdkReleaseLam never undoes it: the chain is not left as it was passed (LAM-REL-02).
#include <algorithm>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

constexpr CSHORT kMappedToSystemVa = 0x0001;  // MDL_MAPPED_TO_SYSTEM_VA in the WDK

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    NTSTATUS s =
        base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size, fbo);
    if (s == STATUS_SUCCESS || s == STATUS_PENDING) {
        // Only the MDLs the range covers, as a provider walking Length bytes would.
        SIZE_T left = length;
        for (MDL* m = mdl; m && left > 0; m = m->Next) {
            m->MdlFlags = static_cast<CSHORT>(m->MdlFlags | kMappedToSystemVa);  // the fault
            left -= std::min<SIZE_T>(left, m->ByteCount);
        }
    }
    return s;
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam sets MDL_MAPPED_TO_SYSTEM_VA in the chain's MdlFlags",
                   ndkct::faulty::install);
