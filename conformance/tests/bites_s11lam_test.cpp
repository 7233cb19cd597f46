// Directed tests written for issue 13's faulty providers of NdkBuildLam's and
// NdkInitializeFastRegisterMr's pages (group s11lam) where no other test reached the rule. They
// are ordinary conformance tests: the reference provider passes them under every seed.
#include <atomic>
#include <chrono>
#include <thread>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(Overlapping);

using namespace std::chrono_literals;

bool wait_until(const std::atomic<bool>& flag, std::chrono::milliseconds limit = 10000ms) {
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(limit);
    while (!flag && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    return flag;
}

// IFR-CONC-01: initializations of different MRs issued back to back, the next before the one
// before it completed, each complete on their own. A consumer waits for nothing inside a CQ
// notification callback (GEN-IRQL-01), so the initializations it makes there are issued one
// after the other without waiting; the Session finishes what pended afterwards.
NDKCT_TEST(Overlapping, InitializationsOfDifferentMrsIssuedTogetherEachComplete,
           "ndk.mr.initialize_fast_register.overlapping", "IFR-CONC-01", "IFR-ST-02", "AMB-10") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    constexpr int kMrs = 4;
    std::vector<NDK_MR*> mrs;
    for (int i = 0; i < kMrs; ++i) {
        auto made = session().create_mr(pair.pd, true);
        ASSERT_TRUE(made.object) << spec::status_name(made.final_status);
        mrs.push_back(made.object);
    }
    std::vector<NTSTATUS> returned(kMrs, STATUS_PENDING);
    std::atomic<bool> once{false}, done{false}, trigger_judged{false};
    session().hook_events(pair.cq, [&] {
        if (once.exchange(true)) return;
        // The harness's own wait: the oracle first learns of the write that caused this.
        wait_until(trigger_judged, 5000ms);
        for (int i = 0; i < kMrs; ++i)
            returned[i] =
                session().initialize_fast_register_mr(mrs[i], ULONG(1 + i), i % 2 == 0).status;
        done = true;
    });
    // A completion on the armed CQ: a write from a into a region of b's.
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
    if (!wait_until(done)) {  // named: the notification never came, or the calls in it blocked
        model::Verdict v;
        v.add({once ? model::RuleIds{"IFR-CONC-01", "GEN-IRQL-01"}
                    : model::RuleIds{"CQ-NOT-07", "CQ-NOT-09"},
               once ? "the initializations made inside the CQ notification callback did not all "
                      "return within 10 s"
                    : "the armed CQ's notification callback did not come within 10 s of a new "
                      "entry",
               false});
        session().report(std::move(v));
    }
    ASSERT_TRUE(done) << "the initializations made inside the callback did not return";
    session().hook_events(pair.cq, nullptr);
    for (int i = 0; i < kMrs; ++i)
        EXPECT_TRUE(returned[i] == STATUS_SUCCESS || returned[i] == STATUS_PENDING)
            << "MR " << i << ": " << spec::status_name(returned[i]);
    for (const Deferred& d : session().finish_deferred())
        EXPECT_STATUS(STATUS_SUCCESS, d.final_status) << d.name << " finished after the callback";
    EXPECT_EQ(session().drain(pair.cq, 1).size(), 1u) << "the write's entry";
    // Each MR is initialized now: its tokens may be read (IFR-TOK-01, IFR-TOK-02).
    for (NDK_MR* mr : mrs) {
        session().local_token(mr);
        session().remote_token(mr);
    }
}

}  // namespace
}  // namespace ndkct::conformance
