// commands_lam_releases.hpp: property commands for NdkBuildLam's LAM-REL-01 (issue 13): a mapping
// lives until NdkReleaseLam releases it, whatever happens to the adapter's other mappings.
#pragma once

#include "commands.hpp"
#include "commands_mappings_and_initializations.hpp"

namespace ndkct::properties {

// A mapping used after an older one was released: NdkBuildLam twice (whole chains, the exact
// buffer), NdkCreateMr and NdkRegisterMr with local write (the sink), NdkReceive of it on qp3,
// NdkReleaseLam of the first mapping, then SendFromLam on qp2 from the second: its bytes must
// arrive (LAM-REL-01: releasing one LAM leaves the others mapped).
struct SendAfterARelease : Composite {
    std::shared_ptr<const BuildLam> build_released, build_used;
    ReceiveSink sink;
    std::shared_ptr<const ReleaseLam> release;
    std::shared_ptr<const SendFromLam> send;
    explicit SendAfterARelease(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
