// NdkBuildLam, refusing a too-small buffer, reports as the required size only the page array's
// bytes (8 per page), forgetting the NDK_LOGICAL_ADDRESS_MAPPING header before it: the size
// must be at least FIELD_OFFSET(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + 8 per page
// (LAM-SIZE-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    NTSTATUS status =
        base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size, fbo);
    constexpr ULONG header = static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(0));
    if (status == STATUS_BUFFER_TOO_SMALL && size && *size > header) *size -= header;  // the fault
    return status;
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam's required size leaves out the mapping's header",
                   ndkct::faulty::install);
