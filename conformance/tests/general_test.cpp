// General object rules at run time: every object the provider hands out is well formed and
// answers by position in its table (GEN-*, CLOSE-API-01, EXT-02), and event callbacks receive
// the context registered with them (GEN-CB-05). The layouts themselves (offsets, member order
// as types) are fixed by spec/include's static asserts; what a running provider can get wrong is
// checked here and by the harness on every object (session_internal.hpp: check_object).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(General);

using namespace std::chrono_literals;

using seed::loopback4;

// A GUID no extension has.
constexpr GUID kUnknownInterface = {
    0x6e646b63, 0x7465, 0x7374, {0x75, 0x6e, 0x6b, 0x6e, 0x6f, 0x77, 0x6e, 0x21}};

// GEN-CREATE-01/03/07, GEN-CREATE-04 (the harness's sentinel in the output pointer of every
// create that pends), GEN-MAND-01, GEN-LAYOUT-01 (header then Dispatch; the harness reads
// ObjectType, Version, NdkReserved and every table member of each object it is handed),
// GEN-DISP-01 and CLOSE-API-01 (slot 1 answers as NdkQueryExtensionInterface, slot 0 closes),
// GEN-MAND-02 and EXT-02 (an unknown extension is refused; a success would fill the table).
NDKCT_TEST(General, EveryObjectIsWellFormedAndAnswersByPosition, "ndk.general.objects.well_formed",
           "GEN-CREATE-01", "GEN-CREATE-03", "GEN-CREATE-04", "GEN-CREATE-07", "GEN-MAND-01",
           "GEN-MAND-02", "GEN-LAYOUT-01", "GEN-DISP-01", "CLOSE-API-01", "EXT-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto mr = session().create_mr(pair.pd, false);
    auto fast = session().create_mr(pair.pd, true);
    auto mw = session().create_mw(pair.pd);
    sockaddr_in any = loopback4(0);
    auto endpoint =
        session().create_shared_endpoint(reinterpret_cast<const sockaddr*>(&any), sizeof any);
    ASSERT_TRUE(mr.object && fast.object && mw.object && endpoint.object);
    std::vector<void*> objects = {pair.pd,     pair.cq,      pair.a,         pair.b,
                                  pair.active, pair.passive, pair.listener,  mr.object,
                                  fast.object, mw.object,    endpoint.object};
    NDK_SRQ* srq = nullptr;
    if (info().MaxSrqDepth > 0) {
        srq = session().create_srq(pair.pd, 16, 1).object;
        ASSERT_TRUE(srq);
        objects.push_back(srq);
    }
    // GEN-CREATE-01: usable at once.
    EXPECT_TRUE(session().poll(pair.cq).empty());
    EXPECT_STATUS(STATUS_SUCCESS, session().local_address(endpoint.object).status);
    session().remote_token(mw.object);
    // Every object, the adapter included, refuses an extension it does not have.
    objects.push_back(session().adapter());
    NDKCT_RULE("EXT-01");
    for (void* object : objects) {
        NDK_EXTENSION_INTERFACE extension{};
        NTSTATUS s = session().query_extension_interface(object, kUnknownInterface,
                                                         session().version(), &extension);
        EXPECT_STATUS(STATUS_NOT_SUPPORTED, s)
            << "object type " << static_cast<NDK_OBJECT_HEADER*>(object)->ObjectType;
    }
    objects.pop_back();
    NDKCT_RULE("CLOSE-API-01", "CLOSE-01");
    // CLOSE-API-01: every close goes through slot 0 of the object's table (Session::close).
    session().close_all();
    EXPECT_TRUE(session().verdict().clean());
}

// GEN-CB-05: each event callback gets the context registered with its own object. With two of
// each kind and an event on only one, a provider that mixed the contexts up counts the event
// on the wrong object (the harness keeps one record per object, passed as the context).
NDKCT_TEST(General, EventCallbacksReceiveTheirOwnContext, "ndk.general.event_contexts", "GEN-CB-05",
           "CONN-DISC-02") {
    auto quiet_cq = session().create_cq(16);
    ASSERT_TRUE(quiet_cq.object);
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    session().arm_cq(quiet_cq.object, NDK_CQ_NOTIFY_ANY);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    auto in = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    NDK_SGE sge = Session::sge(in, 0, 64, r.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.a, nullptr, {&sge, 1}));
    session().flush(pair.a);
    ASSERT_EQ(session().drain(pair.cq, 1).size(), 1u);
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(5s);
    while (session().notifications(pair.cq) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(2ms);
    std::this_thread::sleep_for(30ms);
    {
        NDKCT_RULE("GEN-CB-05", "CQ-NOT-09");
        EXPECT_EQ(session().notifications(pair.cq), 1u) << "the CQ with the completion";
        EXPECT_EQ(session().notifications(quiet_cq.object), 0u) << "not the other CQ";
    }
    // Two listeners, a request to the second.
    auto first = session().create_listener();
    auto second = session().create_listener();
    auto connector = session().create_connector();
    auto qp = session().create_qp(pair.pd, pair.cq, pair.cq, nullptr, QpShape{});
    ASSERT_TRUE(first.object && second.object && connector.object && qp.object);
    sockaddr_in one = loopback4(seed::test_port(0)), two = loopback4(seed::test_port(1));
    ASSERT_TRUE(
        session().listen(first.object, reinterpret_cast<const sockaddr*>(&one), sizeof one).ok());
    ASSERT_TRUE(
        session().listen(second.object, reinterpret_cast<const sockaddr*>(&two), sizeof two).ok());
    NTSTATUS s = session().connect_async(connector.object, qp.object,
                                         reinterpret_cast<const sockaddr*>(&two), sizeof two);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS);
    NDK_CONNECTOR* incoming = session().wait_connect_event(second.object);
    {
        NDKCT_RULE("GEN-CB-05", "CONN-20");
        ASSERT_TRUE(incoming) << "the event reaches the listener the request was for";
        EXPECT_EQ(session().connect_events(first.object), 0u) << "and not the other";
    }
    {
        NDKCT_RULE("CONN-23", "CONN-08");  // a rejected request fails the connect
        EXPECT_STATUS(STATUS_SUCCESS, session().reject(incoming));
        EXPECT_STATUS(STATUS_CONNECTION_REFUSED,
                      session().wait_connect(connector.object).final_status);
    }
    // The passive connector hears of the active side's disconnect; the active side does not.
    {
        NDKCT_RULE("CONN-DISC-01");
        EXPECT_STATUS(STATUS_SUCCESS, session().disconnect(pair.active).final_status);
    }
    NDKCT_RULE("CONN-DISC-02", "GEN-CB-05");
    deadline = std::chrono::steady_clock::now() + Session::scaled(5s);
    while (session().disconnect_events(pair.passive) == 0 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(2ms);
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(session().disconnect_events(pair.passive), 1u);
    EXPECT_EQ(session().disconnect_events(pair.active), 0u)
        << "the side that disconnected hears nothing";
}

}  // namespace
}  // namespace ndkct::conformance
