#include "ndkct/platform/arena.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <new>
#include <string>
#include <system_error>

namespace ndkct::platform {

namespace {

[[noreturn]] void fail(const char* what, size_t pages) {
    throw std::system_error(errno, std::generic_category(),
                            std::string("arena of ") + std::to_string(pages) + " pages: " + what);
}

uint64_t next_random(uint64_t& state) {  // splitmix64: small, seedable, good enough for placement
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Every live buffer's virtual range and its pages, process-wide (Arena::pages_mapped_at):
// keyed by the range's end, so that upper_bound finds the range holding an address.
struct MappedRange {
    uintptr_t begin;
    const PFN_NUMBER* pfns;  // the buffer's own vector (it outlives the entry)
};
std::mutex mapped_lock;
std::map<uintptr_t, MappedRange> mapped_ranges;

void note_mapped(const std::byte* base, const std::vector<PFN_NUMBER>& pfns) {
    std::lock_guard guard(mapped_lock);
    auto begin = reinterpret_cast<uintptr_t>(base);
    mapped_ranges[begin + pfns.size() * PAGE_SIZE] = {begin, pfns.data()};
}

void forget_mapped(const std::byte* base, size_t bytes) {
    std::lock_guard guard(mapped_lock);
    mapped_ranges.erase(reinterpret_cast<uintptr_t>(base) + bytes);
}

}  // namespace

std::optional<std::vector<PFN_NUMBER>> Arena::pages_mapped_at(const void* va, size_t length) {
    std::vector<PFN_NUMBER> pages;
    auto page = reinterpret_cast<uintptr_t>(va) & ~uintptr_t(PAGE_SIZE - 1);
    const auto end = reinterpret_cast<uintptr_t>(va) + length;
    std::lock_guard guard(mapped_lock);
    while (page < end || pages.empty()) {
        auto it = mapped_ranges.upper_bound(page);
        if (it == mapped_ranges.end() || it->second.begin > page) return std::nullopt;
        pages.push_back(it->second.pfns[(page - it->second.begin) / PAGE_SIZE]);
        page += PAGE_SIZE;
    }
    return pages;
}

Arena::Arena(size_t page_count, uint64_t seed)
    : page_count_(page_count),
      page_used_(page_count, 0),
      free_pages_(page_count),
      rng_state_(seed) {
    if (page_count == 0) {
        errno = EINVAL;
        fail("a page count of 0", page_count);
    }
    memfd_ = memfd_create("ndkct-arena", MFD_CLOEXEC);
    if (memfd_ < 0) fail("memfd_create", page_count);
    if (ftruncate(memfd_, static_cast<off_t>(page_count * PAGE_SIZE)) != 0) {
        int saved = errno;
        close(memfd_);
        errno = saved;
        fail("ftruncate", page_count);
    }
    void* linear =
        mmap(nullptr, page_count * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
    if (linear == MAP_FAILED) {
        int saved = errno;
        close(memfd_);
        errno = saved;
        fail("mmap of the linear view", page_count);
    }
    linear_ = static_cast<std::byte*>(linear);
    host_memory_.Size = sizeof(NDKCT_HOST_MEMORY);
    host_memory_.MemFd = memfd_;
    host_memory_.PhysicalBase = linear_;
    host_memory_.PageCount = page_count;
}

Arena::~Arena() {
    munmap(linear_, page_count_ * PAGE_SIZE);
    close(memfd_);
}

size_t Arena::free_page_count() const {
    std::lock_guard guard(lock_);
    return free_pages_;
}

std::byte* Arena::physical_page(PFN_NUMBER pfn) const {
    return pfn < page_count_ ? linear_ + pfn * PAGE_SIZE : nullptr;
}

std::vector<PFN_NUMBER> Arena::take_pages(size_t count, Placement placement) {
    std::lock_guard guard(lock_);
    if (count > free_pages_) throw std::bad_alloc();
    std::vector<PFN_NUMBER> pfns;
    pfns.reserve(count);
    if (placement == Placement::contiguous) {
        size_t run = 0;
        for (size_t pfn = 0; pfn < page_count_; ++pfn) {
            run = page_used_[pfn] ? 0 : run + 1;
            if (run == count) {
                for (size_t p = pfn + 1 - count; p <= pfn; ++p)
                    pfns.push_back(p);
                break;
            }
        }
        if (pfns.size() != count) throw std::bad_alloc();  // free, but fragmented
    } else {
        // Random probing, then a linear sweep so that a nearly full arena still succeeds.
        while (pfns.size() < count) {
            size_t start = next_random(rng_state_) % page_count_;
            for (size_t step = 0; step < page_count_; ++step) {
                size_t pfn = (start + step) % page_count_;
                if (!page_used_[pfn]) {
                    page_used_[pfn] = 1;
                    pfns.push_back(pfn);
                    break;
                }
            }
        }
    }
    for (PFN_NUMBER pfn : pfns)
        page_used_[pfn] = 1;
    free_pages_ -= count;
    return pfns;
}

std::byte* Arena::map_alias(std::span<const PFN_NUMBER> pfns) {
    size_t bytes = pfns.size() * PAGE_SIZE;
    void* reserved = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (reserved == MAP_FAILED) fail("mmap of a buffer's virtual range", page_count_);
    auto* base = static_cast<std::byte*>(reserved);
    // Map runs of consecutive PFNs with one call: fewer mappings for contiguous buffers.
    for (size_t i = 0; i < pfns.size();) {
        size_t run = 1;
        while (i + run < pfns.size() && pfns[i + run] == pfns[i] + run)
            ++run;
        void* at = mmap(base + i * PAGE_SIZE, run * PAGE_SIZE, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_FIXED | MAP_POPULATE, memfd_,
                        static_cast<off_t>(pfns[i] * PAGE_SIZE));
        if (at == MAP_FAILED) {
            int saved = errno;
            munmap(base, bytes);
            errno = saved;
            fail("mmap of buffer pages", page_count_);
        }
        i += run;
    }
    return base;
}

Arena::Mark Arena::mark() const {
    std::lock_guard guard(lock_);
    return {page_used_, free_pages_, rng_state_};
}

bool Arena::rewind(const Mark& mark) {
    std::lock_guard guard(lock_);
    if (mark.page_used != page_used_ || mark.free_pages != free_pages_) return false;
    std::memset(linear_, 0, page_count_ * PAGE_SIZE);  // a fresh memfd reads 0
    rng_state_ = mark.rng_state;
    return true;
}

LockedBuffer Arena::allocate(size_t bytes, Placement placement) {
    size_t pages = bytes == 0 ? 1 : (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    LockedBuffer buffer;
    buffer.pfns_ = take_pages(pages, placement);
    buffer.arena_ = this;
    buffer.owns_pages_ = true;
    try {
        buffer.base_ = map_alias(buffer.pfns_);
    } catch (...) {
        release(buffer);
        throw;
    }
    note_mapped(buffer.base_, buffer.pfns_);
    std::memset(buffer.base_, 0, buffer.size());
    return buffer;
}

LockedBuffer Arena::alias(std::span<const PFN_NUMBER> pfns) {
    for (PFN_NUMBER pfn : pfns)
        if (pfn >= page_count_) throw std::out_of_range("alias of PFN beyond the arena");
    LockedBuffer buffer;
    buffer.pfns_.assign(pfns.begin(), pfns.end());
    buffer.arena_ = this;
    buffer.base_ = map_alias(buffer.pfns_);
    note_mapped(buffer.base_, buffer.pfns_);
    return buffer;
}

void Arena::release(LockedBuffer& buffer) {
    if (buffer.base_) {
        forget_mapped(buffer.base_, buffer.size());
        munmap(buffer.base_, buffer.size());
    }
    if (buffer.owns_pages_) {
        std::lock_guard guard(lock_);
        for (PFN_NUMBER pfn : buffer.pfns_)
            page_used_[pfn] = 0;
        free_pages_ += buffer.pfns_.size();
    }
    buffer.base_ = nullptr;
    buffer.pfns_.clear();
    buffer.arena_ = nullptr;
    buffer.owns_pages_ = false;
}

LockedBuffer::LockedBuffer(LockedBuffer&& other) noexcept
    : arena_(other.arena_),
      base_(other.base_),
      pfns_(std::move(other.pfns_)),
      owns_pages_(other.owns_pages_) {
    other.arena_ = nullptr;
    other.base_ = nullptr;
    other.owns_pages_ = false;
}

LockedBuffer& LockedBuffer::operator=(LockedBuffer&& other) noexcept {
    if (this != &other) {
        if (arena_) arena_->release(*this);
        arena_ = other.arena_;
        base_ = other.base_;
        pfns_ = std::move(other.pfns_);
        owns_pages_ = other.owns_pages_;
        other.arena_ = nullptr;
        other.base_ = nullptr;
        other.owns_pages_ = false;
    }
    return *this;
}

LockedBuffer::~LockedBuffer() {
    if (arena_) arena_->release(*this);
}

}  // namespace ndkct::platform
