// NdkBuildLam reports in *pLAMSize 8 bytes more than the buffer passed in (a trailing entry
// counted that was never written), where it must be the bytes written, at most the buffer's size
// (LAM-OUT-02).
#include "lam_output_edit.hpp"

namespace ndkct::faulty {
namespace {

void edit(NDK_LOGICAL_ADDRESS_MAPPING*, ULONG* size, ULONG size_in, ULONG*) {
    if (size) *size = size_in + sizeof(NDK_LOGICAL_ADDRESS);
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam reports a *pLAMSize 8 bytes past the buffer passed in",
                   ndkct::faulty::LamOutputFault<ndkct::faulty::edit>::install);
