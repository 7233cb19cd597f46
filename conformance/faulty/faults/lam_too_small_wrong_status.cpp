// NdkBuildLam refuses a buffer too small for the mapping with STATUS_INVALID_PARAMETER (and
// still writes the required size), where the page names STATUS_BUFFER_TOO_SMALL (LAM-SIZE-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    NTSTATUS status =
        base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size, fbo);
    if (status == STATUS_BUFFER_TOO_SMALL) return STATUS_INVALID_PARAMETER;  // the fault
    return status;
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam refuses a too-small buffer with STATUS_INVALID_PARAMETER",
                   ndkct::faulty::install);
