// Rules and fixes across the model: requests refused or accepted against the verdict (WR-05),
// a refused re-initialization (AMB-10), DEFER-held memory requests flushed before they run
// (FR-TOK-01, DEFER-03), binds over MaxWindowSize (MODEL-BND-01), reads beyond the
// OutboundReadLimit (MODEL-RD-01), READ_FENCE in check mode (WR-FENCE-01), opening an adapter
// (VER-02/04/05) and the adapter information (VER-06/09, AI-11).
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

constexpr uint64_t kBase = 0x200000;

// ---- WR-05: a valid request refused inline is still remembered ----

class CheckPair : public ::testing::Test {
  protected:
    Harness h{Mode::check};
    Pair p = h.connected_pair();
    LockedBuffer a_buf = h.arena.allocate(PAGE_SIZE), b_buf = h.arena.allocate(PAGE_SIZE);
    Region a = h.register_mr(p.pd, a_buf, 0, PAGE_SIZE, 0);
    Region b = h.register_mr(p.pd, b_buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    calls::Write write(Context ctx, uint32_t flags = 0) {
        return {p.qp_a, ctx, {{a.va, 64, a.local}}, b.va, b.remote, flags, {}};
    }
};

TEST_F(CheckPair, ValidRequestRefusedInlineLeavesNoEntry) {
    Verdict refused = h.model.apply(write(0x51), status(STATUS_INVALID_PARAMETER)).verdict;
    EXPECT_TRUE(violation_names(refused, "WRT-01"))
        << refused.describe();  // a valid call must succeed
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x51, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "WR-05")) << v.describe();
    EXPECT_FALSE(violation_names(v, "CQ-GET-04"));
}

TEST_F(CheckPair, RequestAcceptedAgainstTheVerdictIsNotJudgedTwice) {
    // 65 SGEs where the QP allows 4 (SGE-04): must fail; accepted, it is reported once.
    calls::Write w = write(0x52);
    w.sgl.assign(65, w.sgl[0]);
    w.sgl[0].length = 1;
    Verdict accepted = h.model.apply(w, status(STATUS_SUCCESS)).verdict;
    EXPECT_FALSE(accepted.clean());
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x52, NdkOperationTypeWrite), true);
    EXPECT_TRUE(v.clean()) << v.describe();
}

// CQ-RES-02: the right request with the wrong QPContext.
TEST_F(CheckPair, WrongQpContextIsNamed) {
    h.accept(write(0x53));
    std::memcpy(b_buf.data(), a_buf.data(), 64);
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, 0xDEAD, 0x53, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "CQ-RES-02")) << v.describe();
    EXPECT_TRUE(h.model.expect_nothing_outstanding(p.qp_a).clean());  // consumed with it
}

// ---- WR-FENCE-01 in check mode ----

class ReadFence : public CheckPair {
  protected:
    LockedBuffer sink_buf = h.arena.allocate(PAGE_SIZE), src_buf = h.arena.allocate(PAGE_SIZE);
    Region sink = h.register_mr(p.pd, sink_buf, 0, PAGE_SIZE,
                                NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    Region src = h.register_mr(p.pd, src_buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ);

    void post_pair(Context read_ctx, Context write_ctx, uint32_t write_flags) {
        h.accept(
            calls::Read{p.qp_a, read_ctx, {{sink.va, 256, sink.local}}, src.va, src.remote, 0});
        h.accept(calls::Write{
            p.qp_a, write_ctx, {{sink.va, 256, sink.local}}, b.va, b.remote, write_flags, {}});
    }
    Verdict seen(Context read_ctx, Context write_ctx) {
        Verdict v = h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, read_ctx, NdkOperationTypeRead), true);
        v.merge(h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, write_ctx, NdkOperationTypeWrite), true));
        return v;
    }
};

// A fenced write starts after the read before it: it carries the bytes the read placed.
TEST_F(ReadFence, FencedWriteCarriesTheReadsBytes) {
    fill(src_buf.bytes(), 1);
    fill(sink_buf.bytes(), 2);  // stale when the requests are posted
    post_pair(1, 2, NDK_OP_FLAG_READ_FENCE);
    std::memcpy(sink_buf.data(), src_buf.data(), 256);  // the read lands
    std::memcpy(b_buf.data(), sink_buf.data(), 256);    // then the fenced write runs
    Verdict right = seen(1, 2);
    EXPECT_TRUE(right.clean()) << right.describe();

    fill(sink_buf.bytes(), 3);
    post_pair(3, 4, NDK_OP_FLAG_READ_FENCE);
    std::memcpy(b_buf.data(), sink_buf.data(), 256);  // the write ran first: stale bytes
    std::memcpy(sink_buf.data(), src_buf.data(), 256);
    EXPECT_TRUE(violation_names(seen(3, 4), "WRT-01"));
}

// Without the fence the order is open: either bytes are right.
TEST_F(ReadFence, UnfencedWriteMayCarryEither) {
    fill(src_buf.bytes(), 4);
    fill(sink_buf.bytes(), 5);
    post_pair(5, 6, 0);
    std::memcpy(b_buf.data(), sink_buf.data(), 256);
    std::memcpy(sink_buf.data(), src_buf.data(), 256);
    Verdict v = seen(5, 6);
    EXPECT_TRUE(v.clean()) << v.describe();
}

// ---- AMB-10: a refused re-initialization leaves the previous one in force ----

TEST(Reinitialize, FailingAfterPendingKeepsThePreviousInitialization) {
    Harness h;
    ObjectId pd = h.pd();
    ObjectId mr = h.fr_mr(pd, 4, true);
    // A valid re-initialization (allow_when_unregistered) that pends and then fails.
    Applied a = h.accept(calls::InitializeFastRegisterMr{mr, 8, false}, pending());
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_INSUFFICIENT_RESOURCES).verdict.clean());
    const MrState* s = h.model.state_of<MrState>(mr);
    EXPECT_EQ(s->phase, MrState::Phase::initialized);
    EXPECT_EQ(s->max_pages, 4u);
    EXPECT_TRUE(s->remote_access);

    Harness r(Mode::simulate, readings_with("fr_mr_reinitialize", "reject"));
    ObjectId pd2 = r.pd();
    ObjectId mr2 = r.fr_mr(pd2, 4, true);
    // Refused inline and refused through the callback: the same state either way.
    r.accept(calls::InitializeFastRegisterMr{mr2, 8, false}, status(STATUS_INVALID_DEVICE_STATE));
    EXPECT_EQ(r.model.state_of<MrState>(mr2)->phase, MrState::Phase::initialized);
    // (AMB-10 reads the call as refused; the docs do not say, so while it pends it may still
    // take effect.)
    Applied b = r.accept(calls::InitializeFastRegisterMr{mr2, 8, false}, pending());
    EXPECT_TRUE(r.model.complete(b.pending, STATUS_INVALID_DEVICE_STATE).verdict.clean());
    EXPECT_EQ(r.model.state_of<MrState>(mr2)->phase, MrState::Phase::initialized);
    EXPECT_EQ(r.model.state_of<MrState>(mr2)->max_pages, 4u);
}

// ---- DEFER-held memory requests flushed before they run change nothing ----

class Deferred : public ::testing::Test {
  protected:
    Harness h;  // reference_provider.defer_doorbell = hold
    Pair p = h.connected_pair();
    LockedBuffer buffer = h.arena.allocate(2 * PAGE_SIZE);
    Lam lam = h.build_lam(buffer, 0, 2 * PAGE_SIZE);
    ObjectId fr = h.fr_mr(p.pd, 2, true);
    LockedBuffer plain = h.arena.allocate(PAGE_SIZE);
    Region reg = h.register_mr(p.pd, plain, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ObjectId mw = h.create(calls::CreateMw{p.pd});

    calls::FastRegister fast_register(Context ctx, uint32_t flags) {
        return {p.qp_a, ctx, fr, lam.pages, 0, 2 * PAGE_SIZE, kBase, flags};
    }
    size_t cancelled(ObjectId cq) {
        size_t n = 0;
        for (const Completion& c : h.drain(cq))
            n += c.outcome == Completion::Outcome::cancelled;
        return n;
    }
};

TEST_F(Deferred, FastRegisterFlushedBeforeItRunsRegistersNothing) {
    h.accept(fast_register(1, NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_DEFER));
    EXPECT_EQ(h.model.state_of<MrState>(fr)->phase, MrState::Phase::fast_registered);  // FR-TOK-01
    uint32_t token = h.remote_token(fr);
    h.accept(calls::Flush{p.qp_a});
    EXPECT_EQ(cancelled(p.cq_a), 1u);
    EXPECT_EQ(h.model.state_of<MrState>(fr)->phase, MrState::Phase::initialized);
    EXPECT_EQ(h.model.object_of_token(h.adapter, token, true), 0u);  // the token reaches nothing
}

TEST_F(Deferred, BindFlushedBeforeItRunsBindsNothing) {
    h.accept(calls::Bind{p.qp_a, 1, reg.mr, mw, reg.va, 64,
                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_DEFER});
    EXPECT_TRUE(h.model.state_of<MwState>(mw)->bound);
    EXPECT_TRUE(h.model.expect(calls::CloseObject{reg.mr}).must_pend);  // LIFE-TREE-04
    h.accept(calls::Flush{p.qp_a});
    EXPECT_EQ(cancelled(p.cq_a), 1u);
    EXPECT_FALSE(h.model.state_of<MwState>(mw)->bound);
    EXPECT_TRUE(h.model.state_of<MrState>(reg.mr)->bound_windows.empty());
    EXPECT_FALSE(h.model.expect(calls::CloseObject{reg.mr}).must_pend);  // the edge is undone
}

TEST_F(Deferred, InvalidateFlushedBeforeItRunsInvalidatesNothing) {
    h.accept(fast_register(1, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    h.drain(p.cq_a);
    h.accept(calls::Invalidate{p.qp_a, 2, fr, NDK_OP_FLAG_DEFER});
    h.accept(calls::Flush{p.qp_a});
    EXPECT_EQ(cancelled(p.cq_a), 1u);
    EXPECT_EQ(h.model.state_of<MrState>(fr)->phase, MrState::Phase::fast_registered);
}

// Several held on one MR, then the QP fails: undone newest first, back to the start.
TEST_F(Deferred, SeveralHeldAreUndoneInReverse) {
    h.accept(fast_register(1, NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_DEFER));
    h.accept(calls::Invalidate{p.qp_a, 2, fr, NDK_OP_FLAG_DEFER});
    EXPECT_EQ(h.model.state_of<MrState>(fr)->phase, MrState::Phase::invalidated);
    h.accept(calls::Flush{p.qp_a});
    EXPECT_EQ(cancelled(p.cq_a), 2u);
    EXPECT_EQ(h.model.state_of<MrState>(fr)->phase, MrState::Phase::initialized);
}

// ---- MODEL-BND-01: a window over MaxWindowSize ----

TEST(BindOverMaxWindow, RefusedOrFailingWithoutEffect) {
    for (const char* reading : {"invalid_parameter", "any_error"}) {
        Readings r = readings_with("over_max_window_status", reading);
        r.adapter_info.MaxWindowSize = 64;
        Harness h(Mode::simulate, r);
        Pair p = h.connected_pair();
        LockedBuffer buffer = h.arena.allocate(PAGE_SIZE);
        Region reg = h.register_mr(p.pd, buffer, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        ObjectId mw = h.create(calls::CreateMw{p.pd});
        EXPECT_FALSE(h.model
                         .expect(calls::Bind{p.qp_a, 1, reg.mr, mw, reg.va, 64,
                                             NDK_OP_FLAG_ALLOW_REMOTE_WRITE})
                         .must_fail());
        calls::Bind over{p.qp_a, 2, reg.mr, mw, reg.va, 65, NDK_OP_FLAG_ALLOW_REMOTE_WRITE};
        Expectation e = h.model.expect(over);
        EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "MODEL-BND-01")) << describe(e);
        bool strict = std::string(reading) == "invalid_parameter";
        Verdict other_error = judge_inline(e, STATUS_ACCESS_VIOLATION, "NdkBind");
        EXPECT_TRUE(other_error.ok());
        EXPECT_EQ(warning_names(other_error, "MODEL-BND-01"), strict);
        // An acceptance is the reading not chosen in both readings (a warning); the profile
        // reads it as binding nothing, its completion failing, and a success as a warning.
        Verdict accepted = h.model.apply(over, status(STATUS_SUCCESS)).verdict;
        EXPECT_TRUE(accepted.ok()) << accepted.describe();
        EXPECT_TRUE(warning_names(accepted, "MODEL-BND-01"));
        EXPECT_FALSE(h.model.state_of<MwState>(mw)->bound);  // no effect
        auto entries = h.drain(p.cq_a);
        ASSERT_EQ(entries.size(), 1u);
        EXPECT_EQ(entries[0].outcome, Completion::Outcome::error);
        EXPECT_TRUE(entries[0].other_reading_succeeds);
    }
}

// ---- MODEL-RD-01, RD-08: reads beyond the OutboundReadLimit ----

TEST(OutboundReadLimit, QueueReadingAcceptsFailReadingLetsThemFail) {
    for (const char* reading : {"queue", "fail"}) {
        Harness h(Mode::check, readings_with("outbound_read_overflow", reading));
        Pair p = h.connected_pair();  // OutboundReadLimit 4
        LockedBuffer s = h.arena.allocate(PAGE_SIZE), d = h.arena.allocate(PAGE_SIZE);
        Region sink = h.register_mr(p.pd, s, 0, PAGE_SIZE,
                                    NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
        Region src = h.register_mr(p.pd, d, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ);
        EXPECT_EQ(h.model.state_of<QpState>(p.qp_a)->outbound_read_limit, 4u);
        auto read = [&](Context ctx) {
            return calls::Read{p.qp_a, ctx, {{sink.va, 8, sink.local}}, src.va, src.remote, 0};
        };
        for (Context i = 1; i <= 4; ++i) {
            EXPECT_FALSE(h.model.expect(read(i)).may_fail_any) << reading;  // RD-08
            h.accept(read(i));
        }
        bool fail = std::string(reading) == "fail";
        EXPECT_EQ(h.model.expect(read(5)).may_fail_any, fail);
        h.accept(read(5));
        std::memcpy(s.data(), d.data(), 8);
        Verdict v;
        for (Context i = 1; i <= 5; ++i)
            v.merge(h.model.observe_completion(
                p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, i, NdkOperationTypeRead), true));
        EXPECT_TRUE(v.ok()) << v.describe();
        EXPECT_EQ(warning_names(v, "MODEL-RD-01"), fail);  // queued instead of failed
        // Retrieved: the reads are no longer in progress.
        EXPECT_FALSE(h.model.expect(read(6)).may_fail_any);
    }
}

// ---- VER-02, VER-04, VER-05, ADP-OPEN-05 ----

TEST(OpenAdapter, VersionNegotiation) {
    Harness h;  // the profile's version: 2.1
    EXPECT_FALSE(h.model.expect_open({2, 1}).must_fail());
    EXPECT_FALSE(h.model.expect_open({2, 0}).must_fail());  // VER-02, VER-07: a lower minor
    EXPECT_TRUE(fails_with(h.model.expect_open({2, 2}), NDIS_STATUS_BAD_VERSION, "VER-05"));
    EXPECT_TRUE(fails_with(h.model.expect_open({1, 1}), NDIS_STATUS_BAD_VERSION, "VER-04"));
    EXPECT_TRUE(
        violation_names(judge_inline(h.model.expect_open({2, 1}), STATUS_PENDING, "OpenNdkAdapter"),
                        "ADP-OPEN-05"));
    EXPECT_TRUE(
        judge_inline(h.model.expect_open({2, 1}), STATUS_INSUFFICIENT_RESOURCES, "OpenNdkAdapter")
            .clean());
}

// ---- VER-06, VER-09, AI-11: what NdkQueryAdapterInfo reports ----

TEST(AdapterInfo, VersionFlagsAndTechnology) {
    Harness h;
    NDK_ADAPTER_INFO info = h.model.readings().adapter_info;
    info.Version = h.model.readings().version;
    auto judged = [&](const NDK_ADAPTER_INFO& i) {
        Observed o;
        o.size_out = sizeof i;
        o.adapter_info = i;
        return h.model.apply(calls::QueryAdapterInfo{h.adapter, sizeof i}, o).verdict;
    };
    EXPECT_TRUE(judged(info).clean()) << judged(info).describe();
    NDK_ADAPTER_INFO minor = info;
    minor.Version.Minor = 0;
    EXPECT_TRUE(violation_names(judged(minor), "VER-06"));
    NDK_ADAPTER_INFO tech = info;
    tech.RdmaTechnology = static_cast<NDK_RDMA_TECHNOLOGY>(0);
    EXPECT_TRUE(violation_names(judged(tech), "AI-11"));

    Harness old(Mode::simulate, read_profile(spec::builtin_profile("ndkpi-1.1")));
    NDK_ADAPTER_INFO v11 = old.model.readings().adapter_info;
    v11.Version = old.model.readings().version;
    v11.AdapterFlags |= NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED;
    Observed o;
    o.size_out = sizeof v11;
    o.adapter_info = v11;
    EXPECT_TRUE(violation_names(
        old.model.apply(calls::QueryAdapterInfo{old.adapter, sizeof v11}, o).verdict, "VER-09"));
}

}  // namespace
}  // namespace ndkct::model::test
