// NdkRegisterMr (RMR-*): every flag value, MDL chains (single, split, broken, short), Length,
// VA-based addressing, access rights through the tokens, deregistration, and the completion
// contract over many calls.
//
// The region lives on the pair's PD; the peer (pair.b) reaches it remotely with its remote token;
// bytes are checked in the buffer itself.
#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::address_of;

NDKCT_SUITE(RegisterMr);

struct Rig {
    Session* s = nullptr;
    LoopbackPair pair;
    platform::LockedBuffer source, sink;
    Registered src, snk;
    std::string problem;

    NTSTATUS wait(const void* context) { return seed::completion_status(*s, pair.cq, context); }
    // pair.b writes source[0, length) to [address, +length): the completion's status.
    NTSTATUS peer_write(uint64_t address, UINT32 token, ULONG length) {
        static int context;
        NDK_SGE sge = Session::sge(source, 0, length, src.local_token);
        NTSTATUS posted = s->write(pair.b, &context, {&sge, 1}, address, token);
        return posted == STATUS_SUCCESS ? wait(&context) : posted;
    }
    // pair.b reads [address, +length) into sink[0, length).
    NTSTATUS peer_read(uint64_t address, UINT32 token, ULONG length) {
        static int context;
        NDK_SGE sge = Session::sge(sink, 0, length, snk.local_token);
        NTSTATUS posted = s->read(pair.b, &context, {&sge, 1}, address, token);
        return posted == STATUS_SUCCESS ? wait(&context) : posted;
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
    r.source = s.buffer(4 * PAGE_SIZE);
    r.sink = s.buffer(4 * PAGE_SIZE);
    seed::fill(r.source, 7);
    r.src = s.register_buffer(r.pair.pd, r.source, 0);
    r.snk = s.register_buffer(r.pair.pd, r.sink,
                              NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    if (r.src.status != STATUS_SUCCESS || r.snk.status != STATUS_SUCCESS)
        r.problem = "NdkRegisterMr failed for a scratch region";
    return r;
}

bool same(const platform::LockedBuffer& a, size_t at, const platform::LockedBuffer& b, size_t bt,
          size_t n) {
    return std::memcmp(a.data() + at, b.data() + bt, n) == 0;
}

// CreateMr + RegisterMr of a chain; the MR (nullptr if not created) and the outcome.
struct Outcome {
    NDK_MR* mr = nullptr;
    Done done;
};

Outcome register_chain(Session& s, NDK_PD* pd, const platform::MdlChain& chain, SIZE_T length,
                       ULONG flags) {
    Outcome o;
    auto made = s.create_mr(pd, false);
    o.mr = made.object;
    if (o.mr) o.done = s.register_mr(o.mr, chain.head(), length, flags);
    return o;
}

// ---------------------------------------------------------------- flags

NDKCT_TEST(RegisterMr, EveryDocumentedFlagValueIsAccepted, "ndk.mr.register.flag_values",
           "RMR-FLG-01", "RMR-SINK-02", "RMR-SINK-03", "RMR-ST-01", "RMR-ST-02", "DMR-01") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = session().buffer(2 * PAGE_SIZE);
    // LOCAL_READ 0x0, LOCAL_WRITE 0x1, REMOTE_READ 0x2, REMOTE_WRITE 0x5, RDMA_READ_SINK 0x8, and
    // every OR of them.
    for (ULONG flags : {0x0u, 0x1u, 0x2u, 0x3u, 0x5u, 0x7u, 0x8u, 0x9u, 0xAu, 0xBu, 0xDu, 0xFu}) {
        auto chain = platform::describe(buffer, 0, buffer.size());
        Outcome o = register_chain(session(), pd.object, chain, buffer.size(), flags);
        ASSERT_TRUE(o.mr);
        EXPECT_STATUS(STATUS_SUCCESS, o.done.final_status) << "Flags " << flags;
        if (o.done.ok()) {
            session().local_token(o.mr);
            session().remote_token(o.mr);
            EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(o.mr).final_status)
                << "Flags " << flags;
        }
    }
}

NDKCT_TEST(RegisterMr, UndocumentedBitsAreIgnoredOrRefusedCleanly,
           "ndk.mr.register.undocumented_flags", "AMB-04", "RMR-ST-04", "RMR-ST-01") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = session().buffer(PAGE_SIZE);
    auto chain = platform::describe(buffer, 0, PAGE_SIZE);
    for (ULONG extra : {0x10u, 0x100u, 0x80000000u}) {
        auto made = session().create_mr(pd.object, false);
        ASSERT_TRUE(made.object);
        Done d = session().register_mr(made.object, chain.head(), PAGE_SIZE,
                                       NDK_MR_FLAG_ALLOW_LOCAL_WRITE | extra);
        if (d.ok()) {
            EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(made.object).final_status);
        } else {
            // Refused: the MR stayed unregistered, so a valid registration of it works.
            EXPECT_TRUE(NT_ERROR(d.final_status)) << spec::status_name(d.final_status);
            EXPECT_STATUS(STATUS_SUCCESS, session()
                                              .register_mr(made.object, chain.head(), PAGE_SIZE,
                                                           NDK_MR_FLAG_ALLOW_LOCAL_WRITE)
                                              .final_status);
        }
    }
}

NDKCT_TEST(RegisterMr, LoneRemoteWriteBitGrantsRemoteWriteWhenAccepted, "ndk.mr.register.lone_0x4",
           "AMB-03", "RMR-FLG-04") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(PAGE_SIZE);
    auto chain = platform::describe(target, 0, PAGE_SIZE);
    Outcome o =
        register_chain(session(), r.pair.pd, chain, PAGE_SIZE, NDKCT_MR_FLAG_REMOTE_WRITE_BIT);
    ASSERT_TRUE(o.mr);
    NDKCT_RULE("RMR-FLG-04");  // what the rest of the test checks
    if (!o.done.ok()) {        // AMB-03 reject
        EXPECT_TRUE(NT_ERROR(o.done.final_status));
        return;
    }
    // Remote write is the 0x4 bit, whatever the reading of the lone bit.
    EXPECT_STATUS(STATUS_SUCCESS,
                  r.peer_write(address_of(target, 8), session().remote_token(o.mr), 64));
    EXPECT_TRUE(same(target, 8, r.source, 0, 64));
}

NDKCT_TEST(RegisterMr, RemoteWriteValueAlsoGrantsLocalWrite,
           "ndk.mr.register.remote_write_implies_local", "RMR-FLG-03", "RMR-TOK-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(PAGE_SIZE);
    auto dst = session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    // A receive (a local write) into a region registered with 0x5 only.
    NDK_SGE into = Session::sge(target, 100, 2000, dst.local_token);
    int receive_context, send_context;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(r.pair.a, &receive_context, {&into, 1}));
    NDK_SGE from = Session::sge(r.source, 0, 2000, r.src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(r.pair.b, &send_context, {&from, 1}));
    auto results = session().drain(r.pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& got : results)
        EXPECT_STATUS(STATUS_SUCCESS, got.Status);
    EXPECT_TRUE(same(target, 100, r.source, 0, 2000));
}

NDKCT_TEST(RegisterMr, LocalWriteWithRemoteReadGrantsNoRemoteWrite,
           "ndk.mr.register.no_remote_write", "RMR-FLG-04", "RMR-ACC-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(PAGE_SIZE);
    // 0x3: local write and remote read; 0x3 & NDK_MR_FLAG_ALLOW_REMOTE_WRITE is non-zero.
    auto dst = session().register_buffer(
        r.pair.pd, target, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    EXPECT_TRUE(NT_ERROR(r.peer_write(address_of(target), dst.remote_token, 256)));
    EXPECT_TRUE(seed::untouched(target, 0, PAGE_SIZE));
}

NDKCT_TEST(RegisterMr, RemoteReadNeedsTheRemoteReadFlag, "ndk.mr.register.no_remote_read",
           "RMR-ACC-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto remote = session().buffer(PAGE_SIZE);
    seed::fill(remote, 3);
    auto rem = session().register_buffer(r.pair.pd, remote,
                                         NDK_MR_FLAG_ALLOW_REMOTE_WRITE);  // 0x5, no 0x2
    ASSERT_STATUS(STATUS_SUCCESS, rem.status);
    EXPECT_TRUE(NT_ERROR(r.peer_read(address_of(remote), rem.remote_token, 256)));
    EXPECT_TRUE(seed::untouched(r.sink, 0, 256));
}

NDKCT_TEST(RegisterMr, RemoteReadWithTheFlagReturnsTheRegionBytes, "ndk.mr.register.remote_read",
           "RMR-ACC-01", "RMR-VA-01", "RMR-TOK-02", "RMR-TOK-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto remote = session().buffer(3 * PAGE_SIZE);
    seed::fill(remote, 3);
    // A region starting and ending mid-page.
    auto rem = session().register_buffer(r.pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ, 700,
                                         2 * PAGE_SIZE);
    ASSERT_STATUS(STATUS_SUCCESS, rem.status);
    NDKCT_RULE("RMR-ACC-01", "RMR-TOK-01",
               "RMR-TOK-02");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS,
                  r.peer_read(address_of(remote, 700), rem.remote_token, 2 * PAGE_SIZE));
    NDKCT_RULE("RMR-ACC-01", "RMR-VA-01", "RMR-TOK-02");  // what the rest of the test checks
    EXPECT_TRUE(same(r.sink, 0, remote, 700, 2 * PAGE_SIZE));
}

NDKCT_TEST(RegisterMr, WithoutLocalWriteAReceiveDoesNotLand, "ndk.mr.register.no_local_write",
           "RMR-ACC-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(PAGE_SIZE);
    auto dst =
        session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_READ);  // no 0x1
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    NDK_SGE into = Session::sge(target, 0, 1000, dst.local_token);
    int receive_context, send_context;
    NTSTATUS posted = session().receive(r.pair.a, &receive_context, {&into, 1});
    if (NT_ERROR(posted)) {  // refused at once: nothing can land
        EXPECT_TRUE(seed::untouched(target, 0, PAGE_SIZE));
        return;
    }
    ASSERT_STATUS(STATUS_SUCCESS, posted);
    NDK_SGE from = Session::sge(r.source, 0, 1000, r.src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(r.pair.b, &send_context, {&from, 1}));
    auto results = session().drain(r.pair.cq, 2);
    const auto* got = seed::find_result(results, &receive_context);
    ASSERT_TRUE(got) << "the receive must complete";
    EXPECT_TRUE(NT_ERROR(got->Status)) << "a receive into a region without local write succeeded";
    EXPECT_TRUE(seed::untouched(target, 0, PAGE_SIZE));
}

NDKCT_TEST(RegisterMr, LocalReadNeedsNoFlag, "ndk.mr.register.local_read_implicit", "RMR-FLG-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto out = session().buffer(PAGE_SIZE);
    seed::fill(out, 13);
    auto o = session().register_buffer(r.pair.pd, out, NDK_MR_FLAG_ALLOW_LOCAL_READ);  // 0
    ASSERT_STATUS(STATUS_SUCCESS, o.status);
    NDK_SGE into = Session::sge(r.sink, 0, PAGE_SIZE, r.snk.local_token);
    int receive_context, send_context;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(r.pair.b, &receive_context, {&into, 1}));
    NDK_SGE from = Session::sge(out, 10, 3000, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(r.pair.a, &send_context, {&from, 1}));
    auto results = session().drain(r.pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& got : results)
        EXPECT_STATUS(STATUS_SUCCESS, got.Status);
    EXPECT_TRUE(same(r.sink, 0, out, 10, 3000));
}

NDKCT_TEST(RegisterMr, ReadSinkRegistrationWorksAsAReadSink, "ndk.mr.register.read_sink",
           "RMR-SINK-03", "RMR-SINK-02", "RMR-SINK-01", "RMR-TOK-01", "RMR-TOK-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto remote = session().buffer(PAGE_SIZE);
    seed::fill(remote, 17);
    auto rem = session().register_buffer(r.pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    auto landing = session().buffer(PAGE_SIZE);
    auto sink = session().register_buffer(
        r.pair.pd, landing,
        NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);  // 0x9
    ASSERT_STATUS(STATUS_SUCCESS, rem.status);
    ASSERT_STATUS(STATUS_SUCCESS, sink.status);
    NDKCT_RULE("RMR-SINK-03", "RMR-TOK-01",
               "RMR-TOK-02");  // the access goes through the getters' tokens
    NDK_SGE into = Session::sge(landing, 5, 2000, sink.local_token);
    int context;
    ASSERT_STATUS(STATUS_SUCCESS, session().read(r.pair.a, &context, {&into, 1},
                                                 address_of(remote, 1), rem.remote_token));
    ASSERT_STATUS(STATUS_SUCCESS, r.wait(&context));
    NDKCT_RULE("RMR-SINK-03", "RMR-SINK-02", "RMR-SINK-01");  // what the rest of the test checks
    EXPECT_TRUE(same(landing, 5, remote, 1, 2000));
    EXPECT_TRUE(seed::untouched(landing, 0, 5));
}

// ---------------------------------------------------------------- addresses and bounds

NDKCT_TEST(RegisterMr, RemoteWriteLandsAtItsVirtualAddressOnly, "ndk.mr.register.va_based",
           "RMR-VA-01", "RMR-VA-03", "RMR-TOK-02", "RMR-TOK-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(3 * PAGE_SIZE);
    // The region [VA + 100, VA + 100 + 5000) starts and ends mid-page.
    auto dst =
        session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 100, 5000);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    NDKCT_RULE("RMR-TOK-01", "RMR-TOK-02");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(address_of(target, 100), dst.remote_token, 5000));
    NDKCT_RULE("RMR-VA-01", "RMR-VA-03", "RMR-TOK-02");  // what the rest of the test checks
    EXPECT_TRUE(same(target, 100, r.source, 0, 5000));
    EXPECT_TRUE(seed::untouched(target, 0, 100));
    EXPECT_TRUE(seed::untouched(target, 5100, 3 * PAGE_SIZE - 5100));
}

NDKCT_TEST(RegisterMr, AccessBeyondTheRegionFailsAndTouchesNothing, "ndk.mr.register.access_beyond",
           "RMR-ACC-03") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(2 * PAGE_SIZE);
    auto dst =
        session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 0, 1000);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    // [996, 1004) straddles the region's end.
    EXPECT_TRUE(NT_ERROR(r.peer_write(address_of(target, 996), dst.remote_token, 8)));
    EXPECT_TRUE(seed::untouched(target, 0, 2 * PAGE_SIZE));
}

NDKCT_TEST(RegisterMr, AccessBeforeTheRegionFails, "ndk.mr.register.access_before", "RMR-ACC-03") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(PAGE_SIZE);
    auto dst =
        session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, 512, 1024);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    EXPECT_TRUE(NT_ERROR(r.peer_write(address_of(target, 508), dst.remote_token, 8)));
    EXPECT_TRUE(seed::untouched(target, 0, PAGE_SIZE));
}

NDKCT_TEST(RegisterMr, BareOffsetDoesNotReachTheRegion, "ndk.mr.register.no_zero_based_addressing",
           "RMR-VA-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(PAGE_SIZE);
    auto dst = session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    EXPECT_TRUE(NT_ERROR(r.peer_write(64, dst.remote_token, 8)))
        << "offset 64 named without the VA";
    EXPECT_TRUE(seed::untouched(target, 0, PAGE_SIZE));
}

// ---------------------------------------------------------------- MDL chains and Length

NDKCT_TEST(RegisterMr, SplitChainAndSingleMdlGiveTheSameRegion, "ndk.mr.register.split_chain",
           "RMR-MDL-05", "RMR-VA-03", "RMR-TOK-01", "RMR-TOK-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(4 * PAGE_SIZE);
    const size_t offset = 200, length = 3 * PAGE_SIZE + 50;
    // Joints mid-page and on a page boundary.
    const size_t pieces[] = {1000, 2 * PAGE_SIZE - 1200, 1, PAGE_SIZE + 249};
    auto split = platform::describe_split(target, offset, pieces);
    ASSERT_EQ(split.byte_count(), length);
    auto whole = platform::describe(target, offset, length);
    Outcome a = register_chain(session(), r.pair.pd, split, length, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    Outcome b = register_chain(session(), r.pair.pd, whole, length, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_TRUE(a.mr && b.mr);
    ASSERT_STATUS(STATUS_SUCCESS, a.done.final_status);
    ASSERT_STATUS(STATUS_SUCCESS, b.done.final_status);
    NDKCT_RULE("RMR-MDL-05", "RMR-TOK-01",
               "RMR-TOK-02");  // the access goes through the getters' tokens
    // The first half through the split chain's MR, the second through the single MDL's.
    ULONG half = static_cast<ULONG>(length / 2);
    ASSERT_STATUS(STATUS_SUCCESS,
                  r.peer_write(address_of(target, offset), session().remote_token(a.mr), half));
    seed::fill(r.source, 9);
    ASSERT_STATUS(STATUS_SUCCESS,
                  r.peer_write(address_of(target, offset + half), session().remote_token(b.mr),
                               static_cast<ULONG>(length - half)));
    NDKCT_RULE("RMR-MDL-05", "RMR-VA-03");  // what the rest of the test checks
    EXPECT_TRUE(same(target, offset + half, r.source, 0, length - half));
    seed::fill(r.source, 7);
    EXPECT_TRUE(same(target, offset, r.source, 0, half));
    EXPECT_TRUE(seed::untouched(target, 0, offset));
    EXPECT_TRUE(seed::untouched(target, offset + length, 4 * PAGE_SIZE - offset - length));
}

NDKCT_TEST(RegisterMr, ChainWithAHoleIsRefused, "ndk.mr.register.chain_hole", "RMR-MDL-01",
           "RMR-ST-04") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = session().buffer(4 * PAGE_SIZE);
    // Missing bytes at one mid-page spot, and a whole missing page.
    for (size_t gap : {size_t(1), size_t(PAGE_SIZE)}) {
        auto chain = platform::with_hole(buffer, 0, PAGE_SIZE + 10, gap, PAGE_SIZE);
        Outcome o = register_chain(session(), pd.object, chain, chain.byte_count(),
                                   NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        ASSERT_TRUE(o.mr);
        EXPECT_STATUS(STATUS_INVALID_PARAMETER, o.done.final_status) << "gap " << gap;
    }
}

NDKCT_TEST(RegisterMr, ChainWithAMisalignedJointIsRefused, "ndk.mr.register.chain_misaligned_joint",
           "RMR-MDL-01") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = session().buffer(4 * PAGE_SIZE);
    auto chain = platform::with_misaligned_joint(buffer, 100, PAGE_SIZE, PAGE_SIZE);
    Outcome o = register_chain(session(), pd.object, chain, chain.byte_count(),
                               NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_TRUE(o.mr);
    EXPECT_STATUS(STATUS_INVALID_PARAMETER, o.done.final_status);
}

NDKCT_TEST(RegisterMr, RefusedRegistrationLeavesTheMrUnregistered,
           "ndk.mr.register.refused_registers_nothing", "RMR-ST-04", "RMR-MDL-01", "RMR-PRE-01",
           "RMR-TOK-01", "RMR-TOK-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(3 * PAGE_SIZE);
    auto broken = platform::with_hole(target, 0, 1000, 24, 2000);
    auto made = session().create_mr(r.pair.pd, false);
    ASSERT_TRUE(made.object);
    Done refused = session().register_mr(made.object, broken.head(), broken.byte_count(),
                                         NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_INVALID_PARAMETER, refused.final_status);
    // Still unregistered: a valid registration of the same MR is not a second registration.
    auto good = platform::describe(target, 0, 3 * PAGE_SIZE);
    ASSERT_STATUS(STATUS_SUCCESS, session()
                                      .register_mr(made.object, good.head(), 3 * PAGE_SIZE,
                                                   NDK_MR_FLAG_ALLOW_REMOTE_WRITE)
                                      .final_status);
    NDKCT_RULE("RMR-PRE-01", "RMR-TOK-01",
               "RMR-TOK-02");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS,
                  r.peer_write(address_of(target, 990), session().remote_token(made.object), 64));
    NDKCT_RULE("RMR-ST-04", "RMR-MDL-01", "RMR-PRE-01");  // what the rest of the test checks
    EXPECT_TRUE(same(target, 990, r.source, 0, 64));
}

NDKCT_TEST(RegisterMr, ChainBrokenAfterLengthIsAccepted, "ndk.mr.register.broken_after_length",
           "RMR-MDL-04", "RMR-LEN-03") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(6 * PAGE_SIZE);
    // Contiguous for the first 2 * PAGE_SIZE + 100 bytes, then a hole; and a misaligned joint
    // right after the registered bytes.
    auto holed = platform::with_hole(target, 0, 2 * PAGE_SIZE + 100, 50, PAGE_SIZE);
    auto joint = platform::with_misaligned_joint(target, 3 * PAGE_SIZE, PAGE_SIZE + 1, 100);
    Outcome a = register_chain(session(), r.pair.pd, holed, 2 * PAGE_SIZE + 100,
                               NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    Outcome b =
        register_chain(session(), r.pair.pd, joint, PAGE_SIZE + 1, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_TRUE(a.mr && b.mr);
    NDKCT_RULE("RMR-MDL-04", "RMR-LEN-03");  // what the rest of the test checks
    EXPECT_STATUS(STATUS_SUCCESS, a.done.final_status);
    EXPECT_STATUS(STATUS_SUCCESS, b.done.final_status);
    if (a.done.ok()) {
        EXPECT_STATUS(STATUS_SUCCESS, r.peer_write(address_of(target, 2 * PAGE_SIZE + 90),
                                                   session().remote_token(a.mr), 10));
        EXPECT_TRUE(same(target, 2 * PAGE_SIZE + 90, r.source, 0, 10));
    }
}

NDKCT_TEST(RegisterMr, LengthBeyondTheChainDoesNotRegister, "ndk.mr.register.length_beyond_chain",
           "RMR-LEN-01", "AMB-26") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = session().buffer(3 * PAGE_SIZE);
    // A short chain: 2 pages described, one byte more asked for; and a split chain one byte short.
    auto single = platform::describe(buffer, 0, 2 * PAGE_SIZE);
    const size_t pieces[] = {PAGE_SIZE, 1000};
    auto split = platform::describe_split(buffer, 0, pieces);
    for (auto* chain : {&single, &split}) {
        Outcome o = register_chain(session(), pd.object, *chain, chain->byte_count() + 1,
                                   NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        ASSERT_TRUE(o.mr);
        EXPECT_FALSE(o.done.ok()) << "a Length past the chain was registered";
        EXPECT_TRUE(NT_ERROR(o.done.final_status)) << spec::status_name(o.done.final_status);
    }
}

NDKCT_TEST(RegisterMr, LengthFromOneByteToTheWholeChainIsAccepted,
           "ndk.mr.register.length_within_chain", "RMR-LEN-03", "RMR-LEN-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDKCT_RULE("RMR-LEN-03", "RMR-LEN-01");  // what the rest of the test checks
    auto target = session().buffer(2 * PAGE_SIZE);
    auto chain = platform::describe(target, 0, 2 * PAGE_SIZE);
    for (SIZE_T length : {SIZE_T(1), SIZE_T(PAGE_SIZE), SIZE_T(2 * PAGE_SIZE)}) {
        Outcome o =
            register_chain(session(), r.pair.pd, chain, length, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        ASSERT_TRUE(o.mr);
        ASSERT_STATUS(STATUS_SUCCESS, o.done.final_status) << "Length " << length;
        // The region's last byte is reachable, the byte after it is not.
        EXPECT_STATUS(STATUS_SUCCESS, r.peer_write(address_of(target, length - 1),
                                                   session().remote_token(o.mr), 1));
        EXPECT_EQ(target.data()[length - 1], r.source.data()[0]);
    }
}

NDKCT_TEST(RegisterMr, ZeroLengthIsRefusedOrEmptyCleanly, "ndk.mr.register.zero_length",
           "MODEL-RMR-LEN-02", "RMR-LEN-03") {
    auto pd = session().create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = session().buffer(PAGE_SIZE);
    auto chain = platform::describe(buffer, 0, PAGE_SIZE);
    Outcome o = register_chain(session(), pd.object, chain, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_TRUE(o.mr);
    if (o.done.ok()) {
        EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(o.mr).final_status);
    } else {
        EXPECT_TRUE(NT_ERROR(o.done.final_status));
        EXPECT_STATUS(STATUS_SUCCESS,
                      session().register_mr(o.mr, chain.head(), PAGE_SIZE, 0).final_status);
    }
}

// ---------------------------------------------------------------- deregistration, many calls

NDKCT_TEST(RegisterMr, DeregisterEndsRemoteAccess, "ndk.mr.register.deregister_ends_access",
           "RMR-DEREG-01", "DMR-01", "RMR-TOK-01", "RMR-TOK-02") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto target = session().buffer(PAGE_SIZE);
    auto dst = session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    {
        NDKCT_RULE("RMR-TOK-01", "RMR-TOK-02");  // the access goes through the getters' tokens
        ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(address_of(target), dst.remote_token, 100));
    }
    ASSERT_STATUS(STATUS_SUCCESS, session().deregister_mr(dst.mr).final_status);
    NDKCT_RULE("RMR-DEREG-01", "DMR-01");  // what the rest of the test checks
    EXPECT_TRUE(NT_ERROR(r.peer_write(address_of(target, 2000), dst.remote_token, 100)));
    EXPECT_TRUE(seed::untouched(target, 100, PAGE_SIZE - 100));
}

NDKCT_TEST(RegisterMr, RegisterAgainAfterDeregister, "ndk.mr.register.reregister", "RMR-DEREG-01",
           "RMR-PRE-01", "RMR-TOK-02", "RMR-TOK-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto first = session().buffer(PAGE_SIZE);
    auto second = session().buffer(2 * PAGE_SIZE);
    auto made = session().create_mr(r.pair.pd, false);
    ASSERT_TRUE(made.object);
    auto c1 = platform::describe(first, 0, PAGE_SIZE);
    ASSERT_STATUS(STATUS_SUCCESS, session()
                                      .register_mr(made.object, c1.head(), PAGE_SIZE,
                                                   NDK_MR_FLAG_ALLOW_REMOTE_WRITE)
                                      .final_status);
    session().remote_token(made.object);
    ASSERT_STATUS(STATUS_SUCCESS, session().deregister_mr(made.object).final_status);
    auto c2 = platform::describe(second, 300, PAGE_SIZE);
    ASSERT_STATUS(STATUS_SUCCESS, session()
                                      .register_mr(made.object, c2.head(), PAGE_SIZE,
                                                   NDK_MR_FLAG_ALLOW_REMOTE_WRITE)
                                      .final_status);
    NDKCT_RULE("RMR-TOK-01", "RMR-TOK-02");  // the access goes through the getters' tokens
    ASSERT_STATUS(STATUS_SUCCESS,
                  r.peer_write(address_of(second, 300), session().remote_token(made.object), 500));
    NDKCT_RULE("RMR-DEREG-01", "RMR-PRE-01", "RMR-TOK-02");  // what the rest of the test checks
    EXPECT_TRUE(same(second, 300, r.source, 0, 500));
    EXPECT_TRUE(seed::untouched(first, 0, PAGE_SIZE));
}

// A second NdkRegisterMr of a registered MR is the consumer's error (RMR-PRE-01; AMB-16: any
// failure): it leaves the first registration as it was, which the peer still reads through the
// MR's local token and which deregisters. Across two nodes pair.b is on B, where the MR is made
// only at its first use there (found by ndk.property.data_path across two guests: the split
// made B's part with the refused call's MDL and Length).
NDKCT_TEST(RegisterMr, RefusedSecondRegistrationKeepsTheFirst,
           "ndk.mr.register.second_refused_keeps_first", "RMR-PRE-01", "AMB-16", "RMR-TOK-01",
           "DMR-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    auto first = session().buffer(PAGE_SIZE);
    auto second = session().buffer(2 * PAGE_SIZE);
    seed::fill(first, 0x31);
    seed::fill(second, 0x52);
    auto target = session().buffer(PAGE_SIZE);
    auto dst = session().register_buffer(r.pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    auto made = session().create_mr(r.pair.pd, false);
    ASSERT_TRUE(made.object);
    auto c1 = platform::describe(first, 0, PAGE_SIZE);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().register_mr(made.object, c1.head(), PAGE_SIZE, 0).final_status);
    UINT32 local = session().local_token(made.object);
    auto c2 = platform::describe(second, 0, 2 * PAGE_SIZE);
    NDKCT_RULE("RMR-PRE-01", "AMB-16");
    NTSTATUS again = session().register_mr(made.object, c2.head(), 2 * PAGE_SIZE, 0).final_status;
    EXPECT_TRUE(NT_ERROR(again)) << spec::status_name(again);
    NDKCT_RULE("RMR-TOK-01");  // the first registration still reaches its bytes
    static int context;
    NDK_SGE sge = Session::sge(first, 100, 200, local);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(r.pair.b, &context, {&sge, 1}, address_of(target),
                                                  dst.remote_token));
    EXPECT_STATUS(STATUS_SUCCESS, r.wait(&context));
    EXPECT_TRUE(same(target, 0, first, 100, 200));
    NDKCT_RULE("DMR-01");
    EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(made.object).final_status);
}

NDKCT_TEST(RegisterMr, ManyRegistrationsInlineOrPendingAreEachUsable, "ndk.mr.register.many",
           "RMR-ST-01", "RMR-ST-02", "RMR-CTX-01", "RMR-TOK-01", "RMR-TOK-02", "DMR-01") {
    Rig r = make_rig(session());
    ASSERT_TRUE(r.problem.empty()) << r.problem;
    NDKCT_RULE("RMR-ST-01", "RMR-ST-02", "RMR-CTX-01", "RMR-TOK-01", "RMR-TOK-02",
               "DMR-01");  // what the rest of the test checks
    auto target = session().buffer(32 * PAGE_SIZE);
    std::vector<Registered> regions;
    for (size_t i = 0; i < 32; ++i) {
        regions.push_back(session().register_buffer(r.pair.pd, target,
                                                    NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                                                    i * PAGE_SIZE + i, PAGE_SIZE - 2 * i));
        ASSERT_STATUS(STATUS_SUCCESS, regions.back().status) << "registration " << i;
    }
    for (size_t i = 0; i < regions.size(); ++i) {
        ASSERT_STATUS(STATUS_SUCCESS, r.peer_write(address_of(target, i * PAGE_SIZE + i),
                                                   regions[i].remote_token, 16))
            << "region " << i;
        EXPECT_TRUE(same(target, i * PAGE_SIZE + i, r.source, 0, 16)) << "region " << i;
    }
    for (auto& region : regions)
        EXPECT_STATUS(STATUS_SUCCESS, session().deregister_mr(region.mr).final_status);
}

NDKCT_TEST(RegisterMr, LengthUpToMaxRegistrationSizeOnly, "ndk.mr.register.max_registration_size",
           "RMR-LEN-02", "RMR-LEN-03", "MODEL-RMR-LEN-01") {
    // The reference provider is given a 64 KiB MaxRegistrationSize; another provider keeps its
    // own, and the test needs one the harness's host memory can hold.
    auto s = seed::session_with(
        GetParam(), {{"\"MaxRegistrationSize\": [0-9]+", "\"MaxRegistrationSize\": 65536"}});
    ASSERT_TRUE(s);
    SIZE_T max = s->info().MaxRegistrationSize;
    if (max > 32u * 1024 * 1024) {
        seed::finish(*s);
        GTEST_SKIP() << "not_supported: MaxRegistrationSize " << max
                     << " is more than the harness can register";
    }
    auto pd = s->create_pd();
    ASSERT_TRUE(pd.object);
    auto buffer = s->buffer(max + PAGE_SIZE);
    auto chain = platform::describe(buffer, 0, max + 1);
    auto at = s->create_mr(pd.object, false);
    auto past = s->create_mr(pd.object, false);
    ASSERT_TRUE(at.object && past.object);
    EXPECT_STATUS(
        STATUS_SUCCESS,
        s->register_mr(at.object, chain.head(), max, NDK_MR_FLAG_ALLOW_LOCAL_WRITE).final_status)
        << "Length = MaxRegistrationSize";
    Done d = s->register_mr(past.object, chain.head(), max + 1, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    EXPECT_FALSE(d.ok()) << "Length = MaxRegistrationSize + 1 was registered";
    EXPECT_TRUE(NT_ERROR(d.final_status)) << spec::status_name(d.final_status);
    seed::finish(*s);
}

NDKCT_TEST(RegisterMr, ResourceFailuresInEitherFormLeaveTheMrUnregistered,
           "ndk.mr.register.insufficient_resources", "RMR-ST-03", "RMR-ST-04", "RMR-ST-02",
           "GEN-ASYNC-02") {
    // The reference provider fails 30% of the calls that may lack resources, inline or through
    // the callback; another provider fails only when it really lacks them.
    auto s = seed::session_with(GetParam(), seed::resource_pressure(30));
    ASSERT_TRUE(s);
    auto pd = seed::until_resources([&] { return s->create_pd(); });
    ASSERT_TRUE(pd.object);
    auto buffer = s->buffer(PAGE_SIZE);
    auto chain = platform::describe(buffer, 0, PAGE_SIZE);
    for (int i = 0; i < 40; ++i) {
        auto mr = seed::until_resources([&] { return s->create_mr(pd.object, false); });
        ASSERT_TRUE(mr.object);
        Done d = s->register_mr(mr.object, chain.head(), PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        if (!d.ok()) {
            EXPECT_STATUS(STATUS_INSUFFICIENT_RESOURCES, d.final_status)
                << "a valid registration failed otherwise";
            // Not registered: registering it (when resources allow) is a first registration.
            d = seed::until_resources(
                [&] { return s->register_mr(mr.object, chain.head(), PAGE_SIZE, 0); });
            EXPECT_STATUS(STATUS_SUCCESS, d.final_status);
        }
        if (d.ok()) s->local_token(mr.object);
        s->close(mr.object);
    }
    seed::finish(*s);
}

}  // namespace
}  // namespace ndkct::conformance
