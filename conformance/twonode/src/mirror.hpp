// conformance/twonode/src/mirror.hpp: the test's view of memory that lives on both nodes.
//
// Both nodes have an arena of the same size; PFN n is page n on either. A page that an MDL sent
// to node B names is mirrored: each node keeps the page's content as of the last exchange (the
// base), and an exchange sends only the bytes that changed on one side since then. Node A pushes
// its changes before B may read them (before B's posts, before A's reads of B's memory); B's
// changes (what RDMA wrote there) come back with every poll of B's CQs and after A's polls, so
// the test and the oracle on A see the bytes that really landed on B. Bytes changed on both
// sides between two exchanges: the sender's win (a race the test made; loopback has it too).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <span>

#include "ndkct/host_memory.h"
#include "wire.hpp"

namespace ndkct::twonode {

class Mirror {
  public:
    explicit Mirror(const NDKCT_HOST_MEMORY& memory) : memory_(memory) {}

    // Starts mirroring these pages (their base is zero: a fresh arena's content).
    void add(std::span<const PFN_NUMBER> pfns);
    size_t page_count() const;
    // Writes the bytes of mirrored pages that differ from their base, and takes them as the new
    // base. Returns the number of changed bytes.
    size_t take_changes(Writer& w);
    // Writes changes the other node sent into memory and the base.
    void apply(Reader& r);

  private:
    std::byte* page(PFN_NUMBER pfn) const {
        return static_cast<std::byte*>(memory_.PhysicalBase) + pfn * PAGE_SIZE;
    }
    NDKCT_HOST_MEMORY memory_;
    mutable std::mutex mutex_;
    std::map<PFN_NUMBER, std::unique_ptr<std::byte[]>> base_;
};

}  // namespace ndkct::twonode
