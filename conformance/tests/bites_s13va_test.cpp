// NdkRegisterMr's and NdkBuildLam's pages, the rules issue 13's s13va faults break: the MDL's
// virtual address is only a label for the region (RMR-VA-03, LAM-VA-01); data moves through the
// MDL's page frames. The MDLs here are decoy-VA MDLs (platform::with_decoy_va): their VA is
// another buffer's (the decoy, filled with other bytes) while their PFNs are the real buffer's
// pages, so a provider that reads or writes through the VA reaches the decoy.
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(VirtualAddressIsALabel);

constexpr uint8_t kDecoySeed = 0xD3;

// A peer's write to a region registered over a decoy-VA MDL, addressed by the VA (RMR-VA-01),
// lands in the pages the PFN array names; the decoy the VA points into stays as it was.
NDKCT_TEST(VirtualAddressIsALabel, RegisteredRegionMovesDataThroughItsPfns,
           "ndk.mr.register.va_is_a_label", "RMR-VA-03", "RMR-VA-01", "RMR-TOK-01", "RMR-TOK-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(2 * PAGE_SIZE);
    seed::fill(source, 0x5a);
    auto src = session().register_buffer(pair.pd, source, 0);
    ASSERT_STATUS(STATUS_SUCCESS, src.status);
    auto target = session().buffer(3 * PAGE_SIZE);
    auto decoy = session().buffer(3 * PAGE_SIZE);
    seed::fill(decoy, kDecoySeed);
    // [100, 5100) of target's pages, labelled with decoy's addresses.
    auto chain = platform::with_decoy_va(target, decoy, 100, 5000);
    auto made = session().create_mr(pair.pd, false);
    ASSERT_TRUE(made.object);
    Done d = session().register_mr(made.object, chain.head(), 5000,
                                   NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, d.final_status);
    NDKCT_RULE("RMR-VA-03", "RMR-TOK-01",
               "RMR-TOK-02");  // the access goes through the getters' tokens
    static int context;
    NDK_SGE sge = Session::sge(source, 0, 5000, src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.b, &context, {&sge, 1}, seed::address_of(decoy, 100),
                                  session().remote_token(made.object)));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    NDKCT_RULE("RMR-VA-03");  // what the rest of the test checks
    EXPECT_EQ(std::memcmp(target.data() + 100, source.data(), 5000), 0)
        << "the bytes did not land in the pages the PFN array names";
    EXPECT_TRUE(seed::untouched(target, 0, 100));
    EXPECT_TRUE(seed::untouched(target, 5100, 3 * PAGE_SIZE - 5100));
    EXPECT_TRUE(seed::still_filled(decoy, kDecoySeed))
        << "the write reached the pages the VA points into";
    EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(made.object).final_status);
}

// A send from a region registered over a decoy-VA MDL carries the bytes of the pages its PFN
// array names, not the decoy's.
NDKCT_TEST(VirtualAddressIsALabel, SendFromARegionCarriesItsPagesBytes,
           "ndk.mr.register.va_is_a_label_send", "RMR-VA-03") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto pages = session().buffer(2 * PAGE_SIZE);
    seed::fill(pages, 0x27);
    auto decoy = session().buffer(2 * PAGE_SIZE);
    seed::fill(decoy, kDecoySeed);
    auto chain = platform::with_decoy_va(pages, decoy, 300, 3000);
    auto made = session().create_mr(pair.pd, false);
    ASSERT_TRUE(made.object);
    Done d = session().register_mr(made.object, chain.head(), 3000, 0);
    ASSERT_STATUS(STATUS_SUCCESS, d.final_status);
    auto landing = session().buffer(PAGE_SIZE);
    auto sink = session().register_buffer(pair.pd, landing, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, sink.status);
    static int receive_context, send_context;
    NDK_SGE into = Session::sge(landing, 0, 3000, sink.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.a, &receive_context, {&into, 1}));
    NDK_SGE from =
        seed::sge_at(seed::address_of(decoy, 300), 3000, session().local_token(made.object));
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.b, &send_context, {&from, 1}));
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    NDKCT_RULE("RMR-VA-03");  // what the rest of the test checks
    EXPECT_EQ(std::memcmp(landing.data(), pages.data() + 300, 3000), 0)
        << "the bytes sent are not those of the pages the PFN array names";
    EXPECT_TRUE(seed::still_filled(decoy, kDecoySeed));
    EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(made.object).final_status);
}

}  // namespace
}  // namespace ndkct::conformance
