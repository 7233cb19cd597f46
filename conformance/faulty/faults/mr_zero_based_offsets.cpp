// NdkRegisterMr regions answer zero-based addresses too: an NdkRead or NdkWrite whose
// RemoteAddress is below the region's Length is taken as an offset from its start (the vendor
// turned on its hardware's zero-based-VA mode, InfiniBand's ZBVA, for every registration),
// though NdkRegisterMr does not support zero-based addressing: a request naming the bare offset
// must not reach the region (RMR-VA-02). The NdkFastRegister twin is fr_zero_based_offsets.
#include "zero_based_offsets.hpp"

namespace ndkct::faulty {
namespace {

std::map<NDK_MR*, Span> g_asked;  // MR -> the region its last NdkRegisterMr asked for (g_mutex)

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (mdl) {
        std::lock_guard lock(g_mutex);
        g_asked[mr] = {uint64_t(uintptr_t(MmGetMdlVirtualAddress(mdl))), length};
    }
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

// The remote token is what the hardware's zero-based lookup is keyed by: the region is known
// once its token is.
UINT32 remote_token(NDK_MR* mr) {
    UINT32 token = base().mr.NdkGetRemoteTokenFromMr(mr);
    Span asked{};
    {
        std::lock_guard lock(g_mutex);
        auto it = g_asked.find(mr);
        if (it == g_asked.end()) return token;
        asked = it->second;
    }
    remember_region(token, asked);
    return token;
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
    t.mr.NdkGetRemoteTokenFromMr = remote_token;
    install_zero_based_data_path(t);
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "registered (NdkRegisterMr) regions also answer zero-based (offset) remote "
    "addresses",
    ndkct::faulty::install, ndkct::faulty::forget_regions);
