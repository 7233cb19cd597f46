// The capture library in a Linux process: memory from calloc, a file, the monotonic clock,
// thread numbers, the arena's linear mapping for digests, and a thread that drains the ring.
#include "ndkct/conformance/capture_host.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include <time.h>

namespace ndkct::conformance {

namespace {

std::mutex g_label_mutex;
std::string g_label = "session";

PVOID allocate(PVOID, SIZE_T bytes) {
    // Zeroed, as capture.h asks, and every page touched now: calloc's untouched pages would
    // fault in on the NDK call path the first time the ring reaches them (a kernel driver's
    // non-paged pool is resident from the start).
    void* memory = std::calloc(1, bytes);
    auto* page = static_cast<volatile char*>(memory);
    for (SIZE_T at = 0; memory && at < bytes; at += 4096)
        page[at] = 0;  // volatile: not folded into calloc's zeroing
    return memory;
}
VOID release(PVOID, PVOID memory, SIZE_T) {
    std::free(memory);
}
LONG write_file(PVOID context, const VOID* bytes, SIZE_T length) {
    return std::fwrite(bytes, 1, length, static_cast<std::FILE*>(context)) == length ? 0 : -1;
}

// The trace's times serve rules counted in hundreds of milliseconds (a callback's timeout, a
// call blocking in a callback: GEN-IRQL-01) that the judge compares with the live harness's
// limits, so a time must not be a clock tick early: CLOCK_MONOTONIC, in nanoseconds, the clock
// of the live harness's waits (steady_clock), so both judge with one clock.
// CLOCK_MONOTONIC_COARSE moves in 4 ms ticks (a callback the live harness gave up on after
// 10 s measured 9999.9996 ms in its trace), except where CLOCK_MONOTONIC is no finer: a kernel
// on a jiffies clocksource (the Soft-RoCE guest) serves CLOCK_MONOTONIC by a system call at
// the tick's resolution, and the coarse clock gives the same times from the vDSO.
clockid_t capture_clock() {
    static const clockid_t id = [] {
        timespec fine{}, coarse{};
        if (clock_getres(CLOCK_MONOTONIC, &fine) != 0 ||
            clock_getres(CLOCK_MONOTONIC_COARSE, &coarse) != 0)
            return CLOCK_MONOTONIC;
        bool finer = fine.tv_sec < coarse.tv_sec ||
                     (fine.tv_sec == coarse.tv_sec && fine.tv_nsec < coarse.tv_nsec);
        return finer ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_COARSE;
    }();
    return id;
}

ULONG64 timestamp(PVOID) {
    timespec t;
    clock_gettime(capture_clock(), &t);
    return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

std::atomic<ULONG> g_next_thread{1};
ULONG current_thread(PVOID) {
    thread_local ULONG id = g_next_thread.fetch_add(1);
    return id;
}

const VOID* map_page(const NDKCT_HOST_MEMORY* memory, PFN_NUMBER pfn) {
    return pfn < memory->PageCount ? NdkctPfnToAddress(memory, pfn) : nullptr;
}

std::string sanitize(std::string s) {
    for (char& c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'))
            c = '_';
    return s.empty() ? "session" : s;
}

}  // namespace

CaptureSettings CaptureSettings::from_environment() {
    CaptureSettings s;
    if (const char* dir = std::getenv("NDKCT_CAPTURE_DIR")) s.directory = dir;
    if (const char* bytes = std::getenv("NDKCT_CAPTURE_BYTES"); bytes && *bytes == '1')
        s.flags |= NDKCAP_SOURCE_BYTES | NDKCAP_LANDED_BYTES;
    if (const char* kb = std::getenv("NDKCT_CAPTURE_BLOCK_KB"))
        s.block_bytes = static_cast<uint32_t>(std::strtoul(kb, nullptr, 10)) * 1024u;
    if (const char* limit = std::getenv("NDKCT_CAPTURE_DIGEST_LIMIT"); limit && *limit) {
        char* end = nullptr;
        unsigned long long v = std::strtoull(limit, &end, 10);
        if (*end || v == 0 || v > 0xFFFFFFFFull || *limit == '-')
            throw std::runtime_error(std::string("NDKCT_CAPTURE_DIGEST_LIMIT='") + limit +
                                     "': a number of bytes, 1 .. 4294967295");
        s.digest_limit = static_cast<uint32_t>(v);
    }
    return s;
}

void set_capture_label(const std::string& label) {
    std::lock_guard lock(g_label_mutex);
    g_label = label;
}

std::string capture_label() {
    std::lock_guard lock(g_label_mutex);
    return g_label;
}

uint64_t CaptureHost::ticks_per_second() {
    return 1000000000u;  // timestamp(): nanoseconds
}

NDKCAP_HOST CaptureHost::host(void* context, LONG (*write)(PVOID, const VOID*, SIZE_T),
                              const NDKCT_HOST_MEMORY* memory) {
    NDKCAP_HOST h{};
    h.Size = sizeof h;
    h.Context = context;
    h.Allocate = allocate;
    h.Free = release;
    h.Write = write;
    h.Timestamp = timestamp;
    h.CurrentThread = current_thread;
    h.CurrentIrql = nullptr;  // user space has no IRQL; the trace says "unknown"
    h.MapPage = nullptr;
    (void)memory;
    return h;
}

// The capture's MapPage needs the arena, its Write the file: one context cannot carry both, so
// the host context is this object and the two callbacks below reach each through it.
namespace {
struct Context {
    std::FILE* file;
    const NDKCT_HOST_MEMORY* memory;
};
LONG context_write(PVOID context, const VOID* bytes, SIZE_T length) {
    return write_file(static_cast<Context*>(context)->file, bytes, length);
}
const VOID* context_map(PVOID context, PFN_NUMBER pfn) {
    return map_page(static_cast<Context*>(context)->memory, pfn);
}
}  // namespace

CaptureHost::CaptureHost(const CaptureSettings& settings, const Description& d) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(settings.directory, ec);
    std::string base = (fs::path(settings.directory) / sanitize(d.label)).string();
    path_ = base + ".ndktrace";
    for (int n = 2; fs::exists(path_); ++n)
        path_ = base + "." + std::to_string(n) + ".ndktrace";
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_) throw std::runtime_error("cannot write the trace " + path_);
    auto* context = new Context{file_, d.memory};
    NDKCAP_HOST h = host(context, context_write, d.memory);
    if (d.memory) h.MapPage = context_map;
    NDKCAP_OPTIONS o{};
    o.Size = sizeof o;
    o.Flags = settings.flags;
    o.BlockBytes = settings.block_bytes;
    o.DigestLimit = settings.digest_limit;
    o.TicksPerSecond = ticks_per_second();
    o.PfnSpace = d.memory ? d.memory->PageCount : 0;
    o.Seed = d.seed;
    o.AfInet = AF_INET;
    o.AfInet6 = AF_INET6;
    o.ProviderName = d.provider_name.c_str();
    o.ProviderVersion = d.provider_version.c_str();
    o.ProviderDescription = d.provider_description.c_str();
    o.ProviderSpec = d.provider_spec.c_str();
    o.Profile = d.profile.c_str();
    o.ProfileJson = d.profile_json.empty() ? nullptr : d.profile_json.c_str();
    o.Label = d.label.c_str();
    o.Platform = "linux-user";
    NTSTATUS status = NdkCaptureOpen(&h, &o, &capture_);
    if (status != STATUS_SUCCESS) {
        delete context;
        std::fclose(file_);
        throw std::runtime_error("NdkCaptureOpen failed (" + std::to_string(status) + ")");
    }
    context_ = context;
}

void CaptureHost::attach(NDK_ADAPTER* adapter) {
    NTSTATUS status = NdkCaptureAttach(capture_, adapter);
    if (status != STATUS_SUCCESS)
        throw std::runtime_error("NdkCaptureAttach failed (" + std::to_string(status) + ")");
    drainer_ = std::thread([this] {
        while (!stop_.load(std::memory_order_acquire)) {
            // A fast stream of calls (64 KiB of trace or more since the last drain): back
            // soon, so that the ring stays short (the calls defer small digests to the drain
            // only while less than 3/8 of it waits). Otherwise every millisecond: a slow loop
            // (a guest's) is not disturbed by wake-ups.
            LONG64 wrote = NdkCaptureDrain(capture_);
            std::this_thread::sleep_for(wrote >= 65536 ? std::chrono::microseconds(200)
                                                       : std::chrono::microseconds(1000));
        }
    });
}

void CaptureHost::adapter_closing() {
    if (capture_) NdkCaptureAdapterClosing(capture_);
}

void CaptureHost::drained(const void* qp) {
    if (capture_) NdkCaptureDrained(capture_, qp);
}

namespace {
// A count or a wait as the record's u32 field: 0 .. 0xFFFFFFFF.
ULONG u32_field(long long n) {
    return static_cast<ULONG>(std::clamp(n, 0ll, 0xFFFFFFFFll));
}
}  // namespace

void CaptureHost::overdue(const void* cq, size_t expected, size_t arrived,
                          std::chrono::milliseconds waited) {
    if (capture_)
        NdkCaptureOverdue(capture_, cq, u32_field(static_cast<long long>(expected)),
                          u32_field(static_cast<long long>(arrived)), u32_field(waited.count()));
}

void CaptureHost::unnotified(const void* cq, std::chrono::milliseconds waited) {
    if (capture_) NdkCaptureUnnotified(capture_, cq, u32_field(waited.count()));
}

void CaptureHost::adapter_closed() {
    if (capture_) NdkCaptureAdapterClosed(capture_);
}

NDKCAP_STATS CaptureHost::close() {
    if (!capture_) return stats_;
    stop_ = true;
    if (drainer_.joinable()) drainer_.join();
    NdkCaptureGetStats(capture_, &stats_);
    NdkCaptureClose(capture_);
    capture_ = nullptr;
    std::fclose(file_);
    file_ = nullptr;
    delete static_cast<Context*>(context_);
    context_ = nullptr;
    return stats_;
}

CaptureHost::~CaptureHost() {
    close();
}

}  // namespace ndkct::conformance
