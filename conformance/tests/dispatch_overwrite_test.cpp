// GEN-CREATE-05: once an object has been handed out the provider never reads its Dispatch
// member again; the consumer may overwrite it and every later call works as before.
//
// Each object is trapped as soon as the test has it (the adapter, PD, CQ, SRQ, QPs, MRs, MW,
// listener, both connectors, a shared endpoint): its Dispatch is pointed at a harness-owned
// table of the same type (conformance/harness: DispatchTrap) whose entries forward to the
// object's saved original table. The test then drives every object through the Session as
// usual; the Session calls through the object's Dispatch, so the consumer's own calls take the
// overwritten member (and the oracle judges them all). A trap entry reached from inside another
// trapped call, or from a provider thread, is the provider reading Dispatch: the trap reports
// it to the oracle under GEN-CREATE-05. The results are checked against what the objects gave
// before the overwrite (tokens, addresses, adapter information) and against the bytes that
// landed. Nothing here runs Session calls from inside callbacks (they would count as the
// provider's).
#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "ndkct/conformance/dispatch_trap.hpp"
#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(DispatchOverwrite);

using namespace std::chrono_literals;

using seed::as_sockaddr;
using seed::loopback4;

void fill(platform::LockedBuffer& b, uint8_t seed) {
    for (size_t i = 0; i < b.size(); ++i)
        b.data()[i] = std::byte(uint8_t(i * 29 + seed));
}

bool started(NTSTATUS s) {
    return s == STATUS_PENDING || s == STATUS_SUCCESS;
}

// One completion, successful, for the request with this context.
void expect_one_success(Session& s, NDK_CQ* cq, const void* context, const char* what) {
    auto results = s.drain(cq, 1);
    ASSERT_EQ(results.size(), 1u) << what << ": no completion";
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status) << what;
    EXPECT_EQ(results[0].RequestContext, context) << what;
}

NDKCT_TEST(DispatchOverwrite, EveryObjectWorksThroughTheConsumersTable,
           "ndk.general.dispatch_overwrite.every_object", "GEN-CREATE-05") {
    Session& s = session();
    DispatchTrap trap(s);

    // The adapter: the same information through the consumer's table.
    trap.install(s.adapter());
    NDK_ADAPTER_INFO again{};
    ULONG size = sizeof again;
    ASSERT_STATUS(STATUS_SUCCESS, s.query_adapter_info(&again, &size));
    EXPECT_EQ(again.VendorId, info().VendorId);
    EXPECT_EQ(again.DeviceId, info().DeviceId);
    EXPECT_EQ(again.AdapterFlags, info().AdapterFlags);
    EXPECT_EQ(again.MaxCqDepth, info().MaxCqDepth);

    // Every create below goes through a trapped parent; each child is trapped at once.
    auto pd = s.create_pd();
    ASSERT_TRUE(pd.object);
    trap.install(pd.object);
    auto cq = s.create_cq(256);
    ASSERT_TRUE(cq.object);
    trap.install(cq.object);
    NDK_SRQ* srq = nullptr;
    if (info().MaxSrqDepth > 0) {
        srq = s.create_srq(pd.object, 64, 4).object;
        ASSERT_TRUE(srq);
        trap.install(srq);
    }
    static int a_context, b_context;
    auto a = s.create_qp(pd.object, cq.object, cq.object, &a_context, QpShape{});
    auto b = srq ? s.create_qp_with_srq(pd.object, cq.object, cq.object, srq, &b_context, QpShape{})
                 : s.create_qp(pd.object, cq.object, cq.object, &b_context, QpShape{});
    ASSERT_TRUE(a.object && b.object);
    trap.install(a.object);
    trap.install(b.object);

    // An MR registered before its overwrite keeps its tokens ...
    auto target = s.buffer(2 * PAGE_SIZE);
    Registered t = s.register_buffer(pd.object, target,
                                     NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                         NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, t.status);
    trap.install(t.mr);
    EXPECT_EQ(s.local_token(t.mr), t.local_token);
    EXPECT_EQ(s.remote_token(t.mr), t.remote_token);
    // ... and one registered after it works too.
    auto source = s.buffer(PAGE_SIZE);
    fill(source, 7);
    auto source_mr = s.create_mr(pd.object, false);
    ASSERT_TRUE(source_mr.object);
    trap.install(source_mr.object);
    auto source_chain = platform::describe(source, 0, PAGE_SIZE);
    ASSERT_TRUE(s.register_mr(source_mr.object, source_chain.head(), PAGE_SIZE,
                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE)
                    .ok());
    UINT32 source_token = s.local_token(source_mr.object);

    // A listener (its address as before), a connector, and the passive connector the listener's
    // connect event hands out, each trapped before it is used.
    auto listener = s.create_listener();
    ASSERT_TRUE(listener.object);
    sockaddr_in any = loopback4(0);
    ASSERT_TRUE(s.listen(listener.object, as_sockaddr(any), sizeof any).ok());
    AddressResult bound = s.local_address(listener.object);
    ASSERT_STATUS(STATUS_SUCCESS, bound.status);
    trap.install(listener.object);
    AddressResult bound_again = s.local_address(listener.object);
    EXPECT_STATUS(STATUS_SUCCESS, bound_again.status);
    EXPECT_EQ(bound_again.port(), bound.port());
    auto active = s.create_connector();
    ASSERT_TRUE(active.object);
    trap.install(active.object);
    sockaddr_in to = loopback4(bound.port());
    NTSTATUS st = s.connect_async(active.object, a.object, as_sockaddr(to), sizeof to);
    ASSERT_TRUE(started(st)) << spec::status_name(st);
    NDK_CONNECTOR* passive = s.wait_connect_event(listener.object);
    ASSERT_TRUE(passive) << "no connect event reached the listener";
    trap.install(passive);
    EXPECT_STATUS(STATUS_SUCCESS, s.get_connection_data(passive, 0, false).status);
    st = s.accept_async(passive, b.object);
    ASSERT_TRUE(started(st)) << spec::status_name(st);
    ASSERT_TRUE(s.wait_connect(active.object).ok());
    ASSERT_TRUE(s.complete_connect(active.object).ok());
    ASSERT_TRUE(s.wait_accept(passive).ok());
    AddressResult peer = s.peer_address(active.object);
    EXPECT_STATUS(STATUS_SUCCESS, peer.status);
    EXPECT_EQ(peer.port(), bound.port()) << "the active side's peer is the listener's address";

    // Write, with the CQ armed: the bytes land and the notification comes.
    size_t notified = s.notifications(cq.object);
    s.arm_cq(cq.object, NDK_CQ_NOTIFY_ANY);
    const uint64_t target_va = reinterpret_cast<uint64_t>(target.data());
    NDK_SGE out = Session::sge(source, 0, 1000, source_token);
    int written;
    ASSERT_STATUS(STATUS_SUCCESS,
                  s.write(a.object, &written, {&out, 1}, target_va + 100, t.remote_token));
    expect_one_success(s, cq.object, &written, "NdkWrite");
    EXPECT_EQ(std::memcmp(target.data() + 100, source.data(), 1000), 0) << "the written bytes";
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(5s);
    while (s.notifications(cq.object) == notified && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    EXPECT_GT(s.notifications(cq.object), notified) << "the armed CQ notified";

    // Read back into a third MR.
    auto back = s.buffer(PAGE_SIZE);
    Registered r = s.register_buffer(pd.object, back,
                                     NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    trap.install(r.mr);
    NDK_SGE in = Session::sge(back, 0, 1000, r.local_token);
    int read;
    ASSERT_STATUS(STATUS_SUCCESS,
                  s.read(a.object, &read, {&in, 1}, target_va + 100, t.remote_token));
    expect_one_success(s, cq.object, &read, "NdkRead");
    EXPECT_EQ(std::memcmp(back.data(), source.data(), 1000), 0) << "the bytes read";

    // Send into a receive posted on the SRQ (or on b).
    std::memset(back.data(), 0, back.size());
    NDK_SGE receive = Session::sge(back, 0, PAGE_SIZE, r.local_token);
    int received;
    ASSERT_STATUS(STATUS_SUCCESS, srq ? s.srq_receive(srq, &received, {&receive, 1})
                                      : s.receive(b.object, &received, {&receive, 1}));
    NDK_SGE message = Session::sge(source, 0, 200, source_token);
    int sent;
    ASSERT_STATUS(STATUS_SUCCESS, s.send(a.object, &sent, {&message, 1}));
    auto results = s.drain(cq.object, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& result : results) {
        EXPECT_STATUS(STATUS_SUCCESS, result.Status);
        EXPECT_TRUE(result.RequestContext == &sent || result.RequestContext == &received);
    }
    EXPECT_EQ(std::memcmp(back.data(), source.data(), 200), 0) << "the bytes sent";

    // A memory window: bound, written through, invalidated.
    auto mw = s.create_mw(pd.object);
    ASSERT_TRUE(mw.object);
    trap.install(mw.object);
    int bind_context;
    ASSERT_STATUS(STATUS_SUCCESS, s.bind(b.object, &bind_context, t.mr, mw.object, target_va,
                                         2 * PAGE_SIZE, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    expect_one_success(s, cq.object, &bind_context, "NdkBind");
    NDK_SGE through = Session::sge(source, 0, 300, source_token);
    int window_write;
    ASSERT_STATUS(STATUS_SUCCESS, s.write(a.object, &window_write, {&through, 1},
                                          target_va + PAGE_SIZE, s.remote_token(mw.object)));
    expect_one_success(s, cq.object, &window_write, "NdkWrite through the window");
    EXPECT_EQ(std::memcmp(target.data() + PAGE_SIZE, source.data(), 300), 0);
    int invalidated;
    ASSERT_STATUS(STATUS_SUCCESS, s.invalidate(b.object, &invalidated, mw.object));
    expect_one_success(s, cq.object, &invalidated, "NdkInvalidate");

    // CQ and SRQ controls, where the adapter has them.
    if (has_flag(NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED)) {
        EXPECT_TRUE(s.resize_cq(cq.object, 512).ok());
    }
    if (has_flag(NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED)) {
        EXPECT_STATUS(STATUS_SUCCESS, s.control_cq_interrupt_moderation(cq.object, 10, 4));
    }
    if (srq) {
        EXPECT_TRUE(s.modify_srq(srq, 64, 8).ok());
    }

    // A shared endpoint keeps its address.
    auto endpoint = s.create_shared_endpoint(as_sockaddr(any), sizeof any);
    if (endpoint.final_status != STATUS_NOT_SUPPORTED) {
        ASSERT_STATUS(STATUS_SUCCESS, endpoint.final_status);
        AddressResult held = s.local_address(endpoint.object);
        ASSERT_STATUS(STATUS_SUCCESS, held.status);
        trap.install(endpoint.object);
        AddressResult held_again = s.local_address(endpoint.object);
        EXPECT_STATUS(STATUS_SUCCESS, held_again.status);
        EXPECT_EQ(held_again.port(), held.port());
        EXPECT_STATUS(STATUS_SUCCESS, s.close(endpoint.object).final_status);
    }

    // Teardown through the trapped tables, successors first.
    EXPECT_TRUE(s.deregister_mr(r.mr).ok());
    EXPECT_TRUE(s.disconnect(active.object).ok());
    for (void* object : std::initializer_list<void*>{mw.object, active.object, passive,
                                                     listener.object, a.object, b.object})
        EXPECT_STATUS(STATUS_SUCCESS, s.close(object).final_status);
    if (srq) {
        EXPECT_STATUS(STATUS_SUCCESS, s.close(srq).final_status);
    }
    for (void* object :
         std::initializer_list<void*>{r.mr, t.mr, source_mr.object, cq.object, pd.object})
        EXPECT_STATUS(STATUS_SUCCESS, s.close(object).final_status);

    // The overwritten members really were the consumer's path (dozens of calls), and the trap
    // reports any provider call through them to the oracle (GEN-CREATE-05) as it goes out of
    // scope, restoring the adapter's Dispatch.
    EXPECT_GT(trap.consumer_calls(), 40u);
}

}  // namespace
}  // namespace ndkct::conformance
