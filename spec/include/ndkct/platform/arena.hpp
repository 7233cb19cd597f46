// ndkct/platform/arena.hpp: host memory in user space.
//
// The arena is ndkct's "physical memory": a memfd of PAGE_SIZE pages, mapped linearly for
// providers (NDKCT_HOST_MEMORY, PFN n = page n) and aliased page by page into consumer buffers,
// the way a kernel virtual range maps scattered physical pages. A LockedBuffer is such an alias:
// virtually contiguous, resident, its pages anywhere in the arena. Bytes written through a
// buffer's VA are the bytes a provider sees through the PFNs, and the reverse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "ndkct/host_memory.h"

namespace ndkct::platform {

// How a buffer's pages are chosen from the arena.
enum class Placement {
    contiguous,  // consecutive PFNs (physically contiguous)
    scattered,   // PFNs picked at random, in random order (the common case for real buffers)
};

class Arena;

// A virtually contiguous, resident buffer over arena pages. Movable; frees its pages and its
// virtual range when destroyed. The arena must outlive it.
class LockedBuffer {
  public:
    LockedBuffer() = default;
    LockedBuffer(LockedBuffer&& other) noexcept;
    LockedBuffer& operator=(LockedBuffer&& other) noexcept;
    LockedBuffer(const LockedBuffer&) = delete;
    LockedBuffer& operator=(const LockedBuffer&) = delete;
    ~LockedBuffer();

    std::byte* data() const { return base_; }  // page-aligned consumer virtual address
    size_t size() const { return pfns_.size() * PAGE_SIZE; }
    std::span<std::byte> bytes() const { return {base_, size()}; }
    std::span<const PFN_NUMBER> pfns() const { return pfns_; }
    bool empty() const { return base_ == nullptr; }

  private:
    friend class Arena;
    Arena* arena_ = nullptr;
    std::byte* base_ = nullptr;
    std::vector<PFN_NUMBER> pfns_;
    bool owns_pages_ = false;  // false for aliases: the pages go back with their owner
};

class Arena {
  public:
    // Creates an arena of page_count pages. Throws std::system_error naming the failing call
    // (memfd_create, ftruncate, mmap) when the system refuses.
    explicit Arena(size_t page_count, uint64_t seed = 1);
    ~Arena();
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;

    // What providers receive when an adapter opens over this arena.
    const NDKCT_HOST_MEMORY& host_memory() const { return host_memory_; }

    size_t page_count() const { return page_count_; }
    size_t free_page_count() const;
    std::byte* physical_page(PFN_NUMBER pfn) const;  // the linear mapping of one page

    // A buffer of at least `bytes` bytes (rounded up to whole pages, at least one page), zeroed.
    // Throws std::bad_alloc when the arena has too few free pages.
    LockedBuffer allocate(size_t bytes, Placement placement = Placement::scattered);

    // A buffer over exactly these pages, in this order (pages stay owned by whoever allocated
    // them; the alias only maps them). For tests that need two views of the same memory.
    LockedBuffer alias(std::span<const PFN_NUMBER> pfns);

    // Reuse of an arena as if fresh (the property tests keep one across sequences): a mark
    // records which pages are in use and where placement's random sequence stands; rewind()
    // zeroes every page and puts the random sequence back there. A fresh arena of the same seed
    // after the same allocations is then the same memory, page for page (the same PFNs in use,
    // every byte 0, the same PFNs for the next allocations); only the virtual addresses differ,
    // as they differ between two fresh arenas. Refused (false, nothing changed) when the pages
    // in use are not the mark's: a buffer made since still lives, or one of the mark's is gone.
    struct Mark {
        std::vector<uint8_t> page_used;
        size_t free_pages = 0;
        uint64_t rng_state = 0;
    };
    Mark mark() const;
    bool rewind(const Mark& mark);

    // The arena pages that the consumer virtual range [va, va + length) maps, page by page
    // (from va's page), when every page of it lies in a live buffer of some arena of this
    // process; nullopt otherwise. What dereferencing an MDL's virtual address would reach: the
    // oracle compares it with the MDL's PFNs to tell a decoy-VA MDL (RMR-VA-03, LAM-VA-01: the
    // VA is only a label) from an ordinary one.
    static std::optional<std::vector<PFN_NUMBER>> pages_mapped_at(const void* va, size_t length);

  private:
    friend class LockedBuffer;
    std::vector<PFN_NUMBER> take_pages(size_t count, Placement placement);
    void release(LockedBuffer& buffer);
    std::byte* map_alias(std::span<const PFN_NUMBER> pfns);

    size_t page_count_;
    int memfd_ = -1;
    std::byte* linear_ = nullptr;
    NDKCT_HOST_MEMORY host_memory_{};
    mutable std::mutex lock_;
    std::vector<uint8_t> page_used_;  // 1 = the page belongs to a live buffer
    size_t free_pages_;
    uint64_t rng_state_;
};

}  // namespace ndkct::platform
