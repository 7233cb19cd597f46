// Close ordering seen from the provider's threads (CLOSE-03/04/05/07/08, CLOSE-CQ-01,
// CLOSE-ADP-01, GEN-CB-04): what must be over before a close completes, and closes issued from
// inside callbacks. The harness checks the order on every close of every test (session.cpp:
// check_close_order); these tests make the orders happen.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(Close);

using namespace std::chrono_literals;

bool wait_until(const std::atomic<bool>& flag, std::chrono::milliseconds limit = 5000ms) {
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(limit);
    while (!flag && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    return flag;
}

void expect_clean(Session& s) {
    for (const auto& v : s.verdict().violations) {
        if (v.warning) continue;
        RuleScope scope(v.rules, FailureKind::oracle);
        ADD_FAILURE() << "oracle: " << v.describe();
    }
}

// A CQ's close while its notification callback runs completes only after the callback returned
// (CLOSE-07, CLOSE-CQ-01), and no notification comes after the close (CLOSE-04).
NDKCT_TEST(Close, CqCloseWaitsForARunningNotification, "ndk.close.cq.waits_for_notification",
           "CLOSE-07", "CLOSE-CQ-01", "CLOSE-04") {
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    static int qp_context;
    auto qp = session().create_qp(pd.object, cq.object, cq.object, &qp_context, QpShape{});
    ASSERT_TRUE(qp.object);
    auto in = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pd.object, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    std::atomic<bool> inside{false}, returned{false};
    session().hook_events(cq.object, [&] {
        inside = true;
        std::this_thread::sleep_for(300ms);  // the close is requested meanwhile
        returned = true;
    });
    NDK_SGE sge = Session::sge(in, 0, 64, r.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(qp.object, nullptr, {&sge, 1}));
    session().arm_cq(cq.object, NDK_CQ_NOTIFY_ANY);
    session().flush(qp.object);  // a cancelled receive completes: the notification comes
    {
        NDKCT_RULE("CQ-NOT-07", "FLS-02");  // the flushed receive completes, the armed CQ notifies
        ASSERT_TRUE(wait_until(inside)) << "no notification for the flushed receive";
    }
    NDKCT_RULE("CLOSE-07", "CLOSE-CQ-01");  // what the rest of the test checks
    NTSTATUS qp_close = session().close_async(qp.object);
    NTSTATUS cq_close = session().close_async(cq.object);
    bool early = cq_close == STATUS_SUCCESS && !returned;
    EXPECT_FALSE(early)
        << "CLOSE-07: the CQ's close returned STATUS_SUCCESS while its notification ran";
    if (qp_close == STATUS_PENDING) {
        EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(qp.object).final_status);
    }
    if (cq_close == STATUS_PENDING) {
        EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(cq.object).final_status);
    }
    EXPECT_TRUE(returned) << "CLOSE-07: the close completed before the notification returned";
    wait_until(returned);  // after an early close the hook still runs, on this frame's flags
    session().hook_events(cq.object, nullptr);
}

// GEN-CB-04: the consumer closes a connector from inside the completion callback of its own
// NdkConnect; the provider neither deadlocks nor completes the close before that callback has
// returned (CLOSE-03). GEN-CB-01 (the provider not touching the object afterwards) shows as a
// use-after-free under the sanitizer build (NDKCT_SANITIZE), not otherwise.
NDKCT_TEST(Close, CloseFromInsideTheObjectsCompletionCallback, "ndk.close.from_completion_callback",
           "GEN-CB-04", "GEN-CB-01", "CLOSE-03") {
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    static int ca, cb;
    auto a = session().create_qp(pd.object, cq.object, cq.object, &ca, QpShape{});
    auto b = session().create_qp(pd.object, cq.object, cq.object, &cb, QpShape{});
    auto listener = session().create_listener();
    auto active = session().create_connector();
    ASSERT_TRUE(a.object && b.object && listener.object && active.object);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(seed::test_port(0));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const auto* sa = reinterpret_cast<const sockaddr*>(&address);
    ASSERT_TRUE(session().listen(listener.object, sa, sizeof address).ok());
    std::atomic<bool> hook_done{false};
    NTSTATUS close_status = STATUS_PENDING;
    auto started_at = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration close_took{};
    session().hook_next_callback([&] {
        auto t0 = std::chrono::steady_clock::now();
        close_status = session().close_async(active.object);
        close_took = std::chrono::steady_clock::now() - t0;
        hook_done = true;
    });
    NTSTATUS s = session().connect_async(active.object, a.object, sa, sizeof address);
    {
        // A connect's success means the peer accepted (CONN-15): the listener has not even
        // heard of this one yet.
        NDKCT_RULE("CONN-15");
        ASSERT_STATUS(STATUS_PENDING, s) << "a connect pends until the peer accepts";
    }
    NDK_CONNECTOR* passive = session().wait_connect_event(listener.object);
    ASSERT_TRUE(passive);
    s = session().accept_async(passive, b.object);
    ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << spec::status_name(s);
    session().wait_connect(active.object);  // its callback ran the hook
    ASSERT_TRUE(wait_until(hook_done))
        << "GEN-CB-04: the close from inside the callback did not return";
    EXPECT_LT(close_took, 2s)
        << "GEN-CB-04, GEN-IRQL-01: NdkCloseObject blocked inside the callback";
    EXPECT_STATUS(STATUS_PENDING, close_status)
        << "CLOSE-03: the close cannot complete while the connect's callback is running";
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(active.object).final_status);
    session().wait_accept(passive);  // whatever it is: the connecting side is gone
    (void)started_at;
}

// CLOSE-05: an antecedent's close does not complete while the close callback of a successor
// runs. QP a's close pends for its connector; the CQ's pends for the QPs; closing the
// connectors completes QP a's close, whose callback then lingers.
NDKCT_TEST(Close, AntecedentCloseWaitsForASuccessorsCloseCallback, "ndk.close.antecedent_waits",
           "CLOSE-05", "CLOSE-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    std::atomic<bool> returned{false};
    session().hook_next_callback(
        [&] {
            std::this_thread::sleep_for(300ms);
            returned = true;
        },
        HookAt::after_arrival);
    EXPECT_STATUS(STATUS_PENDING, session().close_async(pair.a));
    EXPECT_STATUS(STATUS_PENDING, session().close_async(pair.b));
    EXPECT_STATUS(STATUS_PENDING, session().close_async(pair.cq));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(pair.active).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(pair.a).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().close(pair.passive).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(pair.b).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(pair.cq).final_status);
    EXPECT_TRUE(returned) << "CLOSE-05: the CQ's close completed while QP a's close callback ran";
}

// CLOSE-ADP-01, CLOSE-API-02: the adapter closes through the provider's close entry point,
// which blocks until every callback of the adapter's objects has returned; here the last
// close callback is still running when the close is called.
NDKCT_TEST(Close, AdapterCloseWaitsForRunningCallbacks, "ndk.close.adapter.blocks", "CLOSE-ADP-01",
           "CLOSE-API-02", "CLOSE-05") {
    auto inner = std::make_unique<Session>(GetParam());
    auto pd = inner->create_pd();
    auto cq = inner->create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    auto qp = inner->create_qp(pd.object, cq.object, cq.object, nullptr, QpShape{});
    ASSERT_TRUE(qp.object);
    std::atomic<bool> returned{false};
    inner->hook_next_callback(
        [&] {
            std::this_thread::sleep_for(300ms);
            returned = true;
        },
        HookAt::after_arrival);
    EXPECT_STATUS(STATUS_PENDING, inner->close_async(cq.object)) << "CLOSE-02: the QP is open";
    EXPECT_STATUS(STATUS_SUCCESS, inner->close(qp.object).final_status);
    EXPECT_STATUS(STATUS_SUCCESS,
                  inner->wait_close(cq.object).final_status);  // its callback lingers
    EXPECT_STATUS(STATUS_SUCCESS, inner->close(pd.object).final_status);
    model::Verdict verdict = inner->close_adapter();
    EXPECT_TRUE(returned) << "CLOSE-ADP-01: CloseNdkAdapter returned while a callback ran";
    for (const auto& v : verdict.violations) {
        if (v.warning) continue;
        RuleScope scope(v.rules, FailureKind::oracle);
        ADD_FAILURE() << "oracle (inner session): " << v.describe();
    }
    inner.reset();
    expect_clean(session());
}

// A closed MR's token names nothing: a write through it from the other QP fails (RMR-DEREG-01),
// and the PD still closes once its successors did (CLOSE-02, GEN-ASYNC-01). Across two nodes the
// write goes to pair.b's node B, where the split once made a part of the closed MR for the token
// it kept (found by ndk.property.memory_registration across two guests): nothing closed that
// part, so the PD's part on B, and the PD's close, waited for it forever.
NDKCT_TEST(Close, PdClosesAfterAClosedMrsTokenWasUsed, "ndk.close.pd.after_closed_mr_token",
           "CLOSE-02", "GEN-ASYNC-01", "RMR-DEREG-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    seed::fill(source, 0x6d);
    auto src = session().register_buffer(pair.pd, source, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, src.status);
    auto target = session().buffer(PAGE_SIZE);
    auto gone = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, gone.status);
    ASSERT_STATUS(STATUS_SUCCESS, session().deregister_mr(gone.mr).final_status);
    ASSERT_STATUS(STATUS_SUCCESS, session().close(gone.mr).final_status);
    static int context;
    NDK_SGE sge = Session::sge(source, 0, 100, src.local_token);
    NTSTATUS posted =
        session().write(pair.a, &context, {&sge, 1}, seed::address_of(target), gone.remote_token);
    NDKCT_RULE("RMR-DEREG-01");
    if (posted == STATUS_SUCCESS) {
        auto results = session().drain(pair.cq, 1);
        ASSERT_EQ(1u, results.size()) << "the write did not complete";
        EXPECT_EQ(&context, results[0].RequestContext);
        EXPECT_TRUE(NT_ERROR(results[0].Status)) << spec::status_name(results[0].Status);
    } else {
        EXPECT_TRUE(NT_ERROR(posted)) << spec::status_name(posted);
    }
    EXPECT_TRUE(seed::untouched(target, 0, PAGE_SIZE));
    NDKCT_RULE("CLOSE-02", "GEN-ASYNC-01");  // every close completes, the PD's last
    for (void* o : std::initializer_list<void*>{pair.active, pair.passive, pair.listener, pair.a,
                                                pair.b, src.mr, pair.cq})
        EXPECT_STATUS(STATUS_SUCCESS, session().close(o).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().close(pair.pd).final_status);
    expect_clean(session());
}

}  // namespace
}  // namespace ndkct::conformance
