// ndkct/model/memory.hpp: the host arena as the model reads and writes it.
//
// The model needs the arena's bytes for two things: to move data when it simulates a provider
// (the reference provider's DMA), and to check that data a real provider moved landed where the
// rules say. No I/O: it is a pointer and a size, given by whoever owns the arena.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ndkct/kernel_types.h"
#include "ndkct/model/small_vector.hpp"

namespace ndkct::model {

struct HostMemoryView {
    std::byte* base = nullptr;  // PFN n at base + n * PAGE_SIZE
    uint64_t page_count = 0;

    std::byte* page(PFN_NUMBER pfn) const {
        return pfn < page_count ? base + pfn * PAGE_SIZE : nullptr;
    }
};

// A byte range of arena memory split at page boundaries: piece i is sizes[i] bytes at
// page(pages[i]) + offsets[i].
// Most requests touch a few pages: up to four pieces are held without a heap allocation.
struct Extent {
    SmallVector<PFN_NUMBER, 4> pages;
    SmallVector<uint32_t, 4> offsets;
    SmallVector<uint32_t, 4> sizes;
    uint64_t bytes() const;
    void reserve(size_t pieces);  // room for that many more pieces
    void append(PFN_NUMBER pfn, uint32_t offset, uint32_t size);
    void append(const Extent& other);
};

// Reads an extent into a contiguous buffer (`out`'s contents replaced, its storage reused);
// writes a contiguous buffer into an extent, in increasing address order (AI-FLAG-01: the
// reference provider's DMA is in order).
void gather(const HostMemoryView& memory, const Extent& extent, std::vector<std::byte>& out);
void scatter(const HostMemoryView& memory, const Extent& extent, const std::byte* bytes,
             uint64_t count);

}  // namespace ndkct::model
