// Directed tests written for issue 13's last seed-page rule no fault broke (group s14apc). They
// are ordinary conformance tests: the reference provider passes them under every seed.
//
// FR-APC-01: AdapterPageCount is the number of AdapterPageArray entries the provider reads, each
// PAGE_SIZE bytes of logical address space, and the region's backing is those pages. A region
// over three pages is reached twice with one request shape (the same QP, tokens, flags and
// length): first in its first page, then in its last page, short of the region's end. Both must
// succeed with the bytes where the array puts them; a provider that read fewer entries fails
// the second (the oracle names FR-APC-01 first: the same request succeeded nearer the start).
#include <cstring>
#include <optional>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::kFarBase;

NDKCT_SUITE(FastRegisterPageCount);

constexpr ULONG kPages = 3;
constexpr ULONG kFbo = 100;
constexpr ULONG kLength = kPages * PAGE_SIZE - kFbo - 100;  // 100 bytes short of the pages' end
constexpr ULONG kBytes = 512;                               // each access
// The region offset of the access in the last page (entry kPages - 1), clear of the region's
// last byte.
constexpr ULONG kInLastPage = (kPages - 1) * PAGE_SIZE - kFbo + 256;
static_assert(kInLastPage + kBytes < kLength);

struct CountRig {
    Session* s = nullptr;
    LoopbackPair pair;
    platform::LockedBuffer memory;  // the region's pages, mapped by NdkBuildLam
    platform::LockedBuffer source;  // patterned, registered for local read
    platform::LockedBuffer sink;    // a registered read sink, or a write's remote target
    Registered src, snk;
    seed::Mapping* map = nullptr;
    NDK_MR* mr = nullptr;
    std::string problem;

    NTSTATUS wait(const void* context) {
        NDKCT_RULE("WR-10", "CQ-RES-05");  // an accepted request completes once, with its context
        return seed::completion_status(*s, pair.cq, context);
    }
    // Fast-registers the mapping's kPages pages on pair.a with `flags`, which must succeed: the
    // remote token after the call returned (FR-TOK-01), nothing when it failed.
    std::optional<UINT32> registered(ULONG flags) {
        static int context;
        NDKCT_RULE("FR-ST-01", "FR-APC-03");  // a valid fast registration of every page succeeds
        NTSTATUS posted = s->fast_register(pair.a, &context, mr, map->pages, kFbo, kLength,
                                           kFarBase + kFbo, flags);
        EXPECT_STATUS(STATUS_SUCCESS, posted);
        if (posted != STATUS_SUCCESS) return std::nullopt;
        UINT32 token = s->remote_token(mr);
        NTSTATUS completed = wait(&context);
        EXPECT_STATUS(STATUS_SUCCESS, completed);
        if (completed != STATUS_SUCCESS) return std::nullopt;
        return token;
    }
    // The peer's RDMA write (or read) of kBytes at region offset `at`, through the remote token.
    NTSTATUS peer(bool write, ULONG at, UINT32 token) {
        static int context;
        NDK_SGE sge = write ? Session::sge(source, 0, kBytes, src.local_token)
                            : Session::sge(sink, 0, kBytes, snk.local_token);
        NTSTATUS posted = write ? s->write(pair.b, &context, {&sge, 1}, kFarBase + kFbo + at, token)
                                : s->read(pair.b, &context, {&sge, 1}, kFarBase + kFbo + at, token);
        return posted != STATUS_SUCCESS ? posted : wait(&context);
    }
};

// A connected pair, kPages pages mapped by NdkBuildLam (every page its own bytes), a patterned
// source, a sink that is a read sink and remotely writable, and a fast-register MR initialized
// for kPages pages with remote access.
CountRig make_count_rig(Session& s, seed::Mappings& maps) {
    CountRig r;
    r.s = &s;
    r.pair = s.loopback_pair();
    if (!r.pair.connected) {
        r.problem = r.pair.problem;
        return r;
    }
    r.memory = s.buffer(kPages * PAGE_SIZE);
    for (size_t i = 0; i < r.memory.size(); ++i)
        r.memory.data()[i] = seed::pattern(i, uint8_t(17 + 89 * (i / PAGE_SIZE)));
    r.source = s.buffer(PAGE_SIZE);
    r.sink = s.buffer(PAGE_SIZE);
    seed::fill(r.source, 53);
    r.src = s.register_buffer(r.pair.pd, r.source, 0);
    r.snk = s.register_buffer(r.pair.pd, r.sink,
                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK |
                                  NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    r.map = &maps.add(r.memory);
    if (!r.map->ok() || r.map->pages.size() != kPages) {
        r.problem = "NdkBuildLam did not map the region's pages";
        return r;
    }
    if (r.src.status != STATUS_SUCCESS || r.snk.status != STATUS_SUCCESS) {
        r.problem = "NdkRegisterMr failed for a scratch region";
        return r;
    }
    r.mr = seed::fast_register_mr(s, r.pair.pd, kPages, true);
    if (!r.mr) r.problem = "NdkCreateMr or NdkInitializeFastRegisterMr failed";
    return r;
}

bool same(const platform::LockedBuffer& a, size_t at, const platform::LockedBuffer& b, size_t bt,
          size_t n) {
    return std::memcmp(a.data() + at, b.data() + bt, n) == 0;
}

// The peer writes kBytes into the region's first page, then the same into its last page: both
// land where the array puts them (region byte k on AdapterPageArray[(FBO + k) / PAGE_SIZE], here
// the mapped buffer's byte FBO + k).
NDKCT_TEST(FastRegisterPageCount, PeerWriteReachesTheLastEntrysPage,
           "ndk.mr.fast_register.page_count_last_page_write", "FR-APC-01", "FR-MAP-01",
           "FR-TOK-01") {
    seed::Mappings maps(session());
    CountRig r = make_count_rig(session(), maps);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto token = r.registered(NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_TRUE(token);
    NDKCT_RULE("FR-TOK-01");  // the getter's token after the registration reaches the region
    ASSERT_STATUS(STATUS_SUCCESS, r.peer(true, 0, *token)) << "the write into the first page";
    EXPECT_TRUE(same(r.memory, kFbo, r.source, 0, kBytes));
    NDKCT_RULE("FR-APC-01");  // the last of AdapterPageCount entries backs the region too
    ASSERT_STATUS(STATUS_SUCCESS, r.peer(true, kInLastPage, *token))
        << "the same write into the region's last page (AdapterPageArray[" << kPages - 1 << "])";
    EXPECT_TRUE(same(r.memory, kFbo + kInLastPage, r.source, 0, kBytes))
        << "the write into the last page did not land on AdapterPageArray[" << kPages - 1 << "]";
}

// The peer reads kBytes from the region's first page, then from its last page: both return the
// array's pages' bytes.
NDKCT_TEST(FastRegisterPageCount, PeerReadReachesTheLastEntrysPage,
           "ndk.mr.fast_register.page_count_last_page_read", "FR-APC-01", "FR-MAP-01",
           "FR-TOK-01") {
    seed::Mappings maps(session());
    CountRig r = make_count_rig(session(), maps);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto token = r.registered(NDK_OP_FLAG_ALLOW_REMOTE_READ);
    ASSERT_TRUE(token);
    NDKCT_RULE("FR-TOK-01");  // the getter's token after the registration reaches the region
    ASSERT_STATUS(STATUS_SUCCESS, r.peer(false, 0, *token)) << "the read from the first page";
    EXPECT_TRUE(same(r.sink, 0, r.memory, kFbo, kBytes));
    NDKCT_RULE("FR-APC-01");
    ASSERT_STATUS(STATUS_SUCCESS, r.peer(false, kInLastPage, *token))
        << "the same read from the region's last page (AdapterPageArray[" << kPages - 1 << "])";
    EXPECT_TRUE(same(r.sink, 0, r.memory, kFbo + kInLastPage, kBytes))
        << "the read from the last page did not return AdapterPageArray[" << kPages - 1
        << "]'s bytes";
}

// The region as the local source of a's RDMA write into the sink, through its local token:
// kBytes from its first page, then from its last page (FR-TOK-02: its local token reaches every
// page of it; local read needs no flag, FR-FLG-02).
NDKCT_TEST(FastRegisterPageCount, LocalSourceReachesTheLastEntrysPage,
           "ndk.mr.fast_register.page_count_last_page_source", "FR-APC-01", "FR-TOK-02",
           "FR-FLG-02", "RMR-TOK-02") {
    seed::Mappings maps(session());
    CountRig r = make_count_rig(session(), maps);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    ASSERT_TRUE(r.registered(0));
    const UINT32 local = session().local_token(r.mr);
    auto write_from = [&](ULONG at) {
        static int context;
        NDK_SGE sge = seed::sge_at(kFarBase + kFbo + at, kBytes, local);
        NTSTATUS posted = session().write(r.pair.a, &context, {&sge, 1}, seed::address_of(r.sink),
                                          r.snk.remote_token);
        return posted != STATUS_SUCCESS ? posted : r.wait(&context);
    };
    NDKCT_RULE("FR-TOK-02", "RMR-TOK-02");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS, write_from(0)) << "the write from the first page";
    EXPECT_TRUE(same(r.sink, 0, r.memory, kFbo, kBytes));
    NDKCT_RULE("FR-APC-01");
    ASSERT_STATUS(STATUS_SUCCESS, write_from(kInLastPage))
        << "the same write from the region's last page (AdapterPageArray[" << kPages - 1 << "])";
    EXPECT_TRUE(same(r.sink, 0, r.memory, kFbo + kInLastPage, kBytes))
        << "the write from the last page did not carry AdapterPageArray[" << kPages - 1
        << "]'s bytes";
}

}  // namespace
}  // namespace ndkct::conformance
