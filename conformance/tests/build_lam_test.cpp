// NdkBuildLam (LAM-*): the buffer-size protocol (0, required - 1, required, larger, NULL, retry),
// *pLAMSize and *pFBO, MDL chains (single, split, broken, short), and that each logical page
// maps the right host page: bytes sent from the mapping's logical addresses with the PD's
// privileged token (LAM-USE-02) must be the buffer's bytes, page by page, in order.
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(BuildLam);

constexpr ULONG kHeader =
    static_cast<ULONG>(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray));

size_t pages_of(size_t offset, size_t length) {
    return (offset % PAGE_SIZE + length + PAGE_SIZE - 1) / PAGE_SIZE;
}

ULONG required(size_t offset, size_t length) {
    return static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages_of(offset, length)));
}

// Releases the LAMs built in a test when it ends.
class Built {
  public:
    explicit Built(Session& s) : s_(s) {}
    ~Built() {
        for (auto* lam : lams_)
            if (lam->done.ok()) s_.release_lam(*lam);
    }
    LamResult& keep(LamResult lam) {
        owned_.push_back(std::make_unique<LamResult>(std::move(lam)));
        lams_.push_back(owned_.back().get());
        return *owned_.back();
    }

  private:
    Session& s_;
    std::vector<std::unique_ptr<LamResult>> owned_;
    std::vector<LamResult*> lams_;
};

// Checks a successful mapping's out-parameters (LAM-OUT-01..03, LAM-PAGE-01/02).
void expect_well_formed(LamResult& lam, size_t offset, size_t length) {
    ASSERT_TRUE(lam.done.ok()) << spec::status_name(lam.done.final_status);
    size_t n = pages_of(offset, length);
    EXPECT_EQ(lam.fbo, offset % PAGE_SIZE) << "*pFBO";
    ASSERT_TRUE(lam.mapping());
    EXPECT_GE(lam.mapping()->AdapterPageCount, n) << "AdapterPageCount";
    EXPECT_GE(lam.size_out, kHeader + 8 * lam.mapping()->AdapterPageCount)
        << "*pLAMSize after success";
    EXPECT_LE(lam.size_out, lam.size_in) << "*pLAMSize after success exceeds the buffer";
    for (const auto& page : lam.pages())
        EXPECT_EQ(static_cast<uint64_t>(page.QuadPart) % PAGE_SIZE, 0u)
            << "a logical page is not page-aligned";
}

// A connected pair for sending from logical addresses.
struct Rig {
    Session* s = nullptr;
    LoopbackPair pair;
    platform::LockedBuffer sink;
    Registered snk;
    UINT32 privileged = 0;
    std::string problem;

    // Sends [offset, offset + length) of the mapped range, one SGE per logical page, and checks
    // each chunk arrives as the buffer's bytes (LAM-PAGE-02, LAM-USE-02, LAM-PAGE-03).
    void expect_maps(const std::vector<NDK_LOGICAL_ADDRESS>& pages, ULONG fbo,
                     const platform::LockedBuffer& b, size_t offset, size_t length) {
        size_t done = 0, page = 0;
        size_t in_page = fbo;
        while (done < length) {
            ASSERT_LT(page, pages.size()) << "the mapping is shorter than the range";
            ULONG n = static_cast<ULONG>(std::min(PAGE_SIZE - in_page, length - done));
            static int receive_context, send_context;
            std::memset(sink.data(), 0, sink.size());
            NDK_SGE into = Session::sge(sink, 0, n, snk.local_token);
            ASSERT_STATUS(STATUS_SUCCESS, s->receive(pair.b, &receive_context, {&into, 1}));
            NDK_SGE from =
                seed::sge_at(static_cast<uint64_t>(pages[page].QuadPart) + in_page, n, privileged);
            ASSERT_STATUS(STATUS_SUCCESS, s->send(pair.a, &send_context, {&from, 1}));
            auto results = s->drain(pair.cq, 2);
            ASSERT_EQ(results.size(), 2u);
            for (const auto& r : results)
                ASSERT_STATUS(STATUS_SUCCESS, r.Status) << "logical page " << page;
            EXPECT_EQ(std::memcmp(sink.data(), b.data() + offset + done, n), 0)
                << "logical page " << page << " does not map host page " << page << " of the range";
            done += n;
            ++page;
            in_page = 0;
        }
    }
};

Rig make_rig(Session& s) {
    Rig r;
    r.s = &s;
    r.pair = s.loopback_pair();
    if (!r.pair.connected) {
        r.problem = r.pair.problem;
        return r;
    }
    r.sink = s.buffer(PAGE_SIZE);
    r.snk = s.register_buffer(r.pair.pd, r.sink, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    if (r.snk.status != STATUS_SUCCESS) r.problem = "NdkRegisterMr failed for the sink";
    r.privileged = s.privileged_token(r.pair.pd);
    return r;
}

// ---------------------------------------------------------------- the buffer-size protocol

NDKCT_TEST(BuildLam, MapsABufferAndReportsItsSizeAndFbo, "ndk.adapter.build_lam.maps_buffer",
           "LAM-OUT-01", "LAM-OUT-02", "LAM-OUT-03", "LAM-PAGE-01", "LAM-PAGE-02", "LAM-USE-02",
           "LAM-ST-01", "LAM-ST-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    Built built(session());
    auto buffer = session().buffer(3 * PAGE_SIZE);
    seed::fill(buffer, 41);
    auto chain = platform::describe(buffer, 0, buffer.size());
    auto& lam =
        built.keep(session().build_lam(chain.head(), buffer.size(), required(0, buffer.size())));
    expect_well_formed(lam, 0, buffer.size());
    r.expect_maps(lam.pages(), 0, buffer, 0, buffer.size());
}

NDKCT_TEST(BuildLam, ZeroSizeBufferIsTooSmallAndGetsTheRequiredSize,
           "ndk.adapter.build_lam.size_zero", "LAM-SIZE-01", "LAM-SIZE-02", "LAM-SIZE-04",
           "LAM-ST-04") {
    auto buffer = session().buffer(3 * PAGE_SIZE);
    auto chain = platform::describe(buffer, 100, 2 * PAGE_SIZE);
    LamResult lam = session().build_lam(chain.head(), 2 * PAGE_SIZE, 0);
    EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, lam.done.final_status);
    EXPECT_GE(lam.size_out, required(100, 2 * PAGE_SIZE)) << "16 + 8 * 3 bytes at least";
}

NDKCT_TEST(BuildLam, OneByteShortIsTooSmall, "ndk.adapter.build_lam.size_one_short", "LAM-SIZE-01",
           "LAM-SIZE-02", "LAM-SIZE-04") {
    auto buffer = session().buffer(4 * PAGE_SIZE);
    auto chain = platform::describe(buffer, 5, 3 * PAGE_SIZE);
    ULONG need = required(5, 3 * PAGE_SIZE);
    LamResult lam = session().build_lam(chain.head(), 3 * PAGE_SIZE, need - 1);
    EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, lam.done.final_status);
    EXPECT_GE(lam.size_out, need);
}

NDKCT_TEST(BuildLam, ExactSizeSucceeds, "ndk.adapter.build_lam.size_exact", "LAM-SIZE-02",
           "LAM-OUT-02", "LAM-ST-01") {
    Built built(session());
    auto buffer = session().buffer(4 * PAGE_SIZE);
    auto chain = platform::describe(buffer, 5, 3 * PAGE_SIZE);
    auto& lam =
        built.keep(session().build_lam(chain.head(), 3 * PAGE_SIZE, required(5, 3 * PAGE_SIZE)));
    expect_well_formed(lam, 5, 3 * PAGE_SIZE);
}

NDKCT_TEST(BuildLam, LargerBufferSucceedsAndReportsTheBytesWritten,
           "ndk.adapter.build_lam.size_larger", "LAM-OUT-02", "LAM-OUT-01") {
    Built built(session());
    auto buffer = session().buffer(2 * PAGE_SIZE);
    auto chain = platform::describe(buffer, 0, 2 * PAGE_SIZE);
    auto& lam = built.keep(
        session().build_lam(chain.head(), 2 * PAGE_SIZE, required(0, 2 * PAGE_SIZE) + 200));
    expect_well_formed(lam, 0, 2 * PAGE_SIZE);
}

NDKCT_TEST(BuildLam, NullBufferIsNoSuccess, "ndk.adapter.build_lam.null_buffer", "LAM-SIZE-03",
           "AMB-14", "LAM-OUT-01") {
    auto buffer = session().buffer(2 * PAGE_SIZE);
    auto chain = platform::describe(buffer, 0, 2 * PAGE_SIZE);
    for (ULONG size : {0u, required(0, 2 * PAGE_SIZE)}) {
        LamResult lam =
            session().build_lam(chain.head(), 2 * PAGE_SIZE, size, /*with_buffer=*/false);
        // Nowhere to put the mapping: it cannot succeed (a size probe or a refusal, AMB-14).
        EXPECT_TRUE(NT_ERROR(lam.done.final_status)) << spec::status_name(lam.done.final_status);
        if (lam.done.final_status == STATUS_BUFFER_TOO_SMALL) {
            EXPECT_GE(lam.size_out, required(0, 2 * PAGE_SIZE))
                << "a probe reports the required size";
        }
    }
}

NDKCT_TEST(BuildLam, RetryWithTheReportedSizeSucceeds,
           "ndk.adapter.build_lam.retry_with_reported_size", "LAM-SIZE-05", "LAM-SIZE-04",
           "LAM-OUT-03") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    Built built(session());
    auto buffer = session().buffer(5 * PAGE_SIZE);
    seed::fill(buffer, 43);
    const size_t offset = 777, length = 3 * PAGE_SIZE + 1000;
    auto chain = platform::describe(buffer, offset, length);
    // From a zero-size buffer, and from a NULL probe where the provider answers one.
    LamResult small = session().build_lam(chain.head(), length, 0);
    ASSERT_STATUS(STATUS_BUFFER_TOO_SMALL, small.done.final_status);
    auto& retry = built.keep(session().build_lam(chain.head(), length, small.size_out));
    expect_well_formed(retry, offset, length);
    r.expect_maps(retry.pages(), offset % PAGE_SIZE, buffer, offset, length);
    LamResult probe = session().build_lam(chain.head(), length, 0, /*with_buffer=*/false);
    if (probe.done.final_status == STATUS_BUFFER_TOO_SMALL) {
        auto& again = built.keep(session().build_lam(chain.head(), length, probe.size_out));
        expect_well_formed(again, offset, length);
    }
}

NDKCT_TEST(BuildLam, RepeatedFailuresLeaveNothingBehind,
           "ndk.adapter.build_lam.failures_leave_nothing", "LAM-ERR-01", "LAM-ST-04") {
    Built built(session());
    auto buffer = session().buffer(2 * PAGE_SIZE);
    auto chain = platform::describe(buffer, 0, 2 * PAGE_SIZE);
    auto holed = platform::with_hole(buffer, 0, 100, 1, 100);
    for (int i = 0; i < 64; ++i) {
        EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL,
                      session().build_lam(chain.head(), 2 * PAGE_SIZE, 8).done.final_status);
        EXPECT_STATUS(STATUS_INVALID_PARAMETER,
                      session().build_lam(holed.head(), 200, 64).done.final_status);
    }
    auto& lam =
        built.keep(session().build_lam(chain.head(), 2 * PAGE_SIZE, required(0, 2 * PAGE_SIZE)));
    expect_well_formed(lam, 0, 2 * PAGE_SIZE);
}

// ---------------------------------------------------------------- FBO, page count, chains

NDKCT_TEST(BuildLam, FboIsTheFirstByteOffsetInItsPage, "ndk.adapter.build_lam.fbo", "LAM-OUT-03",
           "LAM-PAGE-02", "LAM-VA-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    Built built(session());
    auto buffer = session().buffer(5 * PAGE_SIZE);
    seed::fill(buffer, 45);
    for (size_t offset :
         {size_t(0), size_t(1), size_t(100), size_t(PAGE_SIZE - 1), size_t(2 * PAGE_SIZE + 5)}) {
        const size_t length = 2 * PAGE_SIZE;
        auto chain = platform::describe(buffer, offset, length);
        auto& lam = built.keep(session().build_lam(chain.head(), length, required(offset, length)));
        expect_well_formed(lam, offset, length);
        if (lam.done.ok()) r.expect_maps(lam.pages(), offset % PAGE_SIZE, buffer, offset, length);
    }
}

NDKCT_TEST(BuildLam, TwoBytesAcrossAPageBoundaryNeedTwoPages, "ndk.adapter.build_lam.straddle",
           "LAM-PAGE-02", "LAM-SIZE-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    Built built(session());
    auto buffer = session().buffer(2 * PAGE_SIZE);
    seed::fill(buffer, 47);
    auto chain = platform::describe(buffer, PAGE_SIZE - 1, 2);
    LamResult one = session().build_lam(chain.head(), 2, required(0, 1));  // room for one page only
    EXPECT_STATUS(STATUS_BUFFER_TOO_SMALL, one.done.final_status);
    EXPECT_GE(one.size_out, required(PAGE_SIZE - 1, 2));
    auto& lam = built.keep(session().build_lam(chain.head(), 2, required(PAGE_SIZE - 1, 2)));
    expect_well_formed(lam, PAGE_SIZE - 1, 2);
    if (lam.done.ok()) r.expect_maps(lam.pages(), PAGE_SIZE - 1, buffer, PAGE_SIZE - 1, 2);
}

NDKCT_TEST(BuildLam, SplitChainIsMappedLikeOneMdl, "ndk.adapter.build_lam.split_chain",
           "LAM-MDL-04", "LAM-PAGE-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    Built built(session());
    auto buffer = session().buffer(4 * PAGE_SIZE);
    seed::fill(buffer, 49);
    const size_t pieces[] = {300, PAGE_SIZE - 300, 5000, 123};
    const size_t offset = 50, length = 300 + PAGE_SIZE - 300 + 5000 + 123;
    auto chain = platform::describe_split(buffer, offset, pieces);
    auto& lam = built.keep(session().build_lam(chain.head(), length, required(offset, length)));
    expect_well_formed(lam, offset, length);
    if (lam.done.ok()) r.expect_maps(lam.pages(), offset % PAGE_SIZE, buffer, offset, length);
}

NDKCT_TEST(BuildLam, ChainWithAHoleIsRefused, "ndk.adapter.build_lam.chain_hole", "LAM-MDL-01",
           "LAM-ST-04") {
    auto buffer = session().buffer(4 * PAGE_SIZE);
    for (size_t gap : {size_t(1), size_t(PAGE_SIZE)}) {
        auto chain = platform::with_hole(buffer, 0, PAGE_SIZE + 10, gap, PAGE_SIZE);
        size_t length = chain.byte_count();
        LamResult lam = session().build_lam(chain.head(), length, required(0, length + gap));
        EXPECT_STATUS(STATUS_INVALID_PARAMETER, lam.done.final_status) << "gap " << gap;
    }
}

NDKCT_TEST(BuildLam, ChainWithAMisalignedJointIsRefused,
           "ndk.adapter.build_lam.chain_misaligned_joint", "LAM-MDL-01") {
    auto buffer = session().buffer(4 * PAGE_SIZE);
    auto chain = platform::with_misaligned_joint(buffer, 100, PAGE_SIZE, PAGE_SIZE);
    LamResult lam =
        session().build_lam(chain.head(), chain.byte_count(), required(0, 4 * PAGE_SIZE));
    EXPECT_STATUS(STATUS_INVALID_PARAMETER, lam.done.final_status);
}

NDKCT_TEST(BuildLam, ChainBrokenAfterLengthIsMapped, "ndk.adapter.build_lam.broken_after_length",
           "LAM-MDL-04", "LAM-PAGE-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    Built built(session());
    auto buffer = session().buffer(5 * PAGE_SIZE);
    seed::fill(buffer, 51);
    const size_t length = 2 * PAGE_SIZE + 100;
    auto holed = platform::with_hole(buffer, 0, length, 50, PAGE_SIZE);
    auto& a = built.keep(session().build_lam(holed.head(), length, required(0, length)));
    expect_well_formed(a, 0, length);
    if (a.done.ok()) r.expect_maps(a.pages(), 0, buffer, 0, length);
    auto joint = platform::with_misaligned_joint(buffer, 3 * PAGE_SIZE + 10, 500, 100);
    auto& b = built.keep(session().build_lam(joint.head(), 500, required(10, 500)));
    expect_well_formed(b, 3 * PAGE_SIZE + 10, 500);
}

NDKCT_TEST(BuildLam, LengthBeyondTheChainIsNotMapped, "ndk.adapter.build_lam.length_beyond_chain",
           "LAM-LEN-01", "AMB-26") {
    auto buffer = session().buffer(3 * PAGE_SIZE);
    auto single = platform::describe(buffer, 0, 2 * PAGE_SIZE);
    const size_t pieces[] = {PAGE_SIZE, 1000};
    auto split = platform::describe_split(buffer, 0, pieces);
    for (auto* chain : {&single, &split}) {
        size_t length = chain->byte_count() + 1;
        LamResult lam = session().build_lam(chain->head(), length, required(0, length));
        NDKCT_RULE("AMB-26");  // LAM-LEN-01 is the consumer's duty; the profile reads a refusal
        EXPECT_FALSE(lam.done.ok()) << "a Length past the chain was mapped";
        EXPECT_TRUE(NT_ERROR(lam.done.final_status)) << spec::status_name(lam.done.final_status);
        if (lam.done.ok()) session().release_lam(lam);
    }
}

NDKCT_TEST(BuildLam, ContiguousAndScatteredPagesMapInOrder, "ndk.adapter.build_lam.page_order",
           "LAM-PAGE-02", "LAM-PAGE-03", "LAM-USE-02", "LAM-REL-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    Built built(session());
    for (auto placement : {platform::Placement::contiguous, platform::Placement::scattered}) {
        auto buffer = session().buffer(4 * PAGE_SIZE, placement);
        seed::fill(buffer, 53);
        auto chain = platform::describe(buffer, 0, buffer.size());
        auto& lam = built.keep(
            session().build_lam(chain.head(), buffer.size(), required(0, buffer.size())));
        expect_well_formed(lam, 0, buffer.size());
        if (!lam.done.ok()) continue;
        r.expect_maps(lam.pages(), 0, buffer, 0, buffer.size());
        // Still the same pages later, after other mappings came and went (LAM-REL-01).
        auto other = session().buffer(PAGE_SIZE);
        auto other_chain = platform::describe(other, 0, PAGE_SIZE);
        LamResult passing =
            session().build_lam(other_chain.head(), PAGE_SIZE, required(0, PAGE_SIZE));
        if (passing.done.ok()) session().release_lam(passing);
        r.expect_maps(lam.pages(), 0, buffer, 0, buffer.size());
    }
}

NDKCT_TEST(BuildLam, ReleaseLeavesTheChainAsItWas, "ndk.adapter.build_lam.chain_untouched",
           "LAM-REL-02", "LAM-VA-01") {
    auto buffer = session().buffer(3 * PAGE_SIZE);
    const size_t pieces[] = {1000, 2 * PAGE_SIZE, 500};
    auto chain = platform::describe_split(buffer, 200, pieces);
    std::vector<std::vector<std::byte>> before;
    for (size_t i = 0; i < chain.mdl_count(); ++i) {
        auto* p = reinterpret_cast<const std::byte*>(chain.mdl(i));
        before.emplace_back(p, p + chain.mdl(i)->Size);
    }
    LamResult lam =
        session().build_lam(chain.head(), chain.byte_count(), required(200, chain.byte_count()));
    ASSERT_TRUE(lam.done.ok()) << spec::status_name(lam.done.final_status);
    session().release_lam(lam);
    for (size_t i = 0; i < chain.mdl_count(); ++i) {
        auto* p = reinterpret_cast<const std::byte*>(chain.mdl(i));
        EXPECT_EQ(std::vector<std::byte>(p, p + before[i].size()), before[i])
            << "MDL " << i << " changed";
    }
}

// ---------------------------------------------------------------- completion paths

NDKCT_TEST(BuildLam, NullCompletionNeverPends, "ndk.adapter.build_lam.null_completion", "LAM-CB-01",
           "AMB-06", "LAM-ST-02") {
    Built built(session());
    auto buffer = session().buffer(2 * PAGE_SIZE);
    auto chain = platform::describe(buffer, 0, 2 * PAGE_SIZE);
    auto& lam =
        built.keep(session().build_lam(chain.head(), 2 * PAGE_SIZE, required(0, 2 * PAGE_SIZE),
                                       /*with_buffer=*/true, /*with_completion=*/false));
    // A pending request without a callback could never complete: either it finishes inline or
    // the NULL callback is refused (AMB-06).
    EXPECT_NE(lam.done.status, STATUS_PENDING);
    if (lam.done.ok()) expect_well_formed(lam, 0, 2 * PAGE_SIZE);
}

NDKCT_TEST(BuildLam, ManyMappingsInlineOrPendingAreEachUsable, "ndk.adapter.build_lam.many",
           "LAM-ST-01", "LAM-ST-02", "LAM-CTX-01", "LAM-REL-01", "LAM-USE-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    Built built(session());
    std::vector<platform::LockedBuffer> buffers;
    std::vector<platform::MdlChain> chains;
    std::vector<LamResult*> lams;
    for (size_t i = 0; i < 24; ++i) {
        buffers.push_back(session().buffer((1 + i % 3) * PAGE_SIZE));
        seed::fill(buffers.back(), uint8_t(60 + i));
        size_t offset = (i * 211) % PAGE_SIZE, length = buffers.back().size() - offset;
        chains.push_back(platform::describe(buffers.back(), offset, length));
        lams.push_back(&built.keep(
            session().build_lam(chains.back().head(), length, required(offset, length))));
        ASSERT_TRUE(lams.back()->done.ok())
            << "mapping " << i << ": " << spec::status_name(lams.back()->done.final_status);
    }
    for (size_t i = 0; i < lams.size(); ++i) {
        size_t offset = (i * 211) % PAGE_SIZE;
        expect_well_formed(*lams[i], offset, buffers[i].size() - offset);
        r.expect_maps(lams[i]->pages(), ULONG(offset % PAGE_SIZE), buffers[i], offset,
                      buffers[i].size() - offset);
    }
}

NDKCT_TEST(BuildLam, ResourceFailuresInEitherFormLeaveNoMapping,
           "ndk.adapter.build_lam.insufficient_resources", "LAM-ST-03", "LAM-ST-04", "LAM-ERR-01",
           "GEN-ASYNC-02") {
    auto s = seed::session_with(GetParam(), seed::resource_pressure(30));
    ASSERT_TRUE(s);
    auto buffer = s->buffer(3 * PAGE_SIZE);
    auto chain = platform::describe(buffer, 10, 2 * PAGE_SIZE);
    size_t built = 0;
    for (int i = 0; i < 40; ++i) {
        LamResult lam = s->build_lam(chain.head(), 2 * PAGE_SIZE, required(10, 2 * PAGE_SIZE));
        if (lam.done.ok()) {
            expect_well_formed(lam, 10, 2 * PAGE_SIZE);
            s->release_lam(lam);
            ++built;
        } else {
            EXPECT_STATUS(STATUS_INSUFFICIENT_RESOURCES, lam.done.final_status)
                << "a valid request failed otherwise";
        }
    }
    EXPECT_GT(built, 0u) << "no mapping in 40 attempts";
    seed::finish(*s);
}

}  // namespace
}  // namespace ndkct::conformance
