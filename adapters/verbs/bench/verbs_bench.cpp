// The verbs provider against raw libibverbs, in one run, on one device (issue #6).
//
// Both sides do the same work on the same device: a loopback pair of RC QPs (the provider's
// connected through its own rdma_cm path on 127.0.0.1, the raw pair moved to RTS by hand), with
// the device queues the provider creates for the same NDK depths, 64-byte messages, and one
// polling style (spin on a one-entry poll). Measured:
//   - Write, Read and Send post->completion latency (median, p99);
//   - the message rate of 64-byte writes in batches of 32 with only the last signaled
//     (NDK: NDK_OP_FLAG_SILENT_SUCCESS on the first 31; raw: IBV_SEND_SIGNALED on the last);
//   - NdkFastRegister + NdkInvalidate cycles per second, with the provider's registration cache
//     and without it (NDKCT_VERBS_FR_CACHE=0, a second adapter), against ibv_reg_mr_iova +
//     ibv_dereg_mr and against NdkRegisterMr + NdkDeregisterMr of the same pages, for 1, 16 and
//     256 pages.
// The implementations alternate in rounds (the order flips every round) so that drift on a
// shared machine hits all; each ratio is the median of the per-round ratios with its 95 %
// bootstrap interval (bench/README.md). Rounds continue until every interval is within +-3 %
// or --rounds is reached; a figure whose interval is wider is marked "not settled" (the machine
// was too noisy to conclude). Nothing is asserted about speed: the figures are printed, also as
// `ndkct-bench:` lines for ./ndkct bench (see README.md).
//
// Usage: verbs_bench [--quick] [--rounds MAX] [--min-rounds N] [--iterations N] [--fr-pages N]
//                    [--no-uncached]
// Needs an RDMA device: run it through adapters/rxe/device-run.
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ndkct/bench/stats.hpp"
#include "pairs.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace {

using namespace ndkct::adapters::verbs::bench;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- the clock
//
// The guest's clocksource is refined-jiffies (qemu TCG: the kernel marks the TSC unstable because
// the vCPUs' TSCs are not synchronized), so steady_clock ticks in 4 ms steps there. The benchmark
// pins itself to one CPU and reads the TSC directly, calibrated against steady_clock over a few
// hundred milliseconds (the calibration's error scales every figure alike; ratios do not depend
// on it). Elsewhere it falls back to steady_clock.
#if defined(__x86_64__) || defined(__i386__)
inline uint64_t ticks() {
    return __rdtsc();
}
constexpr const char* kClockName = "TSC (one pinned CPU)";
#else
inline uint64_t ticks() {
    return static_cast<uint64_t>(Clock::now().time_since_epoch().count());
}
constexpr const char* kClockName = "steady_clock";
#endif
double g_ticks_per_us = 1;

void pin_and_calibrate(int milliseconds) {
    int cpu = sched_getcpu();
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);  // best effort: threads created later are free
    }
    auto w0 = Clock::now();
    uint64_t t0 = ticks();
    while (Clock::now() - w0 < std::chrono::milliseconds(milliseconds)) {
    }
    auto w1 = Clock::now();
    uint64_t t1 = ticks();
    g_ticks_per_us =
        static_cast<double>(t1 - t0) / std::chrono::duration<double, std::micro>(w1 - w0).count();
}
inline double us_since(uint64_t start) {
    return static_cast<double>(ticks() - start) / g_ticks_per_us;
}

// ---------------------------------------------------------------- statistics

using ndkct::bench::bootstrap_median;
using ndkct::bench::Figure;
using ndkct::bench::Interval;
using ndkct::bench::percentile;

struct Options {
    int rounds = 60;       // at most
    int min_rounds = 12;   // at least
    int iterations = 400;  // latency samples per implementation and round
    int batches = 100;     // message-rate batches per implementation and round
    int cycles = 100;      // registration cycles per implementation, size and round
    std::vector<ULONG> fr_pages{1, 16, 256};
    bool uncached = true;  // also measure the provider with NDKCT_VERBS_FR_CACHE=0
    bool quick = false;
};

// One latency measurement: `op` posts, `wait` reaps; `after` runs untimed.
void latency_run(std::vector<double>& samples, int n, const std::function<void()>& op,
                 const std::function<void()>& wait, const std::function<void()>& after) {
    for (int k = 0; k < n; ++k) {
        uint64_t t0 = ticks();
        op();
        wait();
        samples.push_back(us_since(t0));
        if (after) after();
    }
}

double seconds_for(const std::function<void()>& block) {
    uint64_t t0 = ticks();
    block();
    return us_since(t0) / 1e6;
}

// A figure measured per round: the per-round values, summarized by their median and its
// bootstrap interval.
struct Series {
    std::string name, unit, better, target;
    std::vector<double> rounds;
    Interval ci() const { return bootstrap_median(rounds); }
};

void emit(const Series& s, const std::string& note = {}) {
    Interval i = s.ci();
    Figure f;
    f.bench = "verbs";
    f.name = s.name;
    f.value = i.value;
    f.unit = s.unit;
    f.ci = &i;
    f.better = s.better;
    f.target = s.target;
    f.note = note;
    ndkct::bench::emit(f);
}

std::string describe(const Series& s) {
    Interval i = s.ci();
    char text[200];
    std::snprintf(text, sizeof text, "%.3f [%.3f..%.3f]%s", i.value, i.low, i.high,
                  i.settled() ? "" : " (not settled: too noisy to conclude)");
    return text;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int k = 1; k < argc; ++k) {
        std::string arg = argv[k];
        auto value = [&](const char* name) {
            if (k + 1 >= argc) die(std::string(name) + " needs a value");
            int v = std::atoi(argv[++k]);
            if (v <= 0) die(std::string(name) + " needs a positive number");
            return v;
        };
        if (arg == "--quick") {
            o.quick = true;
            o.rounds = 2;
            o.min_rounds = 2;
            o.iterations = 50;
            o.batches = 10;
            o.cycles = 5;
        } else if (arg == "--rounds") {
            o.rounds = value("--rounds");
            o.min_rounds = std::min(o.min_rounds, o.rounds);
        } else if (arg == "--min-rounds") {
            o.min_rounds = value("--min-rounds");
        } else if (arg == "--iterations") {
            o.iterations = value("--iterations");
        } else if (arg == "--fr-pages") {
            o.fr_pages = {static_cast<ULONG>(value("--fr-pages"))};
        } else if (arg == "--no-uncached") {
            o.uncached = false;
        } else {
            die("unknown argument " + arg +
                " (usage: verbs_bench [--quick] [--rounds MAX] [--min-rounds N] [--iterations N] "
                "[--fr-pages N] [--no-uncached])");
        }
    }
    o.min_rounds = std::min(o.min_rounds, o.rounds);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    ULONG most = *std::max_element(o.fr_pages.begin(), o.fr_pages.end());

    NdkSide ndk;
    ndk.open(most);
    if (most > ndk.info.FRMRPageCount) die("--fr-pages is above the adapter's FRMRPageCount");
    // The same provider without its registration cache: a second adapter opened with
    // NDKCT_VERBS_FR_CACHE=0 (read at open), for the before/after comparison in one run.
    NdkSide uncached;
    if (o.uncached) {
        const char* old = std::getenv("NDKCT_VERBS_FR_CACHE");
        std::string saved = old ? old : "";
        setenv("NDKCT_VERBS_FR_CACHE", "0", 1);
        uncached.open(most);
        if (old)
            setenv("NDKCT_VERBS_FR_CACHE", saved.c_str(), 1);
        else
            unsetenv("NDKCT_VERBS_FR_CACHE");
    }
    RawSide raw;
    const char* device = std::getenv("NDKCT_RDMA_DEV");
    raw.open(device && *device ? device : nullptr, ndk.info, size_t{most} * PAGE_SIZE);
    // Pinned after all opened: the provider's event and worker threads keep every CPU.
    pin_and_calibrate(o.quick ? 300 : 1000);
    std::printf(
        "verbs_bench: device %s, RC loopback pair, QP depth %lu, %u-byte messages, %d..%d rounds "
        "(implementations alternate, order flipped each round); clock: %s, %.1f ticks/us\n",
        ibv_get_device_name(raw.context->device), static_cast<unsigned long>(kDepth), kMessage,
        o.min_rounds, o.rounds, kClockName, g_ticks_per_us);

    for (int k = 0; k < kReceivePool; ++k) {
        ndk.post_receive();
        raw.post_receive();
    }

    auto ndk_wait = [&] { NdkSide::wait_one(ndk.cq_a); };
    auto raw_wait = [&] { RawSide::wait_one(raw.cq[0]); };
    auto ndk_rebuy = [&] {
        NdkSide::wait_one(ndk.cq_b);
        ndk.post_receive();
    };
    auto raw_rebuy = [&] {
        RawSide::wait_one(raw.cq[1]);
        raw.post_receive();
    };
    auto ndk_batch = [&] {
        for (int k = 0; k < kBatch; ++k)
            ndk.write(k == kBatch - 1 ? 0 : NDK_OP_FLAG_SILENT_SUCCESS);
        NdkSide::wait_one(ndk.cq_a);
    };
    auto raw_batch = [&] {
        for (int k = 0; k < kBatch; ++k)
            raw.write(k == kBatch - 1 ? IBV_SEND_SIGNALED : 0);
        RawSide::wait_one(raw.cq[0]);
    };

    // Warm-up, untimed: caches, the lazily built paths of both libraries.
    for (int k = 0; k < 20; ++k) {
        ndk.write(0);
        ndk_wait();
        raw.write(IBV_SEND_SIGNALED);
        raw_wait();
    }
    ndk_batch();
    raw_batch();
    for (ULONG pages : o.fr_pages) {
        ndk.fast_register_cycle(pages);
        if (o.uncached) uncached.fast_register_cycle(pages);
        ndk.register_cycle(pages);
        raw.register_cycle(pages);
        raw.bind_cycle(pages);
    }

    std::vector<double> write_n, write_r, read_n, read_r, send_n, send_r;
    Series write_s{"latency.write.median.ratio_raw", "ratio", "lower", "<= 1.05"};
    Series read_s{"latency.read.median.ratio_raw", "ratio", "lower", "<= 1.05"};
    Series send_s{"latency.send.median.ratio_raw", "ratio", "lower", "<= 1.05"};
    Series rate_s{"rate.write64.batch32.ratio_raw", "ratio", "higher", ">= 0.95"};
    Series rate_abs{"rate.write64.batch32.ndk", "msg/s", "higher", ""};
    struct FrSeries {
        ULONG pages;
        Series cached_raw, cached_reg, uncached_raw, cached_uncached, cached, raw, reg, uncached,
            binds, binds_raw;
    };
    std::vector<FrSeries> fr;
    for (ULONG pages : o.fr_pages) {
        std::string p = "fastreg." + std::to_string(pages) + "p.";
        fr.push_back({pages,
                      {p + "cached.ratio_raw", "ratio", "higher", ">= 1.0"},
                      {p + "cached.ratio_ndk_register", "ratio", "higher", ""},
                      {p + "uncached.ratio_raw", "ratio", "higher", ""},
                      {p + "cached.ratio_uncached", "ratio", "higher", ""},
                      {p + "cached.cycles", "cycles/s", "higher", ""},
                      {p + "raw.cycles", "cycles/s", "higher", ""},
                      {p + "ndk_register.cycles", "cycles/s", "higher", ""},
                      {p + "uncached.cycles", "cycles/s", "higher", ""},
                      {p + "raw_binds.cycles", "cycles/s", "higher", ""},
                      {p + "raw_binds.ratio_raw", "ratio", "higher", ""}});
    }

    auto all_settled = [&] {
        for (const Series* s : {&write_s, &read_s, &send_s, &rate_s})
            if (!s->ci().settled()) return false;
        for (const FrSeries& f : fr) {
            if (!f.cached_raw.ci().settled() || !f.cached_reg.ci().settled()) return false;
            if (o.uncached && !f.uncached_raw.ci().settled()) return false;
        }
        return true;
    };

    int round = 0;
    for (; round < o.rounds; ++round) {
        if (round >= o.min_rounds && all_settled()) break;
        bool forward = round % 2 == 0;
        // Each step runs every implementation, in this round's order.
        auto each = [&](std::vector<std::function<void()>> steps) {
            if (!forward) std::reverse(steps.begin(), steps.end());
            for (auto& step : steps)
                step();
        };
        auto latency = [&](std::vector<double>& n, std::vector<double>& r, Series& series,
                           const std::function<void()>& op_n, const std::function<void()>& op_r,
                           const std::function<void()>& after_n,
                           const std::function<void()>& after_r) {
            size_t n0 = n.size(), r0 = r.size();
            each({[&] { latency_run(n, o.iterations, op_n, ndk_wait, after_n); },
                  [&] { latency_run(r, o.iterations, op_r, raw_wait, after_r); }});
            std::vector<double> nn(n.begin() + static_cast<long>(n0), n.end());
            std::vector<double> rr(r.begin() + static_cast<long>(r0), r.end());
            series.rounds.push_back(percentile(nn, 0.5) / percentile(rr, 0.5));
        };
        latency(
            write_n, write_r, write_s, [&] { ndk.write(0); }, [&] { raw.write(IBV_SEND_SIGNALED); },
            nullptr, nullptr);
        latency(
            read_n, read_r, read_s, [&] { ndk.read(); }, [&] { raw.read(); }, nullptr, nullptr);
        latency(
            send_n, send_r, send_s, [&] { ndk.send(); }, [&] { raw.send(); }, ndk_rebuy, raw_rebuy);
        // Message rate: messages per second over whole batches.
        double tn = 0, tr = 0;
        each({[&] {
                  tn = seconds_for([&] {
                      for (int k = 0; k < o.batches; ++k)
                          ndk_batch();
                  });
              },
              [&] {
                  tr = seconds_for([&] {
                      for (int k = 0; k < o.batches; ++k)
                          raw_batch();
                  });
              }});
        rate_s.rounds.push_back(tr / tn);
        rate_abs.rounds.push_back(o.batches * kBatch / tn);
        // Registration cycles, per size: cached fast registration, uncached, NdkRegisterMr, raw.
        for (FrSeries& f : fr) {
            // Cycles per second, each side running up to o.cycles cycles or 50 ms, whichever
            // comes first (NdkRegisterMr of 256 pages runs at tens per second here).
            auto rate_of = [&](const std::function<void()>& cycle) {
                int n = 0;
                uint64_t t0 = ticks();
                double spent = 0;
                do {
                    cycle();
                    ++n;
                    spent = us_since(t0) / 1e6;
                } while (n < o.cycles && spent < 0.05);
                return n / spent;
            };
            double c = 0, u = 0, g = 0, w = 0, b = 0;
            std::vector<std::function<void()>> steps{
                [&] { c = rate_of([&] { ndk.fast_register_cycle(f.pages); }); },
                [&] { g = rate_of([&] { ndk.register_cycle(f.pages); }); },
                [&] { w = rate_of([&] { raw.register_cycle(f.pages); }); },
                [&] { b = rate_of([&] { raw.bind_cycle(f.pages); }); }};
            if (o.uncached)
                steps.push_back(
                    [&] { u = rate_of([&] { uncached.fast_register_cycle(f.pages); }); });
            each(steps);
            f.cached.rounds.push_back(c);
            f.raw.rounds.push_back(w);
            f.reg.rounds.push_back(g);
            f.cached_raw.rounds.push_back(c / w);
            f.cached_reg.rounds.push_back(c / g);
            f.binds.rounds.push_back(b);
            f.binds_raw.rounds.push_back(b / w);
            if (o.uncached) {
                f.uncached.rounds.push_back(u);
                f.uncached_raw.rounds.push_back(u / w);
                f.cached_uncached.rounds.push_back(c / u);
            }
        }
    }
    bool settled = all_settled();

    std::printf(
        "results (%d rounds x %d latency samples per implementation; medians of per-round "
        "ratios with 95 %% bootstrap intervals; %s):\n",
        round, o.iterations,
        settled ? "every interval within +-3 %"
                : "NOT every interval within +-3 %: the machine was too noisy to conclude "
                  "on the figures marked below");
    auto latency_line = [&](const char* name, const std::vector<double>& n,
                            const std::vector<double>& r, const Series& s) {
        std::printf(
            "%-6s latency  NDK median %7.2f us p99 %7.2f us | raw median %7.2f us p99 %7.2f us | "
            "ratio %s  [target <= 1.05]\n",
            name, percentile(n, 0.5), percentile(n, 0.99), percentile(r, 0.5), percentile(r, 0.99),
            describe(s).c_str());
    };
    latency_line("Write", write_n, write_r, write_s);
    latency_line("Read", read_n, read_r, read_s);
    latency_line("Send", send_n, send_r, send_s);
    std::printf(
        "rate   %d-byte writes, batches of %d (last signaled): NDK %.0f msg/s | ratio %s  "
        "[target >= 0.95]\n",
        kMessage, kBatch, rate_abs.ci().value, describe(rate_s).c_str());
    for (const FrSeries& f : fr) {
        std::printf(
            "fastreg %3lu pages: FastRegister+Invalidate cached %.0f /s, uncached %.0f /s | "
            "NdkRegisterMr+NdkDeregisterMr %.0f /s | ibv_reg_mr_iova+ibv_dereg_mr %.0f /s\n",
            static_cast<unsigned long>(f.pages), f.cached.ci().value,
            o.uncached ? f.uncached.ci().value : 0.0, f.reg.ci().value, f.raw.ci().value);
        std::printf(
            "        raw verbs, the cache's two window binds alone: %.0f /s, vs raw "
            "registration %s\n",
            f.binds.ci().value, describe(f.binds_raw).c_str());
        Interval t = f.cached_raw.ci();
        const char* verdict = t.low >= 1.0   ? "met: the whole interval is at or above 1.0"
                              : t.high < 1.0 ? "missed: the whole interval is below 1.0"
                                             : "undecided: the interval straddles 1.0";
        std::printf("        cached/raw %s [target >= 1.0: %s]; cached/NdkRegisterMr %s\n",
                    describe(f.cached_raw).c_str(), verdict, describe(f.cached_reg).c_str());
        if (o.uncached)
            std::printf("        uncached/raw %s; cached/uncached %s\n",
                        describe(f.uncached_raw).c_str(), describe(f.cached_uncached).c_str());
    }
    for (const Series* s : {&write_s, &read_s, &send_s, &rate_s, &rate_abs})
        emit(*s);
    for (const FrSeries& f : fr) {
        for (const Series* s :
             {&f.cached_raw, &f.cached_reg, &f.cached, &f.raw, &f.reg, &f.binds, &f.binds_raw})
            emit(*s);
        if (o.uncached)
            for (const Series* s : {&f.uncached_raw, &f.cached_uncached, &f.uncached})
                emit(*s);
    }
    raw.close();
    if (o.uncached) uncached.close();
    ndk.close();
    // Last, after a clean close: the ctest short mode looks for this line.
    std::printf("ratios (NDK/raw): write %.3f read %.3f send %.3f rate %.3f fastreg %.3f\n",
                write_s.ci().value, read_s.ci().value, send_s.ci().value, rate_s.ci().value,
                fr.front().cached_raw.ci().value);
    return 0;
}
