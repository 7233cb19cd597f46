// NdkRegisterMr regions answer zero-based addresses too: an NdkRead or NdkWrite whose
// RemoteAddress is below the region's Length is taken as an offset from its start (the vendor
// turned on its hardware's zero-based-VA mode, InfiniBand's ZBVA, for every registration),
// though NdkRegisterMr does not support zero-based addressing: a request naming the bare offset
// must not reach the region (RMR-VA-02). The NdkFastRegister twin is fr_zero_based_offsets.
#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Span {
    uint64_t base;
    uint64_t length;
};
std::mutex g_mutex;
std::map<NDK_MR*, Span> g_asked;   // MR -> the region its last NdkRegisterMr asked for
std::map<UINT32, Span> g_regions;  // remote token -> the region it reaches

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (mdl) {
        std::lock_guard lock(g_mutex);
        g_asked[mr] = {uint64_t(uintptr_t(MmGetMdlVirtualAddress(mdl))), length};
    }
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

// The remote token is what the hardware's zero-based lookup is keyed by.
UINT32 remote_token(NDK_MR* mr) {
    UINT32 token = base().mr.NdkGetRemoteTokenFromMr(mr);
    std::lock_guard lock(g_mutex);
    if (auto it = g_asked.find(mr); it != g_asked.end()) g_regions[token] = it->second;
    return token;
}

// The address the fault's hardware resolves: a bare offset into a registered region becomes
// base + offset.
UINT64 resolved(UINT64 address, UINT32 token, const NDK_SGE* sgl, ULONG n) {
    uint64_t bytes = 0;
    for (ULONG i = 0; i < n; ++i)
        bytes += sgl[i].Length;
    std::lock_guard lock(g_mutex);
    auto it = g_regions.find(token);
    if (it == g_regions.end() || it->second.base == 0) return address;
    const Span& r = it->second;
    if (address < r.base && bytes <= r.length && address <= r.length - bytes)
        return r.base + address;  // the fault
    return address;
}

NTSTATUS write(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG n, UINT64 address, UINT32 token,
               ULONG flags) {
    return base().qp.NdkWrite(qp, context, sgl, n, resolved(address, token, sgl, n), token, flags);
}

NTSTATUS read(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG n, UINT64 address, UINT32 token,
              ULONG flags) {
    return base().qp.NdkRead(qp, context, sgl, n, resolved(address, token, sgl, n), token, flags);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
    t.mr.NdkGetRemoteTokenFromMr = remote_token;
    t.qp.NdkWrite = write;
    t.qp.NdkRead = read;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "registered (NdkRegisterMr) regions also answer zero-based (offset) remote "
    "addresses",
    ndkct::faulty::install);
