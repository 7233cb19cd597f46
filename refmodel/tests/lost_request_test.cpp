// A request the provider accepted and then lost (issue 18: the verbs provider dropped the
// requests of a DEFER chain that ibv_post_send refused). A later entry arriving first is only
// the in_order reading not followed (AMB-35, a warning: no page promises the order); once the
// harness has drained the queue, the oracle names each lost request and its rule (WR-10, "must
// eventually result in a completion"; DEFER-03 when it was posted with DEFER).
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

class LostRequest : public ::testing::Test {
  protected:
    Harness h{Mode::check, default_readings()};
    Pair p = h.connected_pair();
    LockedBuffer a_buf = h.arena.allocate(PAGE_SIZE);
    LockedBuffer b_buf = h.arena.allocate(PAGE_SIZE);
    Region a = h.register_mr(p.pd, a_buf, 0, PAGE_SIZE, 0xF);
    Region b = h.register_mr(p.pd, b_buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);

    void write(Context ctx, uint32_t offset, uint32_t flags) {
        h.accept(
            calls::Write{p.qp_a, ctx, {{a.va, 8, a.local}}, b.va + offset, b.remote, flags, {}});
    }
    Verdict complete(Context ctx) {
        return h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, ctx, NdkOperationTypeWrite), true);
    }
};

// DEFER-03, WR-10: two deferred writes and the one that ends the chain were accepted; only the
// last completes. Its entry is a warning (AMB-35); the drain names the two lost ones.
TEST_F(LostRequest, DeferredRequestsWithoutAnEntryAreNamedLost) {
    fill(a_buf.bytes(), 3);
    write(0x40, 0, NDK_OP_FLAG_DEFER);
    write(0x41, 16, NDK_OP_FLAG_DEFER);
    write(0x42, 32, 0);
    std::memcpy(b_buf.data() + 32, a_buf.data(), 8);
    Verdict ahead = complete(0x42);
    EXPECT_TRUE(ahead.ok()) << ahead.describe();
    EXPECT_TRUE(warning_names(ahead, "AMB-35")) << ahead.describe();
    EXPECT_NE(ahead.describe().find("(0x40, 0x41)"), std::string::npos) << ahead.describe();
    Verdict v = h.model.expect_nothing_outstanding(p.qp_a);
    EXPECT_TRUE(violation_names(v, "WR-10")) << v.describe();
    EXPECT_TRUE(violation_names(v, "DEFER-03")) << v.describe();
    EXPECT_EQ(v.violations.size(), 2u) << v.describe();
    EXPECT_NE(v.describe().find("RequestContext 0x40 "), std::string::npos) << v.describe();
    EXPECT_NE(v.describe().find("RequestContext 0x41 "), std::string::npos) << v.describe();
}

// Without DEFER the lost request breaks WR-10 alone.
TEST_F(LostRequest, ALostRequestWithoutDeferBreaksWr10) {
    fill(a_buf.bytes(), 4);
    write(0x50, 0, 0);
    write(0x51, 16, 0);
    std::memcpy(b_buf.data() + 16, a_buf.data(), 8);
    EXPECT_TRUE(complete(0x51).ok());
    Verdict v = h.model.expect_nothing_outstanding(p.qp_a);
    EXPECT_TRUE(violation_names(v, "WR-10")) << v.describe();
    EXPECT_FALSE(violation_names(v, "DEFER-03")) << v.describe();
}

// The earlier request that does come after the later one: a warning, then nothing missing.
TEST_F(LostRequest, AnEarlierRequestArrivingLateIsNotLost) {
    fill(a_buf.bytes(), 6);
    write(0x58, 0, 0);
    write(0x59, 16, 0);
    std::memcpy(b_buf.data(), a_buf.data(), 8);
    std::memcpy(b_buf.data() + 16, a_buf.data(), 8);
    EXPECT_TRUE(warning_names(complete(0x59), "AMB-35"));
    Verdict late = complete(0x58);
    EXPECT_TRUE(late.clean()) << late.describe();
    Verdict rest = h.model.expect_nothing_outstanding(p.qp_a);
    EXPECT_TRUE(rest.clean()) << rest.describe();
}

// MODEL-WR-RES-01 (allowed, the default): a valid post refused inline for want of resources is
// no violation, leaves no entry (WR-05: one that appears anyway is named), and DEFER-04 hands
// the deferred one before it over.
TEST_F(LostRequest, ValidPostRefusedForResourcesIsAllowedByDefault) {
    fill(a_buf.bytes(), 5);
    write(0x60, 0, NDK_OP_FLAG_DEFER);
    calls::Write refused{p.qp_a, 0x61, {{a.va, 8, a.local}}, b.va + 16, b.remote, 0, {}};
    EXPECT_TRUE(h.model.expect(refused).may_lack_resources);
    Verdict v = h.model.apply(refused, status(STATUS_INSUFFICIENT_RESOURCES)).verdict;
    EXPECT_TRUE(v.clean()) << v.describe();
    std::memcpy(b_buf.data(), a_buf.data(), 8);
    EXPECT_TRUE(complete(0x60).clean());  // the deferred write was handed over (DEFER-04)
    EXPECT_TRUE(violation_names(complete(0x61), "WR-05"));
}

// A post that must fail keeps its documented status: resources are no excuse for it.
TEST_F(LostRequest, PostThatMustFailKeepsItsStatus) {
    std::vector<Sge> too_many(64, Sge{a.va, 8, a.local});
    calls::Write bad{p.qp_a, 0x70, too_many, b.va, b.remote, 0, {}};
    Expectation e = h.model.expect(bad);
    ASSERT_TRUE(e.must_fail()) << describe(e);
    EXPECT_FALSE(e.may_lack_resources);
}

// MODEL-WR-RES-01 forbidden: the depth is room for that many requests, so within it a valid
// post refused for resources fails the call's rule.
TEST(PostResourceFailure, ForbiddenWithinTheDepth) {
    Harness h(Mode::check, readings_with("post_resource_failure", "forbidden"));
    Pair p = h.connected_pair();
    LockedBuffer a_buf = h.arena.allocate(PAGE_SIZE), b_buf = h.arena.allocate(PAGE_SIZE);
    Region a = h.register_mr(p.pd, a_buf, 0, PAGE_SIZE, 0);
    Region b = h.register_mr(p.pd, b_buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    calls::Write w{p.qp_a, 0x80, {{a.va, 8, a.local}}, b.va, b.remote, 0, {}};
    Verdict v = h.model.apply(w, status(STATUS_INSUFFICIENT_RESOURCES)).verdict;
    EXPECT_TRUE(violation_names(v, "WRT-01")) << v.describe();
}

}  // namespace
}  // namespace ndkct::model::test
