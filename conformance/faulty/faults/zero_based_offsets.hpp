// The hardware side of a zero-based-VA fault (InfiniBand's ZBVA turned on for every region): a
// remote NdkRead or NdkWrite naming a bare offset below a known region's base reaches base +
// offset. The fault that includes it says which regions are known (remember_region: by remote
// token, the key the hardware's lookup uses) and installs the data-path interposition
// (install_zero_based_data_path). Used by mr_zero_based_offsets (RMR-VA-02) and
// fr_zero_based_offsets (FR-ZBVA-01).
#pragma once

#include <cstdint>
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
std::map<UINT32, Span> g_regions;  // remote token -> the region it reaches

void remember_region(UINT32 remote_token, Span region) {
    std::lock_guard lock(g_mutex);
    g_regions[remote_token] = region;
}

// A new adapter's tokens are its own: the regions an older adapter's tokens reached are
// forgotten (one of its tokens may now be a new region's). The faults' on_object.
void forget_regions(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeAdapter) return;
    std::lock_guard lock(g_mutex);
    g_regions.clear();
}

// The address the fault's hardware resolves: a bare offset into a known region becomes
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

NTSTATUS zero_based_write(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG n, UINT64 address,
                          UINT32 token, ULONG flags) {
    return base().qp.NdkWrite(qp, context, sgl, n, resolved(address, token, sgl, n), token, flags);
}

NTSTATUS zero_based_read(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG n, UINT64 address,
                         UINT32 token, ULONG flags) {
    return base().qp.NdkRead(qp, context, sgl, n, resolved(address, token, sgl, n), token, flags);
}

void install_zero_based_data_path(Tables& t) {
    t.qp.NdkWrite = zero_based_write;
    t.qp.NdkRead = zero_based_read;
}

}  // namespace
}  // namespace ndkct::faulty
