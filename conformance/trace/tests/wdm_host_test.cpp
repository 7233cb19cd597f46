// capture/windows/ndkcap_wdm.c, the capture's host in a Windows kernel driver, run here: the
// WDK's calls come from a Linux stand-in (wdm_stand_in/: POSIX files and threads behind the
// same names), the adapter is the reference provider, and the trace the host writes is judged.
// What runs is the host's own logic: the trace file, the drain thread, the order of attach and
// close, the clean-up after a failed start, a write that fails. (No Windows machine runs it:
// capture.wdm_driver only links it into a .sys.)
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ndkct/adapters/model_provider.hpp"
#include "ndkct/capture.h"
#include "ndkct/platform/arena.hpp"
#include "ndkct/platform/mdl.hpp"
#include "ndkct/trace/judge.hpp"
#include "ndkct/trace/reader.hpp"
#include "wdm_stand_in/stand_in.h"

// windows/ndkcap_wdm.h needs the WDK's types: its functions, as this file calls them (WCHAR is
// 16 bits there).
extern "C" {
struct _NDKCAP_WDM;
NTSTATUS NdkCapWdmStart(struct _NDK_ADAPTER* Adapter, const uint16_t* TracePath,
                        const NDKCAP_OPTIONS* Options, struct _NDKCAP_WDM** Capture);
VOID NdkCapWdmAdapterClosing(struct _NDKCAP_WDM* Capture);
NTSTATUS NdkCapWdmAdapterClosed(struct _NDKCAP_WDM* Capture);
VOID NdkCapWdmGetStats(const struct _NDKCAP_WDM* Capture, NDKCAP_STATS* Stats);
}

namespace {

using namespace ndkct;
namespace fs = std::filesystem;
constexpr NTSTATUS kDiskFull = static_cast<NTSTATUS>(0xC000007Fu);
constexpr NTSTATUS kPathNotFound = static_cast<NTSTATUS>(0xC000003Au);

// One asynchronous NDK request: its completion, waited for.
struct Completion {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    NTSTATUS status = STATUS_PENDING;
    NDK_OBJECT_HEADER* object = nullptr;

    void finish(NTSTATUS s, NDK_OBJECT_HEADER* o) {
        std::lock_guard lock(m);
        status = s;
        object = o;
        done = true;
        cv.notify_all();
    }
    static VOID created(PVOID c, NTSTATUS s, NDK_OBJECT_HEADER* o) {
        static_cast<Completion*>(c)->finish(s, o);
    }
    static VOID requested(PVOID c, NTSTATUS s) { static_cast<Completion*>(c)->finish(s, nullptr); }
    static VOID closed(PVOID c) { static_cast<Completion*>(c)->finish(STATUS_SUCCESS, nullptr); }
    // The request's outcome: what it returned, or its completion when it pended.
    NTSTATUS outcome(NTSTATUS returned) {
        if (returned != STATUS_PENDING) return returned;
        std::unique_lock lock(m);
        if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return done; }))
            return STATUS_IO_TIMEOUT;
        return status;
    }
};

VOID cq_notification(PVOID, NTSTATUS) {}

struct Adapter {
    platform::Arena arena{256};
    NDK_ADAPTER* adapter = nullptr;
    Adapter() {
        NDKCT_OPEN_OPTIONS o{};
        o.Size = sizeof o;
        o.Version = {2, 1};
        o.Seed = 3;
        EXPECT_EQ(STATUS_SUCCESS,
                  adapters::model_provider().OpenAdapter(&arena.host_memory(), &o, &adapter));
        wdm_stand_in_map(arena.physical_page(0), arena.page_count());
    }
    void close() {
        if (adapter) adapters::model_provider().CloseAdapter(adapter);
        adapter = nullptr;
    }
    ~Adapter() { close(); }
};

NTSTATUS close_object(NDK_OBJECT_HEADER* object) {
    Completion c;
    auto* any = reinterpret_cast<NDK_PD*>(object);  // every object: header, then Dispatch
    return c.outcome(any->Dispatch->NdkClosePd(&any->Header, Completion::closed, &c));
}

// A consumer's life on the adapter, through whatever Dispatch it has now: PD, CQ, an MR
// registered over arena memory and deregistered, everything closed. The calls' outcomes.
std::vector<NTSTATUS> consume(Adapter& a) {
    std::vector<NTSTATUS> out;
    Completion pd_done;
    NDK_PD* pd = nullptr;
    out.push_back(pd_done.outcome(
        a.adapter->Dispatch->NdkCreatePd(a.adapter, Completion::created, &pd_done, &pd)));
    if (!pd) pd = reinterpret_cast<NDK_PD*>(pd_done.object);
    Completion cq_done;
    NDK_CQ* cq = nullptr;
    out.push_back(cq_done.outcome(a.adapter->Dispatch->NdkCreateCq(
        a.adapter, 64, cq_notification, nullptr, nullptr, Completion::created, &cq_done, &cq)));
    if (!cq) cq = reinterpret_cast<NDK_CQ*>(cq_done.object);
    if (!pd || !cq) return out;
    Completion mr_done;
    NDK_MR* mr = nullptr;
    out.push_back(
        mr_done.outcome(pd->Dispatch->NdkCreateMr(pd, FALSE, Completion::created, &mr_done, &mr)));
    if (!mr) mr = reinterpret_cast<NDK_MR*>(mr_done.object);
    if (mr) {
        auto buffer = a.arena.allocate(2 * PAGE_SIZE);
        auto chain = platform::describe(buffer, 0, buffer.size());
        Completion registered, deregistered;
        out.push_back(registered.outcome(mr->Dispatch->NdkRegisterMr(
            mr, chain.head(), buffer.size(), NDK_MR_FLAG_ALLOW_LOCAL_WRITE, Completion::requested,
            &registered)));
        out.push_back(deregistered.outcome(
            mr->Dispatch->NdkDeregisterMr(mr, Completion::requested, &deregistered)));
        out.push_back(close_object(&mr->Header));
    }
    out.push_back(close_object(&cq->Header));
    out.push_back(close_object(&pd->Header));
    return out;
}

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

std::set<uint16_t> call_kinds(const std::vector<uint8_t>& bytes) {
    trace::Reader reader;
    reader.feed(bytes.data(), bytes.size());
    reader.finish();
    std::set<uint16_t> kinds;
    trace::Record r;
    while (reader.next(r) == trace::Reader::Next::record)
        if (NDKT_KIND_CLASS(r.head.kind) == NDKT_KIND_CALL) kinds.insert(r.head.kind);
    return kinds;
}

std::string trace_path(const std::string& name) {
    fs::path dir = fs::temp_directory_path() / ("ndkct-wdm-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return (dir / (name + ".ndktrace")).string();
}

NDKCAP_OPTIONS options() {
    NDKCAP_OPTIONS o{};
    o.Size = sizeof o;
    o.ProviderName = "ndkct-model";
    o.ProviderVersion = "0.1.0";
    o.Profile = "default";
    o.Label = "wdm host";
    return o;
}

// NdkCapWdmStart on the adapter, the trace at `path` (as the WDK takes it: 16-bit characters).
NTSTATUS start(NDK_ADAPTER* adapter, const std::string& path, struct _NDKCAP_WDM** capture,
               NDKCAP_OPTIONS o = options()) {
    std::u16string wide(path.begin(), path.end());
    return NdkCapWdmStart(adapter, reinterpret_cast<const uint16_t*>(wide.c_str()), &o, capture);
}

}  // namespace

// The miniport's three calls around a consumer: the drain thread writes the records while the
// adapter is open; the trace is whole, judged clean, says it comes from a Windows kernel with
// the performance counter's ticks and holds every call; nothing the host took (pool, the drain
// thread) is left.
TEST(WdmHost, AConsumersCallsGoIntoAWholeTraceAndNothingIsLeft) {
    wdm_stand_in_fail_writes_after(~0ull);
    std::string path = trace_path("whole");
    Adapter a;
    struct _NDKCAP_WDM* capture = nullptr;
    ASSERT_EQ(STATUS_SUCCESS, start(a.adapter, path, &capture));
    ASSERT_NE(nullptr, capture);
    EXPECT_EQ(1, wdm_stand_in_live_threads());
    for (NTSTATUS s : consume(a))
        EXPECT_EQ(STATUS_SUCCESS, s);
    // The drain thread writes them while the adapter is still open (every millisecond or so).
    NDKCAP_STATS stats{};
    for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
         stats.Records < 8 && std::chrono::steady_clock::now() < end;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        NdkCapWdmGetStats(capture, &stats);
    }
    EXPECT_GE(stats.Records, 8u) << "the drain thread did not drain";
    EXPECT_EQ(0u, stats.LostRecords);
    EXPECT_EQ(static_cast<uint64_t>(fs::file_size(path)), stats.BytesWritten);
    NdkCapWdmAdapterClosing(capture);
    a.close();
    EXPECT_EQ(STATUS_SUCCESS, NdkCapWdmAdapterClosed(capture));
    EXPECT_EQ(0, wdm_stand_in_live_allocations());
    EXPECT_EQ(0, wdm_stand_in_live_threads());

    auto bytes = read_all(path);
    trace::Header header;
    trace::Verdicts v = trace::check(bytes, {}, &header);
    EXPECT_TRUE(v.ended) << v.stopped;
    EXPECT_TRUE(v.stopped.empty()) << v.stopped;
    EXPECT_FALSE(v.failed());
    for (const auto& f : v.findings)
        ADD_FAILURE() << "record " << f.record << ": " << f.violation.message;
    EXPECT_EQ("windows-kernel", header.platform);
    EXPECT_EQ("ndkct-model", header.provider_name);
    EXPECT_EQ(1000000000u, header.ticks_per_second);  // the stand-in's counter frequency
    auto kinds = call_kinds(bytes);
    for (uint16_t fn : {NDKT_FN_CREATE_PD, NDKT_FN_CREATE_CQ, NDKT_FN_CREATE_MR,
                        NDKT_FN_REGISTER_MR, NDKT_FN_DEREGISTER_MR, NDKT_FN_CLOSE})
        EXPECT_TRUE(kinds.count(static_cast<uint16_t>(NDKT_KIND_CALL | fn))) << "function " << fn;
}

// A trace file that cannot be created: the start fails with the file's status, nothing is
// attached (the adapter's table is the provider's, its calls work), nothing is left, and the
// other calls take the NULL it gave.
TEST(WdmHost, AStartThatCannotCreateTheFileLeavesTheAdapterAsItWas) {
    wdm_stand_in_fail_writes_after(~0ull);
    Adapter a;
    const NDK_ADAPTER_DISPATCH* before = a.adapter->Dispatch;
    struct _NDKCAP_WDM* capture = reinterpret_cast<struct _NDKCAP_WDM*>(&a);
    EXPECT_EQ(kPathNotFound, start(a.adapter, "/nonexistent-folder/x.ndktrace", &capture));
    EXPECT_EQ(nullptr, capture);
    EXPECT_EQ(before, a.adapter->Dispatch);
    for (NTSTATUS s : consume(a))
        EXPECT_EQ(STATUS_SUCCESS, s);
    NdkCapWdmAdapterClosing(nullptr);
    EXPECT_EQ(STATUS_SUCCESS, NdkCapWdmAdapterClosed(nullptr));
    EXPECT_EQ(0, wdm_stand_in_live_allocations());
    EXPECT_EQ(0, wdm_stand_in_live_threads());
}

// Options whose Size was left 0 are refused, not taken for the defaults (the provider's name
// and profile would be silently lost); nothing is created.
TEST(WdmHost, OptionsWithoutTheirSizeAreRefused) {
    Adapter a;
    NDKCAP_OPTIONS o = options();
    o.Size = 0;
    struct _NDKCAP_WDM* capture = nullptr;
    std::string path = trace_path("no-size");
    fs::remove(path);
    EXPECT_EQ(STATUS_INVALID_PARAMETER, start(a.adapter, path, &capture, o));
    EXPECT_EQ(nullptr, capture);
    EXPECT_FALSE(fs::exists(path));
    EXPECT_EQ(0, wdm_stand_in_live_allocations());
}

// The header's write fails: the attach fails, so the start does, and undoes everything (the
// drain thread stopped, the capture closed, the adapter untouched).
TEST(WdmHost, AHeaderThatCannotBeWrittenFailsTheStartAndUndoesIt) {
    wdm_stand_in_fail_writes_after(16);
    std::string path = trace_path("no-header");
    Adapter a;
    const NDK_ADAPTER_DISPATCH* before = a.adapter->Dispatch;
    struct _NDKCAP_WDM* capture = nullptr;
    EXPECT_FALSE(NT_SUCCESS(start(a.adapter, path, &capture)));
    EXPECT_EQ(nullptr, capture);
    EXPECT_EQ(before, a.adapter->Dispatch);
    for (NTSTATUS s : consume(a))
        EXPECT_EQ(STATUS_SUCCESS, s);
    EXPECT_EQ(0, wdm_stand_in_live_allocations());
    EXPECT_EQ(0, wdm_stand_in_live_threads());
    wdm_stand_in_fail_writes_after(~0ull);
}

// The disk fills after the header: the consumer's calls are unaffected, the close says the
// write's status, and what reached the file is judged up to where it stops.
TEST(WdmHost, AWriteThatFailsIsTheClosesStatusAndTheTraceIsJudgedUpToIt) {
    std::string path = trace_path("disk-full");
    Adapter a;
    struct _NDKCAP_WDM* capture = nullptr;
    wdm_stand_in_fail_writes_after(~0ull);
    ASSERT_EQ(STATUS_SUCCESS, start(a.adapter, path, &capture));
    EXPECT_GT(fs::file_size(path), 0u);   // the header
    wdm_stand_in_fail_writes_after(100);  // from here: 100 bytes more, then the disk is full
    for (NTSTATUS s : consume(a))
        EXPECT_EQ(STATUS_SUCCESS, s);
    NdkCapWdmAdapterClosing(capture);
    a.close();
    EXPECT_EQ(kDiskFull, NdkCapWdmAdapterClosed(capture));
    EXPECT_EQ(0, wdm_stand_in_live_allocations());
    EXPECT_EQ(0, wdm_stand_in_live_threads());
    auto bytes = read_all(path);
    trace::Verdicts v = trace::check(bytes);
    EXPECT_FALSE(v.ended);
    EXPECT_FALSE(v.stopped.empty());
    EXPECT_FALSE(v.failed()) << "a trace cut short is not a provider failure";
    wdm_stand_in_fail_writes_after(~0ull);
}
