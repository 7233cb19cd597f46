// NdkBuildLam refuses a too-small buffer with STATUS_BUFFER_TOO_SMALL but leaves *pLAMSize as
// the caller passed it instead of writing the required size (LAM-SIZE-04).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    ULONG given = size ? *size : 0;
    NTSTATUS status =
        base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size, fbo);
    if (status == STATUS_BUFFER_TOO_SMALL && size) *size = given;  // the fault
    return status;
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam returns STATUS_BUFFER_TOO_SMALL without writing the required size",
                   ndkct::faulty::install);
