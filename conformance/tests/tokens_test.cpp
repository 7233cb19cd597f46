// MR kinds, deregistration, tokens, the privileged token and LAM release (CMR-01, DMR-03,
// TOK-*, PTOK-*, RLAM-01, MW-02, SGE-01): each checked by bytes that land or do not.
#include <cstring>

#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::address_of;
using seed::fill;
using seed::untouched;

NDKCT_SUITE(MemoryObjects);

// CMR-01: both kinds in one PD, each used the way its kind allows, moving bytes side by side.
NDKCT_TEST(MemoryObjects, BothMrKindsWorkInOnePd, "ndk.mr.create.both_kinds_one_pd", "CMR-01") {
    seed::Mappings mappings(session());
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(2 * PAGE_SIZE);
    auto normal_target = session().buffer(PAGE_SIZE);
    auto fast_target = session().buffer(PAGE_SIZE);
    fill(source, 12);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto normal = session().register_buffer(pair.pd, normal_target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, normal.status);
    NDK_MR* fast = seed::fast_register_mr(session(), pair.pd, 1, true);
    ASSERT_TRUE(fast) << "a fast-register MR in the same PD";
    auto& m = mappings.add(fast_target);
    ASSERT_TRUE(m.ok());
    int registered, w1, w2;
    // Registered through b, the side whose memory the writes from a reach (node B on two nodes).
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().fast_register(pair.b, &registered, fast, m.pages, 0, PAGE_SIZE,
                                          seed::kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    UINT32 fast_token = session().remote_token(fast);
    NDK_SGE one = Session::sge(source, 0, 300, src.local_token);
    NDK_SGE two = Session::sge(source, PAGE_SIZE, 400, src.local_token);
    ASSERT_STATUS(
        STATUS_SUCCESS,
        session().write(pair.a, &w1, {&one, 1}, address_of(normal_target, 8), normal.remote_token));
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &w2, {&two, 1}, seed::kFarBase + 16, fast_token));
    auto results = seed::settle(session(), pair.cq, 3);
    ASSERT_EQ(results.size(), 3u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    EXPECT_EQ(std::memcmp(normal_target.data() + 8, source.data(), 300), 0);
    EXPECT_EQ(std::memcmp(fast_target.data() + 16, source.data() + PAGE_SIZE, 400), 0);
}

// DMR-03: after NdkDeregisterMr the MR object is still open: it registers again, its new
// tokens work, and it is then closed.
NDKCT_TEST(MemoryObjects, DeregisteredMrStaysOpen, "ndk.mr.deregister.object_stays_open", "DMR-03",
           "TOK-01", "TOK-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto first = session().buffer(PAGE_SIZE);
    auto second = session().buffer(PAGE_SIZE);
    auto source = session().buffer(PAGE_SIZE);
    fill(source, 3);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto dst = session().register_buffer(pair.pd, first, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    Done d = session().deregister_mr(dst.mr);
    ASSERT_TRUE(d.ok()) << spec::status_name(d.final_status);
    auto chain = platform::describe(second, 0, PAGE_SIZE);
    Done again =
        session().register_mr(dst.mr, chain.head(), PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_TRUE(again.ok()) << "the deregistered MR must register again: "
                            << spec::status_name(again.final_status);
    UINT32 token = session().remote_token(dst.mr);
    NDK_SGE sge = Session::sge(source, 0, 256, src.local_token);
    int context;
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &context, {&sge, 1}, address_of(second), token));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    NDKCT_RULE("DMR-03", "TOK-01", "TOK-02");  // what the rest of the test checks
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(second.data(), source.data(), 256), 0);
    EXPECT_TRUE(untouched(first, 0, PAGE_SIZE)) << "the old registration's buffer was written";
    Done closed = session().close(dst.mr);
    EXPECT_STATUS(STATUS_SUCCESS, closed.final_status);
}

// TOK-01..03: the getters return the same token every time, with no status; the consumer passes
// the values unchanged (local in SGEs, remote as RemoteToken of a read and a write) and they
// work exactly as produced.
NDKCT_TEST(MemoryObjects, TokensWorkExactlyAsReturned, "ndk.mr.tokens.used_as_returned", "TOK-01",
           "TOK-02", "TOK-03") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto local = session().buffer(PAGE_SIZE);
    auto remote = session().buffer(PAGE_SIZE);
    fill(local, 5);
    fill(remote, 6);
    auto l = session().register_buffer(pair.pd, local,
                                       NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    auto r = session().register_buffer(
        pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ);
    ASSERT_STATUS(STATUS_SUCCESS, r.status);
    EXPECT_EQ(session().local_token(l.mr), l.local_token) << "TOK-01: the local token changed";
    EXPECT_EQ(session().remote_token(r.mr), r.remote_token) << "TOK-02: the remote token changed";
    std::vector<std::byte> expected(remote.data() + 100, remote.data() + 600);
    NDK_SGE sink = Session::sge(local, 2000, 500, l.local_token);
    int read_context, write_context;
    NDKCT_RULE("TOK-01", "TOK-02", "TOK-03");  // the read goes through the tokens as returned
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().read(pair.a, &read_context, {&sink, 1}, address_of(remote, 100),
                                 r.remote_token, NDK_OP_FLAG_RDMA_READ_SINK));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(local.data() + 2000, expected.data(), 500), 0);
    NDK_SGE from = Session::sge(local, 0, 700, l.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &write_context, {&from, 1},
                                                  address_of(remote, 3000), r.remote_token));
    results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    NDKCT_RULE("TOK-01", "TOK-02", "TOK-03");  // what the rest of the test checks
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(remote.data() + 3000, local.data(), 700), 0);
}

// RMR-TOK-01/02: each token reaches the region the way it is meant for, and a failure names the
// token rule rather than the transfer that showed it. The local tokens alone first (sends out of
// one region into receives posted on another, and on a region registered for local write only:
// nothing remote involved); then, the local tokens proven, the peer's write and read with the
// remote token reach exactly the bytes addressed. Last, the peer cannot write the local-only
// region with its remote token (which errs the QP, so it comes last).
NDKCT_TEST(MemoryObjects, LocalTokenWorksLocallyAndRemoteTokenFromThePeer,
           "ndk.mr.tokens.local_and_remote", "RMR-TOK-01", "RMR-TOK-02", "TOK-03", "RMR-FLG-04") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    auto region = session().buffer(2 * PAGE_SIZE);
    auto sink = session().buffer(PAGE_SIZE);
    auto local_only = session().buffer(PAGE_SIZE);
    fill(source, 9);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto reg =
        session().register_buffer(pair.pd, region,
                                  NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE |
                                      NDK_MR_FLAG_ALLOW_REMOTE_READ);
    auto snk = session().register_buffer(
        pair.pd, sink, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    auto loc = session().register_buffer(pair.pd, local_only, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, src.status);
    ASSERT_STATUS(STATUS_SUCCESS, reg.status);
    ASSERT_STATUS(STATUS_SUCCESS, snk.status);
    ASSERT_STATUS(STATUS_SUCCESS, loc.status);
    {
        NDKCT_RULE("RMR-TOK-01");
        int received, sent;
        NDK_SGE into = Session::sge(region, PAGE_SIZE + 100, 200, reg.local_token);
        NDK_SGE from = Session::sge(source, 0, 200, src.local_token);
        ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &received, {&into, 1}));
        ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &sent, {&from, 1}));
        auto results = seed::settle(session(), pair.cq, 2);
        ASSERT_EQ(results.size(), 2u);
        for (const auto& r : results)
            EXPECT_STATUS(STATUS_SUCCESS, r.Status);
        EXPECT_EQ(std::memcmp(region.data() + PAGE_SIZE + 100, source.data(), 200), 0);
    }
    {
        NDKCT_RULE("RMR-TOK-01");
        int received, sent;
        NDK_SGE into = Session::sge(local_only, 0, 64, loc.local_token);
        NDK_SGE from = Session::sge(source, 0, 64, src.local_token);
        ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &received, {&into, 1}));
        ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &sent, {&from, 1}));
        auto results = seed::settle(session(), pair.cq, 2);
        ASSERT_EQ(results.size(), 2u);
        for (const auto& r : results)
            EXPECT_STATUS(STATUS_SUCCESS, r.Status);
        EXPECT_EQ(std::memcmp(local_only.data(), source.data(), 64), 0);
    }
    {
        NDKCT_RULE("RMR-TOK-02", "TOK-03");
        int written, read;
        NDK_SGE from = Session::sge(source, 0, 300, src.local_token);
        ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &written, {&from, 1},
                                                      address_of(region, 1000), reg.remote_token));
        NDK_SGE into = Session::sge(sink, 0, 300, snk.local_token);
        ASSERT_STATUS(STATUS_SUCCESS,
                      session().read(pair.a, &read, {&into, 1}, address_of(region, 1000),
                                     reg.remote_token, NDK_OP_FLAG_RDMA_READ_SINK));
        auto results = seed::settle(session(), pair.cq, 2);
        ASSERT_EQ(results.size(), 2u);
        for (const auto& r : results)
            EXPECT_STATUS(STATUS_SUCCESS, r.Status);
        EXPECT_EQ(std::memcmp(region.data() + 1000, source.data(), 300), 0);
        EXPECT_EQ(std::memcmp(sink.data(), source.data(), 300), 0);
        EXPECT_TRUE(untouched(region, 0, 1000));
        EXPECT_TRUE(untouched(region, 1300, PAGE_SIZE - 1300));
    }
    NDKCT_RULE("RMR-FLG-04");
    int denied;
    NDK_SGE from = Session::sge(source, 0, 128, src.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &denied, {&from, 1},
                                                  address_of(local_only, 512), loc.remote_token));
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(NT_ERROR(results[0].Status)) << spec::status_name(results[0].Status);
    EXPECT_TRUE(untouched(local_only, 512, 128));
}

// PTOK-01, SGE-01: the privileged token names NdkBuildLam logical addresses with local read
// and local write access and no registration: a send from such a buffer, a receive into one.
NDKCT_TEST(MemoryObjects, PrivilegedTokenAddressesLogicalPages, "ndk.pd.privileged_token.local_use",
           "PTOK-01", "SGE-01") {
    seed::Mappings mappings(session());
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto out = session().buffer(2 * PAGE_SIZE);
    auto in = session().buffer(2 * PAGE_SIZE);
    fill(out, 41);
    auto& mo = mappings.add(out, 100, PAGE_SIZE + 500);  // crosses a page, starts mid-page
    auto& mi = mappings.add(in);
    ASSERT_TRUE(mo.ok() && mi.ok());
    UINT32 token = session().privileged_token(pair.pd);
    EXPECT_EQ(session().privileged_token(pair.pd), token) << "the privileged token changed";
    // The send's SGEs follow the mapping's pages (one SGE per page piece).
    ULONG first_piece = PAGE_SIZE - 100;
    NDK_SGE send[2] = {
        seed::sge_at(static_cast<uint64_t>(mo.pages[0].QuadPart) + mo.lam.fbo, first_piece, token),
        seed::sge_at(static_cast<uint64_t>(mo.pages[1].QuadPart), 600, token)};
    NDK_SGE receive[2] = {
        seed::sge_at(static_cast<uint64_t>(mi.pages[0].QuadPart) + mi.lam.fbo, PAGE_SIZE, token),
        seed::sge_at(static_cast<uint64_t>(mi.pages[1].QuadPart), PAGE_SIZE, token)};
    int rc, sc;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &rc, receive));
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &sc, send));
    auto results = seed::settle(session(), pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results)
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
    ULONG total = first_piece + 600;
    EXPECT_EQ(std::memcmp(in.data(), out.data() + 100, total), 0);
    EXPECT_TRUE(untouched(in, total, 2 * PAGE_SIZE - total));
}

// PTOK-02: the privileged token grants no remote access: a write and a read that name it as
// RemoteToken fail, and nothing lands.
NDKCT_TEST(MemoryObjects, PrivilegedTokenGrantsNoRemoteAccess,
           "ndk.pd.privileged_token.no_remote_access", "PTOK-02") {
    seed::Mappings mappings(session());
    for (bool write : {true, false}) {
        SCOPED_TRACE(write ? "RDMA write" : "RDMA read");
        auto pair = session().loopback_pair();
        ASSERT_TRUE(pair.connected) << pair.problem;
        auto victim = session().buffer(PAGE_SIZE);
        auto local = session().buffer(PAGE_SIZE);
        fill(local, 8);
        if (!write) fill(victim, 9);
        auto& m = mappings.add(victim);
        ASSERT_TRUE(m.ok());
        auto l = session().register_buffer(
            pair.pd, local, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
        UINT32 token = session().privileged_token(pair.pd);
        uint64_t address = static_cast<uint64_t>(m.pages[0].QuadPart) + m.lam.fbo;
        std::vector<std::byte> before(local.data(), local.data() + PAGE_SIZE);
        NDK_SGE sge = Session::sge(local, 0, 256, l.local_token);
        int context;
        NTSTATUS posted = write ? session().write(pair.a, &context, {&sge, 1}, address, token)
                                : session().read(pair.a, &context, {&sge, 1}, address, token,
                                                 NDK_OP_FLAG_RDMA_READ_SINK);
        if (NT_SUCCESS(posted)) {
            auto results = session().drain(pair.cq, 1);
            ASSERT_EQ(results.size(), 1u);
            EXPECT_TRUE(NT_ERROR(results[0].Status))
                << "a remote access through the privileged token completed with "
                << spec::status_name(results[0].Status);
        }
        if (write)
            EXPECT_TRUE(untouched(victim, 0, PAGE_SIZE)) << "bytes landed";
        else
            EXPECT_EQ(std::memcmp(local.data(), before.data(), 256), 0) << "bytes were read";
    }
}

// RLAM-01: NdkReleaseLam is synchronous and frees the mapping: with a provider limited to a few
// live mappings, building and releasing many more in turn keeps working.
NDKCT_TEST(MemoryObjects, ReleasedMappingsAreFreed, "ndk.lam.release.frees", "RLAM-01") {
    auto s =
        seed::session_with(GetParam(), {{"\"max_lam_count\": [0-9]+", "\"max_lam_count\": 4"}});
    ASSERT_TRUE(s);
    auto buffer = s->buffer(2 * PAGE_SIZE);
    for (int k = 0; k < 40; ++k) {
        auto m = seed::map_buffer(*s, buffer);
        ASSERT_TRUE(m.ok()) << "mapping " << k << ": "
                            << spec::status_name(m.lam.done.final_status);
        ASSERT_EQ(m.pages.size(), 2u);
        s->release_lam(m.lam);
    }
    seed::finish(*s);
}

// MW-02: the MW's remote token is readable once NdkBind returned, before its completion, and
// it is the token that reaches the window.
NDKCT_TEST(MemoryObjects, WindowTokenReadableWhenBindReturns, "ndk.mw.token.after_bind_returns",
           "MW-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto region = session().buffer(2 * PAGE_SIZE);
    auto source = session().buffer(PAGE_SIZE);
    fill(source, 17);
    auto r = session().register_buffer(pair.pd, region, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto s = session().register_buffer(pair.pd, source, 0);
    auto mw = session().create_mw(pair.pd).object;
    ASSERT_TRUE(mw);
    int bind_context, write_context;
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().bind(pair.a, &bind_context, r.mr, mw, address_of(region, PAGE_SIZE),
                                 PAGE_SIZE, NDK_OP_FLAG_ALLOW_REMOTE_WRITE));
    UINT32 token = session().remote_token(mw);  // before the bind's completion was polled
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(session().remote_token(mw), token) << "the window's token changed after completion";
    NDK_SGE sge = Session::sge(source, 0, 512, s.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.b, &write_context, {&sge, 1},
                                                  address_of(region, PAGE_SIZE + 64), token));
    results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(region.data() + PAGE_SIZE + 64, source.data(), 512), 0);
}

}  // namespace
}  // namespace ndkct::conformance
