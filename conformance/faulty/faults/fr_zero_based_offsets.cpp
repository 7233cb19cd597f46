// NdkFastRegister regions answer zero-based addresses too: an NdkRead or NdkWrite whose
// RemoteAddress is below the region's Length is taken as an offset from its start (the vendor
// turned on its hardware's zero-based-VA mode, InfiniBand's ZBVA, for every fast registration),
// though fast-registered regions are addressed by virtual address only and a request naming the
// bare offset must not reach the region (FR-ZBVA-01).
#include "zero_based_offsets.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS s =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (s == STATUS_SUCCESS)
        remember_region(base().mr.NdkGetRemoteTokenFromMr(mr),
                        {uint64_t(uintptr_t(base_va)), length});
    return s;
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
    install_zero_based_data_path(t);
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("fast-registered regions also answer zero-based (offset) remote addresses",
                   ndkct::faulty::install, ndkct::faulty::forget_regions);
