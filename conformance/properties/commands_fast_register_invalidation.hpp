// commands_fast_register_invalidation.hpp: property commands for the end of a fast registration by
// NdkInvalidate (issue 13, group s13inv), in a property of their own (FastRegisterInvalidation) so
// that the other properties' sequences, and the faults their bites pin, stay as they were.
//
// FastRegistration draws any arguments, so its MR is often left unregistered and an
// NdkInvalidate of it is the invalid-token case (AMB-32); here the registration is made valid,
// so that the invalidation is one NdkInvalidate must carry out (FR-INV-01, INV-01) and the old
// token is then tried (INV-01: it no longer grants access).
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkWrite through the remote token of a fast-register MR's last registration, to where that
// registration put the region (its BaseVirtualAddress plus an offset), registered or not: after
// an NdkInvalidate of it succeeded the write must fail and touch nothing (FR-INV-01, INV-01).
// Write's arguments otherwise, never silent (its failure is its own entry).
struct WriteAfterInvalidate : Write {
    explicit WriteAfterInvalidate(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// A fast registration ended at once: NdkCreateMr (FastRegister), NdkInitializeFastRegisterMr
// (for at least the LAM's pages; mostly RemoteAccess), NdkBuildLam of a whole region,
// NdkFastRegister of the MR over the LAM with valid arguments (the LAM's FBO, a Length within
// its pages, rights the MR allows: mostly remote write), NdkCreateMr and NdkRegisterMr of a plain
// source region, NdkInvalidate of the fast-register MR on the same QP (Flags 0 or
// SILENT_SUCCESS), and WriteAfterInvalidate from the source (1-256 bytes, inside what the fast
// registration covered), so that a token that still granted access would show.
struct FastRegisteredThenInvalidated : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const InitializeFastRegisterMr> initialize;
    std::shared_ptr<const BuildLam> build_lam;
    std::shared_ptr<const FastRegister> fast_register;
    std::shared_ptr<const CreateMr> create_source;
    std::shared_ptr<const RegisterMr> register_source;
    std::shared_ptr<const Invalidate> invalidate;
    std::shared_ptr<const WriteAfterInvalidate> write;
    explicit FastRegisteredThenInvalidated(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
