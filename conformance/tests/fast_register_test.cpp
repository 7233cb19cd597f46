// NdkFastRegister (FR-*): page counts, FBO, BaseVirtualAddress, Length, every flag, access rights
// through fast-registered regions before and after NdkInvalidate, and the inline contract.
//
// The region is fast-registered on pair.a; its pages come from NdkBuildLam over `memory`; the
// peer (pair.b) reaches it remotely with the MR's remote token, read after the call returned
// (FR-TOK-01). Bytes are checked in `memory`, where byte k of the region must land at offset
// FBO + k (pages in array order, FR-MAP-01).
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::address_of;
using seed::kFarBase;

NDKCT_SUITE(FastRegister);

struct Rig {
    Session* s = nullptr;
    LoopbackPair pair;
    platform::LockedBuffer memory;  // behind the fast-registered region, zeroed
    platform::LockedBuffer source;  // patterned, registered for local read
    platform::LockedBuffer sink;    // a registered read sink
    Registered src, snk;
    seed::Mapping* map = nullptr;
    seed::Marker marker;
    std::string problem;

    const std::vector<NDK_LOGICAL_ADDRESS>& pages() const { return map->pages; }

    // pair.b writes source[0, length) to [address, +length) with token: the completion's status.
    NTSTATUS peer_write(uint64_t address, UINT32 token, ULONG length) {
        static int context;
        NDK_SGE sge = Session::sge(source, 0, length, src.local_token);
        NTSTATUS posted = s->write(pair.b, &context, {&sge, 1}, address, token);
        if (posted != STATUS_SUCCESS) return posted;
        return wait(&context);
    }
    // pair.b reads [address, +length) into sink[0, length): the completion's status.
    NTSTATUS peer_read(uint64_t address, UINT32 token, ULONG length) {
        static int context;
        NDK_SGE sge = Session::sge(sink, 0, length, snk.local_token);
        NTSTATUS posted = s->read(pair.b, &context, {&sge, 1}, address, token);
        if (posted != STATUS_SUCCESS) return posted;
        return wait(&context);
    }
    NTSTATUS wait(const void* context) {
        NDKCT_RULE("WR-10", "CQ-RES-05");  // an accepted request completes once, with its context
        return seed::completion_status(*s, pair.cq, context);
    }
    // NdkFastRegister on pair.a.
    NTSTATUS post(void* context, NDK_MR* mr, const std::vector<NDK_LOGICAL_ADDRESS>& list,
                  ULONG fbo, SIZE_T length, uint64_t base, ULONG flags) {
        return s->fast_register(pair.a, context, mr, list, fbo, length, base, flags);
    }
    // Posts a fast registration that must succeed and waits for its successful completion;
    // returns the remote token read right after the call returned (FR-TOK-01).
    UINT32 registered(NDK_MR* mr, const std::vector<NDK_LOGICAL_ADDRESS>& list, ULONG fbo,
                      SIZE_T length, uint64_t base, ULONG flags) {
        static int context;
        NDKCT_RULE("FR-ST-01");  // a valid fast registration succeeds and completes successfully
        NTSTATUS posted = post(&context, mr, list, fbo, length, base, flags);
        EXPECT_STATUS(STATUS_SUCCESS, posted);
        if (posted != STATUS_SUCCESS) return 0;
        UINT32 token = s->remote_token(mr);
        if (!(flags & NDK_OP_FLAG_SILENT_SUCCESS)) {
            EXPECT_STATUS(STATUS_SUCCESS, wait(&context));
        }
        return token;
    }
    NTSTATUS invalidate(NDK_MR* mr) {
        static int context;
        NTSTATUS posted = s->invalidate(pair.a, &context, mr);
        if (posted != STATUS_SUCCESS) return posted;
        return wait(&context);
    }
    bool not_registered(NTSTATUS status, const void* context, const std::vector<std::string>& why) {
        return seed::expect_not_registered(*s, pair.a, pair.cq, marker, status, context, why);
    }
    void no_entry_for(const void* context) {
        seed::expect_no_entry_for(*s, pair.a, pair.cq, marker, context);
    }
};

// A connected pair, `pages` zeroed pages mapped by NdkBuildLam, and scratch regions.
Rig make_rig(Session& s, seed::Mappings& maps, size_t pages, QpShape shape = {}) {
    Rig r;
    r.s = &s;
    r.pair = s.loopback_pair(shape);
    if (!r.pair.connected) {
        r.problem = r.pair.problem;
        return r;
    }
    r.memory = s.buffer(pages * PAGE_SIZE);
    r.source = s.buffer(4 * PAGE_SIZE);
    r.sink = s.buffer(4 * PAGE_SIZE);
    seed::fill(r.source, 7);
    r.src = s.register_buffer(r.pair.pd, r.source, 0);
    r.snk = s.register_buffer(r.pair.pd, r.sink,
                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    r.map = &maps.add(r.memory);
    r.marker = seed::make_marker(s, r.pair.pd);
    if (!r.map->ok() || r.map->pages.size() != pages)
        r.problem = "NdkBuildLam did not map the region's pages";
    if (r.src.status != STATUS_SUCCESS || r.snk.status != STATUS_SUCCESS ||
        r.marker.src.status != STATUS_SUCCESS || r.marker.dst.status != STATUS_SUCCESS)
        r.problem = "NdkRegisterMr failed for a scratch region";
    return r;
}

bool same(const platform::LockedBuffer& a, size_t at, const platform::LockedBuffer& b, size_t bt,
          size_t n) {
    return std::memcmp(a.data() + at, b.data() + bt, n) == 0;
}

// ---------------------------------------------------------------- basics, rights, flags

NDKCT_TEST(FastRegister, RegistersAndCompletesOnTheInitiatorCq, "ndk.mr.fast_register.completes",
           "FR-ST-01", "FR-QP-01", "FR-RES-01", "FR-RES-02", "FR-APC-03", "IFR-POST-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 4);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 4, false);
    ASSERT_TRUE(mr);
    int context;
    ASSERT_STATUS(STATUS_SUCCESS, r.post(&context, mr, r.pages(), 0, 4 * PAGE_SIZE, kFarBase,
                                         NDK_OP_FLAG_ALLOW_LOCAL_WRITE));
    auto results = seed::settle(session(), r.pair.cq, 1);
    ASSERT_EQ(results.size(), 1u) << "exactly one entry for one fast registration";
    EXPECT_EQ(results[0].RequestContext, &context);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_NE(results[0].QPContext, nullptr) << "the QPContext given at creation";
    if (NDKCT_VERSION_AT_LEAST(session().version(), 1, 2)) {
        EXPECT_EQ(results[0].Type, NdkOperationTypeFastRegister);
    }
}

NDKCT_TEST(FastRegister, LocalWriteAloneIsNotARemoteRight,
           "ndk.mr.fast_register.local_write_not_remote", "FR-ACC-02", "FR-FLG-01", "AMB-03") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    // 0x10 & NDK_OP_FLAG_ALLOW_REMOTE_WRITE (0x30) is non-zero, yet 0x10 grants no remote right.
    std::vector<ULONG> values = {NDK_OP_FLAG_ALLOW_LOCAL_WRITE,
                                 NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_SILENT_SUCCESS,
                                 NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_READ_FENCE};
    if (NDKCT_VERSION_AT_LEAST(session().version(), 1, 2))
        values.push_back(NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_DEFER);
    values.push_back(
        NDK_OP_FLAG_ALLOW_LOCAL_WRITE);  // last: no DEFER, so everything is handed over
    std::vector<int> contexts(values.size());
    size_t entries = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, false);
        ASSERT_TRUE(mr);
        NTSTATUS s = r.post(&contexts[i], mr, r.pages(), 0, 100, kFarBase, values[i]);
        EXPECT_NE(s, STATUS_ACCESS_VIOLATION) << "Flags " << values[i] << " on a local-only MR";
        EXPECT_STATUS(STATUS_SUCCESS, s) << "Flags " << values[i];
        if (!(values[i] & NDK_OP_FLAG_SILENT_SUCCESS)) ++entries;
    }
    auto results = seed::settle(session(), r.pair.cq, entries);
    EXPECT_EQ(results.size(), entries);
    for (size_t i = 0; i < values.size(); ++i) {
        const auto* got = seed::find_result(results, &contexts[i]);
        if (values[i] & NDK_OP_FLAG_SILENT_SUCCESS) {
            EXPECT_FALSE(got) << "a silent success made an entry";
        } else {
            EXPECT_TRUE(got) << "Flags " << values[i];
            if (got) {
                EXPECT_STATUS(STATUS_SUCCESS, got->Status);
            }
        }
    }
}

NDKCT_TEST(FastRegister, RemoteReadOnALocalOnlyMrIsAnInlineAccessViolation,
           "ndk.mr.fast_register.remote_read_on_local_mr", "FR-ACC-01", "FR-ACC-04", "FR-ST-04",
           "IFR-RA-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, false);
    ASSERT_TRUE(mr);
    int context;
    EXPECT_STATUS(STATUS_ACCESS_VIOLATION, r.post(&context, mr, r.pages(), 0, PAGE_SIZE, kFarBase,
                                                  NDK_OP_FLAG_ALLOW_REMOTE_READ));
    r.no_entry_for(&context);
}

NDKCT_TEST(FastRegister, RemoteWriteOnALocalOnlyMrIsAnInlineAccessViolation,
           "ndk.mr.fast_register.remote_write_on_local_mr", "FR-ACC-01", "FR-ACC-04", "FR-ST-04") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, false);
    ASSERT_TRUE(mr);
    for (ULONG flags : {NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ,
                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS}) {
        int context;
        EXPECT_STATUS(STATUS_ACCESS_VIOLATION,
                      r.post(&context, mr, r.pages(), 0, PAGE_SIZE, kFarBase, flags))
            << "Flags " << flags;
        r.no_entry_for(&context);
    }
}

NDKCT_TEST(FastRegister, RefusedRemoteRightsRegisterNothing,
           "ndk.mr.fast_register.refused_registers_nothing", "FR-ACC-04", "FR-ACC-01",
           "IFR-TOK-02") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, false);
    ASSERT_TRUE(mr);
    int context;
    ASSERT_STATUS(STATUS_ACCESS_VIOLATION, r.post(&context, mr, r.pages(), 0, PAGE_SIZE, kFarBase,
                                                  NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    NDKCT_RULE("FR-ACC-04", "FR-ACC-01", "IFR-TOK-02");  // what the rest of the test checks
    r.no_entry_for(&context);
    // The MR's remote token (readable once initialized) grants nothing: no region was registered.
    UINT32 token = session().remote_token(mr);
    EXPECT_TRUE(NT_ERROR(r.peer_write(kFarBase, token, 64)));
    EXPECT_TRUE(seed::untouched(r.memory, 0, PAGE_SIZE));
}

NDKCT_TEST(FastRegister, LoneRemoteWriteBitOnALocalOnlyMrFails,
           "ndk.mr.fast_register.lone_0x20_on_local_mr", "FR-ACC-01", "AMB-03", "FR-ST-04") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, false);
    ASSERT_TRUE(mr);
    // 0x20 without 0x10 is no documented value (AMB-03); either reading makes it a remote-write
    // request, which a local-only MR refuses inline.
    int context;
    NTSTATUS s =
        r.post(&context, mr, r.pages(), 0, PAGE_SIZE, kFarBase, NDKCT_OP_FLAG_REMOTE_WRITE_BIT);
    EXPECT_TRUE(NT_ERROR(s)) << spec::status_name(s);
    if (NT_ERROR(s)) r.no_entry_for(&context);
}

NDKCT_TEST(FastRegister, RemoteRightsOnARemoteMrAreAccepted,
           "ndk.mr.fast_register.remote_rights_accepted", "FR-ACC-03", "FR-FLG-01", "IFR-RA-02") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    for (ULONG flags : {NDK_OP_FLAG_ALLOW_REMOTE_READ, NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                        NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE}) {
        NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
        ASSERT_TRUE(mr);
        r.registered(mr, r.pages(), 0, PAGE_SIZE, kFarBase, flags);
    }
}

NDKCT_TEST(FastRegister, EveryDocumentedFlagCombinationIsAccepted,
           "ndk.mr.fast_register.flag_combinations", "FR-FLG-01", "FR-SINK-02", "FR-SINK-03",
           "FR-SILENT-01", "FR-DEFER-01", "AMB-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    std::vector<ULONG> bits = {NDK_OP_FLAG_SILENT_SUCCESS,     NDK_OP_FLAG_READ_FENCE,
                               NDK_OP_FLAG_ALLOW_REMOTE_READ,  NDK_OP_FLAG_ALLOW_LOCAL_WRITE,
                               NDK_OP_FLAG_ALLOW_REMOTE_WRITE, NDK_OP_FLAG_RDMA_READ_SINK};
    if (NDKCT_VERSION_AT_LEAST(session().version(), 1, 2)) bits.push_back(NDK_OP_FLAG_DEFER);
    std::vector<ULONG> values;
    for (ULONG mask = 0; mask < (1u << bits.size()); ++mask) {
        ULONG v = 0;
        for (size_t b = 0; b < bits.size(); ++b)
            if (mask & (1u << b)) v |= bits[b];
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
    // In batches well inside the queue depth, each closed by a request without DEFER.
    std::vector<int> contexts(values.size());
    int closer;
    for (size_t start = 0; start < values.size(); start += 16) {
        size_t end = std::min(values.size(), start + 16);
        size_t entries = 1;
        for (size_t i = start; i < end; ++i) {
            NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
            ASSERT_TRUE(mr);
            EXPECT_STATUS(STATUS_SUCCESS,
                          r.post(&contexts[i], mr, r.pages(), 0, PAGE_SIZE, kFarBase, values[i]))
                << "Flags " << values[i];
            if (!(values[i] & NDK_OP_FLAG_SILENT_SUCCESS)) ++entries;
        }
        NDK_MR* last = seed::fast_register_mr(session(), r.pair.pd, 1, true);
        ASSERT_TRUE(last);
        ASSERT_STATUS(STATUS_SUCCESS, r.post(&closer, last, r.pages(), 0, PAGE_SIZE, kFarBase, 0));
        auto results = seed::settle(session(), r.pair.cq, entries);
        EXPECT_EQ(results.size(), entries);
        for (const auto& got : results)
            EXPECT_STATUS(STATUS_SUCCESS, got.Status);
        for (size_t i = start; i < end; ++i)
            EXPECT_EQ(seed::find_result(results, &contexts[i]) != nullptr,
                      !(values[i] & NDK_OP_FLAG_SILENT_SUCCESS))
                << "Flags " << values[i];
    }
}

NDKCT_TEST(FastRegister, UndocumentedFlagBitsAreIgnoredOrRefusedCleanly,
           "ndk.mr.fast_register.undocumented_flags", "AMB-04", "OPF-01", "FR-ST-01", "FR-ST-04") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    // Bits no header defines, and header flags NdkFastRegister does not list (INLINE, SOLICIT).
    for (ULONG extra :
         {0x400u, 0x8000u, 0x80000000u, NDK_OP_FLAG_INLINE, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT}) {
        NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
        ASSERT_TRUE(mr);
        int context;
        NTSTATUS s = r.post(&context, mr, r.pages(), 0, PAGE_SIZE, kFarBase,
                            NDK_OP_FLAG_ALLOW_LOCAL_WRITE | extra);
        EXPECT_NE(s, STATUS_PENDING);
        if (NT_ERROR(s)) {
            r.no_entry_for(&context);  // refused: not posted
        } else {
            EXPECT_STATUS(STATUS_SUCCESS, s) << "extra bits " << extra;
            auto results = seed::settle(session(), r.pair.cq, 1);
            ASSERT_EQ(results.size(), 1u) << "an accepted request completes once";
            EXPECT_EQ(results[0].RequestContext, &context);
        }
    }
}

NDKCT_TEST(FastRegister, NotConnectedQpRefusesInline, "ndk.mr.fast_register.not_connected",
           "FR-ST-02", "FR-ST-04", "CQP-STATE-01") {
    seed::Mappings maps(session());
    auto pd = session().create_pd();
    auto cq = session().create_cq(64);
    ASSERT_TRUE(pd.object && cq.object);
    auto qp = session().create_qp(pd.object, cq.object, cq.object, nullptr, {});
    ASSERT_TRUE(qp.object);
    auto memory = session().buffer(PAGE_SIZE);
    auto& map = maps.add(memory);
    ASSERT_TRUE(map.ok());
    NDK_MR* mr = seed::fast_register_mr(session(), pd.object, 1, true);
    ASSERT_TRUE(mr);
    int context;
    EXPECT_STATUS(STATUS_CONNECTION_INVALID,
                  session().fast_register(qp.object, &context, mr, map.pages, 0, PAGE_SIZE,
                                          kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    EXPECT_TRUE(session().drain(cq.object, 1, milliseconds(50)).empty()) << "no CQ entry";
}

// ---------------------------------------------------------------- page counts

NDKCT_TEST(FastRegister, EveryPageCountUpToTheInitializedOneIsAccepted,
           "ndk.mr.fast_register.page_count_up_to_initialized", "FR-APC-03", "FR-APC-01",
           "IFR-APC-01", "FR-INV-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 5);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 5, true);
    ASSERT_TRUE(mr);
    NDKCT_RULE("FR-APC-03", "FR-APC-01", "IFR-APC-01",
               "FR-INV-01");  // what the rest of the test checks
    for (size_t n = 1; n <= 5; ++n) {
        UINT32 token = r.registered(mr, seed::first(r.pages(), n), 0, n * PAGE_SIZE, kFarBase,
                                    NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        // The last byte of the last page is reachable.
        EXPECT_STATUS(STATUS_SUCCESS, r.peer_write(kFarBase + n * PAGE_SIZE - 8, token, 8))
            << n << " pages";
        EXPECT_TRUE(same(r.memory, n * PAGE_SIZE - 8, r.source, 0, 8)) << n << " pages";
        EXPECT_STATUS(STATUS_SUCCESS, r.invalidate(mr));
    }
}

NDKCT_TEST(FastRegister, FrmrPageCountPagesAreAccepted, "ndk.mr.fast_register.frmr_page_count",
           "FR-APC-03", "IFR-APC-04", "AI-02", "FR-MAP-01") {
    ULONG count = info().FRMRPageCount;
    NDKCT_REQUIRE(count > 0 && count <= 8192, "FRMRPageCount fits the harness's 64 MiB arena");
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, count);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, count, true);
    ASSERT_TRUE(mr);
    NDKCT_RULE("FR-APC-03", "IFR-APC-04", "AI-02",
               "FR-MAP-01");  // what the rest of the test checks
    SIZE_T length = SIZE_T(count) * PAGE_SIZE;
    UINT32 token = r.registered(mr, r.pages(), 0, length, kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    EXPECT_STATUS(STATUS_SUCCESS, r.peer_write(kFarBase, token, 64));
    EXPECT_STATUS(STATUS_SUCCESS, r.peer_write(kFarBase + length - 64, token, 64));
    EXPECT_TRUE(same(r.memory, 0, r.source, 0, 64));
    EXPECT_TRUE(same(r.memory, length - 64, r.source, 0, 64));
    EXPECT_TRUE(seed::untouched(r.memory, 64, length - 128));
}

NDKCT_TEST(FastRegister, OnePageMoreThanInitializedDoesNotRegister,
           "ndk.mr.fast_register.page_count_over_initialized", "FR-APC-02", "AMB-08", "AMB-29") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 5);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 4, true);
    ASSERT_TRUE(mr);
    int context;
    NTSTATUS s =
        r.post(&context, mr, r.pages(), 0, 5 * PAGE_SIZE, kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    if (r.not_registered(s, &context, {"FR-APC-02"})) {
        // Refused inline: the MR is still initialized, and a request within its count works.
        r.registered(mr, seed::first(r.pages(), 4), 0, 4 * PAGE_SIZE, kFarBase,
                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    }
}

NDKCT_TEST(FastRegister, ZeroPagesDoNotRegister, "ndk.mr.fast_register.zero_pages", "FR-LEN-02",
           "AMB-09", "AMB-29") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    int context;
    // No pages cannot hold even one byte (Length 1 > 0 * PAGE_SIZE - 0).
    NTSTATUS s = r.post(&context, mr, {}, 0, 1, kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    r.not_registered(s, &context, {"FR-LEN-02"});
}

// ---------------------------------------------------------------- FBO and BaseVirtualAddress

NDKCT_TEST(FastRegister, EveryFboInsideThePageIsAccepted, "ndk.mr.fast_register.fbo_in_page",
           "FR-FBO-01", "FR-ALIGN-01", "FR-MAP-01", "FR-TOK-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 3);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDKCT_RULE("FR-FBO-01", "FR-ALIGN-01", "FR-MAP-01",
               "FR-TOK-01");  // what the rest of the test checks
    for (ULONG fbo : {0u, 1u, PAGE_SIZE - 1}) {
        NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 3, true);
        ASSERT_TRUE(mr);
        SIZE_T length = 2 * PAGE_SIZE;
        uint64_t base = kFarBase + fbo;
        UINT32 token =
            r.registered(mr, r.pages(), fbo, length, base, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        // Both tokens known to the oracle: a remote token that is the local one then names
        // FR-TOK-01 at the failed write, live and in a trace, not only the write's WRT-01.
        (void)session().local_token(mr);
        ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(base, token, static_cast<ULONG>(length)))
            << "FBO " << fbo;
        // Byte k of the region is byte FBO + k of the pages.
        EXPECT_TRUE(same(r.memory, fbo, r.source, 0, length)) << "FBO " << fbo;
        EXPECT_TRUE(seed::untouched(r.memory, 0, fbo)) << "FBO " << fbo;
        std::memset(r.memory.data(), 0, r.memory.size());
    }
}

NDKCT_TEST(FastRegister, FboOfAWholePageDoesNotRegister, "ndk.mr.fast_register.fbo_page_size",
           "FR-FBO-02", "AMB-29") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, true);
    ASSERT_TRUE(mr);
    int context;
    // BaseVirtualAddress = FBO + 0 * PAGE_SIZE, so only the FBO is wrong.
    NTSTATUS s = r.post(&context, mr, r.pages(), PAGE_SIZE, 100, kFarBase + PAGE_SIZE,
                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    r.not_registered(s, &context, {"FR-FBO-02"});
}

NDKCT_TEST(FastRegister, BaseAddressCongruentToFboIsAccepted,
           "ndk.mr.fast_register.base_va_congruent", "FR-ALIGN-01", "FR-MAP-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDKCT_RULE("FR-ALIGN-01", "FR-MAP-01");  // what the rest of the test checks
    const ULONG fbo = 300;
    // FBO + n * PAGE_SIZE for n = 0, 1 and a large n: each is the region's first address.
    for (uint64_t base : {uint64_t(fbo), uint64_t(PAGE_SIZE + fbo), (uint64_t{1} << 46) + fbo}) {
        NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, true);
        ASSERT_TRUE(mr);
        UINT32 token =
            r.registered(mr, r.pages(), fbo, PAGE_SIZE, base, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        EXPECT_STATUS(STATUS_SUCCESS, r.peer_write(base + 10, token, 100)) << "base " << base;
        EXPECT_TRUE(same(r.memory, fbo + 10, r.source, 0, 100)) << "base " << base;
        std::memset(r.memory.data(), 0, r.memory.size());
    }
}

// FR-ALIGN-01 "small or large": the address is a label, never dereferenced, so one that no
// pointer has (bit 47 set: not canonical on x86-64; bit 63) is a start address like any other.
NDKCT_TEST(FastRegister, BaseAddressBeyondEveryPointerIsALabel,
           "ndk.mr.fast_register.base_va_beyond_pointers", "FR-ALIGN-01", "FR-MAP-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDKCT_RULE("FR-ALIGN-01", "FR-MAP-01");  // what the rest of the test checks
    const ULONG fbo = 300;
    for (uint64_t base : {(uint64_t{1} << 47) + fbo, (uint64_t{1} << 63) + PAGE_SIZE + fbo}) {
        NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, true);
        ASSERT_TRUE(mr);
        UINT32 token =
            r.registered(mr, r.pages(), fbo, PAGE_SIZE, base, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(base + 10, token, 100))
            << "base 0x" << std::hex << base;
        EXPECT_TRUE(same(r.memory, fbo + 10, r.source, 0, 100)) << "base 0x" << std::hex << base;
        std::memset(r.memory.data(), 0, r.memory.size());
    }
}

NDKCT_TEST(FastRegister, BaseAddressNotCongruentToFboDoesNotRegister,
           "ndk.mr.fast_register.base_va_not_fbo_aligned", "FR-ALIGN-01", "FR-ALIGN-03", "AMB-29") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    struct Case {
        ULONG fbo;
        uint64_t base;
    } cases[] = {{0, kFarBase + 17},
                 {100, kFarBase + 99},
                 {100, kFarBase},
                 {PAGE_SIZE - 1, kFarBase + PAGE_SIZE}};
    for (const auto& c : cases) {
        NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, true);
        ASSERT_TRUE(mr);
        int context;
        NTSTATUS s = r.post(&context, mr, r.pages(), c.fbo, PAGE_SIZE, c.base,
                            NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        if (!r.not_registered(s, &context, {"FR-ALIGN-01"}))
            break;  // an error completion ends the QP's usefulness
    }
}

NDKCT_TEST(FastRegister, ZeroBaseAddressWithNonZeroFboDoesNotRegister,
           "ndk.mr.fast_register.zero_base_va_nonzero_fbo", "FR-ALIGN-02", "FR-ALIGN-03",
           "AMB-29") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    int context;
    NTSTATUS s = r.post(&context, mr, r.pages(), 8, 100, 0, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    r.not_registered(s, &context, {"FR-ALIGN-01"});
}

NDKCT_TEST(FastRegister, ZeroBaseAddressWithZeroFboIsAnOrdinaryStartOrRefusedCleanly,
           "ndk.mr.fast_register.zero_base_va_zero_fbo", "FR-ALIGN-02", "FR-ZBVA-01", "AMB-05") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    int context;
    NTSTATUS s = r.post(&context, mr, r.pages(), 0, PAGE_SIZE, 0, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_NE(s, STATUS_PENDING);
    NDKCT_RULE("FR-ALIGN-02", "FR-ZBVA-01");  // what the rest of the test checks
    if (NT_ERROR(s)) {                        // AMB-05 reject: refused inline, no entry
        r.no_entry_for(&context);
        return;
    }
    UINT32 token = session().remote_token(mr);
    NTSTATUS done = r.wait(&context);
    if (NT_ERROR(done)) return;  // AMB-05 reject, reported by the completion
    // Accepted: 0 is the address of the region's first byte, like any other start.
    EXPECT_STATUS(STATUS_SUCCESS, r.peer_write(16, token, 32));
    EXPECT_TRUE(same(r.memory, 16, r.source, 0, 32));
    EXPECT_TRUE(seed::untouched(r.memory, 0, 16));
}

// ---------------------------------------------------------------- Length

NDKCT_TEST(FastRegister, LengthToTheEndOfTheLastPageIsAccepted,
           "ndk.mr.fast_register.length_at_limit", "FR-LEN-01", "FR-MAP-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 3);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 3, true);
    ASSERT_TRUE(mr);
    NDKCT_RULE("FR-LEN-01", "FR-MAP-01");  // what the rest of the test checks
    const ULONG fbo = 100;
    SIZE_T length = 3 * PAGE_SIZE - fbo;
    uint64_t base = kFarBase + fbo;
    UINT32 token = r.registered(mr, r.pages(), fbo, length, base, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    EXPECT_STATUS(STATUS_SUCCESS, r.peer_write(base + length - 16, token, 16));
    EXPECT_TRUE(same(r.memory, 3 * PAGE_SIZE - 16, r.source, 0, 16))
        << "the region ends with the last page";
}

NDKCT_TEST(FastRegister, LengthOnePastTheLastPageDoesNotRegister,
           "ndk.mr.fast_register.length_over_limit", "FR-LEN-02", "AMB-29") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 3);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 3, true);
    ASSERT_TRUE(mr);
    int context;
    NTSTATUS s = r.post(&context, mr, r.pages(), 100, 3 * PAGE_SIZE - 100 + 1, kFarBase + 100,
                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    r.not_registered(s, &context, {"FR-LEN-02"});
}

NDKCT_TEST(FastRegister, HugeLengthDoesNotRegister, "ndk.mr.fast_register.length_huge", "FR-LEN-02",
           "AMB-29") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    // Lengths whose sum with the FBO wraps around 2^64: still far more than one page holds.
    const SIZE_T max = ~SIZE_T(0);
    struct Case {
        ULONG fbo;
        SIZE_T length;
    } cases[] = {{1, max}, {200, max - 100}, {0, max}};
    for (const auto& c : cases) {
        NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
        ASSERT_TRUE(mr);
        int context;
        NTSTATUS s = r.post(&context, mr, r.pages(), c.fbo, c.length, kFarBase + c.fbo,
                            NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        if (!r.not_registered(s, &context, {"FR-LEN-02"}))
            break;  // an error completion ends the QP's usefulness
    }
}

NDKCT_TEST(FastRegister, AccessOutsideTheRegionFailsAndTouchesNothing,
           "ndk.mr.fast_register.access_outside", "FR-LEN-03") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    UINT32 token = r.registered(mr, r.pages(), 0, 1000, kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    // [996, 1004) straddles the region's end (1000): the whole write must fail.
    EXPECT_TRUE(NT_ERROR(r.peer_write(kFarBase + 996, token, 8)));
    EXPECT_TRUE(seed::untouched(r.memory, 0, PAGE_SIZE));
}

NDKCT_TEST(FastRegister, BareOffsetDoesNotReachTheRegion,
           "ndk.mr.fast_register.no_zero_based_addressing", "FR-ZBVA-01", "FR-LEN-03") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    UINT32 token =
        r.registered(mr, r.pages(), 0, PAGE_SIZE, kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    // Offset 64 from the start, named as the bare offset instead of kFarBase + 64.
    EXPECT_TRUE(NT_ERROR(r.peer_write(64, token, 8)));
    EXPECT_TRUE(seed::untouched(r.memory, 0, PAGE_SIZE));
}

NDKCT_TEST(FastRegister, PagesMapInArrayOrder, "ndk.mr.fast_register.pages_in_array_order",
           "FR-PAGE-02", "FR-MAP-01", "LAM-PAGE-03", "FR-TOK-01", "RMR-TOK-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 3);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 3, true);
    ASSERT_TRUE(mr);
    std::vector<NDK_LOGICAL_ADDRESS> reversed(r.pages().rbegin(), r.pages().rend());
    const ULONG fbo = 40;
    UINT32 token = r.registered(mr, reversed, fbo, 3 * PAGE_SIZE - fbo, kFarBase + fbo,
                                NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    NDKCT_RULE("FR-TOK-01", "RMR-TOK-01");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(kFarBase + fbo, token, 3 * PAGE_SIZE - fbo));
    NDKCT_RULE("FR-PAGE-02", "FR-MAP-01", "LAM-PAGE-03");  // what the rest of the test checks
    // Region page 0 is memory page 2, region page 1 is memory page 1, region page 2 is page 0.
    EXPECT_TRUE(same(r.memory, 2 * PAGE_SIZE + fbo, r.source, 0, PAGE_SIZE - fbo));
    EXPECT_TRUE(same(r.memory, PAGE_SIZE, r.source, PAGE_SIZE - fbo, PAGE_SIZE));
    EXPECT_TRUE(same(r.memory, 0, r.source, 2 * PAGE_SIZE - fbo, PAGE_SIZE));
    EXPECT_TRUE(seed::untouched(r.memory, 2 * PAGE_SIZE, fbo));
}

// ---------------------------------------------------------------- remote and local access

NDKCT_TEST(FastRegister, RemoteWriteLandsWithTheRight, "ndk.mr.fast_register.remote_write",
           "FR-FLG-05", "FR-TOK-01", "FR-MAP-01", "FR-ACC-03", "RMR-TOK-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, true);
    ASSERT_TRUE(mr);
    UINT32 token =
        r.registered(mr, r.pages(), 0, 2 * PAGE_SIZE, kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    NDKCT_RULE("FR-TOK-01", "RMR-TOK-01");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(kFarBase + 1000, token, 5000));
    NDKCT_RULE("FR-FLG-05", "FR-TOK-01", "FR-MAP-01",
               "FR-ACC-03");  // what the rest of the test checks
    EXPECT_TRUE(same(r.memory, 1000, r.source, 0, 5000));
    EXPECT_TRUE(seed::untouched(r.memory, 0, 1000));
    EXPECT_TRUE(seed::untouched(r.memory, 6000, 2 * PAGE_SIZE - 6000));
}

NDKCT_TEST(FastRegister, RemoteWriteFailsWithoutTheRight, "ndk.mr.fast_register.no_remote_write",
           "FR-FLG-05", "FR-FLG-04") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    // Remote read and local write (0x18): no 0x20 bit.
    UINT32 token = r.registered(mr, r.pages(), 0, PAGE_SIZE, kFarBase,
                                NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_LOCAL_WRITE);
    EXPECT_TRUE(NT_ERROR(r.peer_write(kFarBase, token, 256)));
    EXPECT_TRUE(seed::untouched(r.memory, 0, PAGE_SIZE));
}

NDKCT_TEST(FastRegister, RemoteReadReturnsTheBytesWithTheRight, "ndk.mr.fast_register.remote_read",
           "FR-FLG-04", "FR-MAP-01", "FR-TOK-01", "RMR-TOK-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    seed::fill(r.memory, 3);
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, true);
    ASSERT_TRUE(mr);
    const ULONG fbo = 500;
    UINT32 token = r.registered(mr, r.pages(), fbo, 2 * PAGE_SIZE - fbo, kFarBase + fbo,
                                NDK_OP_FLAG_ALLOW_REMOTE_READ);
    NDKCT_RULE("FR-TOK-01", "RMR-TOK-01");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS, r.peer_read(kFarBase + fbo + 10, token, PAGE_SIZE));
    NDKCT_RULE("FR-FLG-04", "FR-MAP-01", "FR-TOK-01");  // what the rest of the test checks
    EXPECT_TRUE(same(r.sink, 0, r.memory, fbo + 10, PAGE_SIZE));
}

NDKCT_TEST(FastRegister, RemoteReadFailsWithoutTheRight, "ndk.mr.fast_register.no_remote_read",
           "FR-FLG-04") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    seed::fill(r.memory, 3);
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    UINT32 token =
        r.registered(mr, r.pages(), 0, PAGE_SIZE, kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    EXPECT_TRUE(NT_ERROR(r.peer_read(kFarBase, token, 256)));
    EXPECT_TRUE(seed::untouched(r.sink, 0, 256)) << "no byte of the region reached the sink";
}

NDKCT_TEST(FastRegister, InvalidateEndsRemoteAccess, "ndk.mr.fast_register.invalidate_ends_access",
           "FR-INV-01", "INV-01", "FR-TOK-01", "RMR-TOK-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    UINT32 token =
        r.registered(mr, r.pages(), 0, PAGE_SIZE, kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    NDKCT_RULE("FR-TOK-01", "RMR-TOK-01");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(kFarBase, token, 128));
    EXPECT_TRUE(same(r.memory, 0, r.source, 0, 128));
    ASSERT_STATUS(STATUS_SUCCESS, r.invalidate(mr));
    NDKCT_RULE("FR-INV-01", "INV-01");  // what the rest of the test checks
    // The old token reaches nothing now.
    EXPECT_TRUE(NT_ERROR(r.peer_write(kFarBase + 2048, token, 128)));
    EXPECT_TRUE(seed::untouched(r.memory, 128, PAGE_SIZE - 128));
}

NDKCT_TEST(FastRegister, InvalidateThenRegisterAgainReachesTheNewRegion,
           "ndk.mr.fast_register.reregister", "FR-INV-01", "FR-TOK-01", "AMB-07", "IFR-APC-01",
           "RMR-TOK-01") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 4);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, true);
    ASSERT_TRUE(mr);
    auto pages = r.pages();
    std::vector<NDK_LOGICAL_ADDRESS> low = {pages[0], pages[1]}, high = {pages[2], pages[3]};
    UINT32 first =
        r.registered(mr, low, 0, 2 * PAGE_SIZE, kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.invalidate(mr));
    uint64_t base = kFarBase + 0x100000 + 12;
    UINT32 second =
        r.registered(mr, high, 12, 2 * PAGE_SIZE - 12, base, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    NDKCT_RULE("FR-TOK-01", "RMR-TOK-01");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(base, second, 64));
    NDKCT_RULE("FR-INV-01", "FR-TOK-01", "IFR-APC-01");  // what the rest of the test checks
    EXPECT_TRUE(same(r.memory, 2 * PAGE_SIZE + 12, r.source, 0, 64))
        << "the new pages, at the new FBO";
    EXPECT_TRUE(seed::untouched(r.memory, 0, 2 * PAGE_SIZE)) << "nothing in the old pages";
    (void)first;
}

NDKCT_TEST(FastRegister, LocalReadNeedsNoFlag, "ndk.mr.fast_register.local_read_implicit",
           "FR-FLG-02", "FR-TOK-02", "RMR-TOK-02") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    seed::fill(r.memory, 11);
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, false);
    ASSERT_TRUE(mr);
    const ULONG fbo = 64;
    r.registered(mr, r.pages(), fbo, 2 * PAGE_SIZE - fbo, kFarBase + fbo, 0);
    UINT32 local = session().local_token(mr);
    auto target = session().buffer(2 * PAGE_SIZE);
    auto dst = session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    // The fast-registered region is the local source of an RDMA write, addressed by its VA.
    NDKCT_RULE("FR-FLG-02", "FR-TOK-02",
               "RMR-TOK-02");  // the access goes through the getters' tokens
    NDK_SGE sge = seed::sge_at(kFarBase + fbo + 100, 5000, local);
    int context;
    ASSERT_STATUS(STATUS_SUCCESS, session().write(r.pair.a, &context, {&sge, 1}, address_of(target),
                                                  dst.remote_token));
    ASSERT_STATUS(STATUS_SUCCESS, r.wait(&context));
    NDKCT_RULE("FR-FLG-02", "FR-TOK-02");  // what the rest of the test checks
    EXPECT_TRUE(same(target, 0, r.memory, fbo + 100, 5000));
}

NDKCT_TEST(FastRegister, LocalWriteRightLetsAReceiveLand,
           "ndk.mr.fast_register.local_write_receive", "FR-FLG-03", "FR-TOK-02", "FR-ACC-02") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, false);
    ASSERT_TRUE(mr);
    r.registered(mr, r.pages(), 0, 2 * PAGE_SIZE, kFarBase, NDK_OP_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE into = seed::sge_at(kFarBase + 300, 3000, session().local_token(mr));
    int receive_context, send_context;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(r.pair.a, &receive_context, {&into, 1}));
    NDK_SGE from = Session::sge(r.source, 0, 3000, r.src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(r.pair.b, &send_context, {&from, 1}));
    auto results = session().drain(r.pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& got : results)
        EXPECT_STATUS(STATUS_SUCCESS, got.Status);
    EXPECT_TRUE(same(r.memory, 300, r.source, 0, 3000));
    EXPECT_TRUE(seed::untouched(r.memory, 0, 300));
}

NDKCT_TEST(FastRegister, WithoutLocalWriteAReceiveDoesNotLand,
           "ndk.mr.fast_register.no_local_write_receive", "FR-FLG-03") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, false);
    ASSERT_TRUE(mr);
    r.registered(mr, r.pages(), 0, PAGE_SIZE, kFarBase, 0);  // local read only
    NDK_SGE into = seed::sge_at(kFarBase, 1000, session().local_token(mr));
    int receive_context, send_context;
    NTSTATUS posted = session().receive(r.pair.a, &receive_context, {&into, 1});
    if (NT_ERROR(posted)) {  // refused at once: nothing can land
        EXPECT_TRUE(seed::untouched(r.memory, 0, PAGE_SIZE));
        return;
    }
    ASSERT_STATUS(STATUS_SUCCESS, posted);
    NDK_SGE from = Session::sge(r.source, 0, 1000, r.src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(r.pair.b, &send_context, {&from, 1}));
    auto results = session().drain(r.pair.cq, 2);
    const auto* got = seed::find_result(results, &receive_context);
    ASSERT_TRUE(got) << "the receive must complete";
    EXPECT_TRUE(NT_ERROR(got->Status)) << "a receive into a region without local write succeeded";
    EXPECT_TRUE(seed::untouched(r.memory, 0, PAGE_SIZE));
}

NDKCT_TEST(FastRegister, ReadSinkFlagMakesTheRegionAReadSink, "ndk.mr.fast_register.read_sink",
           "FR-SINK-03", "FR-SINK-02", "FR-SINK-01", "AMB-01", "FR-TOK-02", "RMR-TOK-02") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, false);
    ASSERT_TRUE(mr);
    r.registered(mr, r.pages(), 0, 2 * PAGE_SIZE, kFarBase,
                 NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK);
    auto remote = session().buffer(2 * PAGE_SIZE);
    seed::fill(remote, 21);
    auto rem = session().register_buffer(r.pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    ASSERT_STATUS(STATUS_SUCCESS, rem.status);
    NDKCT_RULE("FR-SINK-03", "FR-TOK-02",
               "RMR-TOK-02");  // the access goes through the getters' tokens
    NDK_SGE into = seed::sge_at(kFarBase + 8, 6000, session().local_token(mr));
    int context;
    ASSERT_STATUS(STATUS_SUCCESS, session().read(r.pair.a, &context, {&into, 1},
                                                 address_of(remote, 4), rem.remote_token));
    ASSERT_STATUS(STATUS_SUCCESS, r.wait(&context));
    NDKCT_RULE("FR-SINK-03", "FR-SINK-02", "FR-SINK-01");  // what the rest of the test checks
    EXPECT_TRUE(same(r.memory, 8, remote, 4, 6000));
}

// ---------------------------------------------------------------- SILENT_SUCCESS, DEFER,
// READ_FENCE

NDKCT_TEST(FastRegister, SilentSuccessMakesNoEntry, "ndk.mr.fast_register.silent_success",
           "FR-SILENT-01", "AMB-33") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    int context;
    ASSERT_STATUS(STATUS_SUCCESS,
                  r.post(&context, mr, r.pages(), 0, PAGE_SIZE, kFarBase,
                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS));
    NDKCT_RULE("FR-SILENT-01");  // what the rest of the test checks
    UINT32 token = session().remote_token(mr);
    r.no_entry_for(&context);
    // It did register.
    EXPECT_STATUS(STATUS_SUCCESS, r.peer_write(kFarBase, token, 32));
    EXPECT_TRUE(same(r.memory, 0, r.source, 0, 32));
}

NDKCT_TEST(FastRegister, SilentRequestThatFailsStillMakesAnEntry,
           "ndk.mr.fast_register.silent_failure", "FR-SILENT-02", "FR-FBO-02", "AMB-29") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 2);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 2, true);
    ASSERT_TRUE(mr);
    int context;
    // An invalid FBO: refused inline (no entry), or accepted and then it must report its failure
    // although SILENT_SUCCESS is set.
    NTSTATUS s = r.post(&context, mr, r.pages(), PAGE_SIZE, 10, kFarBase + PAGE_SIZE,
                        NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS);
    r.not_registered(s, &context, {"FR-FBO-02"});
}

NDKCT_TEST(FastRegister, DeferredRequestCompletesOnceANonDeferredOneFollows,
           "ndk.mr.fast_register.defer", "FR-DEFER-01", "FR-DEFER-03", "DEFER-02") {
    NDKCT_REQUIRE(NDKCT_VERSION_AT_LEAST(session().version(), 1, 2),
                  "NDK_OP_FLAG_DEFER needs NDKPI 1.2");
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* first = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    NDK_MR* second = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(first && second);
    int c1, c2;
    ASSERT_STATUS(STATUS_SUCCESS, r.post(&c1, first, r.pages(), 0, PAGE_SIZE, kFarBase,
                                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_DEFER));
    ASSERT_STATUS(STATUS_SUCCESS, r.post(&c2, second, r.pages(), 0, PAGE_SIZE, kFarBase,
                                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    auto results = seed::settle(session(), r.pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    EXPECT_TRUE(seed::find_result(results, &c1) && seed::find_result(results, &c2));
    for (const auto& got : results)
        EXPECT_STATUS(STATUS_SUCCESS, got.Status);
}

NDKCT_TEST(FastRegister, InlineFailureHandsEarlierDeferredRequestsOver,
           "ndk.mr.fast_register.defer_then_inline_failure", "FR-DEFER-02", "DEFER-04", "DEFER-06",
           "FR-ACC-01") {
    NDKCT_REQUIRE(NDKCT_VERSION_AT_LEAST(session().version(), 1, 2),
                  "NDK_OP_FLAG_DEFER needs NDKPI 1.2");
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* good = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    NDK_MR* local_only = seed::fast_register_mr(session(), r.pair.pd, 1, false);
    ASSERT_TRUE(good && local_only);
    int c1, c2;
    ASSERT_STATUS(STATUS_SUCCESS, r.post(&c1, good, r.pages(), 0, PAGE_SIZE, kFarBase,
                                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_DEFER));
    {
        NDKCT_RULE("FR-ACC-01");
        ASSERT_STATUS(STATUS_ACCESS_VIOLATION,
                      r.post(&c2, local_only, r.pages(), 0, PAGE_SIZE, kFarBase,
                             NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_DEFER));
    }
    // The consumer stops here: no request without DEFER follows, yet the first must complete.
    NDKCT_RULE("FR-DEFER-02", "DEFER-04", "DEFER-06");  // the refusal is NdkFastRegister's
    auto results = session().drain(r.pair.cq, 1);
    ASSERT_EQ(results.size(), 1u)
        << "the deferred request was not handed over after the inline failure";
    EXPECT_EQ(results[0].RequestContext, &c1);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    r.no_entry_for(&c2);
}

// A longer chain: two deferred fast registrations and a deferred write, then a fast
// registration refused inline; nothing follows. Every accepted request must complete.
NDKCT_TEST(FastRegister, InlineFailureHandsTheWholeDeferredChainOver,
           "ndk.mr.fast_register.defer_chain_then_inline_failure", "DEFER-04", "FR-DEFER-02",
           "DEFER-03", "FR-ACC-01") {
    NDKCT_REQUIRE(NDKCT_VERSION_AT_LEAST(session().version(), 1, 2),
                  "NDK_OP_FLAG_DEFER needs NDKPI 1.2");
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* first = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    NDK_MR* second = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    NDK_MR* local_only = seed::fast_register_mr(session(), r.pair.pd, 1, false);
    ASSERT_TRUE(first && second && local_only);
    auto target = session().buffer(PAGE_SIZE);
    auto dst = session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    int c1, c2, c3, refused;
    ASSERT_STATUS(STATUS_SUCCESS, r.post(&c1, first, r.pages(), 0, PAGE_SIZE, kFarBase,
                                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_DEFER));
    NDK_SGE from = Session::sge(r.source, 0, 64, r.src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(r.pair.a, &c2, {&from, 1}, address_of(target),
                                                  dst.remote_token, NDK_OP_FLAG_DEFER));
    ASSERT_STATUS(STATUS_SUCCESS, r.post(&c3, second, r.pages(), 0, PAGE_SIZE, kFarBase,
                                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_DEFER));
    {
        NDKCT_RULE("FR-ACC-01");
        ASSERT_STATUS(STATUS_ACCESS_VIOLATION, r.post(&refused, local_only, r.pages(), 0, PAGE_SIZE,
                                                      kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    }
    NDKCT_RULE("FR-DEFER-02", "DEFER-04", "DEFER-03");  // the refusal is NdkFastRegister's
    auto results = session().drain(r.pair.cq, 3);
    ASSERT_EQ(results.size(), 3u)
        << "deferred requests were not handed over after the inline failure";
    for (const int* context : {&c1, &c2, &c3}) {
        const auto* got = seed::find_result(results, context);
        ASSERT_TRUE(got) << "a deferred request made no entry";
        EXPECT_STATUS(STATUS_SUCCESS, got->Status);
    }
    r.no_entry_for(&refused);
    EXPECT_EQ(std::memcmp(target.data(), r.source.data(), 64), 0);
}

NDKCT_TEST(FastRegister, ReadFenceWaitsForEarlierReads, "ndk.mr.fast_register.read_fence",
           "FR-FENCE-01", "AMB-35") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 1);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto remote = session().buffer(4 * PAGE_SIZE);
    seed::fill(remote, 5);
    auto rem = session().register_buffer(r.pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    ASSERT_STATUS(STATUS_SUCCESS, rem.status);
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 1, true);
    ASSERT_TRUE(mr);
    int read_context, fr_context;
    NDK_SGE into = Session::sge(r.sink, 0, 4 * PAGE_SIZE, r.snk.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().read(r.pair.a, &read_context, {&into, 1},
                                                 address_of(remote), rem.remote_token));
    ASSERT_STATUS(STATUS_SUCCESS, r.post(&fr_context, mr, r.pages(), 0, PAGE_SIZE, kFarBase,
                                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_READ_FENCE));
    auto results = session().drain(r.pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    NDKCT_RULE("FR-FENCE-01");  // what the rest of the test checks
    EXPECT_EQ(results[0].RequestContext, &read_context)
        << "the fenced registration completed before the read";
    EXPECT_EQ(results[1].RequestContext, &fr_context);
    EXPECT_TRUE(same(r.sink, 0, remote, 0, 4 * PAGE_SIZE));
}

// ---------------------------------------------------------------- many calls

NDKCT_TEST(FastRegister, ManyRegistrationCyclesNeverPendAndEachWorks,
           "ndk.mr.fast_register.many_cycles", "FR-ST-03", "FR-ST-01", "FR-INV-01", "FR-TOK-01",
           "IFR-ST-01", "IFR-ST-02") {
    seed::Mappings maps(session());
    Rig r = make_rig(session(), maps, 4);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDKCT_RULE("FR-ST-03", "FR-ST-01", "FR-INV-01", "FR-TOK-01", "IFR-ST-01",
               "IFR-ST-02");  // what the rest of the test checks
    // Several MRs (each initialization may pend or not), each registered and invalidated in turn.
    std::vector<NDK_MR*> mrs;
    for (int i = 0; i < 6; ++i) {
        mrs.push_back(seed::fast_register_mr(session(), r.pair.pd, 4, true));
        ASSERT_TRUE(mrs.back());
    }
    for (int cycle = 0; cycle < 24; ++cycle) {
        NDK_MR* mr = mrs[cycle % mrs.size()];
        ULONG fbo = (cycle * 97) % PAGE_SIZE;
        uint64_t base = kFarBase + uint64_t(cycle) * 0x10000 + fbo;
        int context;
        NTSTATUS s = r.post(&context, mr, r.pages(), fbo, 8, base, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        ASSERT_STATUS(STATUS_SUCCESS, s) << "cycle " << cycle;
        UINT32 token = session().remote_token(mr);
        ASSERT_STATUS(STATUS_SUCCESS, r.wait(&context));
        ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(base, token, 8)) << "cycle " << cycle;
        EXPECT_TRUE(same(r.memory, fbo, r.source, 0, 8)) << "cycle " << cycle;
        ASSERT_STATUS(STATUS_SUCCESS, r.invalidate(mr));
    }
}

}  // namespace
}  // namespace ndkct::conformance
