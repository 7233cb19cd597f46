// The disagreements the property tests (conformance/properties) found between the oracle (check
// mode) and the reference provider (simulate mode), each settled from the documentation, with
// the sequence that showed it.
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

NDK_RESULT_EX entry(NTSTATUS s, Context qp_context, Context request, NDK_OPERATION_TYPE type) {
    NDK_RESULT_EX r{};
    r.Status = s;
    r.QPContext = pointer_of(qp_context);
    r.RequestContext = pointer_of(request);
    r.Type = type;
    return r;
}

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
        NDK_RESULT_EX cancelled = entry(STATUS_CANCELLED, p.ctx_b, 0x77, NdkOperationTypeReceive);
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
            p.cq_a, entry(STATUS_ACCESS_VIOLATION, p.ctx_a, 0x21, NdkOperationTypeWrite), true);
        v.merge(h.model.observe_completion(
            p.cq_a, entry(STATUS_CANCELLED, p.ctx_a, 0x22, NdkOperationTypeWrite), true));
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

}  // namespace
}  // namespace ndkct::model::test
