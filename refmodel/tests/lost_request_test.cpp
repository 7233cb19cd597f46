// A request the provider accepted and then lost (issue 18: the verbs provider dropped the
// requests of a DEFER chain that ibv_post_send refused). The oracle names the lost request and
// its rule (WR-05; DEFER-03 when it was posted with DEFER), not only the ordering (AMB-35).
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
        h.accept(calls::Write{p.qp_a, ctx, {{a.va, 8, a.local}}, b.va + offset, b.remote, flags,
                              {}});
    }
    Verdict complete(Context ctx) {
        return h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, ctx, NdkOperationTypeWrite), true);
    }
};

// DEFER-03, WR-05: two deferred writes and the one that ends the chain were accepted; only the
// last completes. The verdict names the two lost ones.
TEST_F(LostRequest, DeferredRequestsWithoutAnEntryAreNamedLost) {
    fill(a_buf.bytes(), 3);
    write(0x40, 0, NDK_OP_FLAG_DEFER);
    write(0x41, 16, NDK_OP_FLAG_DEFER);
    write(0x42, 32, 0);
    std::memcpy(b_buf.data() + 32, a_buf.data(), 8);
    Verdict v = complete(0x42);
    EXPECT_TRUE(violation_names(v, "WR-05")) << v.describe();
    EXPECT_TRUE(violation_names(v, "DEFER-03")) << v.describe();
    EXPECT_NE(v.describe().find("(64, 65)"), std::string::npos) << v.describe();
}

// Without DEFER the lost request breaks WR-05 alone.
TEST_F(LostRequest, ALostRequestWithoutDeferBreaksWr05) {
    fill(a_buf.bytes(), 4);
    write(0x50, 0, 0);
    write(0x51, 16, 0);
    std::memcpy(b_buf.data() + 16, a_buf.data(), 8);
    Verdict v = complete(0x51);
    EXPECT_TRUE(violation_names(v, "WR-05")) << v.describe();
    EXPECT_FALSE(violation_names(v, "DEFER-03")) << v.describe();
}

}  // namespace
}  // namespace ndkct::model::test
