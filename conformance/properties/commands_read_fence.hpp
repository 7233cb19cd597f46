// commands_read_fence.hpp: rc::state commands for NdkFastRegister's NDK_OP_FLAG_READ_FENCE
// (issue 13, group s12fence), in a property of their own (ReadFence) so that the other
// properties' sequences, and the faults their bites pin, stay as they were.
#pragma once

#include "commands.hpp"
#include "commands_fast_register.hpp"

namespace ndkct::properties {

// A region to read (NdkCreateMr, NdkRegisterMr with local write, remote read and the read sink
// added to the flags drawn), a fast-register MR and a LAM (NdkCreateMr,
// NdkInitializeFastRegisterMr, NdkBuildLam), then on one QP an NdkRead from the region's second
// half into its first, and an NdkFastRegister of the MR over the LAM with NDK_OP_FLAG_READ_FENCE
// (never silent): the registration may start only once the read has completed, so its entry may not
// come ahead of the read's (FR-FENCE-01, WR-FENCE-01). Each call is generated as usual otherwise.
struct ReadThenFencedFastRegister : Composite {
    std::shared_ptr<const CreateMr> create_region;
    std::shared_ptr<const RegisterMr> register_region;
    std::shared_ptr<const CreateMr> create_fast;
    std::shared_ptr<const InitializeFastRegisterMr> initialize;
    std::shared_ptr<const BuildLam> build_lam;
    std::shared_ptr<const Read> read;
    std::shared_ptr<const FencedFastRegister> fast_register;
    explicit ReadThenFencedFastRegister(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
