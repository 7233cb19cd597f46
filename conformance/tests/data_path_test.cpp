// Bytes really move: RDMA write, read and send through registered regions (WRT-*, RD-*, SND-*).
#include <cstring>

#include "ndkct/conformance/suite.hpp"

namespace ndkct::conformance {
namespace {

NDKCT_SUITE(DataPath);

void fill(platform::LockedBuffer& b, uint8_t seed) {
    for (size_t i = 0; i < b.size(); ++i)
        b.data()[i] = std::byte(uint8_t(i * 31 + seed));
}

NDKCT_TEST(DataPath, WriteLandsInTheRemoteRegion, "ndk.qp.write.bytes_land", "WRT-01", "RMR-FLG-03",
           "CQ-RES-02", "CQ-RES-05") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(3 * PAGE_SIZE);
    auto target = session().buffer(3 * PAGE_SIZE);
    fill(source, 7);
    auto src = session().register_buffer(pair.pd, source, 0);
    auto dst = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_STATUS(STATUS_SUCCESS, dst.status);
    NDK_SGE sge = Session::sge(source, 100, 2 * PAGE_SIZE, src.local_token);
    int context;
    ASSERT_STATUS(STATUS_SUCCESS, session().write(pair.a, &context, {&sge, 1},
                                                  reinterpret_cast<uint64_t>(target.data() + 50),
                                                  dst.remote_token));
    std::vector<NDK_RESULT_EX> results;
    {
        NDKCT_RULE("WR-10");  // the accepted write completes, once
        results = session().drain(pair.cq, 1);
        ASSERT_EQ(results.size(), 1u);
    }
    {
        NDKCT_RULE("CQ-RES-05");
        EXPECT_EQ(results[0].RequestContext, &context);
    }
    NDKCT_RULE("WRT-01");  // it succeeds, and its bytes land in the range written, nowhere else
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(target.data() + 50, source.data() + 100, 2 * PAGE_SIZE), 0);
    EXPECT_EQ(target.data()[49], std::byte{0}) << "nothing before the target range";
    EXPECT_EQ(target.data()[50 + 2 * PAGE_SIZE], std::byte{0}) << "nothing after it";
}

NDKCT_TEST(DataPath, ReadBringsTheRemoteBytes, "ndk.qp.read.bytes_land", "RD-01", "RMR-ACC-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto remote = session().buffer(2 * PAGE_SIZE);
    auto sink = session().buffer(2 * PAGE_SIZE);
    fill(remote, 3);
    auto r = session().register_buffer(pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    auto s = session().register_buffer(pair.pd, sink,
                                       NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    NDK_SGE sge = Session::sge(sink, 0, 5000, s.local_token);
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().read(pair.a, nullptr, {&sge, 1},
                                 reinterpret_cast<uint64_t>(remote.data() + 10), r.remote_token));
    NDKCT_RULE("RD-01", "RMR-ACC-01");
    auto results = session().drain(pair.cq, 1);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_STATUS(STATUS_SUCCESS, results[0].Status);
    EXPECT_EQ(std::memcmp(sink.data(), remote.data() + 10, 5000), 0);
}

NDKCT_TEST(DataPath, SendFillsThePostedReceive, "ndk.qp.send.receive", "SND-01", "RCV-03",
           "CQ-RES-01") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto out = session().buffer(PAGE_SIZE);
    auto in = session().buffer(PAGE_SIZE);
    fill(out, 9);
    auto o = session().register_buffer(pair.pd, out, 0);
    auto i = session().register_buffer(pair.pd, in, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE receive = Session::sge(in, 0, PAGE_SIZE, i.local_token);
    int receive_context, send_context;
    ASSERT_STATUS(STATUS_SUCCESS, session().receive(pair.b, &receive_context, {&receive, 1}));
    NDK_SGE send = Session::sge(out, 0, 1000, o.local_token);
    ASSERT_STATUS(STATUS_SUCCESS, session().send(pair.a, &send_context, {&send, 1}));
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    for (const auto& r : results) {
        EXPECT_STATUS(STATUS_SUCCESS, r.Status);
        if (r.RequestContext == &receive_context) {
            EXPECT_EQ(r.BytesTransferred, 1000u);
        }
    }
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 1000), 0);
}

NDKCT_TEST(DataPath, WriteWithoutRemoteWriteFailsAndLandsNothing, "ndk.qp.write.no_remote_right",
           "RMR-FLG-04", "CQ-CST-03", "FLS-02") {
    auto pair = session().loopback_pair();
    ASSERT_TRUE(pair.connected) << pair.problem;
    auto source = session().buffer(PAGE_SIZE);
    auto target = session().buffer(PAGE_SIZE);
    fill(source, 1);
    auto src = session().register_buffer(pair.pd, source, 0);
    // Local write only (0x1): 0x1 & NDK_MR_FLAG_ALLOW_REMOTE_WRITE is non-zero, yet no remote
    // right.
    auto dst = session().register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE sge = Session::sge(source, 0, 512, src.local_token);
    int first, second;
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &first, {&sge, 1},
                                  reinterpret_cast<uint64_t>(target.data()), dst.remote_token));
    ASSERT_STATUS(STATUS_SUCCESS,
                  session().write(pair.a, &second, {&sge, 1},
                                  reinterpret_cast<uint64_t>(target.data()), dst.remote_token));
    auto results = session().drain(pair.cq, 2);
    ASSERT_EQ(results.size(), 2u);
    EXPECT_TRUE(NT_ERROR(results[0].Status)) << spec::status_name(results[0].Status);
    EXPECT_STATUS(STATUS_CANCELLED, results[1].Status);
    for (size_t k = 0; k < 512; ++k)
        ASSERT_EQ(target.data()[k], std::byte{0}) << "byte " << k << " landed";
}

}  // namespace
}  // namespace ndkct::conformance
