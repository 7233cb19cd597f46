// commands_fast_register_page_counts.hpp: a property command for NdkFastRegister's FR-APC-01 (issue
// 13, group s14apc), in a property of its own (FastRegisterPageCounts) so that the other
// properties' sequences, and the faults their bites pin, stay as they were.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// Every page of a fast registration backs it, the last one too: on the setup pair (pd0, cq1,
// qp2 <-> qp3) NdkBuildLam of `pages` (2 to 4) pages of its own, NdkCreateMr and
// NdkInitializeFastRegisterMr for that many pages with remote access, NdkFastRegister on qp2 of
// all of them (`fbo` on, the region to `short_of_end` bytes before the pages' end), then qp3's
// NdkWrite (or NdkRead, `read`) of `bytes` through the remote token at the region's start, and
// the same request again in the region's last page (`into_last` bytes into its part there,
// inside the region); each entry polled. The oracle judges both (FR-APC-01: AdapterPageCount is
// the number of entries the provider reads; the same request succeeding in the first page and
// failing in the last names it first; FR-MAP-01: where the bytes land). Everything it makes is
// closed and released before it ends. One node only.
struct LastPageAfterFirst : Command {
    uint32_t pages, fbo, short_of_end, bytes, into_last;
    bool read;
    explicit LastPageAfterFirst(const World& w);
    void checkPreconditions(const World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

}  // namespace ndkct::properties
