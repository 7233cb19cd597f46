// NdkCreateQp and NdkCreateQpWithSrq (CQP-*): every limit at and one past its NDK_ADAPTER_INFO
// maximum, the new QP's state, where its completions go and what they carry, the depths and SGE
// counts it was created with, its antecedents, and the completion contract over many calls.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <climits>

#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::address_of;

NDKCT_SUITE(CreateQp);

// Two QPs connected through a listener and a connector of this adapter (like loopback_pair, for
// QPs a test created itself).
struct Connection {
    NDK_LISTENER* listener = nullptr;
    NDK_CONNECTOR* active = nullptr;
    NDK_CONNECTOR* passive = nullptr;
    std::string problem;
};

Connection connect(Session& s, NDK_QP* a, NDK_QP* b) {
    Connection c;
    c.listener = s.create_listener().object;
    if (!c.listener) return c.problem = "NdkCreateListener failed", c;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(s.next_port());  // below the providers' ephemeral 49152..
    Done listening = s.listen(c.listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
    if (!listening.ok())
        return c.problem = "NdkListen failed: " + spec::status_name(listening.final_status), c;
    c.active = s.create_connector().object;
    if (!c.active) return c.problem = "NdkCreateConnector failed", c;
    NTSTATUS started =
        s.connect_async(c.active, a, reinterpret_cast<sockaddr*>(&address), sizeof address);
    if (started != STATUS_PENDING && started != STATUS_SUCCESS)
        return c.problem = "NdkConnect failed: " + spec::status_name(started), c;
    c.passive = s.wait_connect_event(c.listener);
    if (!c.passive) return c.problem = "no connect event", c;
    started = s.accept_async(c.passive, b);
    if (started != STATUS_PENDING && started != STATUS_SUCCESS)
        return c.problem = "NdkAccept failed: " + spec::status_name(started), c;
    if (Done d = s.wait_connect(c.active); !d.ok())
        return c.problem = "NdkConnect completed with an error", c;
    if (Done d = s.complete_connect(c.active); !d.ok())
        return c.problem = "NdkCompleteConnect failed", c;
    if (Done d = s.wait_accept(c.passive); !d.ok())
        return c.problem = "NdkAccept completed with an error", c;
    return c;
}

// A PD and a CQ for creating QPs.
struct Base {
    NDK_PD* pd = nullptr;
    NDK_CQ* cq = nullptr;
};

Base base(Session& s, ULONG cq_depth = 256) {
    return {s.create_pd().object, s.create_cq(cq_depth).object};
}

QpShape small() {
    return QpShape{8, 8, 1, 1, 0};
}

// A create that must succeed, resources permitting (CQP-LIM-07).
void expect_created(const Made<NDK_QP>& made, const std::string& what) {
    EXPECT_TRUE(made.final_status == STATUS_SUCCESS ||
                made.final_status == STATUS_INSUFFICIENT_RESOURCES)
        << what << ": " << spec::status_name(made.final_status);
    EXPECT_NE(made.final_status, STATUS_INVALID_PARAMETER) << what << " is within every limit";
    if (made.final_status == STATUS_SUCCESS) {
        EXPECT_TRUE(made.object) << what;
    }
}

// A create that must be refused: STATUS_INVALID_PARAMETER inline or through the callback, and
// no QP (CQP-LIM-06: rejected, never clamped).
void expect_refused(const Made<NDK_QP>& made, const std::string& what) {
    EXPECT_STATUS(STATUS_INVALID_PARAMETER, made.final_status) << what;
    EXPECT_FALSE(made.object) << what << ": a QP was created anyway";
}

// ---------------------------------------------------------------- NdkCreateQp limits

struct Limit {
    const char* name;
    ULONG QpShape::*field;
    ULONG NDK_ADAPTER_INFO::*max;
};

const Limit kLimits[] = {
    {"ReceiveQueueDepth", &QpShape::receive_depth, &NDK_ADAPTER_INFO::MaxReceiveQueueDepth},
    {"InitiatorQueueDepth", &QpShape::initiator_depth, &NDK_ADAPTER_INFO::MaxInitiatorQueueDepth},
    {"MaxReceiveRequestSge", &QpShape::receive_sge, &NDK_ADAPTER_INFO::MaxReceiveRequestSge},
    {"MaxInitiatorRequestSge", &QpShape::initiator_sge, &NDK_ADAPTER_INFO::MaxInitiatorRequestSge},
    {"InlineDataSize", &QpShape::inline_size, &NDK_ADAPTER_INFO::MaxInlineDataSize},
};

void at_the_maximum(Session& s, const NDK_ADAPTER_INFO& info, int which) {
    const Limit& limit = kLimits[which];
    Base b = base(s);
    ASSERT_TRUE(b.pd && b.cq);
    QpShape shape = small();
    shape.*limit.field = info.*limit.max;
    auto made = s.create_qp(b.pd, b.cq, b.cq, nullptr, shape);
    expect_created(made,
                   std::string(limit.name) + " = the maximum " + std::to_string(info.*limit.max));
}

void one_past_the_maximum(Session& s, const NDK_ADAPTER_INFO& info, int which) {
    const Limit& limit = kLimits[which];
    if (info.*limit.max == ULONG_MAX) GTEST_SKIP() << "not_supported: the maximum is ULONG_MAX";
    Base b = base(s);
    ASSERT_TRUE(b.pd && b.cq);
    QpShape shape = small();
    shape.*limit.field = info.*limit.max + 1;
    auto made = s.create_qp(b.pd, b.cq, b.cq, nullptr, shape);
    expect_refused(made, std::string(limit.name) + " = the maximum + 1");
}

NDKCT_TEST(CreateQp, ReceiveQueueDepthAtTheMaximumIsAccepted,
           "ndk.pd.create_qp.receive_depth_at_max", "CQP-LIM-01", "CQP-LIM-07") {
    at_the_maximum(session(), info(), 0);
}
NDKCT_TEST(CreateQp, ReceiveQueueDepthOnePastTheMaximumIsRefused,
           "ndk.pd.create_qp.receive_depth_over_max", "CQP-LIM-01", "CQP-LIM-06") {
    one_past_the_maximum(session(), info(), 0);
}
NDKCT_TEST(CreateQp, InitiatorQueueDepthAtTheMaximumIsAccepted,
           "ndk.pd.create_qp.initiator_depth_at_max", "CQP-LIM-02", "CQP-LIM-07") {
    at_the_maximum(session(), info(), 1);
}
NDKCT_TEST(CreateQp, InitiatorQueueDepthOnePastTheMaximumIsRefused,
           "ndk.pd.create_qp.initiator_depth_over_max", "CQP-LIM-02", "CQP-LIM-06") {
    one_past_the_maximum(session(), info(), 1);
}
NDKCT_TEST(CreateQp, ReceiveSgeAtTheMaximumIsAccepted, "ndk.pd.create_qp.receive_sge_at_max",
           "CQP-LIM-03", "CQP-LIM-07") {
    at_the_maximum(session(), info(), 2);
}
NDKCT_TEST(CreateQp, ReceiveSgeOnePastTheMaximumIsRefused, "ndk.pd.create_qp.receive_sge_over_max",
           "CQP-LIM-03", "CQP-LIM-06") {
    one_past_the_maximum(session(), info(), 2);
}
NDKCT_TEST(CreateQp, InitiatorSgeAtTheMaximumIsAccepted, "ndk.pd.create_qp.initiator_sge_at_max",
           "CQP-LIM-04", "CQP-LIM-07") {
    at_the_maximum(session(), info(), 3);
}
NDKCT_TEST(CreateQp, InitiatorSgeOnePastTheMaximumIsRefused,
           "ndk.pd.create_qp.initiator_sge_over_max", "CQP-LIM-04", "CQP-LIM-06") {
    one_past_the_maximum(session(), info(), 3);
}
NDKCT_TEST(CreateQp, InlineDataSizeAtTheMaximumIsAccepted, "ndk.pd.create_qp.inline_at_max",
           "CQP-LIM-05", "CQP-LIM-07") {
    at_the_maximum(session(), info(), 4);
}
NDKCT_TEST(CreateQp, InlineDataSizeOnePastTheMaximumIsRefused, "ndk.pd.create_qp.inline_over_max",
           "CQP-LIM-05", "CQP-LIM-06") {
    one_past_the_maximum(session(), info(), 4);
}

NDKCT_TEST(CreateQp, EveryLimitAtItsMaximumAtOnceIsAccepted, "ndk.pd.create_qp.all_at_max",
           "CQP-LIM-07", "CQP-OBJ-01") {
    Base b = base(session());
    ASSERT_TRUE(b.pd && b.cq);
    QpShape shape;
    for (const auto& limit : kLimits)
        shape.*limit.field = info().*limit.max;
    expect_created(session().create_qp(b.pd, b.cq, b.cq, nullptr, shape),
                   "every limit at its maximum");
}

NDKCT_TEST(CreateQp, EveryLimitOnePastItsMaximumAtOnceIsRefused, "ndk.pd.create_qp.all_over_max",
           "CQP-LIM-06", "CQP-LIM-01", "CQP-LIM-02", "CQP-LIM-03", "CQP-LIM-04", "CQP-LIM-05",
           "CQP-ST-04") {
    for (const auto& limit : kLimits)
        NDKCT_REQUIRE(info().*limit.max != ULONG_MAX,
                      std::string(limit.name) + " has no value past its maximum");
    Base b = base(session());
    ASSERT_TRUE(b.pd && b.cq);
    QpShape shape;
    for (const auto& limit : kLimits)
        shape.*limit.field = info().*limit.max + 1;
    expect_refused(session().create_qp(b.pd, b.cq, b.cq, nullptr, shape),
                   "every limit one past its maximum");
}

// ---------------------------------------------------------------- NdkCreateQpWithSrq limits

struct SrqBase {
    Base b;
    NDK_SRQ* srq = nullptr;
};

SrqBase srq_base(Session& s) {
    SrqBase r;
    r.b = base(s);
    if (r.b.pd)
        r.srq = s.create_srq(r.b.pd, std::min<ULONG>(16, s.info().MaxSrqDepth),
                             std::min<ULONG>(2, s.info().MaxReceiveRequestSge))
                    .object;
    return r;
}

void srq_limit(Session& s, const NDK_ADAPTER_INFO& info, int which) {
    const Limit& limit = kLimits[which];
    SrqBase r = srq_base(s);
    ASSERT_TRUE(r.b.pd && r.b.cq && r.srq);
    QpShape shape = small();
    shape.*limit.field = info.*limit.max;
    expect_created(s.create_qp_with_srq(r.b.pd, r.b.cq, r.b.cq, r.srq, nullptr, shape),
                   std::string(limit.name) + " = the maximum");
    if (info.*limit.max == ULONG_MAX) return;
    shape.*limit.field = info.*limit.max + 1;
    expect_refused(s.create_qp_with_srq(r.b.pd, r.b.cq, r.b.cq, r.srq, nullptr, shape),
                   std::string(limit.name) + " = the maximum + 1");
}

NDKCT_TEST(CreateQp, WithSrqInitiatorDepthAtAndPastTheMaximum,
           "ndk.pd.create_qp_with_srq.initiator_depth_limit", "CQP-SRQ-02", "CQP-SRQ-05") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "the adapter has no SRQs (MaxSrqDepth 0)");
    srq_limit(session(), info(), 1);
}

NDKCT_TEST(CreateQp, WithSrqInitiatorSgeAtAndPastTheMaximum,
           "ndk.pd.create_qp_with_srq.initiator_sge_limit", "CQP-SRQ-03", "CQP-SRQ-05") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "the adapter has no SRQs (MaxSrqDepth 0)");
    srq_limit(session(), info(), 3);
}

NDKCT_TEST(CreateQp, WithSrqInlineDataSizeAtAndPastTheMaximum,
           "ndk.pd.create_qp_with_srq.inline_limit", "CQP-SRQ-04", "CQP-SRQ-05") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "the adapter has no SRQs (MaxSrqDepth 0)");
    srq_limit(session(), info(), 4);
}

NDKCT_TEST(CreateQp, WithSrqReceivesComeFromTheSrq, "ndk.pd.create_qp_with_srq.receives_from_srq",
           "CQP-SRQ-01", "CQP-CTX-01", "CQP-OBJ-02") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "the adapter has no SRQs (MaxSrqDepth 0)");
    SrqBase r = srq_base(session());
    ASSERT_TRUE(r.b.pd && r.b.cq && r.srq);
    auto receive_cq = session().create_cq(64).object;
    ASSERT_TRUE(receive_cq);
    int srq_qp_context, other_context;
    auto srq_qp =
        session().create_qp_with_srq(r.b.pd, receive_cq, r.b.cq, r.srq, &srq_qp_context, small());
    auto other = session().create_qp(r.b.pd, r.b.cq, r.b.cq, &other_context, small());
    ASSERT_TRUE(srq_qp.object && other.object);
    auto in = session().buffer(PAGE_SIZE);
    auto out = session().buffer(PAGE_SIZE);
    seed::fill(out, 71);
    auto i = session().register_buffer(r.b.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto o = session().register_buffer(r.b.pd, out, 0);
    NDK_SGE into = Session::sge(in, 0, 800, i.local_token);
    int receive_context, send_context;
    ASSERT_STATUS(STATUS_SUCCESS, session().srq_receive(r.srq, &receive_context, {&into, 1}));
    Connection c = connect(session(), other.object, srq_qp.object);
    ASSERT_TRUE(c.problem.empty()) << c.problem;
    NDK_SGE from = Session::sge(out, 0, 800, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(other.object, &send_context, {&from, 1}));
    auto received = session().drain(receive_cq, 1);
    ASSERT_EQ(received.size(), 1u) << "the receive completion goes to the SRQ QP's receive CQ";
    EXPECT_EQ(received[0].RequestContext, &receive_context);
    EXPECT_EQ(received[0].QPContext, &srq_qp_context);
    EXPECT_STATUS(STATUS_SUCCESS, received[0].Status);
    auto sent = session().drain(r.b.cq, 1);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].RequestContext, &send_context);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 800), 0);
}

// ---------------------------------------------------------------- the new QP

NDKCT_TEST(CreateQp, NewQpIsNotConnected, "ndk.pd.create_qp.not_connected", "CQP-STATE-01",
           "FR-ST-02", "WR-04", "WR-05") {
    seed::Mappings maps(session());
    Base b = base(session());
    ASSERT_TRUE(b.pd && b.cq);
    auto qp = session().create_qp(b.pd, b.cq, b.cq, nullptr, QpShape{});
    ASSERT_TRUE(qp.object);
    auto buffer = session().buffer(PAGE_SIZE);
    auto reg =
        session().register_buffer(b.pd, buffer,
                                  NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                      NDK_MR_FLAG_RDMA_READ_SINK);
    ASSERT_STATUS(STATUS_SUCCESS, reg.status);
    auto& map = maps.add(buffer);
    NDK_MR* fr = seed::fast_register_mr(session(), b.pd, 1, true);
    auto mw = session().create_mw(b.pd);
    ASSERT_TRUE(map.ok() && fr && mw.object);
    NDK_SGE sge = Session::sge(buffer, 0, 64, reg.local_token);
    int context;
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().send(qp.object, &context, {&sge, 1}));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().write(qp.object, &context, {&sge, 1},
                                                             address_of(buffer), reg.remote_token));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().read(qp.object, &context, {&sge, 1},
                                                            address_of(buffer), reg.remote_token));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID,
                  session().fast_register(qp.object, &context, fr, map.pages, 0, PAGE_SIZE,
                                          seed::kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID,
                  session().bind(qp.object, &context, reg.mr, mw.object, address_of(buffer), 64,
                                 NDK_OP_FLAG_ALLOW_REMOTE_READ));
    EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().invalidate(qp.object, &context, fr));
    if (NDKCT_VERSION_AT_LEAST(session().version(), 1, 2)) {
        EXPECT_STATUS(
            STATUS_CONNECTION_INVALID,
            session().send_and_invalidate(qp.object, &context, {&sge, 1}, 0, reg.remote_token));
    }
    EXPECT_TRUE(session().drain(b.cq, 1, milliseconds(50)).empty())
        << "an inline failure made a CQ entry";
}

NDKCT_TEST(CreateQp, ReceivesPostedBeforeConnectingComplete,
           "ndk.pd.create_qp.receive_before_connect", "CQP-STATE-02", "CQP-OBJ-01") {
    Base b = base(session());
    ASSERT_TRUE(b.pd && b.cq);
    auto a = session().create_qp(b.pd, b.cq, b.cq, nullptr, small());
    auto z = session().create_qp(b.pd, b.cq, b.cq, nullptr, small());
    ASSERT_TRUE(a.object && z.object);
    auto in = session().buffer(PAGE_SIZE);
    auto out = session().buffer(PAGE_SIZE);
    seed::fill(out, 73);
    auto i = session().register_buffer(b.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto o = session().register_buffer(b.pd, out, 0);
    NDK_SGE into = Session::sge(in, 0, 500, i.local_token);
    int receive_context, send_context;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(z.object, &receive_context, {&into, 1}));
    Connection c = connect(session(), a.object, z.object);
    ASSERT_TRUE(c.problem.empty()) << c.problem;
    NDK_SGE from = Session::sge(out, 0, 500, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(a.object, &send_context, {&from, 1}));
    auto results = session().drain(b.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    const auto* got = seed::find_result(results, &receive_context);
    ASSERT_TRUE(got);
    EXPECT_STATUS(STATUS_SUCCESS, got->Status);
    EXPECT_EQ(got->BytesTransferred, 500u);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 500), 0);
}

NDKCT_TEST(CreateQp, CompletionsGoToTheirOwnCqsWithTheQpContext, "ndk.pd.create_qp.cq_routing",
           "CQP-OBJ-02", "CQP-CTX-01") {
    auto pd = session().create_pd().object;
    ASSERT_TRUE(pd);
    NDK_CQ* a_receive = session().create_cq(16).object;
    NDK_CQ* a_initiator = session().create_cq(16).object;
    NDK_CQ* z_receive = session().create_cq(16).object;
    NDK_CQ* z_initiator = session().create_cq(16).object;
    ASSERT_TRUE(a_receive && a_initiator && z_receive && z_initiator);
    int a_context;
    auto a = session().create_qp(pd, a_receive, a_initiator, &a_context, small());
    auto z = session().create_qp(pd, z_receive, z_initiator, nullptr, small());  // NULL QPContext
    ASSERT_TRUE(a.object && z.object);
    Connection c = connect(session(), a.object, z.object);
    ASSERT_TRUE(c.problem.empty()) << c.problem;
    auto in = session().buffer(PAGE_SIZE);
    auto out = session().buffer(PAGE_SIZE);
    seed::fill(out, 75);
    auto i = session().register_buffer(pd, in, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    auto o = session().register_buffer(pd, out, 0);
    int receive_context, send_context, write_context;
    NDK_SGE into = Session::sge(in, 0, 100, i.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(z.object, &receive_context, {&into, 1}));
    NDK_SGE from = Session::sge(out, 0, 100, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(a.object, &send_context, {&from, 1}));
    auto sent = session().drain(a_initiator, 1);
    auto received = session().drain(z_receive, 1);
    ASSERT_EQ(sent.size(), 1u) << "the send completes on the sender's initiator CQ";
    ASSERT_EQ(received.size(), 1u) << "the receive completes on the receiver's receive CQ";
    EXPECT_EQ(sent[0].RequestContext, &send_context);
    EXPECT_EQ(sent[0].QPContext, &a_context);
    EXPECT_EQ(received[0].RequestContext, &receive_context);
    EXPECT_EQ(received[0].QPContext, nullptr) << "a NULL QPContext is echoed as NULL";
    // The other way: z's write completes on z's initiator CQ.
    NDK_SGE source = Session::sge(out, 0, 64, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(z.object, &write_context, {&source, 1},
                                                  address_of(in, 200), i.remote_token));
    auto written = session().drain(z_initiator, 1);
    ASSERT_EQ(written.size(), 1u);
    EXPECT_EQ(written[0].RequestContext, &write_context);
    EXPECT_EQ(written[0].QPContext, nullptr);
    EXPECT_TRUE(session().drain(a_receive, 1, milliseconds(30)).empty())
        << "nothing for a's receive CQ";
    EXPECT_TRUE(session().drain(a_initiator, 1, milliseconds(30)).empty());
    EXPECT_TRUE(session().drain(z_receive, 1, milliseconds(30)).empty());
}

NDKCT_TEST(CreateQp, ClosingItsCqOrPdFirstWaitsForTheQp, "ndk.pd.create_qp.antecedents",
           "CQP-LIFE-01", "CLOSE-02") {
    Base b = base(session());
    ASSERT_TRUE(b.pd && b.cq);
    auto qp = session().create_qp(b.pd, b.cq, b.cq, nullptr, small());
    ASSERT_TRUE(qp.object);
    EXPECT_STATUS(STATUS_PENDING, session().close_async(b.cq));
    EXPECT_STATUS(STATUS_PENDING, session().close_async(b.pd));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(qp.object).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(b.cq).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(b.pd).final_status);
}

NDKCT_TEST(CreateQp, QueuesAcceptTheirDepth, "ndk.pd.create_qp.depths", "CQP-DEPTH-01",
           "CQP-DEPTH-02") {
    const ULONG depth = 8;
    auto pair = session().loopback_pair(QpShape{depth, depth, 1, 1, 0});
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto buffer = session().buffer(2 * PAGE_SIZE);
    auto reg = session().register_buffer(pair.pd, buffer, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, reg.status);
    std::vector<int> receives(depth), writes(depth);
    for (ULONG k = 0; k < depth; ++k) {
        NDK_SGE into = Session::sge(buffer, k * 64, 64, reg.local_token);
        EXPECT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &receives[k], {&into, 1}))
            << "receive " << k;
    }
    for (ULONG k = 0; k < depth; ++k) {
        NDK_SGE from = Session::sge(buffer, PAGE_SIZE + k * 8, 8, reg.local_token);
        EXPECT_STATUS(STATUS_SUCCESS, session().write(pair.a, &writes[k], {&from, 1},
                                                      address_of(buffer, PAGE_SIZE + 2048 + k * 8),
                                                      reg.remote_token))
            << "write " << k << " of " << depth << " outstanding";
    }
    auto results = seed::settle(session(), pair.cq, depth);
    EXPECT_EQ(results.size(), depth);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
}

NDKCT_TEST(CreateQp, RequestsWithTheQpsSgeCountWork, "ndk.pd.create_qp.sge_counts", "CQP-SGE-01",
           "CQP-SGE-02") {
    const ULONG sges =
        std::min<ULONG>({3, info().MaxInitiatorRequestSge, info().MaxReceiveRequestSge});
    auto pair = session().loopback_pair(QpShape{8, 8, sges, sges, 0});
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto in = session().buffer(PAGE_SIZE);
    auto out = session().buffer(PAGE_SIZE);
    seed::fill(out, 77);
    auto i = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto o = session().register_buffer(pair.pd, out, 0);
    std::vector<NDK_SGE> into, from;
    for (ULONG k = 0; k < sges; ++k) {
        into.push_back(Session::sge(in, k * 1000, 100, i.local_token));
        from.push_back(Session::sge(out, k * 500, 100, o.local_token));
    }
    int receive_context, send_context;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &receive_context, into));
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &send_context, from));
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    for (ULONG k = 0; k < sges; ++k)
        EXPECT_EQ(std::memcmp(in.data() + k * 1000, out.data() + k * 500, 100), 0) << "SGE " << k;
}

NDKCT_TEST(CreateQp, InlineSendUpToTheQpsInlineSize, "ndk.pd.create_qp.inline_size", "CQP-INL-01",
           "SGE-03") {
    const ULONG size = std::min<ULONG>(64, info().MaxInlineDataSize);
    NDKCT_REQUIRE(size > 0, "the adapter has no inline data (MaxInlineDataSize 0)");
    auto pair = session().loopback_pair(QpShape{8, 8, 2, 2, size});
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto in = session().buffer(PAGE_SIZE);
    auto i = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    std::vector<std::byte> payload(size);
    for (ULONG k = 0; k < size; ++k)
        payload[k] = seed::pattern(k, 79);
    NDK_SGE into = Session::sge(in, 0, PAGE_SIZE, i.local_token);
    NDK_SGE from{};
    from.VirtualAddress = payload.data();  // not registered: inline data needs no token
    from.Length = size;
    int receive_context, send_context;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &receive_context, {&into, 1}));
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().send(pair.a, &send_context, {&from, 1}, NDK_OP_FLAG_INLINE));
    std::memset(payload.data(), 0, payload.size());  // the provider copied it during the call
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    for (ULONG k = 0; k < size; ++k)
        ASSERT_EQ(in.data()[k], seed::pattern(k, 79)) << "byte " << k;
}

// ---------------------------------------------------------------- many calls

NDKCT_TEST(CreateQp, ManyCreatesInlineOrPendingAreEachUsable, "ndk.pd.create_qp.many", "CQP-ST-01",
           "CQP-ST-02", "CQP-OBJ-01", "CQP-STATE-01", "CQP-STATE-02") {
    Base b = base(session(), 1024);
    ASSERT_TRUE(b.pd && b.cq);
    auto buffer = session().buffer(PAGE_SIZE);
    auto reg = session().register_buffer(b.pd, buffer, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, reg.status);
    std::vector<int> contexts(20);
    std::vector<NDK_QP*> qps;
    for (size_t k = 0; k < contexts.size(); ++k) {
        auto made = session().create_qp(b.pd, b.cq, b.cq, &contexts[k], small());
        ASSERT_STATUS(STATUS_SUCCESS, made.final_status) << "QP " << k;
        ASSERT_TRUE(made.object) << "QP " << k << (made.pended() ? " (pended)" : " (inline)");
        qps.push_back(made.object);
    }
    NDK_SGE sge = Session::sge(buffer, 0, 64, reg.local_token);
    for (size_t k = 0; k < qps.size(); ++k) {
        int context;
        EXPECT_STATUS(STATUS_SUCCESS, session().receive(qps[k], &context, {&sge, 1})) << "QP " << k;
        EXPECT_STATUS(STATUS_CONNECTION_INVALID, session().send(qps[k], &context, {&sge, 1}))
            << "QP " << k;
    }
    for (auto* qp : qps)
        EXPECT_STATUS(STATUS_SUCCESS, session().close(qp).final_status);
}

NDKCT_TEST(CreateQp, ClosingItsSrqFirstWaitsForTheQp, "ndk.pd.create_qp_with_srq.srq_antecedent",
           "CQP-SRQ-06", "CLOSE-02") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "the adapter has no SRQs (MaxSrqDepth 0)");
    SrqBase r = srq_base(session());
    ASSERT_TRUE(r.b.pd && r.b.cq && r.srq);
    auto qp = session().create_qp_with_srq(r.b.pd, r.b.cq, r.b.cq, r.srq, nullptr, small());
    ASSERT_TRUE(qp.object);
    EXPECT_STATUS(STATUS_PENDING, session().close_async(r.srq));
    EXPECT_STATUS(STATUS_SUCCESS, session().close(qp.object).final_status);
    EXPECT_STATUS(STATUS_SUCCESS, session().wait_close(r.srq).final_status);
}

NDKCT_TEST(CreateQp, ResourceFailuresInEitherFormCreateNoQp,
           "ndk.pd.create_qp.insufficient_resources", "CQP-ST-03", "CQP-ST-04", "CQP-ST-02",
           "GEN-ASYNC-02", "GEN-CREATE-02") {
    auto s = seed::session_with(GetParam(), seed::resource_pressure(30));
    ASSERT_TRUE(s);
    auto pd = seed::until_resources([&] { return s->create_pd(); });
    auto cq = seed::until_resources([&] { return s->create_cq(256); });
    ASSERT_TRUE(pd.object && cq.object);
    auto buffer = s->buffer(PAGE_SIZE);
    auto reg = seed::until_resources([&] {
        Registered r = s->register_buffer(pd.object, buffer, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        struct {
            Registered r;
            NTSTATUS final_status;
        } out{std::move(r), STATUS_SUCCESS};
        out.final_status = out.r.status;
        return out;
    });
    ASSERT_STATUS(STATUS_SUCCESS, reg.final_status);
    NDK_SGE sge = Session::sge(buffer, 0, 64, reg.r.local_token);
    size_t created = 0;
    for (int i = 0; i < 40; ++i) {
        auto made = s->create_qp(pd.object, cq.object, cq.object, nullptr, small());
        if (made.final_status == STATUS_SUCCESS) {
            ASSERT_TRUE(made.object);
            int context;
            EXPECT_STATUS(STATUS_SUCCESS, s->receive(made.object, &context, {&sge, 1}))
                << "the QP is usable";
            s->close(made.object);
            ++created;
        } else {
            EXPECT_STATUS(STATUS_INSUFFICIENT_RESOURCES, made.final_status)
                << "a valid create failed otherwise";
            EXPECT_FALSE(made.object) << "a failed create handed out a QP";
        }
    }
    EXPECT_GT(created, 0u) << "no QP in 40 attempts";
    seed::finish(*s);
}

}  // namespace
}  // namespace ndkct::conformance
