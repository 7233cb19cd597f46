// Completion queues and shared receive queues: depth limits, results, notifications, resize,
// interrupt moderation, completion statuses (CQ-*), SRQ limits, modify, receives and threshold
// notifications (SRQ-*).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(CompletionQueue);
NDKCT_SUITE(SharedReceiveQueue);

using namespace std::chrono_literals;

NTSTATUS outcome(NTSTATUS status, NTSTATUS final_status) {
    return status == STATUS_PENDING ? final_status : status;
}
template <typename T>
NTSTATUS outcome(const Made<T>& m) {
    return outcome(m.status, m.final_status);
}
NTSTATUS outcome(const Done& d) {
    return outcome(d.status, d.final_status);
}

// Waits up to `limit` for the object's notification count to reach `want`; returns the count.
size_t await_notifications(Session& s, void* object, size_t want,
                           std::chrono::milliseconds limit = 2000ms) {
    auto* key = static_cast<NDK_CQ*>(object);  // the count is kept per object, CQ or SRQ
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(limit);
    size_t n = s.notifications(key);
    while (n < want && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(2ms);
        n = s.notifications(key);
    }
    return n;
}

// Connects `active` to `passive` (QPs of one adapter) through a listener on 127.0.0.1.
bool connect_qps(Session& s, NDK_QP* active, NDK_QP* passive, std::string& problem) {
    auto* listener = s.create_listener().object;
    if (!listener) return problem = "NdkCreateListener failed", false;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(s.next_port());  // below the providers' ephemeral 49152..
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    auto* where = reinterpret_cast<sockaddr*>(&address);
    if (!s.listen(listener, where, sizeof address).ok()) return problem = "NdkListen failed", false;
    auto* connector = s.create_connector().object;
    if (!connector) return problem = "NdkCreateConnector failed", false;
    NTSTATUS st = s.connect_async(connector, active, where, sizeof address);
    if (st != STATUS_PENDING && st != STATUS_SUCCESS) return problem = "NdkConnect failed", false;
    auto* incoming = s.wait_connect_event(listener);
    if (!incoming) return problem = "no connect event", false;
    st = s.accept_async(incoming, passive);
    if (st != STATUS_PENDING && st != STATUS_SUCCESS) return problem = "NdkAccept failed", false;
    if (!s.wait_connect(connector).ok())
        return problem = "NdkConnect completed with an error", false;
    if (!s.complete_connect(connector).ok()) return problem = "NdkCompleteConnect failed", false;
    if (!s.wait_accept(incoming).ok()) return problem = "NdkAccept completed with an error", false;
    return true;
}

// A written-to region and a source region on a pair's PD, for completions made by writes.
struct WriteTarget {
    platform::LockedBuffer source, target;
    Registered src, dst;
};

WriteTarget write_target(Session& s, NDK_PD* pd) {
    WriteTarget w{s.buffer(PAGE_SIZE), s.buffer(PAGE_SIZE), {}, {}};
    w.src = s.register_buffer(pd, w.source, 0);
    w.dst = s.register_buffer(pd, w.target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    return w;
}

NTSTATUS write_one(Session& s, NDK_QP* qp, WriteTarget& w, void* context, ULONG length = 64) {
    NDK_SGE sge = Session::sge(w.source, 0, length, w.src.local_token);
    return s.write(qp, context, {&sge, 1}, reinterpret_cast<uint64_t>(w.target.data()),
                   w.dst.remote_token);
}

// ---- Creation ----

NDKCT_TEST(CompletionQueue, DepthAtTheMaximumAndOnePast, "ndk.cq.create.depth_limit",
           "CQ-CREATE-01", "CQ-CREATE-02") {
    ULONG max = info().MaxCqDepth;
    NDKCT_REQUIRE(max > 0 && max < MAXULONG, "a finite MaxCqDepth");
    auto over = session().create_cq(max + 1);
    EXPECT_STATUS(STATUS_INVALID_PARAMETER, outcome(over));
    EXPECT_EQ(over.object, nullptr);
    auto at = session().create_cq(max);
    NTSTATUS s = outcome(at);
    EXPECT_TRUE(s == STATUS_SUCCESS || s == STATUS_INSUFFICIENT_RESOURCES) << spec::status_name(s);
    if (s == STATUS_SUCCESS) {
        EXPECT_NE(at.object, nullptr);
    }
    auto small = session().create_cq(1);
    EXPECT_STATUS(STATUS_SUCCESS, outcome(small));
    EXPECT_NE(small.object, nullptr);
}

NDKCT_TEST(CompletionQueue, HoldsItsDepthWithoutOverrun, "ndk.cq.create.holds_depth",
           "CQ-CREATE-04", "CQ-CST-01", "CQ-RES-05") {
    constexpr ULONG depth = 8;
    auto pair = session().loopback_pair({}, depth);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto w = write_target(session(), pair.pd);
    int contexts[depth];
    for (ULONG i = 0; i < depth; ++i) {
        ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, &contexts[i]));
    }
    NDKCT_RULE("CQ-CREATE-04", "CQ-CST-01", "CQ-RES-05");
    auto results = session().drain(pair.cq, depth);
    ASSERT_EQ(results.size(), size_t(depth));
    for (ULONG i = 0; i < depth; ++i) {
        EXPECT_STATUS(STATUS_SUCCESS, results[i].Status);
        EXPECT_EQ(results[i].RequestContext, &contexts[i]);
    }
    EXPECT_TRUE(session().poll(pair.cq).empty());
}

// ---- Getting results ----

NDKCT_TEST(CompletionQueue, EmptyCqYieldsZero, "ndk.cq.get.empty", "CQ-GET-01", "CQ-GET-02") {
    auto cq = session().create_cq(16);
    ASSERT_TRUE(cq.object);
    EXPECT_TRUE(session().poll(cq.object, 1).empty());
    EXPECT_TRUE(session().poll(cq.object, 16).empty());
}

NDKCT_TEST(CompletionQueue, AtMostNResultsAndEachOnce, "ndk.cq.get.bounds_once", "CQ-GET-01",
           "CQ-GET-03", "CQ-GET-04") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto w = write_target(session(), pair.pd);
    constexpr int count = 7;
    int contexts[count];
    for (int& c : contexts) {
        ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, &c));
    }
    NDKCT_RULE("CQ-GET-01", "CQ-GET-04");  // at most N per call, each entry once
    std::multiset<void*> seen;
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(5s);
    while (seen.size() < size_t(count) && std::chrono::steady_clock::now() < deadline) {
        auto got = session().poll(pair.cq, 2);
        EXPECT_LE(got.size(), 2u);
        for (const auto& r : got)
            seen.insert(r.RequestContext);
        if (got.empty()) std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(seen.size(), size_t(count));
    for (int& c : contexts)
        EXPECT_EQ(seen.count(&c), 1u);
    EXPECT_TRUE(session().poll(pair.cq, 16).empty()) << "every entry was already removed";
}

// ---- Result fields ----

NDKCT_TEST(CompletionQueue, ResultFieldsNameTheRequest, "ndk.cq.results.fields", "CQ-RES-01",
           "CQ-RES-02", "CQ-RES-03", "CQ-RES-04", "CQ-RES-05", "CQ-CST-01", "CQ-GET-03") {
    NDKCT_REQUIRE(NDKCT_VERSION_AT_LEAST(session().version(), 1, 2),
                  "NdkGetCqResultsEx (NDKPI 1.2)");
    auto pd = session().create_pd().object;
    auto cq = session().create_cq(64).object;
    ASSERT_TRUE(pd && cq);
    int qp_a_context = 0, qp_b_context = 0;
    auto a = session().create_qp(pd, cq, cq, &qp_a_context, {}).object;
    auto b = session().create_qp(pd, cq, cq, &qp_b_context, {}).object;
    ASSERT_TRUE(a && b);
    std::string problem;
    ASSERT_TRUE(connect_qps(session(), a, b, problem)) << problem;

    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(PAGE_SIZE);
    for (size_t i = 0; i < out.size(); ++i)
        out.data()[i] = std::byte(uint8_t(i * 7 + 1));
    auto o = session().register_buffer(pd, out, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    auto i =
        session().register_buffer(pd, in,
                                  NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE |
                                      NDK_MR_FLAG_RDMA_READ_SINK);
    int receive_ctx, send_ctx, write_ctx, read_ctx;
    NDK_SGE receive = Session::sge(in, 0, 2048, i.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(b, &receive_ctx, {&receive, 1}));
    NDK_SGE send = Session::sge(out, 0, 777, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(a, &send_ctx, {&send, 1}));
    auto results = session().drain(cq, 2);
    NDK_SGE wsge = Session::sge(out, 0, 300, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(a, &write_ctx, {&wsge, 1},
                                  reinterpret_cast<uint64_t>(in.data() + 3000), i.remote_token));
    NDK_SGE rsge = Session::sge(in, 3500, 200, i.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().read(a, &read_ctx, {&rsge, 1},
                                 reinterpret_cast<uint64_t>(out.data() + 10), o.remote_token));
    NDKCT_RULE("CQ-RES-01", "CQ-RES-02", "CQ-RES-03", "CQ-RES-04", "CQ-RES-05", "CQ-CST-01",
               "CQ-GET-03");  // what the rest of the test checks
    auto more = session().drain(cq, 2);
    results.insert(results.end(), more.begin(), more.end());
    ASSERT_EQ(results.size(), 4u);
    std::set<void*> contexts;
    for (const auto& r : results) {
        contexts.insert(r.RequestContext);
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
        EXPECT_EQ(r.ProviderErrorCode, 0u);
        if (r.RequestContext == &receive_ctx) {
            EXPECT_EQ(r.QPContext, &qp_b_context);
            EXPECT_EQ(r.Type, NdkOperationTypeReceive);
            EXPECT_EQ(r.BytesTransferred, 777u);
        } else if (r.RequestContext == &send_ctx) {
            EXPECT_EQ(r.QPContext, &qp_a_context);
            EXPECT_EQ(r.Type, NdkOperationTypeSend);
        } else if (r.RequestContext == &write_ctx) {
            EXPECT_EQ(r.QPContext, &qp_a_context);
            EXPECT_EQ(r.Type, NdkOperationTypeWrite);
        } else if (r.RequestContext == &read_ctx) {
            EXPECT_EQ(r.QPContext, &qp_a_context);
            EXPECT_EQ(r.Type, NdkOperationTypeRead);
        } else {
            ADD_FAILURE() << "an entry with an unknown RequestContext";
        }
    }
    EXPECT_EQ(contexts.size(), 4u);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 777), 0);
    EXPECT_EQ(std::memcmp(in.data() + 3500, out.data() + 10, 200), 0);
}

// ---- Completion statuses ----

NDKCT_TEST(CompletionQueue, FlushedReceivesAreCancelled, "ndk.cq.status.flush_cancelled",
           "CQ-CST-02", "CQ-RES-05") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto in = session().buffer(PAGE_SIZE);
    auto i = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE sge = Session::sge(in, 0, 512, i.local_token);
    int first, second;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &first, {&sge, 1}));
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &second, {&sge, 1}));
    session().flush(pair.b);
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
        EXPECT_STATUS(STATUS_CANCELLED, r.Status);
        EXPECT_TRUE(r.RequestContext == &first || r.RequestContext == &second);
    }
}

// ---- Notifications ----

NDKCT_TEST(CompletionQueue, NoNotificationWithoutAnArm, "ndk.cq.notify.none_without_arm",
           "CQ-NOT-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto w = write_target(session(), pair.pd);
    for (int k = 0; k < 3; ++k) {
        ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    }
    EXPECT_EQ(session().drain(pair.cq, 3).size(), 3u);
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(session().notifications(pair.cq), 0u);
}

NDKCT_TEST(CompletionQueue, ArmAnyNotifiesOnce, "ndk.cq.notify.any_once", "CQ-NOT-09", "CQ-NOT-06",
           "CQ-NOT-07", "CQ-ARM-01", "CQ-STATUS-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto w = write_target(session(), pair.pd);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    {
        NDKCT_RULE("CQ-NOT-09", "CQ-NOT-07", "CQ-ARM-01");
        EXPECT_EQ(await_notifications(session(), pair.cq, 1), 1u);
    }
    EXPECT_EQ(session().drain(pair.cq, 1).size(), 1u);
    // The arm is consumed: further completions do not notify.
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    EXPECT_EQ(session().drain(pair.cq, 2).size(), 2u);
    std::this_thread::sleep_for(100ms);
    {
        NDKCT_RULE("CQ-NOT-06");
        EXPECT_EQ(session().notifications(pair.cq), 1u);
    }
    // A new arm with a fresh completion notifies again.
    NDKCT_RULE("CQ-NOT-09", "CQ-NOT-06");
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    EXPECT_EQ(await_notifications(session(), pair.cq, 2), 2u);
    EXPECT_EQ(session().drain(pair.cq, 1).size(), 1u);
}

NDKCT_TEST(CompletionQueue, ArmWithAQueuedEntryIsSatisfied, "ndk.cq.notify.arm_with_entry",
           "CQ-NOT-02", "CQ-NOT-09") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto w = write_target(session(), pair.pd);
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    std::this_thread::sleep_for(
        50ms);  // the entry is queued (or will be: ANY is satisfied either way)
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    NDKCT_RULE("CQ-NOT-02", "CQ-NOT-09");
    EXPECT_EQ(await_notifications(session(), pair.cq, 1), 1u);
    EXPECT_EQ(session().drain(pair.cq, 1).size(), 1u);
}

struct SendSetup {
    platform::LockedBuffer out, in;
    Registered o, i;
};

SendSetup send_setup(Session& s, NDK_PD* pd) {
    SendSetup x{s.buffer(PAGE_SIZE), s.buffer(PAGE_SIZE), {}, {}};
    x.o = s.register_buffer(pd, x.out, 0);
    x.i = s.register_buffer(pd, x.in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    return x;
}

// A receive on `to` and a send from `from` with `flags`.
void send_one(Session& s, NDK_QP* from, NDK_QP* to, SendSetup& x, ULONG flags) {
    NDK_SGE receive = Session::sge(x.in, 0, 256, x.i.local_token);
    EXPECT_STATUS(STATUS_SUCCESS, s.receive(to, nullptr, {&receive, 1}));
    NDK_SGE send = Session::sge(x.out, 0, 100, x.o.local_token);
    EXPECT_STATUS(STATUS_SUCCESS, s.send(from, nullptr, {&send, 1}, flags));
}

NDKCT_TEST(CompletionQueue, SolicitedArmWaitsForASolicitedSend, "ndk.cq.notify.solicited",
           "CQ-NOT-10", "CQ-NOT-06") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto x = send_setup(session(), pair.pd);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_SOLICITED);
    send_one(session(), pair.a, pair.b, x, 0);
    EXPECT_EQ(session().drain(pair.cq, 2).size(), 2u);
    std::this_thread::sleep_for(100ms);
    NDKCT_RULE("CQ-NOT-10", "CQ-NOT-06");
    EXPECT_EQ(session().notifications(pair.cq), 0u) << "a plain send does not satisfy SOLICITED";
    send_one(session(), pair.a, pair.b, x, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT);
    EXPECT_EQ(await_notifications(session(), pair.cq, 1), 1u);
    EXPECT_EQ(session().drain(pair.cq, 2).size(), 2u);
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(session().notifications(pair.cq), 1u);
}

NDKCT_TEST(CompletionQueue, SolicitedArmFiresOnAnError, "ndk.cq.notify.solicited_error",
           "CQ-NOT-11", "CQ-CST-03", "FLS-02", "RMR-FLG-04") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    auto target = session().buffer(PAGE_SIZE);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto dst = session().register_buffer(pair.pd, target,
                                         NDK_MR_FLAG_ALLOW_LOCAL_WRITE);  // no remote right
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_SOLICITED);
    NDK_SGE sge = Session::sge(source, 0, 64, src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, nullptr, {&sge, 1},
                                  reinterpret_cast<uint64_t>(target.data()), dst.remote_token));
    {
        NDKCT_RULE("CQ-NOT-11");  // an error completion satisfies a SOLICITED arm
        EXPECT_EQ(await_notifications(session(), pair.cq, 1), 1u);
    }
    NDKCT_RULE("CQ-CST-03");  // the write without the remote right completes with an error
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(NT_ERROR(results[0].Status)) << spec::status_name(results[0].Status);
}

NDKCT_TEST(CompletionQueue, SecondArmKeepsTheStrongerType, "ndk.cq.notify.rearm_combination",
           "CQ-NOT-04", "CQ-NOT-09", "CQ-NOT-10") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto x = send_setup(session(), pair.pd);
    // SOLICITED then ANY: ANY.
    NDKCT_RULE("CQ-NOT-04", "CQ-NOT-09", "CQ-NOT-10");
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_SOLICITED);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    send_one(session(), pair.a, pair.b, x, 0);
    EXPECT_EQ(await_notifications(session(), pair.cq, 1), 1u);
    EXPECT_EQ(session().drain(pair.cq, 2).size(), 2u);
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(session().notifications(pair.cq), 1u);
    // ERRORS then SOLICITED: SOLICITED (a plain send does not notify, a solicited one does).
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ERRORS);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_SOLICITED);
    send_one(session(), pair.a, pair.b, x, 0);
    EXPECT_EQ(session().drain(pair.cq, 2).size(), 2u);
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(session().notifications(pair.cq), 1u);
    send_one(session(), pair.a, pair.b, x, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT);
    EXPECT_EQ(await_notifications(session(), pair.cq, 2), 2u);
    EXPECT_EQ(session().drain(pair.cq, 2).size(), 2u);
}

// ---- Resize ----

NDKCT_TEST(CompletionQueue, ResizeLimitsAndNewDepth, "ndk.cq.resize.depth", "CQ-RESIZE-02",
           "CQ-RESIZE-03", "CQ-RESIZE-04") {
    NDKCT_REQUIRE(has_flag(NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED),
                  "NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED");
    ULONG max = info().MaxCqDepth;
    NDKCT_REQUIRE(max >= 32 && max < MAXULONG, "a finite MaxCqDepth of at least 32");
    auto pair = session().loopback_pair({}, 4);
    ASSERT_TRUE(pair.connected) << pair.problem;
    EXPECT_STATUS(STATUS_INVALID_PARAMETER, outcome(session().resize_cq(pair.cq, max + 1)));
    Done grown = session().resize_cq(pair.cq, 32);
    NTSTATUS s = outcome(grown);
    NDKCT_REQUIRE(s != STATUS_INSUFFICIENT_RESOURCES, "resources for a resize to 32");
    ASSERT_STATUS(STATUS_SUCCESS, s);
    auto w = write_target(session(), pair.pd);
    for (int k = 0; k < 32; ++k) {
        ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    }
    NDKCT_RULE("CQ-RESIZE-04");  // the resized CQ holds its new depth
    auto results = session().drain(pair.cq, 32);
    ASSERT_EQ(results.size(), 32u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
}

// ---- Interrupt moderation ----

NDKCT_TEST(CompletionQueue, ModerationWithoutTheFlagIsNotSupported,
           "ndk.cq.moderation.not_supported", "CQ-IM-02") {
    NDKCT_REQUIRE(!has_flag(NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED),
                  "an adapter without interrupt moderation");
    auto cq = session().create_cq(16);
    ASSERT_TRUE(cq.object);
    EXPECT_STATUS(STATUS_NOT_SUPPORTED,
                  session().control_cq_interrupt_moderation(cq.object, 100, 4));
}

NDKCT_TEST(CompletionQueue, ModerationSettingsAreAccepted, "ndk.cq.moderation.settings", "CQ-IM-03",
           "CQ-IM-04", "CQ-IM-06", "CQ-IM-07", "CQ-IM-08", "CQ-IM-10") {
    NDKCT_REQUIRE(has_flag(NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED),
                  "NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED");
    auto cq = session().create_cq(16);
    ASSERT_TRUE(cq.object);
    struct Setting {
        ULONG interval, count;
    };
    for (Setting s : {Setting{100, 4}, Setting{0, 0}, Setting{0, MAXULONG}, Setting{MAXULONG, 8},
                      Setting{50, MAXULONG}, Setting{50, 17}, Setting{10, 1}}) {
        NTSTATUS st = session().control_cq_interrupt_moderation(cq.object, s.interval, s.count);
        EXPECT_TRUE(st == STATUS_SUCCESS || st == STATUS_INSUFFICIENT_RESOURCES)
            << spec::status_name(st) << " for " << s.interval << "/" << s.count;
    }
}

NDKCT_TEST(CompletionQueue, ModerationBothInfiniteIsAMix, "ndk.cq.moderation.invalid_mix",
           "CQ-IM-09", "CQ-IM-04") {
    NDKCT_REQUIRE(has_flag(NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED),
                  "NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED");
    auto cq = session().create_cq(16);
    ASSERT_TRUE(cq.object);
    EXPECT_STATUS(STATUS_INVALID_PARAMETER_MIX,
                  session().control_cq_interrupt_moderation(cq.object, MAXULONG, MAXULONG));
    EXPECT_STATUS(STATUS_INVALID_PARAMETER_MIX,
                  session().control_cq_interrupt_moderation(cq.object, MAXULONG, 17));
}

// ---- SRQ ----

NDKCT_TEST(SharedReceiveQueue, CreateLimits, "ndk.srq.create.limits", "SRQ-01", "SRQ-04",
           "SRQ-05") {
    ULONG max = info().MaxSrqDepth;
    NDKCT_REQUIRE(max > 0 && max < MAXULONG, "SRQ support (MaxSrqDepth > 0)");
    ULONG max_sge = info().MaxReceiveRequestSge;
    auto pd = session().create_pd().object;
    ASSERT_TRUE(pd);
    auto over = session().create_srq(pd, max + 1, 1);
    EXPECT_STATUS(STATUS_INVALID_PARAMETER, outcome(over));
    EXPECT_EQ(over.object, nullptr);
    if (max_sge < MAXULONG) {
        auto sge_over = session().create_srq(pd, 16, max_sge + 1);
        EXPECT_STATUS(STATUS_INVALID_PARAMETER, outcome(sge_over));
        EXPECT_EQ(sge_over.object, nullptr);
    }
    auto at = session().create_srq(pd, max, max_sge);
    NTSTATUS s = outcome(at);
    EXPECT_TRUE(s == STATUS_SUCCESS || s == STATUS_INSUFFICIENT_RESOURCES) << spec::status_name(s);
    if (s == STATUS_SUCCESS) {
        EXPECT_NE(at.object, nullptr);
    }
}

NDKCT_TEST(SharedReceiveQueue, NoSrqSupportRejectsEveryDepth, "ndk.srq.create.unsupported",
           "SRQ-06") {
    NDKCT_REQUIRE(info().MaxSrqDepth == 0, "an adapter without SRQ support");
    auto pd = session().create_pd().object;
    ASSERT_TRUE(pd);
    EXPECT_STATUS(STATUS_INVALID_PARAMETER, outcome(session().create_srq(pd, 1, 1)));
}

NDKCT_TEST(SharedReceiveQueue, ModifyDepthAndThreshold, "ndk.srq.modify", "SRQ-02", "SRQ-09",
           "SRQ-14", "SRQ-17") {
    ULONG max = info().MaxSrqDepth;
    NDKCT_REQUIRE(max >= 8 && max < MAXULONG, "SRQ support with MaxSrqDepth >= 8");
    auto pd = session().create_pd().object;
    ASSERT_TRUE(pd);
    auto srq = session().create_srq(pd, 4, 1, 0, false).object;
    ASSERT_TRUE(srq);
    EXPECT_STATUS(STATUS_INVALID_PARAMETER, outcome(session().modify_srq(srq, max + 1, 0)));
    EXPECT_STATUS(STATUS_SUCCESS, outcome(session().modify_srq(srq, 8, 0)));
    // Depth 0 keeps the depth (8) and changes only the threshold.
    EXPECT_STATUS(STATUS_SUCCESS, outcome(session().modify_srq(srq, 0, 2)));
    auto in = session().buffer(PAGE_SIZE);
    auto i = session().register_buffer(pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE sge = Session::sge(in, 0, 256, i.local_token);
    for (int k = 0; k < 8; ++k) {
        EXPECT_STATUS(STATUS_SUCCESS, session().srq_receive(srq, nullptr, {&sge, 1}))
            << "receive " << k;
    }
}

// An SRQ, a CQ and two connected QPs: `a` plain, `b` taking its receives from the SRQ.
struct SrqPair {
    NDK_PD* pd = nullptr;
    NDK_CQ* cq = nullptr;
    NDK_SRQ* srq = nullptr;
    NDK_QP* a = nullptr;
    NDK_QP* b = nullptr;
    int a_context = 0, b_context = 0;
};

void make_srq_pair(Session& s, SrqPair& p, ULONG srq_depth, ULONG threshold, bool& ok,
                   std::string& problem) {
    ok = false;
    p.pd = s.create_pd().object;
    p.cq = s.create_cq(256).object;
    if (!p.pd || !p.cq) return void(problem = "NdkCreatePd or NdkCreateCq failed");
    p.srq = s.create_srq(p.pd, srq_depth, 2, threshold, true).object;
    if (!p.srq) return void(problem = "NdkCreateSrq failed");
    p.a = s.create_qp(p.pd, p.cq, p.cq, &p.a_context, {}).object;
    p.b = s.create_qp_with_srq(p.pd, p.cq, p.cq, p.srq, &p.b_context, {}).object;
    if (!p.a || !p.b) return void(problem = "NdkCreateQp or NdkCreateQpWithSrq failed");
    ok = connect_qps(s, p.a, p.b, problem);
}

NDKCT_TEST(SharedReceiveQueue, SendsConsumeSrqReceives, "ndk.srq.receive.consumed", "SRQ-17",
           "CQ-RES-01", "CQ-RES-02", "CQ-RES-05") {
    NDKCT_REQUIRE(info().MaxSrqDepth >= 8, "SRQ support with MaxSrqDepth >= 8");
    SrqPair p;
    bool ok;
    std::string problem;
    make_srq_pair(session(), p, 8, 0, ok, problem);
    ASSERT_TRUE(ok) << problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(2 * PAGE_SIZE);
    for (size_t k = 0; k < out.size(); ++k)
        out.data()[k] = std::byte(uint8_t(k * 13 + 5));
    auto o = session().register_buffer(p.pd, out, 0);
    auto i = session().register_buffer(p.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    int r1, r2, s1, s2;
    NDK_SGE rs1 = Session::sge(in, 0, PAGE_SIZE, i.local_token);
    NDK_SGE rs2 = Session::sge(in, PAGE_SIZE, PAGE_SIZE, i.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().srq_receive(p.srq, &r1, {&rs1, 1}));
    ASSERT_STATUS(STATUS_SUCCESS, session().srq_receive(p.srq, &r2, {&rs2, 1}));
    NDK_SGE ss1 = Session::sge(out, 0, 300, o.local_token);
    NDK_SGE ss2 = Session::sge(out, 1000, 500, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(p.a, &s1, {&ss1, 1}));
    ASSERT_STATUS(STATUS_SUCCESS, session().send(p.a, &s2, {&ss2, 1}));
    auto results = session().drain(p.cq, 4);
    ASSERT_EQ(results.size(), 4u);
    int receives = 0;
    for (const auto& r : results) {
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
        if (r.RequestContext == &r1 || r.RequestContext == &r2) {
            ++receives;
            EXPECT_EQ(r.QPContext, &p.b_context);
            // SRQ receives are consumed in the order they were posted.
            EXPECT_EQ(r.BytesTransferred, r.RequestContext == &r1 ? 300u : 500u);
        } else {
            EXPECT_TRUE(r.RequestContext == &s1 || r.RequestContext == &s2);
            EXPECT_EQ(r.QPContext, &p.a_context);
        }
    }
    EXPECT_EQ(receives, 2);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 300), 0);
    EXPECT_EQ(std::memcmp(in.data() + PAGE_SIZE, out.data() + 1000, 500), 0);
}

NDKCT_TEST(SharedReceiveQueue, ThresholdNotificationIsOneShot, "ndk.srq.notify.threshold", "SRQ-10",
           "SRQ-11", "SRQ-12", "SRQ-03") {
    NDKCT_REQUIRE(info().MaxSrqDepth >= 16, "SRQ support with MaxSrqDepth >= 16");
    SrqPair p;
    bool ok;
    std::string problem;
    make_srq_pair(session(), p, 16, 0, ok, problem);
    ASSERT_TRUE(ok) << problem;
    auto x = send_setup(session(), p.pd);
    NDK_SGE receive = Session::sge(x.in, 0, 256, x.i.local_token);
    NDK_SGE send = Session::sge(x.out, 0, 64, x.o.local_token);
    for (int k = 0; k < 4; ++k) {
        ASSERT_STATUS(STATUS_SUCCESS, session().srq_receive(p.srq, nullptr, {&receive, 1}));
    }
    // 4 queued, threshold 3: not below, no notification yet.
    ASSERT_STATUS(STATUS_SUCCESS, outcome(session().modify_srq(p.srq, 0, 3)));
    ASSERT_STATUS(STATUS_SUCCESS, session().send(p.a, nullptr, {&send, 1}));
    EXPECT_EQ(session().drain(p.cq, 2).size(), 2u);  // 3 queued: still not below 3
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(session().notifications(reinterpret_cast<NDK_CQ*>(p.srq)), 0u);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(p.a, nullptr, {&send, 1}));
    EXPECT_EQ(session().drain(p.cq, 2).size(), 2u);  // 2 queued: below 3
    EXPECT_EQ(await_notifications(session(), p.srq, 1), 1u);
    // Disarmed: a further drop does not notify.
    ASSERT_STATUS(STATUS_SUCCESS, session().send(p.a, nullptr, {&send, 1}));
    EXPECT_EQ(session().drain(p.cq, 2).size(), 2u);  // 1 queued
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(session().notifications(reinterpret_cast<NDK_CQ*>(p.srq)), 1u);
    // Already below a new threshold: notifies without a further drop.
    ASSERT_STATUS(STATUS_SUCCESS, outcome(session().modify_srq(p.srq, 0, 4)));
    EXPECT_EQ(await_notifications(session(), p.srq, 2), 2u);
}

// ---- Capabilities cleared in a second session's profile ----

NDKCT_TEST(CompletionQueue, ModerationWithTheFlagClearedIsNotSupported,
           "ndk.cq.moderation.not_supported_edited_profile", "CQ-IM-02", "CQ-IM-04") {
    auto second =
        seed::session_with(GetParam(), {{"\"CQ_INTERRUPT_MODERATION_SUPPORTED\",\\s*", ""}});
    ASSERT_TRUE(second);
    NDKCT_REQUIRE(!second->has_flag(NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED),
                  "an adapter that can run without interrupt moderation");
    auto cq = second->create_cq(16);
    ASSERT_TRUE(cq.object);
    EXPECT_STATUS(STATUS_NOT_SUPPORTED, second->control_cq_interrupt_moderation(cq.object, 100, 4));
    EXPECT_STATUS(STATUS_NOT_SUPPORTED, second->control_cq_interrupt_moderation(cq.object, 0, 0));
    seed::finish(*second);
}

NDKCT_TEST(SharedReceiveQueue, ZeroMaxSrqDepthRejectsEveryDepth,
           "ndk.srq.create.unsupported_edited_profile", "SRQ-06", "SRQ-01", "SRQ-05") {
    auto second =
        seed::session_with(GetParam(), {{"\"MaxSrqDepth\": [0-9]+", "\"MaxSrqDepth\": 0"}});
    ASSERT_TRUE(second);
    NDKCT_REQUIRE(second->info().MaxSrqDepth == 0, "an adapter that can run without SRQ support");
    auto pd = second->create_pd().object;
    ASSERT_TRUE(pd);
    for (ULONG depth : {1u, 16u}) {
        auto srq = second->create_srq(pd, depth, 1);
        EXPECT_STATUS(STATUS_INVALID_PARAMETER, outcome(srq)) << "depth " << depth;
        EXPECT_EQ(srq.object, nullptr);
    }
    seed::finish(*second);
}

NDKCT_TEST(SharedReceiveQueue, ZeroThresholdKeepsTheArm, "ndk.srq.notify.zero_threshold_keeps_arm",
           "SRQ-13", "SRQ-10", "SRQ-02") {
    NDKCT_REQUIRE(info().MaxSrqDepth >= 16, "SRQ support with MaxSrqDepth >= 16");
    SrqPair p;
    bool ok;
    std::string problem;
    make_srq_pair(session(), p, 8, 0, ok, problem);
    ASSERT_TRUE(ok) << problem;
    auto x = send_setup(session(), p.pd);
    NDK_SGE receive = Session::sge(x.in, 0, 256, x.i.local_token);
    NDK_SGE send = Session::sge(x.out, 0, 64, x.o.local_token);
    for (int k = 0; k < 3; ++k) {
        ASSERT_STATUS(STATUS_SUCCESS, session().srq_receive(p.srq, nullptr, {&receive, 1}));
    }
    ASSERT_STATUS(STATUS_SUCCESS,
                  outcome(session().modify_srq(p.srq, 0, 3)));  // 3 queued: armed, not below
    ASSERT_STATUS(STATUS_SUCCESS,
                  outcome(session().modify_srq(p.srq, 16, 0)));  // new depth, same arm
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(session().notifications(reinterpret_cast<NDK_CQ*>(p.srq)), 0u);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(p.a, nullptr, {&send, 1}));
    EXPECT_EQ(session().drain(p.cq, 2).size(), 2u);  // 2 queued: below 3
    EXPECT_EQ(await_notifications(session(), p.srq, 1), 1u);
}

// The target is a fast-registered region, the remote invalidation SMB Direct relies on:
// NdkInvalidate accepts only fast-registered MRs and MWs (INV-01), and a region from NdkRegisterMr
// is released with NdkDeregisterMr, so a consumer never names its token in NdkSendAndInvalidate.
NDKCT_TEST(CompletionQueue, SendAndInvalidateEntries, "ndk.cq.results.send_and_invalidate",
           "CQ-RES-06", "CQ-RES-07", "CQ-RI-01", "SAI-01") {
    NDKCT_REQUIRE(NDKCT_VERSION_AT_LEAST(session().version(), 1, 2),
                  "NdkSendAndInvalidate (NDKPI 1.2)");
    seed::Mappings mappings(session());
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(PAGE_SIZE);
    auto exposed = session().buffer(PAGE_SIZE);
    auto o = session().register_buffer(pair.pd, out, 0);
    auto i = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    // The receiving side (b) fast-registers `exposed` for remote writes.
    auto& map = mappings.add(exposed);
    ASSERT_TRUE(map.ok());
    NDK_MR* fr = seed::fast_register_mr(session(), pair.pd, 1, true);
    ASSERT_NE(fr, nullptr);
    int fr_ctx;
    const uint64_t base = seed::address_of(exposed);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().fast_register(pair.b, &fr_ctx, fr, map.pages, 0, PAGE_SIZE, base,
                                          NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    auto registered = session().drain(pair.cq, 1);
    ASSERT_EQ(registered.size(), 1u);
    ASSERT_STATUS(STATUS_SUCCESS, registered[0].Status);
    const UINT32 token = session().remote_token(fr);

    int receive_ctx, send_ctx;
    NDK_SGE receive = Session::sge(in, 0, 512, i.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &receive_ctx, {&receive, 1}));
    NDK_SGE send = Session::sge(out, 0, 128, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().send_and_invalidate(pair.a, &send_ctx, {&send, 1}, 0, token));
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
        if (r.RequestContext == &receive_ctx) {
            EXPECT_EQ(r.Type, NdkOperationTypeReceiveAndInvalidate);                // CQ-RES-06
            EXPECT_EQ(static_cast<UINT32>(r.TypeSpecificCompletionOutput), token);  // CQ-RES-07
            EXPECT_EQ(r.BytesTransferred, 128u);
        } else {
            EXPECT_EQ(r.RequestContext, &send_ctx);
            EXPECT_EQ(r.Type, NdkOperationTypeSend);
        }
    }
    // SAI-01: the token is no longer valid on the receiving side: a write with it fails, and
    // no byte of `exposed` changes.
    seed::fill(exposed, 0x5A);
    NDK_SGE wsge = Session::sge(out, 0, 32, o.local_token);
    int write_ctx;
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &write_ctx, {&wsge, 1}, base, token));
    auto after = session().drain(pair.cq, 1);
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].RequestContext, &write_ctx);
    EXPECT_TRUE(NT_ERROR(after[0].Status)) << spec::status_name(after[0].Status);
    auto expected = session().buffer(PAGE_SIZE);
    seed::fill(expected, 0x5A);
    EXPECT_EQ(std::memcmp(exposed.data(), expected.data(), PAGE_SIZE), 0)
        << "SAI-01: a write through an invalidated token changed the region";
}

NDKCT_TEST(CompletionQueue, ErrorsArmIgnoresOrdinaryEntries, "ndk.cq.notify.errors_only",
           "CQ-NOT-05", "CQ-ARM-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto w = write_target(session(), pair.pd);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ERRORS);
    for (int k = 0; k < 3; ++k) {
        ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    }
    EXPECT_EQ(session().drain(pair.cq, 3).size(), 3u);
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(session().notifications(pair.cq), 0u);
}

// An NDK_CQ_NOTIFY_ERRORS arm made after an ANY arm was satisfied: the ANY arm is spent, so an
// ordinary entry of either QP does not notify. Across two nodes the pair's CQ has a part on each
// (a's entries on A, b's on B); the ANY arm was answered by A's part, and B's part, still armed
// for it, must not answer the ERRORS arm (found by ndk.property.lifetime across two guests).
NDKCT_TEST(CompletionQueue, ErrorsArmAfterAnArmWasSatisfied, "ndk.cq.notify.errors_after_any",
           "CQ-NOT-05", "CQ-NOT-06", "CQ-NOT-09") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto w = write_target(session(), pair.pd);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    NDKCT_RULE("CQ-NOT-09");
    ASSERT_EQ(await_notifications(session(), pair.cq, 1), 1u);
    EXPECT_EQ(session().drain(pair.cq, 1).size(), 1u);
    NDKCT_RULE("CQ-NOT-05", "CQ-NOT-06");
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ERRORS);
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.b, w, nullptr));
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    EXPECT_EQ(session().drain(pair.cq, 2).size(), 2u);
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(session().notifications(pair.cq), 1u)
        << "an ordinary entry notified an NDK_CQ_NOTIFY_ERRORS arm";
}

NDKCT_TEST(CompletionQueue, ReArmWithOnlyOldEntries, "ndk.cq.notify.rearm_old_entries", "CQ-NOT-08",
           "CQ-NOT-09", "CQ-NOT-12") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto w = write_target(session(), pair.pd);
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    NDKCT_RULE("CQ-NOT-09", "CQ-NOT-08");
    ASSERT_EQ(await_notifications(session(), pair.cq, 1), 1u);
    // The entry is still queued but was there at the last notification: notifying now or on the
    // next entry are both right.
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    std::this_thread::sleep_for(100ms);
    size_t now = session().notifications(pair.cq);
    EXPECT_TRUE(now == 1 || now == 2) << now;
    ASSERT_STATUS(STATUS_SUCCESS, write_one(session(), pair.a, w, nullptr));
    EXPECT_EQ(await_notifications(session(), pair.cq, 2), 2u)
        << "the arm is satisfied at the latest now";
    EXPECT_EQ(session().drain(pair.cq, 2).size(), 2u);
}

NDKCT_TEST(SharedReceiveQueue, NoCallbackNoNotification, "ndk.srq.notify.without_callback",
           "SRQ-07") {
    NDKCT_REQUIRE(info().MaxSrqDepth >= 8, "SRQ support with MaxSrqDepth >= 8");
    auto pd = session().create_pd().object;
    ASSERT_TRUE(pd);
    auto srq = session().create_srq(pd, 8, 1, 4, false).object;
    ASSERT_TRUE(srq);
    ASSERT_STATUS(STATUS_SUCCESS,
                  outcome(session().modify_srq(srq, 0, 6)));  // 0 queued: would notify
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(session().notifications(reinterpret_cast<NDK_CQ*>(srq)), 0u);
}

NDKCT_TEST(SharedReceiveQueue, CreateThresholdIsTheInitialArm, "ndk.srq.notify.initial_threshold",
           "SRQ-16", "SRQ-12") {
    NDKCT_REQUIRE(info().MaxSrqDepth >= 8, "SRQ support with MaxSrqDepth >= 8");
    SrqPair p;
    bool ok;
    std::string problem;
    make_srq_pair(session(), p, 8, 3, ok, problem);
    ASSERT_TRUE(ok) << problem;
    auto x = send_setup(session(), p.pd);
    NDK_SGE receive = Session::sge(x.in, 0, 256, x.i.local_token);
    NDK_SGE send = Session::sge(x.out, 0, 64, x.o.local_token);
    for (int k = 0; k < 4; ++k) {
        ASSERT_STATUS(STATUS_SUCCESS, session().srq_receive(p.srq, nullptr, {&receive, 1}));
    }
    for (int k = 0; k < 2; ++k) {
        ASSERT_STATUS(STATUS_SUCCESS, session().send(p.a, nullptr, {&send, 1}));
    }
    EXPECT_EQ(session().drain(p.cq, 4).size(), 4u);  // 2 queued: below 3
    // Whether the empty new SRQ already counted as a drop (MODEL-SRQ-02) or the drop to 2 did,
    // the one arm of the creation gives exactly one notification.
    EXPECT_EQ(await_notifications(session(), p.srq, 1), 1u);
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(session().notifications(reinterpret_cast<NDK_CQ*>(p.srq)), 1u);
}

}  // namespace
}  // namespace ndkct::conformance
