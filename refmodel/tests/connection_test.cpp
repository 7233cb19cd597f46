// Connections: a connect answered inline in check mode, private data limits and delivery
// (MODEL-CONN-PD-01, CONN-27), effective read limits (CONN-RL-01/02/03), addresses in use and
// ephemeral ports (CONN-09/12, CONN-LST-*, CONN-07/25/26, CONN-ADDR-03), disconnect callbacks
// once (CONN-DISC-02), lifetime edges (LIFE-TREE-06/07/08, CONN-LST-05) and a close that
// cancels what waits for a peer (CLOSE-08), with no events after a close (CLOSE-04).
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

class Connection : public ::testing::Test {
  protected:
    explicit Connection(Mode mode = Mode::simulate, Readings r = default_readings())
        : h(mode, std::move(r)) {}

    Harness h;
    ObjectId pd = h.pd(), cq = h.cq();
    ObjectId qp_a = h.qp(pd, cq, cq, 0xA), qp_b = h.qp(pd, cq, cq, 0xB);
    ObjectId listener = h.create(calls::CreateListener{h.adapter});
    ObjectId active = h.create(calls::CreateConnector{h.adapter});

    void listen(uint16_t port) { h.accept(calls::Listen{listener, ipv4(port)}); }
    // Simulate: the passive connector the connect request produced.
    ObjectId incoming() {
        for (const Event& e : h.model.take_events())
            if (e.kind == Event::Kind::connect_request) return e.created;
        return 0;
    }
};

// The open problem: a connect answered inline with STATUS_SUCCESS, then the provider's connect
// event: the oracle finds the connector (no false CONN-20).
class ConnectCheck : public Connection {
  protected:
    ConnectCheck() : Connection(Mode::check) {}
};

TEST_F(ConnectCheck, InlineSuccessThenConnectEvent) {
    listen(7000);
    h.accept(calls::Connect{active, qp_a, {}, ipv4(7000), 4, 4, 0}, status(STATUS_SUCCESS));
    Applied event = h.model.observe_event({Event::Kind::connect_request, listener});
    EXPECT_TRUE(event.verdict.clean()) << event.verdict.describe();
    ASSERT_NE(event.created, 0u);
    EXPECT_EQ(h.model.state_of<ConnectorState>(event.created)->peer, active);
    EXPECT_EQ(h.model.state_of<ConnectorState>(active)->peer, event.created);
}

// MODEL-CONN-PD-01: over MaxCallerData / MaxCalleeData the reference refuses; the docs make the
// limit the caller's (CONN-28), so a provider's acceptance is the reading not chosen (a warning).
TEST_F(Connection, PrivateDataOverTheLimitsIsRefused) {
    listen(7001);
    const auto& info = h.model.readings().adapter_info;
    Expectation e =
        h.model.expect(calls::Connect{active, qp_a, {}, ipv4(7001), 4, 4, info.MaxCallerData + 1});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "MODEL-CONN-PD-01")) << describe(e);
    EXPECT_TRUE(warning_names(judge_inline(e, STATUS_INVALID_DEVICE_REQUEST, "NdkConnect"),
                              "MODEL-CONN-PD-01"));
    Verdict accepted = judge_inline(e, STATUS_SUCCESS, "NdkConnect");
    EXPECT_TRUE(accepted.ok());
    EXPECT_TRUE(warning_names(accepted, "MODEL-CONN-PD-01"));
    // Within the limits: the peer is offered what was sent (CONN-27).
    h.accept(calls::Connect{active, qp_a, {}, ipv4(7001), 4, 4, info.MaxCallerData});
    ObjectId passive = incoming();
    ASSERT_NE(passive, 0u);
    EXPECT_EQ(h.model.state_of<ConnectorState>(passive)->private_data_length, info.MaxCallerData);
    Expectation a = h.model.expect(calls::Accept{passive, qp_b, 4, 4, info.MaxCalleeData + 1});
    EXPECT_TRUE(fails_with(a, STATUS_INVALID_PARAMETER, "MODEL-CONN-PD-01")) << describe(a);
    Expectation r = h.model.expect(calls::Reject{passive, info.MaxCalleeData + 1});
    EXPECT_TRUE(fails_with(r, STATUS_INVALID_PARAMETER, "MODEL-CONN-PD-01")) << describe(r);
}

TEST(ConnectionAnyError, PrivateDataOverTheLimitAnyErrorPasses) {
    Harness h(Mode::simulate, readings_with("private_data_over_limit", "any_error"));
    ObjectId pd = h.pd(), cq = h.cq();
    ObjectId qp = h.qp(pd, cq, cq);
    ObjectId listener = h.create(calls::CreateListener{h.adapter});
    h.accept(calls::Listen{listener, ipv4(7002)});
    ObjectId active = h.create(calls::CreateConnector{h.adapter});
    Expectation e = h.model.expect(calls::Connect{
        active, qp, {}, ipv4(7002), 4, 4, h.model.readings().adapter_info.MaxCallerData + 1});
    EXPECT_TRUE(judge_inline(e, STATUS_INVALID_DEVICE_REQUEST, "NdkConnect").clean());
    Verdict accepted = judge_inline(e, STATUS_SUCCESS, "NdkConnect");
    EXPECT_TRUE(accepted.ok());
    EXPECT_TRUE(warning_names(accepted, "MODEL-CONN-PD-01"));
}

// CONN-RL-01, CONN-RL-02, CONN-RL-03: capped at the adapter's maxima, lowered to the peer's.
TEST_F(Connection, EffectiveReadLimits) {
    listen(7003);
    const auto& info = h.model.readings().adapter_info;  // maxima 16 / 16
    Applied c = h.accept(calls::Connect{active, qp_a, {}, ipv4(7003), 100, 3, 0}, pending());
    ObjectId passive = incoming();
    ASSERT_NE(passive, 0u);
    const auto* p = h.model.state_of<ConnectorState>(passive);
    EXPECT_EQ(p->inbound_read_limit, 3u);  // what the active side reads from it at most
    EXPECT_EQ(p->outbound_read_limit, info.MaxOutboundReadLimit);
    Applied a = h.accept(calls::Accept{passive, qp_b, 2, 8, 0}, pending());
    const auto* act = h.model.state_of<ConnectorState>(active);
    EXPECT_EQ(act->inbound_read_limit, 8u);   // min(100 → 16, peer's outbound 8)
    EXPECT_EQ(act->outbound_read_limit, 2u);  // min(3, peer's inbound 2)
    h.model.take_events();
    EXPECT_TRUE(h.model.complete(c.pending, STATUS_SUCCESS).verdict.clean());
    Observed right;
    right.size_out = 0;
    right.inbound_read_limit = 8;
    right.outbound_read_limit = 2;
    EXPECT_TRUE(h.model.apply(calls::GetConnectionData{active, false, 0}, right).verdict.clean());
    Observed over = right;
    over.outbound_read_limit = 3;
    EXPECT_TRUE(violation_names(
        h.model.apply(calls::GetConnectionData{active, false, 0}, over).verdict, "CONN-RL-02"));
    Observed under = right;
    under.inbound_read_limit = 1;
    EXPECT_TRUE(warning_names(
        h.model.apply(calls::GetConnectionData{active, false, 0}, under).verdict, "CONN-RL-03"));
    h.accept(calls::CompleteConnect{active});
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_SUCCESS).verdict.clean());
    EXPECT_EQ(h.model.state_of<QpState>(qp_a)->outbound_read_limit, 2u);  // RD-08
    EXPECT_EQ(h.model.state_of<QpState>(qp_b)->outbound_read_limit, 8u);
}

// CLOSE-03, CLOSE-08 (found on rxe by the property tests): NdkConnect, the peer's NdkAccept,
// then NdkCloseObject of the connecting QP (it pends: the connector is its successor) before
// NdkCompleteConnect. The close starts cancelling the QP's work, and the connection being
// completed may go with it: STATUS_CONNECTION_ABORTED is allowed then, and only then.
TEST_F(Connection, CompleteConnectAfterItsQpsCloseBeganMayAbort) {
    listen(7010);
    Applied c = h.accept(calls::Connect{active, qp_a, {}, ipv4(7010), 4, 4, 0}, pending());
    ObjectId passive = incoming();
    ASSERT_NE(passive, 0u);
    h.accept(calls::Accept{passive, qp_b, 4, 4, 0}, pending());
    EXPECT_TRUE(h.model.complete(c.pending, STATUS_SUCCESS).verdict.clean());
    EXPECT_FALSE(judge_inline(h.model.expect(calls::CompleteConnect{active}),
                              STATUS_CONNECTION_ABORTED, "NdkCompleteConnect")
                     .ok());
    Applied closing = h.accept(calls::CloseObject{qp_a}, pending());
    EXPECT_NE(closing.pending, 0u);
    Expectation e = h.model.expect(calls::CompleteConnect{active});
    EXPECT_FALSE(e.must_fail());
    EXPECT_TRUE(judge_inline(e, STATUS_CONNECTION_ABORTED, "NdkCompleteConnect").clean());
}

// CONN-09, CONN-LST-01, CONN-LST-04, CONN-12: endpoints in use.
TEST_F(Connection, EndpointsInUse) {
    listen(7004);
    // A listener holds its endpoint: no second listener, no shared endpoint, no connect from it.
    ObjectId second = h.create(calls::CreateListener{h.adapter});
    EXPECT_TRUE(fails_with(h.model.expect(calls::Listen{second, ipv4(7004)}),
                           STATUS_SHARING_VIOLATION, "CONN-LST-01"));
    EXPECT_TRUE(fails_with(h.model.expect(calls::CreateSharedEndpoint{h.adapter, ipv4(7004)}),
                           STATUS_SHARING_VIOLATION, "CONN-LST-04"));
    EXPECT_TRUE(
        fails_with(h.model.expect(calls::Connect{active, qp_a, ipv4(7004), ipv4(7004), 4, 4, 0}),
                   STATUS_SHARING_VIOLATION, "CONN-09"));
    // CONN-12: the four-tuple of an existing connection.
    h.accept(calls::Connect{active, qp_a, ipv4(7005, 2), ipv4(7004), 4, 4, 0});
    ObjectId other = h.create(calls::CreateConnector{h.adapter});
    Expectation dup =
        h.model.expect(calls::Connect{other, qp_b, ipv4(7005, 2), ipv4(7004), 4, 4, 0});
    EXPECT_TRUE(fails_with(dup, STATUS_SHARING_VIOLATION, "CONN-09") ||
                fails_with(dup, STATUS_ADDRESS_ALREADY_EXISTS, "CONN-12"))
        << describe(dup);
}

// CONN-07, CONN-25, CONN-LST-01/02 (found by CI: ndk.general.event_contexts): in check mode the
// oracle does not learn the port a provider picked for a connector's own endpoint. A later
// listen or shared endpoint on a port of the ephemeral range may be that port: a refusal there is
// right. Below the range, and once the connector is closed, the request must succeed.
TEST_F(ConnectCheck, APortTheProviderMayHavePickedMayBeRefused) {
    listen(7020);
    h.accept(calls::Connect{active, qp_a, {}, ipv4(7020), 4, 4, 0}, status(STATUS_SUCCESS));
    ObjectId second = h.create(calls::CreateListener{h.adapter});
    Expectation picked = h.model.expect(calls::Listen{second, ipv4(49160)});
    EXPECT_FALSE(picked.must_fail()) << describe(picked);
    EXPECT_TRUE(judge_inline(picked, STATUS_SHARING_VIOLATION, "NdkListen").clean())
        << describe(picked);
    EXPECT_TRUE(judge_inline(picked, STATUS_SUCCESS, "NdkListen").clean());
    Expectation shared = h.model.expect(calls::CreateSharedEndpoint{h.adapter, ipv4(49160)});
    EXPECT_TRUE(judge_inline(shared, STATUS_SHARING_VIOLATION, "NdkCreateSharedEndpoint").clean())
        << describe(shared);
    // Below the ephemeral range no port was picked: the refusal is a violation.
    Expectation fixed = h.model.expect(calls::Listen{second, ipv4(40000)});
    EXPECT_FALSE(judge_inline(fixed, STATUS_SHARING_VIOLATION, "NdkListen").ok())
        << describe(fixed);
    // With the connector closed its endpoint is released (CONN-LST-02).
    h.accept(calls::CloseObject{active});
    Expectation released = h.model.expect(calls::Listen{second, ipv4(49160)});
    EXPECT_FALSE(judge_inline(released, STATUS_SHARING_VIOLATION, "NdkListen").ok())
        << describe(released);
}

// CONN-07, CONN-25, CONN-26, CONN-ADDR-03: ports the provider picks.
TEST_F(Connection, EphemeralPortsAreReportedAndChecked) {
    h.accept(calls::Listen{listener, ipv4(0)});
    const auto* l = h.model.state_of<ListenerState>(listener);
    EXPECT_GE(l->address.port, 49152u);
    Observed o;
    o.size_out = 16;
    o.address = l->address;
    EXPECT_TRUE(h.model.apply(calls::GetLocalAddress{listener, 16}, o).verdict.clean());
    Observed wrong = o;
    wrong.address->port = 1234;
    EXPECT_TRUE(violation_names(h.model.apply(calls::GetLocalAddress{listener, 16}, wrong).verdict,
                                "CONN-25"));
    ObjectId endpoint = h.create(calls::CreateSharedEndpoint{h.adapter, ipv4(0)});
    const auto* se = h.model.state_of<SharedEndpointState>(endpoint);
    EXPECT_TRUE(se->ephemeral);
    EXPECT_GE(se->address.port, 49152u);
}

TEST_F(ConnectCheck, APickedPortIsLearntFromTheAddressGetter) {
    h.accept(calls::Listen{listener, ipv4(0)});
    Observed o;
    o.size_out = 16;
    o.address = ipv4(50123);
    EXPECT_TRUE(h.model.apply(calls::GetLocalAddress{listener, 16}, o).verdict.clean());
    EXPECT_EQ(h.model.state_of<ListenerState>(listener)->address.port, 50123u);
    // A connect to the learnt port finds the listener (no CONN-08).
    EXPECT_FALSE(
        h.model.expect(calls::Connect{active, qp_a, {}, ipv4(50123), 4, 4, 0}).must_fail());
}

// CONN-DISC-02: the peer's disconnect callback, once; none without a registered callback.
TEST(DisconnectEvents, OnceAndOnlyWhenRegistered) {
    Harness h(Mode::check);
    Pair p = h.connected_pair();
    ObjectId active = 0, passive = 0;
    for (ObjectId i = 1; i <= h.model.object_count(); ++i)
        if (const auto* c = h.model.state_of<ConnectorState>(i);
            c && c->phase == ConnectorState::Phase::established)
            (c->listener ? passive : active) = i;
    ASSERT_NE(active, 0u);
    ASSERT_NE(passive, 0u);
    h.accept(calls::Disconnect{active});
    EXPECT_TRUE(h.model.observe_event({Event::Kind::disconnect, passive}).verdict.clean());
    EXPECT_TRUE(violation_names(h.model.observe_event({Event::Kind::disconnect, passive}).verdict,
                                "CONN-DISC-02"));
    (void)p;
}

// LIFE-TREE-06/07, CONN-LST-05: a failed connect associates nothing; a connector connected
// through a shared endpoint holds the endpoint's close.
TEST_F(Connection, EdgesOfConnectors) {
    // No listener: refused through the callback. The QP is free to close at once.
    Applied refused = h.accept(calls::Connect{active, qp_a, {}, ipv4(7010), 4, 4, 0}, pending());
    EXPECT_TRUE(h.model.complete(refused.pending, STATUS_CONNECTION_REFUSED).verdict.clean());
    EXPECT_FALSE(h.model.expect(calls::CloseObject{qp_a}).must_pend);
    // A valid connect that the peer rejects: the edge it made is undone.
    listen(7011);
    ObjectId c2 = h.create(calls::CreateConnector{h.adapter});
    Applied connecting = h.accept(calls::Connect{c2, qp_a, {}, ipv4(7011), 4, 4, 0}, pending());
    EXPECT_TRUE(h.model.expect(calls::CloseObject{qp_a}).must_pend);  // LIFE-TREE-06
    ObjectId passive = incoming();
    ASSERT_NE(passive, 0u);
    EXPECT_TRUE(
        h.model.expect(calls::CloseObject{listener}).must_pend);  // LIFE-TREE-08, CONN-LST-05
    h.accept(calls::Reject{passive, 0});
    h.model.take_events();
    EXPECT_TRUE(h.model.complete(connecting.pending, STATUS_CONNECTION_REFUSED).verdict.clean());
    EXPECT_FALSE(h.model.expect(calls::CloseObject{qp_a}).must_pend);
    // LIFE-TREE-07: the shared endpoint waits for its connector.
    ObjectId endpoint = h.create(calls::CreateSharedEndpoint{h.adapter, ipv4(7012)});
    ObjectId c3 = h.create(calls::CreateConnector{h.adapter});
    h.accept(calls::ConnectWithSharedEndpoint{c3, qp_b, endpoint, ipv4(7011), 4, 4, 0}, pending());
    EXPECT_TRUE(h.model.expect(calls::CloseObject{endpoint}).must_pend);
}

// CLOSE-08: closing a connector whose connect waits for the peer cancels the connect, so the
// close does not wait forever; CLOSE-04: no event for a closed object.
TEST_F(Connection, CloseCancelsAWaitingConnect) {
    listen(7020);
    Applied connecting = h.accept(calls::Connect{active, qp_a, {}, ipv4(7020), 4, 4, 0}, pending());
    h.model.take_events();
    Applied closing = h.accept(calls::CloseObject{active}, pending());
    bool cancelled = false;
    for (const Event& e : h.model.take_events())
        cancelled |= e.kind == Event::Kind::request_complete && e.pending == connecting.pending &&
                     e.status == STATUS_CANCELLED;
    EXPECT_TRUE(cancelled);
    EXPECT_TRUE(h.model.complete(connecting.pending, STATUS_CANCELLED).verdict.clean());
    bool closed = false;
    for (const Event& e : h.model.take_events())
        closed |= e.kind == Event::Kind::request_complete && e.pending == closing.pending;
    EXPECT_TRUE(closed);
    EXPECT_TRUE(h.model.complete(closing.pending, STATUS_SUCCESS).verdict.clean());
    EXPECT_EQ(h.model.find(active)->life, Life::closed);
}

}  // namespace
}  // namespace ndkct::model::test
