// A test harness that drives the reference model directly: no provider, no dispatch tables.
//
// It owns a real arena (so bytes really move and can be looked at), a Model over it in either
// mode, and helpers that play the consumer's part: create objects, register memory, build
// mappings, connect two QPs through the model's own connection calls, and read CQs. Token
// values and logical addresses are chosen here (the model records what a provider reports).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ndkct/model/model.hpp"
#include "ndkct/model/translate.hpp"
#include "ndkct/platform/arena.hpp"
#include "ndkct/platform/mdl.hpp"
#include "ndkct/spec/profile.hpp"

namespace ndkct::model::test {

using platform::Arena;
using platform::LockedBuffer;
using platform::MdlChain;

// ---- Profiles ----
Readings default_readings();
// A profile given as JSON text (only the fields that differ from the schema defaults).
Readings readings_from(std::string_view profile_json);
// A profile with one policy changed: readings_with("unknown_flags", "reject").
Readings readings_with(std::string_view policy, std::string_view value);

HostMemoryView view_of(const Arena& arena);

// ---- Reading the oracle's answers ----
bool names(const RuleIds& rules, std::string_view rule);
// The expectation requires failure, and one listed failure has this status and names this rule.
bool fails_with(const Expectation& e, NTSTATUS status, std::string_view rule);
// Any listed failure names the rule.
bool failure_names(const Expectation& e, std::string_view rule);
// A violation (failure, not a warning) names the rule.
bool violation_names(const Verdict& v, std::string_view rule);
// A warning names the rule.
bool warning_names(const Verdict& v, std::string_view rule);
std::string describe(const Expectation& e);

SocketAddress ipv4(uint16_t port, uint8_t host = 1);
Observed status(NTSTATUS s);
Observed pending();

struct Region {
    ObjectId mr = 0;
    uint32_t local = 0, remote = 0;
    uint64_t va = 0;  // MmGetMdlVirtualAddress of the registration
};

struct Lam {
    ObjectId id = 0;
    std::vector<uint64_t> pages;  // logical addresses, one per page
    uint32_t fbo = 0;
};

// Two QPs on one PD, connected to each other, each with its own CQ.
// A CQ entry as a provider would report it (check mode feeds these to observe_completion).
inline NDK_RESULT_EX cq_entry(NTSTATUS status, Context qp_context, Context request,
                              NDK_OPERATION_TYPE type, uint32_t bytes = 0) {
    NDK_RESULT_EX r{};
    r.Status = status;
    r.BytesTransferred = bytes;
    r.QPContext = pointer_of(qp_context);
    r.RequestContext = pointer_of(request);
    r.Type = type;
    return r;
}

struct Pair {
    ObjectId pd = 0;
    ObjectId cq_a = 0, cq_b = 0;
    ObjectId qp_a = 0, qp_b = 0;
    Context ctx_a = 0xA000, ctx_b = 0xB000;
};

class Harness {
  public:
    explicit Harness(Mode mode = Mode::simulate, Readings readings = default_readings(),
                     size_t pages = 512);

    Arena arena;
    Model model;
    ObjectId adapter = 0;

    // Applies a call with the observed outcome and expects a clean verdict.
    Applied accept(const Call& call, const Observed& observed = {});
    // Applies a create with STATUS_SUCCESS and returns the new object.
    ObjectId create(const Call& call);

    ObjectId pd();
    ObjectId cq(uint32_t depth = 256);
    ObjectId mr(ObjectId pd, bool fast_register);
    calls::CreateQp qp_call(ObjectId pd, ObjectId receive_cq, ObjectId initiator_cq,
                            Context qp_context = 0x9000) const;
    ObjectId qp(ObjectId pd, ObjectId receive_cq, ObjectId initiator_cq,
                Context qp_context = 0x9000);

    uint32_t next_token() { return token_++; }
    uint32_t local_token(ObjectId mr);   // reports a fresh value
    uint32_t remote_token(ObjectId mr);  // reports a fresh value
    uint32_t privileged_token(ObjectId pd);

    // NdkRegisterMr over [offset, offset + length) of the buffer, then both tokens.
    Region register_mr(ObjectId pd, const LockedBuffer& buffer, size_t offset, size_t length,
                       uint32_t flags);
    // NdkBuildLam over [offset, offset + length) of the buffer, logical addresses chosen here
    // (scattered, in reverse PFN order, far from PFN * PAGE_SIZE).
    Lam build_lam(const LockedBuffer& buffer, size_t offset, size_t length);
    static uint64_t logical_of(PFN_NUMBER pfn) {
        return (uint64_t{1} << 42) - (pfn + 1) * PAGE_SIZE;
    }
    // A fast-register MR created and initialized inline.
    ObjectId fr_mr(ObjectId pd, uint32_t pages, bool remote_access);

    // Connects two QPs through CreateListener/Listen/CreateConnector/Connect/event/Accept/
    // CompleteConnect, both pending; events come from take_events() (simulate) or are reported
    // with observe_event() (check).
    void connect(ObjectId qp_a, ObjectId qp_b, uint16_t port);
    Pair connected_pair(uint32_t depth = 64);

    // Simulate: takes every entry off the CQ (as NdkGetCqResults would).
    std::vector<Completion> drain(ObjectId cq);

    std::byte* physical(PFN_NUMBER pfn) const { return arena.physical_page(pfn); }
    Mode mode() const { return model.mode(); }

  private:
    uint32_t token_ = 0x1000;
    uint32_t next_port_ = 0;
};

// Fills a buffer's bytes with a recognizable pattern.
void fill(std::span<std::byte> bytes, uint8_t seed);
std::vector<std::byte> pattern(size_t n, uint8_t seed);

}  // namespace ndkct::model::test
