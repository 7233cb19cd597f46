// ndkct/platform/mdl.hpp: building MDL chains over locked buffers, and reading them back.
//
// The consumer side builds chains (whole, split, or deliberately broken for negative tests);
// the provider side walks them the way a driver would: through the PFN arrays, with
// MmGetMdlVirtualAddress as the only meaning of "address" (RMR-VA-01: an index, never a pointer).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ndkct/kernel_types.h"
#include "ndkct/platform/arena.hpp"

namespace ndkct::platform {

// An MDL chain and the storage of its MDLs. Movable; the MDLs live as long as the chain.
class MdlChain {
  public:
    MdlChain() = default;
    MdlChain(MdlChain&&) noexcept = default;
    MdlChain& operator=(MdlChain&&) noexcept = default;

    MDL* head() const { return mdls_.empty() ? nullptr : mdl(0); }
    MDL* mdl(size_t index) const { return reinterpret_cast<MDL*>(mdls_[index].get()); }
    size_t mdl_count() const { return mdls_.size(); }
    size_t byte_count() const;  // sum of ByteCount over the chain

    // Appends one MDL describing [offset, offset + length) of buffer's virtual range.
    void append(const LockedBuffer& buffer, size_t offset, size_t length);
    // Appends one MDL whose virtual address is decoy's (decoy.data() + offset) while its PFN
    // array lists pages' pages under [offset, offset + length): see with_decoy_va.
    void append_with_decoy_va(const LockedBuffer& pages, const LockedBuffer& decoy, size_t offset,
                              size_t length);

  private:
    struct Free {
        void operator()(std::byte* p) const {
            ::operator delete[](p, std::align_val_t{alignof(MDL)});
        }
    };
    std::vector<std::unique_ptr<std::byte[], Free>> mdls_;
};

// One MDL for [offset, offset + length) of buffer.
MdlChain describe(const LockedBuffer& buffer, size_t offset, size_t length);

// A virtually contiguous chain: consecutive pieces of the given lengths starting at offset.
// Joints may fall mid-page (as partial MDLs do) or on page boundaries.
MdlChain describe_split(const LockedBuffer& buffer, size_t offset,
                        std::span<const size_t> piece_lengths);

// Deliberately broken chains for negative tests (RMR-MDL-01, LAM-MDL-01).
// Two pieces with `gap` bytes of the buffer skipped between them: a hole in the virtual range.
MdlChain with_hole(const LockedBuffer& buffer, size_t offset, size_t first_length, size_t gap,
                   size_t second_length);
// The first piece ends mid-page and the second starts at the next page boundary, so the joint
// does not line up (the bytes between are missing from the chain).
MdlChain with_misaligned_joint(const LockedBuffer& buffer, size_t offset, size_t first_length,
                               size_t second_length);

// A decoy-VA MDL (RMR-VA-03, LAM-VA-01): the pages are pages' [offset, offset + length), but the
// virtual address (StartVa + ByteOffset) is decoy.data() + offset, a range of another buffer
// that maps other pages. The consumer may do this: the VA is only an index for the region, and
// data must move through the PFNs, so a provider that dereferences the VA reaches the decoy.
MdlChain with_decoy_va(const LockedBuffer& pages, const LockedBuffer& decoy, size_t offset,
                       size_t length);

// ---- Reading chains (provider side) ----

// The pages under the first `length` bytes of a chain, as a driver sees them.
struct ChainPages {
    bool contiguous = false;  // the first `length` bytes are virtually contiguous and present
    std::string problem;      // why not, in a sentence (empty when contiguous)
    PVOID virtual_address = nullptr;  // MmGetMdlVirtualAddress(first MDL)
    ULONG first_byte_offset = 0;      // offset of the first byte in the first page (the FBO)
    std::vector<PFN_NUMBER> pfns;     // one entry per PAGE_SIZE page spanned, in virtual order
};

ChainPages chain_pages(const MDL* chain, size_t length);

}  // namespace ndkct::platform
