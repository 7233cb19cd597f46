// The disagreements the property tests (conformance/properties) found between the oracle (check
// mode) and the reference provider (simulate mode), each settled from the documentation, with
// the sequence that showed it.
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

ObjectId connector_of(const Harness& h, ObjectId qp) {
    return h.model.state_of<QpState>(qp)->connector;
}

// CLOSE-03, FLS-01, FLS-02: NdkReceive(qp), NdkCloseObject(qp) (pends: its connector is open),
// NdkCloseObject(connector). The close flushed the receive; its cancelled entry stays in the CQ
// after the QP's close completed, and the oracle takes it (once: CQ-GET-04).
TEST(PropertyFindings, FlushedEntriesOfAClosedQpStayInItsCq) {
    for (Mode mode : {Mode::simulate, Mode::check}) {
        Harness h(mode);
        Pair p = h.connected_pair();
        LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
        Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        h.accept(calls::Receive{p.qp_b, 0x77, {{r.va, 64, r.local}}});
        Applied closing = h.accept(calls::CloseObject{p.qp_b}, pending());
        ASSERT_NE(closing.pending, 0u);
        h.accept(calls::CloseObject{connector_of(h, p.qp_b)});
        if (mode == Mode::simulate) {
            bool closed = false;
            for (const Event& e : h.model.take_events())
                closed |= e.kind == Event::Kind::request_complete && e.pending == closing.pending;
            EXPECT_TRUE(closed) << "the QP's close did not complete with its connector closed";
        }
        EXPECT_TRUE(h.model.complete(closing.pending, STATUS_SUCCESS).verdict.clean());
        if (mode == Mode::simulate) {
            std::vector<Completion> left = h.drain(p.cq_b);
            ASSERT_EQ(left.size(), 1u) << "the cancelled receive left the CQ with its QP";
            EXPECT_EQ(left[0].status, STATUS_CANCELLED);
            EXPECT_EQ(left[0].request_context, 0x77u);
            continue;
        }
        NDK_RESULT_EX cancelled =
            cq_entry(STATUS_CANCELLED, p.ctx_b, 0x77, NdkOperationTypeReceive);
        Verdict v = h.model.observe_completion(p.cq_b, cancelled, true);
        EXPECT_TRUE(v.clean()) << v.describe();
        EXPECT_TRUE(
            violation_names(h.model.observe_completion(p.cq_b, cancelled, true), "CQ-GET-04"));
    }
}

// WR-04, CQP-STATE-01: NdkDisconnect(passive), NdkDisconnect(active), then NdkSend on the
// passive side's QP. Its own disconnect left it disconnected; the peer's disconnect event,
// however late it comes, does not make it usable again, so STATUS_CONNECTION_INVALID is right.
TEST(PropertyFindings, APeerDisconnectEventDoesNotReviveADisconnectedQp) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    ObjectId active = connector_of(h, p.qp_a), passive = connector_of(h, p.qp_b);
    h.accept(calls::Disconnect{passive});
    h.accept(calls::Disconnect{active});
    for (ObjectId c : {active, passive}) {
        Applied a = h.model.observe_event({Event::Kind::disconnect, c});
        EXPECT_TRUE(a.verdict.clean()) << a.verdict.describe();
    }
    for (ObjectId qp : {p.qp_a, p.qp_b})
        EXPECT_TRUE(fails_with(h.model.expect(calls::Send{qp, 0x10, {}, 0, {}}),
                               STATUS_CONNECTION_INVALID, "WR-04"));
}

// ...while a QP whose peer disconnected (and which did not disconnect itself) still counts as
// connected for posting (DISC-FLUSH-02: the event does not flush it).
TEST(PropertyFindings, APeerDisconnectLeavesAConnectedQpPosting) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    h.accept(calls::Disconnect{connector_of(h, p.qp_a)});
    EXPECT_TRUE(
        h.model.observe_event({Event::Kind::disconnect, connector_of(h, p.qp_b)}).verdict.clean());
    EXPECT_FALSE(h.model.expect(calls::Send{p.qp_b, 0x10, {}, 0, {}}).must_fail());
}

// DEFER-05 (consumer duty), DEFER-07, FLS-02: NdkWrite(DEFER) with a stray token, closed by a
// write without DEFER, then NdkFlush. With the chain closed before the flush, the reference
// (which holds the deferred write until the doorbell) and the oracle (which lets the provider
// run it at any time, DEFER-02) agree: the stray write fails, the one behind it is cancelled.
// (An open chain at the flush breaks DEFER-05: the property generator never makes one.)
TEST(PropertyFindings, AClosedDeferChainFlushesAlikeInBothModes) {
    for (Mode mode : {Mode::simulate, Mode::check}) {
        Harness h(mode);
        Pair p = h.connected_pair();
        LockedBuffer a_buf = h.arena.allocate(PAGE_SIZE), b_buf = h.arena.allocate(PAGE_SIZE);
        Region a = h.register_mr(p.pd, a_buf, 0, PAGE_SIZE, 0);
        Region b = h.register_mr(p.pd, b_buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        h.accept(calls::Write{
            p.qp_a, 0x21, {{a.va, 16, 0x5EED0000u}}, b.va, b.remote, NDK_OP_FLAG_DEFER, {}});
        h.accept(calls::Write{p.qp_a, 0x22, {{a.va, 16, a.local}}, b.va, b.remote, 0, {}});
        h.accept(calls::Flush{p.qp_a});
        if (mode == Mode::simulate) {
            std::vector<Completion> got = h.drain(p.cq_a);
            ASSERT_EQ(got.size(), 2u);
            EXPECT_EQ(got[0].request_context, 0x21u);
            EXPECT_TRUE(NT_ERROR(got[0].status) && got[0].status != STATUS_CANCELLED);
            EXPECT_EQ(got[1].request_context, 0x22u);
            EXPECT_EQ(got[1].status, STATUS_CANCELLED);
            continue;
        }
        Verdict v = h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_ACCESS_VIOLATION, p.ctx_a, 0x21, NdkOperationTypeWrite), true);
        v.merge(h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_CANCELLED, p.ctx_a, 0x22, NdkOperationTypeWrite), true));
        EXPECT_TRUE(v.clean()) << v.describe();
    }
}

// CQ-NOT-01, CQ-NOT-02, CQ-NOT-08: NdkArmCq while the outstanding arm's notification is owed.
// The provider may have fired before the new arm and the callback come after it; the new arm
// may then fire again for the entries there. Two notifications for what the oracle counts as
// one arm are therefore right; a third is not.
TEST(PropertyFindings, ALateNotificationOfAnEarlierArm) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    h.accept(calls::ArmCq{p.cq_b, NDK_CQ_NOTIFY_ANY});
    h.accept(calls::Receive{p.qp_b, 0x31, {{r.va, 64, r.local}}});
    h.accept(calls::Flush{p.qp_b});  // an entry: the arm's notification is owed
    h.accept(calls::ArmCq{p.cq_b, NDK_CQ_NOTIFY_ANY});
    Event notification{Event::Kind::cq_notification, p.cq_b};
    for (int i = 0; i < 2; ++i) {
        Applied a = h.model.observe_event(notification);
        EXPECT_TRUE(a.verdict.clean()) << i << ": " << a.verdict.describe();
    }
    EXPECT_TRUE(violation_names(h.model.observe_event(notification).verdict, "CQ-NOT-01"));
}

// MODEL-FLS-01 (found on rxe): NdkFlush(qp), then NdkSend(qp). The verbs provider flushes by
// moving the QP to the error state, so the send completes with STATUS_CANCELLED; the default
// reading (cancelled) expects that, "usable" expects the send to run.
TEST(PropertyFindings, APostAfterNdkFlushIsFlushedUnderTheDefaultReading) {
    for (const char* reading : {"cancelled", "usable"}) {
        Harness h(Mode::simulate, readings_with("post_after_flush", reading));
        Pair p = h.connected_pair();
        LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
        Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        h.accept(calls::Flush{p.qp_a});
        h.accept(calls::Receive{p.qp_b, 0x21, {{r.va, 64, r.local}}});
        h.accept(calls::Send{p.qp_a, 0x22, {{r.va, 8, r.local}}, 0, {}});
        std::vector<Completion> sent = h.drain(p.cq_a);
        ASSERT_EQ(sent.size(), 1u) << reading;
        EXPECT_EQ(sent[0].status,
                  std::string(reading) == "cancelled" ? STATUS_CANCELLED : STATUS_SUCCESS)
            << reading;
        // Cancelled, the send took no receive from the peer.
        EXPECT_EQ(h.drain(p.cq_b).size(), std::string(reading) == "cancelled" ? 0u : 1u) << reading;
    }
    // The default reading also lets a provider refuse the post inline.
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    h.accept(calls::Flush{p.qp_a});
    Expectation e = h.model.expect(calls::Send{p.qp_a, 0x23, {}, 0, {}});
    EXPECT_TRUE(e.may_fail_any);
}

// AMB-12, FLS-02 (found on rxe): NdkSend(qp_b) x2 with no receive at the peer (they wait), then
// NdkRead(qp_a) with a bad remote token. The read's remote access error moves qp_b, its
// responder, to the error state on InfiniBand, flushing the two waiting sends before the
// consumer flushed anything. The oracle takes their cancelled entries, and the QP counts as in
// error from then on.
TEST(PropertyFindings, APeersRemoteErrorMayFlushRequestsStillWaiting) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    h.accept(calls::Send{p.qp_b, 0x31, {{r.va, 4, r.local}}, 0, {}});
    h.accept(calls::Send{p.qp_b, 0x32, {{r.va, 4, r.local}}, 0, {}});
    h.accept(calls::Read{p.qp_a, 0x33, {{r.va, 4, r.local}}, r.va, 0xBAD0, 0});
    for (Context request : {0x31, 0x32}) {
        NDK_RESULT_EX flushed = cq_entry(STATUS_CANCELLED, p.ctx_b, request, NdkOperationTypeSend);
        Verdict v = h.model.observe_completion(p.cq_b, flushed, true);
        EXPECT_TRUE(v.clean()) << v.describe();
    }
    EXPECT_TRUE(h.model.state_of<QpState>(p.qp_b)->error);
    // Without the peer's failure, the same entry is a violation (CQ-GET-04).
    Harness quiet(Mode::check);
    Pair q = quiet.connected_pair();
    LockedBuffer b2 = quiet.arena.allocate(PAGE_SIZE);
    Region r2 = quiet.register_mr(q.pd, b2, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    quiet.accept(calls::Send{q.qp_b, 0x31, {{r2.va, 4, r2.local}}, 0, {}});
    EXPECT_TRUE(violation_names(
        quiet.model.observe_completion(
            q.cq_b, cq_entry(STATUS_CANCELLED, q.ctx_b, 0x31, NdkOperationTypeSend), true),
        "CQ-GET-04"));
}

// WR-04, DISC-FLUSH-01 (found on rxe): NdkReceive(qp), NdkCloseObject(its connector). Closing
// the connector of a connected QP tears the connection down like a disconnect: the receive is
// flushed (STATUS_CANCELLED) at once, in both modes, and a later post is flushed too.
TEST(PropertyFindings, ClosingAConnectedQpsConnectorFlushesTheQp) {
    for (Mode mode : {Mode::simulate, Mode::check}) {
        Harness h(mode);
        Pair p = h.connected_pair();
        LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
        Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        h.accept(calls::Receive{p.qp_b, 0x41, {{r.va, 64, r.local}}});
        h.accept(calls::CloseObject{connector_of(h, p.qp_b)}, pending());
        if (mode == Mode::simulate) {
            std::vector<Completion> left = h.drain(p.cq_b);
            ASSERT_EQ(left.size(), 1u);
            EXPECT_EQ(left[0].status, STATUS_CANCELLED);
            continue;
        }
        Verdict v = h.model.observe_completion(
            p.cq_b, cq_entry(STATUS_CANCELLED, p.ctx_b, 0x41, NdkOperationTypeReceive), true);
        EXPECT_TRUE(v.clean()) << v.describe();
        EXPECT_TRUE(h.model.expect(calls::Send{p.qp_b, 0x42, {}, 0, {}}).may_fail_any);
    }
}

// RD-01 (found on the shared-library reference run): NdkRead into two sink SGEs that overlap by
// one byte. Which SGE's byte stays there depends on the order the device writes them, which no
// page fixes: the oracle does not judge those bytes, whichever order the provider took.
TEST(PropertyFindings, OverlappingSinkSgesLeaveTheLandedBytesUnjudged) {
    for (bool second_last : {true, false}) {
        Harness h(Mode::check);
        Pair p = h.connected_pair();
        LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
        for (size_t i = 0; i < PAGE_SIZE; ++i)
            buf.data()[i] = std::byte(i * 7 + 1);
        Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE,
                                 NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ);
        // Source [0, 0x20); sinks [0x200, 0x210) and [0x20f, 0x21f): byte 0x20f twice.
        h.accept(calls::Read{p.qp_a,
                             0x51,
                             {{r.va + 0x200, 0x10, r.local}, {r.va + 0x20f, 0x10, r.local}},
                             r.va,
                             r.remote,
                             0});
        std::byte source[0x20];
        std::memcpy(source, buf.data(), sizeof source);
        if (second_last) {
            std::memcpy(buf.data() + 0x200, source, 0x10);
            std::memcpy(buf.data() + 0x20f, source + 0x10, 0x10);
        } else {
            std::memcpy(buf.data() + 0x20f, source + 0x10, 0x10);
            std::memcpy(buf.data() + 0x200, source, 0x10);
        }
        Verdict v = h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x51, NdkOperationTypeRead), true);
        EXPECT_TRUE(v.clean()) << (second_last ? "second SGE last: " : "first SGE last: ")
                               << v.describe();
    }
}

// AMB-12, MODEL-CQ-ERR-01 (found on rxe): NdkFlush(qp_a), then a zero-byte NdkRead on qp_b, its
// peer. qp_a, left in error by the flush, answers nothing; on rxe the read failed when its
// retries ran out (STATUS_IO_TIMEOUT). The read fails, whatever the error status; the reference
// provider fails it too, and qp_b is in error after it.
TEST(PropertyFindings, ARequestToAPeerInErrorFails) {
    for (Mode mode : {Mode::simulate, Mode::check}) {
        Harness h(mode);
        Pair p = h.connected_pair();
        LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
        Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ);
        h.accept(calls::Flush{p.qp_a});
        h.accept(calls::Read{p.qp_b, 0x61, {}, r.va, r.remote, 0});
        if (mode == Mode::simulate) {
            std::vector<Completion> got = h.drain(p.cq_b);
            ASSERT_EQ(got.size(), 1u);
            EXPECT_TRUE(NT_ERROR(got[0].status));
        } else {
            EXPECT_TRUE(h.model
                            .observe_completion(
                                p.cq_b,
                                cq_entry(STATUS_IO_TIMEOUT, p.ctx_b, 0x61, NdkOperationTypeRead),
                                true)
                            .clean());
        }
        EXPECT_TRUE(h.model.state_of<QpState>(p.qp_b)->error);
    }
}

// FLS-02, AMB-12, FR-SILENT-02 (found on rxe): NdkWrite(qp_b, SILENT_SUCCESS), then qp_b goes
// to error (NdkFlush of qp_b, or NdkRead(qp_a) with a bad token, which fails at qp_b, its
// responder). The oracle ran the write when it was posted, but the device may not have: a
// flushed or failed silent request has an entry, once. Without the error the same entry is a
// violation (of the success the write owed, WRT-01: an error entry is what SILENT_SUCCESS
// leaves), and a success entry is one in any case (WR-SILENT-01).
TEST(PropertyFindings, ASilentRequestMayBeFlushedWhenItsQpGoesToError) {
    for (int how : {0, 1, 2}) {  // 0: no error, 1: NdkFlush, 2: the peer's failure
        Harness h(Mode::check);
        Pair p = h.connected_pair();
        LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
        Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE,
                                 NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        h.accept(calls::Write{p.qp_b,
                              0x51,
                              {{r.va, 8, r.local}},
                              r.va + 64,
                              r.remote,
                              NDK_OP_FLAG_SILENT_SUCCESS,
                              {}});
        if (how == 1) h.accept(calls::Flush{p.qp_b});
        if (how == 2)
            h.accept(calls::Read{p.qp_a, 0x52, {{r.va + 256, 4, r.local}}, r.va, 0xBAD0, 0});
        NDK_RESULT_EX flushed = cq_entry(STATUS_CANCELLED, p.ctx_b, 0x51, NdkOperationTypeWrite);
        Verdict v = h.model.observe_completion(p.cq_b, flushed, true);
        if (how == 0) {
            EXPECT_TRUE(violation_names(v, "WRT-01")) << v.describe();
            EXPECT_TRUE(violation_names(v, "CQ-CST-01")) << v.describe();
            continue;
        }
        EXPECT_TRUE(v.clean()) << how << ": " << v.describe();
        EXPECT_FALSE(h.model.observe_completion(p.cq_b, flushed, true).clean())
            << how << ": taken twice";
    }
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE,
                             NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    h.accept(calls::Write{
        p.qp_b, 0x53, {{r.va, 8, r.local}}, r.va + 64, r.remote, NDK_OP_FLAG_SILENT_SUCCESS, {}});
    h.accept(calls::Flush{p.qp_b});
    EXPECT_TRUE(violation_names(
        h.model.observe_completion(
            p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0x53, NdkOperationTypeWrite), true),
        "WR-SILENT-01"));
}

// AMB-10, FR-TOK-01 (found on rxe): NdkRead(qp_a) with a bad local token (qp_a goes to error),
// NdkFastRegister(qp_a, mr) (flushed: it registers nothing), NdkInitializeFastRegisterMr(mr).
// The model ran the fast registration at posting and knows it flushed, so initializing the MR
// again is valid; but until its entry is retrieved the consumer cannot know whether the device
// ran it, so STATUS_INVALID_DEVICE_STATE (AMB-10's answer for a registered MR) is allowed too.
// Once the entry is taken, only success is.
TEST(PropertyFindings, InitializingAnMrWhoseFastRegisterIsInFlight) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE,
                             NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ);
    LockedBuffer f = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(f, 0, PAGE_SIZE);
    ObjectId mr = h.fr_mr(p.pd, 1, true);
    h.accept(calls::Read{p.qp_a, 0x61, {{r.va, 4, 0xBAD0}}, r.va, r.remote, 0});
    h.accept(calls::FastRegister{p.qp_a, 0x62, mr, lam.pages, 0, PAGE_SIZE, 0x800000, 0});
    calls::InitializeFastRegisterMr again{mr, 1, false};
    Expectation e = h.model.expect(again);
    EXPECT_FALSE(e.must_fail());
    EXPECT_TRUE(
        judge_inline(e, STATUS_INVALID_DEVICE_STATE, "NdkInitializeFastRegisterMr").clean());
    for (Context request : {0x61, 0x62})
        h.model.observe_completion(
            p.cq_a,
            cq_entry(request == 0x61 ? STATUS_ACCESS_VIOLATION : STATUS_CANCELLED, p.ctx_a, request,
                     request == 0x61 ? NdkOperationTypeRead : NdkOperationTypeFastRegister),
            true);
    EXPECT_FALSE(judge_inline(h.model.expect(again), STATUS_INVALID_DEVICE_STATE,
                              "NdkInitializeFastRegisterMr")
                     .clean());
}

// FLS-03 (found on rxe): NdkReceive(qp_b, 1 byte), NdkSend(qp_a, 2 bytes): the receive fails
// (too small) and qp_b goes to error, at a moment the consumer cannot know before an entry shows
// it (on rxe the send waited for the receive: the error came with a retry, later). A request
// qp_b posts meanwhile may run before the error: any outcome. Once the failed receive's entry is
// retrieved, the next post is flushed for certain.
TEST(PropertyFindings, APostBeforeTheConsumerSawItsQpFailMayRun) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE,
                             NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    h.accept(calls::Receive{p.qp_b, 0x71, {{r.va, 1, r.local}}});
    h.accept(calls::Send{p.qp_a, 0x72, {{r.va + 64, 2, r.local}}, 0, {}});
    h.accept(calls::Write{p.qp_b, 0x73, {{r.va + 128, 4, r.local}}, r.va + 256, r.remote, 0, {}});
    Verdict ran = h.model.observe_completion(
        p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0x73, NdkOperationTypeWrite), true);
    EXPECT_FALSE(violation_names(ran, "FLS-02")) << ran.describe();
    Verdict failed = h.model.observe_completion(
        p.cq_b, cq_entry(STATUS_INVALID_BUFFER_SIZE, p.ctx_b, 0x71, NdkOperationTypeReceive), true);
    EXPECT_TRUE(failed.ok()) << failed.describe();
    h.accept(calls::Write{p.qp_b, 0x74, {{r.va + 128, 4, r.local}}, r.va + 256, r.remote, 0, {}});
    EXPECT_TRUE(violation_names(
        h.model.observe_completion(
            p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0x74, NdkOperationTypeWrite), true),
        "FLS-02"));
}

// TOK-03, SGE-05 (found on rxe): NdkReceive(qp_b, {1 byte of a registered MR, 1 byte with
// token 0}), NdkSend(qp_a, 1 byte). The message fits the first SGE; the second is never looked
// at (rxe checks a token where it places bytes), so the receive succeeds. A 2-byte message
// reaches the bad SGE and fails.
TEST(PropertyFindings, ReceiveSgesTheMessageDoesNotReachAreNotChecked) {
    for (uint32_t bytes : {1u, 2u}) {
        Harness h(Mode::simulate);
        Pair p = h.connected_pair();
        LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
        Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        h.accept(calls::Receive{p.qp_b, 0x81, {{r.va, 1, r.local}, {r.va + 8, 1, 0}}});
        h.accept(calls::Send{p.qp_a, 0x82, {{r.va + 64, bytes, r.local}}, 0, {}});
        std::vector<Completion> got = h.drain(p.cq_b);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].status == STATUS_SUCCESS, bytes == 1) << bytes;
    }
}

// AMB-10, INV-01 (found on rxe): NdkSend(qp_a) with a stray token (qp_a goes to error),
// NdkInvalidate(qp_a, mr) (flushed: the MR stays registered), NdkInitializeFastRegisterMr(mr).
// Until the invalidation's entry is retrieved the consumer cannot know whether the device ran
// it: initializing the MR again may succeed (it did) or be refused (it did not).
TEST(PropertyFindings, InitializingAnMrWhoseInvalidationIsInFlight) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer f = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(f, 0, PAGE_SIZE);
    ObjectId mr = h.fr_mr(p.pd, 1, false);
    h.accept(calls::FastRegister{p.qp_b, 0x91, mr, lam.pages, 0, PAGE_SIZE, 0x800000, 0});
    h.model.observe_completion(
        p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0x91, NdkOperationTypeFastRegister), true);
    calls::InitializeFastRegisterMr again{mr, 1, false};
    EXPECT_TRUE(h.model.expect(again).must_fail());  // AMB-10: registered
    h.accept(calls::Send{p.qp_a, 0x92, {{0x1000, 1, 0xBAD0}}, 0, {}});
    h.accept(calls::Invalidate{p.qp_a, 0x93, mr, 0});
    Expectation e = h.model.expect(again);
    EXPECT_TRUE(judge_inline(e, STATUS_SUCCESS, "NdkInitializeFastRegisterMr").clean());
    EXPECT_TRUE(
        judge_inline(e, STATUS_INVALID_DEVICE_STATE, "NdkInitializeFastRegisterMr").clean());
}

// CLOSE-02, LIFE-TREE-06 (found on rxe): a QP whose only successor is a connector with its
// NdkConnect still pending may close at once (a connect that failed associates nothing any more,
// and the provider knows before its callback says so); with an established connector it pends.
TEST(PropertyFindings, AQpWhoseConnectIsPendingMayCloseAtOnce) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    EXPECT_TRUE(h.model.expect(calls::CloseObject{p.qp_a}).must_pend);
    ObjectId qp = h.qp(p.pd, p.cq_a, p.cq_a, 0xC);
    ObjectId connector = h.create(calls::CreateConnector{h.adapter});
    ObjectId listener = h.create(calls::CreateListener{h.adapter});
    h.accept(calls::Listen{listener, ipv4(7020)});
    h.accept(calls::Connect{connector, qp, {}, ipv4(7020), 4, 4, 0}, pending());
    Expectation e = h.model.expect(calls::CloseObject{qp});
    EXPECT_FALSE(e.must_pend);
    EXPECT_TRUE(judge_inline(e, STATUS_SUCCESS, "NdkCloseObject").clean());
}

// AMB-32, FLS-03 (found on rxe): NdkSend(qp_a) with a stray token (qp_a goes to error),
// NdkBind(qp_a, mr, mw) (flushed: the window stays unbound), NdkInvalidate(qp_b, mw). Until the
// bind's entry is retrieved the consumer cannot know it was flushed, nor may the provider: the
// invalidation may succeed. Without the bind in flight it must fail.
TEST(PropertyFindings, InvalidatingAWindowWhoseBindIsInFlight) {
    for (bool bind_first : {true, false}) {
        Harness h(Mode::check);
        Pair p = h.connected_pair();
        LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
        Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE,
                                 NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ);
        ObjectId mw = h.create(calls::CreateMw{p.pd});
        h.accept(calls::Send{p.qp_a, 0xA1, {{r.va, 1, 0xBAD0}}, 0, {}});
        if (bind_first)
            h.accept(calls::Bind{p.qp_a, 0xA2, r.mr, mw, r.va, 64, NDK_OP_FLAG_ALLOW_REMOTE_READ});
        h.accept(calls::Invalidate{p.qp_b, 0xA3, mw, 0});
        Verdict v = h.model.observe_completion(
            p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0xA3, NdkOperationTypeInvalidate), true);
        EXPECT_EQ(v.clean(), bind_first) << v.describe();
    }
}

// LIFE-TREE-04, FLS-02 (found on rxe): NdkSend(qp_b) with no receive at the peer (it waits),
// NdkBind(qp_b, mr, mw) behind it, NdkBind(qp_a, mr, mw), NdkFlush(qp_b). The flush undoes the
// first bind, but the second one stands: the window stays bound and the MR its antecedent, so
// the MR's close must still pend.
TEST(PropertyFindings, AFlushedBindDoesNotUndoALaterOne) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE,
                             NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ);
    ObjectId mw = h.create(calls::CreateMw{p.pd});
    h.accept(calls::Send{p.qp_b, 0xB1, {{r.va, 1, r.local}}, 0, {}});
    h.accept(calls::Bind{p.qp_b, 0xB2, r.mr, mw, r.va, 64, NDK_OP_FLAG_ALLOW_REMOTE_READ});
    h.accept(calls::Bind{p.qp_a, 0xB3, r.mr, mw, r.va, 32, NDK_OP_FLAG_ALLOW_REMOTE_READ});
    h.accept(calls::Flush{p.qp_b});
    EXPECT_TRUE(h.model.state_of<MwState>(mw)->bound);
    EXPECT_EQ(h.model.state_of<MwState>(mw)->region.length, 32u);
    EXPECT_TRUE(h.model.expect(calls::CloseObject{r.mr}).must_pend);
}

// WR-10, AMB-16 (found on rxe): NdkBind over a fast-register MR with no valid registration (a
// consumer error: the docs give no status) that the provider accepts. The state is unknown from
// then on, but the request was posted: it completes, and its entry, unjudged, is no stray
// (CQ-GET-04). So too for a request whose outcome is undefined.
TEST(PropertyFindings, AnAcceptedConsumerErrorRequestStillCompletes) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    ObjectId mr = h.fr_mr(p.pd, 1, false);
    ObjectId mw = h.create(calls::CreateMw{p.pd});
    calls::Bind bind{p.qp_a, 0xC1, mr, mw, 0x700000, 0, NDK_OP_FLAG_ALLOW_REMOTE_READ};
    Applied a = h.model.apply(bind, status(STATUS_SUCCESS));
    EXPECT_TRUE(a.verdict.ok()) << a.verdict.describe();  // a warning (AMB-16)
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_CANCELLED, p.ctx_a, 0xC1, NdkOperationTypeBind), true);
    EXPECT_TRUE(v.clean()) << v.describe();
    // The MR's state is unknown now, so a fast registration of it is not judged (undefined),
    // but its entry is no stray either.
    LockedBuffer f = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(f, 0, PAGE_SIZE);
    calls::FastRegister fr{p.qp_a, 0xC2, mr, lam.pages, 0, PAGE_SIZE, 0x700000, 0};
    EXPECT_TRUE(h.model.expect(fr).undefined);
    h.model.apply(fr, status(STATUS_SUCCESS));
    v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_CANCELLED, p.ctx_a, 0xC2, NdkOperationTypeFastRegister), true);
    EXPECT_TRUE(v.clean()) << v.describe();
}

// AMB-30, INV-01 (found on rxe): as above, NdkInvalidate(qp_a, mr) flushed behind a failed send,
// then NdkFastRegister(qp_b, mr) over the registration the model still counts in force. Until
// the invalidation's entry is retrieved the device may have run it: the registration may succeed.
TEST(PropertyFindings, FastRegisteringAnMrWhoseInvalidationIsInFlight) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer f = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(f, 0, PAGE_SIZE);
    ObjectId mr = h.fr_mr(p.pd, 1, false);
    h.accept(calls::FastRegister{p.qp_b, 0xD1, mr, lam.pages, 0, PAGE_SIZE, 0x800000, 0});
    h.model.observe_completion(
        p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0xD1, NdkOperationTypeFastRegister), true);
    h.accept(calls::Send{p.qp_a, 0xD2, {{0x1000, 1, 0xBAD0}}, 0, {}});
    h.accept(calls::Invalidate{p.qp_a, 0xD3, mr, 0});
    h.accept(calls::FastRegister{p.qp_b, 0xD4, mr, lam.pages, 0, PAGE_SIZE, 0x800000, 0});
    Verdict v = h.model.observe_completion(
        p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0xD4, NdkOperationTypeFastRegister), true);
    EXPECT_TRUE(v.clean()) << v.describe();
}

// FLS-03 (found on rxe): NdkSend(qp_a) waiting for a receive at the peer, NdkWrite(qp_a) with a
// bad token behind it, then NdkReceive(qp_b): the send goes, the write fails and qp_a goes to
// error, all when the device retries the send. A receive qp_a posted before that may still take
// a message and fail on its own account.
TEST(PropertyFindings, AnErrorBehindAWaitingSendComesLate) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    h.accept(calls::Send{p.qp_a, 0xE1, {{r.va, 1, r.local}}, 0, {}});
    h.accept(calls::Write{p.qp_a, 0xE2, {{r.va, 1, r.local}}, r.va + 64, 0xBAD0, 0, {}});
    h.accept(calls::Receive{p.qp_b, 0xE3, {{r.va + 128, 16, r.local}}});
    h.accept(calls::Receive{p.qp_a, 0xE4, {{r.va + 256, 16, r.local}}});
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_ACCESS_VIOLATION, p.ctx_a, 0xE4, NdkOperationTypeReceive), true);
    EXPECT_FALSE(violation_names(v, "FLS-02")) << v.describe();
}

// CQP-DEPTH-02, MODEL-WR-DEPTH-01 (bench, 200 calls, sequence seed 55): NdkSend(qp, DEFER),
// NdkRead(qp, DEFER) fill a QP of InitiatorQueueDepth=2 whose CQ has CqDepth=3 (1 receive + 2);
// a refused NdkInvalidate hands them to the hardware (DEFER-04); then NdkInvalidate(qp) is
// posted with both entries still in the CQ. The model checked the depth for sends, writes and
// reads only, so the reference provider accepted that third initiator request, its entry
// overran the CQ (CQ-STATUS-02) and every completion of the QP was lost, which the oracle
// reported as DEFER-04, WR-10. Memory requests are initiator requests too: past the depth they
// may be refused, and the reference provider refuses them (STATUS_INSUFFICIENT_RESOURCES).
TEST(PropertyFindings, MemoryRequestsPastTheInitiatorDepthMayBeRefused) {
    for (Mode mode : {Mode::simulate, Mode::check}) {
        Harness h(mode);
        Pair p = h.connected_pair();  // InitiatorQueueDepth 16
        LockedBuffer buffer = h.arena.allocate(2 * PAGE_SIZE);
        Lam lam = h.build_lam(buffer, 0, 2 * PAGE_SIZE);
        ObjectId fr = h.fr_mr(p.pd, 2, true);
        LockedBuffer plain = h.arena.allocate(PAGE_SIZE);
        Region reg = h.register_mr(p.pd, plain, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        ObjectId mw = h.create(calls::CreateMw{p.pd});
        const calls::FastRegister fast_register{
            p.qp_a, 0x1, fr, lam.pages, 0, 2 * PAGE_SIZE, 0x200000, NDK_OP_FLAG_ALLOW_REMOTE_WRITE};
        const calls::Bind bind{p.qp_a, 0x2, reg.mr, mw, reg.va, 64, NDK_OP_FLAG_ALLOW_REMOTE_WRITE};
        const calls::Invalidate invalidate{p.qp_a, 0x3, fr, 0};
        // Within the depth each is accepted as it is.
        EXPECT_EQ(h.model.expect(fast_register).preferred, STATUS_SUCCESS);
        h.accept(fast_register);
        EXPECT_EQ(h.model.expect(bind).preferred, STATUS_SUCCESS);
        h.accept(bind);
        // Sends wait for receives at the peer: with the two above, 16 outstanding.
        for (Context i = 0; i < 14; ++i)
            h.accept(calls::Send{p.qp_a, 0x300 + i, {{reg.va, 8, reg.local}}, 0, {}});
        auto beyond = [&](const Call& call) {
            Expectation e = h.model.expect(call);
            EXPECT_FALSE(e.must_fail()) << describe(e);  // a deeper queue may accept it
            EXPECT_TRUE(e.may_lack_resources) << describe(e);
            EXPECT_EQ(e.preferred, STATUS_INSUFFICIENT_RESOURCES) << describe(e);
        };
        beyond(invalidate);
        beyond(calls::Bind{bind.qp, 0x4, bind.mr, h.create(calls::CreateMw{p.pd}),
                           bind.virtual_address, bind.length, bind.flags});
        calls::FastRegister again = fast_register;
        again.request_context = 0x5;
        again.mr = h.fr_mr(p.pd, 2, true);
        beyond(again);
    }
}

}  // namespace
}  // namespace ndkct::model::test
