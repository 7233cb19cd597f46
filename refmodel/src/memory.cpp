#include "ndkct/model/memory.hpp"

#include <atomic>
#include <cstring>

namespace ndkct::model {

uint64_t Extent::bytes() const {
    uint64_t total = 0;
    for (uint32_t size : sizes)
        total += size;
    return total;
}

void Extent::reserve(size_t pieces) {
    pages.reserve(pages.size() + pieces);
    offsets.reserve(offsets.size() + pieces);
    sizes.reserve(sizes.size() + pieces);
}

void Extent::append(PFN_NUMBER pfn, uint32_t offset, uint32_t size) {
    if (size == 0) return;
    pages.push_back(pfn);
    offsets.push_back(offset);
    sizes.push_back(size);
}

void Extent::append(const Extent& other) {
    for (size_t i = 0; i < other.pages.size(); ++i)
        append(other.pages[i], other.offsets[i], other.sizes[i]);
}

void gather(const HostMemoryView& memory, const Extent& extent, std::vector<std::byte>& out) {
    // Appended piece by piece: no zero-fill of bytes that are about to be overwritten.
    out.clear();
    out.reserve(extent.bytes());
    for (size_t i = 0; i < extent.pages.size(); ++i) {
        const std::byte* from = memory.page(extent.pages[i]) + extent.offsets[i];
        out.insert(out.end(), from, from + extent.sizes[i]);
    }
}

namespace {

// AI-FLAG-01 (IN_ORDER_DMA_SUPPORTED): bytes land in increasing address order, so a consumer
// that sees a byte of a transfer may rely on every byte before it being there. memmove and
// memcpy promise no order (glibc's memmove copies backwards when the target lies above the
// source, and so does AddressSanitizer's: InOrderDmaPlacesBytesInOrder failed 87 of 120 runs
// under ASan). Forward, one 64-byte block (a DMA write's size) at a time, with a release fence
// between blocks: on x86 only a compiler barrier (stores become visible in program order).
void place_in_order(std::byte* to, const std::byte* from, uint64_t n) {
    constexpr uint64_t kBlock = 64;
    uint64_t at = 0;
    for (; at + kBlock <= n; at += kBlock) {
        std::memcpy(to + at, from + at, kBlock);
        std::atomic_thread_fence(std::memory_order_release);
    }
    if (at < n) std::memcpy(to + at, from + at, n - at);
}

}  // namespace

void scatter(const HostMemoryView& memory, const Extent& extent, const std::byte* bytes,
             uint64_t count) {
    uint64_t at = 0;
    for (size_t i = 0; i < extent.pages.size() && at < count; ++i) {
        uint64_t n = std::min<uint64_t>(extent.sizes[i], count - at);
        place_in_order(memory.page(extent.pages[i]) + extent.offsets[i], bytes + at, n);
        at += n;
    }
}

}  // namespace ndkct::model
