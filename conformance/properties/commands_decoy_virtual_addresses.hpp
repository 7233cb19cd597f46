// commands_decoy_virtual_addresses.hpp: property commands for NdkRegisterMr over decoy-VA MDLs
// (issue 13, s13va).
//
// The MDL's virtual address is only a label for the region (RMR-VA-03): the consumer may hand an
// MDL whose VA is another buffer's range (the decoy) while its PFN array lists the real pages
// (platform::with_decoy_va). Data must move through the PFNs; a provider that dereferences the
// VA moves it through the decoy. RegisterMrWithDecoyVa registers such an MDL, labelled with the
// next buffer's addresses (whose pages hold another pattern).
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkRegisterMr of a whole-MDL region of one buffer whose VA is the same range of the next
// buffer (the decoy). The region is addressed through the decoy's addresses (RMR-VA-01).
struct RegisterMrWithDecoyVa : RegisterMr {
    uint8_t decoy;  // the buffer whose addresses label the region
    explicit RegisterMrWithDecoyVa(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// A decoy-VA region registered at once: NdkCreateMr, RegisterMrWithDecoyVa of it (with every
// right mostly) and an NdkWrite of the peer's into it, or an NdkRead from it (as Write and Read
// draw them).
struct RegisteredWithDecoyVa : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const RegisterMrWithDecoyVa> register_mr;
    std::shared_ptr<const Write> write;  // one of write and read
    std::shared_ptr<const Read> read;
    explicit RegisteredWithDecoyVa(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
