// ndkct/trace/mdl_chain.hpp: a recorded MDL chain rebuilt as real MDLs.
//
// The checker (judge.cpp) and the replay (replay.cpp) both hand recorded chains to code that
// walks real MDLs (the model's view_mdl, a provider's NdkRegisterMr / NdkBuildLam). They differ
// only in what a recorded PFN becomes: the checker's shadow page, the replay's PFN as recorded.
#pragma once

#include <cstdint>
#include <vector>

#include "ndkct/kernel_types.h"
#include "ndkct/trace/reader.hpp"

namespace ndkct::trace {

// A chain is refused above this many 8-byte words (64 MiB: about 8 M pages, far above any
// AdapterPageCount): a malformed trace must get a clear refusal, not an allocation of its choosing.
inline constexpr uint64_t kMaxMdlChainWords = uint64_t{1} << 23;

// Builds `chain` in `storage` (resized to fit) and returns its head; nullptr for an empty or
// refused chain. `page_of(pfn)` maps every recorded PFN.
template <typename PageOf>
const MDL* rebuild_mdl_chain(const MdlChainRecord& chain, std::vector<uint64_t>& storage,
                             PageOf&& page_of) {
    uint64_t words = 0;
    for (const auto& m : chain.mdls)
        words += sizeof(MDL) / 8 +
                 ADDRESS_AND_SIZE_TO_SPAN_PAGES(reinterpret_cast<PVOID>(m.start_va + m.byte_offset),
                                                m.byte_count);
    if (chain.mdls.empty() || words > kMaxMdlChainWords) return nullptr;
    storage.assign(words, 0);
    size_t at = 0;
    MDL* previous = nullptr;
    MDL* head = nullptr;
    for (const auto& m : chain.mdls) {
        auto* mdl = reinterpret_cast<MDL*>(storage.data() + at);
        mdl->Next = nullptr;
        mdl->Size = static_cast<CSHORT>(m.size);
        mdl->MdlFlags = static_cast<CSHORT>(m.mdl_flags);
        mdl->StartVa = reinterpret_cast<PVOID>(m.start_va);
        mdl->MappedSystemVa = reinterpret_cast<PVOID>(m.mapped_system_va);
        mdl->ByteCount = m.byte_count;
        mdl->ByteOffset = m.byte_offset;
        uint64_t pages = MmGetMdlPageCount(mdl);
        PFN_NUMBER* pfns = MmGetMdlPfnArray(mdl);
        uint64_t filled = 0;
        for (const auto& [first, count] : m.runs)
            for (uint64_t i = 0; i < count && filled < pages; ++i)
                pfns[filled++] = page_of(first + i);
        if (previous) previous->Next = mdl;
        if (!head) head = mdl;
        previous = mdl;
        at += sizeof(MDL) / 8 + pages;
    }
    return head;
}

}  // namespace ndkct::trace
