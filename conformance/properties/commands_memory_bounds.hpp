// commands_memory_bounds.hpp: property commands that reach a memory region's bounds (issue 13).
//
// The other data-path commands keep their SGEs and remote ranges inside what RegisterMr or
// FastRegister asked for, mostly, or put them anywhere: none lands a few bytes past a region's
// end, where a provider that registers whole pages (its end rounded up to the page) lets the
// access through. AccessAcrossTheEnd does: an NdkWrite or NdkRead whose local SGE or remote range
// starts a few bytes before (or at) the region's end and runs a few bytes past it (RMR-ACC-03,
// FR-LEN-03: it must fail and touch nothing outside the region).
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

struct AccessAcrossTheEnd : Command {
    int qp;
    int mr;            // the region whose end the access straddles (either kind of MR)
    bool remote_side;  // the remote range straddles it (else the local SGE does)
    bool write;        // NdkWrite (else NdkRead)
    int other;         // the MR of the other side, used from its first byte
    uint32_t inside;   // bytes before the region's end (at most its length)
    uint32_t past;     // bytes after it
    explicit AccessAcrossTheEnd(const World& w);
    void checkPreconditions(const World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
    std::string before() const;
};

// A region registered and reached across its end at once: NdkCreateMr, NdkRegisterMr (as
// RegisterMr draws it, mostly with remote read and write added so that either side of the
// access has its rights) and AccessAcrossTheEnd with the region on both sides (its first bytes
// the other side). Alone (as shrinking leaves it) it runs on a QP no earlier failure has put in
// error, where an access the provider wrongly lets through shows.
struct RegionEndAccess : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const RegisterMr> register_mr;
    std::shared_ptr<const AccessAcrossTheEnd> access;
    explicit RegionEndAccess(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

// The same for a fast-registered region: FastRegistration's four calls (mostly RemoteAccess,
// every right, a Length short of what the pages hold, so that its end falls inside a page) and
// AccessAcrossTheEnd on the QP that registered it (FR-LEN-03).
struct FastRegionEndAccess : Composite {
    std::shared_ptr<const FastRegistration> registration;
    std::shared_ptr<const AccessAcrossTheEnd> access;
    explicit FastRegionEndAccess(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
