// Directed tests written for issue 13's faulty providers of NdkFastRegister's page (group
// s13silent) where no other test reached the rule. They are ordinary conformance tests: the
// reference provider passes them under every seed.
#include <chrono>
#include <cstring>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(SilentFastRegister);

constexpr uint64_t kFirstBase = seed::kFarBase;
constexpr uint64_t kSecondBase = seed::kFarBase + 0x100'0000;  // apart from the first region

// FR-SILENT-02: with NDK_OP_FLAG_SILENT_SUCCESS only a success makes no entry; "requests that
// fail do generate an event in the completion queue". A fast registration of an MR whose last
// registration is still valid (not invalidated) may be refused inline, complete with an error,
// or register the new region (AMB-30 leaves which open). Posted silent, the test tells them
// apart: an error entry, or no entry and the new region written by the peer (the silent success).
// No entry and a peer write into the new region that fails is a failed registration whose error
// entry never came (the entry is then waited for, as owed).
NDKCT_TEST(SilentFastRegister, FailureOverAValidRegistrationMakesAnEntry,
           "ndk.mr.fast_register.silent_failure_over_valid", "FR-SILENT-02", "FR-SILENT-01",
           "FR-INV-01", "AMB-30", "FR-TOK-01", "FR-MAP-01") {
    seed::Mappings maps(session());
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto memory = session().buffer(2 * PAGE_SIZE);
    auto source = session().buffer(PAGE_SIZE);
    seed::fill(source, 41);
    auto src = session().register_buffer(pair.pd, source, 0);
    ASSERT_STATUS(STATUS_SUCCESS, src.status);
    auto& map = maps.add(memory);
    ASSERT_TRUE(map.ok() && map.pages.size() == 2) << "NdkBuildLam did not map the region's pages";
    auto marker = seed::make_marker(session(), pair.pd);
    ASSERT_STATUS(STATUS_SUCCESS, marker.src.status);
    ASSERT_STATUS(STATUS_SUCCESS, marker.dst.status);
    NDK_MR* mr = seed::fast_register_mr(session(), pair.pd, 2, true);
    ASSERT_TRUE(mr);

    // The first registration: page 0 alone, at kFirstBase, remotely writable; it completes.
    static int first_context;
    {
        NDKCT_RULE("FR-ST-01");
        ASSERT_STATUS(STATUS_SUCCESS, session().fast_register(
                                          pair.a, &first_context, mr, seed::first(map.pages, 1), 0,
                                          PAGE_SIZE, kFirstBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
        auto results = seed::settle(session(), pair.cq, 1);
        ASSERT_EQ(results.size(), 1u);
        ASSERT_STATUS(STATUS_SUCCESS, results[0].Status);
    }

    // The second, silent, over it (not invalidated): both pages at kSecondBase.
    static int second_context;
    NTSTATUS posted = session().fast_register(
        pair.a, &second_context, mr, map.pages, 0, 2 * PAGE_SIZE, kSecondBase,
        NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS);
    if (NT_ERROR(posted)) {  // AMB-30 (inline_error): refused inline, so no entry may come
        seed::expect_no_entry_for(session(), pair.a, pair.cq, marker, &second_context);
        return;
    }
    ASSERT_STATUS(STATUS_SUCCESS, posted);
    const UINT32 token = session().remote_token(mr);  // FR-TOK-01: the new region's, if any
    static int marker_context;
    auto seen = seed::after_marker(session(), pair.a, pair.cq, marker, &marker_context);
    if (const NDK_RESULT_EX* entry = seed::find_result(seen, &second_context)) {
        // AMB-30 (completion_error): it failed, and said so (FR-SILENT-02). A success entry
        // would be FR-SILENT-01's (AMB-33), not this test's.
        if (entry->Status != STATUS_SUCCESS) {
            NDKCT_RULE("FR-SILENT-02");
            EXPECT_TRUE(NT_ERROR(entry->Status));
        }
        return;
    }
    // No entry: the silent success of AMB-30's allow reading, so the new region is in force. The
    // peer writes its second page (outside the first registration, inside the second).
    static int write_context;
    NDK_SGE sge = Session::sge(source, 0, 64, src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.b, &write_context, {&sge, 1},
                                                  kSecondBase + PAGE_SIZE + 128, token));
    auto written = session().drain(pair.cq, 1);
    ASSERT_EQ(written.size(), 1u) << "the peer's write did not complete (WR-10)";
    EXPECT_EQ(written[0].RequestContext, &write_context);
    if (written[0].Status == STATUS_SUCCESS) {
        NDKCT_RULE("FR-MAP-01");
        EXPECT_EQ(std::memcmp(memory.data() + PAGE_SIZE + 128, source.data(), 64), 0)
            << "the write through the new registration did not land in its second page";
        return;
    }
    // The write failed: the registration did not take effect, so it failed, and its error entry
    // is owed (FR-SILENT-02). It is waited for as such: if it never comes, the failure names what
    // the oracle says of the entry missing (Model::missing_entry_page_rules: FR-SILENT-02 when a
    // failed access showed the registration not in force).
    auto late = session().drain(pair.cq, 1);
    EXPECT_TRUE(seed::find_result(late, &second_context))
        << "a silent fast registration over a valid one did not take effect (the peer's write "
           "into its region failed with "
        << spec::status_name(written[0].Status) << ") and made no CQ entry";
    if (const NDK_RESULT_EX* entry = seed::find_result(late, &second_context)) {
        NDKCT_RULE("FR-SILENT-02");
        EXPECT_TRUE(NT_ERROR(entry->Status));
    }
}

}  // namespace
}  // namespace ndkct::conformance
