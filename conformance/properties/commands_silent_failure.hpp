// commands_silent_failure.hpp: rc::state commands for NdkFastRegister's NDK_OP_FLAG_SILENT_SUCCESS
// when the registration fails (issue 13, group s13silent), in a property of their own
// (SilentFailure) so that the other properties' sequences, and the faults their bites pin, stay
// as they were.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// A source region (NdkCreateMr, NdkRegisterMr), a fast-register MR initialized with remote
// access for at least the pages of a LAM (NdkCreateMr, NdkInitializeFastRegisterMr, NdkBuildLam
// of the whole region), then on one QP an NdkFastRegister of all the LAM's pages with remote
// write, and a second one over it, not invalidated, at another address and with
// NDK_OP_FLAG_SILENT_SUCCESS (AMB-30: it fails, in its completion under the profile), and the
// peer QP's NdkWrite into the second region through the MR's remote token. If the second
// registration took effect the write lands; if not, the write fails and the registration owes
// an error entry (FR-SILENT-02). Each call is generated as usual otherwise.
struct SilentFastRegisterOverValid : Composite {
    std::shared_ptr<const CreateMr> create_source;
    std::shared_ptr<const RegisterMr> register_source;
    std::shared_ptr<const CreateMr> create_fast;
    std::shared_ptr<const InitializeFastRegisterMr> initialize;
    std::shared_ptr<const BuildLam> build_lam;
    std::shared_ptr<const FastRegister> first;
    std::shared_ptr<const FastRegister> second;
    std::shared_ptr<const Write> write;
    explicit SilentFastRegisterOverValid(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
