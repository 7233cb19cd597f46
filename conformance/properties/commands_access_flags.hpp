// commands_access_flags.hpp: rc::state commands for the access flags and addressing of
// NdkRegisterMr and NdkFastRegister (issue 13, s11flags), used by the AccessFlags property only, so
// that the other properties' streams (and the faults their bites pin) stay as they were.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkFastRegister with BaseVirtualAddress 0 and FBO 0 (FR-ALIGN-02: then 0 is an ordinary start
// address and the registration must work): FastRegister's other arguments, congruent.
struct ZeroBaseFastRegister : FastRegister {
    explicit ZeroBaseFastRegister(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// One region's local access through its flags, in one command (its calls judged one by one): a
// region registered (NdkRegisterMr) or fast-registered (NdkBuildLam, NdkInitializeFastRegisterMr,
// NdkFastRegister, now and then at BaseVirtualAddress 0) with flags drawn from the page's
// tables, then the source of a send from the setup pair's first QP, or the target of a receive
// there, the other side a scratch region with local and remote rights; the CQ drained, the MRs
// closed.
// RMR-FLG-01/02/03, RMR-SINK-02/03, FR-FLG-02/03, FR-SINK-02/03, FR-TOK-02, FR-ALIGN-02 are at
// stake, and the grants the oracle names first when such a transfer fails (grant_rules).
struct LocalAccessProbe : Command {
    bool fast;
    uint32_t flags;
    bool as_target;  // the receive's buffer, else the send's source
    bool zero_base;  // fast: BaseVirtualAddress 0 (FBO 0)
    uint32_t offset, length;
    explicit LocalAccessProbe(const World& w);
    void checkPreconditions(const World& w) const override;
    void apply(World&) const override {}
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

}  // namespace ndkct::properties
