// Directed tests for NdkCreateQp's page that no other suite had (issue 13, group s11qp): each of
// a QP's queues completes on its own CQ, an SRQ QP's receives included. Ordinary conformance
// tests: the reference provider passes them; conformance/faulty/README.md lists the fault each
// one catches.
#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <thread>

#include "ndkct/conformance/suite.hpp"
#include "pair_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(QpCompletionQueues);

// a's send and b's receive, each QP with a receive CQ and an initiator CQ of its own (b's
// receives from an SRQ when `srq`): every one of the four CQs is polled until both entries came,
// so an entry on another CQ than its queue's is seen (and judged) there.
void each_entry_on_its_own_cq(Session& s, const NDK_ADAPTER_INFO& info, bool srq) {
    std::array<NDK_CQ*, 4> cqs{};
    for (auto& cq : cqs) {
        cq = s.create_cq(16).object;
        ASSERT_TRUE(cq);
    }
    pairs::PairSpec spec;
    spec.pd = s.create_pd().object;
    ASSERT_TRUE(spec.pd);
    spec.a_receive_cq = cqs[0];
    spec.a_initiator_cq = cqs[1];
    spec.b_receive_cq = cqs[2];
    spec.b_initiator_cq = cqs[3];
    spec.shape = QpShape{4, 4, 1, 1, 0};
    if (srq) {
        spec.b_srq = s.create_srq(spec.pd, std::min<ULONG>(16, info.MaxSrqDepth),
                                  std::min<ULONG>(1, info.MaxReceiveRequestSge))
                         .object;
        ASSERT_TRUE(spec.b_srq);
    }
    auto pair = pairs::connect(s, spec);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto in = s.buffer(PAGE_SIZE);
    auto out = s.buffer(PAGE_SIZE);
    seed::fill(out, 77);
    auto i = s.register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto o = s.register_buffer(pair.pd, out, 0);
    ASSERT_STATUS(STATUS_SUCCESS, i.status);
    ASSERT_STATUS(STATUS_SUCCESS, o.status);
    static int receive_context, send_context;
    NDK_SGE into = Session::sge(in, 0, 300, i.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, srq ? s.srq_receive(spec.b_srq, &receive_context, {&into, 1})
                                      : s.receive(pair.b, &receive_context, {&into, 1}));
    NDK_SGE from = Session::sge(out, 0, 300, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, s.send(pair.a, &send_context, {&from, 1}));
    std::map<NDK_CQ*, std::vector<NDK_RESULT_EX>> got;
    size_t total = 0;
    const auto deadline = std::chrono::steady_clock::now() + Session::scaled(milliseconds(3000));
    while (total < 2 && std::chrono::steady_clock::now() < deadline) {
        for (NDK_CQ* cq : cqs)
            for (const auto& r : s.poll(cq)) {
                got[cq].push_back(r);
                ++total;
            }
        if (total < 2) std::this_thread::sleep_for(milliseconds(1));
    }
    NDKCT_RULE("CQP-OBJ-02");  // each entry on its own queue's CQ
    ASSERT_EQ(got[cqs[1]].size(), 1u) << "the send completes on a's initiator CQ";
    EXPECT_EQ(got[cqs[1]][0].RequestContext, &send_context);
    {
        NDKCT_RULE("RMR-TOK-01");  // the send read its source through the getter's local token
        ASSERT_STATUS(STATUS_SUCCESS, got[cqs[1]][0].Status);
    }
    ASSERT_EQ(got[cqs[2]].size(), 1u) << "the receive completes on b's receive CQ";
    EXPECT_EQ(got[cqs[2]][0].RequestContext, &receive_context);
    EXPECT_TRUE(got[cqs[0]].empty()) << "nothing for a's receive CQ";
    EXPECT_TRUE(got[cqs[3]].empty()) << "nothing for b's initiator CQ";
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 300), 0);
}

// CQP-OBJ-02: a send's entry comes on its QP's pInitiatorCq, a receive's on its QP's pReceiveCq.
NDKCT_TEST(QpCompletionQueues, EachEntryComesOnItsOwnQueuesCq, "ndk.pd.create_qp.cq_per_queue",
           "CQP-OBJ-02", "CQP-CTX-01", "RMR-TOK-01") {
    each_entry_on_its_own_cq(session(), info(), false);
}

// CQP-SRQ-01: a QP made with an SRQ takes its receive from the SRQ, and the receive's entry comes
// on that QP's pReceiveCq.
NDKCT_TEST(QpCompletionQueues, SrqReceivesCompleteOnTheReceiveCq,
           "ndk.pd.create_qp_with_srq.cq_per_queue", "CQP-SRQ-01", "CQP-OBJ-02", "RMR-TOK-01") {
    NDKCT_REQUIRE(info().MaxSrqDepth > 0, "the adapter has no SRQs (MaxSrqDepth 0)");
    each_entry_on_its_own_cq(session(), info(), true);
}

}  // namespace
}  // namespace ndkct::conformance
