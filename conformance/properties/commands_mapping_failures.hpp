// commands_mapping_failures.hpp: property commands for NdkBuildLam's failures (issue 13, s13lam): a
// request that fails leaves nothing behind, whether it failed for an argument (LAM-ERR-01) or
// for want of resources (LAM-ST-03). A leak shows only as a later shortage: each command builds
// and releases a mapping, makes failing requests, and builds it again, with nothing else in
// between (the oracle's window, Model::lam_refusal_rules).
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// `rounds` times: NdkBuildLam of a whole chain with a buffer too small (*pLAMSize =
// `probe_size`, below the required size: STATUS_BUFFER_TOO_SMALL), then with the exact size,
// then NdkReleaseLam of what was built. Every build after a probe finds the room the one
// before it had (LAM-ERR-01).
struct ProbeBuildAndRelease : Command {
    Region region;  // whole, within one buffer
    uint32_t probe_size;
    int rounds;
    explicit ProbeBuildAndRelease(const World& w);
    void apply(World&) const override {}  // every mapping it builds it releases
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// NdkBuildLam of a small whole chain and its release, NdkBuildLam of `large_pages` pages of a
// buffer of its own (an adapter may lack the resources; released if built), then the small one
// again: a request refused for want of resources leaves no mapping behind, so the room the first
// build had is there (LAM-ST-03, LAM-ERR-01).
struct ShortageBetweenBuilds : Command {
    Region region;  // the small chain: whole, within one buffer
    uint32_t large_pages;
    explicit ShortageBetweenBuilds(const World& w);
    void apply(World&) const override {}
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

}  // namespace ndkct::properties
