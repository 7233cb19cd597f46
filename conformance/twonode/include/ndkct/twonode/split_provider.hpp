// ndkct/twonode/split_provider.hpp: one NDK adapter whose objects live on two nodes.
//
// The split provider wraps a provider on this node (A) and the same provider on node B, reached
// through an agent (ndkct-agent) over a TCP side channel. Everything a test creates lives on A,
// and nothing else happens while the test never connects: calls pass straight through to A's
// provider. When a test connects two QPs, the passive side moves to B: the listener also listens
// on B, the connection goes to B's address, and the QP that is accepted, its PD, CQs, SRQ and
// memory registrations are made on B, where the QP's work requests, polls and callbacks then run.
// Tokens, addresses and connection data cross the real link; memory does not: each node has its
// own arena and the bytes that land on B come back to the test's view through the side channel.
// The oracle on A judges the calls of both nodes, as it judges one provider.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ndkct/provider.h"

namespace ndkct::twonode {

// Where the agent is: HOST:PORT, [IPv6]:PORT. From NDKCT_PEER.
struct PeerAddress {
    std::string host;
    uint16_t port = 0;
    std::string text;
};

// Parses "host:port" / "[v6]:port"; nullopt with `error` set when malformed.
std::optional<PeerAddress> parse_peer(const std::string& text, std::string& error);

// NDKCT_PEER, parsed; nullopt when unset. Throws std::invalid_argument when malformed.
std::optional<PeerAddress> peer_from_environment();

// Entry points that open `inner` on this node and its twin on the peer. `spec_text` names the
// provider for the agent (it may override it). At most 16 different inner providers per process.
const NDKCT_PROVIDER_ENTRY_POINTS& split_entry_points(const NDKCT_PROVIDER_ENTRY_POINTS& inner,
                                                      const std::string& spec_text,
                                                      const PeerAddress& peer);

// True when `adapter` was opened by the split provider.
bool is_split_adapter(const NDK_ADAPTER* adapter);
// True once the adapter has made anything on node B (a connection crossed the nodes).
bool crossed_nodes(const NDK_ADAPTER* adapter);

// For the benchmark across the link (bench/): the object a split object has on node A (the
// inner provider's), so that timed loops call the provider on A without the split in between;
// and the value a token the consumer got has on the other node (B's key for B's memory).
void* part_on_a(void* split_object);
UINT32 token_on_peer(NDK_ADAPTER* adapter, UINT32 token, bool remote);

// Faults of a real network, for the fault tests (conformance/tests/two_node_test.cpp).
enum class PeerFault {
    kill_agent,  // the agent's process for this adapter ends at once (SIGKILL)
    link_down,   // node B's link goes down for `millis` (0: stays down)
};
// Asks node B for the fault; false with `error` when the adapter is not split, has no peer
// connection yet, or B refused.
bool inject_fault(NDK_ADAPTER* adapter, PeerFault fault, uint32_t millis, std::string& error);
// The test is about to end node B some other way (its machine): the loss is not a finding.
void expect_peer_loss(NDK_ADAPTER* adapter);
// True once the side channel to node B has ended (for any reason, a fault test's included).
bool peer_lost(const NDK_ADAPTER* adapter);
// Why the peer connection ended or could not be made, or "" while it lives (or when a fault
// test ended it on purpose).
std::string peer_lost_reason(const NDK_ADAPTER* adapter);

}  // namespace ndkct::twonode
