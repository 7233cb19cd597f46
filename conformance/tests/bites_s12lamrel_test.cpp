// Directed tests written for issue 13's faulty providers of NdkBuildLam's page (group
// s12lamrel) where no other test reached the rule. They are ordinary conformance tests: the
// reference provider passes them under every seed.
#include <algorithm>
#include <cstring>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(LamRelease);

ULONG required_size(size_t length) {
    return static_cast<ULONG>(
        NDK_LOGICAL_ADDRESS_MAPPING_SIZE((length + PAGE_SIZE - 1) / PAGE_SIZE));
}

// LAM-REL-01: a LAM lives until NdkReleaseLam releases it, as a child of the adapter; releasing
// one mapping leaves the others as they were. Two mappings are built, the first is released,
// and every logical page of the second must still send the second buffer's bytes (sent with the
// PD's privileged token, LAM-USE-02).
NDKCT_TEST(LamRelease, ReleasingOneMappingLeavesTheNextOneMapped,
           "ndk.adapter.build_lam.release_leaves_others", "LAM-REL-01", "LAM-USE-02",
           "LAM-PAGE-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto sink = session().buffer(PAGE_SIZE);
    auto snk = session().register_buffer(pair.pd, sink, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, snk.status);
    UINT32 privileged = session().privileged_token(pair.pd);

    constexpr size_t kLength = 2 * PAGE_SIZE;
    auto first = session().buffer(kLength);
    auto second = session().buffer(kLength);
    seed::fill(first, 71);
    seed::fill(second, 72);
    auto first_chain = platform::describe(first, 0, kLength);
    auto second_chain = platform::describe(second, 0, kLength);
    LamResult a = session().build_lam(first_chain.head(), kLength, required_size(kLength));
    ASSERT_TRUE(a.done.ok()) << spec::status_name(a.done.final_status);
    LamResult b = session().build_lam(second_chain.head(), kLength, required_size(kLength));
    if (!b.done.ok()) session().release_lam(a);
    ASSERT_TRUE(b.done.ok()) << spec::status_name(b.done.final_status);
    session().release_lam(a);

    const auto pages = b.pages();
    ASSERT_GE(pages.size(), 2u);
    for (size_t page = 0; page < 2; ++page) {
        static int receive_context, send_context;
        std::memset(sink.data(), 0, sink.size());
        NDK_SGE into = Session::sge(sink, 0, PAGE_SIZE, snk.local_token);
        ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &receive_context, {&into, 1}));
        NDK_SGE from =
            seed::sge_at(static_cast<uint64_t>(pages[page].QuadPart), PAGE_SIZE, privileged);
        ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &send_context, {&from, 1}));
        auto results = session().drain(pair.cq, 2);
        ASSERT_EQ(results.size(), 2u);
        for (const auto& r : results)
            EXPECT_STATUS(STATUS_SUCCESS, r.Status)
                << "logical page " << page << " of the mapping still live";
        EXPECT_EQ(std::memcmp(sink.data(), second.data() + page * PAGE_SIZE, PAGE_SIZE), 0)
            << "logical page " << page << " of the live mapping no longer maps its host page";
    }
    session().release_lam(b);
}

}  // namespace
}  // namespace ndkct::conformance
