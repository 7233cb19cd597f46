// commands_fast_register_page_runs.hpp: a property command for NdkFastRegister's FR-MAP-01 (issue
// 13, group s13map), in a property of its own (FastRegisterPageRuns) so that the other properties'
// sequences, and the faults their bites pin, stay as they were.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// A fast registration over pages that are not one run of consecutive logical pages, written
// into by the peer: on the setup pair (pd0, cq1, qp2 <-> qp3) NdkBuildLam of eight physically
// contiguous pages of its own (a mapping that holds a run of logical pages wherever the
// provider's logical addresses keep the PFN's low bits), NdkCreateMr and
// NdkInitializeFastRegisterMr for three pages with remote access, NdkFastRegister on qp2 of
// three of the mapping's pages (ends two logical pages apart whose run's middle page is mapped
// too, and a middle entry off that run; `pick` chooses which), then qp3's NdkWrite of the whole
// region (`fbo` on) from a registered source, and both entries polled: byte k of the region must
// land on page AdapterPageArray[(FBO + k) / PAGE_SIZE] (FR-MAP-01, FR-PAGE-02), which the oracle
// judges. Everything it makes is closed and released before it ends. One node only.
struct PagesNotARunWrite : Command {
    uint32_t fbo;
    uint32_t pick;  // which other page is the middle entry
    explicit PagesNotARunWrite(const World& w);
    void checkPreconditions(const World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

}  // namespace ndkct::properties
