// Connection establishment, refusal, connection data, addresses and disconnects (CONN-*),
// close ordering (LIFE-TREE-*, CLOSE-*), and QP operations around connection state (FLS-*,
// RCV-*, BND-*, INV-*, initiator calls on an unconnected QP).
//
// Every call goes through the Session, so the oracle judges each one.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <span>
#include <thread>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(Connection);
NDKCT_SUITE(Lifetime);
NDKCT_SUITE(QpOperations);

using seed::as_sockaddr;
using seed::loopback4;
using seed::test_port;

void fill(platform::LockedBuffer& b, uint8_t seed) {
    for (size_t i = 0; i < b.size(); ++i)
        b.data()[i] = std::byte(uint8_t(i * 13 + seed));
}

// A PD, a CQ and one QP that is not connected.
struct LoneQp {
    NDK_PD* pd = nullptr;
    NDK_CQ* cq = nullptr;
    NDK_QP* qp = nullptr;
};

LoneQp lone_qp(Session& s) {
    LoneQp q;
    q.pd = s.create_pd().object;
    q.cq = s.create_cq(64).object;
    static int context;
    if (q.pd && q.cq) q.qp = s.create_qp(q.pd, q.cq, q.cq, &context, QpShape{}).object;
    return q;
}

// ---------------- Connection ----------------

NDKCT_TEST(Connection, ConnectToAPortNobodyListensOnIsRefused,
           "ndk.conn.connect.no_listener_refused", "CONN-08") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto connector = session().create_connector();
    ASSERT_TRUE(connector.object);
    sockaddr_in nowhere = loopback4(test_port(0));
    Done d = session().connect(connector.object, q.qp, as_sockaddr(nowhere), sizeof nowhere);
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, d.final_status);
}

NDKCT_TEST(Connection, RefusedConnectMayBeRetried, "ndk.conn.connect.retry_after_refused",
           "CONN-08") {
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    static int ca, cb;
    auto a = session().create_qp(pd.object, cq.object, cq.object, &ca, QpShape{});
    auto b = session().create_qp(pd.object, cq.object, cq.object, &cb, QpShape{});
    auto connector = session().create_connector();
    auto listener = session().create_listener();
    ASSERT_TRUE(a.object && b.object && connector.object && listener.object);
    sockaddr_in address = loopback4(test_port(6));
    Done refused =
        session().connect(connector.object, a.object, as_sockaddr(address), sizeof address);
    ASSERT_STATUS(STATUS_CONNECTION_REFUSED, refused.final_status);
    // Someone listens now; the same connector and QP try again.
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    NTSTATUS s =
        session().connect_async(connector.object, a.object, as_sockaddr(address), sizeof address);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive) << "the retry reaches the listener";
    s = session().accept_async(passive, b.object);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    EXPECT_TRUE(session().wait_connect(connector.object).ok());
    EXPECT_TRUE(session().complete_connect(connector.object).ok());
    EXPECT_TRUE(session().wait_accept(passive).ok());
}

NDKCT_TEST(Connection, RejectRefusesTheActiveConnect, "ndk.conn.reject.active_sees_refused",
           "CONN-23", "CONN-08") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto listener = session().create_listener();
    auto connector = session().create_connector();
    ASSERT_TRUE(listener.object && connector.object);
    sockaddr_in address = loopback4(test_port(1));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    NTSTATUS s =
        session().connect_async(connector.object, q.qp, as_sockaddr(address), sizeof address);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    NDK_CONNECTOR* incoming = session().wait_connect_event(listener.object);
    ASSERT_TRUE(incoming) << "no connect event reached the listener";
    const std::array<uint8_t, 8> reason{1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_STATUS(STATUS_SUCCESS, session().reject(incoming, reason));
    Done d = session().wait_connect(connector.object);
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, d.final_status);
}

NDKCT_TEST(Connection, CompleteConnectWithoutAConnectIsInvalid,
           "ndk.conn.complete_connect.not_connecting", "CONN-16") {
    auto connector = session().create_connector();
    ASSERT_TRUE(connector.object);
    Done d = session().complete_connect(connector.object);
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, d.final_status);
}

NDKCT_TEST(Connection, SecondCompleteConnectIsInvalid,
           "ndk.conn.complete_connect.already_connected", "CONN-16") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    Done d = session().complete_connect(pair.active);
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, d.final_status);
}

NDKCT_TEST(Connection, CompleteConnectAfterARefusalIsInvalid,
           "ndk.conn.complete_connect.after_refused", "CONN-16", "CONN-08") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto connector = session().create_connector();
    ASSERT_TRUE(connector.object);
    sockaddr_in nowhere = loopback4(test_port(7));
    ASSERT_STATUS(STATUS_CONNECTION_REFUSED,
                  session()
                      .connect(connector.object, q.qp, as_sockaddr(nowhere), sizeof nowhere)
                      .final_status);
    EXPECT_STATUS(STATUS_CONNECTION_INVALID,
                  session().complete_connect(connector.object).final_status);
}

NDKCT_TEST(Connection, ConnectionDataProbeAndCopy, "ndk.conn.connection_data.probe_and_copy",
           "CONN-PD-01", "CONN-PD-03", "CONN-PD-04", "CONN-PD-05", "CONN-PD-08") {
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    static int ca, cb;
    auto a = session().create_qp(pd.object, cq.object, cq.object, &ca, QpShape{});
    auto b = session().create_qp(pd.object, cq.object, cq.object, &cb, QpShape{});
    auto listener = session().create_listener();
    auto active = session().create_connector();
    ASSERT_TRUE(a.object && b.object && listener.object && active.object);
    sockaddr_in address = loopback4(test_port(2));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    const std::array<uint8_t, 20> hello{'h', 'e', 'l', 'l', 'o', 1,  2,  3,  4,  5,
                                        6,   7,   8,   9,   10,  11, 12, 13, 14, 15};
    NTSTATUS s = session().connect_async(active.object, a.object, as_sockaddr(address),
                                         sizeof address, 4, 4, hello);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive) << "no connect event reached the listener";

    // Passive side: the probe, a short buffer, a full buffer.
    ConnectionData probe = session().get_connection_data(passive, 0, false, false);
    EXPECT_STATUS(STATUS_SUCCESS, probe.status);
    ULONG rds = probe.length;
    ASSERT_GE(rds, hello.size()) << "the request carried 20 bytes of private data";
    ConnectionData short_copy = session().get_connection_data(passive, 4);
    EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, short_copy.status);
    EXPECT_EQ(short_copy.length, rds) << "RDS is stored whatever the result";
    EXPECT_EQ(std::memcmp(short_copy.data.data(), hello.data(), 4), 0)
        << "min(length, RDS) bytes are copied";
    ConnectionData full = session().get_connection_data(passive, rds);
    EXPECT_STATUS(STATUS_SUCCESS, full.status);
    EXPECT_EQ(full.length, rds);
    EXPECT_EQ(std::memcmp(full.data.data(), hello.data(), hello.size()), 0);

    // Active side: the accept's private data, once the connect completed.
    const std::array<uint8_t, 12> welcome{'w', 'e', 'l', 'c', 'o', 'm', 'e', 9, 8, 7, 6, 5};
    s = session().accept_async(passive, b.object, 4, 4, welcome);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    Done connected = session().wait_connect(active.object);
    ASSERT_TRUE(connected.ok()) << spec::status_name(connected.final_status);
    ConnectionData active_probe = session().get_connection_data(active.object, 0, false);
    EXPECT_STATUS(STATUS_SUCCESS, active_probe.status);
    ASSERT_GE(active_probe.length, welcome.size());
    ConnectionData reply = session().get_connection_data(active.object, active_probe.length);
    EXPECT_STATUS(STATUS_SUCCESS, reply.status);
    EXPECT_EQ(reply.length, active_probe.length);
    EXPECT_EQ(std::memcmp(reply.data.data(), welcome.data(), welcome.size()), 0);
    EXPECT_TRUE(session().complete_connect(active.object).ok());
    EXPECT_TRUE(session().wait_accept(passive).ok());
}

NDKCT_TEST(Connection, AddressGettersReportSizeAndAddress, "ndk.conn.addresses.size_and_value",
           "CONN-ADDR-01", "CONN-ADDR-02", "CONN-ADDR-03") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;

    // The listener's own address: too small, then enough.
    AddressResult small = session().local_address(pair.listener, 2);
    EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, small.status);
    EXPECT_EQ(small.length, sizeof(sockaddr_in));
    AddressResult bound = session().local_address(pair.listener);
    ASSERT_STATUS(STATUS_SUCCESS, bound.status);
    EXPECT_EQ(bound.length, sizeof(sockaddr_in));
    EXPECT_EQ(bound.family(), AF_INET);

    for (NDK_CONNECTOR* c : {pair.active, pair.passive}) {
        AddressResult none = session().local_address(c, 0);
        EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, none.status);
        EXPECT_EQ(none.length, sizeof(sockaddr_in));
        AddressResult three = session().peer_address(c, 3);
        EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, three.status);
        EXPECT_EQ(three.length, sizeof(sockaddr_in));
        AddressResult local = session().local_address(c);
        ASSERT_STATUS(STATUS_SUCCESS, local.status);
        EXPECT_EQ(local.length, sizeof(sockaddr_in));
        AddressResult peer = session().peer_address(c);
        ASSERT_STATUS(STATUS_SUCCESS, peer.status);
        EXPECT_EQ(peer.length, sizeof(sockaddr_in));
        EXPECT_EQ(local.family(), AF_INET);
        EXPECT_EQ(peer.family(), AF_INET);
    }
    // The active side's peer is the listener's port; the passive side's local port is too.
    AddressResult active_peer = session().peer_address(pair.active);
    AddressResult passive_local = session().local_address(pair.passive);
    EXPECT_EQ(active_peer.port(), bound.port());
    EXPECT_EQ(passive_local.port(), bound.port());
    EXPECT_EQ(reinterpret_cast<const sockaddr_in*>(active_peer.address())->sin_addr.s_addr,
              htonl(INADDR_LOOPBACK));
}

NDKCT_TEST(Connection, DisconnectFlushesAndThePeerHearsOnce, "ndk.conn.disconnect.flush_and_event",
           "CONN-DISC-01", "CONN-DISC-02", "DISC-FLUSH-01", "FLS-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto in = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    int first, second;
    NDK_SGE sge = Session::sge(in, 0, 256, r.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.a, &first, {&sge, 1}));
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.a, &second, {&sge, 1}));
    Done d = session().disconnect(pair.active);
    EXPECT_STATUS(STATUS_SUCCESS, d.final_status);
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& result : results) {
        EXPECT_STATUS(STATUS_CANCELLED, result.Status);
        EXPECT_TRUE(result.RequestContext == &first || result.RequestContext == &second);
    }
    // The passive side hears of it exactly once.
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(std::chrono::seconds(5));
    while (session().disconnect_events(pair.passive) == 0 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(session().disconnect_events(pair.passive), 1u);
}

NDKCT_TEST(Connection, PausedListenerRefusesAndResumes, "ndk.conn.listener.pause_resume",
           "CONN-CTL-01", "CONN-CTL-02", "CONN-08") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto listener = session().create_listener();
    auto first = session().create_connector();
    ASSERT_TRUE(listener.object && first.object);
    sockaddr_in address = loopback4(test_port(3));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    session().control_connect_events(listener.object, true);
    Done refused = session().connect(first.object, q.qp, as_sockaddr(address), sizeof address);
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, refused.final_status);
    EXPECT_EQ(session().wait_connect_event(listener.object, std::chrono::milliseconds(50)), nullptr)
        << "no connect event while paused";
    session().control_connect_events(listener.object, false);
    auto second = session().create_connector();
    ASSERT_TRUE(second.object);
    NTSTATUS s = session().connect_async(second.object, q.qp, as_sockaddr(address), sizeof address);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    NDK_CONNECTOR* incoming = session().wait_connect_event(listener.object);
    ASSERT_TRUE(incoming) << "a request after the resume reaches the listener";
    EXPECT_STATUS(STATUS_SUCCESS, session().reject(incoming));
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, session().wait_connect(second.object).final_status);
}

NDKCT_TEST(Connection, Ipv6LoopbackConnects, "ndk.conn.ipv6.loopback_connects", "CONN-IP-01") {
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    static int ca, cb;
    auto a = session().create_qp(pd.object, cq.object, cq.object, &ca, QpShape{});
    auto b = session().create_qp(pd.object, cq.object, cq.object, &cb, QpShape{});
    auto listener = session().create_listener();
    auto active = session().create_connector();
    ASSERT_TRUE(a.object && b.object && listener.object && active.object);
    sockaddr_in6 address{};
    address.sin6_family = AF_INET6;
    address.sin6_port = htons(test_port(4));
    address.sin6_addr = in6addr_loopback;
    const auto* sa = reinterpret_cast<const sockaddr*>(&address);
    Done listening = session().listen(listener.object, sa, sizeof address);
    ASSERT_STATUS(STATUS_SUCCESS, listening.final_status);
    NTSTATUS s = session().connect_async(active.object, a.object, sa, sizeof address);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive) << "no connect event reached the listener";
    s = session().accept_async(passive, b.object);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    EXPECT_TRUE(session().wait_connect(active.object).ok());
    EXPECT_TRUE(session().complete_connect(active.object).ok());
    EXPECT_TRUE(session().wait_accept(passive).ok());
    AddressResult peer = session().peer_address(active.object);
    ASSERT_STATUS(STATUS_SUCCESS, peer.status);
    EXPECT_EQ(peer.length, sizeof(sockaddr_in6));
    EXPECT_EQ(peer.family(), AF_INET6);
}

// ---------------- Establishment, endpoints and read limits (CONN-*) ----------------

// A PD, a CQ and two unconnected QPs.
struct TwoQps {
    NDK_PD* pd = nullptr;
    NDK_CQ* cq = nullptr;
    NDK_QP* a = nullptr;
    NDK_QP* b = nullptr;
    bool ok() const { return a && b; }
};

TwoQps two_qps(Session& s, ULONG cq_depth = 256) {
    TwoQps t;
    t.pd = s.create_pd().object;
    t.cq = s.create_cq(cq_depth).object;
    static int ca, cb;
    if (t.pd && t.cq) {
        t.a = s.create_qp(t.pd, t.cq, t.cq, &ca, QpShape{}).object;
        t.b = s.create_qp(t.pd, t.cq, t.cq, &cb, QpShape{}).object;
    }
    return t;
}

// An address in RFC 5737's TEST-NET-1: never an adapter's own, never a reachable host.
sockaddr_in documentation4(uint16_t port) {
    sockaddr_in a = loopback4(port);
    a.sin_addr.s_addr = htonl(0xC0000201);  // 192.0.2.1
    return a;
}

bool started(NTSTATUS s) {
    return s == STATUS_PENDING || s == STATUS_SUCCESS;
}

// The first half of the handshake most connection tests share: a listener on 127.0.0.1:port, a
// connector whose NdkConnect from qp is under way, and the passive connector the listener's
// connect event handed out. `problem` names the step that failed (empty when none did).
struct HalfHandshake {
    Made<NDK_LISTENER> listener;
    Made<NDK_CONNECTOR> active;
    sockaddr_in address{};
    NDK_CONNECTOR* passive = nullptr;
    std::string problem;
};

HalfHandshake start_handshake(Session& s, NDK_QP* qp, uint16_t port, ULONG ird = 4, ULONG ord = 4,
                              std::span<const uint8_t> private_data = {}) {
    HalfHandshake h;
    h.listener = s.create_listener();
    h.active = s.create_connector();
    if (!h.listener.object || !h.active.object) {
        h.problem = "NdkCreateListener or NdkCreateConnector failed";
        return h;
    }
    h.address = loopback4(port);
    if (!s.listen(h.listener.object, as_sockaddr(h.address), sizeof h.address).ok()) {
        h.problem = "NdkListen failed";
        return h;
    }
    NTSTATUS connect = s.connect_async(h.active.object, qp, as_sockaddr(h.address),
                                       sizeof h.address, ird, ord, private_data);
    if (!started(connect)) {
        h.problem = "NdkConnect failed: " + spec::status_name(connect);
        return h;
    }
    h.passive = s.wait_connect_event(h.listener.object);
    if (!h.passive) h.problem = "no connect event reached the listener";
    return h;
}

// One send from `from` lands in a receive posted on `to`: the two QPs are connected.
void expect_send_lands(Session& s, NDK_PD* pd, NDK_CQ* cq, NDK_QP* from, NDK_QP* to, uint8_t seed) {
    auto out = s.buffer(PAGE_SIZE);
    auto in = s.buffer(PAGE_SIZE);
    fill(out, seed);
    auto o = s.register_buffer(pd, out, 0);
    auto i = s.register_buffer(pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, i.status);
    NDK_SGE receive = Session::sge(in, 0, PAGE_SIZE, i.local_token);
    NDK_SGE send = Session::sge(out, 0, 200, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, s.receive(to, nullptr, {&receive, 1}));
    // CONN-03: once connected, initiator calls no longer fail with STATUS_CONNECTION_INVALID.
    ASSERT_STATUS(STATUS_SUCCESS, s.send(from, nullptr, {&send, 1}));
    auto results = s.drain(cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 200), 0) << "the bytes crossed the connection";
}

NDKCT_TEST(Connection, EstablishedQpsCarryDataBothWays, "ndk.conn.establish.qps_connected",
           "CONN-02", "CONN-03", "CONN-15", "CONN-20", "CONN-21", "CONN-25") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    // Port 0: the provider picks an ephemeral port, reported by NdkGetListenerLocalAddress
    // (CONN-25, judged by the oracle: 49152-65535) and then reachable.
    sockaddr_in any = loopback4(0);
    auto pair = session().connect_pair(t.pd, t.cq, t.a, t.b, as_sockaddr(any), sizeof any);
    ASSERT_TRUE(pair.connected) << pair.problem;
    AddressResult bound = session().local_address(pair.listener);
    ASSERT_STATUS(STATUS_SUCCESS, bound.status);
    EXPECT_GE(bound.port(), 49152) << "CONN-25: the port picked is ephemeral";
    expect_send_lands(session(), t.pd, t.cq, t.a, t.b, 3);
    expect_send_lands(session(), t.pd, t.cq, t.b, t.a, 4);
    // CONN-20: one request, one connect event.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(session().connect_events(pair.listener), 1u);
}

NDKCT_TEST(Connection, EachRequestGetsItsOwnConnector, "ndk.conn.listener.one_event_per_request",
           "CONN-20", "CONN-23") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto listener = session().create_listener();
    auto first = session().create_connector();
    auto second = session().create_connector();
    ASSERT_TRUE(listener.object && first.object && second.object);
    sockaddr_in address = loopback4(test_port(8));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    ASSERT_TRUE(
        started(session().connect_async(first.object, t.a, as_sockaddr(address), sizeof address)));
    ASSERT_TRUE(
        started(session().connect_async(second.object, t.b, as_sockaddr(address), sizeof address)));
    NDK_CONNECTOR* one = session().wait_connect_event(listener.object);
    NDK_CONNECTOR* two = session().wait_connect_event(listener.object);
    ASSERT_TRUE(one && two) << "each request reaches the listener";
    EXPECT_NE(one, two) << "each request has a connector of its own";
    EXPECT_NE(one, first.object);
    EXPECT_NE(two, second.object);
    EXPECT_EQ(session().wait_connect_event(listener.object, std::chrono::milliseconds(50)), nullptr)
        << "no third event";
    EXPECT_STATUS(STATUS_SUCCESS, session().reject(one));
    EXPECT_STATUS(STATUS_SUCCESS, session().reject(two));
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, session().wait_connect(first.object).final_status);
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, session().wait_connect(second.object).final_status);
}

NDKCT_TEST(Connection, ListenOnAForeignAddressIsInvalid, "ndk.conn.listen.not_an_adapter_address",
           "CONN-04") {
    auto listener = session().create_listener();
    ASSERT_TRUE(listener.object);
    sockaddr_in foreign = documentation4(test_port(9));
    EXPECT_STATUS(
        STATUS_INVALID_ADDRESS,
        session().listen(listener.object, as_sockaddr(foreign), sizeof foreign).final_status);
}

// The listener's endpoint is held by it and by the connectors accepted through it; a close
// requested while one is open pends, refuses new requests meanwhile, and frees the endpoint
// only when the last holder is closed.
NDKCT_TEST(Connection, ListenerEndpointIsHeldUntilAllHoldersClose,
           "ndk.conn.listener.endpoint_held", "CONN-04", "CONN-LST-01", "CONN-LST-03",
           "CONN-LST-05", "LIFE-TREE-08") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    sockaddr_in address = loopback4(test_port(10));
    auto pair = session().connect_pair(t.pd, t.cq, t.a, t.b, as_sockaddr(address), sizeof address);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto rival = session().create_listener();
    ASSERT_TRUE(rival.object);
    EXPECT_STATUS(STATUS_SHARING_VIOLATION,
                  session().listen(rival.object, as_sockaddr(address), sizeof address).final_status)
        << "CONN-LST-01: a listener holds its address";
    // The close pends while the accepted connector is open (CONN-LST-05) ...
    EXPECT_STATUS(STATUS_PENDING, session().close_async(pair.listener));
    // ... takes no more requests (CONN-LST-03) ...
    auto late_qp = session().create_qp(t.pd, t.cq, t.cq, nullptr, QpShape{});
    auto late = session().create_connector();
    ASSERT_TRUE(late_qp.object && late.object);
    Done refused =
        session().connect(late.object, late_qp.object, as_sockaddr(address), sizeof address);
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, refused.final_status);
    // ... and the accepted connector still holds the endpoint (CONN-LST-01).
    auto second_rival = session().create_listener();
    ASSERT_TRUE(second_rival.object);
    EXPECT_STATUS(
        STATUS_SHARING_VIOLATION,
        session().listen(second_rival.object, as_sockaddr(address), sizeof address).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().close(pair.passive).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(pair.listener).final_status);
    auto third = session().create_listener();
    ASSERT_TRUE(third.object);
    EXPECT_STATUS(STATUS_SUCCESS,
                  session().listen(third.object, as_sockaddr(address), sizeof address).final_status)
        << "the endpoint is free once every holder is closed";
}

NDKCT_TEST(Connection, SharedEndpointCreation, "ndk.conn.shared_endpoint.create", "CONN-06",
           "CONN-07", "CONN-26", "CONN-LST-04") {
    sockaddr_in any = loopback4(0);
    auto picked = session().create_shared_endpoint(as_sockaddr(any), sizeof any);
    ASSERT_STATUS(STATUS_SUCCESS, picked.final_status);
    ASSERT_TRUE(picked.object);
    AddressResult local = session().local_address(picked.object);
    ASSERT_STATUS(STATUS_SUCCESS, local.status);
    EXPECT_GE(local.port(), 49152) << "CONN-07, CONN-26: an ephemeral port";
    sockaddr_in foreign = documentation4(test_port(11));
    EXPECT_STATUS(
        STATUS_INVALID_ADDRESS,
        session().create_shared_endpoint(as_sockaddr(foreign), sizeof foreign).final_status);
    // An endpoint on a listener's address, and a listener or a second endpoint on an endpoint's.
    auto listener = session().create_listener();
    ASSERT_TRUE(listener.object);
    sockaddr_in listening = loopback4(test_port(12));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(listening), sizeof listening).ok());
    EXPECT_STATUS(
        STATUS_SHARING_VIOLATION,
        session().create_shared_endpoint(as_sockaddr(listening), sizeof listening).final_status);
    sockaddr_in shared = loopback4(test_port(13));
    auto endpoint = session().create_shared_endpoint(as_sockaddr(shared), sizeof shared);
    ASSERT_STATUS(STATUS_SUCCESS, endpoint.final_status);
    EXPECT_STATUS(
        STATUS_SHARING_VIOLATION,
        session().create_shared_endpoint(as_sockaddr(shared), sizeof shared).final_status);
    auto rival = session().create_listener();
    ASSERT_TRUE(rival.object);
    EXPECT_STATUS(STATUS_SHARING_VIOLATION,
                  session().listen(rival.object, as_sockaddr(shared), sizeof shared).final_status);
}

NDKCT_TEST(Connection, ConnectThroughASharedEndpoint, "ndk.conn.shared_endpoint.connect", "CONN-14",
           "CONN-12", "LIFE-TREE-07", "CONN-LST-04", "CONN-LST-05") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto third_qp = session().create_qp(t.pd, t.cq, t.cq, nullptr, QpShape{});
    ASSERT_TRUE(third_qp.object);
    sockaddr_in shared = loopback4(test_port(14));
    auto endpoint = session().create_shared_endpoint(as_sockaddr(shared), sizeof shared);
    ASSERT_STATUS(STATUS_SUCCESS, endpoint.final_status);
    auto listener = session().create_listener();
    auto first = session().create_connector();
    auto second = session().create_connector();
    ASSERT_TRUE(listener.object && first.object && second.object);
    sockaddr_in address = loopback4(test_port(15));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    ASSERT_TRUE(started(session().connect_with_shared_endpoint_async(
        first.object, t.a, endpoint.object, as_sockaddr(address), sizeof address)));
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive) << "no connect event reached the listener";
    ASSERT_TRUE(started(session().accept_async(passive, t.b)));
    ASSERT_TRUE(session().wait_connect(first.object).ok());
    ASSERT_TRUE(session().complete_connect(first.object).ok());
    ASSERT_TRUE(session().wait_accept(passive).ok());
    // CONN-14: the connection's local address is the endpoint's.
    AddressResult local = session().local_address(first.object);
    ASSERT_STATUS(STATUS_SUCCESS, local.status);
    EXPECT_EQ(local.port(), test_port(14));
    AddressResult seen = session().peer_address(passive);
    ASSERT_STATUS(STATUS_SUCCESS, seen.status);
    EXPECT_EQ(seen.port(), test_port(14)) << "the passive side sees the endpoint's port";
    expect_send_lands(session(), t.pd, t.cq, t.a, t.b, 5);
    // CONN-12: the same four-tuple again.
    NTSTATUS s = session().connect_with_shared_endpoint_async(
        second.object, third_qp.object, endpoint.object, as_sockaddr(address), sizeof address);
    NTSTATUS final_status =
        s == STATUS_PENDING ? session().wait_connect(second.object).final_status : s;
    EXPECT_STATUS(STATUS_ADDRESS_ALREADY_EXISTS, final_status);
    // LIFE-TREE-07, CONN-LST-05: the endpoint's close waits for the connector connected through it.
    EXPECT_STATUS(STATUS_PENDING, session().close_async(endpoint.object));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(second.object).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().close(first.object).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(endpoint.object).final_status);
}

NDKCT_TEST(Connection, ConnectFromAHeldSourceIsASharingViolation, "ndk.conn.connect.source_in_use",
           "CONN-09", "CONN-LST-01") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto held = session().create_listener();
    auto target = session().create_listener();
    auto connector = session().create_connector();
    ASSERT_TRUE(held.object && target.object && connector.object);
    sockaddr_in source = loopback4(test_port(16));
    sockaddr_in destination = loopback4(test_port(17));
    ASSERT_TRUE(session().listen(held.object, as_sockaddr(source), sizeof source).ok());
    ASSERT_TRUE(session().listen(target.object, as_sockaddr(destination), sizeof destination).ok());
    NTSTATUS s =
        session().connect_from_async(connector.object, t.a, as_sockaddr(source), sizeof source,
                                     as_sockaddr(destination), sizeof destination);
    NTSTATUS final_status =
        s == STATUS_PENDING ? session().wait_connect(connector.object).final_status : s;
    NDKCT_RULE("CONN-09", "CONN-LST-01");  // the listener holds the source address
    EXPECT_STATUS(STATUS_SHARING_VIOLATION, final_status);
    EXPECT_EQ(session().wait_connect_event(target.object, std::chrono::milliseconds(50)), nullptr)
        << "the refused connect reached no listener";
}

NDKCT_TEST(Connection, ConnectFromAForeignSourceIsInvalid, "ndk.conn.connect.source_not_local",
           "CONN-10") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto target = session().create_listener();
    auto connector = session().create_connector();
    ASSERT_TRUE(target.object && connector.object);
    sockaddr_in source = documentation4(0);
    sockaddr_in destination = loopback4(test_port(18));
    ASSERT_TRUE(session().listen(target.object, as_sockaddr(destination), sizeof destination).ok());
    NTSTATUS s =
        session().connect_from_async(connector.object, t.a, as_sockaddr(source), sizeof source,
                                     as_sockaddr(destination), sizeof destination);
    NTSTATUS final_status =
        s == STATUS_PENDING ? session().wait_connect(connector.object).final_status : s;
    EXPECT_STATUS(STATUS_INVALID_ADDRESS, final_status);
}

// CONN-11: source port 0 gets an ephemeral port; CONN-LST-02: the connector holds that
// endpoint until it is closed.
NDKCT_TEST(Connection, SourcePortZeroGetsAnEphemeralEndpoint, "ndk.conn.connect.source_port_zero",
           "CONN-11", "CONN-LST-02") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto listener = session().create_listener();
    auto active = session().create_connector();
    ASSERT_TRUE(listener.object && active.object);
    sockaddr_in source = loopback4(0);
    sockaddr_in destination = loopback4(test_port(19));
    ASSERT_TRUE(
        session().listen(listener.object, as_sockaddr(destination), sizeof destination).ok());
    ASSERT_TRUE(
        started(session().connect_from_async(active.object, t.a, as_sockaddr(source), sizeof source,
                                             as_sockaddr(destination), sizeof destination)));
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive);
    ASSERT_TRUE(started(session().accept_async(passive, t.b)));
    ASSERT_TRUE(session().wait_connect(active.object).ok());
    ASSERT_TRUE(session().complete_connect(active.object).ok());
    ASSERT_TRUE(session().wait_accept(passive).ok());
    AddressResult local = session().local_address(active.object);
    ASSERT_STATUS(STATUS_SUCCESS, local.status);
    EXPECT_GE(local.port(), 49152) << "CONN-11: an ephemeral port";
    sockaddr_in endpoint = loopback4(local.port());
    auto rival = session().create_listener();
    ASSERT_TRUE(rival.object);
    EXPECT_STATUS(
        STATUS_SHARING_VIOLATION,
        session().listen(rival.object, as_sockaddr(endpoint), sizeof endpoint).final_status)
        << "CONN-LST-02: the connector holds its endpoint";
    EXPECT_STATUS(STATUS_SUCCESS, session().close(active.object).final_status);
    auto after = session().create_listener();
    ASSERT_TRUE(after.object);
    EXPECT_STATUS(
        STATUS_SUCCESS,
        session().listen(after.object, as_sockaddr(endpoint), sizeof endpoint).final_status)
        << "CONN-LST-02: released when the connector is closed";
}

NDKCT_TEST(Connection, UnreachableHostFailsAndMayBeRetried, "ndk.conn.connect.unreachable",
           "CONN-13") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto connector = session().create_connector();
    ASSERT_TRUE(connector.object);
    sockaddr_in nowhere = documentation4(test_port(20));
    Done d = session().connect(connector.object, t.a, as_sockaddr(nowhere), sizeof nowhere);
    EXPECT_TRUE(d.final_status == STATUS_HOST_UNREACHABLE ||
                d.final_status == STATUS_NETWORK_UNREACHABLE || d.final_status == STATUS_IO_TIMEOUT)
        << spec::status_name(d.final_status);
    // "The attempt may be retried": the same connector and QP reach a listener afterwards.
    auto listener = session().create_listener();
    ASSERT_TRUE(listener.object);
    sockaddr_in address = loopback4(test_port(21));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    ASSERT_TRUE(started(
        session().connect_async(connector.object, t.a, as_sockaddr(address), sizeof address)));
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive) << "the retry reaches the listener";
    ASSERT_TRUE(started(session().accept_async(passive, t.b)));
    EXPECT_TRUE(session().wait_connect(connector.object).ok());
    EXPECT_TRUE(session().complete_connect(connector.object).ok());
    EXPECT_TRUE(session().wait_accept(passive).ok());
}

// The acceptor closes its connector after accepting but before the active side completes:
// the accept is cancelled by the close (CLOSE-08) and NdkCompleteConnect reports the abort.
NDKCT_TEST(Connection, CompleteConnectAfterTheAcceptorGaveUpIsAborted,
           "ndk.conn.complete_connect.acceptor_gone", "CONN-17", "CLOSE-08", "CLOSE-03") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto [listener, active, address, passive, problem] =
        start_handshake(session(), t.a, test_port(22));
    ASSERT_TRUE(problem.empty()) << problem;
    NTSTATUS s = session().accept_async(passive, t.b);
    ASSERT_TRUE(started(s)) << spec::status_name(s);
    ASSERT_TRUE(session().wait_connect(active.object).ok());
    EXPECT_STATUS(STATUS_SUCCESS, session().close(passive).final_status)
        << "CLOSE-08: the close ends the pending accept instead of waiting for it";
    Done accepted = session().wait_accept(passive);
    EXPECT_FALSE(accepted.pended() && accepted.ok()) << "a cancelled accept does not succeed";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the abort crosses the network
    EXPECT_STATUS(STATUS_CONNECTION_ABORTED,
                  session().complete_connect(active.object).final_status);
}

// The connecting side closes its connector before the passive side accepts: the connect is
// cancelled by the close (CLOSE-08), and the late accept fails (CONN-21).
NDKCT_TEST(Connection, AcceptAfterTheConnectingPeerGaveUpFails,
           "ndk.conn.accept.connecting_peer_gone", "CONN-21", "CLOSE-08", "CLOSE-03", "CLOSE-04") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto [listener, active, address, passive, problem] =
        start_handshake(session(), t.a, test_port(23));
    ASSERT_TRUE(problem.empty()) << problem;
    Done closed = session().close(active.object);
    if (closed.final_status == STATUS_PENDING) {
        // CLOSE-08: nothing but the pending connect can hold this close, and only the close
        // itself would end that connect (the peer does nothing until the test accepts).
        model::Verdict v;
        v.add({{"CLOSE-08"},
               "the connector's close did not complete: it waits for its pending NdkConnect "
               "instead of cancelling it",
               false});
        session().report(std::move(v));
        return;  // the rest needs the connect cancelled
    }
    EXPECT_STATUS(STATUS_SUCCESS, closed.final_status);
    Done connected = session().wait_connect(active.object);
    EXPECT_FALSE(connected.ok()) << "the cancelled connect does not succeed";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the abort crosses the network
    NTSTATUS s = session().accept_async(passive, t.b);
    NTSTATUS final_status = s == STATUS_PENDING ? session().wait_accept(passive).final_status : s;
    EXPECT_TRUE(final_status == STATUS_CONNECTION_ABORTED || final_status == STATUS_IO_TIMEOUT)
        << spec::status_name(final_status);
}

NDKCT_TEST(Connection, ActiveSideMayRejectAfterItsConnectCompleted, "ndk.conn.reject.active_side",
           "CONN-24", "CONN-15", "CONN-21", "CONN-27") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto [listener, active, address, passive, problem] =
        start_handshake(session(), t.a, test_port(24));
    ASSERT_TRUE(problem.empty()) << problem;
    const std::array<uint8_t, 6> terms{'t', 'e', 'r', 'm', 's', 0};
    ASSERT_TRUE(started(session().accept_async(passive, t.b, 4, 4, terms)));
    ASSERT_TRUE(session().wait_connect(active.object).ok());
    // CONN-15, CONN-27: the completed connect offers the acceptor's private data ...
    ULONG rds = session().get_connection_data(active.object, 0, false).length;  // RDS may be padded
    ConnectionData data = session().get_connection_data(active.object, rds);
    ASSERT_STATUS(STATUS_SUCCESS, data.status);
    ASSERT_GE(data.length, terms.size());
    EXPECT_EQ(std::memcmp(data.data.data(), terms.data(), terms.size()), 0);
    // ... and the active side turns the connection down (CONN-24).
    EXPECT_STATUS(STATUS_SUCCESS, session().reject(active.object));
    Done accepted = session().wait_accept(passive);
    EXPECT_FALSE(accepted.ok()) << "the passive side's accept fails: "
                                << spec::status_name(accepted.final_status);
}

NDKCT_TEST(Connection, PrivateDataOfTheMaximumLengthReachesThePeer,
           "ndk.conn.private_data.both_ways", "CONN-27", "CONN-PD-03") {
    NDKCT_REQUIRE(info().MaxCallerData > 0 && info().MaxCalleeData > 0,
                  "private data (MaxCallerData, MaxCalleeData)");
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    PairOptions options;
    for (ULONG i = 0; i < info().MaxCallerData; ++i)
        options.connect_data.push_back(uint8_t(i * 7 + 1));
    for (ULONG i = 0; i < info().MaxCalleeData; ++i)
        options.accept_data.push_back(uint8_t(i * 5 + 2));
    auto [listener, active, address, passive, problem] =
        start_handshake(session(), t.a, test_port(25), 4, 4, options.connect_data);
    ASSERT_TRUE(problem.empty()) << problem;
    ConnectionData request = session().get_connection_data(passive, info().MaxCallerData);
    ASSERT_STATUS(STATUS_SUCCESS, request.status);
    EXPECT_EQ(request.data, options.connect_data) << "every byte the connect carried";
    ASSERT_TRUE(started(session().accept_async(passive, t.b, 4, 4, options.accept_data)));
    ASSERT_TRUE(session().wait_connect(active.object).ok());
    ConnectionData reply = session().get_connection_data(active.object, info().MaxCalleeData);
    ASSERT_STATUS(STATUS_SUCCESS, reply.status);
    EXPECT_EQ(reply.data, options.accept_data) << "every byte the accept carried";
    EXPECT_TRUE(session().complete_connect(active.object).ok());
    EXPECT_TRUE(session().wait_accept(passive).ok());
}

// CONN-RL-01: capped at the adapter's maxima; CONN-RL-02: lowered to what the peer allows the
// other way; CONN-RL-03: NdkGetConnectionData reports the effective limits, NULL pointers allowed.
NDKCT_TEST(Connection, ReadLimitsAreCappedAndMatched, "ndk.conn.read_limits.effective",
           "CONN-RL-01", "CONN-RL-02", "CONN-RL-03") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    const ULONG huge = 100000;
    auto [listener, active, address, passive, problem] =
        start_handshake(session(), t.a, test_port(26), huge, huge);
    ASSERT_TRUE(problem.empty()) << problem;
    ConnectionData offered = session().get_connection_data(passive, 0, false);
    ASSERT_STATUS(STATUS_SUCCESS, offered.status);
    EXPECT_LE(offered.inbound_read_limit, info().MaxInboundReadLimit);
    EXPECT_LE(offered.outbound_read_limit, info().MaxOutboundReadLimit);
    ConnectionData without = session().get_connection_data(passive, 0, false, false);
    EXPECT_STATUS(STATUS_SUCCESS, without.status) << "CONN-RL-03: either pointer may be NULL";
    const ULONG passive_ird = 1, passive_ord = 2;
    ASSERT_TRUE(started(session().accept_async(passive, t.b, passive_ird, passive_ord)));
    ASSERT_TRUE(session().wait_connect(active.object).ok());
    ConnectionData effective = session().get_connection_data(active.object, 0, false);
    ASSERT_STATUS(STATUS_SUCCESS, effective.status);
    EXPECT_LE(effective.inbound_read_limit, std::min(info().MaxInboundReadLimit, passive_ord))
        << "no more inbound reads than the peer may issue";
    EXPECT_LE(effective.outbound_read_limit, std::min(info().MaxOutboundReadLimit, passive_ird))
        << "no more outbound reads than the peer serves";
    EXPECT_TRUE(session().complete_connect(active.object).ok());
    EXPECT_TRUE(session().wait_accept(passive).ok());
}

NDKCT_TEST(Connection, ExFormsConnectAndReportTheDisconnectOnce,
           "ndk.conn.ex.complete_connect_and_accept", "CONN-19", "CONN-22", "CONN-DISC-03",
           "CONN-DISC-02") {
    NDKCT_REQUIRE(NDKCT_VERSION_AT_LEAST(session().version(), 2, 1),
                  "NDKPI 2.1 (NdkCompleteConnectEx, NdkAcceptEx)");
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    PairOptions options;
    options.ex = true;
    sockaddr_in address = loopback4(test_port(27));
    auto pair =
        session().connect_pair(t.pd, t.cq, t.a, t.b, as_sockaddr(address), sizeof address, options);
    ASSERT_TRUE(pair.connected) << pair.problem;
    expect_send_lands(session(), t.pd, t.cq, t.a, t.b, 6);
    EXPECT_STATUS(STATUS_SUCCESS, session().disconnect(pair.active).final_status);
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(std::chrono::seconds(5));
    while (session().disconnect_events(pair.passive) == 0 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    NDKCT_RULE("CONN-DISC-03");  // the peer's disconnect is told once, through the Ex callback
    EXPECT_EQ(session().disconnect_ex_reasons(pair.passive).size(), 1u)
        << "CONN-DISC-03: the Ex callback, once";
    EXPECT_EQ(session().disconnect_events(pair.passive), 1u) << "and no plain callback besides";
}

// GEN-CB-02: a pending request does not block further calls on the same object.
NDKCT_TEST(Connection, CallsOnAConnectorWhileItsConnectPends,
           "ndk.conn.connect.calls_while_pending", "GEN-CB-02") {
    auto t = two_qps(session());
    ASSERT_TRUE(t.ok());
    auto [listener, active, address, passive, problem] =
        start_handshake(session(), t.a, test_port(28));
    ASSERT_TRUE(problem.empty()) << problem;
    // The connect cannot complete before the accept: it is pending now.
    AddressResult peer = session().peer_address(active.object);
    EXPECT_STATUS(STATUS_SUCCESS, peer.status);
    EXPECT_EQ(peer.port(), test_port(28));
    EXPECT_STATUS(STATUS_SUCCESS, session().local_address(active.object).status);
    ASSERT_TRUE(started(session().accept_async(passive, t.b)));
    EXPECT_TRUE(session().wait_connect(active.object).ok());
    EXPECT_TRUE(session().complete_connect(active.object).ok());
    EXPECT_TRUE(session().wait_accept(passive).ok());
}

// ---------------- Lifetime ----------------

NDKCT_TEST(Lifetime, CqCloseWaitsForItsQp, "ndk.conn.lifetime.cq_before_qp", "LIFE-TREE-02",
           "CLOSE-02") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    EXPECT_STATUS(STATUS_PENDING, session().close_async(q.cq));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(q.qp).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(q.cq).final_status);
}

NDKCT_TEST(Lifetime, MrCloseWaitsForItsBoundWindow, "ndk.conn.lifetime.mr_before_bound_mw",
           "LIFE-TREE-04", "CLOSE-02", "BND-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto window_memory = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pair.pd, window_memory, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    auto mw = session().create_mw(pair.pd);
    ASSERT_TRUE(mw.object);
    int context;
    ASSERT_STATUS(STATUS_SUCCESS, session().bind(pair.a, &context, r.mr, mw.object,
                                                 reinterpret_cast<uint64_t>(window_memory.data()),
                                                 PAGE_SIZE, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    ASSERT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_STATUS(STATUS_PENDING, session().close_async(r.mr));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(mw.object).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(r.mr).final_status);
}

NDKCT_TEST(Lifetime, ListenerCloseWaitsForItsConnector,
           "ndk.conn.lifetime.listener_before_connector", "LIFE-TREE-08", "CLOSE-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    EXPECT_STATUS(STATUS_PENDING, session().close_async(pair.listener));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(pair.passive).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(pair.listener).final_status);
}

NDKCT_TEST(Lifetime, QpCloseWaitsForItsConnector, "ndk.conn.lifetime.qp_before_connector",
           "LIFE-TREE-06", "CLOSE-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    EXPECT_STATUS(STATUS_PENDING, session().close_async(pair.a));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(pair.active).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(pair.a).final_status);
}

NDKCT_TEST(Lifetime, SrqCloseWaitsForItsQp, "ndk.conn.lifetime.srq_before_qp", "LIFE-TREE-05",
           "CLOSE-02") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "shared receive queues");
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    auto srq = session().create_srq(pd.object, 16, 1);
    ASSERT_TRUE(srq.object);
    static int context;
    auto qp = session().create_qp_with_srq(pd.object, cq.object, cq.object, srq.object, &context,
                                           QpShape{});
    ASSERT_TRUE(qp.object);
    EXPECT_STATUS(STATUS_PENDING, session().close_async(srq.object));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(qp.object).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(srq.object).final_status);
}

// ---------------- QP operations ----------------

NDKCT_TEST(QpOperations, FlushCancelsReceivesOnAnUnconnectedQp,
           "ndk.conn.qp.flush_cancels_receives", "RCV-01", "FLS-01", "FLS-02", "FLS-03") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto in = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(q.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    std::array<int, 3> contexts{};
    NDK_SGE sge = Session::sge(in, 0, 128, r.local_token);
    for (int& c : contexts) {
        EXPECT_STATUS(STATUS_SUCCESS, session().receive(q.qp, &c, {&sge, 1}));
    }
    session().flush(q.qp);
    auto results = session().drain(q.cq, 3);
    ASSERT_EQ(results.size(), 3u);
    std::array<int, 3> seen{};
    for (const auto& result : results) {
        EXPECT_STATUS(STATUS_CANCELLED, result.Status);
        for (size_t k = 0; k < contexts.size(); ++k)
            if (result.RequestContext == &contexts[k]) ++seen[k];
    }
    EXPECT_EQ(seen, (std::array<int, 3>{1, 1, 1})) << "each receive completes once";
    EXPECT_TRUE(session().poll(q.cq).empty()) << "nothing more";
}

NDKCT_TEST(QpOperations, InitiatorCallsOnAnUnconnectedQpAreInvalid,
           "ndk.conn.qp.unconnected_initiator", "SND-02", "WRT-02", "RD-04", "BND-05", "INV-03") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto memory = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(
        q.pd, memory, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    auto mw = session().create_mw(q.pd);
    ASSERT_TRUE(mw.object);
    NDK_SGE sge = Session::sge(memory, 0, 64, r.local_token);
    uint64_t va = reinterpret_cast<uint64_t>(memory.data());
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().send(q.qp, nullptr, {&sge, 1}));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID,
                  session().write(q.qp, nullptr, {&sge, 1}, va, r.remote_token));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID,
                  session().read(q.qp, nullptr, {&sge, 1}, va, r.remote_token));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID,
                  session().bind(q.qp, nullptr, r.mr, mw.object, va, PAGE_SIZE,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().invalidate(q.qp, nullptr, mw.object));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(session().poll(q.cq).empty()) << "a call failed inline posts nothing";
}

NDKCT_TEST(QpOperations, WriteThroughABoundWindowLands, "ndk.conn.qp.bind_window_write", "BND-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto target = session().buffer(2 * PAGE_SIZE);
    auto source = session().buffer(PAGE_SIZE);
    fill(source, 5);
    auto t = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto s = session().register_buffer(pair.pd, source, 0);
    ASSERT_STATUS(STATUS_SUCCESS, t.status);
    auto mw = session().create_mw(pair.pd);
    ASSERT_TRUE(mw.object);
    uint64_t va = reinterpret_cast<uint64_t>(target.data());
    int bound;
    ASSERT_STATUS(STATUS_SUCCESS, session().bind(pair.b, &bound, t.mr, mw.object, va, 2 * PAGE_SIZE,
                                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    ASSERT_STATUS(STATUS_SUCCESS, results[0].Status);
    UINT32 token = session().remote_token(mw.object);
    NDK_SGE sge = Session::sge(source, 0, 700, s.local_token);
    int written;
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &written, {&sge, 1}, va + 300, token));
    results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(target.data() + 300, source.data(), 700), 0);
    EXPECT_EQ(target.data()[299], std::byte{0});
}

NDKCT_TEST(QpOperations, InvalidatedWindowRefusesRemoteWrite, "ndk.conn.qp.invalidate_window",
           "INV-01", "BND-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto target = session().buffer(PAGE_SIZE);
    auto source = session().buffer(PAGE_SIZE);
    fill(source, 11);
    auto t = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto s = session().register_buffer(pair.pd, source, 0);
    ASSERT_STATUS(STATUS_SUCCESS, t.status);
    auto mw = session().create_mw(pair.pd);
    ASSERT_TRUE(mw.object);
    uint64_t va = reinterpret_cast<uint64_t>(target.data());
    ASSERT_STATUS(STATUS_SUCCESS, session().bind(pair.b, nullptr, t.mr, mw.object, va, PAGE_SIZE,
                                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    ASSERT_STATUS(STATUS_SUCCESS, results[0].Status);
    UINT32 token = session().remote_token(mw.object);
    ASSERT_STATUS(STATUS_SUCCESS, session().invalidate(pair.b, nullptr, mw.object));
    results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    ASSERT_STATUS(STATUS_SUCCESS, results[0].Status);
    NDK_SGE sge = Session::sge(source, 0, 256, s.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, nullptr, {&sge, 1}, va, token));
    results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(NT_ERROR(results[0].Status)) << spec::status_name(results[0].Status);
    for (size_t k = 0; k < 256; ++k)
        ASSERT_EQ(target.data()[k], std::byte{0}) << "byte " << k << " landed";
}

NDKCT_TEST(QpOperations, RemoteWriteWindowNeedsLocalWriteOnTheMr,
           "ndk.conn.qp.bind_needs_local_write", "BND-06") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto memory = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pair.pd, memory, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    auto mw = session().create_mw(pair.pd);
    ASSERT_TRUE(mw.object);
    EXPECT_STATUS(
        STATUS_ACCESS_VIOLATION,
        session().bind(pair.a, nullptr, r.mr, mw.object, reinterpret_cast<uint64_t>(memory.data()),
                       PAGE_SIZE, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(session().poll(pair.cq).empty()) << "a bind refused inline posts nothing";
}

NDKCT_TEST(QpOperations, SolicitedSendSatisfiesASolicitedArm, "ndk.conn.qp.send_solicit_event",
           "SND-04") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(PAGE_SIZE);
    fill(out, 2);
    auto o = session().register_buffer(pair.pd, out, 0);
    auto i = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, i.status);
    NDK_SGE receive = Session::sge(in, 0, PAGE_SIZE, i.local_token);
    NDK_SGE send = Session::sge(out, 0, 64, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, nullptr, {&receive, 1}));
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, nullptr, {&receive, 1}));
    size_t before = session().notifications(pair.cq);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_SOLICITED);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().send(pair.a, nullptr, {&send, 1}, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT));
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    }
    const auto waited = Session::scaled(std::chrono::seconds(5));
    auto deadline = std::chrono::steady_clock::now() + waited;
    while (session().notifications(pair.cq) == before &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    // Given up on: the oracle names what is missing, and a captured trace records the word.
    if (session().notifications(pair.cq) == before)
        session().expect_notification_delivered(
            pair.cq, std::chrono::duration_cast<std::chrono::milliseconds>(waited));
    EXPECT_EQ(session().notifications(pair.cq), before + 1)
        << "the solicited receive notifies once";
}

NDKCT_TEST(QpOperations, SrqReceiveServesAnAttachedQp, "ndk.conn.qp.srq_receive_consumed",
           "RCV-02") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "shared receive queues");
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    auto receive_cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object && receive_cq.object);
    auto srq = session().create_srq(pd.object, 16, 1);
    ASSERT_TRUE(srq.object);
    static int ca, cb;
    auto a = session().create_qp(pd.object, cq.object, cq.object, &ca, QpShape{});
    auto b = session().create_qp_with_srq(pd.object, receive_cq.object, cq.object, srq.object, &cb,
                                          QpShape{});
    auto listener = session().create_listener();
    auto active = session().create_connector();
    ASSERT_TRUE(a.object && b.object && listener.object && active.object);
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(PAGE_SIZE);
    fill(out, 4);
    auto o = session().register_buffer(pd.object, out, 0);
    auto i = session().register_buffer(pd.object, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, i.status);
    NDK_SGE receive = Session::sge(in, 0, PAGE_SIZE, i.local_token);
    int receive_context;
    EXPECT_STATUS(STATUS_SUCCESS,
                  session().srq_receive(srq.object, &receive_context, {&receive, 1}));

    sockaddr_in address = loopback4(test_port(5));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    NTSTATUS s =
        session().connect_async(active.object, a.object, as_sockaddr(address), sizeof address);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive) << "no connect event reached the listener";
    s = session().accept_async(passive, b.object);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    ASSERT_TRUE(session().wait_connect(active.object).ok());
    ASSERT_TRUE(session().complete_connect(active.object).ok());
    ASSERT_TRUE(session().wait_accept(passive).ok());

    NDK_SGE send = Session::sge(out, 0, 333, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(a.object, nullptr, {&send, 1}));
    auto sent = session().drain(cq.object, 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, sent[0].Status);
    auto received = session().drain(receive_cq.object, 1);
    ASSERT_EQ(received.size(), 1u) << "the receive completes on the attached QP's receive CQ";
    EXPECT_STATUS(STATUS_SUCCESS, received[0].Status);
    EXPECT_EQ(received[0].RequestContext, &receive_context);
    EXPECT_EQ(received[0].BytesTransferred, 333u);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 333), 0);
}

}  // namespace
}  // namespace ndkct::conformance
