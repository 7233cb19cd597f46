// commands_first_registrations.hpp: rc::state commands for the tokens of an initialized
// fast-register MR (issue 13, group s13tok2), in a property of their own (FirstRegistrations) so
// that the other properties' sequences, and the faults their bites pin, stay as they were.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkInitializeFastRegisterMr without reading the MR's tokens afterwards (the plain command reads
// both once the initialization completed), so that a first registration follows either no read
// or only the reads a sequence asks for (IFR-TOK-02).
struct InitializeWithoutTokenReads : InitializeFastRegisterMr {
    using InitializeFastRegisterMr::InitializeFastRegisterMr;
    void run(const World& w, Sut& sut) const override;
};

// Two fast-register MRs' first registrations after their initializations (for each: NdkCreateMr,
// InitializeWithoutTokenReads; one NdkBuildLam; then NdkFastRegister of the LAM's pages with its
// FBO and Length, congruent, local write), the second MR's remote token read in between with
// NdkGetRemoteTokenFromMr, the first's not: reading the token once the initialization completed
// changes nothing, so both registrations must be taken (IFR-TOK-02); the first shows the provider
// takes a registration without the read.
struct FirstRegistrations : Composite {
    std::shared_ptr<const CreateMr> create_unread, create_read;
    std::shared_ptr<const InitializeWithoutTokenReads> initialize_unread, initialize_read;
    std::shared_ptr<const BuildLam> build_lam;
    std::shared_ptr<const FastRegister> register_unread, register_read;
    explicit FirstRegistrations(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

// NdkGetRemoteTokenFromMr of an MR (between FirstRegistration's initialization and registration).
struct ReadRemoteToken : Command {
    int mr;
    explicit ReadRemoteToken(int mr_slot) : mr(mr_slot) {}
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(mr, Kind::mr)); }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkGetRemoteTokenFromMr(" << slot_name(Kind::mr, mr) << ")";
    }
};

}  // namespace ndkct::properties
