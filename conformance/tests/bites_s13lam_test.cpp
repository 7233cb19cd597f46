// Directed tests written for issue 13's faulty providers of NdkBuildLam's page (group s13lam):
// failing requests must leave nothing behind (LAM-ERR-01, LAM-ST-03). A leak shows only as a
// later STATUS_INSUFFICIENT_RESOURCES; the oracle judges such a refusal where a success of as
// many pages, its mapping released since, shows the room was there and only failed requests
// came between (Model::lam_refusal_rules). The tests judge through the oracle alone: a shortage
// anywhere else is allowed. The reference provider passes them under every seed.
#include "ndkct/conformance/suite.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(LamFailures);

ULONG required_size(size_t length) {
    return static_cast<ULONG>(
        NDK_LOGICAL_ADDRESS_MAPPING_SIZE((length + PAGE_SIZE - 1) / PAGE_SIZE));
}

// LAM-ERR-01: a consumer that probes the size first (a buffer too small), then builds and
// releases, the same mapping over and over: each probe fails, and must release whatever it
// built, so every build after it finds the room the one before it had.
NDKCT_TEST(LamFailures, ProbeBuildAndReleaseManyTimes,
           "ndk.adapter.build_lam.failures_keep_no_room", "LAM-ERR-01", "LAM-ST-04",
           "LAM-SIZE-01") {
    constexpr size_t kLength = 4 * PAGE_SIZE;
    auto buffer = session().buffer(kLength);
    auto chain = platform::describe(buffer, 0, kLength);
    for (int round = 0; round < 200; ++round) {
        LamResult probe = session().build_lam(chain.head(), kLength, 8);
        EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, probe.done.final_status) << "round " << round;
        LamResult lam = session().build_lam(chain.head(), kLength, required_size(kLength));
        if (lam.done.final_status == STATUS_SUCCESS) session().release_lam(lam);
        if (!session().verdict().ok()) break;  // the oracle has judged a refusal: said once
    }
}

// LAM-ST-03, LAM-ERR-01: a request too large for the adapter may be refused with
// STATUS_INSUFFICIENT_RESOURCES, inline or through its callback, but leaves no mapping behind:
// a small mapping that was built (and released) before it is built again after it.
NDKCT_TEST(LamFailures, ShortageOfALargeRequestLeavesTheRoomItFound,
           "ndk.adapter.build_lam.shortage_keeps_no_room", "LAM-ST-03", "LAM-ERR-01") {
    constexpr size_t kSmall = 2 * PAGE_SIZE, kLarge = 256 * PAGE_SIZE;
    auto small = session().buffer(kSmall);
    auto large = session().buffer(kLarge);
    auto small_chain = platform::describe(small, 0, kSmall);
    auto large_chain = platform::describe(large, 0, kLarge);
    for (int round = 0; round < 4; ++round) {
        LamResult lam = session().build_lam(small_chain.head(), kSmall, required_size(kSmall));
        if (lam.done.final_status == STATUS_SUCCESS) session().release_lam(lam);
        LamResult big = session().build_lam(large_chain.head(), kLarge, required_size(kLarge));
        if (big.done.final_status == STATUS_SUCCESS) session().release_lam(big);
        if (!session().verdict().ok()) break;
    }
}

}  // namespace
}  // namespace ndkct::conformance
