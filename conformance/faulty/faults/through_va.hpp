// Shared by the faults that dereference an MDL's virtual address (RMR-VA-03, LAM-VA-01): a
// vendor's software path that copies through MmGetMdlVirtualAddress instead of the PFN array.
// In this harness the consumer's VA is an alias of arena pages (platform/arena.hpp), so "what
// dereferencing the VA reaches" is the arena pages that VA maps: read from /proc/self/maps (the
// memfd's file offset is the PFN), the way the process itself resolves the address. The chain
// is handed to the reference with those pages in place of its PFNs; for an ordinary MDL they
// are the same pages, so only a decoy-VA MDL (platform::with_decoy_va) shows the difference.
#pragma once

#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "faulty.hpp"
#include "ndkct/platform/mdl.hpp"

namespace ndkct::faulty {

// The process's arena aliases: each mapping of the arena's memfd and its file offset.
struct ArenaMappings {
    struct Range {
        uintptr_t begin, end, offset;
    };
    std::vector<Range> ranges;

    ArenaMappings() {
        std::FILE* maps = std::fopen("/proc/self/maps", "r");
        if (!maps) return;
        char line[512];
        while (std::fgets(line, sizeof line, maps)) {
            unsigned long begin = 0, end = 0, offset = 0;
            if (std::strstr(line, "memfd:ndkct-arena") &&
                std::sscanf(line, "%lx-%lx %*s %lx", &begin, &end, &offset) == 3)
                ranges.push_back({begin, end, offset});
        }
        std::fclose(maps);
    }

    // The arena page the virtual page at `page` (page-aligned) maps, if it is an arena alias.
    std::optional<PFN_NUMBER> page_behind(uintptr_t page) const {
        for (const Range& r : ranges)
            if (page >= r.begin && page < r.end)
                return PFN_NUMBER((r.offset + (page - r.begin)) / PAGE_SIZE);
        return std::nullopt;
    }
};

// A copy of a chain whose PFN arrays list the pages each MDL's VA maps (where the VA is an
// arena alias; a page that is not keeps its PFN). The copies live as long as this object.
struct ChainThroughVa {
    std::vector<std::vector<std::byte>> storage;
    MDL* head = nullptr;

    explicit ChainThroughVa(const MDL* chain) {
        ArenaMappings arena;
        MDL* previous = nullptr;
        for (const MDL* m = chain; m; m = m->Next) {
            auto& copy = storage.emplace_back(size_t(m->Size));
            std::memcpy(copy.data(), m, copy.size());
            auto* mdl = reinterpret_cast<MDL*>(copy.data());
            mdl->Next = nullptr;
            size_t pages = (size_t(m->Size) - sizeof(MDL)) / sizeof(PFN_NUMBER);
            PPFN_NUMBER pfns = MmGetMdlPfnArray(mdl);
            auto start = reinterpret_cast<uintptr_t>(m->StartVa);
            for (size_t p = 0; p < pages; ++p)
                if (auto behind = arena.page_behind(start + p * PAGE_SIZE))
                    pfns[p] = *behind;  // the fault: the VA's page, not the PFN
            if (previous)
                previous->Next = mdl;
            else
                head = mdl;
            previous = mdl;
        }
    }
};

}  // namespace ndkct::faulty
