// Work requests: which queue and CQ they use, their flags, fences, DEFER chains, SGE limits and
// inline data (WR-*, DEFER-*, SGE-*, RD-*, WRT-03, SND-03, SAI-*, INV-04, DISC-FLUSH-02).
#include <cstring>
#include <functional>
#include <thread>

#include "open_support.hpp"
#include "pair_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::address_of;
using seed::fill;
using seed::untouched;

NDKCT_SUITE(WorkRequests);

bool v12(Session& s) {
    return NDKCT_VERSION_AT_LEAST(s.version(), 1, 2);
}

// Posts one request for every combination of `flags`; post(f, index) posts it and returns how
// many CQ entries it owes. After each non-deferred request everything owed so far must complete
// successfully (a non-deferred request hands earlier deferred ones over: DEFER-07).
void every_combination(Session& s, NDK_CQ* cq, const std::vector<ULONG>& flags,
                       const std::vector<std::string>& rules,
                       const std::function<size_t(ULONG, size_t)>& post) {
    size_t owed = 0;
    // From all flags down to none: the last request is never deferred.
    for (size_t set = (size_t{1} << flags.size()); set-- > 0;) {
        ULONG f = 0;
        for (size_t k = 0; k < flags.size(); ++k)
            if (set & (size_t{1} << k)) f |= flags[k];
        owed += post(f, set);
        if (::testing::Test::HasFatalFailure()) return;
        if (f & NDK_OP_FLAG_DEFER) continue;
        // Every combination is accepted and completes (the operation's flag rule; DEFER-03).
        RuleScope scope(rules);
        auto results = s.drain(cq, owed);
        EXPECT_EQ(results.size(), owed) << "flags 0x" << std::hex << f;
        for (const auto& r : results)
            EXPECT_STATUS(STATUS_SUCCESS, r.Status) << "flags 0x" << std::hex << f;
        owed = 0;
    }
    auto extra = s.drain(cq, 1, milliseconds(30));
    NDKCT_RULE("WR-SILENT-01");
    EXPECT_EQ(extra.size(), 0u) << "an entry too many (a silent success made one?)";
}

size_t entries_for(ULONG f) {
    return (f & NDK_OP_FLAG_SILENT_SUCCESS) ? 0 : 1;
}

NDKCT_TEST(WorkRequests, WriteAcceptsItsFlags, "ndk.qp.write.flag_combinations", "WRT-03",
           "DEFER-01", "DEFER-03", "DEFER-07", "WRT-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    auto target = session().buffer(PAGE_SIZE);
    fill(source, 1);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto dst = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    std::vector<ULONG> flags = {NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_READ_FENCE};
    if (v12(session())) flags.push_back(NDK_OP_FLAG_DEFER);
    std::vector<int> contexts(8);
    every_combination(session(), pair.cq, flags, {"WRT-03", "DEFER-03"}, [&](ULONG f, size_t i) {
        NDK_SGE sge = Session::sge(source, i * 64, 64, src.local_token);
        EXPECT_STATUS(STATUS_SUCCESS,
                      session().write(pair.a, &contexts[i], {&sge, 1}, address_of(target, i * 64),
                                      dst.remote_token, f));
        return entries_for(f);
    });
    NDKCT_RULE("WRT-01");  // every write's bytes landed
    EXPECT_EQ(std::memcmp(target.data(), source.data(), 8 * 64), 0);
}

NDKCT_TEST(WorkRequests, ReadAcceptsItsFlags, "ndk.qp.read.flag_combinations", "RD-06", "DEFER-01",
           "DEFER-07", "RD-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto remote = session().buffer(PAGE_SIZE);
    fill(remote, 2);
    auto r = session().register_buffer(pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    std::vector<ULONG> flags = {NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_READ_FENCE};
    if (v12(session())) {
        flags.push_back(NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE);
        flags.push_back(NDK_OP_FLAG_DEFER);
    }
    // Each read has its own sink (a local invalidation ends the sink's token).
    std::vector<platform::LockedBuffer> sinks;
    std::vector<Registered> regs;
    for (size_t i = 0; i < (size_t{1} << flags.size()); ++i) {
        sinks.push_back(session().buffer(PAGE_SIZE));
        regs.push_back(session().register_buffer(
            pair.pd, sinks.back(), NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK));
    }
    std::vector<int> contexts(sinks.size());
    every_combination(session(), pair.cq, flags, {"RD-06", "DEFER-03"}, [&](ULONG f, size_t i) {
        NDK_SGE sge = Session::sge(sinks[i], 0, 128, regs[i].local_token);
        EXPECT_STATUS(STATUS_SUCCESS,
                      session().read(pair.a, &contexts[i], {&sge, 1}, address_of(remote, i * 16),
                                     r.remote_token, f | NDK_OP_FLAG_RDMA_READ_SINK));
        return entries_for(f);
    });
    NDKCT_RULE("RD-01");  // every read's bytes landed
    for (size_t i = 0; i < sinks.size(); ++i)
        EXPECT_EQ(std::memcmp(sinks[i].data(), remote.data() + i * 16, 128), 0) << "read " << i;
}

NDKCT_TEST(WorkRequests, SendAcceptsItsFlags, "ndk.qp.send.flag_combinations", "SND-03", "DEFER-01",
           "DEFER-07", "SND-01") {
    QpShape shape;
    shape.inline_size = 64;
    auto pair = session().loopback_pair(shape);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(64 * 32);
    fill(out, 3);
    auto o = session().register_buffer(pair.pd, out, 0);
    auto i_ = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    std::vector<ULONG> flags = {NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_READ_FENCE,
                                NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT, NDK_OP_FLAG_INLINE};
    if (v12(session())) flags.push_back(NDK_OP_FLAG_DEFER);
    std::vector<int> sends(32), receives(32);
    every_combination(session(), pair.cq, flags, {"SND-03", "DEFER-03"}, [&](ULONG f, size_t i) {
        NDK_SGE receive = Session::sge(in, i * 64, 64, i_.local_token);
        EXPECT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &receives[i], {&receive, 1}));
        NDK_SGE sge = Session::sge(out, i * 32, 32, o.local_token);
        EXPECT_STATUS(STATUS_SUCCESS, session().send(pair.a, &sends[i], {&sge, 1}, f))
            << "flags 0x" << std::hex << f;
        return entries_for(f) + 1;  // the receive always completes
    });
    NDKCT_RULE("SND-01");  // every send's bytes landed
    for (size_t i = 0; i < 32; ++i)
        EXPECT_EQ(std::memcmp(in.data() + i * 64, out.data() + i * 32, 32), 0) << "send " << i;
}

// A window bound on `qp` over a fresh page (its MR registered for local write).
struct Bound {
    platform::LockedBuffer page;
    Registered mr;
    NDK_MW* mw = nullptr;
    UINT32 token = 0;
};

Bound bound_window(Session& s, LoopbackPair& pair, NDK_QP* qp) {
    Bound b;
    b.page = s.buffer(PAGE_SIZE);
    b.mr = s.register_buffer(pair.pd, b.page, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    b.mw = s.create_mw(pair.pd).object;
    if (!b.mw) return b;
    static int context;
    EXPECT_STATUS(STATUS_SUCCESS, s.bind(qp, &context, b.mr.mr, b.mw, address_of(b.page), PAGE_SIZE,
                                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    b.token = s.remote_token(b.mw);
    auto results = s.drain(pair.cq, 1);
    EXPECT_TRUE(results.size() == 1 && results[0].Status == STATUS_SUCCESS) << "the bind";
    return b;
}

NDKCT_TEST(WorkRequests, SendAndInvalidateAcceptsItsFlags,
           "ndk.qp.send_invalidate.flag_combinations", "SAI-05", "DEFER-01", "DEFER-07", "SAI-01",
           "SND-01") {
    NDKCT_REQUIRE(v12(session()), "NDKPI 1.2 (NdkSendAndInvalidate)");
    QpShape shape;
    shape.inline_size = 64;
    auto pair = session().loopback_pair(shape);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(64 * 32);
    fill(out, 4);
    auto o = session().register_buffer(pair.pd, out, 0);
    auto i_ = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    std::vector<Bound> windows;
    for (int k = 0; k < 32; ++k)
        windows.push_back(bound_window(session(), pair, pair.b));
    std::vector<int> sends(32), receives(32);
    every_combination(
        session(), pair.cq,
        {NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_READ_FENCE, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT,
         NDK_OP_FLAG_INLINE, NDK_OP_FLAG_DEFER},
        {"SAI-05", "DEFER-03"}, [&](ULONG f, size_t i) {
            NDK_SGE receive = Session::sge(in, i * 64, 64, i_.local_token);
            EXPECT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &receives[i], {&receive, 1}));
            NDK_SGE sge = Session::sge(out, i * 32, 32, o.local_token);
            EXPECT_STATUS(STATUS_SUCCESS, session().send_and_invalidate(
                                              pair.a, &sends[i], {&sge, 1}, f, windows[i].token))
                << "flags 0x" << std::hex << f;
            return entries_for(f) + 1;
        });
    NDKCT_RULE("SAI-01", "SND-01");  // every send's bytes landed
    for (size_t i = 0; i < 32; ++i)
        EXPECT_EQ(std::memcmp(in.data() + i * 64, out.data() + i * 32, 32), 0) << "send " << i;
}

NDKCT_TEST(WorkRequests, InvalidateAcceptsItsFlags, "ndk.qp.invalidate.flag_combinations", "INV-04",
           "DEFER-01", "DEFER-07") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    std::vector<ULONG> flags = {NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_READ_FENCE};
    if (v12(session())) flags.push_back(NDK_OP_FLAG_DEFER);
    std::vector<Bound> windows;
    for (size_t k = 0; k < (size_t{1} << flags.size()); ++k)
        windows.push_back(bound_window(session(), pair, pair.a));
    std::vector<int> contexts(windows.size());
    every_combination(session(), pair.cq, flags, {"INV-04", "DEFER-03"}, [&](ULONG f, size_t i) {
        EXPECT_STATUS(STATUS_SUCCESS, session().invalidate(pair.a, &contexts[i], windows[i].mw, f));
        return entries_for(f);
    });
}

// RD-05: a read reaching past the end of the remote region fails with STATUS_REMOTE_RESOURCES
// (inline or as its completion, AMB-12), and nothing is read.
NDKCT_TEST(WorkRequests, ReadPastTheRemoteRegionFails, "ndk.qp.read.beyond_remote_region",
           "RD-05") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto remote = session().buffer(2 * PAGE_SIZE);
    auto sink = session().buffer(PAGE_SIZE);
    fill(remote, 5);
    auto r =
        session().register_buffer(pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ, 0, PAGE_SIZE);
    auto k = session().register_buffer(pair.pd, sink,
                                       NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    NDK_SGE sge = Session::sge(sink, 0, 512, k.local_token);
    int context;
    NTSTATUS posted =
        session().read(pair.a, &context, {&sge, 1}, address_of(remote, PAGE_SIZE - 256),
                       r.remote_token, NDK_OP_FLAG_RDMA_READ_SINK);
    NTSTATUS outcome = posted;
    if (posted == STATUS_SUCCESS) {
        auto results = session().drain(pair.cq, 1);
        ASSERT_EQ(results.size(), 1u);
        outcome = results[0].Status;
    }
    EXPECT_STATUS(STATUS_REMOTE_RESOURCES, outcome);
}

// RD-02, AI-FLAG-05: with RDMA_READ_LOCAL_INVALIDATE_SUPPORTED, a successful read posted with
// NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE has invalidated its first SGE's token: a later local
// use of the token fails. RD-07: without the flag the provider ignores it and the token stays
// valid.
void read_local_invalidate(Session& s, bool supported) {
    seed::Mappings mappings(s);
    auto pair = s.loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto remote = s.buffer(PAGE_SIZE);
    auto sink = s.buffer(PAGE_SIZE);
    auto target = s.buffer(PAGE_SIZE);
    fill(remote, 6);
    auto r = s.register_buffer(pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    auto t = s.register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    // The sink is fast-registered: invalidation applies to fast-register MRs.
    NDK_MR* fast = seed::fast_register_mr(s, pair.pd, 1, false);
    ASSERT_TRUE(fast);
    auto& m = mappings.add(sink);
    ASSERT_TRUE(m.ok());
    int registered, read_context, write_context;
    ASSERT_STATUS(STATUS_SUCCESS,
                  s.fast_register(pair.a, &registered, fast, m.pages, 0, PAGE_SIZE, seed::kFarBase,
                                  NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK));
    UINT32 token = s.local_token(fast);
    NDK_SGE sge = seed::sge_at(seed::kFarBase, 256, token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  s.read(pair.a, &read_context, {&sge, 1}, address_of(remote), r.remote_token,
                         NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE | NDK_OP_FLAG_RDMA_READ_SINK));
    NDKCT_RULE("RD-01", "RD-06");  // the read with the flag works as a read
    auto results = seed::settle(s, pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& each : results)
        EXPECT_STATUS(STATUS_SUCCESS, each.Status);
    EXPECT_EQ(std::memcmp(sink.data(), remote.data(), 256), 0);
    // Now the token as a write's source.
    NTSTATUS posted =
        s.write(pair.a, &write_context, {&sge, 1}, address_of(target), t.remote_token);
    NTSTATUS outcome = posted;
    if (posted == STATUS_SUCCESS) {
        results = s.drain(pair.cq, 1);
        ASSERT_EQ(results.size(), 1u);
        outcome = results[0].Status;
    }
    if (supported) {
        EXPECT_TRUE(NT_ERROR(outcome)) << "RD-02: the sink's token was used after the read "
                                          "invalidated it: "
                                       << spec::status_name(outcome);
        EXPECT_TRUE(untouched(target, 0, 256));
    } else {
        EXPECT_STATUS(STATUS_SUCCESS, outcome) << "RD-07: the flag must be ignored";
        EXPECT_EQ(std::memcmp(target.data(), remote.data(), 256), 0);
    }
}

NDKCT_TEST(WorkRequests, ReadLocalInvalidateEndsTheSinkToken, "ndk.qp.read.local_invalidate",
           "RD-02", "AI-FLAG-05") {
    NDKCT_REQUIRE(v12(session()), "NDKPI 1.2");
    NDKCT_REQUIRE(has_flag(NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED),
                  "RDMA_READ_LOCAL_INVALIDATE_SUPPORTED");
    read_local_invalidate(session(), true);
}

NDKCT_TEST(WorkRequests, ReadLocalInvalidateIgnoredWithoutTheFlag,
           "ndk.qp.read.local_invalidate_unsupported", "RD-07") {
    NDKCT_REQUIRE(v12(session()), "NDKPI 1.2");
    std::unique_ptr<Session> holder;
    Session* s = open::session_with_flag(session(), holder, GetParam(),
                                         NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED,
                                         "RDMA_READ_LOCAL_INVALIDATE_SUPPORTED", false);
    NDKCT_REQUIRE(s, "an adapter without RDMA_READ_LOCAL_INVALIDATE_SUPPORTED");
    read_local_invalidate(*s, false);
    if (holder) seed::finish(*holder);
}

// WR-FENCE-01: a fenced request starts only after every earlier read completed. A read brings
// remote bytes into a local buffer and a fenced write sends that buffer on: the write must carry
// the bytes the read brought, never the buffer's old content.
NDKCT_TEST(WorkRequests, ReadFenceWaitsForEarlierReads, "ndk.qp.read_fence.waits", "WR-FENCE-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    constexpr ULONG kBytes = 256 * 1024;  // long enough for an unfenced write to overtake
    auto remote = session().buffer(kBytes);
    auto staging = session().buffer(kBytes);
    auto target = session().buffer(kBytes);
    fill(remote, 71);
    auto r = session().register_buffer(pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    auto st = session().register_buffer(pair.pd, staging,
                                        NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    auto t = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    NDK_SGE sge = Session::sge(staging, 0, kBytes, st.local_token);
    int read_context, write_context;
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().read(pair.a, &read_context, {&sge, 1}, address_of(remote),
                                 r.remote_token, NDK_OP_FLAG_RDMA_READ_SINK));
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &write_context, {&sge, 1}, address_of(target),
                                  t.remote_token, NDK_OP_FLAG_READ_FENCE));
    auto results = seed::settle(session(), pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& each : results)
        EXPECT_STATUS(STATUS_SUCCESS, each.Status);
    EXPECT_EQ(std::memcmp(target.data(), remote.data(), kBytes), 0)
        << "the fenced write carried bytes from before the read completed";
}

// DEFER-03: a deferred request refused inline gets no entry; the chain's others complete once a
// non-deferred request hands them over (DEFER-07).
NDKCT_TEST(WorkRequests, DeferredChainCompletesOnce, "ndk.qp.defer.chain", "DEFER-03", "DEFER-07",
           "DEFER-01") {
    NDKCT_REQUIRE(v12(session()), "NDKPI 1.2 (NDK_OP_FLAG_DEFER)");
    QpShape shape;
    shape.initiator_sge = 2;
    auto pair = session().loopback_pair(shape);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    auto target = session().buffer(PAGE_SIZE);
    fill(source, 9);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto dst = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    int first, refused, second, last;
    NDK_SGE one = Session::sge(source, 0, 100, src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &first, {&one, 1}, address_of(target),
                                                  dst.remote_token, NDK_OP_FLAG_DEFER));
    NDK_SGE three[3] = {one, one, one};  // more SGEs than the QP's 2: refused inline
    NTSTATUS over = session().write(pair.a, &refused, three, address_of(target, 1000),
                                    dst.remote_token, NDK_OP_FLAG_DEFER);
    NDK_SGE two = Session::sge(source, 100, 100, src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &second, {&two, 1}, address_of(target, 100),
                                  dst.remote_token, NDK_OP_FLAG_DEFER));
    NDK_SGE end = Session::sge(source, 200, 100, src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &last, {&end, 1}, address_of(target, 200),
                                                  dst.remote_token));
    NDKCT_RULE("DEFER-03", "DEFER-07", "DEFER-01");  // what the rest of the test checks
    size_t expected = NT_ERROR(over) ? 3 : 4;
    auto results = seed::settle(session(), pair.cq, expected);
    EXPECT_EQ(results.size(), expected);
    EXPECT_TRUE(seed::find_result(results, &first) && seed::find_result(results, &second) &&
                seed::find_result(results, &last));
    if (NT_ERROR(over)) {
        EXPECT_FALSE(seed::find_result(results, &refused)) << "a refused request made an entry";
    }
    EXPECT_EQ(std::memcmp(target.data(), source.data(), 300), 0);
}

// SGE-04, SGE-13: a write with exactly the QP's MaxInitiatorRequestSge SGEs, each a different
// piece; the provider reads the SGE array in the documented layout (address, length, token).
NDKCT_TEST(WorkRequests, InitiatorSgeLimitIsUsable, "ndk.qp.sge.initiator_limit", "SGE-04",
           "SGE-13") {
    QpShape shape;
    shape.initiator_sge = std::min<ULONG>(info().MaxInitiatorRequestSge, 32);
    NDKCT_REQUIRE(shape.initiator_sge > 1, "MaxInitiatorRequestSge above 1");
    auto pair = session().loopback_pair(shape);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(shape.initiator_sge * PAGE_SIZE);
    auto target = session().buffer(PAGE_SIZE * 2);
    fill(source, 13);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto dst = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    std::vector<NDK_SGE> sgl;
    size_t total = 0;
    for (ULONG k = 0; k < shape.initiator_sge; ++k) {
        ULONG length = 7 + k * 3;
        sgl.push_back(Session::sge(source, k * PAGE_SIZE + k, length, src.local_token));
        total += length;
    }
    int context;
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &context, sgl, address_of(target), dst.remote_token));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    NDKCT_RULE("SGE-04", "SGE-13");  // what the rest of the test checks
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    size_t at = 0;
    for (ULONG k = 0; k < shape.initiator_sge; ++k) {
        EXPECT_EQ(std::memcmp(target.data() + at, source.data() + k * PAGE_SIZE + k, 7 + k * 3), 0)
            << "SGE " << k;
        at += 7 + k * 3;
    }
    EXPECT_TRUE(untouched(target, total, 2 * PAGE_SIZE - total));
}

// SGE-10: a receive with the QP's and the SRQ's MaxReceiveRequestSge SGEs; the message is
// scattered over all of them.
NDKCT_TEST(WorkRequests, ReceiveSgeLimitIsUsable, "ndk.qp.sge.receive_limit", "SGE-10") {
    const ULONG n = std::min<ULONG>(info().MaxReceiveRequestSge, 32);
    NDKCT_REQUIRE(n > 1, "MaxReceiveRequestSge above 1");
    for (bool srq : {false, true}) {
        SCOPED_TRACE(srq ? "NdkSrqReceive" : "NdkReceive");
        pairs::PairSpec spec;
        spec.shape.receive_sge = n;
        spec.pd = session().create_pd().object;
        ASSERT_TRUE(spec.pd);
        NDK_SRQ* q = nullptr;
        if (srq) {
            q = session().create_srq(spec.pd, 16, n).object;
            ASSERT_TRUE(q);
            spec.b_srq = q;
        }
        auto pair = pairs::connect(session(), spec);
        ASSERT_TRUE(pair.connected) << pair.problem;
        auto out = session().buffer(PAGE_SIZE);
        auto in = session().buffer(n * 64);
        fill(out, 14);
        auto o = session().register_buffer(pair.pd, out, 0);
        auto i_ = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        std::vector<NDK_SGE> sgl;
        for (ULONG k = 0; k < n; ++k)
            sgl.push_back(Session::sge(in, k * 64, 16, i_.local_token));
        int rc, sc;
        ASSERT_STATUS(STATUS_SUCCESS, srq ? session().srq_receive(q, &rc, sgl)
                                          : session().receive(pair.b, &rc, sgl));
        NDK_SGE send = Session::sge(out, 0, n * 16, o.local_token);
        ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &sc, {&send, 1}));
        auto results = seed::settle(session(), pair.cq, 2);
        ASSERT_EQ(results.size(), 2u);
        for (const auto& each : results)
            EXPECT_STATUS(STATUS_SUCCESS, each.Status);
        for (ULONG k = 0; k < n; ++k)
            EXPECT_EQ(std::memcmp(in.data() + k * 64, out.data() + k * 16, 16), 0) << "SGE " << k;
    }
}

// SGE-11: a read with MaxReadRequestSge SGEs is accepted (the limit for reads).
NDKCT_TEST(WorkRequests, ReadSgeLimitIsUsable, "ndk.qp.sge.read_limit", "SGE-11") {
    const ULONG n = std::min<ULONG>(info().MaxReadRequestSge, 32);
    NDKCT_REQUIRE(n > 1, "MaxReadRequestSge above 1");
    QpShape shape;
    shape.initiator_sge = std::min<ULONG>(info().MaxInitiatorRequestSge, 32);
    auto pair = session().loopback_pair(shape);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto remote = session().buffer(PAGE_SIZE);
    auto sink = session().buffer(n * 64);
    fill(remote, 15);
    auto r = session().register_buffer(pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    auto k_ = session().register_buffer(pair.pd, sink,
                                        NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    std::vector<NDK_SGE> sgl;
    for (ULONG k = 0; k < n; ++k)
        sgl.push_back(Session::sge(sink, k * 64, 16, k_.local_token));
    int context;
    ASSERT_STATUS(STATUS_SUCCESS, session().read(pair.a, &context, sgl, address_of(remote),
                                                 r.remote_token, NDK_OP_FLAG_RDMA_READ_SINK));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    for (ULONG k = 0; k < n; ++k)
        EXPECT_EQ(std::memcmp(sink.data() + k * 64, remote.data() + k * 16, 16), 0) << "SGE " << k;
}

// SGE-06, SGE-08, SGE-09: an inline send of exactly the QP's InlineDataSize, spread over more
// SGEs than MaxInitiatorRequestSge; its buffer is overwritten as soon as the call returned, and
// the peer still receives the bytes as they were.
NDKCT_TEST(WorkRequests, InlineDataIsTakenAtPosting, "ndk.qp.inline.taken_at_post", "SGE-06",
           "SGE-08", "SGE-09") {
    const ULONG size = std::min<ULONG>(info().MaxInlineDataSize, 1024);
    NDKCT_REQUIRE(size >= 4, "MaxInlineDataSize of at least 4 bytes");
    QpShape shape;
    shape.inline_size = size;
    shape.initiator_sge = 1;
    auto pair = session().loopback_pair(shape);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(PAGE_SIZE);
    fill(out, 16);
    std::vector<std::byte> sent(out.data(), out.data() + size);
    auto i_ = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE receive = Session::sge(in, 0, PAGE_SIZE, i_.local_token);
    int rc, sc;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &rc, {&receive, 1}));
    // Four SGEs (the QP takes 1 without INLINE); the token of inline SGEs is ignored.
    const ULONG quarter = size / 4;
    std::vector<NDK_SGE> sgl;
    for (ULONG k = 0; k < 4; ++k)
        sgl.push_back(Session::sge(out, k * quarter, k == 3 ? size - 3 * quarter : quarter, 0));
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &sc, sgl, NDK_OP_FLAG_INLINE));
    std::memset(out.data(), 0xEE, size);  // SGE-06: the consumer may reuse it at once
    auto results = seed::settle(session(), pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& each : results)
        EXPECT_STATUS(STATUS_SUCCESS, each.Status);
    const NDK_RESULT_EX* r = seed::find_result(results, &rc);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->BytesTransferred, size);
    EXPECT_EQ(std::memcmp(in.data(), sent.data(), size), 0)
        << "the peer received bytes changed after the send returned";
}

// SGE-12: a write of exactly MaxTransferLength bytes is accepted. The reference provider is
// given a 1 MiB limit (another provider is tested at its own limit when it is at most 16 MiB).
NDKCT_TEST(WorkRequests, MaxTransferLengthIsUsable, "ndk.qp.sge.max_transfer_length", "SGE-12") {
    std::unique_ptr<Session> holder;
    Session* s = &session();
    if (info().MaxTransferLength > (16u << 20)) {
        holder = seed::session_with(
            GetParam(), {{"\"MaxTransferLength\": [0-9]+", "\"MaxTransferLength\": 1048576"}});
        ASSERT_TRUE(holder);
        s = holder.get();
    }
    const ULONG length = s->info().MaxTransferLength;
    NDKCT_REQUIRE(length <= (16u << 20), "MaxTransferLength of at most 16 MiB");
    {
        auto pair = s->loopback_pair();
        ASSERT_TRUE(pair.connected) << pair.problem;
        auto source = s->buffer(length);
        auto target = s->buffer(length);
        fill(source, 17);
        auto src = s->register_buffer(pair.pd, source, 0);
        auto dst = s->register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        NDK_SGE sgl[2] = {Session::sge(source, 0, length / 2, src.local_token),
                          Session::sge(source, length / 2, length - length / 2, src.local_token)};
        int context;
        ASSERT_STATUS(STATUS_SUCCESS,
                      s->write(pair.a, &context, sgl, address_of(target), dst.remote_token));
        auto results = s->drain(pair.cq, 1);
        ASSERT_EQ(results.size(), 1u);
        EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
        EXPECT_EQ(std::memcmp(target.data(), source.data(), length), 0);
    }
    if (holder) seed::finish(*holder);
}

// WR-01, WR-06: initiator requests complete on the initiator CQ, receives on the receive CQ.
NDKCT_TEST(WorkRequests, EachQueueCompletesOnItsCq, "ndk.qp.queues.own_cqs", "WR-01", "WR-06") {
    auto a_receive = session().create_cq(64).object;
    auto a_initiator = session().create_cq(64).object;
    auto b_receive = session().create_cq(64).object;
    auto b_initiator = session().create_cq(64).object;
    ASSERT_TRUE(a_receive && a_initiator && b_receive && b_initiator);
    pairs::PairSpec spec;
    spec.a_receive_cq = a_receive;
    spec.a_initiator_cq = a_initiator;
    spec.b_receive_cq = b_receive;
    spec.b_initiator_cq = b_initiator;
    auto pair = pairs::connect(session(), spec);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto buffer = session().buffer(4 * PAGE_SIZE);
    fill(buffer, 18);
    auto local = session().register_buffer(
        pair.pd, buffer, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK, 0,
        2 * PAGE_SIZE);
    auto remote = session().register_buffer(
        pair.pd, buffer, NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ,
        2 * PAGE_SIZE, 2 * PAGE_SIZE);
    auto inbox = session().buffer(PAGE_SIZE);
    auto in = session().register_buffer(pair.pd, inbox, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto mw = session().create_mw(pair.pd).object;
    ASSERT_TRUE(mw);
    int rb, s1, w1, r1, b1, i1;
    NDK_SGE receive = Session::sge(inbox, 0, PAGE_SIZE, in.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &rb, {&receive, 1}));
    NDK_SGE piece = Session::sge(buffer, 0, 128, local.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &s1, {&piece, 1}));
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &w1, {&piece, 1}, address_of(buffer, 2 * PAGE_SIZE),
                                  remote.remote_token));
    NDK_SGE sink = Session::sge(buffer, PAGE_SIZE, 128, local.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().read(pair.a, &r1, {&sink, 1}, address_of(buffer, 3 * PAGE_SIZE),
                                 remote.remote_token, NDK_OP_FLAG_RDMA_READ_SINK));
    ASSERT_STATUS(STATUS_SUCCESS, session().bind(pair.a, &b1, local.mr, mw, address_of(buffer),
                                                 PAGE_SIZE, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    ASSERT_STATUS(STATUS_SUCCESS, session().invalidate(pair.a, &i1, mw));
    auto initiator = seed::settle(session(), a_initiator, 5);
    EXPECT_EQ(initiator.size(), 5u) << "the initiator CQ";
    for (int* c : {&s1, &w1, &r1, &b1, &i1})
        EXPECT_TRUE(seed::find_result(initiator, c)) << "an initiator request missing there";
    auto received = seed::settle(session(), b_receive, 1);
    ASSERT_EQ(received.size(), 1u) << "the receive CQ of b";
    EXPECT_EQ(received[0].RequestContext, &rb);
    EXPECT_TRUE(session().drain(a_receive, 1, milliseconds(30)).empty())
        << "an entry on a's receive CQ";
    EXPECT_TRUE(session().drain(b_initiator, 1, milliseconds(30)).empty())
        << "an entry on b's initiator CQ";
}

// WR-06 with an SRQ: each SRQ receive completes on the receive CQ of the QP whose message
// consumed it.
NDKCT_TEST(WorkRequests, SrqReceiveCompletesOnTheConsumingQpsCq, "ndk.srq.receive.consumer_cq",
           "WR-06") {
    auto pd = session().create_pd().object;
    ASSERT_TRUE(pd);
    auto srq = session().create_srq(pd, 16, 1).object;
    ASSERT_TRUE(srq);
    auto cq1 = session().create_cq(64).object;
    auto cq2 = session().create_cq(64).object;
    ASSERT_TRUE(cq1 && cq2);
    pairs::PairSpec one, two;
    one.pd = two.pd = pd;
    one.b_srq = two.b_srq = srq;
    one.b_receive_cq = cq1;
    two.b_receive_cq = cq2;
    auto p1 = pairs::connect(session(), one);
    auto p2 = pairs::connect(session(), two);
    ASSERT_TRUE(p1.connected && p2.connected) << p1.problem << p2.problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(PAGE_SIZE);
    fill(out, 19);
    auto o = session().register_buffer(pd, out, 0);
    auto i_ = session().register_buffer(pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    int r1, r2, s1, s2;
    NDK_SGE first = Session::sge(in, 0, 512, i_.local_token);
    NDK_SGE second = Session::sge(in, 512, 512, i_.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().srq_receive(srq, &r1, {&first, 1}));
    ASSERT_STATUS(STATUS_SUCCESS, session().srq_receive(srq, &r2, {&second, 1}));
    NDK_SGE send = Session::sge(out, 0, 100, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(p2.a, &s2, {&send, 1}));
    auto on2 = seed::settle(session(), cq2, 1);
    ASSERT_EQ(on2.size(), 1u) << "the receive consumed by the second pair's QP";
    ASSERT_STATUS(STATUS_SUCCESS, session().send(p1.a, &s1, {&send, 1}));
    auto on1 = seed::settle(session(), cq1, 1);
    ASSERT_EQ(on1.size(), 1u) << "the receive consumed by the first pair's QP";
    EXPECT_TRUE(session().drain(cq2, 1, milliseconds(30)).empty());
    auto sends = seed::settle(session(), p1.cq, 1);
    auto sends2 = seed::settle(session(), p2.cq, 1);
    EXPECT_EQ(sends.size() + sends2.size(), 2u);
}

// SAI-04: NdkSendAndInvalidate on a QP that is not connected returns STATUS_CONNECTION_INVALID.
NDKCT_TEST(WorkRequests, SendAndInvalidateNeedsAConnection, "ndk.qp.send_invalidate.not_connected",
           "SAI-04") {
    NDKCT_REQUIRE(v12(session()), "NDKPI 1.2 (NdkSendAndInvalidate)");
    auto pd = session().create_pd().object;
    auto cq = session().create_cq(16).object;
    ASSERT_TRUE(pd && cq);
    auto qp = session().create_qp(pd, cq, cq, nullptr, QpShape{}).object;
    ASSERT_TRUE(qp);
    auto out = session().buffer(PAGE_SIZE);
    auto o = session().register_buffer(pd, out, 0);
    NDK_SGE sge = Session::sge(out, 0, 16, o.local_token);
    int context;
    EXPECT_STATUS(STATUS_CONNECTION_INVALID,
                  session().send_and_invalidate(qp, &context, {&sge, 1}, 0, 0x1234));
}

// SAI-02: an incoming send-and-invalidate naming a token that is not valid aborts the
// connection: after it, nothing more gets through.
NDKCT_TEST(WorkRequests, SendAndInvalidateOfABadTokenAborts, "ndk.qp.send_invalidate.bad_token",
           "SAI-02") {
    NDKCT_REQUIRE(v12(session()), "NDKPI 1.2 (NdkSendAndInvalidate)");
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(PAGE_SIZE);
    auto target = session().buffer(PAGE_SIZE);
    fill(out, 20);
    auto o = session().register_buffer(pair.pd, out, 0);
    auto i_ = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto t = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    // A token no object of the peer has: a valid one with its low bits changed until unused.
    UINT32 bad = t.remote_token ^ 0x5A5A5A00u;
    for (UINT32 candidate : {t.remote_token ^ 0x5A5A5A00u, t.remote_token + 0x100u})
        if (candidate != t.remote_token && candidate != o.local_token &&
            candidate != i_.local_token && candidate != t.local_token)
            bad = candidate;
    int rc, sc, wc;
    NDK_SGE receive = Session::sge(in, 0, PAGE_SIZE, i_.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &rc, {&receive, 1}));
    NDK_SGE send = Session::sge(out, 0, 64, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send_and_invalidate(pair.a, &sc, {&send, 1}, 0, bad));
    auto first = seed::settle(session(), pair.cq, 2);
    // Then a write on the same connection: the connection was aborted, so it must not land.
    NDK_SGE piece = Session::sge(out, 0, 64, o.local_token);
    NTSTATUS posted = session().write(pair.a, &wc, {&piece, 1}, address_of(target), t.remote_token);
    if (NT_SUCCESS(posted)) {
        auto later = session().drain(pair.cq, 1);
        ASSERT_EQ(later.size(), 1u) << "the write after the abort did not complete";
        EXPECT_TRUE(NT_ERROR(later[0].Status))
            << "the connection carried a write after the bad invalidation: "
            << spec::status_name(later[0].Status);
    }
    EXPECT_TRUE(untouched(target, 0, PAGE_SIZE)) << "a write landed after the abort";
}

// DISC-FLUSH-02: when the peer disconnects, reporting the disconnect does not by itself flush
// the QP's outstanding receives; they are flushed when this side flushes (or disconnects).
NDKCT_TEST(WorkRequests, PeerDisconnectDoesNotFlushByItself, "ndk.qp.disconnect.peer_no_flush",
           "DISC-FLUSH-02") {
    auto a_cq = session().create_cq(64).object;
    auto b_cq = session().create_cq(64).object;
    ASSERT_TRUE(a_cq && b_cq);
    pairs::PairSpec spec;
    spec.a_receive_cq = spec.a_initiator_cq = a_cq;
    spec.b_receive_cq = spec.b_initiator_cq = b_cq;
    auto pair = pairs::connect(session(), spec);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto in = session().buffer(PAGE_SIZE);
    auto i_ = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    int r1, r2;
    NDK_SGE receive = Session::sge(in, 0, 256, i_.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &r1, {&receive, 1}));
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &r2, {&receive, 1}));
    Done d = session().disconnect(pair.active);
    EXPECT_TRUE(d.ok()) << spec::status_name(d.final_status);
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(milliseconds(5000));
    while (session().disconnect_events(pair.passive) == 0 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(milliseconds(2));
    ASSERT_EQ(session().disconnect_events(pair.passive), 1u) << "b heard of the disconnect";
    auto early = session().drain(b_cq, 1, milliseconds(100));
    EXPECT_TRUE(early.empty()) << "b's receives were flushed because the peer disconnected";
    session().flush(pair.b);
    auto flushed = seed::settle(session(), b_cq, 2 - early.size());
    EXPECT_EQ(flushed.size() + early.size(), 2u);
    for (const auto& each : flushed)
        EXPECT_STATUS(STATUS_CANCELLED, each.Status);
}

}  // namespace
}  // namespace ndkct::conformance
