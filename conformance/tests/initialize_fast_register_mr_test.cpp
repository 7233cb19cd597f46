// NdkInitializeFastRegisterMr (IFR-*): AdapterPageCount 0, 1, 16, FRMRPageCount, one more, far
// beyond; both RemoteAccess values; retry after a failure; tokens; and the completion contract
// over many calls. An initialization is judged by what it makes possible: NdkFastRegister with
// up to the initialized page count.
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::kFarBase;

NDKCT_SUITE(InitializeFastRegisterMr);

// A connected pair and `pages` pages mapped by NdkBuildLam, for proving an MR usable.
struct Rig {
    Session* s = nullptr;
    LoopbackPair pair;
    platform::LockedBuffer memory, source;
    Registered src;
    seed::Mapping* map = nullptr;
    std::string problem;

    // Fast-registers the first `n` pages (remote write when `remote`), has the peer write the
    // region's last 8 bytes, and checks they landed. Invalidates afterwards.
    void usable_for(NDK_MR* mr, size_t n, bool remote) {
        // An MR initialized for N pages takes fast registrations of n <= N.
        NDKCT_RULE("IFR-APC-01");
        static int context;
        ULONG flags = remote ? NDK_OP_FLAG_ALLOW_REMOTE_WRITE : NDK_OP_FLAG_ALLOW_LOCAL_WRITE;
        SIZE_T length = n * PAGE_SIZE;
        NTSTATUS posted = s->fast_register(pair.a, &context, mr, seed::first(map->pages, n), 0,
                                           length, kFarBase, flags);
        ASSERT_STATUS(STATUS_SUCCESS, posted) << n << " pages";
        UINT32 token = s->remote_token(mr);
        ASSERT_STATUS(STATUS_SUCCESS, wait(&context)) << n << " pages";
        if (remote) {
            static int write_context;
            NDK_SGE sge = Session::sge(source, 0, 8, src.local_token);
            ASSERT_STATUS(STATUS_SUCCESS, s->write(pair.b, &write_context, {&sge, 1},
                                                   kFarBase + length - 8, token));
            ASSERT_STATUS(STATUS_SUCCESS, wait(&write_context));
            EXPECT_EQ(std::memcmp(memory.data() + length - 8, source.data(), 8), 0);
        }
        static int invalidate_context;
        ASSERT_STATUS(STATUS_SUCCESS, s->invalidate(pair.a, &invalidate_context, mr));
        ASSERT_STATUS(STATUS_SUCCESS, wait(&invalidate_context));
    }
    NTSTATUS wait(const void* context) {
        NDKCT_RULE("WR-10", "CQ-RES-05");
        return seed::completion_status(*s, pair.cq, context);
    }
};

Rig make_rig(Session& s, seed::Mappings& maps, size_t pages) {
    Rig r;
    r.s = &s;
    r.pair = s.loopback_pair();
    if (!r.pair.connected) {
        r.problem = r.pair.problem;
        return r;
    }
    r.memory = s.buffer(pages * PAGE_SIZE);
    r.source = s.buffer(PAGE_SIZE);
    seed::fill(r.source, 7);
    r.src = s.register_buffer(r.pair.pd, r.source, 0);
    r.map = &maps.add(r.memory);
    if (!r.map->ok() || r.map->pages.size() != pages)
        r.problem = "NdkBuildLam did not map the pages";
    if (r.src.status != STATUS_SUCCESS) r.problem = "NdkRegisterMr failed for the source";
    return r;
}

NDK_MR* new_fr_mr(Session& s, NDK_PD* pd) {
    auto made = s.create_mr(pd, true);
    return made.object;
}

// ---------------------------------------------------------------- page counts

NDKCT_TEST(InitializeFastRegisterMr, OnePageIsAcceptedAndUsable,
           "ndk.mr.initialize_fast_register.one_page", "IFR-APC-04", "IFR-APC-01", "IFR-POST-01",
           "IFR-ST-01", "IFR-ST-02") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = new_fr_mr(session(), r.pair.pd);
    ASSERT_TRUE(mr);
    ASSERT_STATUS(STATUS_SUCCESS, session().initialize_fast_register_mr(mr, 1, true).final_status);
    r.usable_for(mr, 1, true);
}

NDKCT_TEST(InitializeFastRegisterMr, SixteenPagesAreAlwaysAccepted,
           "ndk.mr.initialize_fast_register.sixteen_pages", "IFR-APC-04", "AI-02", "IFR-APC-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 16);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = new_fr_mr(session(), r.pair.pd);
    ASSERT_TRUE(mr);
    ASSERT_STATUS(STATUS_SUCCESS, session().initialize_fast_register_mr(mr, 16, true).final_status);
    r.usable_for(mr, 16, true);
    r.usable_for(mr, 7, true);  // fewer pages than initialized
}

NDKCT_TEST(InitializeFastRegisterMr, FrmrPageCountIsAccepted,
           "ndk.mr.initialize_fast_register.frmr_page_count", "IFR-APC-04", "AI-02", "IFR-APC-01") {
    ULONG count = info().FRMRPageCount;
    NDKCT_REQUIRE(count > 0 && count <= 8192, "FRMRPageCount fits the harness's 64 MiB arena");
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, count);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = new_fr_mr(session(), r.pair.pd);
    ASSERT_TRUE(mr);
    Done d = session().initialize_fast_register_mr(mr, count, true);
    ASSERT_STATUS(STATUS_SUCCESS, d.final_status) << "FRMRPageCount " << count;
    EXPECT_NE(d.final_status, STATUS_IMPLEMENTATION_LIMIT);
    r.usable_for(mr, count, true);
}

NDKCT_TEST(InitializeFastRegisterMr, OneMoreThanFrmrPageCountSucceedsOrHitsTheLimit,
           "ndk.mr.initialize_fast_register.frmr_page_count_plus_one", "IFR-APC-02", "IFR-APC-01",
           "AMB-08") {
    ULONG count = std::max<ULONG>(16, info().FRMRPageCount) + 1;
    NDKCT_REQUIRE(count <= 8192, "FRMRPageCount fits the harness's 64 MiB arena");
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, count);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = new_fr_mr(session(), r.pair.pd);
    ASSERT_TRUE(mr);
    Done d = session().initialize_fast_register_mr(mr, count, true);
    {
        // The page names one refusal for a count the adapter does not support.
        NDKCT_RULE("IFR-APC-02");
        EXPECT_TRUE(d.final_status == STATUS_SUCCESS ||
                    d.final_status == STATUS_IMPLEMENTATION_LIMIT)
            << count << " pages: " << spec::status_name(d.final_status);
    }
    NDKCT_RULE("IFR-APC-01");  // a count it accepted is supported, every page of it
    if (d.ok()) r.usable_for(mr, count, true);
}

// Past FRMRPageCount the adapter may accept more pages, as far as it likes, but every count it
// accepts must then work with exactly that many pages; the first count it refuses is refused
// with the status the page names. Doubling up to what the harness can map (8192 pages).
NDKCT_TEST(InitializeFastRegisterMr, EveryAcceptedCountIsUsableUpToTheFirstRefusal,
           "ndk.mr.initialize_fast_register.accepted_counts_usable", "IFR-APC-01", "IFR-APC-02",
           "IFR-POST-01") {
    constexpr ULONG kMost = 8192;
    ULONG guaranteed = std::max<ULONG>(16, info().FRMRPageCount);
    NDKCT_REQUIRE(guaranteed < kMost, "FRMRPageCount leaves room in the harness's 64 MiB arena");
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, kMost);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    for (ULONG count = std::min(guaranteed * 2, kMost);; count = std::min(count * 2, kMost)) {
        NDK_MR* mr = new_fr_mr(session(), r.pair.pd);
        ASSERT_TRUE(mr);
        Done d = session().initialize_fast_register_mr(mr, count, true);
        if (!d.ok()) {
            NDKCT_RULE("IFR-APC-02");
            EXPECT_STATUS(STATUS_IMPLEMENTATION_LIMIT, d.final_status) << count << " pages";
            break;
        }
        {
            NDKCT_RULE("IFR-APC-01");
            r.usable_for(mr, count, true);
            if (HasFatalFailure()) return;
        }
        if (count == kMost) break;
    }
}

NDKCT_TEST(InitializeFastRegisterMr, FarTooManyPagesFailWithImplementationLimitOrSucceed,
           "ndk.mr.initialize_fast_register.implementation_limit", "IFR-APC-02", "IFR-ST-02",
           "IFR-ST-03", "AMB-08") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    NDKCT_RULE("IFR-APC-02");
    for (ULONG count : {ULONG(1) << 20, ULONG(0x7FFFFFFF), ULONG(0xFFFFFFFF)}) {
        NDK_MR* mr = new_fr_mr(session(), pd.object);
        ASSERT_TRUE(mr);
        Done d = session().initialize_fast_register_mr(mr, count, true);
        // The only documented refusal for an unsupported count (inline or through the callback).
        EXPECT_TRUE(d.final_status == STATUS_SUCCESS ||
                    d.final_status == STATUS_IMPLEMENTATION_LIMIT)
            << count << " pages: " << spec::status_name(d.final_status);
    }
}

NDKCT_TEST(InitializeFastRegisterMr, FailedInitializationCanBeRetried,
           "ndk.mr.initialize_fast_register.retry_after_failure", "IFR-ST-04", "IFR-ST-03",
           "IFR-POST-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 4);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = new_fr_mr(session(), r.pair.pd);
    ASSERT_TRUE(mr);
    Done huge = session().initialize_fast_register_mr(mr, 0xFFFFFFFF, true);
    NDKCT_REQUIRE(!huge.ok(),
                  "the adapter accepted 0xFFFFFFFF pages, so there is no failure to retry after");
    ASSERT_STATUS(STATUS_SUCCESS, session().initialize_fast_register_mr(mr, 4, true).final_status);
    r.usable_for(mr, 4, true);
}

NDKCT_TEST(InitializeFastRegisterMr, ZeroPagesIsRefusedOrAcceptedCleanly,
           "ndk.mr.initialize_fast_register.zero_pages", "IFR-APC-03", "AMB-09", "IFR-ST-04") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = new_fr_mr(session(), r.pair.pd);
    ASSERT_TRUE(mr);
    Done d = session().initialize_fast_register_mr(mr, 0, true);
    if (!d.ok()) {
        EXPECT_TRUE(NT_ERROR(d.final_status)) << spec::status_name(d.final_status);
        // Refused: the MR is as new, and an initialization with a real count makes it usable.
        ASSERT_STATUS(STATUS_SUCCESS,
                      session().initialize_fast_register_mr(mr, 2, true).final_status);
        r.usable_for(mr, 2, true);
    }
}

// ---------------------------------------------------------------- RemoteAccess, tokens

NDKCT_TEST(InitializeFastRegisterMr, BothRemoteAccessValuesAreAccepted,
           "ndk.mr.initialize_fast_register.remote_access", "IFR-RA-02", "IFR-RA-01", "FR-ACC-02",
           "FR-ACC-03") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* local = new_fr_mr(session(), r.pair.pd);
    NDK_MR* remote = new_fr_mr(session(), r.pair.pd);
    ASSERT_TRUE(local && remote);
    EXPECT_STATUS(STATUS_SUCCESS,
                  session().initialize_fast_register_mr(local, 2, false).final_status);
    EXPECT_STATUS(STATUS_SUCCESS,
                  session().initialize_fast_register_mr(remote, 2, true).final_status);
    r.usable_for(local, 2, false);  // local rights only
    r.usable_for(remote, 2, true);  // remote write
}

NDKCT_TEST(InitializeFastRegisterMr, TokensAreReadableOnceInitialized,
           "ndk.mr.initialize_fast_register.tokens", "IFR-TOK-01", "IFR-TOK-02", "AMB-07") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    NDK_MR* mr = new_fr_mr(session(), pd.object);
    ASSERT_TRUE(mr);
    ASSERT_STATUS(STATUS_SUCCESS, session().initialize_fast_register_mr(mr, 8, true).final_status);
    // Values are the provider's; the oracle judges that reading them now is allowed and stable.
    UINT32 local = session().local_token(mr);
    EXPECT_EQ(session().local_token(mr), local) << "the local token changed without a registration";
    session().remote_token(mr);
}

// IFR-TOK-01/02: the tokens may be read once the initialization has completed, and reading them
// changes nothing: the MR still takes its first fast registration, which the peer writes through.
NDKCT_TEST(InitializeFastRegisterMr, ReadingTheTokensLeavesTheMrReadyForItsFirstRegistration,
           "ndk.mr.initialize_fast_register.tokens_then_register", "IFR-TOK-01", "IFR-TOK-02",
           "IFR-POST-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = new_fr_mr(session(), r.pair.pd);
    ASSERT_TRUE(mr);
    ASSERT_STATUS(STATUS_SUCCESS, session().initialize_fast_register_mr(mr, 2, true).final_status);
    session().remote_token(mr);
    session().local_token(mr);
    r.usable_for(mr, 2, true);
}

// ---------------------------------------------------------------- many calls

NDKCT_TEST(InitializeFastRegisterMr, ManyInitializationsInlineOrPendingAreEachUsable,
           "ndk.mr.initialize_fast_register.many", "IFR-ST-01", "IFR-ST-02", "IFR-CTX-01",
           "IFR-CONC-01", "IFR-POST-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 4);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    // Back to back, on different MRs, without waiting for anything in between but the result.
    std::vector<NDK_MR*> mrs;
    for (int i = 0; i < 24; ++i) {
        NDK_MR* mr = new_fr_mr(session(), r.pair.pd);
        ASSERT_TRUE(mr);
        mrs.push_back(mr);
    }
    for (size_t i = 0; i < mrs.size(); ++i)
        ASSERT_STATUS(STATUS_SUCCESS,
                      session()
                          .initialize_fast_register_mr(mrs[i], ULONG(1 + i % 4), i % 2 == 0)
                          .final_status)
            << "MR " << i;
    for (size_t i = 0; i < mrs.size(); ++i)
        r.usable_for(mrs[i], 1 + i % 4, i % 2 == 0);
}

NDKCT_TEST(InitializeFastRegisterMr, ResourceFailuresInEitherFormLeaveTheMrUninitialized,
           "ndk.mr.initialize_fast_register.insufficient_resources", "IFR-ST-02", "IFR-ST-03",
           "IFR-ST-04", "GEN-ASYNC-02") {
    auto s = seed::session_with(GetParam(), seed::resource_pressure(30));
    ASSERT_TRUE(s);
    auto pd = seed::until_resources([&] { return s->create_pd(); });
    ASSERT_TRUE(pd.object);
    size_t initialized = 0;
    for (int i = 0; i < 40; ++i) {
        auto mr = seed::until_resources([&] { return s->create_mr(pd.object, true); });
        ASSERT_TRUE(mr.object);
        Done d = s->initialize_fast_register_mr(mr.object, 4, i % 2 == 0);
        if (!d.ok()) {
            EXPECT_STATUS(STATUS_INSUFFICIENT_RESOURCES, d.final_status)
                << "a valid initialization failed otherwise";
            // Still uninitialized: initializing it again is allowed and (resources allowing) works.
            d = seed::until_resources(
                [&] { return s->initialize_fast_register_mr(mr.object, 4, true); });
            EXPECT_STATUS(STATUS_SUCCESS, d.final_status);
        }
        if (d.ok()) {
            s->local_token(mr.object);
            ++initialized;
        }
        s->close(mr.object);
    }
    EXPECT_GT(initialized, 0u);
    seed::finish(*s);
}

}  // namespace
}  // namespace ndkct::conformance
