// The data path in simulate mode: two QPs connected through the model's own connection calls,
// registered memory and tokens, and Write/Read/Send/Receive moving real bytes in the arena; a
// failed access puts the QP in error and later requests complete with STATUS_CANCELLED.
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

class DataPath : public ::testing::Test {
  protected:
    Harness h;
    Pair p = h.connected_pair();
    LockedBuffer a_buf = h.arena.allocate(4 * PAGE_SIZE);
    LockedBuffer b_buf = h.arena.allocate(4 * PAGE_SIZE);
    Region a = h.register_mr(p.pd, a_buf, 0, 4 * PAGE_SIZE, 0xF);
    Region b = h.register_mr(p.pd, b_buf, 0, 4 * PAGE_SIZE, 0xF);

    std::vector<Completion> entries(ObjectId cq) { return h.drain(cq); }
};

// CONN-*: the loopback connection leaves both connectors established and the QPs connected to
// each other.
TEST_F(DataPath, ConnectionCallsConnectTheTwoQps) {
    const QpState* qa = h.model.state_of<QpState>(p.qp_a);
    const QpState* qb = h.model.state_of<QpState>(p.qp_b);
    ASSERT_TRUE(qa && qb);
    EXPECT_EQ(qa->connection, QpState::Connection::connected);
    EXPECT_EQ(qb->connection, QpState::Connection::connected);
    EXPECT_EQ(qa->peer, p.qp_b);
    EXPECT_EQ(qb->peer, p.qp_a);
    const auto* ca = h.model.state_of<ConnectorState>(qa->connector);
    const auto* cb = h.model.state_of<ConnectorState>(qb->connector);
    ASSERT_TRUE(ca && cb);
    EXPECT_EQ(ca->phase, ConnectorState::Phase::established);
    EXPECT_EQ(cb->phase, ConnectorState::Phase::established);
    // CONN-16: completing again is refused.
    EXPECT_TRUE(fails_with(h.model.expect(calls::CompleteConnect{qa->connector}),
                           STATUS_CONNECTION_INVALID, "CONN-16"));
}

// CONN-08: a connect to an address nobody listens on is refused.
TEST_F(DataPath, ConnectWithoutAListenerIsRefused) {
    ObjectId qp = h.qp(p.pd, p.cq_a, p.cq_a);
    ObjectId connector = h.create(calls::CreateConnector{h.adapter});
    Expectation e = h.model.expect(calls::Connect{connector, qp, ipv4(1), ipv4(9999), 0, 0, 0});
    EXPECT_TRUE(fails_with(e, STATUS_CONNECTION_REFUSED, "CONN-08")) << describe(e);
}

// WRT-01: an RDMA write lands at the remote address; the initiator gets one success entry.
TEST_F(DataPath, WriteMovesTheBytes) {
    fill(a_buf.bytes(), 1);
    h.accept(calls::Write{p.qp_a,
                          0x11,
                          {{a.va + 10, 1000, a.local}, {a.va + 3000, 2000, a.local}},
                          b.va + 5000,
                          b.remote,
                          0,
                          {}});
    auto done = entries(p.cq_a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].outcome, Completion::Outcome::success) << done[0].why;
    EXPECT_EQ(done[0].request_context, 0x11u);
    EXPECT_EQ(std::memcmp(b_buf.data() + 5000, a_buf.data() + 10, 1000), 0);
    EXPECT_EQ(std::memcmp(b_buf.data() + 6000, a_buf.data() + 3000, 2000), 0);
    EXPECT_TRUE(entries(p.cq_b).empty());  // a write consumes no receive
}

// RD-01: an RDMA read brings the remote bytes into the local SGEs.
TEST_F(DataPath, ReadMovesTheBytes) {
    fill(b_buf.bytes(), 2);
    h.accept(calls::Read{p.qp_a, 0x12, {{a.va, 3 * PAGE_SIZE, a.local}}, b.va + 123, b.remote, 0});
    auto done = entries(p.cq_a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].outcome, Completion::Outcome::success) << done[0].why;
    EXPECT_EQ(done[0].type, NdkOperationTypeRead);
    EXPECT_EQ(std::memcmp(a_buf.data(), b_buf.data() + 123, 3 * PAGE_SIZE), 0);
}

// SND-01, RCV-03, CQ-RES-01: a send fills the peer's next receive, whose entry reports the bytes;
// a send posted before any receive waits for one.
TEST_F(DataPath, SendFillsThePeersReceive) {
    fill(a_buf.bytes(), 3);
    h.accept(calls::Send{p.qp_a, 0x21, {{a.va + 7, 777, a.local}}, 0, {}});
    EXPECT_TRUE(entries(p.cq_a).empty());  // waiting for a receive
    EXPECT_EQ(h.model.outstanding_completions(p.qp_a), 0u);
    h.accept(calls::Receive{
        p.qp_b, 0x22, {{b.va, 100, b.local}, {b.va + PAGE_SIZE, PAGE_SIZE, b.local}}});
    auto sent = entries(p.cq_a);
    auto got = entries(p.cq_b);
    ASSERT_EQ(sent.size(), 1u);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(sent[0].type, NdkOperationTypeSend);
    EXPECT_EQ(got[0].type, NdkOperationTypeReceive);
    EXPECT_EQ(got[0].bytes_transferred, 777u);
    EXPECT_EQ(std::memcmp(b_buf.data(), a_buf.data() + 7, 100), 0);
    EXPECT_EQ(std::memcmp(b_buf.data() + PAGE_SIZE, a_buf.data() + 107, 677), 0);
}

// CQP-STATE-02: a receive posted before the connection takes data after it.
TEST_F(DataPath, ReceivePostedBeforeConnectingTakesDataAfterwards) {
    ObjectId cq = h.cq();
    ObjectId qa = h.qp(p.pd, cq, cq, 1), qb = h.qp(p.pd, cq, cq, 2);
    h.accept(calls::Receive{qb, 0x31, {{b.va, PAGE_SIZE, b.local}}});
    h.connect(qa, qb, 6000);
    fill(a_buf.bytes(), 4);
    h.accept(calls::Send{qa, 0x32, {{a.va, 64, a.local}}, 0, {}});
    auto all = entries(cq);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(std::memcmp(b_buf.data(), a_buf.data(), 64), 0);
}

// SGE-03, SGE-06: an inline send carries the bytes captured during the call.
TEST_F(DataPath, InlineSendCarriesItsPayload) {
    std::vector<std::byte> payload = pattern(48, 9);
    h.accept(calls::Receive{p.qp_b, 1, {{b.va, 64, b.local}}});
    h.accept(calls::Send{p.qp_a, 2, {{0xDEAD0000, 48, 0}}, NDK_OP_FLAG_INLINE, payload});
    auto got = entries(p.cq_b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].bytes_transferred, 48u);
    EXPECT_EQ(std::memcmp(b_buf.data(), payload.data(), 48), 0);
}

// MODEL-CQ-ERR-01, FLS-02: remote access without the right fails with an error entry; the QP is
// then in error: requests behind it, and later ones, complete with STATUS_CANCELLED, and so do
// its posted receives.
TEST_F(DataPath, RemoteAccessWithoutRightsFailsAndLaterRequestsAreCancelled) {
    LockedBuffer c_buf = h.arena.allocate(PAGE_SIZE);
    Region no_remote = h.register_mr(p.pd, c_buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    h.accept(calls::Receive{p.qp_a, 0x40, {{a.va, 64, a.local}}});
    h.accept(
        calls::Write{p.qp_a, 0x41, {{a.va, 64, a.local}}, no_remote.va, no_remote.remote, 0, {}});
    h.accept(calls::Write{p.qp_a, 0x42, {{a.va, 64, a.local}}, b.va, b.remote, 0, {}});
    h.accept(calls::Read{p.qp_a, 0x43, {{a.va, 64, a.local}}, b.va, b.remote, 0});
    auto done = entries(p.cq_a);
    ASSERT_EQ(done.size(), 4u);
    // The failed request's entry comes first, then the flushed ones in order.
    EXPECT_EQ(done[0].request_context, 0x41u);
    EXPECT_EQ(done[0].outcome, Completion::Outcome::error);
    EXPECT_EQ(done[0].status, STATUS_ACCESS_VIOLATION);
    EXPECT_TRUE(names(done[0].rules, "RMR-FLG-04")) << done[0].why;
    EXPECT_EQ(c_buf.data()[0], std::byte{0});
    size_t cancelled = 0;
    for (size_t i = 1; i < done.size(); ++i) {
        EXPECT_EQ(done[i].status, STATUS_CANCELLED) << i;
        cancelled += done[i].outcome == Completion::Outcome::cancelled;
    }
    EXPECT_EQ(cancelled, 3u);
    // The bytes of the cancelled write did not land.
    EXPECT_EQ(b_buf.data()[0], std::byte{0});
}

// A request whose local SGE names no valid token fails (local protection) and errors the QP.
TEST_F(DataPath, InvalidLocalTokenFails) {
    h.accept(calls::Write{p.qp_a, 0x51, {{a.va, 64, 0xBAD}}, b.va, b.remote, 0, {}});
    auto done = entries(p.cq_a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].outcome, Completion::Outcome::error);
    h.accept(calls::Write{p.qp_a, 0x52, {{a.va, 64, a.local}}, b.va, b.remote, 0, {}});
    done = entries(p.cq_a);
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].outcome, Completion::Outcome::cancelled);
}

// RCV-03, MODEL-CQ-ERR-01: a receive too small for the send fails at the receiver.
TEST_F(DataPath, ReceiveTooSmallFails) {
    h.accept(calls::Receive{p.qp_b, 0x61, {{b.va, 10, b.local}}});
    h.accept(calls::Send{p.qp_a, 0x62, {{a.va, 11, a.local}}, 0, {}});
    auto got = entries(p.cq_b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].outcome, Completion::Outcome::error);
    EXPECT_EQ(got[0].status, STATUS_BUFFER_TOO_SMALL);
    auto sent = entries(p.cq_a);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_NE(sent[0].outcome, Completion::Outcome::success);
}

// WR-SILENT-01: SILENT_SUCCESS leaves no entry on success, one on failure.
TEST_F(DataPath, SilentSuccessWriteLeavesNoEntry) {
    fill(a_buf.bytes(), 6);
    h.accept(calls::Write{
        p.qp_a, 0x71, {{a.va, 32, a.local}}, b.va, b.remote, NDK_OP_FLAG_SILENT_SUCCESS, {}});
    EXPECT_TRUE(entries(p.cq_a).empty());
    EXPECT_EQ(std::memcmp(b_buf.data(), a_buf.data(), 32), 0);
    h.accept(calls::Write{
        p.qp_a, 0x72, {{a.va, 32, a.local}}, b.va, 0xBAD, NDK_OP_FLAG_SILENT_SUCCESS, {}});
    auto failed = entries(p.cq_a);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].outcome, Completion::Outcome::error);
}

// FLS-01, FLS-02: NdkFlush cancels posted receives.
TEST_F(DataPath, FlushCancelsPostedReceives) {
    h.accept(calls::Receive{p.qp_b, 0x81, {{b.va, 64, b.local}}});
    h.accept(calls::Receive{p.qp_b, 0x82, {{b.va, 64, b.local}}});
    h.accept(calls::Flush{p.qp_b});
    auto got = entries(p.cq_b);
    ASSERT_EQ(got.size(), 2u);
    for (const auto& c : got)
        EXPECT_EQ(c.outcome, Completion::Outcome::cancelled);
}

// SAI-01, CQ-RES-07: NdkSendAndInvalidate invalidates the peer's token; the receiver's entry is a
// ReceiveAndInvalidate carrying it, and the token then reaches nothing.
TEST_F(DataPath, SendAndInvalidateInvalidatesThePeersToken) {
    LockedBuffer f = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(f, 0, PAGE_SIZE);
    ObjectId fr = h.fr_mr(p.pd, 1, true);
    h.accept(calls::FastRegister{p.qp_b, 1, fr, lam.pages, 0, PAGE_SIZE, 0x300000,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
    uint32_t token = h.remote_token(fr);
    entries(p.cq_b);
    h.accept(calls::Receive{p.qp_b, 2, {{b.va, 64, b.local}}});
    h.accept(calls::SendAndInvalidate{p.qp_a, 3, {{a.va, 8, a.local}}, 0, token, {}});
    auto got = entries(p.cq_b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].type, NdkOperationTypeReceiveAndInvalidate);
    EXPECT_TRUE(got[0].invalidated);
    EXPECT_EQ(got[0].invalidated_token, token);
    EXPECT_EQ(h.model.object_of_token(h.adapter, token, true), 0u);
    EXPECT_EQ(h.model.state_of<MrState>(fr)->phase, MrState::Phase::invalidated);
}

// CQ-NOT-01, CQ-NOT-06: an armed CQ is notified once by the next completion.
TEST_F(DataPath, ArmedCqIsNotifiedOnce) {
    h.model.take_events();
    h.accept(calls::ArmCq{p.cq_a, NDK_CQ_NOTIFY_ANY});
    h.accept(calls::Write{p.qp_a, 1, {{a.va, 8, a.local}}, b.va, b.remote, 0, {}});
    h.accept(calls::Write{p.qp_a, 2, {{a.va, 8, a.local}}, b.va, b.remote, 0, {}});
    size_t notifications = 0;
    for (const Event& e : h.model.take_events())
        notifications += e.kind == Event::Kind::cq_notification && e.object == p.cq_a;
    EXPECT_EQ(notifications, 1u);
}

// CLOSE-03 with a connected QP: closing it flushes what is posted.
TEST_F(DataPath, ClosingAQpFlushesItsReceives) {
    h.accept(calls::Receive{p.qp_b, 0x91, {{b.va, 64, b.local}}});
    Expectation e = h.model.expect(calls::CloseObject{p.qp_b});
    EXPECT_TRUE(e.must_pend);  // its connector is still open (LIFE-TREE-06)
    h.accept(calls::CloseObject{p.qp_b}, pending());
    auto got = entries(p.cq_b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].outcome, Completion::Outcome::cancelled);
}

}  // namespace
}  // namespace ndkct::model::test
