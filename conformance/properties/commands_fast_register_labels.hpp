// commands_fast_register_labels.hpp: rc::state commands for NdkFastRegister's BaseVirtualAddress
// beyond every pointer (issue 13, group s13align), in a property of their own (FastRegisterLabels)
// so that the other properties' sequences, and the faults their bites pin, stay as they were.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// FastRegistration (NdkCreateMr, NdkInitializeFastRegisterMr with remote access, NdkBuildLam,
// NdkFastRegister with remote write, congruent to FBO) at a label no pointer has (bit 47 or bit 63
// set), then the peer's NdkWrite into it: the address is only a label, however large
// (FR-ALIGN-01), and the bytes land on the LAM's pages (FR-MAP-01).
struct HighLabelFastRegistration : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const InitializeFastRegisterMr> initialize;
    std::shared_ptr<const BuildLam> build_lam;
    std::shared_ptr<const FastRegister> fast_register;
    std::shared_ptr<const Write> write;
    explicit HighLabelFastRegistration(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
