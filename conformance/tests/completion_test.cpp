// Completions: plain NdkGetCqResults on 1.2 and later, remote invalidation seen through it,
// overruns, and interrupt moderation (CQ-RES-08, CQ-RI-*, CQ-STATUS-02, CQ-IM-*, AI-FLAG-03).
#include <cstring>
#include <thread>

#include "pair_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::address_of;
using seed::fill;
using seed::untouched;

NDKCT_SUITE(Completions);

size_t await_notifications(Session& s, NDK_CQ* cq, size_t want, milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(limit);
    size_t n = s.notifications(cq);
    while (n < want && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        n = s.notifications(cq);
    }
    return n;
}

// CQ-RES-08, VER-07: NdkGetCqResults (NDK_RESULT) works on every version, and its entries
// agree with NdkGetCqResultsEx on the four shared members.
NDKCT_TEST(Completions, PlainResultsAgreeWithEx, "ndk.cq.results.plain_matches_ex", "CQ-RES-08",
           "VER-07") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(PAGE_SIZE);
    fill(out, 40);
    auto o = session().register_buffer(pair.pd, out, 0);
    auto i_ = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    int r1, r2, s1, s2;
    NDK_SGE receive1 = Session::sge(in, 0, 1000, i_.local_token);
    NDK_SGE receive2 = Session::sge(in, 1000, 1000, i_.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &r1, {&receive1, 1}));
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &r2, {&receive2, 1}));
    NDK_SGE first = Session::sge(out, 0, 300, o.local_token);
    NDK_SGE second = Session::sge(out, 300, 500, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &s1, {&first, 1}));
    NDKCT_RULE("CQ-RES-08", "CQ-GET-01");
    auto plain = pairs::drain_plain(session(), pair.cq, 2);
    ASSERT_EQ(plain.size(), 2u) << "NdkGetCqResults";
    for (const auto& r : plain) {
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
        EXPECT_TRUE(r.RequestContext == &r1 || r.RequestContext == &s1);
        if (r.RequestContext == &r1) {
            EXPECT_EQ(r.BytesTransferred, 300u);  // CQ-RES-01
        }
        EXPECT_NE(r.QPContext, nullptr);
    }
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &s2, {&second, 1}));
    auto ex = seed::settle(session(), pair.cq, 2);
    ASSERT_EQ(ex.size(), 2u);
    const NDK_RESULT_EX* received = seed::find_result(ex, &r2);
    ASSERT_TRUE(received);
    EXPECT_EQ(received->BytesTransferred, 500u);
    // The same QP contexts through both calls.
    const NDK_RESULT* plain_receive = plain[0].RequestContext == &r1 ? &plain[0] : &plain[1];
    EXPECT_EQ(plain_receive->QPContext, received->QPContext);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 300), 0);
    EXPECT_EQ(std::memcmp(in.data() + 1000, out.data() + 300, 500), 0);
}

// A window bound on b; a send-and-invalidate from a names its token.
struct Invalidated {
    platform::LockedBuffer page, out, in;
    Registered page_mr, o, i;
    NDK_MW* mw = nullptr;
    UINT32 token = 0;
    int receive_context = 0, send_context = 0;
};

void send_and_invalidate_window(Session& s, LoopbackPair& pair, Invalidated& v) {
    v.page = s.buffer(PAGE_SIZE);
    v.out = s.buffer(PAGE_SIZE);
    v.in = s.buffer(PAGE_SIZE);
    fill(v.out, 42);
    v.page_mr = s.register_buffer(pair.pd, v.page, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    v.o = s.register_buffer(pair.pd, v.out, 0);
    v.i = s.register_buffer(pair.pd, v.in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    v.mw = s.create_mw(pair.pd).object;
    ASSERT_TRUE(v.mw);
    int bound;
    ASSERT_STATUS(STATUS_SUCCESS, s.bind(pair.b, &bound, v.page_mr.mr, v.mw, address_of(v.page),
                                         PAGE_SIZE, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    v.token = s.remote_token(v.mw);
    auto results = s.drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    ASSERT_STATUS(STATUS_SUCCESS, results[0].Status);
    NDK_SGE receive = Session::sge(v.in, 0, PAGE_SIZE, v.i.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, s.receive(pair.b, &v.receive_context, {&receive, 1}));
    NDK_SGE send = Session::sge(v.out, 0, 64, v.o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  s.send_and_invalidate(pair.a, &v.send_context, {&send, 1}, 0, v.token));
}

// CQ-RI-02: removed with plain NdkGetCqResults, the receive of a send-and-invalidate still
// invalidated the window: a remote write through its token fails.
NDKCT_TEST(Completions, PlainRemovalStillInvalidates, "ndk.cq.results.plain_remote_invalidate",
           "CQ-RI-02") {
    NDKCT_REQUIRE(NDKCT_VERSION_AT_LEAST(session().version(), 1, 2), "NDKPI 1.2");
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    Invalidated v;
    send_and_invalidate_window(session(), pair, v);
    ASSERT_FALSE(HasFatalFailure());
    auto plain = pairs::drain_plain(session(), pair.cq, 2);
    ASSERT_EQ(plain.size(), 2u);
    for (const auto& r : plain)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    int written;
    NDK_SGE sge = Session::sge(v.out, 0, 64, v.o.local_token);
    NTSTATUS posted = session().write(pair.a, &written, {&sge, 1}, address_of(v.page), v.token);
    if (NT_SUCCESS(posted)) {
        auto results = session().drain(pair.cq, 1);
        ASSERT_EQ(results.size(), 1u);
        EXPECT_TRUE(NT_ERROR(results[0].Status))
            << "a write through the invalidated window completed with "
            << spec::status_name(results[0].Status);
    }
    EXPECT_TRUE(untouched(v.page, 0, PAGE_SIZE)) << "bytes landed through an invalidated window";
}

// CQ-RI-03, VER-12: after the remote invalidation (its token reported in
// TypeSpecificCompletionOutput, at offset 32 of NDK_RESULT_EX), an NdkInvalidate of the same
// window fails, inline or through its completion (AMB-32).
NDKCT_TEST(Completions, InvalidateAfterRemoteInvalidateFails,
           "ndk.cq.results.invalidate_after_remote", "CQ-RI-03", "VER-12") {
    NDKCT_REQUIRE(NDKCT_VERSION_AT_LEAST(session().version(), 1, 2), "NDKPI 1.2");
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    Invalidated v;
    send_and_invalidate_window(session(), pair, v);
    ASSERT_FALSE(HasFatalFailure());
    auto results = seed::settle(session(), pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    const NDK_RESULT_EX* r = seed::find_result(results, &v.receive_context);
    ASSERT_TRUE(r);
    EXPECT_STATUS(STATUS_SUCCESS, r->Status);
    EXPECT_EQ(r->Type, NdkOperationTypeReceiveAndInvalidate);
    EXPECT_EQ(r->TypeSpecificCompletionOutput, v.token);
    int invalidated;
    NTSTATUS posted = session().invalidate(pair.b, &invalidated, v.mw);
    NTSTATUS outcome = posted;
    if (posted == STATUS_SUCCESS) {
        auto done = session().drain(pair.cq, 1);
        ASSERT_EQ(done.size(), 1u);
        outcome = done[0].Status;
    }
    EXPECT_TRUE(NT_ERROR(outcome))
        << "NdkInvalidate of a remotely invalidated window: " << spec::status_name(outcome);
}

// CQ-STATUS-02: more completions than the CQ holds: the armed CQ's notification reports
// STATUS_BUFFER_OVERFLOW (the oracle reads the CqStatus).
NDKCT_TEST(Completions, OverrunIsReportedAsBufferOverflow, "ndk.cq.status.overrun",
           "CQ-STATUS-02") {
    constexpr ULONG kDepth = 4;
    auto pd = session().create_pd().object;
    auto small = session().create_cq(kDepth).object;
    auto big = session().create_cq(256).object;
    ASSERT_TRUE(pd && small && big);
    pairs::PairSpec spec;
    spec.pd = pd;
    spec.a_receive_cq = big;
    spec.a_initiator_cq = small;
    spec.b_receive_cq = spec.b_initiator_cq = big;
    spec.shape.initiator_depth = 256;
    auto pair = pairs::connect(session(), spec);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    auto target = session().buffer(PAGE_SIZE);
    auto src = session().register_buffer(pd, source, 0);
    auto dst = session().register_buffer(pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    // Armed for errors only: successful completions do not satisfy it, the overrun does
    // (CQ-NOT-05).
    session().arm_cq(small, NDK_CQ_NOTIFY_ERRORS);
    model::ObjectId cq_id = session().id(small);
    auto overrun_seen = [&] {
        session().notifications(small);  // hands queued events to the oracle
        return session().with_oracle([&](model::Model& m) {
            const auto* state = m.state_of<model::CqState>(cq_id);
            return state && state->failed && state->failure == STATUS_BUFFER_OVERFLOW;
        });
    };
    // Far more than a depth of 4 (a provider may round its CQs up, but not 60-fold), one at a
    // time, stopping once the overrun was reported (the QP is unusable from then on).
    static int contexts[250];
    NDK_SGE sge = Session::sge(source, 0, 8, src.local_token);
    bool overrun = false;
    for (auto& c : contexts) {
        if (session().notifications(small) > 0) break;
        NTSTATUS s = session().write(pair.a, &c, {&sge, 1}, address_of(target), dst.remote_token);
        if (!NT_SUCCESS(s)) break;
        std::this_thread::sleep_for(milliseconds(2));
    }
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(milliseconds(5000));
    while (!(overrun = overrun_seen()) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(milliseconds(1));
    EXPECT_TRUE(overrun) << "no notification with STATUS_BUFFER_OVERFLOW after 250 completions "
                            "on a CQ of depth 4 ("
                         << session().notifications(small) << " notification(s))";
}

// CQ-IM-05: a new CQ has moderation off: an armed CQ notifies for a single completion, at once
// (well within a second).
NDKCT_TEST(Completions, NewCqHasModerationOff, "ndk.cq.moderation.off_at_creation", "CQ-IM-05") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    auto marker = seed::make_marker(session(), pair.pd);
    NDK_SGE sge = Session::sge(marker.source, 0, 8, marker.src.local_token);
    int context;
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &context, {&sge, 1}, address_of(marker.target),
                                  marker.dst.remote_token));
    EXPECT_EQ(await_notifications(session(), pair.cq, 1, milliseconds(1000)), 1u)
        << "one completion on an armed new CQ raised no notification within a second";
    auto results = session().drain(pair.cq, 1);
    EXPECT_EQ(results.size(), 1u);
}

// CQ-IM-12, AI-FLAG-03: with moderation on, ModerationCount completions raise the interrupt
// without waiting out a long interval; and a single completion is notified within a short
// interval.
NDKCT_TEST(Completions, ModerationBoundsTheDelay, "ndk.cq.moderation.bounds", "CQ-IM-12",
           "AI-FLAG-03") {
    NDKCT_REQUIRE(has_flag(NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED),
                  "CQ_INTERRUPT_MODERATION_SUPPORTED");
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto marker = seed::make_marker(session(), pair.pd);
    NDK_SGE sge = Session::sge(marker.source, 0, 8, marker.src.local_token);
    static int contexts[4];
    // Count 4, interval 60 s: the fourth completion raises it.
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().control_cq_interrupt_moderation(pair.cq, 60'000'000, 4));
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    for (auto& c : contexts)
        ASSERT_STATUS(STATUS_SUCCESS,
                      session().write(pair.a, &c, {&sge, 1}, address_of(marker.target),
                                      marker.dst.remote_token));
    NDKCT_RULE("CQ-IM-12");
    EXPECT_EQ(await_notifications(session(), pair.cq, 1, milliseconds(3000)), 1u)
        << "4 completions with ModerationCount 4 raised no notification";
    EXPECT_EQ(session().drain(pair.cq, 4).size(), 4u);
    // Interval 2 ms, count 1000: one completion is notified within the interval (plus
    // scheduling slack), not held for the count.
    ASSERT_STATUS(STATUS_SUCCESS, session().control_cq_interrupt_moderation(pair.cq, 2000, 1000));
    session().arm_cq(pair.cq, NDK_CQ_NOTIFY_ANY);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &contexts[0], {&sge, 1}, address_of(marker.target),
                                  marker.dst.remote_token));
    EXPECT_EQ(await_notifications(session(), pair.cq, 2, milliseconds(3000)), 2u)
        << "one completion with ModerationInterval 2 ms raised no notification within 3 s";
    EXPECT_EQ(session().drain(pair.cq, 1).size(), 1u);
}

}  // namespace
}  // namespace ndkct::conformance
