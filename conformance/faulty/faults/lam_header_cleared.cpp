// NdkBuildLam fills AdapterPageArray and AdapterPageCount, then initializes the mapping's header
// (RtlZeroMemory of everything before AdapterPageArray, meant for AdapterContext) after the
// fact: AdapterPageCount is 0 on success, so the mapping gives none of its entries (LAM-OUT-01:
// AdapterPageCount is the number of entries AdapterPageArray holds).
#include <cstring>

#include "lam_output_edit.hpp"

namespace ndkct::faulty {
namespace {

void edit(NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG*, ULONG, ULONG*) {
    if (lam) std::memset(lam, 0, offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray));
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam zeroes the mapping's header (AdapterPageCount) after filling it",
                   ndkct::faulty::LamOutputFault<ndkct::faulty::edit>::install);
