// The readings where the documentation is silent (issue 13): each knob's two readings, in both
// modes. Under either reading the outcome the profile does not choose is a warning, never a
// failure (DESIGN section 5), and after such an outcome the model follows the provider.
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

// ---- AMB-37: does the read-sink flag alone let read data land? ----

class ReadSink : public ::testing::Test {
  protected:
    explicit ReadSink(Mode mode, std::string_view reading)
        : h(mode, readings_with("read_sink_rights", reading)) {}
    Harness h;
    Pair p = h.connected_pair();
    LockedBuffer source = h.arena.allocate(PAGE_SIZE);
    LockedBuffer sink = h.arena.allocate(PAGE_SIZE);
    Region src = h.register_mr(p.pd, source, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    // The read-sink flag alone: no local write (the default profile's adapter needs sink rights).
    Region dst = h.register_mr(p.pd, sink, 0, PAGE_SIZE, NDK_MR_FLAG_RDMA_READ_SINK);
    calls::Read read(Context ctx) {
        return {p.qp_a, ctx, {{dst.va, 64, dst.local}}, src.va, src.remote, 0};
    }
};

class ReadSinkSimulateDefault : public ReadSink {
  protected:
    ReadSinkSimulateDefault() : ReadSink(Mode::simulate, "local_write_and_sink") {}
};
class ReadSinkSimulateSuffices : public ReadSink {
  protected:
    ReadSinkSimulateSuffices() : ReadSink(Mode::simulate, "sink_flag_suffices") {}
};
class ReadSinkCheckDefault : public ReadSink {
  protected:
    ReadSinkCheckDefault() : ReadSink(Mode::check, "local_write_and_sink") {}
};
class ReadSinkCheckSuffices : public ReadSink {
  protected:
    ReadSinkCheckSuffices() : ReadSink(Mode::check, "sink_flag_suffices") {}
};

// The reference provider (simulate) follows the knob: the read fails, or lands.
TEST_F(ReadSinkSimulateDefault, ReadIntoASinkWithoutLocalWriteFails) {
    fill(source.bytes(), 3);
    h.accept(read(0x70));
    auto done = h.drain(p.cq_a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(done[0].rules, "AMB-37"));
    EXPECT_NE(std::memcmp(sink.data(), source.data(), 64), 0);
}

TEST_F(ReadSinkSimulateSuffices, ReadIntoASinkWithoutLocalWriteLands) {
    fill(source.bytes(), 4);
    h.accept(read(0x71));
    auto done = h.drain(p.cq_a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].outcome, Completion::Outcome::success) << done[0].why;
    EXPECT_EQ(std::memcmp(sink.data(), source.data(), 64), 0);
}

// The oracle (check): the expected outcome is clean, the other a warning; after the other the
// QP's later outcomes are open.
TEST_F(ReadSinkCheckDefault, AFailedReadIsRightALandedOneAWarning) {
    h.accept(read(0x72));
    Verdict failed = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_ACCESS_VIOLATION, p.ctx_a, 0x72, NdkOperationTypeRead), true);
    EXPECT_TRUE(failed.clean()) << failed.describe();

    Pair q = h.connected_pair();
    Region s2 = h.register_mr(q.pd, source, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    Region d2 = h.register_mr(q.pd, sink, 0, PAGE_SIZE, NDK_MR_FLAG_RDMA_READ_SINK);
    h.accept(calls::Read{q.qp_a, 0x73, {{d2.va, 64, d2.local}}, s2.va, s2.remote, 0});
    Verdict landed = h.model.observe_completion(
        q.cq_a, cq_entry(STATUS_SUCCESS, q.ctx_a, 0x73, NdkOperationTypeRead), true);
    EXPECT_TRUE(landed.ok()) << landed.describe();
    EXPECT_TRUE(warning_names(landed, "AMB-37"));
    // The model predicted the QP in error; the provider's QP works on: later entries are open.
    h.accept(calls::Read{q.qp_a, 0x74, {{d2.va, 64, d2.local}}, s2.va, s2.remote, 0});
    Verdict later = h.model.observe_completion(
        q.cq_a, cq_entry(STATUS_SUCCESS, q.ctx_a, 0x74, NdkOperationTypeRead), true);
    EXPECT_TRUE(later.ok()) << later.describe();
}

// Until the read's entry shows which reading the provider follows, whether its QP went to
// error is open: a request posted behind it whose entry is retrieved first may have run (a
// provider reading the flag as enough keeps the QP working), so it is not judged flushed.
TEST_F(ReadSinkCheckDefault, ARequestBehindTheReadRetrievedFirstMayHaveRun) {
    LockedBuffer target = h.arena.allocate(PAGE_SIZE);
    Region t = h.register_mr(p.pd, target, 0, PAGE_SIZE,
                             NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    h.accept(read(0x7A));
    h.accept(calls::Write{p.qp_a, 0x7B, {{src.va, 8, src.local}}, t.va, t.remote, 0, {}});
    std::memcpy(target.data(), source.data(), 8);  // the write ran
    Verdict write = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x7B, NdkOperationTypeWrite), true);
    EXPECT_TRUE(write.ok()) << write.describe();  // not FLS-02
    Verdict landed = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x7A, NdkOperationTypeRead), true);
    EXPECT_TRUE(landed.ok()) << landed.describe();
    EXPECT_TRUE(warning_names(landed, "AMB-37"));
}

// Once the read showed the other reading (it landed), a receive at the peer that the model
// held waiting (for a send it flushed behind the read it predicted to fail) may take the send:
// its entry is not read as the peer's move to error (AMB-12), so not judged flushed.
TEST_F(ReadSinkCheckDefault, APeersReceiveAfterTheOtherReadingMayTakeTheSend) {
    std::memcpy(sink.data(), source.data(), 64);  // the provider placed the data
    h.accept(read(0x7C));
    Verdict landed = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x7C, NdkOperationTypeRead), true);
    EXPECT_TRUE(landed.ok()) << landed.describe();
    LockedBuffer inbox = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, inbox, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    h.accept(calls::Receive{p.qp_b, 0x7D, {{r.va, 64, r.local}}});
    h.accept(calls::Send{p.qp_a, 0x7E, {{src.va, 8, src.local}}, 0, {}});
    std::memcpy(inbox.data(), source.data(), 8);
    Verdict received = h.model.observe_completion(
        p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0x7D, NdkOperationTypeReceive, 8), true);
    EXPECT_TRUE(received.ok()) << received.describe();  // not FLS-02
    Verdict sent = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x7E, NdkOperationTypeSend), true);
    EXPECT_TRUE(sent.ok()) << sent.describe();
}

TEST_F(ReadSinkCheckSuffices, ALandedReadIsRightAFailedOneAWarning) {
    fill(source.bytes(), 5);
    h.accept(read(0x75));
    std::memcpy(sink.data(), source.data(), 64);  // the provider placed the data
    Verdict landed = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x75, NdkOperationTypeRead), true);
    EXPECT_TRUE(landed.clean()) << landed.describe();

    h.accept(read(0x76));
    Verdict failed = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_ACCESS_VIOLATION, p.ctx_a, 0x76, NdkOperationTypeRead), true);
    EXPECT_TRUE(failed.ok()) << failed.describe();
    EXPECT_TRUE(warning_names(failed, "AMB-37"));
}

// A sink with neither local write nor the flag is refused under both readings (RMR-ACC-02).
TEST_F(ReadSinkCheckSuffices, ASinkWithNoRightAtAllMustFail) {
    Region bare = h.register_mr(p.pd, sink, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    h.accept(calls::Read{p.qp_a, 0x77, {{bare.va, 64, bare.local}}, src.va, src.remote, 0});
    Verdict landed = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x77, NdkOperationTypeRead), true);
    EXPECT_TRUE(violation_names(landed, "RMR-ACC-02")) << landed.describe();
}

// ---- AMB-38: what a failed re-initialization leaves behind ----

class FailedReinitialization : public ::testing::Test {
  protected:
    explicit FailedReinitialization(std::string_view reading)
        : h(Mode::check, readings_with("fr_failed_initialization", reading)) {}
    Harness h;
    Pair p = h.connected_pair();
    LockedBuffer memory = h.arena.allocate(2 * PAGE_SIZE);
    Lam lam = h.build_lam(memory, 0, 2 * PAGE_SIZE);
    ObjectId mr = h.fr_mr(p.pd, 2, true);

    void fail_reinitialization(bool pend) {
        calls::InitializeFastRegisterMr again{mr, 0x10000000, true};
        if (!pend) {
            h.accept(again, status(STATUS_IMPLEMENTATION_LIMIT));
            return;
        }
        Applied a = h.accept(again, pending());
        EXPECT_TRUE(h.model.complete(a.pending, STATUS_IMPLEMENTATION_LIMIT).verdict.clean());
    }
    calls::FastRegister fast_register(Context ctx) {
        return {p.qp_a, ctx, mr, lam.pages, 0, 2 * PAGE_SIZE, 0x70000, 0};
    }
};

class KeepPrevious : public FailedReinitialization {
  protected:
    KeepPrevious() : FailedReinitialization("keep_previous") {}
};
class Unusable : public FailedReinitialization {
  protected:
    Unusable() : FailedReinitialization("unusable") {}
};

TEST_F(KeepPrevious, TheEarlierInitializationStaysInForce) {
    for (bool pend : {false, true}) {
        fail_reinitialization(pend);
        const MrState* s = h.model.state_of<MrState>(mr);
        EXPECT_EQ(s->phase, MrState::Phase::initialized);
        EXPECT_EQ(s->max_pages, 2u);
        Expectation e = h.model.expect(fast_register(0x80));
        EXPECT_FALSE(e.must_fail()) << describe(e);
        // A provider that made the MR unusable refuses: the reading not chosen, a warning.
        Verdict refused = judge_inline(e, STATUS_INVALID_DEVICE_STATE, "NdkFastRegister");
        EXPECT_TRUE(refused.ok());
        EXPECT_TRUE(warning_names(refused, "AMB-38"));
    }
    // Accepted, and failed in its completion: a warning too.
    h.accept(fast_register(0x81));
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_INVALID_DEVICE_STATE, p.ctx_a, 0x81, NdkOperationTypeFastRegister),
        true);
    EXPECT_TRUE(v.ok()) << v.describe();
    EXPECT_TRUE(warning_names(v, "AMB-38"));
}

TEST_F(Unusable, TheMrNeedsAnotherInitialization) {
    fail_reinitialization(false);
    EXPECT_EQ(h.model.state_of<MrState>(mr)->phase, MrState::Phase::uninitialized);
    Expectation e = h.model.expect(fast_register(0x82));
    EXPECT_TRUE(e.consumer_error) << describe(e);
    EXPECT_TRUE(failure_names(e, "AMB-38"));
    Verdict accepted = judge_inline(e, STATUS_SUCCESS, "NdkFastRegister");
    EXPECT_TRUE(accepted.ok());  // the reading not chosen (keep_previous)
    // A successful initialization makes it usable again.
    h.accept(calls::InitializeFastRegisterMr{mr, 2, true});
    EXPECT_FALSE(h.model.expect(fast_register(0x83)).must_fail());
}

// A refusal the model requires (AMB-10: the MR holds a valid registration) is not AMB-38's.
TEST_F(Unusable, ARefusalTheModelRequiresChangesNothing) {
    h.accept(fast_register(0x84));
    h.accept(calls::InitializeFastRegisterMr{mr, 1, true}, status(STATUS_INVALID_DEVICE_STATE));
    EXPECT_EQ(h.model.state_of<MrState>(mr)->phase, MrState::Phase::fast_registered);
}

// ---- AMB-39: receives before the QP is connected ----

TEST(ReceiveBeforeConnect, AcceptedByDefaultARefusalIsAWarning) {
    Harness h;
    ObjectId pd = h.pd(), cq = h.cq();
    ObjectId qp = h.qp(pd, cq, cq);
    Expectation e = h.model.expect(calls::Receive{qp, 1, {}});
    EXPECT_FALSE(e.must_fail()) << describe(e);
    Verdict refused = judge_inline(e, STATUS_CONNECTION_INVALID, "NdkReceive");
    EXPECT_TRUE(refused.ok());
    EXPECT_TRUE(warning_names(refused, "AMB-39"));
}

TEST(ReceiveBeforeConnect, RejectReadingRefusesAnAcceptanceIsAWarning) {
    Harness h(Mode::simulate, readings_with("receive_before_connect", "reject"));
    ObjectId pd = h.pd(), cq = h.cq();
    ObjectId qp = h.qp(pd, cq, cq);
    Expectation e = h.model.expect(calls::Receive{qp, 1, {}});
    EXPECT_TRUE(fails_with(e, STATUS_CONNECTION_INVALID, "AMB-39")) << describe(e);
    Verdict accepted = judge_inline(e, STATUS_SUCCESS, "NdkReceive");
    EXPECT_TRUE(accepted.ok());
    EXPECT_TRUE(warning_names(accepted, "CQP-STATE-02"));
}

// ---- AMB-40: the local token a fast-register MR reports before its first fast registration ----

class InitializedLocalToken : public ::testing::Test {
  protected:
    explicit InitializedLocalToken(std::string_view reading)
        : h(Mode::check, readings_with("fr_local_token_timing", reading)) {}
    Harness h;
    Pair p = h.connected_pair();
    LockedBuffer memory = h.arena.allocate(PAGE_SIZE);
    LockedBuffer target = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(memory, 0, PAGE_SIZE);
    Region dst = h.register_mr(p.pd, target, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ObjectId mr = h.fr_mr(p.pd, 1, false);
    static constexpr uint64_t kBase = 0x70000;

    void report_local_token(uint32_t value) {
        Observed o;
        o.value = value;
        h.accept(calls::GetLocalTokenFromMr{mr}, o);
    }
    // The getter reports `early` once the initialization completed, the MR is fast-registered
    // (local read), the getter reports `late`, and a's write from the region through `early`
    // completes with `status`: the verdict on that completion.
    Verdict write_through_early(uint32_t early, uint32_t late, NTSTATUS status) {
        report_local_token(early);
        h.accept(calls::FastRegister{p.qp_a, 0x90, mr, lam.pages, 0, PAGE_SIZE, kBase, 0});
        Verdict registered = h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x90, NdkOperationTypeFastRegister), true);
        EXPECT_TRUE(registered.clean()) << registered.describe();
        report_local_token(late);
        h.accept(calls::Write{p.qp_a, 0x91, {{kBase, 64, early}}, dst.va, dst.remote, 0, {}});
        return h.model.observe_completion(
            p.cq_a, cq_entry(status, p.ctx_a, 0x91, NdkOperationTypeWrite), true, false);
    }
};

class FromInitialize : public InitializedLocalToken {
  protected:
    FromInitialize() : InitializedLocalToken("from_initialize") {}
};
class AfterFastRegisterReturns : public InitializedLocalToken {
  protected:
    AfterFastRegisterReturns() : InitializedLocalToken("after_fast_register_returns") {}
};

// IFR-TOK-01: the token read after initialization reaches the first registration's region; a
// provider that reports another one after it and fails the access broke the getter's rule,
// named before the data path's.
TEST_F(FromInitialize, AFailureThroughTheEarlyTokenNamesIfrTok01First) {
    const uint32_t early = h.next_token(), late = h.next_token();
    Verdict v = write_through_early(early, late, STATUS_ACCESS_VIOLATION);
    ASSERT_FALSE(v.ok()) << v.describe();
    EXPECT_TRUE(violation_names(v, "IFR-TOK-01")) << v.describe();
    EXPECT_EQ(v.violations[0].rules.front(), "IFR-TOK-01") << v.describe();
}

TEST_F(FromInitialize, TheEarlyTokenThatStaysTheMrsWorks) {
    const uint32_t token = h.next_token();
    Verdict v = write_through_early(token, token, STATUS_SUCCESS);
    EXPECT_TRUE(v.ok()) << v.describe();
}

// The reading not chosen: only the value read after NdkFastRegister returned is promised, so the
// failure is a warning (DESIGN section 5).
TEST_F(AfterFastRegisterReturns, AFailureThroughTheEarlyTokenIsAWarning) {
    const uint32_t early = h.next_token(), late = h.next_token();
    Verdict v = write_through_early(early, late, STATUS_ACCESS_VIOLATION);
    EXPECT_TRUE(v.ok()) << v.describe();
    EXPECT_TRUE(warning_names(v, "AMB-40")) << v.describe();
}

// ---- NdkBuildLam is bounded by the MDL chain only (LAM-LEN-01, not MaxRegistrationSize) ----

TEST(BuildLamLength, BeyondMaxRegistrationSizeIsAValidMapping) {
    Readings r = default_readings();
    r.adapter_info.MaxRegistrationSize = PAGE_SIZE;
    Harness h(Mode::simulate, r);
    LockedBuffer buffer = h.arena.allocate(4 * PAGE_SIZE);
    MdlChain chain = platform::describe(buffer, 0, 4 * PAGE_SIZE);
    calls::BuildLam c{h.adapter, view_mdl(chain.head(), 4 * PAGE_SIZE), 4 * PAGE_SIZE, true, true,
                      4096};
    Expectation e = h.model.expect(c);
    EXPECT_FALSE(e.must_fail()) << describe(e);
}

// ---- FR-PAGE-01: a misaligned page address is the caller's error, not a provider's ----

TEST(FastRegisterPages, AMisalignedEntryIsAConsumerError) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer memory = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(memory, 0, PAGE_SIZE);
    ObjectId mr = h.fr_mr(p.pd, 1, true);
    std::vector<uint64_t> pages{lam.pages[0] + 8};
    calls::FastRegister c{p.qp_a, 0x90, mr, pages, 0, 64, 0x80000, 0};
    Expectation e = h.model.expect(c);
    EXPECT_TRUE(e.consumer_error) << describe(e);
    EXPECT_TRUE(failure_names(e, "FR-PAGE-01"));
    Verdict accepted = h.model.apply(c, status(STATUS_SUCCESS)).verdict;
    EXPECT_TRUE(accepted.ok()) << accepted.describe();
    EXPECT_TRUE(h.model.state_of<MrState>(mr)->indeterminate);  // what it registered is unknown
}

// ---- MODEL-RMR-LEN-02: Length 0 accepted is a warning, and the model follows ----

TEST(ZeroLength, AnAcceptedZeroLengthRegistrationIsAWarningAndTakesEffect) {
    Harness h(Mode::check);
    ObjectId pd = h.pd();
    ObjectId mr = h.mr(pd, false);
    LockedBuffer buffer = h.arena.allocate(PAGE_SIZE);
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    calls::RegisterMr c{mr, view_mdl(chain.head(), 0), 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE};
    Applied a = h.model.apply(c, status(STATUS_SUCCESS));
    EXPECT_TRUE(a.verdict.ok()) << a.verdict.describe();
    EXPECT_TRUE(warning_names(a.verdict, "MODEL-RMR-LEN-02"));
    EXPECT_EQ(h.model.state_of<MrState>(mr)->phase, MrState::Phase::registered);
}

// The zero-length fast registration accepted inline: its completion may succeed (a warning) or
// fail (the profile's completion form).
TEST(ZeroLength, AZeroLengthFastRegistrationMaySucceedWithAWarning) {
    Harness h(Mode::check, readings_with("fr_invalid_request_report", "completion_error"));
    Pair p = h.connected_pair();
    LockedBuffer memory = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(memory, 0, PAGE_SIZE);
    ObjectId mr = h.fr_mr(p.pd, 1, true);
    h.accept(calls::FastRegister{p.qp_a, 0x91, mr, lam.pages, 0, 0, 0x90000, 0});
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x91, NdkOperationTypeFastRegister), true);
    EXPECT_TRUE(v.ok()) << v.describe();
    EXPECT_TRUE(warning_names(v, "MODEL-RMR-LEN-02"));
}

// ---- MODEL-FLS-01: posts after NdkFlush ----

TEST(PostAfterFlush, CancelledReadingAcceptsASuccessWithAWarning) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer buffer = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buffer, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    h.accept(calls::Flush{p.qp_a});
    h.accept(calls::Write{p.qp_a, 0x92, {{r.va, 8, r.local}}, r.va + 64, r.remote, 0, {}});
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x92, NdkOperationTypeWrite), true);
    EXPECT_TRUE(v.ok()) << v.describe();
    EXPECT_TRUE(warning_names(v, "MODEL-FLS-01"));
}

TEST(PostAfterFlush, UsableReadingAcceptsACancellationWithAWarning) {
    Harness h(Mode::check, readings_with("post_after_flush", "usable"));
    Pair p = h.connected_pair();
    LockedBuffer buffer = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buffer, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    h.accept(calls::Flush{p.qp_a});
    Expectation e = h.model.expect(
        calls::Write{p.qp_a, 0x93, {{r.va, 8, r.local}}, r.va + 64, r.remote, 0, {}});
    EXPECT_TRUE(
        warning_names(judge_inline(e, STATUS_INVALID_DEVICE_STATE, "NdkWrite"), "MODEL-FLS-01"));
    h.accept(calls::Write{p.qp_a, 0x93, {{r.va, 8, r.local}}, r.va + 64, r.remote, 0, {}});
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_CANCELLED, p.ctx_a, 0x93, NdkOperationTypeWrite), true);
    EXPECT_TRUE(v.ok()) << v.describe();
    EXPECT_TRUE(warning_names(v, "MODEL-FLS-01"));
}

}  // namespace
}  // namespace ndkct::model::test
