// trace_bench: the figures of issue 15 (printed, never asserted).
//
//   capture overhead  the NdkWrite + NdkGetCqResults loop through the provider's dispatch
//                     tables (the refmodel bench's loop), with and without the capture library
//                     in between, in alternating rounds of one run: the ratio of their rates
//                     (the capture's trace going to a file, drained by a thread of its own)
//   latency           --latency: NdkWrite then NdkGetCqResultsEx until its completion, the
//                     median post->completion time with and without the capture (the verbs
//                     provider on rxe: adapters/rxe/device-run)
//   bytes per call    the loop's trace file size over the calls recorded in it
//   offline checking  the loop's trace judged by the oracle on one core (check()): calls/s
//                     and records/s; --traces DIR judges every trace of a folder too
//
//   trace_bench [--provider SPEC] [--iterations N] [--rounds R] [--latency] [--bytes N]
//               [--traces DIR] [--keep FILE] [--only plain|captured|bare]   (the last two: for
//               profiling) [--digest-in-call]  (every digest taken during the call:
//               NDKCAP_DIGEST_IN_CALL) [--digest-limit N]  (the captured rig reads no DATA
//               block over N bytes: NDKCAP_OPTIONS.DigestLimit) [--block-kb N]  (ring blocks of
//               N KiB: a ring that holds a whole profiled loop, whose drain callgrind starves)
//
// --bytes: the payload of each write (default 512 for the loop, 64 for --latency): the
// capture's cost is a part per call and a part per byte digested, so the same capture costs a
// provider a different share at each size.
//
// Each figure is also a line `ndkct-bench: {...}` (bench/README.md), named after the mode and
// payload (loop_512B.overhead_ratio, latency_64B.overhead_ratio, ...), with the target
// beside the ones it sets.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "ndkct/bench/stats.hpp"
#include "ndkct/conformance/session.hpp"
#include "ndkct/trace/judge.hpp"

namespace {

using namespace ndkct;
using conformance::Session;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct Args {
    std::string provider = "model:seed=1";
    size_t iterations = 0;  // 0: 200000 for the loop, 20000 for --latency
    int rounds = 7;
    bool latency = false;
    std::string traces;
    std::string keep;             // where to copy the loop's trace (for profiling the checker)
    std::string only;             // --only plain|captured|bare: that loop alone (for profiling)
    bool digest_in_call = false;  // NDKCAP_DIGEST_IN_CALL: no digest deferred to the drain
    ULONG bytes = 0;              // the payload; 0: 512 for the loop, 64 for --latency
    uint32_t digest_limit = 0;    // --digest-limit: NDKCAP_OPTIONS.DigestLimit of the captured rig
    uint32_t block_kb = 0;        // --block-kb: ring blocks (0: the library's 256 KiB)
};

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// This thread's CPU time: what a shared, loaded machine disturbs least.
double cpu_seconds() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The process's CPU time: the calling thread and the capture's drain threads (which digest the
// small DATA blocks the calls copied into the ring), so that work moved off the call path is
// still counted.
double process_cpu_seconds() {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// A fine-grained tick for one post->completion: the guest's clock (TCG, no stable TSC
// clocksource) moves in jiffies, so steady_clock read 0 us for every completion. The TSC counts
// finely there too; it is converted to microseconds by its rate (ticks_per_us).
uint64_t ticks() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return static_cast<uint64_t>(Clock::now().time_since_epoch().count());
#endif
}

// The ticks' rate, measured once over 300 ms of the clock (a few jiffies' error at most: the
// same factor for every figure, so the ratios are exact).
double ticks_per_us() {
    static const double rate = [] {
        auto t0 = Clock::now();
        uint64_t k0 = ticks();
        while (Clock::now() - t0 < std::chrono::milliseconds(300)) {
        }
        return static_cast<double>(ticks() - k0) / (seconds_since(t0) * 1e6);
    }();
    return rate;
}

using bench::median;

// One figure on the convention's line (bench/README.md): `name` under bench "trace".
void figure(const std::string& name, double value, const std::string& unit,
            const bench::Interval* ci, const std::string& better, const std::string& target,
            const std::string& note) {
    bench::Figure f;
    f.bench = "trace";
    f.name = name;
    f.value = value;
    f.unit = unit;
    f.ci = ci;
    f.better = better;
    f.target = target;
    f.note = note;
    bench::emit(f);
}

// One session ready for the loop: a connected pair, a source and a remote-writable target.
struct Rig {
    std::unique_ptr<Session> s;
    conformance::LoopbackPair pair;
    platform::LockedBuffer src, dst;
    conformance::Registered src_mr, dst_mr;
    NDK_SGE sge{};
    UINT64 remote = 0;

    Rig(const std::string& spec, std::optional<conformance::CaptureSettings> capture, ULONG bytes) {
        conformance::SessionOptions o;
        o.capture = capture ? *capture : conformance::CaptureSettings{};
        conformance::set_capture_label(capture ? "bench-captured" : "bench");
        s = std::make_unique<Session>(conformance::parse_provider_specs(spec).at(0), o);
        pair = s->loopback_pair({64, 256, 1, 1, 0}, 1024);
        if (!pair.connected) throw std::runtime_error("no connection: " + pair.problem);
        src = s->buffer(4 * PAGE_SIZE);
        dst = s->buffer(4 * PAGE_SIZE);
        std::memset(src.data(), 0x5A, src.size());
        src_mr = s->register_buffer(pair.pd, src, 0);
        dst_mr = s->register_buffer(pair.pd, dst,
                                    NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        sge = Session::sge(src, 0, bytes, src_mr.local_token);
        remote = reinterpret_cast<uintptr_t>(dst.data());
    }

    double cpu = 0;          // the last loop's CPU seconds on this thread
    double process_cpu = 0;  // and in the whole process (drain threads included)

    // The loop, straight through the dispatch tables (the oracle never sees it): NDK calls/s.
    // Not inlined: callgrind counts instructions inside it alone (--toggle-collect).
    [[gnu::noinline]] double loop(size_t iterations) {
        NDK_QP* qp = pair.a;
        NDK_CQ* cq = pair.cq;
        NDK_RESULT results[16];
        size_t completions = 0;
        auto t0 = Clock::now();
        double c0 = cpu_seconds(), p0 = process_cpu_seconds();
        for (size_t i = 0; i < iterations; ++i) {
            NTSTATUS ws = qp->Dispatch->NdkWrite(qp, reinterpret_cast<PVOID>(i + 1), &sge, 1,
                                                 remote, dst_mr.remote_token, 0);
            if (ws != STATUS_SUCCESS) throw std::runtime_error("NdkWrite failed");
            completions += cq->Dispatch->NdkGetCqResults(cq, results, 16);
        }
        double took = seconds_since(t0);
        cpu = cpu_seconds() - c0;
        process_cpu = process_cpu_seconds() - p0;
        // What is still coming.
        for (auto end = Clock::now() + std::chrono::seconds(5);
             completions < iterations && Clock::now() < end;)
            completions += cq->Dispatch->NdkGetCqResults(cq, results, 16);
        return static_cast<double>(2 * iterations) / took;
    }

    // Post -> completion of one write, waited for: ticks.
    double one_latency(size_t i) {
        NDK_QP* qp = pair.a;
        NDK_CQ* cq = pair.cq;
        NDK_RESULT_EX result;
        auto t0 = Clock::now();
        uint64_t k0 = ticks();
        NTSTATUS ws = qp->Dispatch->NdkWrite(qp, reinterpret_cast<PVOID>(i + 1), &sge, 1, remote,
                                             dst_mr.remote_token, 0);
        if (ws != STATUS_SUCCESS) throw std::runtime_error("NdkWrite failed");
        auto end = t0 + std::chrono::seconds(2);
        while (cq->Dispatch->NdkGetCqResultsEx(cq, &result, 1) == 0)
            if (Clock::now() > end) throw std::runtime_error("no completion");
        return static_cast<double>(ticks() - k0);
    }
};

// What the capture's own work costs per loop iteration, the floor under its overhead: the data
// digests (NDKT64 over the 512 bytes posted and the 512 that landed) and the host's timestamps
// (none by default: posts and polls outside callbacks go untimed, trace flag
// DATA_PATH_UNTIMED; 4 with NDKCAP_ALL_TIMES: an entry and a return time for each of the two
// calls), in ns, beside the plain iteration.
void cost_floor(double iteration_ns, ULONG payload) {
    std::vector<uint8_t> bytes(payload, 0x5A);
    const int n = 200000;
    uint64_t sink = 0;
    double c0 = cpu_seconds();
    for (int i = 0; i < n; ++i) {
        bytes[static_cast<size_t>(i) % payload] = static_cast<uint8_t>(i);
        sink += NdkCaptureDigest(bytes.data(), bytes.size());
    }
    double digest_ns = (cpu_seconds() - c0) / n * 1e9;
    NDKCAP_HOST host = conformance::CaptureHost::host(nullptr, nullptr, nullptr);
    c0 = cpu_seconds();
    for (int i = 0; i < n; ++i)
        sink += host.Timestamp(nullptr);
    double clock_ns = (cpu_seconds() - c0) / n * 1e9;
    std::printf(
        "capture cost floor per iteration: digests 2 x %.1f ns (%u bytes each) = %.0f ns = %.1f "
        "%% of the plain iteration (%.0f ns of CPU); timestamps none on the data path (with "
        "NDKCAP_ALL_TIMES 4 x %.1f ns: +%.1f %%)%s\n",
        digest_ns, payload, 2 * digest_ns, 2 * digest_ns / iteration_ns * 100, iteration_ns,
        clock_ns, 4 * clock_ns / iteration_ns * 100, sink == 42 ? " " : "");
    std::printf(
        "ndkct-bench: {\"bench\": \"trace\", \"name\": \"capture.digest_ns_%u\", \"value\": "
        "%.2f, \"unit\": \"ns\", \"better\": \"lower\"}\n",
        payload, digest_ns);
    std::printf(
        "ndkct-bench: {\"bench\": \"trace\", \"name\": \"capture.timestamp_ns\", \"value\": "
        "%.2f, \"unit\": \"ns\", \"better\": \"lower\"}\n",
        clock_ns);
}

// The trace a rig's capture wrote: its folder holds that one file.
std::string trace_in(const std::string& folder) {
    std::string file;
    for (const auto& e : fs::directory_iterator(folder))
        file = e.path().string();
    return file;
}

// A trace's size over the call records in it (the reader reads on past a LOSS record, where
// the judge stops), and the records the ring could not keep.
struct TraceSize {
    double bytes_per_call = 0;
    uint64_t lost = 0;
};

TraceSize size_per_call(const std::string& folder) {
    std::string file = trace_in(folder);
    // Streamed a MiB at a time: a guest has 1 GiB, and a long latency run's trace is hundreds
    // of MB.
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read the trace " + file);
    trace::Reader reader;
    trace::Record r;
    uint64_t calls = 0, lost = 0, size = 0;
    std::vector<char> chunk(1 << 20);
    for (bool more = true; more;) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        size_t got = static_cast<size_t>(in.gcount());
        size += got;
        more = got == chunk.size();
        reader.feed(chunk.data(), got);
        if (!more) reader.finish();
        while (reader.next(r) == trace::Reader::Next::record) {
            if (NDKT_KIND_CLASS(r.head.kind) == NDKT_KIND_CALL) ++calls;
            if (r.head.kind == NDKT_META_LOSS && r.body_size >= 8) {
                uint64_t n;
                std::memcpy(&n, r.body, 8);
                lost += n;
            }
        }
    }
    double per_call = calls ? static_cast<double>(size) / static_cast<double>(calls) : 0.0;
    std::printf("%s: %.1f MB, %llu calls recorded, %llu records lost: %.1f bytes per call\n",
                folder.c_str(), static_cast<double>(size) / 1e6,
                static_cast<unsigned long long>(calls), static_cast<unsigned long long>(lost),
                per_call);
    return {per_call, lost};
}

// A ring that holds what a starved drain falls behind by over a whole loop (16 blocks of
// 16 MiB): for the trace the offline check is timed on, which must not stop at a loss.
constexpr uint32_t kLossFreeBlockBytes = 16u << 20;

int run(const Args& a) {
    std::string dir =
        (fs::temp_directory_path() / ("ndkct-trace-bench-" + std::to_string(::getpid()))).string();
    fs::remove_all(dir);
    // The capture as ndkct runs it (data digests: the data-path rules judged offline), and the
    // capture without digests (NDKCAP_NO_DIGESTS: the calls and callbacks alone), each writing
    // its trace to a file in the temporary folder.
    conformance::CaptureSettings to_file{dir, a.digest_in_call ? NDKCAP_DIGEST_IN_CALL : 0u, 0};
    to_file.digest_limit = a.digest_limit;
    conformance::CaptureSettings without_digests{dir + "-nodigests", NDKCAP_NO_DIGESTS, 0};
    to_file.block_bytes = without_digests.block_bytes = a.block_kb * 1024u;
    ULONG payload = a.bytes ? a.bytes : a.latency ? 64 : 512;
    // The figures' names: the mode and the payload (loop_512B., latency_64B.).
    std::string prefix =
        std::string(a.latency ? "latency_" : "loop_") + std::to_string(payload) + "B" +
        (a.digest_limit ? "_limit" + std::to_string(a.digest_limit) : std::string()) + ".";
    if (!a.only.empty()) {
        std::optional<conformance::CaptureSettings> how;
        if (a.only == "captured") how = to_file;
        if (a.only == "bare") how = without_digests;
        Rig rig(a.provider, how, payload);
        for (int r = 0; r < a.rounds; ++r)
            std::printf("%s: %.3f M calls/s\n", a.only.c_str(), rig.loop(a.iterations) / 1e6);
        rig.s->close_adapter();
        // Records the ring could not keep make a loop look cheaper than it is: say so.
        if (how) {
            std::printf("trace: ");
            (void)size_per_call(how->directory);
            if (!a.keep.empty())
                fs::copy_file(trace_in(how->directory), a.keep,
                              fs::copy_options::overwrite_existing);
        }
        fs::remove_all(dir);
        fs::remove_all(without_digests.directory);
        return 0;
    }
    Rig plain(a.provider, std::nullopt, payload);
    Rig captured(a.provider, to_file, payload);
    Rig bare(a.provider, without_digests, payload);
    std::printf("provider %s, %s, %zu iterations x %d rounds\n", a.provider.c_str(),
                a.latency ? "post->completion latency of 64-byte writes"
                          : "NdkWrite (512 bytes) + NdkGetCqResults loop",
                a.iterations, a.rounds);
    // Ratios > 1: slower with the capture. [0] with digests, [1] without.
    std::vector<double> ratios[2], cpu_ratios[2], process_ratios[2];
    double plain_ns = 1e300;               // the plain loop's CPU per iteration, best round
    std::vector<double> plain_latency_us;  // --latency: each round's plain median
    for (int r = 0; r < a.rounds; ++r) {
        double p, c, b;
        if (a.latency) {
            // Interleaved, one write of each rig in turn (the order rotating), rather than a
            // block of each: a guest's clock and its host's load drift by tens of per cent
            // within a second, and that drift then falls on the three alike.
            std::vector<double> took[3];
            Rig* rigs[3] = {&plain, &captured, &bare};
            for (size_t i = 0; i < a.iterations; ++i)
                for (size_t k = 0; k < 3; ++k) {
                    size_t which = (i + k) % 3;
                    took[which].push_back(rigs[which]->one_latency(i));
                }
            p = median(took[0]) / ticks_per_us();
            plain_latency_us.push_back(p);
            c = median(took[1]) / ticks_per_us();
            b = median(took[2]) / ticks_per_us();
            ratios[0].push_back(c / p);
            ratios[1].push_back(b / p);
        } else {
            p = plain.loop(a.iterations);
            plain_ns = std::min(plain_ns, plain.cpu / static_cast<double>(a.iterations) * 1e9);
            c = captured.loop(a.iterations);
            b = bare.loop(a.iterations);
            ratios[0].push_back(p / c);
            ratios[1].push_back(p / b);
            cpu_ratios[0].push_back(captured.cpu / plain.cpu);
            cpu_ratios[1].push_back(bare.cpu / plain.cpu);
            process_ratios[0].push_back(captured.process_cpu / plain.process_cpu);
            process_ratios[1].push_back(bare.process_cpu / plain.process_cpu);
        }
        if (a.latency)
            std::printf(
                "  round %d: median us %.3f without, %.3f captured (%+.1f %%), %.3f "
                "captured without digests (%+.1f %%)\n",
                r + 1, p, c, (ratios[0].back() - 1) * 100, b, (ratios[1].back() - 1) * 100);
        else
            std::printf(
                "  round %d: M calls/s %.3f without, %.3f captured (%+.1f %%; CPU of the "
                "calling thread %+.1f %%, of the process %+.1f %%), %.3f without digests "
                "(%+.1f %%; CPU %+.1f %%, process %+.1f %%)\n",
                r + 1, p / 1e6, c / 1e6, (ratios[0].back() - 1) * 100,
                (cpu_ratios[0].back() - 1) * 100, (process_ratios[0].back() - 1) * 100, b / 1e6,
                (ratios[1].back() - 1) * 100, (cpu_ratios[1].back() - 1) * 100,
                (process_ratios[1].back() - 1) * 100);
    }
    plain.s->close_adapter();
    captured.s->close_adapter();
    bare.s->close_adapter();
    if (a.latency) {
        bench::Interval plain_us = bench::bootstrap_median(plain_latency_us);
        figure(prefix + "plain_us", plain_us.value, "us", &plain_us, "lower", "",
               "post->completion without the capture, median of each round");
    }
    // Sized before the overhead is summed up: a record the ring could not keep cost the call
    // less than one it kept, so a loop that lost records looks cheaper than the capture is.
    std::printf("trace size with data digests: ");
    TraceSize with = size_per_call(dir);
    std::printf("trace size without data digests: ");
    TraceSize without = size_per_call(without_digests.directory);
    const uint64_t lost_by[2] = {with.lost, without.lost};
    if (!a.latency) cost_floor(plain_ns, payload);
    const char* what = a.latency ? "post->completion latency" : "NdkWrite + NdkGetCqResults rate";
    std::string shape = std::string(a.latency ? "post->completion latency of " : "NdkWrite of ") +
                        std::to_string(payload) + " bytes" +
                        (a.latency ? "" : " + NdkGetCqResults, rate") + " on " + a.provider +
                        ", captured/plain";
    for (int k = 0; k < 2; ++k) {
        const char* how = k == 0 ? "with data digests" : "without data digests";
        auto& v = ratios[k];
        std::printf("capture overhead %s (%s): median %+.1f %% (rounds %+.1f .. %+.1f %%)\n", how,
                    what, (median(v) - 1) * 100, (*std::min_element(v.begin(), v.end()) - 1) * 100,
                    (*std::max_element(v.begin(), v.end()) - 1) * 100);
        std::string lost_note;
        if (lost_by[k]) {
            lost_note = ", " + std::to_string(lost_by[k]) +
                        " records lost (the ring overflowed: a lower bound)";
            std::printf(
                "  note: the capture %s lost %llu records: its ring overflowed while the drain "
                "fell behind, and a call whose record is lost does less than one whose record is "
                "kept, so the ratio above is a lower bound (a larger ring: --block-kb)\n",
                how, static_cast<unsigned long long>(lost_by[k]));
        }
        // The targets are for the capture as ndkct runs it (with digests).
        bench::Interval ci = bench::bootstrap_median(v);
        figure(prefix + (k == 0 ? "overhead_ratio" : "overhead_ratio_no_digests"), ci.value,
               "ratio", &ci, "lower", k == 0 ? (a.latency ? "<= 1.02" : "<= 1.10") : "",
               shape +
                   (k == 0 ? (a.digest_limit ? ", data digests of blocks up to " +
                                                   std::to_string(a.digest_limit) + " bytes"
                                             : std::string(", data digests"))
                           : std::string(", NDKCAP_NO_DIGESTS")) +
                   lost_note);
        if (!a.latency) {
            bench::Interval thread = bench::bootstrap_median(cpu_ratios[k]);
            bench::Interval process = bench::bootstrap_median(process_ratios[k]);
            figure(prefix + (k == 0 ? "thread_cpu_ratio" : "thread_cpu_ratio_no_digests"),
                   thread.value, "ratio", &thread, "lower", "",
                   "CPU time of the calling thread, captured/plain");
            figure(prefix + (k == 0 ? "process_cpu_ratio" : "process_cpu_ratio_no_digests"),
                   process.value, "ratio", &process, "lower", "",
                   "CPU time of the process (the calls and the drain thread), captured/plain");
            std::printf(
                "capture overhead %s in CPU time of the calling thread (the NDK call path): "
                "median %+.1f %%\n",
                how, (median(cpu_ratios[k]) - 1) * 100);
            std::printf(
                "capture overhead %s in CPU time of the process (the call path and the "
                "drain): median %+.1f %%\n",
                how, (median(process_ratios[k]) - 1) * 100);
        }
    }

    figure(prefix + "bytes_per_call", with.bytes_per_call, "bytes", nullptr, "lower", "",
           "trace file bytes over the calls recorded");
    figure(prefix + "bytes_per_call_no_digests", without.bytes_per_call, "bytes", nullptr, "lower",
           "", "trace file bytes over the calls recorded");
    fs::remove_all(without_digests.directory);
    // The offline check is timed on the captured loop's trace, which must be whole: one that
    // stopped at a loss is judged only up to it (and the time then says little about checking).
    // A loop that lost records runs once more, into a ring a starved drain cannot overflow.
    std::string judged_dir = dir;
    if (with.lost && !a.latency) {
        conformance::CaptureSettings roomy = to_file;
        roomy.directory = dir + "-judged";
        roomy.block_bytes = kLossFreeBlockBytes;
        {
            Rig again(a.provider, roomy, payload);
            again.loop(a.iterations);
            again.s->close_adapter();
        }
        std::printf(
            "the loop's trace lost records: the offline check judges one more loop's, "
            "captured into a %u MiB ring: ",
            16u * (kLossFreeBlockBytes >> 20));
        (void)size_per_call(roomy.directory);
        judged_dir = roomy.directory;
    }
    std::string trace = trace_in(judged_dir);
    std::vector<uint8_t> data;
    std::string why;
    trace::read_file(trace, data, why);
    auto t0 = Clock::now();
    double c0 = cpu_seconds();
    trace::Verdicts v = trace::check(data);
    double took = seconds_since(t0), cpu = cpu_seconds() - c0;
    std::printf("judged: %llu records, %llu calls%s\n", static_cast<unsigned long long>(v.records),
                static_cast<unsigned long long>(v.calls),
                v.stopped.empty() ? "" : (" (stopped: " + v.stopped + ")").c_str());
    std::printf(
        "offline checking: %.2f M recorded calls/s, %.2f M records/s on one core "
        "(in CPU time; %.2f M calls/s in wall time) (%s)\n",
        static_cast<double>(v.calls) / cpu / 1e6, static_cast<double>(v.records) / cpu / 1e6,
        static_cast<double>(v.calls) / took / 1e6, v.failed() ? "FINDINGS" : "clean");
    // The checking target is for a long trace on one core; a guest's short trace of the
    // latency run says nothing about it.
    if (!a.latency)
        figure("offline.calls_per_s", static_cast<double>(v.calls) / cpu, "calls/s", nullptr,
               "higher", ">= 2e6",
               "the loop's trace judged by the oracle, CPU time of one core" +
                   std::string(v.failed() ? " (FINDINGS: the trace is not clean)" : "") +
                   (v.stopped.empty() ? "" : " (stopped early: " + v.stopped + ")"));
    if (!a.keep.empty()) fs::copy_file(trace, a.keep, fs::copy_options::overwrite_existing);
    fs::remove_all(dir);
    if (judged_dir != dir) fs::remove_all(judged_dir);
    if (!a.traces.empty()) {
        uint64_t calls = 0, records = 0;
        size_t files = 0;
        double total = 0;
        for (const auto& e : fs::directory_iterator(a.traces)) {
            if (e.path().extension() != ".ndktrace") continue;
            std::vector<uint8_t> d;
            std::string unread;
            trace::read_file(e.path().string(), d, unread);
            double t1 = cpu_seconds();
            trace::Verdicts w = trace::check(d);
            total += cpu_seconds() - t1;
            calls += w.calls;
            records += w.records;
            ++files;
        }
        std::printf(
            "offline checking of %zu traces in %s: %.2f M calls/s, %.2f M records/s "
            "(CPU time)\n",
            files, a.traces.c_str(), static_cast<double>(calls) / total / 1e6,
            static_cast<double>(records) / total / 1e6);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string s = argv[i];
        if (s == "--provider" && i + 1 < argc)
            a.provider = argv[++i];
        else if (s == "--iterations" && i + 1 < argc)
            a.iterations = std::stoul(argv[++i]);
        else if (s == "--rounds" && i + 1 < argc)
            a.rounds = std::stoi(argv[++i]);
        else if (s == "--latency")
            a.latency = true;
        else if (s == "--traces" && i + 1 < argc)
            a.traces = argv[++i];
        else if (s == "--keep" && i + 1 < argc)
            a.keep = argv[++i];
        else if (s == "--only" && i + 1 < argc)
            a.only = argv[++i];
        else if (s == "--digest-in-call")
            a.digest_in_call = true;
        else if (s == "--digest-limit" && i + 1 < argc)
            a.digest_limit = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
        else if (s == "--block-kb" && i + 1 < argc) {
            // The library takes 4 KiB .. 1 GiB blocks (NDKCAP_OPTIONS.BlockBytes).
            unsigned long n = std::strtoul(argv[++i], nullptr, 10);
            if (n < 4 || n > 1024 * 1024) {
                std::fprintf(stderr, "trace_bench: --block-kb takes 4 .. 1048576\n");
                return 2;
            }
            a.block_kb = static_cast<uint32_t>(n);
        } else if (s == "--bytes" && i + 1 < argc) {
            // The rig's buffers are 4 pages.
            unsigned long n = std::strtoul(argv[++i], nullptr, 10);
            if (n == 0 || n > 4 * PAGE_SIZE) {
                std::fprintf(stderr, "trace_bench: --bytes takes 1 .. %u\n",
                             static_cast<unsigned>(4 * PAGE_SIZE));
                return 2;
            }
            a.bytes = static_cast<ULONG>(n);
        } else {
            std::fprintf(stderr,
                         "usage: trace_bench [--provider SPEC] [--iterations N] [--rounds R] "
                         "[--latency] [--bytes N] [--traces DIR] [--keep FILE] "
                         "[--only plain|captured|bare] [--digest-in-call] "
                         "[--digest-limit N] [--block-kb N]\n");
            return 2;
        }
    }
    if (!a.iterations) a.iterations = a.latency ? 20000 : 200000;
    try {
        return run(a);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "trace_bench: %s\n", error.what());
        return 1;
    }
}
