// NdkRegisterMr's page, the rules issue 13's s11rmr faults break where no other directed test
// reached them: a registration that lacks resources leaves the MR unregistered, whichever shape
// of chain ran the provider short (RMR-ST-03); the local token of an MR registered again is the
// new registration's (RMR-TOK-01); a chain joined mid-page registers as one MDL over the same
// whole pages does (RMR-MDL-05).
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(RegisterMrResources);

// Regions of one MDL and chains of several, at a page's start and mid-page: each registration
// either succeeds or reports STATUS_INSUFFICIENT_RESOURCES (inline or through the callback,
// RMR-ST-03); after such a failure the MR is unregistered, so registering it again, with one
// page, is a first registration (it succeeds, or lacks resources once more).
NDKCT_TEST(RegisterMrResources, RegistrationThatLacksResourcesLeavesTheMrUnregistered,
           "ndk.mr.register.insufficient_resources_any_chain", "RMR-ST-03", "RMR-ST-01") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = session().buffer(8 * PAGE_SIZE);
    auto one_page = platform::describe(buffer, 0, PAGE_SIZE);
    const std::vector<std::vector<size_t>> shapes = {
        {PAGE_SIZE}, {3 * PAGE_SIZE}, {1000, 2000}, {PAGE_SIZE, PAGE_SIZE, 100}, {10, 1, 5000}};
    for (const auto& pieces : shapes) {
        for (size_t offset : {size_t(0), size_t(100)}) {
            auto chain = platform::describe_split(buffer, offset, pieces);
            const size_t length = chain.byte_count();
            auto made = session().create_mr(pd.object, false);
            ASSERT_TRUE(made.object);
            Done d = session().register_mr(made.object, chain.head(), length,
                                           NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
            if (!d.ok()) {
                EXPECT_STATUS(STATUS_INSUFFICIENT_RESOURCES, d.final_status)
                    << pieces.size() << " MDLs from offset " << offset << ": a valid registration";
                Done again = session().register_mr(made.object, one_page.head(), PAGE_SIZE, 0);
                EXPECT_TRUE(again.ok() || again.final_status == STATUS_INSUFFICIENT_RESOURCES)
                    << "after " << pieces.size()
                    << " MDLs lacked resources, registering the MR again: "
                    << spec::status_name(again.final_status);
                d = again;
            }
            if (d.ok()) {
                EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(made.object).final_status);
            }
            session().close(made.object);
        }
    }
}

NDKCT_SUITE(RegisterMrTokens);

// An MR registered, deregistered and registered again over other memory: the local token
// NdkGetLocalTokenFromMr reports then is the one local SGEs use to reach the new region
// (RMR-TOK-01): a's write from it lands its bytes at the target.
NDKCT_TEST(RegisterMrTokens, LocalTokenOfANewRegistrationIsItsOwn,
           "ndk.mr.register.local_token_after_reregister", "RMR-TOK-01", "RMR-DEREG-01",
           "RMR-TOK-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto first = session().buffer(PAGE_SIZE);
    auto second = session().buffer(2 * PAGE_SIZE);
    seed::fill(first, 0x31);
    seed::fill(second, 0x5A);
    auto target = session().buffer(PAGE_SIZE);
    auto dst = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    auto made = session().create_mr(pair.pd, false);
    ASSERT_TRUE(made.object);
    auto c1 = platform::describe(first, 0, PAGE_SIZE);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().register_mr(made.object, c1.head(), PAGE_SIZE, 0).final_status);
    session().local_token(made.object);
    ASSERT_STATUS(STATUS_SUCCESS, session().deregister_mr(made.object).final_status);
    auto c2 = platform::describe(second, 100, PAGE_SIZE);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().register_mr(made.object, c2.head(), PAGE_SIZE, 0).final_status);
    UINT32 local = session().local_token(made.object);
    NDKCT_RULE("RMR-TOK-01", "RMR-TOK-02");  // the new registration's token reaches its region
    static int context;
    NDK_SGE sge = Session::sge(second, 100, 200, local);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.b, &context, {&sge, 1},
                                                  seed::address_of(target), dst.remote_token));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].RequestContext, &context);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(target.data(), second.data() + 100, 200), 0);
}

NDKCT_SUITE(RegisterMrChains);

// Whole pages described by one MDL and by chains of two or three MDLs joined in the middle of a
// page: every registration is accepted, and the peer's write through each lands at the same
// bytes (RMR-MDL-05).
NDKCT_TEST(RegisterMrChains, ChainJoinedMidPageIsAcceptedLikeOneMdl,
           "ndk.mr.register.chain_joined_mid_page", "RMR-MDL-05", "RMR-VA-01", "RMR-TOK-01",
           "RMR-TOK-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(2 * PAGE_SIZE);
    auto src = session().register_buffer(pair.pd, source, 0);
    ASSERT_STATUS(STATUS_SUCCESS, src.status);
    auto target = session().buffer(2 * PAGE_SIZE);
    const std::vector<std::vector<size_t>> shapes = {
        {2 * PAGE_SIZE}, {1000, 2 * PAGE_SIZE - 1000}, {PAGE_SIZE + 100, 50, PAGE_SIZE - 150}};
    uint8_t pattern = 0x40;
    for (const auto& pieces : shapes) {
        auto chain = platform::describe_split(target, 0, pieces);
        ASSERT_EQ(chain.byte_count(), 2 * PAGE_SIZE);
        auto made = session().create_mr(pair.pd, false);
        ASSERT_TRUE(made.object);
        Done d =
            session().register_mr(made.object, chain.head(), 2 * PAGE_SIZE,
                                  NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        EXPECT_STATUS(STATUS_SUCCESS, d.final_status) << pieces.size() << " MDLs";
        if (!d.ok()) {
            session().close(made.object);
            continue;
        }
        NDKCT_RULE("RMR-MDL-05", "RMR-VA-01", "RMR-TOK-01",
                   "RMR-TOK-02");  // the access goes through the getters' tokens
        seed::fill(source, ++pattern);
        static int context;
        NDK_SGE sge = Session::sge(source, 0, 2 * PAGE_SIZE, src.local_token);
        ASSERT_STATUS(STATUS_SUCCESS,
                      session().write(pair.b, &context, {&sge, 1}, seed::address_of(target),
                                      session().remote_token(made.object)));
        auto results = session().drain(pair.cq, 1);
        ASSERT_EQ(results.size(), 1u);
        EXPECT_STATUS(STATUS_SUCCESS, results[0].Status) << pieces.size() << " MDLs";
        EXPECT_EQ(std::memcmp(target.data(), source.data(), 2 * PAGE_SIZE), 0)
            << pieces.size() << " MDLs";
        EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(made.object).final_status);
        session().close(made.object);
    }
}

}  // namespace
}  // namespace ndkct::conformance
