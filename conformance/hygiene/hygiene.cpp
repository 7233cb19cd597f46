// ndkct-hygiene: open/close cycles of an adapter and of every NDK object kind on one provider,
// with the process's file descriptors, memory mappings, heap and the device's objects measured
// before and after each kind's cycles and printed. A provider that keeps anything a closed
// object held grows one of them; the kind's row says which, and the exit status is 1.
//
//   ndkct-hygiene --provider=SPEC [--cycles=N] [--kinds=adapter,cq,...]
//
// SPEC as everywhere (model, lib:PATH, verbs). Every call goes through the dispatch tables as a
// consumer makes it, waiting for its callback when it pends. The device's objects are counted
// by `rdma resource show` where the rdma tool and an RDMA device are (rxe in the guest).
#include <malloc.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include <dirent.h>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "ndkct/conformance/provider_spec.hpp"
#include "ndkct/ntstatus.h"
#include "ndkct/platform/arena.hpp"
#include "ndkct/platform/mdl.hpp"

namespace {

using namespace std::chrono_literals;
using ndkct::platform::Arena;

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "ndkct-hygiene: %s\n", what.c_str());
    std::exit(2);
}

// ---- what is measured ----

size_t entries(const char* folder) {
    size_t n = 0;
    if (DIR* d = opendir(folder)) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] != '.') ++n;
        closedir(d);
    }
    return n;
}

size_t lines(const char* path) {
    std::ifstream in(path);
    size_t n = 0;
    for (std::string line; std::getline(in, line);)
        ++n;
    return n;
}

// The device's objects by type ("pd 2 cq 3 qp 1 cm_id 0 mr 4 ctx 1 srq 0"), summed over devices.
std::map<std::string, long> device_objects() {
    std::map<std::string, long> out;
    FILE* p = popen("rdma resource show 2>/dev/null", "r");
    if (!p) return out;
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, p)) {
        std::istringstream words(buffer);
        std::string word, last;
        while (words >> word) {
            char* end = nullptr;
            long value = std::strtol(word.c_str(), &end, 10);
            if (end && *end == '\0' && !last.empty() && last.back() != ':') out[last] += value;
            last = word;
        }
    }
    pclose(p);
    return out;
}

struct Snapshot {
    size_t fds = 0, maps = 0, threads = 0;
    size_t heap = 0;  // bytes in use (mallinfo2: uordblks + hblkhd)
    std::map<std::string, long> device;
};

Snapshot now() {
    malloc_trim(0);
    Snapshot s;
    s.fds = entries("/proc/self/fd");
    s.maps = lines("/proc/self/maps");
    s.threads = entries("/proc/self/task");
    struct mallinfo2 m = mallinfo2();
    s.heap = m.uordblks + m.hblkhd;
    s.device = device_objects();
    return s;
}

std::string device_text(const std::map<std::string, long>& d) {
    std::string out;
    for (const auto& [kind, count] : d)
        if (kind != "ctx" || count)  // the contexts of other processes' tools are not ours
            out += (out.empty() ? "" : " ") + kind + " " + std::to_string(count);
    return out.empty() ? "-" : out;
}

// ---- calls through the dispatch tables, waiting where they pend ----

struct Wait {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    NTSTATUS status = STATUS_PENDING;
    NDK_OBJECT_HEADER* object = nullptr;
    void finish(NTSTATUS s, NDK_OBJECT_HEADER* o) {
        std::lock_guard l(m);
        status = s;
        object = o;
        done = true;
        cv.notify_all();
    }
    NTSTATUS wait() {
        std::unique_lock l(m);
        if (!cv.wait_for(l, 20s, [&] { return done; })) die("a pending request never completed");
        return status;
    }
};
void on_create(void* c, NTSTATUS s, NDK_OBJECT_HEADER* o) {
    static_cast<Wait*>(c)->finish(s, o);
}
void on_request(void* c, NTSTATUS s) {
    static_cast<Wait*>(c)->finish(s, nullptr);
}
void on_close(void* c) {
    static_cast<Wait*>(c)->finish(STATUS_SUCCESS, nullptr);
}
void on_cq(void*, NTSTATUS) {}
void on_srq(void*, NTSTATUS) {}
void on_connect(void*, NDK_CONNECTOR*) {}

template <typename T>
const auto& table(T* object) {
    return *object->Dispatch;
}

// A create: STATUS_SUCCESS with the object, or STATUS_PENDING and the object in the callback.
template <typename T, typename Call>
T* create(const char* what, Call call) {
    Wait w;
    T* object = nullptr;
    NTSTATUS s = call(&w, &object);
    if (s == STATUS_PENDING) {
        s = w.wait();
        object = reinterpret_cast<T*>(w.object);
    }
    if (s != STATUS_SUCCESS || !object)
        die(std::string(what) + " failed: 0x" + std::to_string(static_cast<unsigned>(s)));
    return object;
}

void request(const char* what, const std::function<NTSTATUS(Wait*)>& call) {
    Wait w;
    NTSTATUS s = call(&w);
    if (s == STATUS_PENDING) s = w.wait();
    if (s != STATUS_SUCCESS)
        die(std::string(what) + " failed: 0x" + std::to_string(static_cast<unsigned>(s)));
}

template <typename T>
void close(T* object) {
    auto fn = *reinterpret_cast<NDK_FN_CLOSE_OBJECT* const*>(object->Dispatch);
    Wait w;
    NTSTATUS s = fn(&object->Header, on_close, &w);
    if (s == STATUS_PENDING) s = w.wait();
    if (s != STATUS_SUCCESS) die("NdkCloseObject failed");
}

// ---- the adapter and the kinds ----

struct Adapter {
    const NDKCT_PROVIDER_ENTRY_POINTS* entry;
    Arena& arena;
    NDK_ADAPTER* adapter = nullptr;
    NDK_PD* pd = nullptr;
    NDK_CQ* cq = nullptr;

    Adapter(const NDKCT_PROVIDER_ENTRY_POINTS* e, Arena& a) : entry(e), arena(a) {}
    void open() {
        NDKCT_OPEN_OPTIONS o{};
        o.Size = sizeof o;
        o.Version = NDKCT_MAKE_VERSION(2, 1);
        char message[256] = {};
        o.ErrorMessage = message;
        o.ErrorMessageSize = sizeof message;
        if (entry->OpenAdapter(&arena.host_memory(), &o, &adapter) != STATUS_SUCCESS)
            die(std::string("cannot open the adapter: ") + message);
    }
    void shut() {
        entry->CloseAdapter(adapter);
        adapter = nullptr;
    }
    NDK_PD* new_pd() {
        return create<NDK_PD>("NdkCreatePd", [&](Wait* w, NDK_PD** out) {
            return table(adapter).NdkCreatePd(adapter, on_create, w, out);
        });
    }
    NDK_CQ* new_cq() {
        return create<NDK_CQ>("NdkCreateCq", [&](Wait* w, NDK_CQ** out) {
            return table(adapter).NdkCreateCq(adapter, 64, on_cq, nullptr, nullptr, on_create, w,
                                              out);
        });
    }
};

sockaddr_in loopback() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;  // port 0: the provider picks
}

using Cycle = std::function<void(Adapter&)>;

std::vector<std::pair<std::string, Cycle>> kinds(ndkct::platform::LockedBuffer& buffer) {
    return {
        {"adapter",  // with a PD and a CQ in it (closed with the adapter)
         [](Adapter& a) {
             a.shut();
             a.open();
             a.pd = a.new_pd();
             a.cq = a.new_cq();
         }},
        {"pd", [](Adapter& a) { close(a.new_pd()); }},
        {"cq", [](Adapter& a) { close(a.new_cq()); }},
        {"mr",
         [&buffer](Adapter& a) {
             NDK_MR* mr = create<NDK_MR>("NdkCreateMr", [&](Wait* w, NDK_MR** out) {
                 return table(a.pd).NdkCreateMr(a.pd, FALSE, on_create, w, out);
             });
             auto chain = ndkct::platform::describe(buffer, 0, buffer.size());
             request("NdkRegisterMr", [&](Wait* w) {
                 return table(mr).NdkRegisterMr(mr, chain.head(), buffer.size(),
                                                NDK_MR_FLAG_ALLOW_LOCAL_WRITE, on_request, w);
             });
             request("NdkDeregisterMr",
                     [&](Wait* w) { return table(mr).NdkDeregisterMr(mr, on_request, w); });
             close(mr);
         }},
        {"fast_register_mr",
         [](Adapter& a) {
             NDK_MR* mr = create<NDK_MR>("NdkCreateMr", [&](Wait* w, NDK_MR** out) {
                 return table(a.pd).NdkCreateMr(a.pd, TRUE, on_create, w, out);
             });
             request("NdkInitializeFastRegisterMr", [&](Wait* w) {
                 return table(mr).NdkInitializeFastRegisterMr(mr, 16, TRUE, on_request, w);
             });
             close(mr);
         }},
        {"mw",
         [](Adapter& a) {
             close(create<NDK_MW>("NdkCreateMw", [&](Wait* w, NDK_MW** out) {
                 return table(a.pd).NdkCreateMw(a.pd, on_create, w, out);
             }));
         }},
        {"srq",
         [](Adapter& a) {
             close(create<NDK_SRQ>("NdkCreateSrq", [&](Wait* w, NDK_SRQ** out) {
                 return table(a.pd).NdkCreateSrq(a.pd, 16, 1, 0, on_srq, nullptr, nullptr,
                                                 on_create, w, out);
             }));
         }},
        {"qp",
         [](Adapter& a) {
             static int context;
             close(create<NDK_QP>("NdkCreateQp", [&](Wait* w, NDK_QP** out) {
                 return table(a.pd).NdkCreateQp(a.pd, a.cq, a.cq, &context, 16, 16, 1, 1, 0,
                                                on_create, w, out);
             }));
         }},
        {"connector",
         [](Adapter& a) {
             close(create<NDK_CONNECTOR>("NdkCreateConnector", [&](Wait* w, NDK_CONNECTOR** out) {
                 return table(a.adapter).NdkCreateConnector(a.adapter, on_create, w, out);
             }));
         }},
        {"listener",
         [](Adapter& a) {
             NDK_LISTENER* l =
                 create<NDK_LISTENER>("NdkCreateListener", [&](Wait* w, NDK_LISTENER** out) {
                     return table(a.adapter).NdkCreateListener(a.adapter, on_connect, nullptr,
                                                               on_create, w, out);
                 });
             sockaddr_in address = loopback();
             request("NdkListen", [&](Wait* w) {
                 return table(l).NdkListen(l, reinterpret_cast<sockaddr*>(&address), sizeof address,
                                           on_request, w);
             });
             close(l);
         }},
        {"shared_endpoint",
         [](Adapter& a) {
             sockaddr_in address = loopback();
             close(create<NDK_SHARED_ENDPOINT>(
                 "NdkCreateSharedEndpoint", [&](Wait* w, NDK_SHARED_ENDPOINT** out) {
                     return table(a.adapter).NdkCreateSharedEndpoint(
                         a.adapter, reinterpret_cast<sockaddr*>(&address), sizeof address,
                         on_create, w, out);
                 }));
         }},
        {"lam",
         [&buffer](Adapter& a) {
             auto chain = ndkct::platform::describe(buffer, 0, buffer.size());
             size_t pages = buffer.size() / PAGE_SIZE + 1;
             std::vector<unsigned char> storage(sizeof(NDK_LOGICAL_ADDRESS_MAPPING) +
                                                pages * sizeof(NDK_LOGICAL_ADDRESS));
             auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(storage.data());
             ULONG size = static_cast<ULONG>(storage.size()), fbo = 0;
             request("NdkBuildLAM", [&](Wait* w) {
                 return table(a.adapter).NdkBuildLAM(a.adapter, chain.head(), buffer.size(),
                                                     on_request, w, lam, &size, &fbo);
             });
             table(a.adapter).NdkReleaseLAM(a.adapter, lam);
         }},
    };
}

}  // namespace

int main(int argc, char** argv) {
    std::string spec_text = "model", wanted;
    long cycles = 10000;
    long long history = 0;  // heap bytes a cycle may keep: the provider's documented history
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.rfind("--provider=", 0) == 0)
            spec_text = arg.substr(11);
        else if (arg.rfind("--cycles=", 0) == 0)
            cycles = std::stol(arg.substr(9));
        else if (arg.rfind("--kinds=", 0) == 0)
            wanted = "," + arg.substr(8) + ",";
        else if (arg.rfind("--history-bytes=", 0) == 0)
            history = std::stoll(arg.substr(16));
        else
            die("usage: ndkct-hygiene --provider=SPEC [--cycles=N] [--kinds=adapter,cq,...] "
                "[--history-bytes=N]");
    }
    auto specs = ndkct::conformance::parse_provider_specs(spec_text);
    if (specs.size() != 1) die("one provider, please");
    const NDKCT_PROVIDER_ENTRY_POINTS* entry = &ndkct::conformance::entry_points_for(specs[0]);
    Arena arena(1024);
    auto buffer = arena.allocate(8 * PAGE_SIZE);
    Adapter a(entry, arena);
    auto selected = [&](const std::string& name) {
        return wanted.empty() || wanted.find("," + name + ",") != std::string::npos;
    };
    // One adapter first, with one cycle of every kind, then closed: what is made once per
    // process (a device probe; librdmacm opens a device context for the first rdma_cm id bound
    // to the device and keeps it, with its file descriptors, until the process ends) is there at
    // the start too. `start` is then compared with the end, when everything is closed again.
    a.open();
    a.pd = a.new_pd();
    a.cq = a.new_cq();
    for (auto& [name, cycle] : kinds(buffer))
        if (selected(name)) cycle(a);
    close(a.cq);
    close(a.pd);
    a.shut();
    Snapshot start = now();
    a.open();
    a.pd = a.new_pd();
    a.cq = a.new_cq();
    bool flat = true;
    std::printf("%-17s %7s %8s  %-9s %-11s %-9s %-22s %-16s %s\n", "kind", "cycles", "seconds",
                "fds", "mappings", "threads", "heap bytes", "heap growth",
                "device objects (before -> after)");
    for (auto& [name, cycle] : kinds(buffer)) {
        if (!selected(name)) continue;
        // One cycle first: what is made once per process (a probe, a cache) is not growth.
        cycle(a);
        Snapshot before = now();
        auto started = std::chrono::steady_clock::now();
        for (long k = 0; k < cycles; ++k)
            cycle(a);
        double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        Snapshot after = now();
        // The heap may hold a little more after (allocator bookkeeping, a grown container that
        // keeps its capacity); growth with the cycles is what a leak looks like: more than 64
        // bytes a cycle, or 256 KiB in all, fails.
        long long grown = static_cast<long long>(after.heap) - static_cast<long long>(before.heap);
        // --history-bytes: what a provider keeps per object by design until its adapter closes
        // (the reference provider's model keeps every object's entry, README.md); more is a leak.
        bool heap_flat = history > 0
                             ? grown <= history * cycles + 256 * 1024
                             : grown <= 256 * 1024 && !(grown > 64LL * cycles && grown > 16 * 1024);
        bool ok = after.fds == before.fds && after.maps <= before.maps + 2 &&
                  after.threads == before.threads && after.device == before.device && heap_flat;
        flat = flat && ok;
        std::printf(
            "%-17s %7ld %8.1f  %3zu->%-4zu %4zu->%-5zu %3zu->%-4zu %9zu->%-11zu "
            "%+7.0f B/cycle  %s -> %s%s\n",
            name.c_str(), cycles, seconds, before.fds, after.fds, before.maps, after.maps,
            before.threads, after.threads, before.heap, after.heap,
            static_cast<double>(grown) / static_cast<double>(cycles),
            device_text(before.device).c_str(), device_text(after.device).c_str(),
            ok ? "" : "   NOT FLAT");
        std::fflush(stdout);
    }
    close(a.cq);
    close(a.pd);
    a.shut();
    // Everything closed: what the cycles' adapter kept by design until its close (the reference
    // provider's object history) must be gone too.
    Snapshot end = now();
    long long kept = static_cast<long long>(end.heap) - static_cast<long long>(start.heap);
    bool end_flat = end.fds == start.fds && end.maps <= start.maps + 2 &&
                    end.threads == start.threads && end.device == start.device &&
                    kept <= 256 * 1024;
    flat = flat && end_flat;
    std::printf(
        "%-17s %7s %8s  %3zu->%-4zu %4zu->%-5zu %3zu->%-4zu %9zu->%-11zu %+9lld B total  "
        "%s -> %s%s\n",
        "all closed", "-", "-", start.fds, end.fds, start.maps, end.maps, start.threads,
        end.threads, start.heap, end.heap, kept, device_text(start.device).c_str(),
        device_text(end.device).c_str(), end_flat ? "" : "   NOT FLAT");
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("hygiene %s: %s (max RSS %ld KiB)\n", spec_text.c_str(),
                flat ? "flat: every kind returned to where it was" : "NOT FLAT", usage.ru_maxrss);
    return flat ? 0 : 1;
}
