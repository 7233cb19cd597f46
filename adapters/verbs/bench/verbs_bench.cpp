// The verbs provider against raw libibverbs, in one run, on one device (issue #6).
//
// Both sides do the same work on the same device: a loopback pair of RC QPs (the provider's
// connected through its own rdma_cm path on 127.0.0.1, the raw pair moved to RTS by hand), with
// the device queues the provider creates for the same NDK depths, 64-byte messages, and one
// polling style (spin on a one-entry poll). Measured:
//   - Write, Read and Send post->completion latency (median, p99);
//   - the message rate of 64-byte writes in batches of 32 with only the last signaled
//     (NDK: NDK_OP_FLAG_SILENT_SUCCESS on the first 31; raw: IBV_SEND_SIGNALED on the last);
//   - NdkFastRegister + NdkInvalidate cycles per second against ibv_reg_mr_iova + ibv_dereg_mr of
//     the same size.
// The two implementations alternate in rounds (the order flips every round) so that drift on a
// shared machine hits both; each ratio is NDK/raw, printed with the spread of the per-round
// ratios. Nothing is asserted about speed: the figures are printed (see README.md).
//
// Usage: verbs_bench [--quick] [--rounds N] [--iterations N] [--fr-pages N]
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

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t at = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(at, v.size() - 1)];
}

struct Spread {
    double low = 1e300, high = 0;
    std::vector<double> all;
    void add(double r) {
        low = std::min(low, r);
        high = std::max(high, r);
        all.push_back(r);
    }
    double median() const { return percentile(all, 0.5); }
};

// ---------------------------------------------------------------- the measurements

struct Options {
    int rounds = 20;
    int iterations = 1000;  // latency samples per implementation and round
    int batches = 200;      // message-rate batches per implementation and round
    int cycles = 50;        // fast-register cycles per implementation and round
    ULONG fr_pages = 16;
};

// One latency measurement: `op` posts, `wait` reaps; `after` runs untimed.
struct Latency {
    std::vector<double> samples;  // microseconds
    void run(int n, const std::function<void()>& op, const std::function<void()>& wait,
             const std::function<void()>& after) {
        for (int k = 0; k < n; ++k) {
            uint64_t t0 = ticks();
            op();
            wait();
            samples.push_back(us_since(t0));
            if (after) after();
        }
    }
};

double seconds_for(const std::function<void()>& block) {
    uint64_t t0 = ticks();
    block();
    return us_since(t0) / 1e6;
}

void print_latency(const char* name, const std::vector<double>& ndk, const std::vector<double>& raw,
                   const Spread& rounds) {
    double nm = percentile(ndk, 0.5), rm = percentile(raw, 0.5);
    double n99 = percentile(ndk, 0.99), r99 = percentile(raw, 0.99);
    std::printf(
        "%-6s latency  NDK median %7.2f us p99 %7.2f us | raw median %7.2f us p99 %7.2f us | "
        "ratio median %.3f (rounds %.3f..%.3f) p99 %.3f  [target <= 1.05]\n",
        name, nm, n99, rm, r99, nm / rm, rounds.low, rounds.high, n99 / r99);
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
            o.rounds = 2;
            o.iterations = 50;
            o.batches = 10;
            o.cycles = 5;
        } else if (arg == "--rounds") {
            o.rounds = value("--rounds");
        } else if (arg == "--iterations") {
            o.iterations = value("--iterations");
        } else if (arg == "--fr-pages") {
            o.fr_pages = static_cast<ULONG>(value("--fr-pages"));
        } else {
            die("unknown argument " + arg +
                " (usage: verbs_bench [--quick] [--rounds N] [--iterations N] [--fr-pages N])");
        }
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);

    NdkSide ndk;
    ndk.open(o.fr_pages);
    if (o.fr_pages > ndk.info.FRMRPageCount) die("--fr-pages is above the adapter's FRMRPageCount");
    RawSide raw;
    const char* device = std::getenv("NDKCT_RDMA_DEV");
    raw.open(device && *device ? device : nullptr, ndk.info, size_t{o.fr_pages} * PAGE_SIZE);
    // Pinned after both opened: the provider's event and worker threads keep every CPU.
    pin_and_calibrate(o.rounds > 2 ? 1000 : 300);
    std::printf(
        "verbs_bench: device %s, RC loopback pair, QP depth %lu, %u-byte messages, %d rounds "
        "(NDK and raw alternate, order flipped each round); clock: %s, %.1f ticks/us\n",
        ibv_get_device_name(raw.context->device), static_cast<unsigned long>(kDepth), kMessage,
        o.rounds, kClockName, g_ticks_per_us);

    for (int k = 0; k < kReceivePool; ++k) {
        ndk.post_receive();
        raw.post_receive();
    }

    Latency write_n, write_r, read_n, read_r, send_n, send_r;
    Spread write_s, read_s, send_s, rate_s, fr_s;
    double rate_n_total = 0, rate_r_total = 0, fr_n_total = 0, fr_r_total = 0;
    std::vector<double> rate_n, rate_r, fr_n, fr_r;

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
    ndk.fast_register_cycle();
    raw.register_cycle();

    for (int round = 0; round < o.rounds; ++round) {
        bool ndk_first = round % 2 == 0;
        // Each step runs both implementations, in this round's order.
        auto both = [&](const std::function<void()>& n, const std::function<void()>& r) {
            if (ndk_first) {
                n();
                r();
            } else {
                r();
                n();
            }
        };
        auto latency = [&](Latency& n, Latency& r, Spread& spread,
                           const std::function<void()>& op_n, const std::function<void()>& op_r,
                           const std::function<void()>& after_n,
                           const std::function<void()>& after_r) {
            size_t n0 = n.samples.size(), r0 = r.samples.size();
            both([&] { n.run(o.iterations, op_n, ndk_wait, after_n); },
                 [&] { r.run(o.iterations, op_r, raw_wait, after_r); });
            std::vector<double> nn(n.samples.begin() + static_cast<long>(n0), n.samples.end());
            std::vector<double> rr(r.samples.begin() + static_cast<long>(r0), r.samples.end());
            spread.add(percentile(nn, 0.5) / percentile(rr, 0.5));
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
        both(
            [&] {
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
            });
        double mn = o.batches * kBatch / tn, mr = o.batches * kBatch / tr;
        rate_n.push_back(mn);
        rate_r.push_back(mr);
        rate_n_total += tn;
        rate_r_total += tr;
        rate_s.add(mn / mr);
        // Fast registration + invalidation against registration + deregistration.
        both(
            [&] {
                tn = seconds_for([&] {
                    for (int k = 0; k < o.cycles; ++k)
                        ndk.fast_register_cycle();
                });
            },
            [&] {
                tr = seconds_for([&] {
                    for (int k = 0; k < o.cycles; ++k)
                        raw.register_cycle();
                });
            });
        double cn = o.cycles / tn, cr = o.cycles / tr;
        fr_n.push_back(cn);
        fr_r.push_back(cr);
        fr_n_total += tn;
        fr_r_total += tr;
        fr_s.add(cn / cr);
    }

    std::printf("results (%d rounds x %d latency samples per implementation):\n", o.rounds,
                o.iterations);
    print_latency("Write", write_n.samples, write_r.samples, write_s);
    print_latency("Read", read_n.samples, read_r.samples, read_s);
    print_latency("Send", send_n.samples, send_r.samples, send_s);
    double all_n = o.rounds * o.batches * kBatch / rate_n_total;
    double all_r = o.rounds * o.batches * kBatch / rate_r_total;
    std::printf(
        "rate   %d-byte writes, batches of %d (last signaled): NDK %.0f msg/s | raw %.0f msg/s | "
        "ratio %.3f (rounds %.3f..%.3f, median %.3f)  [target >= 0.95]\n",
        kMessage, kBatch, all_n, all_r, all_n / all_r, rate_s.low, rate_s.high, rate_s.median());
    double fn = o.rounds * o.cycles / fr_n_total, fraw = o.rounds * o.cycles / fr_r_total;
    std::printf(
        "fastreg %lu pages (%lu KiB): NDK FastRegister+Invalidate %.0f cycles/s | raw "
        "ibv_reg_mr_iova+ibv_dereg_mr %.0f cycles/s | ratio %.3f (rounds %.3f..%.3f)\n",
        static_cast<unsigned long>(o.fr_pages),
        static_cast<unsigned long>(o.fr_pages * PAGE_SIZE / 1024), fn, fraw, fn / fraw, fr_s.low,
        fr_s.high);
    raw.close();
    ndk.close();
    // Last, after a clean close: the ctest short mode looks for this line.
    std::printf("ratios (NDK/raw): write %.3f read %.3f send %.3f rate %.3f fastreg %.3f\n",
                percentile(write_n.samples, 0.5) / percentile(write_r.samples, 0.5),
                percentile(read_n.samples, 0.5) / percentile(read_r.samples, 0.5),
                percentile(send_n.samples, 0.5) / percentile(send_r.samples, 0.5), all_n / all_r,
                fn / fraw);
    return 0;
}
