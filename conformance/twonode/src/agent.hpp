// conformance/twonode/src/agent.hpp: node B's side. An agent serves one connection from node
// A's split provider: it opens B's provider over an arena of A's size, makes the NDK calls A
// routes to it, answers each, and streams its provider's callbacks back as events. It never
// judges anything: the oracle is on A.
#pragma once

#include <cstdint>
#include <string>

#include "ndkct/provider.h"

namespace ndkct::twonode {

struct AgentOptions {
    std::string provider;  // provider spec of node B's provider ("" = the one A names)
    std::string device;    // device name for B's provider ("" = the one A names)
    std::string address4;  // node B's address on the RDMA link (reported to A)
    std::string address6;
    std::string interface;  // the link's network interface (faults); "" = found by address
    bool verbose = false;
};

// Opens a provider by spec (the harness's provider_spec), without the two-node wrapping.
using ProviderOpener = const NDKCT_PROVIDER_ENTRY_POINTS* (*)(const std::string& spec,
                                                              std::string& error);

// Serves one connection until A closes it or the stream breaks. Returns a process exit status.
int serve_connection(int fd, const AgentOptions& options, ProviderOpener opener);

}  // namespace ndkct::twonode
