// NdkRegisterMr's page, a rule issue 13's s11mdl fault breaks where no other directed test
// reached it first: only the first Length bytes of the chain must be virtually contiguous, so a
// chain broken after whole pages of Length is registered (RMR-MDL-04). (RegisterMr.
// ChainBrokenAfterLengthIsAccepted registers partial pages, where a refusal is as likely the
// partial page's, RMR-LEN-03.)
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(RegisterMrBeforeABreak);

// Chains contiguous for whole pages of Length and broken past them (a hole, a misaligned joint,
// from a page's start and mid-page): each is registered (RMR-MDL-04), and the peer's write to
// the region's last bytes lands there.
NDKCT_TEST(RegisterMrBeforeABreak, WholePagesBeforeABreakAreRegistered,
           "ndk.mr.register.whole_pages_before_a_break", "RMR-MDL-04", "RMR-LEN-03", "RMR-TOK-01",
           "RMR-TOK-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    seed::fill(source, 0x5a);
    auto src = session().register_buffer(pair.pd, source, 0);
    ASSERT_STATUS(STATUS_SUCCESS, src.status);
    auto target = session().buffer(6 * PAGE_SIZE);
    struct Case {
        const char* what;
        platform::MdlChain chain;
        size_t offset, length;
    };
    Case cases[] = {
        {"2 pages, then 8 bytes skipped", platform::with_hole(target, 0, 2 * PAGE_SIZE, 8, 100), 0,
         2 * PAGE_SIZE},
        {"a page from mid-page, then a page skipped",
         platform::with_hole(target, 100, PAGE_SIZE, PAGE_SIZE, 1000), 100, PAGE_SIZE},
        {"a page of a longer first MDL, then a misaligned joint",
         platform::with_misaligned_joint(target, 0, PAGE_SIZE + 300, 200), 0, PAGE_SIZE},
    };
    uint8_t pattern = 0x60;
    for (auto& c : cases) {
        auto made = session().create_mr(pair.pd, false);
        ASSERT_TRUE(made.object);
        Done d =
            session().register_mr(made.object, c.chain.head(), c.length,
                                  NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        EXPECT_STATUS(STATUS_SUCCESS, d.final_status) << c.what;
        if (!d.ok()) {
            session().close(made.object);
            continue;
        }
        NDKCT_RULE("RMR-MDL-04", "RMR-LEN-03", "RMR-TOK-01",
                   "RMR-TOK-02");  // the access goes through the getters' tokens
        seed::fill(source, ++pattern);
        const size_t last = c.offset + c.length - 64;  // the region's last 64 bytes
        static int context;
        NDK_SGE sge = Session::sge(source, 0, 64, src.local_token);
        ASSERT_STATUS(STATUS_SUCCESS,
                      session().write(pair.b, &context, {&sge, 1}, seed::address_of(target, last),
                                      session().remote_token(made.object)));
        auto results = session().drain(pair.cq, 1);
        ASSERT_EQ(results.size(), 1u) << c.what;
        EXPECT_STATUS(STATUS_SUCCESS, results[0].Status) << c.what;
        EXPECT_EQ(std::memcmp(target.data() + last, source.data(), 64), 0) << c.what;
        EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(made.object).final_status);
        session().close(made.object);
    }
}

}  // namespace
}  // namespace ndkct::conformance
