// NdkBuildLam's pages, the rule issue 13's s13lamva fault breaks: the MDL's virtual address is
// only a label for the start of the range (LAM-VA-01); the mapping reaches memory through the
// MDL's page frames. The MDLs here are decoy-VA MDLs (platform::with_decoy_va): their VA is
// another buffer's (the decoy, filled with other bytes) while their PFNs are the real buffer's
// pages, so a provider that maps what the VA points at reaches the decoy.
#include <cstring>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(LamVirtualAddressIsALabel);

constexpr uint8_t kDecoySeed = 0xD5;

ULONG required_size(size_t first_byte_offset, size_t length) {
    return static_cast<ULONG>(
        NDK_LOGICAL_ADDRESS_MAPPING_SIZE((first_byte_offset + length + PAGE_SIZE - 1) / PAGE_SIZE));
}

// A send through a LAM's logical addresses (the PD's privileged token, LAM-USE-02) carries the
// bytes of the pages the MDL's PFN array names, not those its VA points into.
NDKCT_TEST(LamVirtualAddressIsALabel, SendThroughTheMappingCarriesItsPagesBytes,
           "ndk.adapter.build_lam.va_is_a_label_send", "LAM-VA-01", "LAM-USE-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto pages = session().buffer(2 * PAGE_SIZE);
    seed::fill(pages, 0x29);
    auto decoy = session().buffer(2 * PAGE_SIZE);
    seed::fill(decoy, kDecoySeed);
    constexpr size_t kOffset = 300, kLength = 3000;
    auto chain = platform::with_decoy_va(pages, decoy, kOffset, kLength);
    LamResult lam = session().build_lam(chain.head(), kLength, required_size(kOffset, kLength));
    ASSERT_TRUE(lam.done.ok()) << spec::status_name(lam.done.final_status);
    const auto logical = lam.pages();
    ASSERT_GE(logical.size(), 1u);
    auto landing = session().buffer(PAGE_SIZE);
    auto sink = session().register_buffer(pair.pd, landing, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, sink.status);
    static int receive_context, send_context;
    NDK_SGE into = Session::sge(landing, 0, kLength, sink.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.a, &receive_context, {&into, 1}));
    NDK_SGE from = seed::sge_at(static_cast<uint64_t>(logical[0].QuadPart) + kOffset, kLength,
                                session().privileged_token(pair.pd));
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.b, &send_context, {&from, 1}));
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    NDKCT_RULE("LAM-VA-01");  // what the rest of the test checks
    EXPECT_EQ(std::memcmp(landing.data(), pages.data() + kOffset, kLength), 0)
        << "the bytes sent are not those of the pages the PFN array names";
    EXPECT_TRUE(seed::still_filled(decoy, kDecoySeed));
    session().release_lam(lam);
}

// A receive into a LAM's logical addresses lands in the pages the PFN array names; the decoy
// the VA points into stays as it was.
NDKCT_TEST(LamVirtualAddressIsALabel, ReceiveThroughTheMappingLandsInItsPages,
           "ndk.adapter.build_lam.va_is_a_label_receive", "LAM-VA-01", "LAM-USE-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto pages = session().buffer(2 * PAGE_SIZE);
    auto decoy = session().buffer(2 * PAGE_SIZE);
    seed::fill(decoy, kDecoySeed);
    constexpr size_t kOffset = 700, kLength = 5000;
    auto chain = platform::with_decoy_va(pages, decoy, kOffset, kLength);
    LamResult lam = session().build_lam(chain.head(), kLength, required_size(kOffset, kLength));
    ASSERT_TRUE(lam.done.ok()) << spec::status_name(lam.done.final_status);
    const auto logical = lam.pages();
    ASSERT_GE(logical.size(), 2u);
    auto source = session().buffer(2 * PAGE_SIZE);
    seed::fill(source, 0x3c);
    auto src = session().register_buffer(pair.pd, source, 0);
    ASSERT_STATUS(STATUS_SUCCESS, src.status);
    static int receive_context, send_context;
    NDK_SGE into = seed::sge_at(static_cast<uint64_t>(logical[0].QuadPart) + kOffset,
                                PAGE_SIZE - kOffset, session().privileged_token(pair.pd));
    NDK_SGE into_next =
        seed::sge_at(static_cast<uint64_t>(logical[1].QuadPart), kLength - (PAGE_SIZE - kOffset),
                     session().privileged_token(pair.pd));
    NDK_SGE receive_sgl[] = {into, into_next};
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.a, &receive_context, receive_sgl));
    NDK_SGE from = Session::sge(source, 0, kLength, src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.b, &send_context, {&from, 1}));
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    NDKCT_RULE("LAM-VA-01");  // what the rest of the test checks
    EXPECT_EQ(std::memcmp(pages.data() + kOffset, source.data(), kLength), 0)
        << "the bytes did not land in the pages the PFN array names";
    EXPECT_TRUE(seed::still_filled(decoy, kDecoySeed))
        << "the receive reached the pages the VA points into";
    session().release_lam(lam);
}

}  // namespace
}  // namespace ndkct::conformance
