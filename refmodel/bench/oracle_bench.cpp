// refmodel_bench: figures for the reference model, one line each. Asserts nothing about speed.
//
//   oracle:    a mixed trace recorded in simulate mode, replayed through a fresh check-mode model
//              (apply + observe_completion, real landing checks): checked calls per second.
//   oracle, many live objects: the same workload after --live-mrs registered MRs and
//              --live-lams LAMs were created and left open (lookups by token, by logical address
//              and by CQ must not scan them all).
//   simulate:  the same workload recorded (the model as provider): calls per second.
//   provider:  the reference provider through its NDK dispatch tables: NdkWrite + NdkGetCqResults
//              calls per second.
//   memory:    sizeof of the model's state types, and heap per created MR / QP (mallinfo2).
//
// Usage: refmodel_bench [--operations N] [--repeats R] [--provider-iterations N] [--objects N]
//                       [--live-mrs N] [--live-lams N] [--only oracle|oracle-many|provider|memory]
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
        else {
            std::fprintf(stderr,
                         "usage: %s [--operations N] [--repeats R] [--provider-iterations N] "
                         "[--objects N] [--only oracle|provider|memory]\n",
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

int oracle_run(const Args& args, size_t live_mrs, size_t live_lams, const char* label) {
    Readings readings = read_profile(spec::builtin_profile("default"));
    platform::Arena arena(256, 3);
    trace::Recorder recorder(arena, readings, 1, live_mrs, live_lams);
    auto t0 = Clock::now();
    trace::Trace t = recorder.record(args.operations);
    double recording = since(t0);
    std::printf("simulate%s: %.0f calls/s (recording %zu calls, %zu completions)\n", label,
                static_cast<double>(t.calls) / recording, t.calls, t.completions);

    double best = 1e300;
    bool clean = true;
    for (int r = 0; r < args.repeats; ++r) {
        Model check(readings, view_of(arena), Mode::check);
        check.open_adapter();
        auto start = Clock::now();
        trace::Replayed replayed = trace::replay(t, check);
        double took = since(start);
        best = std::min(best, took);
        if (!replayed.verdict.clean()) {
            clean = false;
            std::fprintf(stderr, "oracle%s: the replay was not clean:\n%s\n", label,
                         replayed.verdict.describe().substr(0, 2000).c_str());
        }
    }
    std::printf(
        "oracle%s: %.0f checked calls/s (trace of %zu calls and %zu completions, %zu steps; best "
        "of %d)\n",
        label, static_cast<double>(t.calls) / best, t.calls, t.completions, t.steps.size(),
        args.repeats);
    std::printf("oracle%s: %.0f checked calls+completions/s\n", label,
                static_cast<double>(t.calls + t.completions) / best);
    return clean ? 0 : 1;
}

int oracle(const Args& args) {
    return oracle_run(args, 0, 0, "");
}

int oracle_many(const Args& args) {
    char label[96];
    std::snprintf(label, sizeof label, " (%zu live MRs, %zu live LAMs)", args.live_mrs,
                  args.live_lams);
    return oracle_run(args, args.live_mrs, args.live_lams, label);
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

size_t heap_in_use() {
    return mallinfo2().uordblks;
}

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
    if (args.only.empty() || args.only == "provider") rc |= provider(args);
    if (args.only.empty() || args.only == "memory") rc |= memory(args);
    return rc;
}
