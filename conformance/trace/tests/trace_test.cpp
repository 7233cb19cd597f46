// The reader, the capture library's ring and the judge, on traces captured here from the
// reference provider: damage of every kind gives a clean error naming the offset, the part
// before it is still judged; a full ring is counted and said; the capture forwards outcomes
// untouched; the reader takes bytes as they come.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <regex>

#include "ndkct/capture.h"
#include "ndkct/conformance/capture_host.hpp"
#include "ndkct/conformance/session.hpp"
#include "ndkct/spec/profile.hpp"
#include "ndkct/trace/decode.hpp"
#include "ndkct/trace/dump.hpp"
#include "ndkct/trace/judge.hpp"
#include "ndkct/trace/reader.hpp"

namespace ndkct::trace {
namespace {

namespace fs = std::filesystem;
using conformance::CaptureSettings;
using conformance::Session;
using conformance::SessionOptions;

std::vector<uint8_t> read_all(const fs::path& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A session on the reference provider with a connected pair and two 2-page buffers (the source
// filled with bytes i * 7), `workload` run on them, captured into a fresh folder; returns the
// trace's bytes.
using Workload =
    std::function<void(Session&, const conformance::LoopbackPair&, platform::LockedBuffer& source,
                       platform::LockedBuffer& target)>;
// live_clean: the live oracle finds nothing (a workload may break a rule on purpose).
std::vector<uint8_t> capture_workload(const std::string& name, uint32_t flags, size_t arena_pages,
                                      const Workload& workload, uint32_t digest_limit = 0,
                                      bool live_clean = true) {
    fs::path dir = fs::temp_directory_path() / ("ndkct-trace-test-" + std::to_string(::getpid()));
    fs::remove_all(dir / name);
    SessionOptions options;
    options.capture = CaptureSettings{(dir / name).string(), flags};
    options.capture->digest_limit = digest_limit;
    if (arena_pages) options.arena_pages = arena_pages;
    {
        conformance::set_capture_label(name);
        Session s(conformance::parse_provider_specs("model:seed=3").at(0), options);
        auto pair = s.loopback_pair();
        EXPECT_TRUE(pair.connected) << pair.problem;
        auto source = s.buffer(2 * PAGE_SIZE);
        auto target = s.buffer(2 * PAGE_SIZE);
        for (size_t i = 0; i < source.size(); ++i)
            source.data()[i] = static_cast<std::byte>(i * 7);
        workload(s, pair, source, target);
        EXPECT_EQ(live_clean, s.close_adapter().ok());
    }
    auto files = std::vector<fs::path>(fs::directory_iterator(dir / name), {});
    EXPECT_EQ(1u, files.size());
    return files.empty() ? std::vector<uint8_t>{} : read_all(files[0]);
}

// A session that registers memory, connects two QPs, writes and reads back, captured.
std::vector<uint8_t> capture_session(const std::string& name, uint32_t flags = 0,
                                     size_t arena_pages = 0) {
    return capture_workload(
        name, flags, arena_pages,
        [](Session& s, const conformance::LoopbackPair& pair, platform::LockedBuffer& source,
           platform::LockedBuffer& target) {
            auto src = s.register_buffer(pair.pd, source, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
            auto dst = s.register_buffer(
                pair.pd, target, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
            for (int i = 0; i < 8; ++i) {
                NDK_SGE sge = Session::sge(source, 100 * i, 1000, src.local_token);
                int context;
                EXPECT_EQ(
                    STATUS_SUCCESS,
                    s.write(pair.a, &context, {&sge, 1},
                            reinterpret_cast<uint64_t>(target.data()) + 50 * i, dst.remote_token));
                EXPECT_EQ(1u, s.drain(pair.cq, 1).size());
            }
        });
}

// A capture host whose trace goes into `file` (the host's Write appends to it).
NDKCAP_HOST vector_host(std::vector<uint8_t>& file) {
    auto write = [](PVOID ctx, const VOID* p, SIZE_T n) -> LONG {
        auto* out = static_cast<std::vector<uint8_t>*>(ctx);
        out->insert(out->end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
        return 0;
    };
    return conformance::CaptureHost::host(&file, write, nullptr);
}

// The records of a trace. A record's body lives in its Reader, gone on return: `bodies`, when
// given, keeps a copy of each, and the records point at those.
std::vector<Record> records_of(const std::vector<uint8_t>& bytes,
                               std::deque<std::vector<uint8_t>>* bodies = nullptr) {
    Reader reader;
    reader.feed(bytes.data(), bytes.size());
    reader.finish();
    std::vector<Record> out;
    Record r;
    while (reader.next(r) == Reader::Next::record) {
        if (bodies) {
            bodies->emplace_back(r.body, r.body + r.body_size);
            r.body = bodies->back().data();
        } else {
            r.body = nullptr;
            r.body_size = 0;
        }
        out.push_back(r);
    }
    return out;
}

// Every record of a trace as `ndkct trace dump` prints it (a record's body lives in its reader:
// dumped while the reader is there).
std::vector<std::string> dumped_records(const std::vector<uint8_t>& bytes) {
    Reader reader;
    reader.feed(bytes.data(), bytes.size());
    reader.finish();
    std::vector<std::string> out;
    Record r;
    while (reader.next(r) == Reader::Next::record)
        out.push_back(dump_record(r));
    return out;
}

TEST(Trace, ACapturedSessionChecksCleanAndEveryRecordMatchesTheDefinition) {
    auto bytes = capture_session("clean");
    ASSERT_FALSE(bytes.empty());
    Header header;
    Verdicts v = check(bytes, {}, &header);
    EXPECT_TRUE(v.stopped.empty()) << v.stopped;
    EXPECT_TRUE(v.findings.empty()) << v.findings[0].violation.describe();
    EXPECT_TRUE(v.ended);
    EXPECT_GT(v.calls, 30u);
    EXPECT_EQ("clean", header.label);
    EXPECT_EQ("ndkct-model", header.provider_name);
    EXPECT_TRUE(header.adapter_info.has_value());
    EXPECT_TRUE(header.capture_flags & NDKT_CAPTURE_DIGESTS);
    EXPECT_EQ("", check_definition());
    Reader reader;
    reader.feed(bytes.data(), bytes.size());
    reader.finish();
    Record r;
    size_t n = 0;
    while (reader.next(r) == Reader::Next::record) {
        EXPECT_EQ("", check_against_definition(r)) << dump_record(r);
        ++n;
    }
    EXPECT_EQ(v.records, n);
}

// A dump names what the NDKPI names: a result's Type, a region's and a request's Flags, where
// the bare numbers would send the reader to ndkpi.h.
TEST(Trace, ADumpNamesTypesAndFlags) {
    auto bytes = capture_session("names");
    ASSERT_FALSE(bytes.empty());
    std::string all;
    for (const std::string& text : dumped_records(bytes))
        all += text + "\n";
    EXPECT_NE(std::string::npos, all.find("mr_flags 0x5 (ALLOW_REMOTE_WRITE)")) << all;
    EXPECT_NE(std::string::npos, all.find("mr_flags 0x1 (ALLOW_LOCAL_WRITE)")) << all;
    EXPECT_NE(std::string::npos, all.find("type 64 (NdkOperationTypeWrite)")) << all;
    EXPECT_NE(std::string::npos, all.find("op_flags 0x0,")) << all;
}

// Bytes in as they come: one at a time gives the same records as all at once.
TEST(Trace, ASmallArenaStillGetsItsShadow) {
    // The property tests run the provider over a 64-page arena: their traces announce a PFN
    // space of 64, and the judge must still reserve shadow pages for it (it once refused).
    auto bytes = capture_session("small", 0, 64);
    ASSERT_FALSE(bytes.empty());
    Header header;
    Verdicts v = check(bytes, {}, &header);
    EXPECT_EQ(64u, header.pfn_space);
    EXPECT_TRUE(v.stopped.empty()) << v.stopped;
    EXPECT_TRUE(v.findings.empty()) << v.findings[0].violation.describe();
    EXPECT_TRUE(v.ended);
    EXPECT_GT(v.calls, 30u);
}

TEST(Trace, TheReaderTakesBytesAsTheyArrive) {
    auto bytes = capture_session("incremental");
    auto whole = records_of(bytes);
    Reader reader;
    std::vector<std::pair<uint16_t, uint64_t>> seen;
    Record r;
    for (size_t i = 0; i <= bytes.size(); ++i) {
        if (i < bytes.size())
            reader.feed(&bytes[i], 1);
        else
            reader.finish();
        for (;;) {
            auto next = reader.next(r);
            if (next != Reader::Next::record) {
                ASSERT_NE(Reader::Next::error, next) << reader.problem()->describe();
                break;
            }
            seen.emplace_back(r.head.kind, r.head.seq);
        }
    }
    ASSERT_EQ(whole.size(), seen.size());
    for (size_t i = 0; i < whole.size(); ++i)
        EXPECT_EQ(whole[i].head.seq, seen[i].second);
}

// Cut at every frame boundary and inside frames: a truncation error naming the offset, and
// every record before the cut judged.
TEST(Trace, ATruncatedTraceIsJudgedUpToTheCutAndSaysWhere) {
    auto bytes = capture_session("truncated");
    size_t total = records_of(bytes).size();
    for (size_t cut :
         {size_t{3}, size_t{20}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
        std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(cut));
        Verdicts v = check(part);
        ASSERT_FALSE(v.stopped.empty()) << "cut at " << cut;
        EXPECT_NE(std::string::npos, v.stopped.find("offset ")) << v.stopped;
        EXPECT_NE(std::string::npos, v.stopped.find("truncated")) << v.stopped;
        EXPECT_LE(v.records, total);
        EXPECT_FALSE(v.failed()) << "a clean trace cut short is not a provider failure";
    }
}

TEST(Trace, ACorruptFrameStopsTheJudgeAtItsOffset) {
    auto bytes = capture_session("corrupt");
    Reader reader;
    reader.feed(bytes.data(), bytes.size());
    reader.finish();
    Record r;
    std::vector<uint64_t> offsets;
    while (reader.next(r) == Reader::Next::record)
        offsets.push_back(r.offset);
    ASSERT_GT(offsets.size(), 10u);
    auto broken = bytes;
    broken[offsets[offsets.size() / 2] + 2] ^= 0x10;  // one bit in a record's flags
    Verdicts v = check(broken);
    ASSERT_FALSE(v.stopped.empty());
    EXPECT_NE(std::string::npos, v.stopped.find("CRC")) << v.stopped;
    EXPECT_NE(std::string::npos, v.stopped.find("offset")) << v.stopped;
}

TEST(Trace, AFutureVersionIsRefusedNamingBothVersions) {
    auto bytes = capture_session("future");
    bytes[8] = 2;  // major 2, minor 0
    bytes[10] = 0;
    Verdicts v = check(bytes);
    EXPECT_NE(std::string::npos, v.stopped.find("offset 8")) << v.stopped;
    EXPECT_NE(std::string::npos, v.stopped.find("2.0")) << v.stopped;
    EXPECT_EQ(0u, v.records);
}

TEST(Trace, NotATraceAndEmptyFilesGetCleanErrors) {
    std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!',
                                 '!', '!', '!', '!', '!', '!', '!', '!', '!', '!', '!', '!'};
    EXPECT_NE(std::string::npos, check(text).stopped.find("does not start with"))
        << check(text).stopped;
    EXPECT_NE(std::string::npos, check({}).stopped.find("empty"));
    EXPECT_NE(std::string::npos, check_file("/nonexistent/x.ndktrace").stopped.find("cannot read"));
    // Shorter than a header: a text is still no trace; the magic's start is a cut-off trace.
    std::vector<uint8_t> short_text = {'h', 'e', 'l', 'l', 'o', '\n'};
    EXPECT_NE(std::string::npos, check(short_text).stopped.find("does not start with"))
        << check(short_text).stopped;
    std::vector<uint8_t> short_trace = {'N', 'D', 'K', 'T'};
    EXPECT_NE(std::string::npos, check(short_trace).stopped.find("inside the trace header"))
        << check(short_trace).stopped;
}

// The fuzz-style test: truncations and bit flips anywhere give a verdict or a clean stop, never
// a crash, an exception or a hang (i18's fuzz target drives the same entry point, check()).
TEST(Trace, TruncatedAndBitFlippedTracesOnlyEverGiveCleanErrors) {
    auto bytes = capture_session("fuzz");
    std::mt19937_64 rng(20261124);
    for (int round = 0; round < 400; ++round) {
        auto mutant = bytes;
        int kind = round % 4;
        if (kind == 0 || kind == 3) mutant.resize(rng() % (mutant.size() + 1));
        int flips = 1 + static_cast<int>(rng() % 8);
        for (int f = 0; kind != 0 && f < flips && !mutant.empty(); ++f)
            mutant[rng() % mutant.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        Verdicts v = check(mutant);
        if (!v.stopped.empty() && v.records < 5) {
            EXPECT_NE(std::string::npos, v.stopped.find("offset")) << v.stopped;
        }
    }
}

// The ring is full while nothing drains it: the loss is counted, written where it happened, and
// the judge says it stops there.
TEST(Trace, AFullRingIsCountedAndWrittenIntoTheTrace) {
    Session s(conformance::parse_provider_specs("model:seed=3").at(0));
    std::vector<uint8_t> file;
    NDKCAP_HOST host = vector_host(file);
    NDKCAP_OPTIONS options{};
    options.Size = sizeof options;
    options.RingBlocks = 2;
    options.BlockBytes = 4096;
    options.Label = "full ring";
    NDKCAP* capture = nullptr;
    ASSERT_EQ(STATUS_SUCCESS, NdkCaptureOpen(&host, &options, &capture));
    // A second adapter of the session's provider, captured.
    ASSERT_EQ(STATUS_SUCCESS, NdkCaptureAttach(capture, s.adapter()));
    NDK_ADAPTER_INFO info;
    for (int i = 0; i < 200; ++i) {  // 200 records of ~160 bytes: more than 8 KiB
        ULONG size = sizeof info;
        ASSERT_EQ(STATUS_SUCCESS,
                  s.adapter()->Dispatch->NdkQueryAdapterInfo(s.adapter(), &info, &size));
    }
    NDKCAP_STATS stats;
    NdkCaptureGetStats(capture, &stats);
    EXPECT_GT(stats.LostRecords, 100u);
    NdkCaptureDrain(capture);
    for (int i = 0; i < 3; ++i) {
        ULONG size = sizeof info;
        s.adapter()->Dispatch->NdkQueryAdapterInfo(s.adapter(), &info, &size);
    }
    // The session's own close goes through the interposed tables: detach by closing the
    // capture only after the session closed its adapter.
    s.close_adapter();
    ASSERT_EQ(STATUS_SUCCESS, NdkCaptureClose(capture));
    bool loss = false;
    int queries_after = 0;  // once drained, the ring keeps records again (it once lost them all)
    std::deque<std::vector<uint8_t>> bodies;
    for (const Record& r : records_of(file, &bodies)) {
        if (r.head.kind == NDKT_META_LOSS) {
            Body b(r);
            EXPECT_GT(b.u64(), 100u);
            loss = true;
        }
        if (loss && r.head.kind == (NDKT_KIND_CALL | NDKT_FN_QUERY_ADAPTER_INFO)) ++queries_after;
    }
    EXPECT_TRUE(loss);
    EXPECT_EQ(3, queries_after);
    Verdicts v = check(file);
    EXPECT_NE(std::string::npos, v.stopped.find("lost")) << v.stopped;
}

TEST(Trace, TheDigestIsTheOneThePageDefines) {
    // NDKT64 of "" and of 9 bytes, computed by hand from spec/TRACE.md's formula.
    auto by_hand = [](const std::vector<uint8_t>& b) {
        uint64_t lane[4];
        for (uint64_t j = 0; j < 4; ++j)
            lane[j] = (b.size() + j) * NDKT_DIGEST_K1;
        for (size_t i = 0; i < b.size(); i += 8) {
            uint64_t w = 0;
            for (size_t k = 0; k < 8 && i + k < b.size(); ++k)
                w |= uint64_t{b[i + k]} << (8 * k);
            uint64_t& h = lane[(i / 8) % 4];
            h = (h ^ w) * NDKT_DIGEST_K2;
            h ^= h >> 31;
        }
        uint64_t h = lane[0];
        for (int j = 1; j < 4; ++j) {
            h = (h ^ lane[j]) * NDKT_DIGEST_K2;
            h ^= h >> 31;
        }
        h ^= h >> 33;
        h *= NDKT_DIGEST_K1;
        h ^= h >> 29;
        return h;
    };
    std::vector<uint8_t> nine = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    EXPECT_EQ(by_hand({}), NdkCaptureDigest(nullptr, 0));
    EXPECT_EQ(by_hand(nine), NdkCaptureDigest(nine.data(), nine.size()));
    EXPECT_EQ(by_hand(nine), digest(nine));
    // Every length up to 200 (all lane phases, tails and the 32-byte blocks) and the page's
    // test vectors (spec/TRACE.md, "Data digests").
    std::vector<uint8_t> bytes(200);
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = static_cast<uint8_t>(i * 7 + 1);
    for (size_t n = 0; n <= bytes.size(); ++n) {
        std::vector<uint8_t> b(bytes.begin(), bytes.begin() + static_cast<long>(n));
        ASSERT_EQ(by_hand(b), NdkCaptureDigest(b.data(), b.size())) << n;
        ASSERT_EQ(by_hand(b), digest(b)) << n;
    }
    const std::string digits = "123456789";
    std::vector<uint8_t> hundred(100);
    for (size_t i = 0; i < hundred.size(); ++i)
        hundred[i] = static_cast<uint8_t>(i);
    EXPECT_EQ(0xCF8D231C474B4747ull, NdkCaptureDigest(nullptr, 0));
    EXPECT_EQ(0xD473A888D0C3157Full, NdkCaptureDigest(digits.data(), digits.size()));
    EXPECT_EQ(0xA9E415F7B86EDB69ull, NdkCaptureDigest(hundred.data(), hundred.size()));
}

// Small DATA blocks are copied into the ring during the call and digested by the drain; the
// trace must be the one the in-call digest writes (NDKCAP_DIGEST_IN_CALL): the same digests of
// the same bytes, and the sources' digests those of the bytes posted.
TEST(Trace, DigestsTheDrainTakesAreTheOnesTheCallWouldTake) {
    auto digests_of = [](const std::vector<uint8_t>& bytes) {
        std::vector<std::string> out;
        static const std::regex data("digest 0x[0-9a-fA-F]+, [0-9]+ bytes");
        for (const std::string& text : dumped_records(bytes))
            for (std::sregex_iterator i(text.begin(), text.end(), data), end; i != end; ++i)
                out.push_back(i->str());
        return out;
    };
    auto deferred = capture_session("deferred");
    auto in_call = capture_session("in-call", NDKCAP_DIGEST_IN_CALL);
    ASSERT_FALSE(deferred.empty());
    ASSERT_FALSE(in_call.empty());
    auto a = digests_of(deferred), b = digests_of(in_call);
    EXPECT_EQ(a, b);
    ASSERT_GE(a.size(), 16u);  // 8 sources and 8 landings of 1000 bytes
    // The first write's source: bytes i * 7 at offset 0 of the source buffer, 1000 of them.
    std::vector<uint8_t> first(1000);
    for (size_t i = 0; i < first.size(); ++i)
        first[i] = static_cast<uint8_t>(i * 7);
    char want[64];
    std::snprintf(want, sizeof want, "digest 0x%llx, 1000 bytes",
                  static_cast<unsigned long long>(NdkCaptureDigest(first.data(), first.size())));
    bool found = std::find(a.begin(), a.end(), std::string(want)) != a.end();
    EXPECT_TRUE(found) << want;
    for (const auto& bytes : {deferred, in_call}) {
        Verdicts v = check(bytes);
        EXPECT_TRUE(v.stopped.empty()) << v.stopped;
        EXPECT_TRUE(v.findings.empty()) << v.findings[0].violation.describe();
    }
}

// A data path's every shape, captured: writes within a page and across pages, sends with
// receives waiting (one of two SGEs, one SILENT_SUCCESS before a signaled one), a read, a
// send-and-invalidate; polled through NdkGetCqResultsEx (the harness) and NdkGetCqResults.
std::vector<uint8_t> capture_data_path(const std::string& name, uint32_t flags) {
    return capture_workload(
        name, flags, 0,
        [](Session& s, const conformance::LoopbackPair& pair, platform::LockedBuffer& source,
           platform::LockedBuffer& target) {
            auto src = s.register_buffer(pair.pd, source, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
            auto dst =
                s.register_buffer(pair.pd, target,
                                  NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE |
                                      NDK_MR_FLAG_ALLOW_REMOTE_READ | NDK_MR_FLAG_RDMA_READ_SINK);
            uint64_t remote = reinterpret_cast<uint64_t>(target.data());
            auto poll_plain = [&](size_t want) {
                NDK_RESULT results[8];
                size_t got = 0;
                for (int spin = 0; got < want && spin < 100000; ++spin)
                    got += pair.cq->Dispatch->NdkGetCqResults(pair.cq, results, 8);
                EXPECT_EQ(want, got);
            };
            for (int i = 0; i < 4; ++i) {  // within a page; across the pages (the general path)
                NDK_SGE sge =
                    Session::sge(source, 100 * i + (i == 3 ? 3500 : 0), 1000, src.local_token);
                EXPECT_EQ(STATUS_SUCCESS, s.write(pair.a, reinterpret_cast<void*>(uintptr_t(i + 1)),
                                                  {&sge, 1}, remote + 50 * i, dst.remote_token));
                if (i % 2)
                    poll_plain(1);
                else
                    EXPECT_EQ(1u, s.drain(pair.cq, 1).size());
            }
            for (int i = 0; i < 3; ++i) {
                NDK_SGE into = Session::sge(target, 512 * i, 512, dst.local_token);
                EXPECT_EQ(
                    STATUS_SUCCESS,
                    s.receive(pair.b, reinterpret_cast<void*>(uintptr_t(16 + i)), {&into, 1}));
            }
            NDK_SGE one = Session::sge(source, 64, 200, src.local_token);
            NDK_SGE two[2] = {Session::sge(source, 0, 100, src.local_token),
                              Session::sge(source, 300, 100, src.local_token)};
            EXPECT_EQ(STATUS_SUCCESS, s.send(pair.a, reinterpret_cast<void*>(uintptr_t(32)),
                                             {&one, 1}, NDK_OP_FLAG_SILENT_SUCCESS));
            EXPECT_EQ(STATUS_SUCCESS,
                      s.send(pair.a, reinterpret_cast<void*>(uintptr_t(33)), {&one, 1}));
            EXPECT_EQ(STATUS_SUCCESS,
                      s.send(pair.a, reinterpret_cast<void*>(uintptr_t(34)), {two, 2}));
            EXPECT_EQ(5u, s.drain(pair.cq, 5).size());  // 3 receives, 2 signaled sends
            NDK_SGE sink = Session::sge(target, 3000, 300, dst.local_token);
            EXPECT_EQ(STATUS_SUCCESS, s.read(pair.a, reinterpret_cast<void*>(uintptr_t(48)),
                                             {&sink, 1}, remote + 100, dst.remote_token));
            poll_plain(1);
        });
}

// The data path's records of a trace as text, every value that differs from one session to the
// next renamed by its first appearance (handles, addresses, tokens: hexadecimal numbers of 5
// digits or more) and the counts' positions left out (whether a return took its entry's count
// + 1 stays: "+1").
std::vector<std::string> data_path_records(const std::vector<uint8_t>& bytes) {
    static const std::regex data_path(
        " (NdkWrite|NdkSend|NdkSendAndInvalidate|NdkRead|NdkReceive|NdkGetCqResults|"
        "NdkGetCqResultsEx)\\(");
    static const std::regex hex("0x[0-9a-fA-F]{5,}"), position("seq [0-9]+");
    std::map<std::string, std::string> names;
    std::vector<std::string> out;
    for (std::string text : dumped_records(bytes)) {
        if (!std::regex_search(text, data_path)) continue;
        if (text.find("-> count 0,") != std::string::npos) continue;  // an empty poll: timing
        text = std::regex_replace(text.substr(text.find(" t")), position, "seq");
        std::string renamed;
        auto at = text.cbegin();
        for (std::sregex_iterator i(text.begin(), text.end(), hex), end; i != end; ++i) {
            renamed.append(at, (*i)[0].first);
            auto [name, added] = names.emplace(i->str(), "H" + std::to_string(names.size()));
            renamed += name->second;
            at = (*i)[0].second;
        }
        renamed.append(at, text.cend());
        out.push_back(renamed);
    }
    return out;
}

// The capture resolves and writes a DATA block within one page a shorter way (capture/README.md,
// "Overhead"): it must write what the general way writes, for every setting of digests.
TEST(Trace, TheShortPathsWriteWhatTheGeneralPathWrites) {
    for (uint32_t flags :
         {0u, unsigned(NDKCAP_DIGEST_IN_CALL), unsigned(NDKCAP_SOURCE_BYTES | NDKCAP_LANDED_BYTES),
          unsigned(NDKCAP_NO_DIGESTS)}) {
        SCOPED_TRACE("flags " + std::to_string(flags));
        auto fast = capture_data_path("short-" + std::to_string(flags), flags);
        auto general =
            capture_data_path("general-" + std::to_string(flags), flags | NDKCAP_GENERAL_PATH);
        auto a = data_path_records(fast), b = data_path_records(general);
        ASSERT_GE(a.size(), 16u);  // 4 writes, 3 receives, 3 sends, a read; at least 5 polls
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i)
            EXPECT_EQ(a[i], b[i]) << "record " << i;
        for (const auto& bytes : {fast, general}) {
            Verdicts v = check(bytes);
            EXPECT_TRUE(v.stopped.empty()) << v.stopped;
            EXPECT_TRUE(v.findings.empty()) << v.findings[0].violation.describe();
        }
    }
}

// The trace's header and records again, the records as `edit` leaves them (each one's raw
// bytes: record header and body), in one frame.
std::vector<uint8_t> reframed(const std::vector<uint8_t>& bytes,
                              const std::function<void(std::vector<std::vector<uint8_t>>&)>& edit) {
    auto records = records_of(bytes);
    if (records.empty()) return {};
    std::vector<std::vector<uint8_t>> raw;
    for (const auto& r : records)
        raw.emplace_back(bytes.begin() + static_cast<ptrdiff_t>(r.offset),
                         bytes.begin() + static_cast<ptrdiff_t>(r.offset + r.head.size));
    edit(raw);
    std::vector<uint8_t> payload;
    for (const auto& one : raw)
        payload.insert(payload.end(), one.begin(), one.end());
    std::vector<uint8_t> out(bytes.begin(),
                             bytes.begin() + static_cast<ptrdiff_t>(records.front().offset - 16));
    auto put32 = [&](uint32_t v) {
        for (int i = 0; i < 4; ++i)
            out.push_back(static_cast<uint8_t>(v >> (8 * i)));
    };
    put32(0x464B444Eu);
    put32(static_cast<uint32_t>(payload.size()));
    put32(static_cast<uint32_t>(raw.size()));
    put32(crc32(payload));
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

template <typename T>
T field(const std::vector<uint8_t>& record, size_t at) {
    T v;
    std::memcpy(&v, record.data() + at, sizeof v);
    return v;
}
template <typename T>
void set_field(std::vector<uint8_t>& record, size_t at, T v) {
    std::memcpy(record.data() + at, &v, sizeof v);
}

// Record header offsets (spec/TRACE.md, "The record header").
constexpr size_t kThreadAt = 8, kSeqAt = 16, kReturnDeltaAt = 32;

// A trace captured from the reference provider by `session`, and its records decoded.
struct Captured {
    std::vector<uint8_t> bytes;
    std::vector<Record> records;
    std::vector<Decoded> calls;  // function 0 where the record is not a call
    std::deque<std::vector<uint8_t>> bodies;

    // The first call at or after `from` that `which` picks, or calls.size().
    size_t find(const std::function<bool(const Decoded&)>& which, size_t from = 0) const {
        for (size_t i = from; i < calls.size(); ++i)
            if (calls[i].function && which(calls[i])) return i;
        return calls.size();
    }

    // The trace with record `post` (edited by `edit`) moved before record `other`, as a call
    // entered just before it on `thread`, returning `returned` counts after its entry (> 1: after
    // `other` was entered).
    std::vector<uint8_t> moved_before(
        size_t post, size_t other, uint32_t thread, uint32_t returned,
        const std::function<void(std::vector<uint8_t>&)>& edit = {}) const {
        return reframed(bytes, [&](std::vector<std::vector<uint8_t>>& raw) {
            auto moved = raw[post];
            if (edit) edit(moved);
            set_field<uint32_t>(moved, kThreadAt, thread);
            set_field<uint64_t>(moved, kSeqAt, field<uint64_t>(raw[other], kSeqAt) - 1);
            set_field<uint32_t>(moved, kReturnDeltaAt, returned);
            raw.erase(raw.begin() + static_cast<ptrdiff_t>(post));
            raw.insert(raw.begin() + static_cast<ptrdiff_t>(other), std::move(moved));
        });
    }
};

Captured capture_racing(const std::string& name, const std::function<void(Session&)>& session) {
    fs::path dir = fs::temp_directory_path() / ("ndkct-trace-test-" + std::to_string(::getpid()));
    fs::remove_all(dir / name);
    SessionOptions options;
    options.capture = CaptureSettings{(dir / name).string(), 0};
    {
        conformance::set_capture_label(name);
        Session s(conformance::parse_provider_specs("model:seed=3").at(0), options);
        session(s);
        EXPECT_TRUE(s.close_adapter().ok());
    }
    Captured c;
    auto files = std::vector<fs::path>(fs::directory_iterator(dir / name), {});
    EXPECT_EQ(1u, files.size());
    if (files.empty()) return c;
    c.bytes = read_all(files[0]);
    c.records = records_of(c.bytes, &c.bodies);
    for (const auto& r : c.records) {
        Decoded d;
        std::string why;
        if (r.head.kind >> 8 != NDKT_KIND_CALL >> 8 || !decode(r, d, why)) d = {};
        c.calls.push_back(d);
    }
    return c;
}

bool says(const Verdicts& v, const std::string& text) {
    return std::any_of(v.notes.begin(), v.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

// WR-04 across threads. Posts are written when entered, so a write that returned
// STATUS_CONNECTION_INVALID because another thread's close (or NdkDisconnect) of the connector
// overtook it inside the provider stands before that call in the trace
// (ndk.threads.close_connector_during_posts on the verbs provider did this with a close).
// Captured here in the legal order (NdkDisconnect, then the write it refuses: the reference
// provider refuses posts after a disconnect, not after a close), then rewritten: the write
// moved before the disconnect, its times overlapping the disconnect's entry or not, on the
// disconnect's thread or another.
TEST(Trace, APostAnotherThreadsCloseOvertookIsJudgedAfterTheClose) {
    uint64_t connector = 0;
    auto c = capture_racing("overtaken", [&](Session& s) {
        auto pair = s.loopback_pair();
        ASSERT_TRUE(pair.connected) << pair.problem;
        auto source = s.buffer(PAGE_SIZE);
        auto target = s.buffer(PAGE_SIZE);
        auto src = s.register_buffer(pair.pd, source, 0);
        auto dst = s.register_buffer(pair.pd, target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        connector = reinterpret_cast<uint64_t>(pair.active);
        ASSERT_EQ(STATUS_SUCCESS, s.disconnect(pair.active).final_status);
        NDK_SGE sge = Session::sge(source, 0, 64, src.local_token);
        ASSERT_EQ(STATUS_CONNECTION_INVALID,
                  s.write(pair.a, nullptr, {&sge, 1}, reinterpret_cast<uint64_t>(target.data()),
                          dst.remote_token));
    });
    Verdicts legal = check(c.bytes);
    ASSERT_TRUE(legal.findings.empty()) << legal.findings[0].violation.describe();
    size_t disconnect = c.find([&](const Decoded& d) {
        return d.function == NDKT_FN_DISCONNECT && d.object == connector;
    });
    size_t write = c.find([](const Decoded& d) {
        return d.function == NDKT_FN_WRITE && d.status == STATUS_CONNECTION_INVALID;
    });
    ASSERT_LT(disconnect, write);
    ASSERT_LT(write, c.records.size());

    const uint32_t other_thread = c.records[disconnect].head.thread;
    Verdicts raced = check(c.moved_before(write, disconnect, other_thread + 1, 3));
    EXPECT_TRUE(raced.stopped.empty()) << raced.stopped;
    EXPECT_TRUE(raced.findings.empty()) << raced.findings[0].violation.describe();
    EXPECT_TRUE(says(raced, "judged after that call (WR-04)"));

    // No overlap, or one thread: the write came first and was refused on a connected QP.
    for (const Verdicts& v : {check(c.moved_before(write, disconnect, other_thread + 1, 1)),
                              check(c.moved_before(write, disconnect, other_thread, 3))}) {
        ASSERT_EQ(1u, v.findings.size());
        const std::string said = v.findings[0].violation.describe();
        EXPECT_NE(std::string::npos, said.find("WRT-01")) << said;
        EXPECT_NE(std::string::npos, said.find("STATUS_CONNECTION_INVALID")) << said;
    }
}

// MODEL-FLS-01 across threads, the same way: a receive refused because another thread's
// NdkFlush of its QP overtook it stands before the flush (ndk.threads.flush_during_receives on
// the verbs provider can do this: its NdkFlush marks the QP flushed first, and its NdkReceive
// then refuses with STATUS_CANCELLED). The reference accepts a receive after a flush (and
// flushes it), so the receive captured after the NdkFlush is made a refused one by its status,
// then moved as above.
TEST(Trace, AReceiveAnotherThreadsFlushOvertookIsJudgedAfterTheFlush) {
    uint64_t qp = 0;
    auto c = capture_racing("flushed", [&](Session& s) {
        auto pair = s.loopback_pair();
        ASSERT_TRUE(pair.connected) << pair.problem;
        auto sink = s.buffer(PAGE_SIZE);
        auto region = s.register_buffer(pair.pd, sink, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        qp = reinterpret_cast<uint64_t>(pair.b);
        s.flush(pair.b);
        NDK_SGE sge = Session::sge(sink, 0, 64, region.local_token);
        ASSERT_EQ(STATUS_SUCCESS, s.receive(pair.b, nullptr, {&sge, 1}));
    });
    size_t flush =
        c.find([&](const Decoded& d) { return d.function == NDKT_FN_FLUSH && d.object == qp; });
    size_t receive =
        c.find([&](const Decoded& d) { return d.function == NDKT_FN_RECEIVE && d.object == qp; },
               flush + 1);
    ASSERT_LT(flush, receive);
    ASSERT_LT(receive, c.records.size());
    // NdkReceive's outcome (spec/trace/trace-format.json): status, after the arguments
    // (object, context, sge_count, reserved, one 16-byte SGE).
    constexpr size_t kStatusAt = NDKT_RECORD_HEADER_BYTES + 8 + 8 + 4 + 4 + 16;
    auto refuse = [](std::vector<uint8_t>& record) {
        EXPECT_EQ(STATUS_SUCCESS, field<NTSTATUS>(record, kStatusAt));
        set_field<NTSTATUS>(record, kStatusAt, STATUS_CANCELLED);
    };
    // In the legal order, refused: MODEL-FLS-01 lets a flushed QP refuse it.
    Verdicts legal = check(
        reframed(c.bytes, [&](std::vector<std::vector<uint8_t>>& raw) { refuse(raw[receive]); }));
    ASSERT_TRUE(legal.findings.empty()) << legal.findings[0].violation.describe();

    const uint32_t other_thread = c.records[flush].head.thread;
    Verdicts raced = check(c.moved_before(receive, flush, other_thread + 1, 3, refuse));
    EXPECT_TRUE(raced.stopped.empty()) << raced.stopped;
    EXPECT_TRUE(raced.findings.empty()) << raced.findings[0].violation.describe();
    EXPECT_TRUE(says(raced, "judged after that NdkFlush (MODEL-FLS-01)"));
    for (const Verdicts& v : {check(c.moved_before(receive, flush, other_thread + 1, 1, refuse)),
                              check(c.moved_before(receive, flush, other_thread, 3, refuse))}) {
        ASSERT_FALSE(v.findings.empty());
        const std::string said = v.findings[0].violation.describe();
        EXPECT_FALSE(v.findings[0].violation.warning) << said;
        EXPECT_NE(std::string::npos, said.find("STATUS_CANCELLED")) << said;
    }

    // Under the reading that a flushed QP stays usable (policies.post_after_flush "usable"),
    // the refusal after the flush is that reading's warning, raced or not.
    std::string usable = spec::builtin_profile("default").json;
    usable = std::regex_replace(usable, std::regex(R"("post_after_flush"\s*:\s*"cancelled")"),
                                R"("post_after_flush": "usable")");
    ASSERT_NE(std::string::npos, usable.find(R"("post_after_flush": "usable")"));
    fs::path profile = fs::temp_directory_path() /
                       ("ndkct-trace-test-" + std::to_string(::getpid())) / "flushed-usable.json";
    std::ofstream(profile) << usable;
    JudgeOptions under_usable;
    under_usable.profile = profile.string();
    Verdicts raced_usable =
        check(c.moved_before(receive, flush, other_thread + 1, 3, refuse), under_usable);
    ASSERT_EQ(1u, raced_usable.findings.size());
    const std::string said = raced_usable.findings[0].violation.describe();
    EXPECT_TRUE(raced_usable.findings[0].violation.warning) << said;
    EXPECT_NE(std::string::npos, said.find("MODEL-FLS-01")) << said;
}

// IFR-CTX-01 across the call's return. A pended request whose completion comes with a Context no
// request had (GEN-CB-03) was, live, owed to the one request registered before the call; in a
// trace its call is written when it returns, so a stray that came while the call was still
// inside (ifr_callback_wrong_context, when the provider's thread is quick) stands before the
// call's record. Captured legally (the callback after the return), then rewritten: the
// callback made a stray and moved before the call's record, inside its entry and return or
// before its entry.
TEST(Trace, AStrayCallbackInsideItsCallNamesThatCallsContextRule) {
    auto c = capture_racing("stray", [&](Session& s) {
        auto pd = s.create_pd();
        for (int i = 0; i < 16; ++i) {  // the seeded reference pends about half of them
            auto mr = s.create_mr(pd.object, true);
            if (s.initialize_fast_register_mr(mr.object, 2, false).pended()) break;
        }
    });
    size_t call = c.find([](const Decoded& d) {
        return d.function == NDKT_FN_INITIALIZE_FAST_REGISTER_MR && d.status == STATUS_PENDING;
    });
    ASSERT_LT(call, c.records.size()) << "no NdkInitializeFastRegisterMr pended";
    const uint64_t request = c.calls[call].request;
    // Its completion: after the call's record, or before it (CALL_PENDING) when the provider's
    // thread was quicker than the call's return.
    size_t callback = c.records.size();
    for (size_t i = 0; i < c.records.size() && callback == c.records.size(); ++i) {
        Decoded d;
        std::string why;
        if (c.records[i].head.kind == (NDKT_KIND_CALLBACK | NDKT_CB_REQUEST_COMPLETION) &&
            decode(c.records[i], d, why) && d.request == request)
            callback = i;
    }
    ASSERT_LT(callback, c.records.size());
    Verdicts legal = check(c.bytes);
    ASSERT_TRUE(legal.findings.empty()) << legal.findings[0].violation.describe();

    // Where the stray and the call stand once the completion is taken out and the stray put
    // just before the call.
    const size_t stray_at = callback < call ? call - 1 : call;
    const uint64_t first = c.records[0].index;
    // `seq_after_entry`: the stray's count minus the call's entry count.
    auto strayed = [&](int64_t seq_after_entry) {
        return reframed(c.bytes, [&](std::vector<std::vector<uint8_t>>& raw) {
            std::vector<uint8_t> stray(raw[callback].begin(),
                                       raw[callback].begin() + NDKT_RECORD_HEADER_BYTES);
            set_field<uint16_t>(stray, 0, NDKT_KIND_CALLBACK | NDKT_CB_STRAY);
            stray[2] = 0;  // no flags: the capture cannot tell whose call a stray is in
            set_field<uint32_t>(stray, 4, NDKT_RECORD_HEADER_BYTES + 16);
            const uint64_t entered = field<uint64_t>(raw[call], kSeqAt);
            set_field<uint64_t>(stray, kSeqAt, entered + seq_after_entry);
            stray.resize(NDKT_RECORD_HEADER_BYTES + 16);
            set_field<uint32_t>(stray, NDKT_RECORD_HEADER_BYTES, NDKT_CB_REQUEST_COMPLETION);
            set_field<NTSTATUS>(stray, NDKT_RECORD_HEADER_BYTES + 4, STATUS_SUCCESS);
            set_field<uint64_t>(stray, NDKT_RECORD_HEADER_BYTES + 8, 0xBAD);
            set_field<uint32_t>(raw[call], kReturnDeltaAt, 4);  // returned after the stray came
            raw.erase(raw.begin() + static_cast<ptrdiff_t>(callback));
            raw.insert(raw.begin() + static_cast<ptrdiff_t>(stray_at), std::move(stray));
        });
    };
    auto stray_finding = [](const Verdicts& v) -> const Finding* {
        for (const auto& f : v.findings)
            if (std::find(f.violation.rules.begin(), f.violation.rules.end(), "GEN-CB-03") !=
                f.violation.rules.end())
                return &f;
        return nullptr;
    };

    Verdicts inside = check(strayed(2));
    const Finding* found = stray_finding(inside);
    ASSERT_NE(nullptr, found);
    EXPECT_EQ("IFR-CTX-01", found->violation.rules.front()) << found->violation.describe();
    EXPECT_EQ(first + stray_at, found->record);  // the stray's own record, not the call's
    EXPECT_NE(std::string::npos, found->violation.message.find("all NdkInitializeFastRegisterMr's"))
        << found->violation.message;
    // Its own callback never came: said at the call's record (just after the stray), not at 0.
    auto never_came = std::find_if(inside.findings.begin(), inside.findings.end(), [](auto& f) {
        return f.violation.rules.front() == "GEN-ASYNC-01";
    });
    ASSERT_NE(inside.findings.end(), never_came);
    EXPECT_EQ(first + stray_at + 1, never_came->record) << never_came->violation.describe();

    // Before the call was entered nothing was owed: only the generic rule.
    Verdicts before = check(strayed(-2));
    found = stray_finding(before);
    ASSERT_NE(nullptr, found);
    EXPECT_EQ("GEN-CB-03", found->violation.rules.front()) << found->violation.describe();
}

// NDKCAP_OPTIONS.DigestLimit: a block over it is not read; the trace says so where it is (its
// length, flagged) and the judge says what it therefore could not judge, while what stayed
// under the limit is digested and judged as ever.
TEST(Trace, BlocksOverTheDigestLimitAreNotReadAndWhatTheyLeaveUnjudgedIsSaid) {
    auto workload = [](Session& s, const conformance::LoopbackPair& pair,
                       platform::LockedBuffer& source, platform::LockedBuffer& target) {
        auto src = s.register_buffer(pair.pd, source, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        auto dst = s.register_buffer(
            pair.pd, target, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        uint64_t remote = reinterpret_cast<uint64_t>(target.data());
        for (uint32_t length : {1000u, 200u}) {
            NDK_SGE sge = Session::sge(source, 0, length, src.local_token);
            EXPECT_EQ(STATUS_SUCCESS,
                      s.write(pair.a, &sge, {&sge, 1}, remote + 2 * length, dst.remote_token));
            EXPECT_EQ(1u, s.drain(pair.cq, 1).size());
        }
    };
    auto limited = capture_workload("digest-limit", 0, 0, workload, 512);
    auto whole = capture_workload("no-digest-limit", 0, 0, workload);
    ASSERT_FALSE(limited.empty());
    ASSERT_FALSE(whole.empty());
    auto lines = dumped_records(limited);
    auto count = [&](const std::string& text) {
        return std::count_if(lines.begin(), lines.end(), [&](const std::string& line) {
            return line.find(text) != std::string::npos;
        });
    };
    // The 1000-byte write's source and landing; the 200-byte write's, digested.
    EXPECT_EQ(2, count("not digested: 1000 bytes, over the capture's digest limit"));
    EXPECT_EQ(2, count("200 bytes in 1 piece(s)"));
    Reader reader;
    reader.feed(limited.data(), limited.size());
    Record first;
    ASSERT_EQ(Reader::Next::record, reader.next(first));
    EXPECT_EQ(512u, reader.header().digest_limit);
    EXPECT_NE(std::string::npos, dump_header(reader.header()).find("digest limit: 512 bytes"));

    Verdicts v = check(limited);
    EXPECT_TRUE(v.stopped.empty()) << v.stopped;
    EXPECT_FALSE(v.failed()) << v.findings[0].violation.describe();
    EXPECT_EQ(1u, v.unjudged_posts);
    EXPECT_EQ(1u, v.unjudged_landings);
    bool said = std::any_of(v.notes.begin(), v.notes.end(), [](const std::string& n) {
        return n.find("not judged where bytes landed: 1 post(s)") != std::string::npos;
    });
    EXPECT_TRUE(said);
    // Without the limit every byte is judged, and nothing is said.
    Verdicts w = check(whole);
    EXPECT_FALSE(w.failed());
    EXPECT_EQ(0u, w.unjudged_posts);
    EXPECT_EQ(0u, w.unjudged_landings);
    for (const auto& n : w.notes)
        EXPECT_EQ(std::string::npos, n.find("not judged where bytes landed")) << n;
}

// From digests alone a source cannot be composed over bytes still landing, and goes unjudged
// (said, counted); a source beside them on the same page composes and is judged.
TEST(Trace, ASourceBesideBytesStillLandingIsJudgedAndOneOverThemIsSaidUnjudged) {
    auto writes = [](uint32_t source_offset) {
        return [source_offset](Session& s, const conformance::LoopbackPair& pair,
                               platform::LockedBuffer& source, platform::LockedBuffer&) {
            // One buffer, the source of each write and (from byte 2048 on) its target.
            auto mr = s.register_buffer(
                pair.pd, source, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
            uint64_t at = reinterpret_cast<uint64_t>(source.data());
            for (uint32_t i = 0; i < 4; ++i) {  // all posted before any completion is taken
                NDK_SGE sge = Session::sge(source, source_offset + 8 * i, 8, mr.local_token);
                EXPECT_EQ(STATUS_SUCCESS, s.write(pair.a, reinterpret_cast<void*>(uintptr_t(i + 1)),
                                                  {&sge, 1}, at + 2048 + 8 * i, mr.remote_token));
            }
            EXPECT_EQ(4u, s.drain(pair.cq, 4).size());
        };
    };
    // Sources at 0, 8, 16, 24: beside the targets at 2048.. on the same page.
    Verdicts beside = check(capture_workload("beside-landing", 0, 0, writes(0)));
    EXPECT_FALSE(beside.failed()) << beside.findings[0].violation.describe();
    EXPECT_TRUE(beside.stopped.empty()) << beside.stopped;
    EXPECT_EQ(0u, beside.unjudged_posts);
    // Sources at 2040, 2048, 2056, 2064: the last three read what an earlier write still lands.
    Verdicts over = check(capture_workload("over-landing", 0, 0, writes(2040)));
    EXPECT_FALSE(over.failed()) << over.findings[0].violation.describe();
    EXPECT_EQ(3u, over.unjudged_posts);
}

// SGEs may name the same bytes twice. From a digest alone no stand-in gathers to itself there
// (the real bytes repeat where the pieces overlap): such a source goes unjudged, said and
// counted, rather than its landing judged against bytes nobody sent (a false WRT-01 found
// judging ndk.property.chains_past_length's traces); SGEs side by side are judged.
TEST(Trace, ASourceWhoseSgesOverlapIsSaidUnjudgedAndSgesSideBySideAreJudged) {
    auto writes = [](uint32_t second_offset) {
        return [second_offset](Session& s, const conformance::LoopbackPair& pair,
                               platform::LockedBuffer& source, platform::LockedBuffer& target) {
            auto src = s.register_buffer(pair.pd, source, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
            auto dst = s.register_buffer(
                pair.pd, target, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
            NDK_SGE sgl[2] = {Session::sge(source, 0, 13, src.local_token),
                              Session::sge(source, second_offset, 42, src.local_token)};
            EXPECT_EQ(STATUS_SUCCESS,
                      s.write(pair.a, reinterpret_cast<void*>(uintptr_t{1}), {sgl, 2},
                              reinterpret_cast<uint64_t>(target.data()) + 600, dst.remote_token));
            EXPECT_EQ(1u, s.drain(pair.cq, 1).size());
        };
    };
    Verdicts overlapping = check(capture_workload("overlapping-sges", 0, 0, writes(0)));
    EXPECT_TRUE(overlapping.stopped.empty()) << overlapping.stopped;
    EXPECT_FALSE(overlapping.failed()) << overlapping.findings[0].violation.describe();
    EXPECT_EQ(1u, overlapping.unjudged_posts);
    Verdicts side_by_side = check(capture_workload("adjacent-sges", 0, 0, writes(13)));
    EXPECT_FALSE(side_by_side.failed()) << side_by_side.findings[0].violation.describe();
    EXPECT_EQ(0u, side_by_side.unjudged_posts);
}

// A call the provider refuses changes nothing, and the capture must not act as if it had: an
// NdkRegisterMr or NdkInitializeFastRegisterMr refused on a registered MR leaves its
// registration in force, and what later moves through it is resolved through its pages (the
// capture had taken the refused call's region: a source it then called unresolved, or a
// landing on page 0, a false RCV-03, found judging the property suite's traces).
TEST(Trace, ACallRefusedOnARegisteredMrLeavesItsRegionInForce) {
    // Refused on the source's MR: NdkRegisterMr (registered already: RMR-STATE); on the
    // target's: NdkInitializeFastRegisterMr (not a fast-register MR, and registered).
    for (bool refuse_on_source : {true, false}) {
        SCOPED_TRACE(refuse_on_source ? "NdkRegisterMr refused on the source's MR"
                                      : "NdkInitializeFastRegisterMr refused on the target's MR");
        auto workload = [refuse_on_source](Session& s, const conformance::LoopbackPair& pair,
                                           platform::LockedBuffer& source,
                                           platform::LockedBuffer& target) {
            auto src = s.register_buffer(pair.pd, source, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
            auto dst = s.register_buffer(
                pair.pd, target, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
            platform::MdlChain other = platform::describe(target, PAGE_SIZE, 512);
            if (refuse_on_source)
                EXPECT_FALSE(
                    s.register_mr(src.mr, other.head(), 512, NDK_MR_FLAG_ALLOW_LOCAL_WRITE).ok());
            else
                EXPECT_FALSE(s.initialize_fast_register_mr(dst.mr, 8, true).ok());
            NDK_SGE sge = Session::sge(source, 100, 300, src.local_token);
            EXPECT_EQ(STATUS_SUCCESS,
                      s.write(pair.a, reinterpret_cast<void*>(uintptr_t{1}), {&sge, 1},
                              reinterpret_cast<uint64_t>(target.data()) + 40, dst.remote_token));
            EXPECT_EQ(1u, s.drain(pair.cq, 1).size());
        };
        auto trace = capture_workload("refused-on-registered", 0, 0, workload);
        ASSERT_FALSE(trace.empty());
        auto lines = dumped_records(trace);
        auto write = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
            return line.find("NdkWrite(") != std::string::npos;
        });
        ASSERT_NE(write, lines.end());
        EXPECT_NE(std::string::npos, write->find("300 bytes in 1 piece(s)")) << *write;
        Verdicts v = check(trace);
        EXPECT_TRUE(v.stopped.empty()) << v.stopped;
        EXPECT_FALSE(v.failed()) << v.findings[0].violation.describe();
        EXPECT_EQ(0u, v.unjudged_posts);
        EXPECT_EQ(0u, v.unjudged_landings);
    }
}

// Registers source and target and posts one NdkWrite of 64 bytes from one to the other, with
// `context` as its request context (the drain tests' one request).
void write_64_bytes(Session& s, const conformance::LoopbackPair& pair,
                    platform::LockedBuffer& source, platform::LockedBuffer& target,
                    uintptr_t context) {
    auto src = s.register_buffer(pair.pd, source, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    auto dst = s.register_buffer(pair.pd, target,
                                 NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    NDK_SGE sge = Session::sge(source, 0, 64, src.local_token);
    EXPECT_EQ(STATUS_SUCCESS, s.write(pair.a, reinterpret_cast<void*>(context), {&sge, 1},
                                      reinterpret_cast<uint64_t>(target.data()), dst.remote_token));
}

// A trace cannot show that an entry was owed by a given time: the consumer's word that it drained
// a QP (NdkCaptureDrained, a DRAINED record) lets the judge find what is still owed there
// missing, at that record, as the live oracle does (WR-10); a drain after the polls owes nothing.
TEST(Trace, AQpDeclaredDrainedWithAnEntryStillOwedIsJudgedAsLive) {
    for (bool polled : {false, true}) {
        SCOPED_TRACE(polled ? "drained after polling" : "drained before polling");
        auto workload = [polled](Session& s, const conformance::LoopbackPair& pair,
                                 platform::LockedBuffer& source, platform::LockedBuffer& target) {
            write_64_bytes(s, pair, source, target, 7);
            if (polled) {
                EXPECT_EQ(1u, s.drain(pair.cq, 1).size());
            }
            model::Verdict live = s.expect_drained(pair.a);
            EXPECT_EQ(polled, live.ok()) << live.describe();
            if (!polled) s.drain(pair.cq, 1);  // taken after the word: still missing there
        };
        auto trace = capture_workload(polled ? "drained-after" : "drained-before", 0, 0, workload,
                                      0, /*live_clean=*/polled);
        ASSERT_FALSE(trace.empty());
        auto lines = dumped_records(trace);
        EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
            return line.find("Drained qp 0x") != std::string::npos;
        }));
        Verdicts v = check(trace);
        EXPECT_TRUE(v.stopped.empty()) << v.stopped;
        EXPECT_EQ(!polled, v.failed());
        if (!polled && v.failed()) {
            const auto& f = v.findings[0];
            EXPECT_NE(std::string::npos, f.violation.describe().find("WR-10"))
                << f.violation.describe();
            ASSERT_LT(f.record, lines.size());
            EXPECT_NE(std::string::npos, lines[f.record].find("Drained")) << lines[f.record];
        }
    }
}

// A consumer that gives up waiting for completions it was owed says so (NdkCaptureOverdue, an
// OVERDUE record, which the harness's drain writes when its wait runs out): the judge finds the
// rest missing at that record, with the rules the live harness names (WR-10 here: no fast
// registration is owed). A wait that got what it waited for writes no such word.
TEST(Trace, CompletionsAConsumerGaveUpOnAreMissingWhereItSaidSo) {
    for (size_t waited_for : {1u, 2u}) {
        SCOPED_TRACE("waiting for " + std::to_string(waited_for) + " completion(s) of 1 write");
        const bool short_of = waited_for > 1;
        auto workload = [waited_for](Session& s, const conformance::LoopbackPair& pair,
                                     platform::LockedBuffer& source,
                                     platform::LockedBuffer& target) {
            write_64_bytes(s, pair, source, target, 9);
            EXPECT_EQ(1u, s.drain(pair.cq, waited_for, std::chrono::milliseconds(1000)).size());
        };
        auto trace = capture_workload(short_of ? "overdue-short" : "overdue-met", 0, 0, workload);
        ASSERT_FALSE(trace.empty());
        auto lines = dumped_records(trace);
        auto overdue = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
            return line.find("Overdue cq 0x") != std::string::npos;
        });
        EXPECT_EQ(short_of, overdue != lines.end());
        if (overdue != lines.end()) {
            EXPECT_NE(std::string::npos, overdue->find("expected 2")) << *overdue;
            EXPECT_NE(std::string::npos, overdue->find("arrived 1")) << *overdue;
        }
        Verdicts v = check(trace);
        EXPECT_TRUE(v.stopped.empty()) << v.stopped;
        EXPECT_EQ(short_of, v.failed());
        if (short_of && v.failed()) {
            const auto& f = v.findings[0];
            EXPECT_EQ(model::RuleIds{"WR-10"}, f.violation.rules) << f.violation.describe();
            EXPECT_NE(std::string::npos, f.violation.message.find("1 of 2 completions"))
                << f.violation.message;
            ASSERT_LT(f.record, lines.size());
            EXPECT_NE(std::string::npos, lines[f.record].find("Overdue")) << lines[f.record];
        }
    }
}

// A driver built against capture 1.2's header passes the smaller NDKCAP_OPTIONS it knew: taken,
// the later fields 0 (no digest limit in its header); anything smaller is refused.
TEST(Trace, OptionsOfAnOlderHeaderAreTakenAndShorterOnesRefused) {
    std::vector<uint8_t> file;
    NDKCAP_HOST host = vector_host(file);
    NDKCAP_OPTIONS options{};
    options.Size = offsetof(NDKCAP_OPTIONS, DigestLimit);
    options.DigestLimit = 512;  // past the older Size: not read
    options.Label = "older options";
    NDKCAP* capture = nullptr;
    ASSERT_EQ(STATUS_SUCCESS, NdkCaptureOpen(&host, &options, &capture));
    Session s(conformance::parse_provider_specs("model:seed=3").at(0));
    ASSERT_EQ(STATUS_SUCCESS, NdkCaptureAttach(capture, s.adapter()));
    // The session closes its adapter through the interposed tables: before the capture closes.
    NdkCaptureAdapterClosing(capture);
    s.close_adapter();
    NdkCaptureAdapterClosed(capture);
    ASSERT_EQ(STATUS_SUCCESS, NdkCaptureClose(capture));
    Reader reader;
    reader.feed(file.data(), file.size());
    reader.finish();
    Record r;
    ASSERT_EQ(Reader::Next::record, reader.next(r));
    EXPECT_EQ(0u, reader.header().digest_limit);
    EXPECT_EQ("older options", reader.header().label);
    options.Size = offsetof(NDKCAP_OPTIONS, DigestLimit) - 1;
    EXPECT_EQ(STATUS_INVALID_PARAMETER, NdkCaptureOpen(&host, &options, &capture));
}

TEST(Trace, TheCrcIsCrc32cWhateverTheLength) {
    // The check value of CRC-32C (spec/TRACE.md gives it to writers).
    const std::string check = "123456789";
    EXPECT_EQ(0xE3069283u, crc32({reinterpret_cast<const uint8_t*>(check.data()), check.size()}));
    // Large buffers go through three CRCs joined: the same as the CRC chained over small pieces.
    std::vector<uint8_t> bytes(40000);
    uint64_t x = 15;
    for (auto& b : bytes) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        b = static_cast<uint8_t>(x >> 56);
    }
    for (size_t n : {3071u, 3072u, 3073u, 3080u, 9999u, 40000u}) {
        uint32_t chained = 0;
        for (size_t at = 0; at < n; at += 1000)
            chained = crc32({bytes.data() + at, std::min<size_t>(1000, n - at)}, chained);
        EXPECT_EQ(chained, crc32({bytes.data(), n})) << n;
    }
}

}  // namespace
}  // namespace ndkct::trace
