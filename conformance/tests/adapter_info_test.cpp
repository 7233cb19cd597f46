// What NDK_ADAPTER_INFO promises, checked against what the adapter does (AI-*, AI-FLAG-*), and
// the dispatch tables every object carries (ADP-OPEN-01, AI-04, EXT-01, EXT-03).
#include <atomic>
#include <cstring>
#include <thread>

#include "open_support.hpp"
#include "pair_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::address_of;
using seed::fill;

NDKCT_SUITE(AdapterInfo);

// Every object of the adapter: its header and its dispatch table, as a list of members.
struct Table {
    const char* what;
    NDK_OBJECT_HEADER* header;
    std::vector<const void*> members;
};

template <typename Dispatch>
std::vector<const void*> members_of(const Dispatch* d) {
    // A dispatch table is an array of function pointers (the layout asserts pin it).
    std::vector<const void*> m(sizeof(Dispatch) / sizeof(void*));
    std::memcpy(m.data(), d, sizeof(Dispatch));
    return m;
}

std::vector<Table> every_table(Session& s, LoopbackPair& pair) {
    std::vector<Table> t;
    auto add = [&](const char* what, auto* object) {
        if (!object) {
            ADD_FAILURE() << "no " << what << " to look at";
            return;
        }
        t.push_back({what, &object->Header, members_of(object->Dispatch)});
    };
    add("adapter", s.adapter());
    add("PD", pair.pd);
    add("CQ", pair.cq);
    add("QP", pair.a);
    add("connector", pair.active);
    add("listener", pair.listener);
    add("MR", s.create_mr(pair.pd, false).object);
    add("fast-register MR", s.create_mr(pair.pd, true).object);
    add("MW", s.create_mw(pair.pd).object);
    add("SRQ", s.create_srq(pair.pd, 16, 1).object);
    return t;
}

NDKCT_TEST(AdapterInfo, EveryDispatchMemberIsSet, "ndk.adapter.dispatch.complete", "ADP-OPEN-01",
           "AI-04", "EXT-03", "VER-08") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    // ADP-OPEN-01: the adapter header; AI-04: nine members, the first NdkQueryExtension.
    EXPECT_EQ(session().adapter()->Header.ObjectType, NdkObjectTypeAdapter);
    open::expect_complete(*session().adapter()->Dispatch);
    const bool v12 = NDKCT_VERSION_AT_LEAST(session().version(), 1, 2);
    const bool v21 = NDKCT_VERSION_AT_LEAST(session().version(), 2, 1);
    for (const auto& table : every_table(session(), pair)) {
        for (size_t k = 0; k < table.members.size(); ++k) {
            bool optional = false;
            // Members a lower version lacks: NdkGetCqResultsEx (CQ, 7th) and
            // NdkSendAndInvalidate (QP, 11th) before 1.2 (VER-08); the two Ex members of a
            // connector (12th and 13th) before 2.1 (VER-10).
            if (!std::strcmp(table.what, "CQ") && k == 6) optional = !v12;
            if (!std::strcmp(table.what, "QP") && k == 10) optional = !v12;
            if (!std::strcmp(table.what, "connector") && k >= 11) optional = !v21;
            if (!optional) {
                EXPECT_TRUE(table.members[k]) << table.what << " dispatch member " << k + 1;
            }
        }
        // EXT-03: NdkQueryExtensionInterface is the adapter's first member, every other
        // object's second (after its close).
        size_t ext = std::strcmp(table.what, "adapter") == 0 ? 0 : 1;
        ASSERT_LT(ext, table.members.size());
        EXPECT_TRUE(table.members[ext]) << table.what << ": NdkQueryExtensionInterface";
    }
}

NDKCT_TEST(AdapterInfo, UnknownExtensionIsNotSupported, "ndk.adapter.query_extension.unknown",
           "EXT-01", "EXT-03") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    // No standard extension exists: an interface ID nobody defines, at two versions.
    GUID unknown{0x6e646b63u, 0x7465, 0x7374, {0x9a, 0x17, 0x2b, 0x44, 0x61, 0x0c, 0x3e, 0x58}};
    for (const auto& table : every_table(session(), pair)) {
        size_t ext = std::strcmp(table.what, "adapter") == 0 ? 0 : 1;
        auto* query = reinterpret_cast<NDK_FN_QUERY_EXTENSION_INTERFACE*>(
            const_cast<void*>(table.members[ext]));
        ASSERT_TRUE(query) << table.what;
        for (NDK_VERSION v : {NDKCT_MAKE_VERSION(1, 0), NDKCT_MAKE_VERSION(9, 9)}) {
            NDK_EXTENSION_INTERFACE out{};
            EXPECT_STATUS(STATUS_NOT_SUPPORTED, query(table.header, &unknown, v, &out))
                << table.what << ", interface version " << v.Major << "." << v.Minor;
        }
    }
}

NDKCT_TEST(AdapterInfo, RdmaTechnologyIsOneTransport, "ndk.adapter.info.rdma_technology", "AI-11") {
    // 1 iWARP, 2 InfiniBand, 3 RoCE, 4 RoCEv2: exactly one configured transport.
    EXPECT_GE(static_cast<int>(info().RdmaTechnology), 1);
    EXPECT_LE(static_cast<int>(info().RdmaTechnology), 4);
}

// AI-07: a create at exactly a reported maximum is within the limit: it may lack resources, but
// it is never STATUS_INVALID_PARAMETER (the oracle also judges each create).
NDKCT_TEST(AdapterInfo, AdvertisedMaximaAreUsable, "ndk.adapter.info.maxima_usable", "AI-07") {
    auto refused = [](NTSTATUS s) {
        return s == STATUS_INVALID_PARAMETER || s == STATUS_INVALID_PARAMETER_MIX;
    };
    auto cq = session().create_cq(info().MaxCqDepth);
    EXPECT_FALSE(refused(cq.final_status) || refused(cq.status))
        << "CqDepth = MaxCqDepth " << info().MaxCqDepth;
    if (cq.object) session().close(cq.object);
    auto pd = session().create_pd().object;
    auto small = session().create_cq(16).object;
    ASSERT_TRUE(pd && small);
    QpShape shape;
    shape.receive_depth = info().MaxReceiveQueueDepth;
    shape.initiator_depth = info().MaxInitiatorQueueDepth;
    shape.receive_sge = info().MaxReceiveRequestSge;
    shape.initiator_sge = info().MaxInitiatorRequestSge;
    shape.inline_size = info().MaxInlineDataSize;
    auto qp = session().create_qp(pd, small, small, nullptr, shape);
    EXPECT_FALSE(refused(qp.status) || refused(qp.final_status))
        << "a QP at every maximum: " << spec::status_name(qp.final_status);
    if (qp.object) session().close(qp.object);
    auto srq = session().create_srq(pd, info().MaxSrqDepth, info().MaxReceiveRequestSge);
    EXPECT_FALSE(refused(srq.status) || refused(srq.final_status))
        << "SrqDepth = MaxSrqDepth " << info().MaxSrqDepth;
}

// AI-FLAG-01: in-order placement. A watcher reads a later byte and then an earlier one while a
// large write lands; seeing the later byte new and the earlier one still old is a violation.
NDKCT_TEST(AdapterInfo, InOrderDmaPlacesBytesInOrder, "ndk.adapter.flag.in_order_dma",
           "AI-FLAG-01") {
    NDKCT_REQUIRE(has_flag(NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED), "IN_ORDER_DMA_SUPPORTED");
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    constexpr size_t kBytes = 1 << 20;
    constexpr int kRounds = 4;
    auto source = session().buffer(kBytes);
    for (size_t i = 0; i < kBytes; ++i)
        source.data()[i] = std::byte(0xA5);  // each target starts zero: "old" is 0
    auto src = session().register_buffer(pair.pd, source, 0);
    // A fresh target each round: nothing but the provider ever writes a watched buffer.
    std::vector<platform::LockedBuffer> targets;
    std::vector<Registered> regs;
    for (int round = 0; round < kRounds; ++round) {
        targets.push_back(session().buffer(kBytes));
        regs.push_back(
            session().register_buffer(pair.pd, targets.back(), NDK_MR_FLAG_ALLOW_REMOTE_WRITE));
        ASSERT_STATUS(STATUS_SUCCESS, regs.back().status);
    }
    std::atomic<bool> stop{false};
    std::atomic<size_t> violations{0}, first_bad{0};
    std::atomic<const std::byte*> watched{targets[0].data()};
    std::thread watcher([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            const volatile std::byte* t = watched.load();
            for (size_t later = kBytes - 1; later >= 4096; later -= 4093) {
                std::byte hi = t[later];
                std::atomic_thread_fence(std::memory_order_acquire);
                std::byte lo = t[later - 4000];
                if (hi != std::byte{0} && lo == std::byte{0}) {
                    if (violations++ == 0) first_bad = later;
                }
            }
        }
    });
    for (int round = 0; round < kRounds; ++round) {
        watched = targets[round].data();
        NDK_SGE sge = Session::sge(source, 0, kBytes, src.local_token);
        // No ASSERT while the watcher runs: it must be joined.
        NTSTATUS posted = session().write(pair.a, nullptr, {&sge, 1}, address_of(targets[round]),
                                          regs[round].remote_token);
        EXPECT_STATUS(STATUS_SUCCESS, posted);
        auto results = session().drain(pair.cq, 1);
        EXPECT_EQ(results.size(), 1u);
        if (posted != STATUS_SUCCESS || results.size() != 1) break;
        EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    }
    stop = true;
    watcher.join();
    EXPECT_EQ(violations.load(), 0u)
        << "byte " << first_bad.load() << " landed before byte " << first_bad.load() - 4000;
    for (const auto& target : targets)
        EXPECT_EQ(std::memcmp(target.data(), source.data(), kBytes), 0);
}

// AI-FLAG-02, PTOK-03: without the read-sink right. A read lands in a buffer registered with
// local write only, named without NDK_OP_FLAG_RDMA_READ_SINK, and in a privileged-token buffer.
NDKCT_TEST(AdapterInfo, ReadSinkRightNotRequired, "ndk.adapter.flag.read_sink_not_required",
           "AI-FLAG-02", "PTOK-03", "SGE-01") {
    std::unique_ptr<Session> holder;
    Session* s = open::session_with_flag(session(), holder, GetParam(),
                                         NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED,
                                         "RDMA_READ_SINK_NOT_REQUIRED", true);
    NDKCT_REQUIRE(s, "RDMA_READ_SINK_NOT_REQUIRED");
    {
        seed::Mappings mappings(*s);
        auto pair = s->loopback_pair();
        ASSERT_TRUE(pair.connected) << pair.problem;
        auto remote = s->buffer(2 * PAGE_SIZE);
        auto sink = s->buffer(PAGE_SIZE);
        auto lam_sink = s->buffer(PAGE_SIZE);
        fill(remote, 21);
        auto r = s->register_buffer(pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
        auto k = s->register_buffer(pair.pd, sink, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        NDK_SGE sge = Session::sge(sink, 0, 3000, k.local_token);
        int first, second;
        ASSERT_STATUS(STATUS_SUCCESS,
                      s->read(pair.a, &first, {&sge, 1}, address_of(remote, 7), r.remote_token));
        auto& m = mappings.add(lam_sink);
        ASSERT_TRUE(m.ok());
        NDK_SGE privileged = seed::sge_at(static_cast<uint64_t>(m.pages[0].QuadPart) + m.lam.fbo,
                                          2000, s->privileged_token(pair.pd));
        ASSERT_STATUS(STATUS_SUCCESS, s->read(pair.a, &second, {&privileged, 1},
                                              address_of(remote, 4000), r.remote_token));
        NDKCT_RULE("PTOK-03", "AI-FLAG-02");  // reads into non-sink buffers succeed
        auto results = seed::settle(*s, pair.cq, 2);
        ASSERT_EQ(results.size(), 2u);
        for (const auto& each : results)
            EXPECT_STATUS(STATUS_SUCCESS, each.Status);
        EXPECT_EQ(std::memcmp(sink.data(), remote.data() + 7, 3000), 0);
        EXPECT_EQ(std::memcmp(lam_sink.data(), remote.data() + 4000, 2000), 0);
    }
    if (holder) seed::finish(*holder);
}

// AI-FLAG-06: with CQ_RESIZE_SUPPORTED, NdkResizeCq works and the CQ keeps working.
NDKCT_TEST(AdapterInfo, CqResizeWorksWhenReported, "ndk.adapter.flag.cq_resize", "AI-FLAG-06") {
    NDKCT_REQUIRE(has_flag(NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED), "CQ_RESIZE_SUPPORTED");
    auto pair = session().loopback_pair({}, 32);
    ASSERT_TRUE(pair.connected) << pair.problem;
    Done grown = session().resize_cq(pair.cq, 128);
    EXPECT_TRUE(grown.ok()) << spec::status_name(grown.final_status);
    auto marker = seed::make_marker(session(), pair.pd);
    int context;
    auto results = seed::after_marker(session(), pair.a, pair.cq, marker, &context);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
}

// AI-FLAG-07: a connection from a local address to that same address on the adapter works,
// and carries data.
NDKCT_TEST(AdapterInfo, LoopbackConnectionsWork, "ndk.adapter.flag.loopback", "AI-FLAG-07") {
    NDKCT_REQUIRE(has_flag(NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED),
                  "LOOPBACK_CONNECTIONS_SUPPORTED");
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto marker = seed::make_marker(session(), pair.pd);
    int context;
    auto results = seed::after_marker(session(), pair.b, pair.cq, marker, &context);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(marker.target.data(), marker.source.data(), 8), 0);
}

// AI-08, RD-08: the per-QP read limits are usable as reported: a connection at
// MaxOutboundReadLimit/MaxInboundReadLimit carries that many reads in flight at once.
NDKCT_TEST(AdapterInfo, ReadLimitsAreUsable, "ndk.adapter.info.read_limits", "AI-08", "RD-08") {
    ULONG limit = std::min(info().MaxOutboundReadLimit, info().MaxInboundReadLimit);
    NDKCT_REQUIRE(limit > 0, "read limits above 0");
    limit = std::min<ULONG>(limit, 32);
    pairs::PairSpec spec;
    spec.ird = info().MaxInboundReadLimit;
    spec.ord = info().MaxOutboundReadLimit;
    auto pair = pairs::connect(session(), spec);
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto remote = session().buffer(PAGE_SIZE);
    auto sink = session().buffer(limit * 64);
    fill(remote, 77);
    auto r = session().register_buffer(pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    auto k = session().register_buffer(pair.pd, sink,
                                       NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    std::vector<int> contexts(limit);
    for (ULONG i = 0; i < limit; ++i) {
        NDK_SGE sge = Session::sge(sink, i * 64, 64, k.local_token);
        ASSERT_STATUS(STATUS_SUCCESS,
                      session().read(pair.a, &contexts[i], {&sge, 1}, address_of(remote, i * 64),
                                     r.remote_token, NDK_OP_FLAG_RDMA_READ_SINK));
    }
    NDKCT_RULE("AI-08");  // reads up to the limit all work
    auto results = seed::settle(session(), pair.cq, limit);
    ASSERT_EQ(results.size(), limit);
    for (const auto& each : results)
        EXPECT_STATUS(STATUS_SUCCESS, each.Status);
    EXPECT_EQ(std::memcmp(sink.data(), remote.data(), limit * 64), 0);
}

}  // namespace
}  // namespace ndkct::conformance
