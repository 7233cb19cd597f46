// Threads and IRQL in user space (GEN-IRQL-01, *-IRQL-01, WR-03, WR-07, WR-09, CQ-NOT-03).
//
// What "DISPATCH_LEVEL" means here: a provider may be called from inside its own completion and
// notification callbacks, where a kernel consumer runs at DISPATCH_LEVEL. The tests make those
// calls there and observe (a) that each returns within a watchdog bound (a provider that sleeps,
// waits on another thread or waits for its own callback thread shows as a timeout or deadlock),
// and (b) that its results are right once finished on the test thread. What is not observed:
// the IRQL itself, and short spin-waits; a wait shorter than the bound passes.
//
// Racing calls from several threads: where the calls touch independent queues the oracle judges
// them as usual (WR-07). Where they race on one queue (NdkFlush during posts, a close during
// posts) no single-threaded order exists for the oracle to judge, so those calls go straight to
// the dispatch tables and the test judges the invariants: every post the provider accepted
// completes exactly once, nothing else completes, and the provider neither crashes nor hangs.
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(Threading);

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kWatchdog = 1000ms;  // "does not block": generous for a loaded 2-core machine

bool wait_until(const std::atomic<bool>& flag, std::chrono::milliseconds limit = 10000ms) {
    auto deadline = Clock::now() + Session::scaled(limit);
    while (!flag && Clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    return flag;
}

const NDK_QP_DISPATCH& qp_table(NDK_QP* qp) {
    return *static_cast<const NDK_QP_DISPATCH*>(qp->Dispatch);
}

const NDK_CQ_DISPATCH& cq_table(NDK_CQ* cq) {
    return *static_cast<const NDK_CQ_DISPATCH*>(cq->Dispatch);
}

// Raw polls until `count` results came or the time is up (the oracle does not see these).
std::vector<NDK_RESULT> raw_drain(NDK_CQ* cq, size_t count,
                                  std::chrono::milliseconds limit = 5000ms) {
    std::vector<NDK_RESULT> all;
    auto deadline = Clock::now() + Session::scaled(limit);
    NDK_RESULT batch[64];
    while (all.size() < count && Clock::now() < deadline) {
        ULONG n = cq_table(cq).NdkGetCqResults(cq, batch, 64);
        all.insert(all.end(), batch, batch + n);
        if (n == 0) std::this_thread::sleep_for(200us);
    }
    std::this_thread::sleep_for(20ms);  // anything extra shows now
    ULONG n;
    while ((n = cq_table(cq).NdkGetCqResults(cq, batch, 64)) > 0)
        all.insert(all.end(), batch, batch + n);
    return all;
}

// GEN-IRQL-01 and the per-function IRQL rules: from inside a CQ notification callback, register
// an MR, initialize a fast-register MR, create a QP, build a LAM and fast-register; each returns
// within the watchdog, and each finishes right (on the test thread) afterwards.
NDKCT_TEST(Threading, CallsFromInsideANotificationCallbackDoNotBlock,
           "ndk.irql.calls_from_callbacks", "GEN-IRQL-01", "RMR-IRQL-01", "IFR-IRQL-01",
           "CQP-IRQL-01", "LAM-IRQL-01", "FR-IRQL-01", "LAM-REL-02") {
    seed::Mappings mappings(session());
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto plain = session().create_mr(pair.pd, false);
    auto to_initialize = session().create_mr(pair.pd, true);
    NDK_MR* fast = seed::fast_register_mr(session(), pair.pd, 2, false);
    ASSERT_TRUE(plain.object && to_initialize.object && fast);
    auto memory = session().buffer(2 * PAGE_SIZE);
    auto& mapped = mappings.add(memory);
    ASSERT_TRUE(mapped.ok() && mapped.pages.size() >= 2);
    auto chain = platform::describe(memory, 0, PAGE_SIZE);
    auto lam_chain = platform::describe(memory, 0, 2 * PAGE_SIZE);
    LamResult inner_lam;  // kept alive until the build finished
    std::map<std::string, std::chrono::steady_clock::duration> took;
    std::map<std::string, NTSTATUS> returned;
    std::atomic<bool> once{false}, done{false}, trigger_judged{false};
    static int fr_context, qp_context;
    session().hook_events(pair.cq, [&] {
        if (once.exchange(true)) return;
        // The harness's own wait, not the provider's: the oracle first learns of the write that
        // caused this notification (the test thread applies it when NdkWrite returns).
        wait_until(trigger_judged, 5000ms);
        auto timed = [&](const std::string& name, auto call) {
            auto t0 = Clock::now();
            returned[name] = call();
            took[name] = Clock::now() - t0;
        };
        timed("NdkRegisterMr", [&] {
            return session()
                .register_mr(plain.object, chain.head(), PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE)
                .status;
        });
        timed("NdkInitializeFastRegisterMr", [&] {
            return session().initialize_fast_register_mr(to_initialize.object, 1, false).status;
        });
        timed("NdkCreateQp", [&] {
            return session().create_qp(pair.pd, pair.cq, pair.cq, &qp_context, QpShape{}).status;
        });
        timed("NdkBuildLam", [&] {
            inner_lam =
                session().build_lam(lam_chain.head(), 2 * PAGE_SIZE,
                                    static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(2)));
            return inner_lam.done.status;
        });
        timed("NdkFastRegister", [&] {
            return session().fast_register(pair.a, &fr_context, fast, seed::first(mapped.pages, 2),
                                           0, 2 * PAGE_SIZE, seed::address_of(memory));
        });
        done = true;
    });
    // A completion on the armed CQ: a write from a into a region of b's. (Not a flush: the
    // docs do not say whether a flushed QP takes new work, and a fast register posted next to
    // a broken connection is about connections, not IRQL.)
    auto target = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(
        pair.pd, target, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    NDK_SGE sge = Session::sge(target, 0, 64, r.local_token);
    static int write_context;
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &write_context, {&sge, 1},
                                                  seed::address_of(target, 1024), r.remote_token));
    trigger_judged = true;
    // GEN-IRQL-01 and each function's IRQL rule: a call that blocked inside the callback is a
    // verdict of its own (the oracle's list), whatever the test asserts next.
    const std::map<std::string, const char*> irql_rule = {
        {"NdkRegisterMr", "RMR-IRQL-01"},
        {"NdkInitializeFastRegisterMr", "IFR-IRQL-01"},
        {"NdkCreateQp", "CQP-IRQL-01"},
        {"NdkBuildLam", "LAM-IRQL-01"},
        {"NdkFastRegister", "FR-IRQL-01"}};
    if (!wait_until(done)) {
        model::Verdict v;
        v.add({{"GEN-IRQL-01"},
               "the calls made inside a CQ notification callback did not all return within 10 s",
               false});
        session().report(std::move(v));
    }
    ASSERT_TRUE(done) << "GEN-IRQL-01: the calls made inside the notification callback did not "
                         "all return (a provider blocking at DISPATCH_LEVEL deadlocks here)";
    session().hook_events(pair.cq, nullptr);
    for (const auto& [name, duration] : took) {
        if (duration >= kWatchdog) {
            auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
            model::Verdict v;
            v.add({{irql_rule.at(name), "GEN-IRQL-01"},  // the page's rule first
                   name + " took " + std::to_string(ms) +
                       " ms inside a CQ notification callback (it may not block there; the "
                       "watchdog is " +
                       std::to_string(kWatchdog.count()) + " ms)",
                   false});
            session().report(std::move(v));
        }
        NTSTATUS s = returned[name];
        EXPECT_TRUE(s == STATUS_SUCCESS || s == STATUS_PENDING)
            << name << ": " << spec::status_name(s);
    }
    for (const Deferred& d : session().finish_deferred())
        EXPECT_STATUS(STATUS_SUCCESS, d.final_status) << d.name << " finished after the callback";
    // The fast register's completion and the write's both arrive.
    auto results = session().drain(pair.cq, 2);
    EXPECT_EQ(results.size(), 2u);
    bool registered = false;
    for (const auto& result : results)
        if (result.RequestContext == &fr_context) registered = result.Status == STATUS_SUCCESS;
    EXPECT_TRUE(registered) << "FR-IRQL-01: the fast register posted from the callback completed";
    EXPECT_NE(session().local_token(plain.object), 0u)
        << "the MR registered from the callback is usable";
    session().close_all();
    if (inner_lam.done.ok()) {
        inner_lam.check_chain_on_release = true;  // LAM-REL-02: the chain is still alive
        session().release_lam(inner_lam);
    }
}

// WR-07: NdkReceive on one thread while NdkWrite runs on another, on the same QP. The queues
// are independent, so the oracle judges every call; the test checks every completion and byte.
NDKCT_TEST(Threading, ReceiveAndWriteOnTwoThreads, "ndk.threads.receive_and_write", "WR-07") {
    constexpr int kCount = 100;
    QpShape shape;
    shape.receive_depth = kCount + 8;
    shape.initiator_depth = kCount + 8;
    auto pair = session().loopback_pair(shape, 4 * kCount);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto inbox = session().buffer(kCount * 64);
    auto source = session().buffer(PAGE_SIZE);
    auto target = session().buffer(kCount * 64);
    seed::fill(source, 9);
    auto in = session().register_buffer(pair.pd, inbox, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto dst = session().register_buffer(
        pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_TRUE(in.status == STATUS_SUCCESS && src.status == STATUS_SUCCESS &&
                dst.status == STATUS_SUCCESS);
    std::atomic<int> refused{0};
    std::thread receiver([&] {
        for (int i = 0; i < kCount; ++i) {
            NDK_SGE sge = Session::sge(inbox, size_t(i) * 64, 64, in.local_token);
            if (session().receive(pair.b, nullptr, {&sge, 1}) != STATUS_SUCCESS) ++refused;
        }
    });
    std::thread writer([&] {
        for (int i = 0; i < kCount; ++i) {
            NDK_SGE sge = Session::sge(source, size_t(i) * 8, 64, src.local_token);
            if (session().write(pair.b, nullptr, {&sge, 1},
                                seed::address_of(target, size_t(i) * 64),
                                dst.remote_token) != STATUS_SUCCESS)
                ++refused;
        }
    });
    receiver.join();
    writer.join();
    ASSERT_EQ(refused, 0) << "posts within the queue depths are accepted from two threads";
    auto writes = session().drain(pair.cq, kCount);
    ASSERT_EQ(writes.size(), size_t(kCount));
    for (const auto& w : writes)
        EXPECT_STATUS(STATUS_SUCCESS, w.Status);
    for (int i = 0; i < kCount; ++i)
        ASSERT_EQ(std::memcmp(target.data() + size_t(i) * 64, source.data() + size_t(i) * 8, 64), 0)
            << "write " << i;
    // The receives are all there: a sends kCount messages to b.
    for (int i = 0; i < kCount; ++i) {
        NDK_SGE sge = Session::sge(source, size_t(i), 32, src.local_token);
        ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, nullptr, {&sge, 1}));
    }
    auto both = session().drain(pair.cq, 2 * kCount);
    ASSERT_EQ(both.size(), size_t(2 * kCount));
    for (const auto& w : both)
        EXPECT_STATUS(STATUS_SUCCESS, w.Status);
}

// WR-03: NdkFlush on a QP while another thread posts receives to it. Oracle-blind (see the top).
NDKCT_TEST(Threading, FlushWhileAnotherThreadPosts, "ndk.threads.flush_during_posts", "WR-03") {
    constexpr int kPosts = 600;
    auto pd = session().create_pd();
    auto cq = session().create_cq(1024);
    ASSERT_TRUE(pd.object && cq.object);
    QpShape shape;
    shape.receive_depth = 128;
    auto qp = session().create_qp(pd.object, cq.object, cq.object, nullptr, shape);
    ASSERT_TRUE(qp.object);
    auto in = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pd.object, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    std::vector<char> contexts(kPosts);
    std::vector<NTSTATUS> statuses(kPosts, STATUS_PENDING);
    std::atomic<bool> posting{true};
    std::atomic<int> posted{0};
    std::thread poster([&] {
        NDK_SGE sge = Session::sge(in, 0, 64, r.local_token);
        for (int i = 0; i < kPosts; ++i) {
            statuses[i] = qp_table(qp.object).NdkReceive(qp.object, &contexts[i], &sge, 1);
            posted.store(i + 1, std::memory_order_release);
        }
        posting = false;
    });
    // The first flush waits for a few receives: once flushed, a QP may refuse receives inline
    // (MODEL-FLS-01, the default reading), and the test needs some accepted and cancelled.
    while (posted.load(std::memory_order_acquire) < 32 && posting)
        std::this_thread::yield();
    int flushes = 0;
    while (posting) {
        qp_table(qp.object).NdkFlush(qp.object);
        ++flushes;
        std::this_thread::sleep_for(100us);
    }
    poster.join();
    qp_table(qp.object).NdkFlush(qp.object);  // what was posted after the last racing flush
    size_t accepted = 0;
    for (NTSTATUS s : statuses)
        accepted += s == STATUS_SUCCESS;
    EXPECT_GT(accepted, 0u);
    auto results = raw_drain(cq.object, accepted);
    std::vector<int> seen(kPosts, 0);
    for (const auto& result : results) {
        auto* c = static_cast<char*>(result.RequestContext);
        ASSERT_TRUE(c >= contexts.data() && c < contexts.data() + kPosts)
            << "a completion nobody posted";
        ++seen[c - contexts.data()];
        EXPECT_STATUS(STATUS_CANCELLED, result.Status);
    }
    for (int i = 0; i < kPosts; ++i)
        EXPECT_EQ(seen[i], statuses[i] == STATUS_SUCCESS ? 1 : 0)
            << "receive " << i << " (" << spec::status_name(statuses[i]) << ") completed "
            << seen[i] << " times; " << flushes << " racing flushes";
}

// WR-09: the QP's connector is closed while another thread posts writes on the QP. The close
// completes, every accepted write completes exactly once, nothing else does. Oracle-blind.
NDKCT_TEST(Threading, ConnectorCloseWhileAnotherThreadPosts,
           "ndk.threads.close_connector_during_posts", "WR-09") {
    constexpr int kPosts = 400;
    QpShape shape;
    shape.initiator_depth = 64;
    auto pair = session().loopback_pair(shape, 1024);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    auto target = session().buffer(PAGE_SIZE);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto dst = session().register_buffer(
        pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_TRUE(src.status == STATUS_SUCCESS && dst.status == STATUS_SUCCESS);
    std::vector<char> contexts(kPosts);
    std::vector<NTSTATUS> statuses(kPosts, STATUS_PENDING);
    std::atomic<bool> go{false};
    std::thread poster([&] {
        NDK_SGE sge = Session::sge(source, 0, 64, src.local_token);
        go = true;
        NDK_RESULT batch[16];
        for (int i = 0; i < kPosts; ++i) {
            statuses[i] = qp_table(pair.a).NdkWrite(pair.a, &contexts[i], &sge, 1,
                                                    seed::address_of(target), dst.remote_token, 0);
            if (i % 32 == 31) std::this_thread::sleep_for(50us);
            (void)batch;
        }
    });
    ASSERT_TRUE(wait_until(go));
    std::this_thread::sleep_for(200us);
    Done closed = session().close(pair.active);  // the QP's successor, mid-posts
    poster.join();
    EXPECT_STATUS(STATUS_SUCCESS, closed.final_status) << "the close completes while posts race it";
    qp_table(pair.a).NdkFlush(pair.a);
    size_t accepted = 0;
    for (NTSTATUS s : statuses)
        accepted += s == STATUS_SUCCESS;
    auto results = raw_drain(pair.cq, accepted);
    std::vector<int> seen(kPosts, 0);
    for (const auto& result : results) {
        auto* c = static_cast<char*>(result.RequestContext);
        if (c >= contexts.data() && c < contexts.data() + kPosts) ++seen[c - contexts.data()];
    }
    for (int i = 0; i < kPosts; ++i)
        EXPECT_EQ(seen[i], statuses[i] == STATUS_SUCCESS ? 1 : 0)
            << "write " << i << " (" << spec::status_name(statuses[i]) << ") completed " << seen[i]
            << " times";
}

// CQ-NOT-03: notifications of one CQ never run at once. Each notification lingers in its
// callback; the harness counts overlapping callbacks (in every test, session.cpp).
NDKCT_TEST(Threading, NotificationsOfOneCqNeverOverlap, "ndk.threads.cq_notifications_serial",
           "CQ-NOT-03") {
    auto pair = session().loopback_pair({}, 512);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto in = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    session().hook_events(pair.cq, [] { std::this_thread::sleep_for(3ms); });
    NDK_SGE sge = Session::sge(in, 0, 64, r.local_token);
    constexpr int kRounds = 20;
    // The oracle judges arms and notifications in one order, so each round waits for its
    // notification before re-arming; an overlap can then only come from the provider (one
    // notification delivered twice at once, or a late one racing the next).
    for (int i = 0; i < kRounds; ++i) {
        size_t before = session().notifications(pair.cq);
        session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
        ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, nullptr, {&sge, 1}));
        ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, nullptr, {&sge, 1}));
        auto results = session().drain(pair.cq, 2);
        EXPECT_EQ(results.size(), 2u);
        auto deadline = Clock::now() + Session::scaled(5s);
        while (session().notifications(pair.cq) == before && Clock::now() < deadline)
            std::this_thread::sleep_for(1ms);
        NDKCT_RULE("CQ-NOT-07", "CQ-NOT-09");  // the armed CQ notifies of the completions
        ASSERT_GT(session().notifications(pair.cq), before) << "round " << i;
    }
    session().hook_events(pair.cq, nullptr);
}

}  // namespace
}  // namespace ndkct::conformance
