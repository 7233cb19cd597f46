// Queues and their failures: receives on an SRQ QP (MODEL-RCV-01), queue depths
// (MODEL-WR-DEPTH-01, SRQ-17), NdkModifySrq (MODEL-SRQ-01, SRQ-02/10/11/13), SRQ notifications
// (MODEL-SRQ-02, SRQ-12/16), a CQ overrun and what later posts do (CQ-STATUS-02,
// MODEL-CQ-STATUS-01), CQ notifications judged in check mode (CQ-NOT-*), resize without the flag
// (MODEL-CQ-RESIZE-01) and interrupt moderation (CQ-IM-*).
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

// ---- MODEL-RCV-01 ----

TEST(ReceiveOnSrqQp, FailsInlineWithTheProfilesStatus) {
    for (const char* reading : {"invalid_device_request", "invalid_parameter"}) {
        Harness h(Mode::simulate, readings_with("receive_on_srq_qp", reading));
        ObjectId pd = h.pd(), cq = h.cq();
        ObjectId srq = h.create(calls::CreateSrq{pd, 16, 2, 0});
        ObjectId qp = h.create(calls::CreateQpWithSrq{pd, cq, cq, srq, 1, 8, 2, 0});
        NTSTATUS want = std::string(reading) == "invalid_parameter" ? STATUS_INVALID_PARAMETER
                                                                    : STATUS_INVALID_DEVICE_REQUEST;
        Expectation e = h.model.expect(calls::Receive{qp, 7, {}});
        EXPECT_TRUE(fails_with(e, want, "MODEL-RCV-01")) << reading << ": " << describe(e);
        EXPECT_EQ(e.model_status(), want);
        // Refused: no entry, the SRQ untouched.
        h.accept(calls::Receive{qp, 7, {}}, status(want));
        EXPECT_TRUE(h.model.state_of<SrqState>(srq)->receives.empty());
        EXPECT_TRUE(h.model.cq_entries(cq).empty());
    }
}

// ---- MODEL-WR-DEPTH-01, CQP-DEPTH-01, SRQ-17 ----

class Depth : public ::testing::Test {
  protected:
    Harness h;
    ObjectId pd = h.pd(), cq = h.cq();
    ObjectId qp = h.create(calls::CreateQp{pd, cq, cq, 1, 2, 2, 1, 1, 0});
};

TEST_F(Depth, UpToTheDepthMustBeAcceptedBeyondAnyErrorMayRefuse) {
    h.accept(calls::Receive{qp, 1, {}});
    h.accept(calls::Receive{qp, 2, {}});
    Expectation over = h.model.expect(calls::Receive{qp, 3, {}});
    EXPECT_TRUE(over.may_fail_any);  // any_error: any status refuses it
    EXPECT_TRUE(names(over.any_failure_rules, "MODEL-WR-DEPTH-01"));
    EXPECT_EQ(over.model_status(), STATUS_INSUFFICIENT_RESOURCES);  // the reference provider's
    EXPECT_TRUE(judge_inline(over, STATUS_INVALID_PARAMETER, "NdkReceive").clean());
    EXPECT_TRUE(judge_inline(over, STATUS_SUCCESS, "NdkReceive").clean());  // a deeper queue
}

TEST(DepthInsufficientResources, OnlyThatStatusMayRefuse) {
    Harness h(Mode::simulate, readings_with("queue_overflow_status", "insufficient_resources"));
    ObjectId pd = h.pd(), cq = h.cq();
    ObjectId qp = h.create(calls::CreateQp{pd, cq, cq, 1, 1, 1, 1, 1, 0});
    h.accept(calls::Receive{qp, 1, {}});
    Expectation over = h.model.expect(calls::Receive{qp, 2, {}});
    EXPECT_TRUE(judge_inline(over, STATUS_INSUFFICIENT_RESOURCES, "NdkReceive").clean());
    // Another error is the reading not chosen (any_error): a warning.
    Verdict other = judge_inline(over, STATUS_INVALID_PARAMETER, "NdkReceive");
    EXPECT_TRUE(other.ok());
    EXPECT_TRUE(warning_names(other, "MODEL-WR-DEPTH-01"));
}

// A slot frees when the consumer retrieves the entry, not before (the consumer's view).
TEST(DepthRetrieval, SlotsFreeWhenEntriesAreRetrieved) {
    // MODEL-WR-RES-01 forbidden: within the depth a valid post may not lack resources, so the
    // depth alone decides (by default any valid post may, lost_request_test.cpp).
    Harness h(Mode::simulate, readings_with("post_resource_failure", "forbidden"));
    Pair p = h.connected_pair();
    LockedBuffer a = h.arena.allocate(PAGE_SIZE), b = h.arena.allocate(PAGE_SIZE);
    Region ra = h.register_mr(p.pd, a, 0, PAGE_SIZE, 0);
    Region rb = h.register_mr(p.pd, b, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    for (Context i = 1; i <= 16; ++i)  // the QP's initiator depth
        h.accept(calls::Write{p.qp_a, i, {{ra.va, 8, ra.local}}, rb.va, rb.remote, 0, {}});
    EXPECT_TRUE(
        h.model.expect(calls::Write{p.qp_a, 17, {{ra.va, 8, ra.local}}, rb.va, rb.remote, 0, {}})
            .may_lack_resources);
    h.drain(p.cq_a);
    EXPECT_FALSE(
        h.model.expect(calls::Write{p.qp_a, 17, {{ra.va, 8, ra.local}}, rb.va, rb.remote, 0, {}})
            .may_lack_resources);
}

// ---- SRQ: MODEL-SRQ-01, SRQ-02/10/11/12/13/16/17, MODEL-SRQ-02 ----

TEST(ModifySrq, BelowTheQueuedReceivesFollowsTheProfile) {
    Harness h;
    ObjectId pd = h.pd();
    ObjectId srq = h.create(calls::CreateSrq{pd, 8, 1, 0});
    for (Context i = 1; i <= 4; ++i)
        h.accept(calls::SrqReceive{srq, i, {}});
    Expectation e = h.model.expect(calls::ModifySrq{srq, 2, 0});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "MODEL-SRQ-01")) << describe(e);
    // Refused through the callback: nothing changes (the depth stays 8).
    Applied a = h.accept(calls::ModifySrq{srq, 2, 0}, pending());
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_INVALID_PARAMETER).verdict.clean());
    EXPECT_EQ(h.model.state_of<SrqState>(srq)->depth, 8u);
    EXPECT_FALSE(h.model.expect(calls::ModifySrq{srq, 0, 1}).must_fail());  // SRQ-02: 0 keeps it

    Harness accepting(Mode::simulate, readings_with("modify_srq_below_queued", "accept"));
    ObjectId pd2 = accepting.pd();
    ObjectId srq2 = accepting.create(calls::CreateSrq{pd2, 8, 1, 0});
    for (Context i = 1; i <= 4; ++i)
        accepting.accept(calls::SrqReceive{srq2, i, {}});
    accepting.accept(calls::ModifySrq{srq2, 2, 0});
    EXPECT_EQ(accepting.model.state_of<SrqState>(srq2)->depth, 2u);
    EXPECT_EQ(accepting.model.state_of<SrqState>(srq2)->receives.size(), 4u);  // kept
    EXPECT_TRUE(
        accepting.model.expect(calls::SrqReceive{srq2, 5, {}}).may_lack_resources);  // SRQ-17
}

static size_t srq_notifications(Harness& h, ObjectId srq) {
    size_t n = 0;
    for (const Event& e : h.model.take_events())
        n += e.kind == Event::Kind::srq_notification && e.object == srq;
    return n;
}

TEST(SrqNotification, CreationArmsAfterTheThresholdWasReached) {
    Harness h;  // MODEL-SRQ-02 after_threshold_reached
    Pair p = h.connected_pair();
    ObjectId cq = h.cq();
    ObjectId srq = h.create(calls::CreateSrq{p.pd, 8, 1, 2});
    EXPECT_EQ(srq_notifications(h, srq), 0u);  // empty, but never reached the threshold
    ObjectId qp = h.create(calls::CreateQpWithSrq{p.pd, cq, cq, srq, 1, 8, 1, 64});
    (void)qp;
    h.accept(calls::SrqReceive{srq, 1, {}});
    h.accept(calls::SrqReceive{srq, 2, {}});  // reached 2
    EXPECT_EQ(srq_notifications(h, srq), 0u);
    // SRQ-11: an NdkModifySrq while below the threshold notifies at once; SRQ-12: once.
    ObjectId other = h.create(calls::CreateSrq{p.pd, 8, 1, 0});
    h.accept(calls::ModifySrq{other, 0, 3});
    EXPECT_EQ(srq_notifications(h, other), 1u);
    h.accept(calls::ModifySrq{other, 0, 0});  // SRQ-13: 0 keeps threshold and (dis)arm state
    EXPECT_EQ(srq_notifications(h, other), 0u);
    EXPECT_FALSE(h.model.state_of<SrqState>(other)->notify_armed);
}

TEST(SrqNotification, ImmediateReadingNotifiesAtCreation) {
    Harness h(Mode::simulate, readings_with("srq_initial_notify", "immediate"));
    ObjectId pd = h.pd();
    ObjectId srq = h.create(calls::CreateSrq{pd, 8, 1, 2});
    EXPECT_EQ(srq_notifications(h, srq), 1u);
    ObjectId silent = h.create(calls::CreateSrq{pd, 8, 1, 2, false});  // SRQ-07: no callback
    EXPECT_EQ(srq_notifications(h, silent), 0u);
}

TEST(SrqNotification, CheckModeJudgesThem) {
    Harness h(Mode::check);
    ObjectId pd = h.pd();
    ObjectId srq = h.create(calls::CreateSrq{pd, 8, 1, 2});
    // MODEL-SRQ-02 (after_threshold_reached): nothing was ever queued.
    Verdict early =
        h.model.observe_event({Event::Kind::srq_notification, srq, 0, STATUS_SUCCESS}).verdict;
    EXPECT_TRUE(violation_names(early, "MODEL-SRQ-02")) << early.describe();
    // SRQ-12: disarmed by that notification.
    EXPECT_TRUE(violation_names(
        h.model.observe_event({Event::Kind::srq_notification, srq, 0, STATUS_SUCCESS}).verdict,
        "SRQ-12"));
    // SRQ-03: a status outside the two defined.
    EXPECT_TRUE(violation_names(
        h.model.observe_event({Event::Kind::srq_notification, srq, 0, STATUS_CANCELLED}).verdict,
        "SRQ-03"));
    // SRQ-07: no callback registered.
    ObjectId silent = h.create(calls::CreateSrq{pd, 8, 1, 0, false});
    EXPECT_TRUE(violation_names(
        h.model.observe_event({Event::Kind::srq_notification, silent, 0, STATUS_INTERNAL_ERROR})
            .verdict,
        "SRQ-07"));
    // SRQ-15: a fatal error makes the SRQ unusable (MODEL-CQ-STATUS-01 for later posts).
    EXPECT_TRUE(h.model.state_of<SrqState>(silent)->failed);
    EXPECT_TRUE(h.model.expect(calls::SrqReceive{silent, 1, {}}).may_fail_any);
}

// ---- CQ overrun: CQ-STATUS-02, CQ-CREATE-04, MODEL-CQ-STATUS-01 ----

class Overrun : public ::testing::TestWithParam<const char*> {
  protected:
    Overrun() : h(Mode::simulate, readings_with("post_after_cq_or_srq_error", GetParam())) {}
    Harness h;
    Pair p = h.connected_pair(2);  // CQs of depth 2
    LockedBuffer a = h.arena.allocate(PAGE_SIZE), b = h.arena.allocate(PAGE_SIZE);
    Region ra = h.register_mr(p.pd, a, 0, PAGE_SIZE, 0);
    Region rb = h.register_mr(p.pd, b, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    calls::Write write(Context ctx) {
        return {p.qp_a, ctx, {{ra.va, 8, ra.local}}, rb.va, rb.remote, 0, {}};
    }
};

TEST_P(Overrun, TheDepthFitsOneMoreOverrunsAndTheQpIsUnusable) {
    h.accept(calls::ArmCq{p.cq_a, NDK_CQ_NOTIFY_ERRORS});
    h.accept(write(1));
    h.accept(write(2));
    EXPECT_EQ(h.model.cq_entries(p.cq_a).size(), 2u);  // CQ-CREATE-04: the depth fits
    EXPECT_TRUE(h.model.take_events().empty());        // CQ-NOT-05: entries satisfy no ERRORS arm
    EXPECT_FALSE(h.model.state_of<CqState>(p.cq_a)->failed);
    // Overrun via a receive into the same CQ is not possible here; a third write overruns.
    EXPECT_FALSE(h.model.expect(write(3)).may_fail_any);
    h.model.apply(write(3), {});
    const auto* cq = h.model.state_of<CqState>(p.cq_a);
    EXPECT_TRUE(cq->failed && cq->overrun);           // CQ-STATUS-02
    EXPECT_TRUE(h.model.cq_entries(p.cq_a).empty());  // no further completions
    bool overflow = false;
    for (const Event& e : h.model.take_events())
        overflow |= e.kind == Event::Kind::cq_notification && e.status == STATUS_BUFFER_OVERFLOW;
    EXPECT_TRUE(overflow);  // the ERRORS arm is satisfied by the CQ's error
    EXPECT_TRUE(h.model.state_of<QpState>(p.qp_a)->unusable);
    // MODEL-CQ-STATUS-01: later posts do not succeed.
    Expectation later = h.model.expect(write(4));
    EXPECT_TRUE(later.may_fail_any);
    bool cancelled = std::string(GetParam()) == "cancelled_completion";
    EXPECT_EQ(later.model_status(), cancelled ? STATUS_SUCCESS : STATUS_INVALID_DEVICE_STATE);
    Verdict inline_error = judge_inline(later, STATUS_INVALID_PARAMETER, "NdkWrite");
    EXPECT_TRUE(inline_error.ok());
    EXPECT_EQ(warning_names(inline_error, "MODEL-CQ-STATUS-01"), cancelled);
    h.model.apply(write(4), {});
    EXPECT_TRUE(h.model.cq_entries(p.cq_a).empty());  // none on the failed CQ
}

INSTANTIATE_TEST_SUITE_P(Readings, Overrun, ::testing::Values("any_error", "cancelled_completion"));

// Check mode: a connected pair with CQs of `depth`, and writes from a local region to a remote
// writable one.
struct CheckModeWrites {
    explicit CheckModeWrites(uint32_t depth) : p(h.connected_pair(depth)) {}
    Harness h{Mode::check};
    Pair p;
    LockedBuffer a = h.arena.allocate(PAGE_SIZE), b = h.arena.allocate(PAGE_SIZE);
    Region ra = h.register_mr(p.pd, a, 0, PAGE_SIZE, 0);
    Region rb = h.register_mr(p.pd, b, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    calls::Write write(Context ctx) const {
        return {p.qp_a, ctx, {{ra.va, 8, ra.local}}, rb.va, rb.remote, 0, {}};
    }
};

TEST(OverrunCheckMode, OverflowIsJudgedAgainstWhatCouldBeQueued) {
    CheckModeWrites w(4);
    Harness& h = w.h;
    const Pair& p = w.p;
    h.accept(w.write(1));
    // CQ-CREATE-04: one entry in a CQ of depth 4 cannot overrun it.
    Verdict v =
        h.model.observe_event({Event::Kind::cq_notification, p.cq_a, 0, STATUS_BUFFER_OVERFLOW})
            .verdict;
    EXPECT_TRUE(violation_names(v, "CQ-CREATE-04")) << v.describe();
    // CQ-STATUS-02: the CQ and its QPs are unusable since; a later request's entry must not
    // appear on it.
    EXPECT_TRUE(h.model.state_of<QpState>(p.qp_a)->unusable);
    EXPECT_TRUE(
        h.model.expect_nothing_outstanding(p.qp_a).clean());  // what was expected may not come
    h.model.apply(w.write(2), {});
    NDK_RESULT_EX r{};
    r.Status = STATUS_CANCELLED;
    r.QPContext = pointer_of(p.ctx_a);
    r.RequestContext = pointer_of(2);
    EXPECT_TRUE(violation_names(h.model.observe_completion(p.cq_a, r, true), "MODEL-CQ-STATUS-01"));
    // CQ-STATUS-01: an undefined CqStatus.
    ObjectId other = h.cq();
    EXPECT_TRUE(violation_names(
        h.model.observe_event({Event::Kind::cq_notification, other, 0, STATUS_CANCELLED}).verdict,
        "CQ-STATUS-01"));
}

// CQ-STATUS-02 in check mode: once more entries are owed to a CQ than it holds, the provider may
// have overrun it and refuse posts before the overrun's notification (delivered on another
// thread, or never when the CQ is not armed) reaches the oracle. Up to the depth, a refusal is
// still a violation of the post's own rule.
TEST(OverrunCheckMode, RefusalBeforeTheOverrunsNotificationIsAllowedOnlyPastTheDepth) {
    CheckModeWrites w(2);
    Harness& h = w.h;
    const Pair& p = w.p;
    auto write = [&](Context ctx) { return w.write(ctx); };
    h.accept(write(1));
    h.accept(write(2));
    // Two entries owed to a CQ of depth 2: it cannot have overrun.
    Verdict refused =
        judge_inline(h.model.expect(write(3)), STATUS_INVALID_DEVICE_STATE, "NdkWrite");
    EXPECT_TRUE(violation_names(refused, "WRT-01")) << refused.describe();
    h.accept(write(3));
    // Three owed: the third may have overrun it; the refusal names the overrun's rules.
    Expectation past = h.model.expect(write(4));
    EXPECT_TRUE(past.may_fail_any);
    EXPECT_TRUE(judge_inline(past, STATUS_INVALID_DEVICE_STATE, "NdkWrite").ok());
    EXPECT_FALSE(h.model.state_of<QpState>(p.qp_a)->unusable);  // nothing was observed yet
    // Entries retrieved bring the count back under the depth: refusals are violations again.
    for (Context ctx : {1, 2}) {
        NDK_RESULT_EX r{};
        r.Status = STATUS_SUCCESS;
        r.QPContext = pointer_of(p.ctx_a);
        r.RequestContext = pointer_of(ctx);
        r.Type = NdkOperationTypeWrite;
        EXPECT_TRUE(h.model.observe_completion(p.cq_a, r, true).clean());
    }
    EXPECT_FALSE(h.model.expect(write(4)).may_fail_any);
}

// ---- CQ notifications in check mode: CQ-NOT-01/05/07/09/10 ----

TEST(CqNotificationCheck, ArmTypesAreJudged) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer a = h.arena.allocate(PAGE_SIZE), b = h.arena.allocate(PAGE_SIZE);
    Region ra = h.register_mr(p.pd, a, 0, PAGE_SIZE, 0);
    Region rb = h.register_mr(p.pd, b, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    auto notified = [&](ObjectId cq) {
        return h.model.observe_event({Event::Kind::cq_notification, cq, 0, STATUS_SUCCESS}).verdict;
    };
    EXPECT_TRUE(violation_names(notified(p.cq_a), "CQ-NOT-01"));  // no arm
    h.accept(calls::ArmCq{p.cq_a, NDK_CQ_NOTIFY_ERRORS});
    h.accept(calls::Write{p.qp_a, 1, {{ra.va, 8, ra.local}}, rb.va, rb.remote, 0, {}});
    EXPECT_FALSE(h.model.notification_owed(p.cq_a));  // CQ-NOT-05: an entry satisfies no ERRORS arm
    EXPECT_TRUE(violation_names(notified(p.cq_a), "CQ-NOT-05"));
    h.accept(calls::ArmCq{p.cq_b, NDK_CQ_NOTIFY_ANY});
    EXPECT_FALSE(h.model.notification_owed(p.cq_b));
    EXPECT_TRUE(violation_names(notified(p.cq_b), "CQ-NOT-09"));  // nothing to notify of
    h.accept(calls::ArmCq{p.cq_a, NDK_CQ_NOTIFY_ANY});
    h.accept(calls::Write{p.qp_a, 2, {{ra.va, 8, ra.local}}, rb.va, rb.remote, 0, {}});
    EXPECT_TRUE(h.model.notification_owed(p.cq_a));  // CQ-NOT-07
    EXPECT_TRUE(notified(p.cq_a).clean());
    EXPECT_FALSE(h.model.notification_owed(p.cq_a));  // CQ-NOT-06: the arm is consumed
}

// ---- MODEL-CQ-RESIZE-01, CQ-IM-05..08, AMB-24 ----

TEST(ResizeWithoutTheFlag, MustFailWithTheProfilesStatus) {
    for (const char* reading : {"not_supported", "invalid_device_request"}) {
        Readings r = readings_with("resize_cq_unsupported", reading);
        r.adapter_info.AdapterFlags &= ~NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED;
        Harness h(Mode::simulate, r);
        ObjectId cq = h.cq(8);
        NTSTATUS want = std::string(reading) == "not_supported" ? STATUS_NOT_SUPPORTED
                                                                : STATUS_INVALID_DEVICE_REQUEST;
        Expectation e = h.model.expect(calls::ResizeCq{cq, 16});
        EXPECT_TRUE(fails_with(e, want, "MODEL-CQ-RESIZE-01")) << describe(e);
        // CQ-RESIZE-01: the caller's error; a success is a warning, not a failure.
        EXPECT_TRUE(
            warning_names(judge_inline(e, STATUS_SUCCESS, "NdkResizeCq"), "MODEL-CQ-RESIZE-01"));
        EXPECT_TRUE(warning_names(judge_inline(e, STATUS_INVALID_PARAMETER, "NdkResizeCq"),
                                  "MODEL-CQ-RESIZE-01"));
        Applied a = h.accept(calls::ResizeCq{cq, 16}, pending());
        EXPECT_TRUE(h.model.complete(a.pending, want).verdict.clean());
        EXPECT_EQ(h.model.state_of<CqState>(cq)->depth, 8u);  // keeps its depth
    }
}

TEST(InterruptModeration, SettingsInForce) {
    Harness h;
    ObjectId cq = h.cq(64);
    const CqState* s = h.model.state_of<CqState>(cq);
    EXPECT_EQ(s->interrupt_interval, 0u);  // CQ-IM-05: off at creation
    h.accept(calls::ControlCqInterruptModeration{cq, 100, 8});
    EXPECT_EQ(s->interrupt_interval, 100u);
    EXPECT_EQ(s->interrupt_count, 8u);
    h.accept(calls::ControlCqInterruptModeration{cq, 0, 8});  // CQ-IM-06: interval 0 is off
    EXPECT_EQ(s->interrupt_count, 0u);
    h.accept(calls::ControlCqInterruptModeration{cq, MAXULONG, 8});  // CQ-IM-07: count alone
    EXPECT_EQ(s->interrupt_interval, 0u);
    EXPECT_EQ(s->interrupt_count, 8u);
    h.accept(calls::ControlCqInterruptModeration{cq, 100, 1});  // AMB-24: count 1 is off
    EXPECT_EQ(s->interrupt_interval, 0u);
    h.accept(calls::ControlCqInterruptModeration{cq, 100, MAXULONG});  // CQ-IM-08: interval alone
    EXPECT_EQ(s->interrupt_interval, 100u);
    EXPECT_EQ(s->interrupt_count, 0u);
}

}  // namespace
}  // namespace ndkct::model::test
