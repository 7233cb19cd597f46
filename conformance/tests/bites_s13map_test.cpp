// Directed tests written for issue 13's faulty providers of NdkFastRegister's page (group s13map)
// where no other test reached the rule. They are ordinary conformance tests: the reference
// provider passes them under every seed.
//
// FR-MAP-01: byte k of a fast-registered region is byte (FBO + k) mod PAGE_SIZE of page
// AdapterPageArray[(FBO + k) / PAGE_SIZE], and the entries need not be consecutive logical
// pages. The array here is three pages of one mapping whose ends are two logical pages apart
// (a run of three, when the mapping has one) and whose middle entry is another page of it: a
// provider that judges the array by its ends takes the run's middle page instead.
#include <algorithm>
#include <cstring>
#include <optional>

#include "ndkct/conformance/suite.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::kFarBase;

NDKCT_SUITE(FastRegisterPages);

constexpr size_t kMappedPages = 8;  // physically contiguous: holds a run of 4 logical pages
                                    // wherever logical addresses keep the low bits of the PFN

struct PageRig {
    Session* s = nullptr;
    LoopbackPair pair;
    platform::LockedBuffer memory;  // behind the fast-registered region
    platform::LockedBuffer source;  // patterned, registered for local read
    platform::LockedBuffer sink;    // a registered read sink
    Registered src, snk;
    seed::Mapping* map = nullptr;
    std::string problem;
    // Indexes into map->pages: the array's entries (first, middle, last) and the page the run
    // from the first entry holds in the middle (the page a broken provider uses instead).
    size_t first = 0, middle = 1, last = 2;
    std::optional<size_t> run_middle;

    std::vector<NDK_LOGICAL_ADDRESS> array() const {
        return {map->pages[first], map->pages[middle], map->pages[last]};
    }
    NTSTATUS wait(const void* context) {
        NDKCT_RULE("WR-10", "CQ-RES-05");  // an accepted request completes once, with its context
        return seed::completion_status(*s, pair.cq, context);
    }
    // Fast-registers the array on pair.a (it must succeed); the remote token after the call
    // returned (FR-TOK-01), 0 when it failed.
    UINT32 registered(NDK_MR* mr, ULONG fbo, SIZE_T length, ULONG flags) {
        static int context;
        NDKCT_RULE("FR-ST-01");  // a valid fast registration succeeds and completes successfully
        NTSTATUS posted =
            s->fast_register(pair.a, &context, mr, array(), fbo, length, kFarBase + fbo, flags);
        EXPECT_STATUS(STATUS_SUCCESS, posted);
        if (posted != STATUS_SUCCESS) return 0;
        UINT32 token = s->remote_token(mr);
        EXPECT_STATUS(STATUS_SUCCESS, wait(&context));
        return token;
    }
    NTSTATUS peer_write(uint64_t address, UINT32 token, ULONG length) {
        static int context;
        NDK_SGE sge = Session::sge(source, 0, length, src.local_token);
        NTSTATUS posted = s->write(pair.b, &context, {&sge, 1}, address, token);
        return posted != STATUS_SUCCESS ? posted : wait(&context);
    }
    NTSTATUS peer_read(uint64_t address, UINT32 token, ULONG length) {
        static int context;
        NDK_SGE sge = Session::sge(sink, 0, length, snk.local_token);
        NTSTATUS posted = s->read(pair.b, &context, {&sge, 1}, address, token);
        return posted != STATUS_SUCCESS ? posted : wait(&context);
    }
};

// A connected pair, kMappedPages physically contiguous pages mapped by NdkBuildLam, and the
// array's three entries chosen: ends two logical pages apart with their run's middle page
// mapped too, and a middle entry off that run, where the mapping has such pages; else the
// mapping's pages 0, 2, 4 (still not consecutive for a provider whose addresses are).
PageRig make_page_rig(Session& s, seed::Mappings& maps) {
    PageRig r;
    r.s = &s;
    r.pair = s.loopback_pair();
    if (!r.pair.connected) {
        r.problem = r.pair.problem;
        return r;
    }
    r.memory = s.buffer(kMappedPages * PAGE_SIZE, platform::Placement::contiguous);
    r.source = s.buffer(4 * PAGE_SIZE);
    r.sink = s.buffer(4 * PAGE_SIZE);
    seed::fill(r.source, 13);
    r.src = s.register_buffer(r.pair.pd, r.source, 0);
    r.snk = s.register_buffer(r.pair.pd, r.sink,
                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    r.map = &maps.add(r.memory);
    if (!r.map->ok() || r.map->pages.size() != kMappedPages) {
        r.problem = "NdkBuildLam did not map the region's pages";
        return r;
    }
    if (r.src.status != STATUS_SUCCESS || r.snk.status != STATUS_SUCCESS) {
        r.problem = "NdkRegisterMr failed for a scratch region";
        return r;
    }
    const auto& pages = r.map->pages;
    auto index_of = [&](LONG64 logical) -> std::optional<size_t> {
        for (size_t i = 0; i < pages.size(); ++i)
            if (pages[i].QuadPart == logical) return i;
        return std::nullopt;
    };
    r.first = 0, r.middle = 2, r.last = 4;
    for (size_t a = 0; a < pages.size(); ++a) {
        auto b = index_of(pages[a].QuadPart + LONG64(PAGE_SIZE));
        auto c = index_of(pages[a].QuadPart + 2 * LONG64(PAGE_SIZE));
        if (!b || !c) continue;
        for (size_t k = 0; k < pages.size(); ++k)
            if (k != a && k != *b && k != *c) {
                r.first = a, r.middle = k, r.last = *c, r.run_middle = *b;
                break;
            }
        break;
    }
    return r;
}

bool same(const platform::LockedBuffer& a, size_t at, const platform::LockedBuffer& b, size_t bt,
          size_t n) {
    return std::memcmp(a.data() + at, b.data() + bt, n) == 0;
}

// A peer's RDMA write through the remote token: region page 1 is the array's middle entry.
NDKCT_TEST(FastRegisterPages, WriteLandsOnTheArrayPagesNotOnARunFromTheFirst,
           "ndk.mr.fast_register.pages_not_a_run_write", "FR-MAP-01", "FR-PAGE-02", "FR-TOK-01",
           "RMR-TOK-01") {
    seed::Mappings maps(session());
    PageRig r = make_page_rig(session(), maps);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 3, true);
    ASSERT_TRUE(mr);
    const ULONG fbo = 200;
    const ULONG length = 3 * PAGE_SIZE - fbo;
    UINT32 token = r.registered(mr, fbo, length, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
    NDKCT_RULE("FR-TOK-01", "RMR-TOK-01");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(kFarBase + fbo, token, length));
    NDKCT_RULE("FR-MAP-01", "FR-PAGE-02");  // what the rest of the test checks
    const size_t tail = PAGE_SIZE - fbo;    // the region's bytes on its first page
    EXPECT_TRUE(same(r.memory, r.first * PAGE_SIZE + fbo, r.source, 0, tail))
        << "region page 0 is AdapterPageArray[0] from the FBO on";
    EXPECT_TRUE(same(r.memory, r.middle * PAGE_SIZE, r.source, tail, PAGE_SIZE))
        << "region page 1 is AdapterPageArray[1], mapping page " << r.middle;
    EXPECT_TRUE(same(r.memory, r.last * PAGE_SIZE, r.source, tail + PAGE_SIZE, PAGE_SIZE))
        << "region page 2 is AdapterPageArray[2], mapping page " << r.last;
    EXPECT_TRUE(seed::untouched(r.memory, r.first * PAGE_SIZE, fbo));
    if (r.run_middle) {
        EXPECT_TRUE(seed::untouched(r.memory, *r.run_middle * PAGE_SIZE, PAGE_SIZE))
            << "mapping page " << *r.run_middle
            << " (the page after AdapterPageArray[0]) is not in the array";
    }
}

// A peer's RDMA read through the remote token returns the array's pages, not the run's.
NDKCT_TEST(FastRegisterPages, ReadReturnsTheArrayPagesNotARunFromTheFirst,
           "ndk.mr.fast_register.pages_not_a_run_read", "FR-MAP-01", "FR-PAGE-02", "FR-TOK-01",
           "RMR-TOK-01") {
    seed::Mappings maps(session());
    PageRig r = make_page_rig(session(), maps);
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    // Every page its own bytes (seed::fill repeats with the page).
    for (size_t i = 0; i < r.memory.size(); ++i)
        r.memory.data()[i] = seed::pattern(i, uint8_t(29 + 101 * (i / PAGE_SIZE)));
    NDK_MR* mr = seed::fast_register_mr(session(), r.pair.pd, 3, true);
    ASSERT_TRUE(mr);
    const ULONG fbo = 300;
    const ULONG length = 3 * PAGE_SIZE - fbo;
    UINT32 token = r.registered(mr, fbo, length, NDK_OP_FLAG_ALLOW_REMOTE_READ);
    NDKCT_RULE("FR-TOK-01", "RMR-TOK-01");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS, r.peer_read(kFarBase + fbo, token, length));
    NDKCT_RULE("FR-MAP-01", "FR-PAGE-02");  // what the rest of the test checks
    const size_t tail = PAGE_SIZE - fbo;
    EXPECT_TRUE(same(r.sink, 0, r.memory, r.first * PAGE_SIZE + fbo, tail))
        << "region page 0 is AdapterPageArray[0] from the FBO on";
    EXPECT_TRUE(same(r.sink, tail, r.memory, r.middle * PAGE_SIZE, PAGE_SIZE))
        << "region page 1 is AdapterPageArray[1], mapping page " << r.middle;
    EXPECT_TRUE(same(r.sink, tail + PAGE_SIZE, r.memory, r.last * PAGE_SIZE, PAGE_SIZE))
        << "region page 2 is AdapterPageArray[2], mapping page " << r.last;
}

}  // namespace
}  // namespace ndkct::conformance
