// commands_fast_register.hpp: rc::state commands for NdkFastRegister beyond commands.hpp's
// FastRegister (issue 13: the page's argument boundaries and flags, one command each).
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkFastRegister with NDK_OP_FLAG_READ_FENCE (FR-FLG-01: any OR of the page's documented flags
// is valid; FR-FENCE-01): FastRegister's arguments, fenced, sometimes silent as well. A command of
// its own so that MemoryRegistration's stream (and the faults its bites pin) stays as it was.
struct FencedFastRegister : FastRegister {
    explicit FencedFastRegister(const World& w);
};

}  // namespace ndkct::properties

namespace ndkct::properties {

// NdkWrite to a fast-registered region naming the bare offset (RemoteAddress = offset, not
// BaseVirtualAddress + offset) with the region's remote token: it must not reach the region
// (FR-ZBVA-01: no zero-based addresses). Write's arguments, aimed at a fast-register MR.
struct BareOffsetWrite : Write {
    explicit BareOffsetWrite(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

}  // namespace ndkct::properties
