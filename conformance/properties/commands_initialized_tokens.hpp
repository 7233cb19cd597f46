// commands_initialized_tokens.hpp: property commands for the local token of a fast-register MR read
// before its first fast registration (issue 13, s13tok). NdkGetLocalTokenFromMr may be called once
// NdkInitializeFastRegisterMr completed and returns the MR's local token (IFR-TOK-01): under
// AMB-40's from_initialize (the default) local SGEs with it reach the region of the MR's next
// fast registration. The other commands use the tokens read after a registration.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkWrite whose SGEs name MR slot `source` by the local token read after its initialization
// (MrRecord::initialized_token, read by InitializeFastRegisterMr once it completed), not by the
// one read after its fast registration. Write's call otherwise.
struct WriteThroughInitializedToken : Write {
    int source = -1;
    explicit WriteThroughInitializedToken(const World& w) : Write(w) {}
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// A fast-register MR used through the local token it reported before its first fast
// registration, at once: NdkCreateMr and NdkRegisterMr of a target with remote write;
// NdkCreateMr (FastRegister), NdkInitializeFastRegisterMr (which reads the MR's tokens once it
// completed), NdkBuildLam of a whole chain and NdkFastRegister of the MR over all of it with
// local read only (its tokens read again after the call returned, as every fast registration's
// are); then
// WriteThroughInitializedToken on qp2 from the region to the target (IFR-TOK-01).
struct InitializedTokenSourceWrite : Composite {
    std::shared_ptr<const CreateMr> create_target, create_source;
    std::shared_ptr<const RegisterMr> register_target;
    std::shared_ptr<const InitializeFastRegisterMr> initialize;
    std::shared_ptr<const BuildLam> build_lam;
    std::shared_ptr<const FastRegister> fast_register;
    std::shared_ptr<const WriteThroughInitializedToken> write;
    explicit InitializedTokenSourceWrite(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
