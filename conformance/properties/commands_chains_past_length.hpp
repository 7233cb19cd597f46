// commands_chains_past_length.hpp: property commands for NdkRegisterMr over chains broken past
// Length (issue 13).
//
// RegisterMr draws its chains whole, split or broken inside the range it registers, and always
// as long as Length: none is broken only past Length, where a provider that checks every joint
// of the chain refuses what it must register (RMR-MDL-04). RegisterMrBeforeABreak registers whole
// pages of a chain that has a hole after them.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkRegisterMr of `length` bytes (whole pages) of a chain of two pieces with `gap` bytes of the
// buffer skipped between them: the first piece is the whole range registered, so the chain is
// valid (RMR-MDL-04). RegisterMr's MR and flags; the region is what it would be for one MDL.
struct RegisterMrBeforeABreak : RegisterMr {
    uint32_t gap;    // bytes skipped after the first piece
    uint32_t after;  // the second piece, past Length
    explicit RegisterMrBeforeABreak(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// A region registered before a break at once: NdkCreateMr, RegisterMrBeforeABreak of it (with
// remote write added mostly) and an NdkWrite of the peer's into it (as Write draws it).
struct RegisteredBeforeABreak : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const RegisterMrBeforeABreak> register_mr;
    std::shared_ptr<const Write> write;
    explicit RegisteredBeforeABreak(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
