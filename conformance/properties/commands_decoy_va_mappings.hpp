// commands_decoy_va_mappings.hpp: property commands for NdkBuildLam over decoy-VA MDLs (issue 13,
// s13lamva).
//
// The MDL's virtual address is only a label for the start of the range (LAM-VA-01): the
// consumer may hand an MDL whose VA is another buffer's range (the decoy) while its PFN array
// lists the real pages (platform::with_decoy_va). The mapping must reach the PFNs' pages; a
// provider that maps what the VA points at reaches the decoy, and a send through the LAM's
// logical addresses carries the decoy's bytes.
#pragma once

#include "commands.hpp"
#include "commands_mappings_and_initializations.hpp"

namespace ndkct::properties {

// NdkBuildLam of a whole chain of one buffer (into the exact buffer it needs) whose VA is the
// same range of the next buffer (the decoy, whose pages hold another pattern).
struct BuildLamWithDecoyVa : BuildLam {
    uint8_t decoy;  // the buffer whose addresses label the range
    explicit BuildLamWithDecoyVa(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// A send through a decoy-VA mapping: BuildLamWithDecoyVa, the ReceiveSink, then SendFromLam on
// qp2 from that mapping (the PD's privileged token): the real pages' bytes must arrive.
struct SendFromDecoyVaMapping : Composite {
    std::shared_ptr<const BuildLamWithDecoyVa> build_lam;
    ReceiveSink sink;
    std::shared_ptr<const SendFromLam> send;
    explicit SendFromDecoyVaMapping(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
