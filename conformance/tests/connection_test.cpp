// Connection establishment, refusal, connection data, addresses and disconnects (CONN-*),
// close ordering (LIFE-TREE-*, CLOSE-*), and QP operations around connection state (FLS-*,
// RCV-*, BND-*, INV-*, initiator calls on an unconnected QP).
//
// NdkGetConnectionData and the address getters have no Session wrapper: those tests call the
// connector's or listener's dispatch table directly, so the oracle does not see those calls.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <thread>

#include "ndkct/conformance/suite.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(Connection);
NDKCT_SUITE(Lifetime);
NDKCT_SUITE(QpOperations);

// Ports of their own, away from the Session's 20000..39999 range.
uint16_t test_port(unsigned k) { return static_cast<uint16_t>(45000 + (getpid() % 1000) * 16 + k); }

sockaddr_in loopback4(uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

const sockaddr* as_sockaddr(const sockaddr_in& a) { return reinterpret_cast<const sockaddr*>(&a); }

const NDK_CONNECTOR_DISPATCH& connector_table(NDK_CONNECTOR* c) {
    return *static_cast<const NDK_CONNECTOR_DISPATCH*>(c->Dispatch);
}

const NDK_LISTENER_DISPATCH& listener_table(NDK_LISTENER* l) {
    return *static_cast<const NDK_LISTENER_DISPATCH*>(l->Dispatch);
}

void fill(platform::LockedBuffer& b, uint8_t seed) {
    for (size_t i = 0; i < b.size(); ++i) b.data()[i] = std::byte(uint8_t(i * 13 + seed));
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

NDKCT_TEST(Connection, ConnectToAPortNobodyListensOnIsRefused, "ndk.conn.connect.no_listener_refused",
           "CONN-08") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto connector = session().create_connector();
    ASSERT_TRUE(connector.object);
    sockaddr_in nowhere = loopback4(test_port(0));
    Done d = session().connect(connector.object, q.qp, as_sockaddr(nowhere), sizeof nowhere);
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, d.final_status);
}

NDKCT_TEST(Connection, RefusedConnectMayBeRetried, "ndk.conn.connect.retry_after_refused", "CONN-08") {
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
    Done refused = session().connect(connector.object, a.object, as_sockaddr(address), sizeof address);
    ASSERT_STATUS(STATUS_CONNECTION_REFUSED, refused.final_status);
    // Someone listens now; the same connector and QP try again.
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    NTSTATUS s = session().connect_async(connector.object, a.object, as_sockaddr(address), sizeof address);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive) << "the retry reaches the listener";
    s = session().accept_async(passive, b.object);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    EXPECT_TRUE(session().wait_connect(connector.object).ok());
    EXPECT_TRUE(session().complete_connect(connector.object).ok());
    EXPECT_TRUE(session().wait_accept(passive).ok());
}

NDKCT_TEST(Connection, RejectRefusesTheActiveConnect, "ndk.conn.reject.active_sees_refused", "CONN-23",
           "CONN-08") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto listener = session().create_listener();
    auto connector = session().create_connector();
    ASSERT_TRUE(listener.object && connector.object);
    sockaddr_in address = loopback4(test_port(1));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    NTSTATUS s = session().connect_async(connector.object, q.qp, as_sockaddr(address), sizeof address);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    NDK_CONNECTOR* incoming = session().wait_connect_event(listener.object);
    ASSERT_TRUE(incoming) << "no connect event reached the listener";
    const std::array<uint8_t, 8> reason{1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_STATUS(STATUS_SUCCESS, session().reject(incoming, reason));
    Done d = session().wait_connect(connector.object);
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, d.final_status);
}

NDKCT_TEST(Connection, CompleteConnectWithoutAConnectIsInvalid, "ndk.conn.complete_connect.not_connecting",
           "CONN-16") {
    auto connector = session().create_connector();
    ASSERT_TRUE(connector.object);
    Done d = session().complete_connect(connector.object);
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, d.final_status);
}

NDKCT_TEST(Connection, SecondCompleteConnectIsInvalid, "ndk.conn.complete_connect.already_connected",
           "CONN-16") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    Done d = session().complete_connect(pair.active);
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, d.final_status);
}

NDKCT_TEST(Connection, CompleteConnectAfterARefusalIsInvalid, "ndk.conn.complete_connect.after_refused",
           "CONN-16", "CONN-08") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto connector = session().create_connector();
    ASSERT_TRUE(connector.object);
    sockaddr_in nowhere = loopback4(test_port(7));
    ASSERT_STATUS(STATUS_CONNECTION_REFUSED,
                  session().connect(connector.object, q.qp, as_sockaddr(nowhere), sizeof nowhere).final_status);
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().complete_connect(connector.object).final_status);
}

NDKCT_TEST(Connection, ConnectionDataProbeAndCopy, "ndk.conn.connection_data.probe_and_copy", "CONN-PD-01",
           "CONN-PD-03", "CONN-PD-04", "CONN-PD-05", "CONN-PD-08") {
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
    const std::array<uint8_t, 20> hello{'h', 'e', 'l', 'l', 'o', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    NTSTATUS s = session().connect_async(active.object, a.object, as_sockaddr(address), sizeof address, 4, 4, hello);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive) << "no connect event reached the listener";

    // Passive side: the probe, a short buffer, a full buffer.
    ULONG rds = 0;
    EXPECT_STATUS(STATUS_SUCCESS,
                  connector_table(passive).NdkGetConnectionData(passive, nullptr, nullptr, nullptr, &rds));
    ASSERT_GE(rds, hello.size()) << "the request carried 20 bytes of private data";
    std::vector<uint8_t> short_buffer(4, 0xEE);
    ULONG length = 4;
    EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, connector_table(passive).NdkGetConnectionData(
                                               passive, nullptr, nullptr, short_buffer.data(), &length));
    EXPECT_EQ(length, rds) << "RDS is stored whatever the result";
    EXPECT_EQ(std::memcmp(short_buffer.data(), hello.data(), 4), 0) << "min(length, RDS) bytes are copied";
    std::vector<uint8_t> full(rds, 0xEE);
    length = rds;
    ULONG ird = 0, ord = 0;
    EXPECT_STATUS(STATUS_SUCCESS,
                  connector_table(passive).NdkGetConnectionData(passive, &ird, &ord, full.data(), &length));
    EXPECT_EQ(length, rds);
    EXPECT_EQ(std::memcmp(full.data(), hello.data(), hello.size()), 0);

    // Active side: the accept's private data, once the connect completed.
    const std::array<uint8_t, 12> welcome{'w', 'e', 'l', 'c', 'o', 'm', 'e', 9, 8, 7, 6, 5};
    s = session().accept_async(passive, b.object, 4, 4, welcome);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    Done connected = session().wait_connect(active.object);
    ASSERT_TRUE(connected.ok()) << spec::status_name(connected.final_status);
    ULONG active_rds = 0;
    EXPECT_STATUS(STATUS_SUCCESS, connector_table(active.object)
                                      .NdkGetConnectionData(active.object, nullptr, nullptr, nullptr, &active_rds));
    ASSERT_GE(active_rds, welcome.size());
    std::vector<uint8_t> reply(active_rds, 0xEE);
    length = active_rds;
    EXPECT_STATUS(STATUS_SUCCESS, connector_table(active.object)
                                      .NdkGetConnectionData(active.object, nullptr, nullptr, reply.data(), &length));
    EXPECT_EQ(length, active_rds);
    EXPECT_EQ(std::memcmp(reply.data(), welcome.data(), welcome.size()), 0);
    EXPECT_TRUE(session().complete_connect(active.object).ok());
    EXPECT_TRUE(session().wait_accept(passive).ok());
}

NDKCT_TEST(Connection, AddressGettersReportSizeAndAddress, "ndk.conn.addresses.size_and_value", "CONN-ADDR-01",
           "CONN-ADDR-02", "CONN-ADDR-03") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;

    // The listener's own address: too small, then enough.
    sockaddr_storage listener_address{};
    ULONG length = 2;
    EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL,
                  listener_table(pair.listener)
                      .NdkGetLocalAddress(pair.listener, reinterpret_cast<sockaddr*>(&listener_address), &length));
    EXPECT_EQ(length, sizeof(sockaddr_in));
    length = sizeof listener_address;
    ASSERT_STATUS(STATUS_SUCCESS,
                  listener_table(pair.listener)
                      .NdkGetLocalAddress(pair.listener, reinterpret_cast<sockaddr*>(&listener_address), &length));
    EXPECT_EQ(length, sizeof(sockaddr_in));
    const auto& bound = reinterpret_cast<const sockaddr_in&>(listener_address);
    EXPECT_EQ(bound.sin_family, AF_INET);

    for (NDK_CONNECTOR* c : {pair.active, pair.passive}) {
        sockaddr_storage local{}, peer{};
        length = 0;
        EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL,
                      connector_table(c).NdkGetLocalAddress(c, reinterpret_cast<sockaddr*>(&local), &length));
        EXPECT_EQ(length, sizeof(sockaddr_in));
        length = 3;
        EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL,
                      connector_table(c).NdkGetPeerAddress(c, reinterpret_cast<sockaddr*>(&peer), &length));
        EXPECT_EQ(length, sizeof(sockaddr_in));
        length = sizeof local;
        ASSERT_STATUS(STATUS_SUCCESS,
                      connector_table(c).NdkGetLocalAddress(c, reinterpret_cast<sockaddr*>(&local), &length));
        EXPECT_EQ(length, sizeof(sockaddr_in));
        length = sizeof peer;
        ASSERT_STATUS(STATUS_SUCCESS,
                      connector_table(c).NdkGetPeerAddress(c, reinterpret_cast<sockaddr*>(&peer), &length));
        EXPECT_EQ(length, sizeof(sockaddr_in));
        EXPECT_EQ(reinterpret_cast<const sockaddr_in&>(local).sin_family, AF_INET);
        EXPECT_EQ(reinterpret_cast<const sockaddr_in&>(peer).sin_family, AF_INET);
    }
    // The active side's peer is the listener's port; the passive side's local port is too.
    sockaddr_in active_peer{}, passive_local{};
    length = sizeof active_peer;
    connector_table(pair.active)
        .NdkGetPeerAddress(pair.active, reinterpret_cast<sockaddr*>(&active_peer), &length);
    length = sizeof passive_local;
    connector_table(pair.passive)
        .NdkGetLocalAddress(pair.passive, reinterpret_cast<sockaddr*>(&passive_local), &length);
    EXPECT_EQ(ntohs(active_peer.sin_port), ntohs(bound.sin_port));
    EXPECT_EQ(ntohs(passive_local.sin_port), ntohs(bound.sin_port));
    EXPECT_EQ(active_peer.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
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
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (session().disconnect_events(pair.passive) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(session().disconnect_events(pair.passive), 1u);
}

NDKCT_TEST(Connection, PausedListenerRefusesAndResumes, "ndk.conn.listener.pause_resume", "CONN-CTL-01",
           "CONN-CTL-02", "CONN-08") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto listener = session().create_listener();
    auto first = session().create_connector();
    ASSERT_TRUE(listener.object && first.object);
    sockaddr_in address = loopback4(test_port(3));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    // Not seen by the oracle: the Session has no wrapper for NdkControlConnectEvents.
    listener_table(listener.object).NdkControlConnectEvents(listener.object, TRUE);
    Done refused = session().connect(first.object, q.qp, as_sockaddr(address), sizeof address);
    EXPECT_STATUS(STATUS_CONNECTION_REFUSED, refused.final_status);
    EXPECT_EQ(session().wait_connect_event(listener.object, std::chrono::milliseconds(50)), nullptr)
        << "no connect event while paused";
    listener_table(listener.object).NdkControlConnectEvents(listener.object, FALSE);
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
    sockaddr_storage peer{};
    ULONG length = sizeof peer;
    ASSERT_STATUS(STATUS_SUCCESS, connector_table(active.object)
                                      .NdkGetPeerAddress(active.object, reinterpret_cast<sockaddr*>(&peer), &length));
    EXPECT_EQ(length, sizeof(sockaddr_in6));
    EXPECT_EQ(peer.ss_family, AF_INET6);
}

// ---------------- Lifetime ----------------

NDKCT_TEST(Lifetime, CqCloseWaitsForItsQp, "ndk.conn.lifetime.cq_before_qp", "LIFE-TREE-02", "CLOSE-02") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    EXPECT_STATUS(STATUS_PENDING, session().close_async(q.cq));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(q.qp).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(q.cq).final_status);
}

NDKCT_TEST(Lifetime, MrCloseWaitsForItsBoundWindow, "ndk.conn.lifetime.mr_before_bound_mw", "LIFE-TREE-04",
           "CLOSE-02", "BND-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto window_memory = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pair.pd, window_memory, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    auto mw = session().create_mw(pair.pd);
    ASSERT_TRUE(mw.object);
    int context;
    ASSERT_STATUS(STATUS_SUCCESS, session().bind(pair.a, &context, r.mr, mw.object,
                                                 reinterpret_cast<uint64_t>(window_memory.data()), PAGE_SIZE,
                                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    ASSERT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_STATUS(STATUS_PENDING, session().close_async(r.mr));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(mw.object).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(r.mr).final_status);
}

NDKCT_TEST(Lifetime, ListenerCloseWaitsForItsConnector, "ndk.conn.lifetime.listener_before_connector",
           "LIFE-TREE-08", "CLOSE-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    EXPECT_STATUS(STATUS_PENDING, session().close_async(pair.listener));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(pair.passive).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(pair.listener).final_status);
}

NDKCT_TEST(Lifetime, QpCloseWaitsForItsConnector, "ndk.conn.lifetime.qp_before_connector", "LIFE-TREE-06",
           "CLOSE-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    EXPECT_STATUS(STATUS_PENDING, session().close_async(pair.a));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(pair.active).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(pair.a).final_status);
}

NDKCT_TEST(Lifetime, SrqCloseWaitsForItsQp, "ndk.conn.lifetime.srq_before_qp", "LIFE-TREE-05", "CLOSE-02") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "shared receive queues");
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    auto srq = session().create_srq(pd.object, 16, 1);
    ASSERT_TRUE(srq.object);
    static int context;
    auto qp = session().create_qp_with_srq(pd.object, cq.object, cq.object, srq.object, &context, QpShape{});
    ASSERT_TRUE(qp.object);
    EXPECT_STATUS(STATUS_PENDING, session().close_async(srq.object));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(qp.object).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(srq.object).final_status);
}

// ---------------- QP operations ----------------

NDKCT_TEST(QpOperations, FlushCancelsReceivesOnAnUnconnectedQp, "ndk.conn.qp.flush_cancels_receives", "RCV-01",
           "FLS-01", "FLS-02", "FLS-03") {
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

NDKCT_TEST(QpOperations, InitiatorCallsOnAnUnconnectedQpAreInvalid, "ndk.conn.qp.unconnected_initiator",
           "SND-02", "WRT-02", "RD-04", "BND-05", "INV-03") {
    auto q = lone_qp(session());
    ASSERT_TRUE(q.qp);
    auto memory = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(q.pd, memory, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    auto mw = session().create_mw(q.pd);
    ASSERT_TRUE(mw.object);
    NDK_SGE sge = Session::sge(memory, 0, 64, r.local_token);
    uint64_t va = reinterpret_cast<uint64_t>(memory.data());
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().send(q.qp, nullptr, {&sge, 1}));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().write(q.qp, nullptr, {&sge, 1}, va, r.remote_token));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().read(q.qp, nullptr, {&sge, 1}, va, r.remote_token));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().bind(q.qp, nullptr, r.mr, mw.object, va, PAGE_SIZE,
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

NDKCT_TEST(QpOperations, InvalidatedWindowRefusesRemoteWrite, "ndk.conn.qp.invalidate_window", "INV-01",
           "BND-01") {
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
    for (size_t k = 0; k < 256; ++k) ASSERT_EQ(target.data()[k], std::byte{0}) << "byte " << k << " landed";
}

NDKCT_TEST(QpOperations, RemoteWriteWindowNeedsLocalWriteOnTheMr, "ndk.conn.qp.bind_needs_local_write",
           "BND-06") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto memory = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pair.pd, memory, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    auto mw = session().create_mw(pair.pd);
    ASSERT_TRUE(mw.object);
    EXPECT_STATUS(STATUS_ACCESS_VIOLATION,
                  session().bind(pair.a, nullptr, r.mr, mw.object, reinterpret_cast<uint64_t>(memory.data()),
                                 PAGE_SIZE, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(session().poll(pair.cq).empty()) << "a bind refused inline posts nothing";
}

NDKCT_TEST(QpOperations, SolicitedSendSatisfiesASolicitedArm, "ndk.conn.qp.send_solicit_event", "SND-04") {
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
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, nullptr, {&send, 1}, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT));
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (session().notifications(pair.cq) == before && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(session().notifications(pair.cq), before + 1) << "the solicited receive notifies once";
}

NDKCT_TEST(QpOperations, SrqReceiveServesAnAttachedQp, "ndk.conn.qp.srq_receive_consumed", "RCV-02") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "shared receive queues");
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    auto receive_cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object && receive_cq.object);
    auto srq = session().create_srq(pd.object, 16, 1);
    ASSERT_TRUE(srq.object);
    static int ca, cb;
    auto a = session().create_qp(pd.object, cq.object, cq.object, &ca, QpShape{});
    auto b = session().create_qp_with_srq(pd.object, receive_cq.object, cq.object, srq.object, &cb, QpShape{});
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
    EXPECT_STATUS(STATUS_SUCCESS, session().srq_receive(srq.object, &receive_context, {&receive, 1}));

    sockaddr_in address = loopback4(test_port(5));
    ASSERT_TRUE(session().listen(listener.object, as_sockaddr(address), sizeof address).ok());
    NTSTATUS s = session().connect_async(active.object, a.object, as_sockaddr(address), sizeof address);
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
