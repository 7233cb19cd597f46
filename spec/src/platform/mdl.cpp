#include "ndkct/platform/mdl.hpp"

#include <cstdio>
#include <limits>
#include <new>
#include <stdexcept>

namespace ndkct::platform {

namespace {

// MDL.Size is a CSHORT, which bounds the pages one MDL can describe (as on Windows).
constexpr size_t kMaxPagesPerMdl =
    (std::numeric_limits<CSHORT>::max() - sizeof(MDL)) / sizeof(PFN_NUMBER);

std::string hex(const void* address) {
    char text[24];
    std::snprintf(text, sizeof text, "%p", address);
    return text;
}

}  // namespace

size_t MdlChain::byte_count() const {
    size_t total = 0;
    for (size_t i = 0; i < mdls_.size(); ++i)
        total += mdl(i)->ByteCount;
    return total;
}

void MdlChain::append(const LockedBuffer& buffer, size_t offset, size_t length) {
    append_with_decoy_va(buffer, buffer, offset, length);
}

void MdlChain::append_with_decoy_va(const LockedBuffer& buffer, const LockedBuffer& decoy,
                                    size_t offset, size_t length) {
    if (offset > buffer.size() || length > buffer.size() - offset)
        throw std::out_of_range("MDL piece [" + std::to_string(offset) + ", +" +
                                std::to_string(length) + ") lies outside a buffer of " +
                                std::to_string(buffer.size()) + " bytes");
    if (offset + length > decoy.size())
        throw std::out_of_range("a decoy VA range must lie inside the decoy buffer");
    if (length > std::numeric_limits<ULONG>::max())
        throw std::out_of_range("an MDL's ByteCount is a ULONG");
    std::byte* va = decoy.data() + offset;  // the label (RMR-VA-03); buffer's own unless a decoy
    size_t pages = length == 0 ? 0 : ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, length);
    if (pages > kMaxPagesPerMdl)
        throw std::out_of_range("one MDL describes at most " + std::to_string(kMaxPagesPerMdl) +
                                " pages; split the range with describe_split");
    size_t bytes = sizeof(MDL) + pages * sizeof(PFN_NUMBER);
    std::unique_ptr<std::byte[], Free> storage(
        static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{alignof(MDL)})));
    auto* mdl = new (storage.get()) MDL{};
    mdl->Size = static_cast<CSHORT>(bytes);
    mdl->MdlFlags = MDL_PAGES_LOCKED;
    mdl->StartVa = PAGE_ALIGN(va);
    mdl->MappedSystemVa = mdl->StartVa;
    mdl->ByteOffset = BYTE_OFFSET(va);
    mdl->ByteCount = static_cast<ULONG>(length);
    auto source = buffer.pfns().subspan(offset / PAGE_SIZE, pages);
    PPFN_NUMBER pfns = MmGetMdlPfnArray(mdl);
    for (size_t i = 0; i < pages; ++i)
        pfns[i] = source[i];
    if (!mdls_.empty()) this->mdl(mdls_.size() - 1)->Next = mdl;
    mdls_.push_back(std::move(storage));
}

MdlChain with_decoy_va(const LockedBuffer& pages, const LockedBuffer& decoy, size_t offset,
                       size_t length) {
    MdlChain chain;
    chain.append_with_decoy_va(pages, decoy, offset, length);
    return chain;
}

MdlChain describe(const LockedBuffer& buffer, size_t offset, size_t length) {
    MdlChain chain;
    chain.append(buffer, offset, length);
    return chain;
}

MdlChain describe_split(const LockedBuffer& buffer, size_t offset,
                        std::span<const size_t> piece_lengths) {
    MdlChain chain;
    for (size_t length : piece_lengths) {
        chain.append(buffer, offset, length);
        offset += length;
    }
    return chain;
}

MdlChain with_hole(const LockedBuffer& buffer, size_t offset, size_t first_length, size_t gap,
                   size_t second_length) {
    if (gap == 0) throw std::invalid_argument("with_hole needs a gap of at least one byte");
    MdlChain chain;
    chain.append(buffer, offset, first_length);
    chain.append(buffer, offset + first_length + gap, second_length);
    return chain;
}

MdlChain with_misaligned_joint(const LockedBuffer& buffer, size_t offset, size_t first_length,
                               size_t second_length) {
    size_t end = offset + first_length;
    if (end % PAGE_SIZE == 0)
        throw std::invalid_argument("with_misaligned_joint needs a first piece ending mid-page");
    MdlChain chain;
    chain.append(buffer, offset, first_length);
    chain.append(buffer, (end / PAGE_SIZE + 1) * PAGE_SIZE, second_length);
    return chain;
}

ChainPages chain_pages(const MDL* chain, size_t length) {
    ChainPages result;
    if (!chain) {
        result.problem = "no MDL";
        return result;
    }
    auto* start = static_cast<const std::byte*>(MmGetMdlVirtualAddress(chain));
    result.virtual_address = MmGetMdlVirtualAddress(chain);
    result.first_byte_offset = BYTE_OFFSET(start);

    const std::byte* expected = start;
    const std::byte* last_page = nullptr;  // virtual page last added to pfns
    size_t remaining = length;
    size_t index = 0;
    for (const MDL* mdl = chain; mdl && remaining > 0; mdl = mdl->Next, ++index) {
        auto* va = static_cast<const std::byte*>(MmGetMdlVirtualAddress(mdl));
        if (va != expected) {
            result.problem = "MDL " + std::to_string(index) + " starts at " + hex(va) +
                             " but the chain so far ends at " + hex(expected) +
                             ": not virtually contiguous";
            return result;
        }
        size_t take = std::min<size_t>(mdl->ByteCount, remaining);
        size_t pages = take == 0 ? 0 : ADDRESS_AND_SIZE_TO_SPAN_PAGES(va, take);
        const PFN_NUMBER* pfns = MmGetMdlPfnArrayConst(mdl);
        for (size_t p = 0; p < pages; ++p) {
            auto* page = static_cast<const std::byte*>(mdl->StartVa) + p * PAGE_SIZE;
            if (page == last_page) {
                // A joint inside a page: both MDLs list it; they must agree.
                if (pfns[p] != result.pfns.back()) {
                    result.problem = "MDL " + std::to_string(index) + " maps the page at " +
                                     hex(page) + " to another PFN than the MDL before it";
                    return result;
                }
                continue;
            }
            result.pfns.push_back(pfns[p]);
            last_page = page;
        }
        expected = va + take;
        remaining -= take;
    }
    if (remaining > 0) {
        result.problem = "the chain describes " + std::to_string(length - remaining) +
                         " bytes, fewer than the " + std::to_string(length) + " asked for";
        return result;
    }
    result.contiguous = true;
    return result;
}

}  // namespace ndkct::platform
