// Directed tests written to make the deliberately faulty providers (conformance/faulty) fail by
// the rule each breaks, where the other suites did not reach it yet. They are ordinary
// conformance tests: the reference provider passes them. conformance/faulty/README.md lists
// which fault each one catches.
#include <algorithm>
#include <cstring>
#include <thread>

#include "ndkct/conformance/suite.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(Bites);

// A page-aligned label for fast-registered regions (their addresses are indexes, FR-ALIGN-01).
constexpr uint64_t kBase = 0x0000'6B00'0000'0000ull;

const NDK_RESULT_EX* find_result(const std::vector<NDK_RESULT_EX>& results, const void* context) {
    for (const auto& r : results)
        if (r.RequestContext == context) return &r;
    return nullptr;
}

// Polls the CQ until an entry for `context` arrived (then a little longer, for anything that
// must not be there) or the time is up. Returns every entry seen.
std::vector<NDK_RESULT_EX> drain_until(Session& s, NDK_CQ* cq, const void* context,
                                       milliseconds timeout = milliseconds(3000)) {
    std::vector<NDK_RESULT_EX> all;
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(timeout);
    while (!find_result(all, context) && std::chrono::steady_clock::now() < deadline) {
        auto got = s.poll(cq);
        all.insert(all.end(), got.begin(), got.end());
        if (got.empty()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    auto more = s.drain(cq, 1, milliseconds(20));
    all.insert(all.end(), more.begin(), more.end());
    return all;
}

// A connected pair and the logical pages of a buffer, for fast registration.
struct FastRegisterBench {
    Session& s;
    LoopbackPair pair;
    platform::LockedBuffer buffer;
    platform::MdlChain chain;
    LamResult lam;
    std::vector<NDK_LOGICAL_ADDRESS> pages;

    FastRegisterBench(Session& session, ULONG page_count) : s(session) {
        pair = s.loopback_pair();
        if (!pair.connected) return;
        buffer = s.buffer(page_count * PAGE_SIZE);
        chain = platform::describe(buffer, 0, page_count * PAGE_SIZE);
        lam = s.build_lam(chain.head(), page_count * PAGE_SIZE,
                          static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(page_count)));
        pages = lam.pages();
    }
    ~FastRegisterBench() {
        s.close_all();  // the MRs go before the mapping they use
        if (lam.done.ok()) s.release_lam(lam);
    }
    bool ready() const { return pair.connected && !pages.empty(); }
    SIZE_T length() const { return pages.size() * PAGE_SIZE; }

    // A fast-register MR of the pair's PD, initialized for every page of the bench.
    NDK_MR* mr(bool remote_access) {
        auto made = s.create_mr(pair.pd, true);
        if (!made.object) return nullptr;
        Done d = s.initialize_fast_register_mr(made.object, static_cast<ULONG>(pages.size()),
                                               remote_access);
        return d.ok() ? made.object : nullptr;
    }
};

NDKCT_TEST(Bites, FastRegisterBaseNotCongruentToFboRegistersNothing,
           "ndk.bites.fast_register.base_va_not_fbo", "FR-ALIGN-01", "FR-ALIGN-03", "FR-ST-03") {
    FastRegisterBench bench(session(), 4);
    ASSERT_TRUE(bench.ready()) << bench.pair.problem;
    NDK_MR* mr = bench.mr(false);
    ASSERT_TRUE(mr);
    int request;
    NTSTATUS s = session().fast_register(bench.pair.a, &request, mr, bench.pages, 0, bench.length(),
                                         kBase + 17);
    {
        NDKCT_RULE("FR-ST-03");
        ASSERT_NE(s, STATUS_PENDING) << "NdkFastRegister never pends (FR-ST-03)";
    }
    if (s == STATUS_SUCCESS) {  // AMB-29: accepted, then its completion must report an error
        auto results = drain_until(session(), bench.pair.cq, &request);
        const NDK_RESULT_EX* r = find_result(results, &request);
        {
            NDKCT_RULE("AMB-29", "WR-10");
            ASSERT_TRUE(r) << "an accepted request must complete";
        }
        // The oracle judges a success here a breach of FR-ALIGN-01 (FR-ALIGN-03, the form of
        // the refusal, follows from it): the check names the same rule.
        NDKCT_RULE("FR-ALIGN-01");
        EXPECT_TRUE(NT_ERROR(r->Status))
            << "BaseVirtualAddress % PAGE_SIZE is 17, FBO is 0 (FR-ALIGN-03), yet "
            << spec::status_name(r->Status);
    } else {
        NDKCT_RULE("FR-ALIGN-03");  // refused inline: with an error status
        EXPECT_TRUE(NT_ERROR(s)) << spec::status_name(s);
    }
}

NDKCT_TEST(Bites, FastRegisterRemoteRightsNeedRemoteAccess,
           "ndk.bites.fast_register.remote_rights_refused", "FR-ACC-01", "FR-ACC-04", "FR-ST-04",
           "WR-05") {
    FastRegisterBench bench(session(), 4);
    ASSERT_TRUE(bench.ready()) << bench.pair.problem;
    NDK_MR* mr = bench.mr(false);
    ASSERT_TRUE(mr);
    int refused, marker;
    EXPECT_STATUS(STATUS_ACCESS_VIOLATION,
                  session().fast_register(bench.pair.a, &refused, mr, bench.pages, 0,
                                          bench.length(), kBase, NDK_OP_FLAG_ALLOW_REMOTE_READ));
    // The refused request leaves no trace: post a valid one behind it and look at the CQ.
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().fast_register(bench.pair.a, &marker, mr, bench.pages, 0, bench.length(),
                                          kBase, NDK_OP_FLAG_ALLOW_LOCAL_WRITE));
    NDKCT_RULE("WR-10", "WR-05");
    auto results = drain_until(session(), bench.pair.cq, &marker);
    EXPECT_TRUE(find_result(results, &marker)) << "the valid request did not complete";
    NDKCT_RULE("FR-ACC-04", "FR-ST-04", "WR-05");  // the page's rules for its refusal first
    EXPECT_FALSE(find_result(results, &refused))
        << "a request refused inline made a CQ entry (WR-05)";
}

NDKCT_TEST(Bites, FastRegisterLocalWriteIsNotRemote,
           "ndk.bites.fast_register.local_write_not_remote", "FR-ACC-02", "FR-ST-01", "FR-ST-03") {
    FastRegisterBench bench(session(), 4);
    ASSERT_TRUE(bench.ready()) << bench.pair.problem;
    NDK_MR* mr = bench.mr(false);
    ASSERT_TRUE(mr);
    int request;
    NTSTATUS s = session().fast_register(bench.pair.a, &request, mr, bench.pages, 0, bench.length(),
                                         kBase, NDK_OP_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, s) << "0x10 is local write, not a remote right (FR-ACC-02)";
    NDKCT_RULE("FR-ST-01");
    auto results = drain_until(session(), bench.pair.cq, &request);
    const NDK_RESULT_EX* r = find_result(results, &request);
    ASSERT_TRUE(r) << "a posted fast registration completes on the initiator CQ (FR-ST-01)";
    EXPECT_STATUS(STATUS_SUCCESS, r->Status);
}

NDKCT_TEST(Bites, BuildLamTooSmallWritesTheRequiredSize, "ndk.bites.build_lam.buffer_too_small",
           "LAM-SIZE-01", "LAM-SIZE-02", "LAM-SIZE-04") {
    auto buffer = session().buffer(3 * PAGE_SIZE);
    auto chain = platform::describe(buffer, 100, 2 * PAGE_SIZE);  // spans 3 pages
    const ULONG required = static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(3));
    for (ULONG given : {0u, 16u, required - 1}) {
        LamResult lam = session().build_lam(chain.head(), 2 * PAGE_SIZE, given);
        EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, lam.done.final_status) << "*pLAMSize " << given;
        EXPECT_GE(lam.size_out, required) << "*pLAMSize must say how much is needed (LAM-SIZE-04)";
        if (lam.done.ok()) session().release_lam(lam);
    }
    LamResult lam = session().build_lam(chain.head(), 2 * PAGE_SIZE, required);
    EXPECT_STATUS(STATUS_SUCCESS, lam.done.final_status);
    if (lam.done.ok()) session().release_lam(lam);
}

NDKCT_TEST(Bites, CreateQpOverLimitsIsRefused, "ndk.bites.create_qp.over_limits", "CQP-LIM-01",
           "CQP-LIM-02", "CQP-LIM-03", "CQP-LIM-04", "CQP-LIM-05", "CQP-LIM-06") {
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    const NDK_ADAPTER_INFO& limits = info();
    struct Case {
        const char* what;
        ULONG QpShape::*field;
        ULONG max;
    };
    for (const Case& c :
         {Case{"ReceiveQueueDepth", &QpShape::receive_depth, limits.MaxReceiveQueueDepth},
          Case{"InitiatorQueueDepth", &QpShape::initiator_depth, limits.MaxInitiatorQueueDepth},
          Case{"MaxReceiveRequestSge", &QpShape::receive_sge, limits.MaxReceiveRequestSge},
          Case{"MaxInitiatorRequestSge", &QpShape::initiator_sge, limits.MaxInitiatorRequestSge},
          Case{"InlineDataSize", &QpShape::inline_size, limits.MaxInlineDataSize}}) {
        QpShape shape;
        shape.*c.field = c.max + 1;
        auto qp = session().create_qp(pd.object, cq.object, cq.object, nullptr, shape);
        EXPECT_STATUS(STATUS_INVALID_PARAMETER, qp.final_status)
            << c.what << " one over the adapter's limit";
        if (qp.object) session().close(qp.object);  // refused or not, leave nothing behind
    }
}

NDKCT_TEST(Bites, RegisterMrRefusesABrokenChain, "ndk.bites.register_mr.broken_chain",
           "RMR-MDL-01") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = session().buffer(4 * PAGE_SIZE);
    platform::MdlChain chains[] = {
        platform::with_hole(buffer, 0, PAGE_SIZE, PAGE_SIZE, PAGE_SIZE),
        platform::with_misaligned_joint(buffer, 0, PAGE_SIZE / 2, PAGE_SIZE)};
    for (const auto& chain : chains) {
        auto mr = session().create_mr(pd.object, false);
        ASSERT_TRUE(mr.object);
        Done d = session().register_mr(mr.object, chain.head(), chain.byte_count(), 0);
        EXPECT_STATUS(STATUS_INVALID_PARAMETER, d.final_status)
            << "a chain that is not virtually contiguous";
    }
}

NDKCT_TEST(Bites, SilentWriteMakesNoEntry, "ndk.bites.write.silent_success", "WR-SILENT-01",
           "WR-10", "WRT-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    auto target = session().buffer(PAGE_SIZE);
    for (size_t i = 0; i < source.size(); ++i)
        source.data()[i] = std::byte(uint8_t(i * 7 + 1) | 1);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto dst = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    NDK_SGE first = Session::sge(source, 0, 256, src.local_token);
    NDK_SGE second = Session::sge(source, 256, 256, src.local_token);
    int silent, loud;
    uint64_t at = reinterpret_cast<uint64_t>(target.data());
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &silent, {&first, 1}, at,
                                                  dst.remote_token, NDK_OP_FLAG_SILENT_SUCCESS));
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &loud, {&second, 1}, at + 256, dst.remote_token));
    NDKCT_RULE("WR-SILENT-01", "WR-10", "WRT-01");
    auto results = drain_until(session(), pair.cq, &loud);
    EXPECT_TRUE(find_result(results, &loud)) << "the ordinary write did not complete";
    EXPECT_FALSE(find_result(results, &silent))
        << "a successful SILENT_SUCCESS write made an entry";
    EXPECT_EQ(std::memcmp(target.data(), source.data(), 512), 0) << "both writes land";
}

NDKCT_TEST(Bites, InitializeFastRegisterMrAcceptsTheGuaranteedPages,
           "ndk.bites.initialize_fr_mr.guaranteed", "IFR-APC-04", "AI-02") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    ULONG guaranteed = std::max<ULONG>(16, info().FRMRPageCount);
    for (ULONG pages : {1u, 16u, guaranteed}) {
        auto mr = session().create_mr(pd.object, true);
        ASSERT_TRUE(mr.object);
        Done d = session().initialize_fast_register_mr(mr.object, pages, false);
        EXPECT_STATUS(STATUS_SUCCESS, d.final_status)
            << pages << " pages (guaranteed up to " << guaranteed << ")";
    }
}

NDKCT_TEST(Bites, ManyRegistrationsEachCompleteOnce, "ndk.bites.register_mr.many", "RMR-ST-01",
           "DMR-01", "GEN-ASYNC-01", "GEN-ASYNC-03", "GEN-CB-03") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = session().buffer(16 * PAGE_SIZE);
    for (size_t i = 0; i < 16; ++i) {
        auto r = session().register_buffer(pd.object, buffer, NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
                                           i * PAGE_SIZE, PAGE_SIZE);
        ASSERT_STATUS(STATUS_SUCCESS, r.status) << "registration " << i;
        EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(r.mr).final_status)
            << "registration " << i;
    }
}

}  // namespace
}  // namespace ndkct::conformance
