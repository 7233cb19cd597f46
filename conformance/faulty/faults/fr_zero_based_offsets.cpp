// NdkFastRegister regions answer zero-based addresses too: an NdkRead or NdkWrite whose
// RemoteAddress is below the region's Length is taken as an offset from its start (the vendor
// turned on its hardware's zero-based-VA mode, InfiniBand's ZBVA, for every fast registration),
// though fast-registered regions are addressed by virtual address only and a request naming the
// bare offset must not reach the region (FR-ZBVA-01).
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
std::map<UINT32, Span> g_regions;  // remote token -> the region a fast registration made

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS s =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (s == STATUS_SUCCESS) {
        std::lock_guard lock(g_mutex);
        g_regions[base().mr.NdkGetRemoteTokenFromMr(mr)] = {uint64_t(uintptr_t(base_va)), length};
    }
    return s;
}

// The address the fault's hardware resolves: a bare offset into a fast-registered region
// becomes base + offset.
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
    t.qp.NdkFastRegister = fast_register;
    t.qp.NdkWrite = write;
    t.qp.NdkRead = read;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("fast-registered regions also answer zero-based (offset) remote addresses",
                   ndkct::faulty::install);
