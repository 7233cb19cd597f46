#include "mirror.hpp"

#include <cstring>
#include <vector>

namespace ndkct::twonode {

void Mirror::add(std::span<const PFN_NUMBER> pfns) {
    std::lock_guard lock(mutex_);
    for (PFN_NUMBER pfn : pfns) {
        if (pfn >= memory_.PageCount || base_.count(pfn)) continue;
        auto copy = std::make_unique<std::byte[]>(PAGE_SIZE);
        std::memset(copy.get(), 0, PAGE_SIZE);
        base_.emplace(pfn, std::move(copy));
    }
}

size_t Mirror::page_count() const {
    std::lock_guard lock(mutex_);
    return base_.size();
}

size_t Mirror::take_changes(Writer& w) {
    std::lock_guard lock(mutex_);
    size_t changed = 0;
    struct Run {
        uint16_t offset, length;
    };
    std::vector<uint8_t>& out = w.buffer();
    size_t count_at = out.size();
    w.u32(0);  // pages, patched below
    uint32_t pages = 0;
    std::vector<Run> runs;
    // One copy of the page taken first, so that a device writing meanwhile cannot make the
    // bytes sent and the new base differ.
    std::vector<std::byte> now(PAGE_SIZE);
    for (auto& [pfn, base] : base_) {
        std::byte* live = page(pfn);
        if (std::memcmp(live, base.get(), PAGE_SIZE) == 0) continue;
        std::memcpy(now.data(), live, PAGE_SIZE);
        runs.clear();
        size_t i = 0;
        while (i < PAGE_SIZE) {
            if (now[i] == base[i]) {
                ++i;
                continue;
            }
            size_t start = i, last = i;
            // A run ends after 16 equal bytes in a row.
            while (i < PAGE_SIZE && i - last <= 16) {
                if (now[i] != base[i]) last = i;
                ++i;
            }
            runs.push_back({static_cast<uint16_t>(start), static_cast<uint16_t>(last - start + 1)});
        }
        if (runs.empty()) continue;
        ++pages;
        w.u64(pfn);
        w.u16(static_cast<uint16_t>(runs.size()));
        for (const Run& run : runs) {
            w.u16(run.offset);
            w.u16(run.length);
            w.raw(now.data() + run.offset, run.length);
            std::memcpy(base.get() + run.offset, now.data() + run.offset, run.length);
            changed += run.length;
        }
    }
    std::memcpy(out.data() + count_at, &pages, 4);
    return changed;
}

void Mirror::apply(Reader& r) {
    std::lock_guard lock(mutex_);
    uint32_t pages = r.u32();
    for (uint32_t p = 0; p < pages; ++p) {
        PFN_NUMBER pfn = r.u64();
        uint16_t runs = r.u16();
        if (pfn >= memory_.PageCount)
            throw WireError("a memory change names a page outside the arena");
        auto it = base_.find(pfn);
        if (it == base_.end()) {
            auto copy = std::make_unique<std::byte[]>(PAGE_SIZE);
            std::memset(copy.get(), 0, PAGE_SIZE);
            it = base_.emplace(pfn, std::move(copy)).first;
        }
        for (uint16_t k = 0; k < runs; ++k) {
            uint16_t offset = r.u16(), length = r.u16();
            if (offset + length > PAGE_SIZE) throw WireError("a memory change runs past its page");
            r.raw(page(pfn) + offset, length);
            std::memcpy(it->second.get() + offset, page(pfn) + offset, length);
        }
    }
}

}  // namespace ndkct::twonode
