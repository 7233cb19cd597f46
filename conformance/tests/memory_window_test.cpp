// Memory windows: what a bind grants, and nothing more (BND-*).
#include <cstring>

#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::address_of;
using seed::fill;
using seed::untouched;

NDKCT_SUITE(MemoryWindows);

struct Window {
    platform::LockedBuffer region, source, sink;
    Registered mr, src, snk;
    NDK_MW* mw = nullptr;
    UINT32 token = 0;
    bool bound = false;
};

// A window over [offset, offset + length) of a 4-page region, bound on `qp` with `flags`.
Window bind_window(Session& s, LoopbackPair& pair, NDK_QP* qp, size_t offset, size_t length,
                   ULONG flags) {
    Window w;
    w.region = s.buffer(4 * PAGE_SIZE);
    w.source = s.buffer(PAGE_SIZE);
    w.sink = s.buffer(PAGE_SIZE);
    fill(w.region, 30);
    fill(w.source, 31);
    w.mr = s.register_buffer(pair.pd, w.region, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    w.src = s.register_buffer(pair.pd, w.source, 0);
    w.snk = s.register_buffer(pair.pd, w.sink,
                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    w.mw = s.create_mw(pair.pd).object;
    if (!w.mw || w.mr.status != STATUS_SUCCESS) return w;
    static int bind_context;
    NTSTATUS st =
        s.bind(qp, &bind_context, w.mr.mr, w.mw, address_of(w.region, offset), length, flags);
    EXPECT_STATUS(STATUS_SUCCESS, st) << "NdkBind";
    w.token = s.remote_token(w.mw);
    auto results = s.drain(pair.cq, 1);
    w.bound = results.size() == 1 && results[0].Status == STATUS_SUCCESS;
    EXPECT_TRUE(w.bound) << "the bind did not complete successfully";
    return w;
}

// One access through the window from `qp`; returns its completion status (or the inline error).
NTSTATUS access(Session& s, LoopbackPair& pair, Window& w, NDK_QP* qp, bool write, size_t offset,
                ULONG length) {
    static int context;
    NTSTATUS posted;
    if (write) {
        NDK_SGE sge = Session::sge(w.source, 0, length, w.src.local_token);
        posted = s.write(qp, &context, {&sge, 1}, address_of(w.region, offset), w.token);
    } else {
        NDK_SGE sge = Session::sge(w.sink, 0, length, w.snk.local_token);
        posted = s.read(qp, &context, {&sge, 1}, address_of(w.region, offset), w.token,
                        NDK_OP_FLAG_RDMA_READ_SINK);
    }
    if (!NT_SUCCESS(posted)) return posted;
    auto results = s.drain(pair.cq, 1);
    if (results.size() != 1) {
        ADD_FAILURE() << "the access did not complete";
        return STATUS_PENDING;
    }
    return results[0].Status;
}

// BND-01: after the bind completed, the window's token gives the bound access to its range,
// whichever QP of the peer's connection carries the access: a remote write arriving at the QP
// the bind was posted on, and one arriving at its peer (the same PD).
NDKCT_TEST(MemoryWindows, BoundWindowReachableThroughAnyConnection, "ndk.mw.bind.grants_access",
           "BND-01") {
    for (bool from_binding_qp : {false, true}) {
        SCOPED_TRACE(from_binding_qp ? "the access arrives at the binding QP's peer"
                                     : "the access arrives at the binding QP");
        auto pair = session().loopback_pair();
        ASSERT_TRUE(pair.connected) << pair.problem;
        auto w = bind_window(session(), pair, pair.a, PAGE_SIZE, 2 * PAGE_SIZE,
                             NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ);
        ASSERT_TRUE(w.bound);
        // A write from b arrives at a (the binding QP); a write from a arrives at b.
        NDK_QP* from = from_binding_qp ? pair.a : pair.b;
        EXPECT_STATUS(STATUS_SUCCESS,
                      access(session(), pair, w, from, true, PAGE_SIZE + 100, 1000));
        EXPECT_EQ(std::memcmp(w.region.data() + PAGE_SIZE + 100, w.source.data(), 1000), 0);
    }
}

// BND-08: a window grants no more than its bind asked for. Each forbidden access on its own
// connection (an error breaks the QP): before the range, past its end, and a write through a
// read-only window. Each must fail and change nothing.
NDKCT_TEST(MemoryWindows, WindowGrantsNoMoreThanItsBind, "ndk.mw.bind.bounds_and_rights",
           "BND-08") {
    struct Case {
        const char* what;
        ULONG bind_flags;
        bool write;
        size_t offset;
        ULONG length;
    };
    const Case cases[] = {
        {"a write before the bound range", NDK_OP_FLAG_ALLOW_REMOTE_WRITE, true, PAGE_SIZE - 64,
         128},
        {"a write past the bound range", NDK_OP_FLAG_ALLOW_REMOTE_WRITE, true, 3 * PAGE_SIZE - 64,
         128},
        {"a read past the bound range", NDK_OP_FLAG_ALLOW_REMOTE_READ, false, 3 * PAGE_SIZE - 64,
         128},
        {"a write through a read-only window", NDK_OP_FLAG_ALLOW_REMOTE_READ, true, PAGE_SIZE + 64,
         128},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        auto pair = session().loopback_pair();
        ASSERT_TRUE(pair.connected) << pair.problem;
        auto w = bind_window(session(), pair, pair.a, PAGE_SIZE, 2 * PAGE_SIZE, c.bind_flags);
        ASSERT_TRUE(w.bound);
        std::vector<std::byte> before(w.region.data(), w.region.data() + w.region.size());
        NTSTATUS got = access(session(), pair, w, pair.b, c.write, c.offset, c.length);
        EXPECT_TRUE(NT_ERROR(got)) << c.what << " completed with " << spec::status_name(got);
        EXPECT_EQ(std::memcmp(w.region.data(), before.data(), before.size()), 0)
            << c.what << " changed the region";
        if (!c.write) {
            EXPECT_TRUE(untouched(w.sink, 0, c.length)) << c.what << " returned bytes";
        }
    }
}

// BND-03, BND-04: VirtualAddress is an index into the MR, never dereferenced, and remote
// addresses are the bound virtual range itself. Over a fast-registered MR whose base is no
// pointer of this process, a write at the bound addresses lands in the right page.
NDKCT_TEST(MemoryWindows, WindowAddressesAreTheBoundVirtualRange,
           "ndk.mw.bind.virtual_address_index", "BND-03", "BND-04") {
    seed::Mappings mappings(session());
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto region = session().buffer(4 * PAGE_SIZE);
    auto source = session().buffer(PAGE_SIZE);
    fill(source, 50);
    auto src = session().register_buffer(pair.pd, source, 0);
    NDK_MR* fast = seed::fast_register_mr(session(), pair.pd, 4, true);
    ASSERT_TRUE(fast);
    auto& m = mappings.add(region);
    ASSERT_TRUE(m.ok());
    int registered, bound, written;
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().fast_register(pair.a, &registered, fast, m.pages, 0, 4 * PAGE_SIZE,
                                          seed::kFarBase, NDK_OP_FLAG_ALLOW_LOCAL_WRITE));
    auto mw = session().create_mw(pair.pd).object;
    ASSERT_TRUE(mw);
    const uint64_t window_va = seed::kFarBase + 2 * PAGE_SIZE;
    ASSERT_STATUS(STATUS_SUCCESS, session().bind(pair.a, &bound, fast, mw, window_va, PAGE_SIZE,
                                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    UINT32 token = session().remote_token(mw);
    auto results = seed::settle(session(), pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    NDK_SGE sge = Session::sge(source, 0, 300, src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.b, &written, {&sge, 1}, window_va + 40, token));
    results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(region.data() + 2 * PAGE_SIZE + 40, source.data(), 300), 0);
    EXPECT_TRUE(untouched(region, 0, 2 * PAGE_SIZE + 40));
    // BND-04: an offset from zero is not an address into the window.
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.b, &written, {&sge, 1}, 40, token));
    results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(NT_ERROR(results[0].Status))
        << "a write at offset 40 from zero completed with " << spec::status_name(results[0].Status);
}

// BND-07: NdkBind accepts each combination of its flags (DEFER from 1.2); a silent bind that
// succeeds leaves no entry, every other one exactly one.
NDKCT_TEST(MemoryWindows, BindAcceptsEveryFlagCombination, "ndk.mw.bind.flag_combinations",
           "BND-07", "DEFER-01", "DEFER-03") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto region = session().buffer(PAGE_SIZE);
    auto r = session().register_buffer(pair.pd, region, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    std::vector<ULONG> flags = {NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_READ_FENCE,
                                NDK_OP_FLAG_ALLOW_REMOTE_READ, NDK_OP_FLAG_ALLOW_REMOTE_WRITE};
    if (NDKCT_VERSION_AT_LEAST(session().version(), 1, 2)) flags.push_back(NDK_OP_FLAG_DEFER);
    std::vector<int> contexts(1u << flags.size());
    size_t entries = 0;
    for (size_t set = 0; set < contexts.size(); ++set) {
        ULONG f = 0;
        for (size_t k = 0; k < flags.size(); ++k)
            if (set & (1u << k)) f |= flags[k];
        auto mw = session().create_mw(pair.pd).object;
        ASSERT_TRUE(mw);
        ASSERT_STATUS(STATUS_SUCCESS, session().bind(pair.a, &contexts[set], r.mr, mw,
                                                     address_of(region), PAGE_SIZE, f))
            << "flags 0x" << std::hex << f;
        entries += (f & NDK_OP_FLAG_SILENT_SUCCESS) ? 0 : 1;
        NDKCT_RULE("BND-07", "DEFER-03");  // every combination is accepted and completes once
        if (set % 8 == 7 && !(f & NDK_OP_FLAG_DEFER)) {  // keep the queue shallow
            auto marker_results = seed::settle(session(), pair.cq, entries);
            EXPECT_EQ(marker_results.size(), entries) << "after flags 0x" << std::hex << f;
            for (const auto& each : marker_results)
                EXPECT_STATUS(STATUS_SUCCESS, each.Status);
            entries = 0;
        }
    }
    NDKCT_RULE("DEFER-07");
    // DEFER-07: a non-deferred request hands the deferred ones over.
    auto marker = seed::make_marker(session(), pair.pd);
    static int marker_context;
    auto rest = seed::after_marker(session(), pair.a, pair.cq, marker, &marker_context);
    EXPECT_EQ(rest.size(), entries + 1);
    for (const auto& each : rest)
        EXPECT_STATUS(STATUS_SUCCESS, each.Status);
}

// BND-09: a bind of up to MaxWindowSize bytes is accepted (here the largest the test's region
// allows: MaxWindowSize itself when it is small, else an 8 MiB window).
NDKCT_TEST(MemoryWindows, WindowUpToMaxWindowSizeIsAccepted, "ndk.mw.bind.max_window_size",
           "BND-09") {
    NDKCT_REQUIRE(info().MaxWindowSize > 0, "MaxWindowSize above 0");
    const size_t length = std::min<uint64_t>(info().MaxWindowSize, 8u << 20);
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto region = session().buffer(length);
    auto source = session().buffer(PAGE_SIZE);
    fill(source, 2);
    auto r = session().register_buffer(pair.pd, region, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto s = session().register_buffer(pair.pd, source, 0);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    auto mw = session().create_mw(pair.pd).object;
    ASSERT_TRUE(mw);
    int bound, written;
    ASSERT_STATUS(STATUS_SUCCESS, session().bind(pair.a, &bound, r.mr, mw, address_of(region),
                                                 length, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    UINT32 token = session().remote_token(mw);
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    // The window's last bytes are reachable.
    NDK_SGE sge = Session::sge(source, 0, 64, s.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.b, &written, {&sge, 1},
                                                  address_of(region, length - 64), token));
    results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(region.data() + length - 64, source.data(), 64), 0);
}

}  // namespace
}  // namespace ndkct::conformance
