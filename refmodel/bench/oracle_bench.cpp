// refmodel_bench: figures for the reference model, one line each. Asserts nothing about speed.
//
//   oracle:    a mixed trace recorded in simulate mode, replayed through a fresh check-mode model
//              (apply + observe_completion, real landing checks): checked calls per second.
//   oracle, many live objects: the same workload after --live-mrs registered MRs and
//              --live-lams LAMs were created and left open (lookups by token, by logical address
//              and by CQ must not scan them all). The oracle's figures are the workload's calls
//              over its CPU time (the setup, many live objects' creation, is timed apart).
//   scale:     the oracle's rate against live MRs (--scale-mrs), live QPs on the workload's CQs
//              (--scale-qps) and trace length (--scale-operations), heap per live object, and
//              whether the rate stays flat.
//   simulate:  the same workload recorded (the model as provider): calls per second.
//   provider:  the reference provider through its NDK dispatch tables: NdkWrite + NdkGetCqResults
//              calls per second.
//   memory:    sizeof of the model's state types, and heap per created MR / QP (mallinfo2).
//
// Each figure is also one `ndkct-bench: {json}` line (the convention of `ndkct bench`).
//
// Usage: refmodel_bench [--operations N] [--repeats R] [--provider-iterations N] [--objects N]
//                       [--live-mrs N] [--live-lams N] [--scale-mrs N,N,..] [--scale-qps N,..]
//                       [--scale-operations N,..]
//                       [--only oracle|oracle-many|scale|provider|memory]
#include <malloc.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <time.h>

#include "ndkct/adapters/model_provider.hpp"
#include "ndkct/spec/profile.hpp"
#include "trace.hpp"

namespace {

using namespace ndkct;
using namespace ndkct::model;
using Clock = std::chrono::steady_clock;

struct Args {
    size_t operations = 20000;
    int repeats = 3;
    size_t provider_iterations = 200000;
    size_t objects = 10000;
    size_t live_mrs = 10000;
    size_t live_lams = 1000;
    std::string scale_mrs = "10,1000,100000";
    std::string scale_qps = "1000";
    std::string scale_operations = "10000,100000,1000000";
    std::string only;  // "oracle", "provider" or "memory": run just that part (for profiling)
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string_view k = argv[i];
        unsigned long long v = std::strtoull(argv[i + 1], nullptr, 10);
        if (k == "--operations")
            a.operations = v;
        else if (k == "--repeats")
            a.repeats = static_cast<int>(v);
        else if (k == "--provider-iterations")
            a.provider_iterations = v;
        else if (k == "--objects")
            a.objects = v;
        else if (k == "--live-mrs")
            a.live_mrs = v;
        else if (k == "--live-lams")
            a.live_lams = v;
        else if (k == "--only")
            a.only = argv[i + 1];
        else if (k == "--scale-mrs")
            a.scale_mrs = argv[i + 1];
        else if (k == "--scale-qps")
            a.scale_qps = argv[i + 1];
        else if (k == "--scale-operations")
            a.scale_operations = argv[i + 1];
        else {
            std::fprintf(stderr,
                         "usage: %s [--operations N] [--repeats R] [--provider-iterations N] "
                         "[--objects N] [--live-mrs N] [--live-lams N] [--scale-mrs N,N..] "
                         "[--scale-qps N,..] [--scale-operations N,..] "
                         "[--only oracle|oracle-many|scale|provider|memory]\n",
                         argv[0]);
            std::exit(2);
        }
    }
    if (a.repeats < 1) a.repeats = 1;
    return a;
}

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

HostMemoryView view_of(const platform::Arena& arena) {
    return {static_cast<std::byte*>(arena.host_memory().PhysicalBase),
            arena.host_memory().PageCount};
}

// ---- (a) The oracle on a recorded trace ----

// This thread's CPU time: what a shared, loaded machine disturbs least (figures are CPU time).
double cpu_now() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

size_t heap_in_use() {
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;  // small blocks and the large (mmapped) ones
}

// One machine-readable figure (bench/README.md on the i16c branch: `ndkct bench` collects them).
void emit(const char* name, double value, const char* unit, const char* better,
          const std::string& note = {}) {
    std::printf(
        "ndkct-bench: {\"bench\": \"refmodel\", \"name\": \"%s\", \"value\": %.6g, \"unit\": "
        "\"%s\", \"better\": \"%s\"%s%s%s}\n",
        name, value, unit, better, note.empty() ? "" : ", \"note\": \"", note.c_str(),
        note.empty() ? "" : "\"");
}

struct OracleFigures {
    size_t calls = 0, completions = 0;  // the workload's (setup excluded)
    size_t setup_calls = 0;
    double workload_rate = 0;     // checked calls/s of the workload, CPU time, best of the repeats
    double setup_rate = 0;        // checked calls/s of the setup (the live objects' creation)
    double simulate_rate = 0;     // the recording (the model as provider), calls/s
    double heap_after_setup = 0;  // bytes of heap the check-mode model holds after the setup
    bool clean = true;
};

OracleFigures oracle_measure(size_t operations, int repeats, size_t live_mrs, size_t live_lams,
                             size_t live_qps) {
    OracleFigures f;
    Readings readings = read_profile(spec::builtin_profile("default"));
    platform::Arena arena(256, 3);
    trace::Recorder recorder(arena, readings, 1, live_mrs, live_lams, live_qps);
    double t0 = cpu_now();
    trace::Trace t = recorder.record(operations);
    f.simulate_rate = static_cast<double>(t.calls) / (cpu_now() - t0);
    f.calls = t.calls - t.setup_calls;
    f.completions = t.completions;
    f.setup_calls = t.setup_calls;
    double best = 1e300, best_setup = 1e300;
    for (int r = 0; r < repeats; ++r) {
        size_t heap0 = heap_in_use();
        Model check(readings, view_of(arena), Mode::check);
        check.open_adapter();
        trace::Replayer replayer(t, check);
        double a = cpu_now();
        trace::Replayed setup = replayer.run(0, t.setup_steps);
        double b = cpu_now();
        f.heap_after_setup = static_cast<double>(heap_in_use() - heap0);
        trace::Replayed work = replayer.run(t.setup_steps, t.steps.size());
        double c = cpu_now();
        best_setup = std::min(best_setup, b - a);
        best = std::min(best, c - b);
        for (trace::Replayed* replayed : {&setup, &work})
            if (!replayed->verdict.clean()) {
                f.clean = false;
                std::fprintf(stderr, "oracle: the replay was not clean:\n%s\n",
                             replayed->verdict.describe().substr(0, 2000).c_str());
            }
    }
    f.workload_rate = static_cast<double>(f.calls) / best;
    f.setup_rate = static_cast<double>(f.setup_calls) / best_setup;
    return f;
}

int oracle_run(const Args& args, size_t live_mrs, size_t live_lams, const char* label,
               const char* figure) {
    OracleFigures f = oracle_measure(args.operations, args.repeats, live_mrs, live_lams, 0);
    std::printf("simulate%s: %.0f calls/s (recording, CPU time)\n", label, f.simulate_rate);
    std::printf(
        "oracle%s: %.0f checked calls/s (the mixed workload: %zu calls and %zu completions; "
        "CPU time of one core, best of %d; setup of %zu calls at %.0f calls/s apart)\n",
        label, f.workload_rate, f.calls, f.completions, args.repeats, f.setup_calls, f.setup_rate);
    std::printf("oracle%s: %.0f checked calls+completions/s\n", label,
                f.workload_rate * static_cast<double>(f.calls + f.completions) /
                    static_cast<double>(f.calls));
    emit(figure, f.workload_rate, "calls/s", "higher", ">= 2 M (1.5 M with 10,000 live MRs)");
    return f.clean ? 0 : 1;
}

int oracle(const Args& args) {
    return oracle_run(args, 0, 0, "", "oracle.mixed_trace");
}

int oracle_many(const Args& args) {
    char label[96];
    std::snprintf(label, sizeof label, " (%zu live MRs, %zu live LAMs)", args.live_mrs,
                  args.live_lams);
    return oracle_run(args, args.live_mrs, args.live_lams, label, "oracle.many_live_mrs");
}

// ---- (a') Scale: the oracle's rate against live objects and trace length ----

std::vector<size_t> parse_list(const std::string& s) {
    std::vector<size_t> out;
    for (size_t at = 0; at < s.size();) {
        size_t comma = s.find(',', at);
        if (comma == std::string::npos) comma = s.size();
        out.push_back(std::strtoull(s.substr(at, comma - at).c_str(), nullptr, 10));
        at = comma + 1;
    }
    return out;
}

// "flat" within 15 %; otherwise the ratio is the finding.
const char* growth(double ratio) {
    return ratio > 0.85 ? "flat (no growth with the count)" : "SLOWER: grows with the count";
}

int scale(const Args& args) {
    int rc = 0;
    // Live MRs (each with a local and a remote token), on the same mixed workload.
    std::vector<size_t> mrs = parse_list(args.scale_mrs);
    double first = 0, last = 0;
    for (size_t n : mrs) {
        OracleFigures f = oracle_measure(args.operations, args.repeats, n, 0, 0);
        rc |= f.clean ? 0 : 1;
        double per_mr = n ? f.heap_after_setup / static_cast<double>(n) : 0;
        std::printf(
            "scale: %zu live MRs: oracle %.0f checked calls/s on the workload; setup %.0f "
            "calls/s; check-mode heap %.0f bytes per live MR\n",
            n, f.workload_rate, f.setup_rate, per_mr);
        char name[96];
        std::snprintf(name, sizeof name, "oracle.live_mrs_%zu", n);
        emit(name, f.workload_rate, "calls/s", "higher");
        if (n == mrs.front()) first = f.workload_rate;
        last = f.workload_rate;
        if (n >= 1000) {
            std::snprintf(name, sizeof name, "oracle.heap_per_live_mr_%zu", n);
            emit(name, per_mr, "bytes", "lower");
        }
    }
    if (mrs.size() > 1)
        std::printf("scale: live MRs %zu -> %zu: rate ratio %.2f, %s\n", mrs.front(), mrs.back(),
                    last / first, growth(last / first));
    // Live QPs on the workload's CQs (a completion is looked up among the QPs of its CQ).
    for (size_t n : parse_list(args.scale_qps)) {
        OracleFigures base = oracle_measure(args.operations, args.repeats, 0, 0, 0);
        OracleFigures f = oracle_measure(args.operations, args.repeats, 0, 0, n);
        rc |= f.clean ? 0 : 1;
        std::printf(
            "scale: %zu live QPs on the workload's 2 CQs: oracle %.0f checked calls/s (%.0f "
            "without them): ratio %.2f, %s; check-mode heap %.0f bytes per live QP\n",
            n, f.workload_rate, base.workload_rate, f.workload_rate / base.workload_rate,
            growth(f.workload_rate / base.workload_rate),
            n ? (f.heap_after_setup - base.heap_after_setup) / static_cast<double>(n) : 0.0);
        char name[96];
        std::snprintf(name, sizeof name, "oracle.live_qps_%zu", n);
        emit(name, f.workload_rate, "calls/s", "higher");
    }
    // Trace length: the same workload, longer.
    std::vector<size_t> lengths = parse_list(args.scale_operations);
    first = last = 0;
    for (size_t ops : lengths) {
        OracleFigures f = oracle_measure(ops, std::max(1, args.repeats / 2), 0, 0, 0);
        rc |= f.clean ? 0 : 1;
        std::printf("scale: trace of %zu operations (%zu calls): oracle %.0f checked calls/s\n",
                    ops, f.calls, f.workload_rate);
        char name[96];
        std::snprintf(name, sizeof name, "oracle.trace_operations_%zu", ops);
        emit(name, f.workload_rate, "calls/s", "higher");
        if (ops == lengths.front()) first = f.workload_rate;
        last = f.workload_rate;
    }
    if (lengths.size() > 1)
        std::printf("scale: trace length %zu -> %zu operations: rate ratio %.2f, %s\n",
                    lengths.front(), lengths.back(), last / first, growth(last / first));
    return rc;
}

// ---- (b) The reference provider through its dispatch tables ----

struct Waiter {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    NTSTATUS status = STATUS_SUCCESS;
    NDK_OBJECT_HEADER* object = nullptr;
    NDK_CONNECTOR* connector = nullptr;

    void signal() {
        std::lock_guard lock(m);
        done = true;
        cv.notify_all();
    }
    void wait() {
        std::unique_lock lock(m);
        cv.wait(lock, [this] { return done; });
        done = false;
    }
};

void on_request(PVOID context, NTSTATUS status) {
    auto* w = static_cast<Waiter*>(context);
    w->status = status;
    w->signal();
}
void on_create(PVOID context, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    auto* w = static_cast<Waiter*>(context);
    w->status = status;
    w->object = object;
    w->signal();
}
void on_connect_event(PVOID context, NDK_CONNECTOR* connector) {
    auto* w = static_cast<Waiter*>(context);
    w->connector = connector;
    w->signal();
}

[[noreturn]] void fail(const char* what, NTSTATUS status) {
    std::fprintf(stderr, "provider: %s failed with 0x%08x\n", what, static_cast<unsigned>(status));
    std::exit(1);
}

// A create that may pend: the object, inline or from the completion.
// (The out-parameter is read through its address, after the call has written it.)
template <typename T>
T* created(const char* what, NTSTATUS status, Waiter& w, T* const* inline_object) {
    if (status == STATUS_PENDING) {
        w.wait();
        if (!NT_SUCCESS(w.status)) fail(what, w.status);
        return reinterpret_cast<T*>(w.object);
    }
    if (!NT_SUCCESS(status)) fail(what, status);
    return *inline_object;
}

void finished(const char* what, NTSTATUS status, Waiter& w) {
    if (status == STATUS_PENDING) {
        w.wait();
        status = w.status;
    }
    if (!NT_SUCCESS(status)) fail(what, status);
}

sockaddr_in loopback(uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

int provider(const Args& args) {
    platform::Arena arena(64, 9);
    const char* profile =
        R"({"name": "bench", "reference_provider": {"pending_percent": 0, "callback_thread": "inline_thread"}})";
    char error[256] = {};
    NDKCT_OPEN_OPTIONS options{
        sizeof(NDKCT_OPEN_OPTIONS), {0, 0}, profile, 1, nullptr, error, sizeof error};
    const auto& entry = adapters::model_provider();
    NDK_ADAPTER* adapter = nullptr;
    NTSTATUS s = entry.OpenAdapter(&arena.host_memory(), &options, &adapter);
    if (s != STATUS_SUCCESS) {
        std::fprintf(stderr, "provider: NdkctOpenAdapter failed: %s\n", error);
        return 1;
    }
    Waiter w, events;
    const NDK_ADAPTER_DISPATCH* ad = adapter->Dispatch;
    NDK_PD* pd = nullptr;
    pd = created("NdkCreatePd", ad->NdkCreatePd(adapter, on_create, &w, &pd), w, &pd);
    NDK_CQ *cq_a = nullptr, *cq_b = nullptr;
    cq_a = created("NdkCreateCq",
                   ad->NdkCreateCq(adapter, 4096, nullptr, nullptr, nullptr, on_create, &w, &cq_a),
                   w, &cq_a);
    cq_b = created("NdkCreateCq",
                   ad->NdkCreateCq(adapter, 4096, nullptr, nullptr, nullptr, on_create, &w, &cq_b),
                   w, &cq_b);
    NDK_QP *qp_a = nullptr, *qp_b = nullptr;
    qp_a = created(
        "NdkCreateQp",
        pd->Dispatch->NdkCreateQp(pd, cq_a, cq_a, nullptr, 256, 256, 2, 2, 0, on_create, &w, &qp_a),
        w, &qp_a);
    qp_b = created(
        "NdkCreateQp",
        pd->Dispatch->NdkCreateQp(pd, cq_b, cq_b, nullptr, 256, 256, 2, 2, 0, on_create, &w, &qp_b),
        w, &qp_b);

    // Loopback connection: listener for B, connector for A.
    NDK_LISTENER* listener = nullptr;
    listener =
        created("NdkCreateListener",
                ad->NdkCreateListener(adapter, on_connect_event, &events, on_create, &w, &listener),
                w, &listener);
    sockaddr_in at = loopback(5000), from = loopback(5001);
    finished("NdkListen",
             listener->Dispatch->NdkListen(listener, reinterpret_cast<PSOCKADDR>(&at), sizeof at,
                                           on_request, &w),
             w);
    NDK_CONNECTOR* active = nullptr;
    active = created("NdkCreateConnector", ad->NdkCreateConnector(adapter, on_create, &w, &active),
                     w, &active);
    Waiter connecting, accepting;
    NTSTATUS c = active->Dispatch->NdkConnect(active, qp_a, reinterpret_cast<PSOCKADDR>(&from),
                                              sizeof from, reinterpret_cast<PSOCKADDR>(&at),
                                              sizeof at, 4, 4, nullptr, 0, on_request, &connecting);
    if (!NT_SUCCESS(c)) fail("NdkConnect", c);
    events.wait();
    NDK_CONNECTOR* passive = events.connector;
    NTSTATUS a = passive->Dispatch->NdkAccept(passive, qp_b, 4, 4, nullptr, 0, nullptr, nullptr,
                                              on_request, &accepting);
    if (!NT_SUCCESS(a)) fail("NdkAccept", a);
    finished("NdkConnect", c, connecting);
    finished("NdkCompleteConnect",
             active->Dispatch->NdkCompleteConnect(active, nullptr, nullptr, on_request, &w), w);
    finished("NdkAccept", a, accepting);

    // Memory: A's source, B's remote-writable target.
    platform::LockedBuffer src = arena.allocate(4 * PAGE_SIZE), dst = arena.allocate(4 * PAGE_SIZE);
    platform::MdlChain src_mdl = platform::describe(src, 0, src.size()),
                       dst_mdl = platform::describe(dst, 0, dst.size());
    NDK_MR *mr_src = nullptr, *mr_dst = nullptr;
    mr_src = created("NdkCreateMr", pd->Dispatch->NdkCreateMr(pd, FALSE, on_create, &w, &mr_src), w,
                     &mr_src);
    mr_dst = created("NdkCreateMr", pd->Dispatch->NdkCreateMr(pd, FALSE, on_create, &w, &mr_dst), w,
                     &mr_dst);
    finished("NdkRegisterMr",
             mr_src->Dispatch->NdkRegisterMr(mr_src, src_mdl.head(), src.size(), 0, on_request, &w),
             w);
    finished("NdkRegisterMr",
             mr_dst->Dispatch->NdkRegisterMr(mr_dst, dst_mdl.head(), dst.size(),
                                             NDK_MR_FLAG_ALLOW_REMOTE_WRITE, on_request, &w),
             w);
    UINT32 local = mr_src->Dispatch->NdkGetLocalTokenFromMr(mr_src);
    UINT32 remote = mr_dst->Dispatch->NdkGetRemoteTokenFromMr(mr_dst);
    NDK_SGE sge{};
    sge.VirtualAddress = src.data();
    sge.Length = 512;
    sge.MemoryRegionToken = local;
    UINT64 remote_address = reinterpret_cast<uintptr_t>(dst.data());

    NDK_RESULT results[16];
    size_t calls = 0, completions = 0;
    auto t0 = Clock::now();
    for (size_t i = 0; i < args.provider_iterations; ++i) {
        NTSTATUS ws = qp_a->Dispatch->NdkWrite(qp_a, reinterpret_cast<PVOID>(i + 1), &sge, 1,
                                               remote_address, remote, 0);
        if (ws != STATUS_SUCCESS) fail("NdkWrite", ws);
        completions += cq_a->Dispatch->NdkGetCqResults(cq_a, results, 16);
        calls += 2;
    }
    double took = since(t0);
    std::printf(
        "provider: %.0f NDK calls/s (NdkWrite + NdkGetCqResults, %zu calls, %zu completions)\n",
        static_cast<double>(calls) / took, calls, completions);
    int rc =
        std::memcmp(dst.data(), src.data(), 512) == 0 && completions == args.provider_iterations
            ? 0
            : 1;
    if (rc) std::fprintf(stderr, "provider: the writes did not all complete or land\n");
    entry.CloseAdapter(adapter);
    return rc;
}

// ---- (c) Memory ----

int memory(const Args& args) {
    std::printf(
        "memory: sizeof Object %zu, ObjectState %zu, MrState %zu, QpState %zu, CqState %zu, "
        "Completion %zu, WorkRequest %zu, Call %zu bytes\n",
        sizeof(Object), sizeof(ObjectState), sizeof(MrState), sizeof(QpState), sizeof(CqState),
        sizeof(Completion), sizeof(WorkRequest), sizeof(Call));
    Readings readings = read_profile(spec::builtin_profile("default"));
    platform::Arena arena(16, 4);
    platform::LockedBuffer buffer = arena.allocate(2 * PAGE_SIZE);
    platform::MdlChain chain = platform::describe(buffer, 0, buffer.size());
    MdlView view = view_mdl(chain.head(), buffer.size());
    Model m(readings, view_of(arena), Mode::simulate);
    ObjectId adapter = m.open_adapter();
    ObjectId pd = m.apply(calls::CreatePd{adapter}, {}).created;
    ObjectId cq = m.apply(calls::CreateCq{adapter, 1024}, {}).created;
    size_t before = heap_in_use();
    for (size_t i = 0; i < args.objects; ++i) {
        ObjectId mr = m.apply(calls::CreateMr{pd, false}, {}).created;
        m.apply(calls::RegisterMr{mr, view, buffer.size(), NDK_MR_FLAG_ALLOW_LOCAL_WRITE}, {});
        Observed t;
        t.value = static_cast<uint32_t>(i + 1);
        m.apply(calls::GetLocalTokenFromMr{mr}, t);
    }
    size_t after_mrs = heap_in_use();
    for (size_t i = 0; i < args.objects; ++i)
        m.apply(calls::CreateQp{pd, cq, cq, i, 64, 64, 2, 2, 0}, {});
    size_t after_qps = heap_in_use();
    double n = static_cast<double>(args.objects);
    std::printf(
        "memory: %.0f heap bytes per registered MR (2 pages), %.0f per QP (%zu of each, "
        "object table growth included; %zu objects)\n",
        static_cast<double>(after_mrs - before) / n, static_cast<double>(after_qps - after_mrs) / n,
        args.objects, m.object_count());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Args args = parse(argc, argv);
    int rc = 0;
    if (args.only.empty() || args.only == "oracle") rc |= oracle(args);
    if (args.only.empty() || args.only == "oracle-many") rc |= oracle_many(args);
    if (args.only.empty() || args.only == "scale") rc |= scale(args);
    if (args.only.empty() || args.only == "provider") rc |= provider(args);
    if (args.only.empty() || args.only == "memory") rc |= memory(args);
    return rc;
}
