// NdkInitializeFastRegisterMr's page, the token rule issue 13's s13tok fault breaks where no
// other directed test reached it: the local token NdkGetLocalTokenFromMr reports once the
// initialization completed is the MR's local token (IFR-TOK-01), so local SGEs with it reach the
// region of the MR's first fast registration (AMB-40, from_initialize: devices fix the local key
// when the fast-register MR is allocated).
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(FastRegisterTokens);

// An MR initialized for one page: its local token read right after the initialization, then
// a fast registration with local read only. a writes from the region through the token read
// before the registration: its bytes land at b's target (IFR-TOK-01). The token read after the
// registration is read too, so that the oracle knows both values.
NDKCT_TEST(FastRegisterTokens, LocalTokenReadAfterInitializationReachesTheRegion,
           "ndk.mr.initialize_fast_register.local_token_before_registration", "IFR-TOK-01",
           "AMB-40", "FR-TOK-02", "RMR-TOK-02") {
    seed::Mappings maps(session());
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto memory = session().buffer(PAGE_SIZE);
    seed::fill(memory, 0x6B);
    auto& map = maps.add(memory);
    ASSERT_TRUE(map.ok());
    auto target = session().buffer(PAGE_SIZE);
    auto dst = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    NDK_MR* mr = seed::fast_register_mr(session(), pair.pd, 1, false);
    ASSERT_TRUE(mr);
    const UINT32 initialized = session().local_token(mr);  // before any fast registration
    static int registration, transfer;
    ASSERT_STATUS(STATUS_SUCCESS, session().fast_register(pair.a, &registration, mr, map.pages, 0,
                                                          PAGE_SIZE, seed::kFarBase, 0));
    auto done = session().drain(pair.cq, 1);
    ASSERT_EQ(done.size(), 1u);
    ASSERT_STATUS(STATUS_SUCCESS, done[0].Status);
    const UINT32 registered = session().local_token(mr);
    NDKCT_RULE("IFR-TOK-01", "AMB-40",
               "RMR-TOK-02");  // the token read after initialization reaches the region
    NDK_SGE from = seed::sge_at(seed::kFarBase + 100, 500, initialized);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &transfer, {&from, 1},
                                                  seed::address_of(target, 40), dst.remote_token));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].RequestContext, &transfer);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status)
        << "the local token read after initialization (" << initialized
        << ") does not reach the region; after the registration the MR reports " << registered;
    EXPECT_EQ(std::memcmp(target.data() + 40, memory.data() + 100, 500), 0);
}

}  // namespace
}  // namespace ndkct::conformance
