// The verbs provider when the device fails: runs under libndkct_verbs_faults.so (LD_PRELOAD)
// on a real device (rxe in the guest), arming faults through the interposer's functions.
// Each test is a finding of issue 18 or a fault it must survive:
// - a failed probe of the device was cached (every later open failed, blaming the wrong call),
//   and a failed inline-size probe lowered MaxInlineDataSize for the rest of the process;
// - requests held back by NDK_OP_FLAG_DEFER were lost when the device refused their chain;
// - a device refusal of a post is STATUS_INSUFFICIENT_RESOURCES, with no entry (WR-05);
// - an asynchronous error event (CQ overrun) reaches the consumer as CQ-STATUS-01 says.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <unistd.h>
#include <csignal>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../bench/pairs.hpp"
#include "verbs_faults.h"

namespace {

using namespace std::chrono_literals;
using ndkct::adapters::verbs::entry_points;
using ndkct::adapters::verbs::bench::finish;
using ndkct::adapters::verbs::bench::NdkSide;
using ndkct::adapters::verbs::bench::table;
using ndkct::adapters::verbs::bench::Waiter;

// ---- the interposer's functions, found at run time (the test fails without the preload) ----

struct Faults {
    decltype(&ndkct_verbs_fault_arm) arm = nullptr;
    decltype(&ndkct_verbs_fault_disarm_all) disarm_all = nullptr;
    decltype(&ndkct_verbs_fault_calls) calls = nullptr;
    decltype(&ndkct_verbs_fault_fired) fired = nullptr;
    decltype(&ndkct_verbs_fault_live_objects) live = nullptr;
    decltype(&ndkct_verbs_fault_leaks) leaks = nullptr;
    bool loaded() const { return arm && disarm_all && calls && fired && live && leaks; }
};

const Faults& faults() {
    static const Faults f = [] {
        Faults x;
        auto find = [](const char* name) { return dlsym(RTLD_DEFAULT, name); };
        x.arm = reinterpret_cast<decltype(x.arm)>(find("ndkct_verbs_fault_arm"));
        x.disarm_all =
            reinterpret_cast<decltype(x.disarm_all)>(find("ndkct_verbs_fault_disarm_all"));
        x.calls = reinterpret_cast<decltype(x.calls)>(find("ndkct_verbs_fault_calls"));
        x.fired = reinterpret_cast<decltype(x.fired)>(find("ndkct_verbs_fault_fired"));
        x.live = reinterpret_cast<decltype(x.live)>(find("ndkct_verbs_fault_live_objects"));
        x.leaks = reinterpret_cast<decltype(x.leaks)>(find("ndkct_verbs_fault_leaks"));
        return x;
    }();
    return f;
}

class Faulted : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(faults().loaded())
            << "run with LD_PRELOAD=libndkct_verbs_faults.so (adapters/verbs/faults)";
        faults().disarm_all();
    }
    void TearDown() override {
        faults().disarm_all();
        EXPECT_EQ(faults().leaks(), leaks_before) << "a device context closed with objects open";
    }
    unsigned long leaks_before = faults().loaded() ? faults().leaks() : 0;
};

// ---- opening an adapter in a child process (the probe is per process) ----

struct Opened {
    NTSTATUS status = STATUS_PENDING;
    NDK_ADAPTER_INFO info{};
    char message[200] = {};
};

Opened open_once(ndkct::platform::Arena& arena) {
    Opened out;
    NDKCT_OPEN_OPTIONS o{};
    o.Size = sizeof o;
    o.Version = NDKCT_MAKE_VERSION(2, 1);
    o.ErrorMessage = out.message;
    o.ErrorMessageSize = sizeof out.message;
    NDK_ADAPTER* adapter = nullptr;
    out.status = entry_points().OpenAdapter(&arena.host_memory(), &o, &adapter);
    if (out.status == STATUS_SUCCESS) {
        ULONG size = sizeof out.info;
        table(adapter).NdkQueryAdapterInfo(adapter, &out.info, &size);
        entry_points().CloseAdapter(adapter);
    }
    return out;
}

// In a fresh child (nothing probed yet): arms `fn` for calls nth .. nth+count-1 with `error`,
// opens the adapter, disarms, opens again. Returns both outcomes.
struct TwoOpens {
    Opened first, second;
    unsigned long fired = 0;
};

TwoOpens in_child(const char* fn, unsigned long nth, int error, unsigned long count) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return {};
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fds[0]);
        TwoOpens r;
        ndkct::platform::Arena arena(256);
        if (fn) faults().arm(fn, nth, error, count);
        r.first = open_once(arena);
        faults().disarm_all();
        r.fired = faults().fired();
        r.second = open_once(arena);
        ssize_t written = write(pipe_fds[1], &r, sizeof r);
        _exit(written == static_cast<ssize_t>(sizeof r) ? 0 : 1);
    }
    close(pipe_fds[1]);
    TwoOpens r;
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = read(pipe_fds[0], reinterpret_cast<char*>(&r) + got, sizeof r - got);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
    }
    close(pipe_fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == sizeof r)
        << "the child opening the adapter under " << (fn ? fn : "no fault") << " died";
    return r;
}

void expect_same_limits(const NDK_ADAPTER_INFO& want, const NDK_ADAPTER_INFO& got,
                        const std::string& what) {
    EXPECT_EQ(got.MaxInlineDataSize, want.MaxInlineDataSize) << what;
    EXPECT_EQ(got.MaxInitiatorQueueDepth, want.MaxInitiatorQueueDepth) << what;
    EXPECT_EQ(got.MaxReceiveQueueDepth, want.MaxReceiveQueueDepth) << what;
    EXPECT_EQ(got.MaxSrqDepth, want.MaxSrqDepth) << what;
    EXPECT_EQ(got.AdapterFlags, want.AdapterFlags) << what;
}

// A device call that fails while the provider probes the device (the first open of a process):
// the open fails, naming that call, or succeeds as if nothing happened; either way the next
// open finds the device's real limits. Before the fix the failed probe was kept: every later
// open failed ("cannot create a queue pair", blaming another call), and a failed inline-size
// probe lowered MaxInlineDataSize for the rest of the process.
TEST_F(Faulted, ProbeFailuresAreRetriedNeverKept) {
    TwoOpens clean = in_child(nullptr, 0, 0, 0);
    ASSERT_EQ(clean.first.status, STATUS_SUCCESS) << clean.first.message;
    struct Case {
        const char* fn;
        unsigned long nth;
        int error;
        unsigned long count;
    };
    const Case cases[] = {
        {"ibv_alloc_pd", 1, ENOMEM, 2},  {"ibv_create_cq", 1, ENOMEM, 2},
        {"ibv_resize_cq", 1, ENOMEM, 1}, {"ibv_create_qp", 1, ENOMEM, 1},
        {"ibv_create_qp", 2, ENOMEM, 2}, {"ibv_create_qp", 2, EINVAL, 1},
        {"ibv_create_qp", 3, EINVAL, 1}, {"ibv_create_qp", 3, ENOMEM, 3},
        {"ibv_create_qp", 4, EAGAIN, 2}, {"ibv_create_qp", 4, ENOMEM, 1},
    };
    for (const Case& c : cases) {
        std::string what = std::string(c.fn) + " call " + std::to_string(c.nth) + " x" +
                           std::to_string(c.count) + " " + strerrorname_np(c.error);
        TwoOpens r = in_child(c.fn, c.nth, c.error, c.count);
        EXPECT_GT(r.fired, 0u) << what << ": the fault never fired";
        if (r.first.status == STATUS_SUCCESS) {
            expect_same_limits(clean.first.info, r.first.info, what + " (first open)");
        } else {
            EXPECT_EQ(r.first.status, STATUS_INSUFFICIENT_RESOURCES) << what;
            EXPECT_NE(std::strstr(r.first.message, c.fn), nullptr)
                << what << ": the message blames another call: " << r.first.message;
        }
        ASSERT_EQ(r.second.status, STATUS_SUCCESS)
            << what << ": the failed probe was kept: " << r.second.message;
        expect_same_limits(clean.first.info, r.second.info, what + " (second open)");
    }
}

// ---- a connected pair ----

class FaultedPair : public Faulted {
  protected:
    void SetUp() override {
        Faulted::SetUp();
        if (HasFatalFailure()) return;
        side.open(16);
    }
    void TearDown() override {
        faults().disarm_all();
        side.close();
        Faulted::TearDown();
    }
    NTSTATUS write(void* context, size_t offset, ULONG flags) {
        NDK_SGE s{side.src.buffer.data() + offset, 64, side.src.local};
        return table(side.a).NdkWrite(side.a, context, &s, 1, side.dst.address() + offset,
                                      side.dst.remote, flags);
    }
    // Entries of QP a's CQ until `want` arrived or `quiet` passed without one.
    std::vector<NDK_RESULT_EX> drain(size_t want, std::chrono::milliseconds quiet = 3000ms) {
        std::vector<NDK_RESULT_EX> got;
        auto last = std::chrono::steady_clock::now();
        while (got.size() < want && std::chrono::steady_clock::now() - last < quiet) {
            NDK_RESULT_EX r[8];
            ULONG n = table(side.cq_a).NdkGetCqResultsEx(side.cq_a, r, 8);
            for (ULONG k = 0; k < n; ++k)
                got.push_back(r[k]);
            if (n)
                last = std::chrono::steady_clock::now();
            else
                std::this_thread::sleep_for(1ms);
        }
        return got;
    }
    NdkSide side;
    int contexts[8] = {};
};

// DEFER-03, WR-05: the device refuses the chain once (a transient refusal): the provider offers
// it again, and every accepted request completes with success.
TEST_F(FaultedPair, DeferChainRefusedOnceIsPostedAgain) {
    std::memset(side.dst.buffer.data(), 0, 512);
    faults().arm("ibv_post_send", 1, EAGAIN, 1);
    for (int k = 0; k < 3; ++k)
        ASSERT_EQ(write(&contexts[k], 64 * k, NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
    ASSERT_EQ(write(&contexts[3], 192, 0), STATUS_SUCCESS);
    EXPECT_EQ(faults().fired(), 1u);
    auto got = drain(4);
    ASSERT_EQ(got.size(), 4u) << "accepted requests were lost";
    for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(got[k].RequestContext, &contexts[k]);
        EXPECT_EQ(got[k].Status, STATUS_SUCCESS);
    }
    EXPECT_EQ(std::memcmp(side.dst.buffer.data(), side.src.buffer.data(), 256), 0);
}

// DEFER-03, WR-05: the device refuses the chain for good. The three deferred writes returned
// STATUS_SUCCESS: each completes, in error, in order; the write that ended the chain fails
// inline and has no entry. Before the fix the three were lost (no entry ever). The QP works on.
TEST_F(FaultedPair, DeferChainRefusedForGoodCompletesTheHeldRequestsInError) {
    faults().arm("ibv_post_send", 1, ENOMEM, 2);
    for (int k = 0; k < 3; ++k)
        ASSERT_EQ(write(&contexts[k], 64 * k, NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
    EXPECT_EQ(write(&contexts[3], 192, 0), STATUS_INSUFFICIENT_RESOURCES);
    auto got = drain(4, 1500ms);
    ASSERT_EQ(got.size(), 3u) << "each accepted request completes once, the refused one never";
    for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(got[k].RequestContext, &contexts[k]);
        EXPECT_EQ(got[k].Status, STATUS_INSUFFICIENT_RESOURCES);
        EXPECT_EQ(got[k].Type, NdkOperationTypeWrite);
    }
    ASSERT_EQ(write(&contexts[4], 0, 0), STATUS_SUCCESS);
    got = drain(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].Status, STATUS_SUCCESS);
}

// DEFER-04: a call refused inline first hands the held requests to the device; when the
// device refuses them for good, they complete in error rather than vanish.
TEST_F(FaultedPair, HeldRequestsBeforeAnInlineRefusalAreNotLost) {
    for (int k = 0; k < 2; ++k)
        ASSERT_EQ(write(&contexts[k], 64 * k, NDK_OP_FLAG_DEFER | NDK_OP_FLAG_SILENT_SUCCESS),
                  STATUS_SUCCESS);
    faults().arm("ibv_post_send", 1, ENOMEM, 2);
    std::vector<NDK_SGE> too_many(side.info.MaxInitiatorRequestSge + 1,
                                  NDK_SGE{side.src.buffer.data(), 8, side.src.local});
    EXPECT_NE(table(side.a).NdkWrite(side.a, &contexts[2], too_many.data(),
                                     static_cast<ULONG>(too_many.size()), side.dst.address(),
                                     side.dst.remote, 0),
              STATUS_SUCCESS);
    auto got = drain(3, 1500ms);
    ASSERT_EQ(got.size(), 2u) << "the two silent deferred writes were refused: two error entries";
    for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(got[k].RequestContext, &contexts[k]);
        EXPECT_EQ(got[k].Status, STATUS_INSUFFICIENT_RESOURCES);
    }
}

// WR-05: a post the device refuses (whatever the errno) fails inline with
// STATUS_INSUFFICIENT_RESOURCES and makes no entry; the next post works.
TEST_F(FaultedPair, RefusedPostFailsInlineWithoutAnEntry) {
    for (int error : {ENOMEM, EAGAIN, EINVAL}) {
        faults().arm("ibv_post_send", 1, error, 2);
        EXPECT_EQ(write(&contexts[0], 0, 0), STATUS_INSUFFICIENT_RESOURCES)
            << strerrorname_np(error);
        EXPECT_TRUE(drain(1, 300ms).empty()) << strerrorname_np(error);
        ASSERT_EQ(write(&contexts[1], 0, 0), STATUS_SUCCESS);
        auto got = drain(1);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got[0].RequestContext, &contexts[1]);
    }
}

// ---- an asynchronous error event ----

struct Notified {
    std::mutex m;
    std::condition_variable cv;
    std::vector<NTSTATUS> statuses;
};
void on_notification(void* context, NTSTATUS status) {
    auto* n = static_cast<Notified*>(context);
    std::lock_guard l(n->m);
    n->statuses.push_back(status);
    n->cv.notify_all();
}

// CQ-STATUS-01, CQ-NOT-05: more entries than the device CQ holds (a consumer that broke
// CQ-STATUS-04, here on purpose) overrun it; rxe raises IBV_EVENT_CQ_ERR, and an armed CQ is
// told STATUS_BUFFER_OVERFLOW, once, with no hang.
TEST_F(FaultedPair, CqOverrunReachesTheConsumerAsBufferOverflow) {
    Notified notified;
    NDK_CQ* small = nullptr;
    ASSERT_EQ(table(side.adapter)
                  .NdkCreateCq(side.adapter, 1, on_notification, &notified, nullptr,
                               ndkct::adapters::verbs::bench::on_create, nullptr, &small),
              STATUS_SUCCESS);
    // A third QP pair on the small CQ: QP x writes to QP a's region through QP y.
    NDK_QP *x = nullptr, *y = nullptr;
    static int cx, cy;
    ASSERT_EQ(table(side.pd).NdkCreateQp(side.pd, small, small, &cx, 64, 64, 1, 1, 0,
                                         ndkct::adapters::verbs::bench::on_create, nullptr, &x),
              STATUS_SUCCESS);
    ASSERT_EQ(table(side.pd).NdkCreateQp(side.pd, side.cq_b, side.cq_b, &cy, 64, 64, 1, 1, 0,
                                         ndkct::adapters::verbs::bench::on_create, nullptr, &y),
              STATUS_SUCCESS);
    side.connect(x, y);  // exits the test program if it cannot connect
    table(small).NdkArmCq(small, NDK_CQ_NOTIFY_ERRORS);
    // The device CQ of an NDK depth 1 holds 2 * 1 + 64 entries: 128 signaled writes overrun it.
    NDK_SGE s{side.src.buffer.data(), 8, side.src.local};
    int posted = 0;
    for (int round = 0; round < 4; ++round)
        for (int k = 0; k < 32; ++k)
            if (table(x).NdkWrite(x, &cx, &s, 1, side.dst.address(), side.dst.remote, 0) ==
                STATUS_SUCCESS)
                ++posted;
    std::unique_lock l(notified.m);
    ASSERT_TRUE(notified.cv.wait_for(l, 20s, [&] { return !notified.statuses.empty(); }))
        << posted << " writes on a CQ of depth 1 raised no notification";
    EXPECT_EQ(notified.statuses[0], STATUS_BUFFER_OVERFLOW);
}

// ---- the device going away (destructive: run alone, as root, where the device is ours) ----

// The network device under an RDMA device ("ndkct0" under rxe0), from sysfs.
std::string netdev_of(const char* device) {
    std::string path = std::string("/sys/class/infiniband/") + device + "/ports/1/gid_attrs/ndevs/";
    for (int k = 0; k < 16; ++k) {
        std::ifstream in(path + std::to_string(k));
        std::string name;
        if (in >> name && !name.empty()) return name;
    }
    return {};
}

int shell(const std::string& command) {
    return std::system(command.c_str());
}

// Whether libibverbs would list the device: a uverbs node of it in sysfs (ibv_get_device_list
// reads /sys/class/infiniband_verbs). An `rdma link delete` removes it first, then waits for
// the device's contexts to close.
bool verbs_lists(const char* device) {
    std::error_code error;
    for (const auto& node :
         std::filesystem::directory_iterator("/sys/class/infiniband_verbs", error)) {
        std::ifstream in(node.path() / "ibdev");
        std::string name;
        if (in >> name && name == device) return true;
    }
    return false;
}

// After the link comes back: its port ACTIVE and its IPv4 RoCE GID (::ffff:a.b.c.d) back in the
// table, which the kernel fills again a moment after the link is up (rdma_cm needs it).
bool device_back(const char* device) {
    std::string gids = std::string("/sys/class/infiniband/") + device + "/ports/1/gids/";
    for (int tries = 0; tries < 200; ++tries) {
        bool active = shell(std::string("rdma link show ") + device + "/1 | grep -q ACTIVE") == 0;
        for (int k = 0; active && k < 16; ++k) {
            std::ifstream in(gids + std::to_string(k));
            std::string gid;
            if (in >> gid && gid.find("ffff:") != std::string::npos &&
                gid != "0000:0000:0000:0000:0000:ffff:0000:0000")
                return true;
        }
        std::this_thread::sleep_for(100ms);
    }
    return false;
}

// Runs f on another thread; false when it has not returned within `limit` (a hang).
bool returns_within(std::chrono::seconds limit, std::function<void()> f) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread t([f = std::move(f), done] {
        f();
        done->store(true);
    });
    auto until = std::chrono::steady_clock::now() + limit;
    while (!done->load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(10ms);
    if (!done->load()) {
        t.detach();
        return false;
    }
    t.join();
    return true;
}

// Runs f in a child process (a consumer of its own: librdmacm keeps device contexts open until
// its process ends) and returns its exit status, or -1 when it did not end within `limit`.
int in_process(std::chrono::seconds limit, const std::function<int()>& f) {
    pid_t pid = fork();
    if (pid == 0) {
        int code = f();
        std::fflush(stdout);
        _exit(code);
    }
    auto until = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return -1;
        }
        std::this_thread::sleep_for(20ms);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The RDMA link is deleted while an adapter holds the device: rxe cannot disassociate a user
// context, so the deletion waits for every context of the device to close (librdmacm keeps its
// own until its process ends). Meanwhile the open adapter still works, a new open fails at once
// with NDIS_STATUS_ADAPTER_NOT_READY naming the problem, the adapter closes, the consumer ends,
// the deletion completes; with the link added again, adapters open again. (The test process
// itself never touches the device: each consumer is a child process.)
TEST(DeviceGone, DISABLED_DeletedLinkWaitsForTheAdapterAndNewOpensFailCleanly) {
    std::string netdev = netdev_of("rxe0");
    ASSERT_FALSE(netdev.empty()) << "no network device under rxe0";
    std::remove("/tmp/ndkct-link-deleted");
    int consumer = in_process(120s, [&] {
        NdkSide side;
        side.open(16);
        if (shell("(rdma link delete rxe0 && touch /tmp/ndkct-link-deleted) &") != 0) return 10;
        // The deletion runs in the background (it waits for this consumer): go on once it has
        // begun, which a loaded guest may take seconds to reach, not after a fixed pause.
        auto until = std::chrono::steady_clock::now() + 30s;
        while (verbs_lists("rxe0") && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(20ms);
        if (verbs_lists("rxe0")) return 15;  // the deletion never began
        NDK_SGE s{side.src.buffer.data(), 64, side.src.local};
        if (table(side.a).NdkWrite(side.a, nullptr, &s, 1, side.dst.address(), side.dst.remote,
                                   0) != STATUS_SUCCESS)
            return 11;  // the open adapter stopped working
        ndkct::platform::Arena arena(64);
        Opened second;
        if (!returns_within(30s, [&] { second = open_once(arena); })) return 12;  // hung
        std::printf("finding: link deleted: a new open says \"%s\" (0x%08x)\n", second.message,
                    static_cast<unsigned>(second.status));
        if (second.status != NDIS_STATUS_ADAPTER_NOT_READY) return 13;
        if (!returns_within(60s, [&] { side.close(); })) return 14;  // close hung
        return 0;
    });
    EXPECT_EQ(consumer, 0) << "10: no delete; 11: the open adapter failed a write; 12: a new open "
                              "hung; 13: a new open did not say NOT_READY; 14: close hung; 15: the "
                              "deletion did not begin within 30 s; -1: the consumer hung";
    bool deleted = false;
    for (int k = 0; k < 300 && !deleted; ++k) {
        deleted = access("/tmp/ndkct-link-deleted", F_OK) == 0;
        if (!deleted) std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(deleted) << "the link deletion did not finish after its consumer ended";
    if (!deleted) return;
    ASSERT_EQ(shell("rdma link add rxe0 type rxe netdev " + netdev), 0);
    ASSERT_TRUE(device_back("rxe0")) << "rxe0 did not come back within 20 s";
    EXPECT_EQ(in_process(60s,
                         [] {
                             ndkct::platform::Arena arena(64);
                             Opened again = open_once(arena);
                             if (again.status != STATUS_SUCCESS)
                                 std::printf("open after re-adding: %s\n", again.message);
                             return again.status == STATUS_SUCCESS ? 0 : 1;
                         }),
              0)
        << "no adapter opens on the re-added link";
}

// The link under the device goes down mid-run (rxe raises IBV_EVENT_PORT_ERR): requests in
// flight and posted later end with an error entry (the transport gives up: STATUS_IO_TIMEOUT,
// or STATUS_CANCELLED behind it), a new connect fails, nothing hangs, and the adapter closes.
// With the link up again a new adapter works.
TEST(DeviceGone, DISABLED_LinkDownFailsRequestsAndNothingHangs) {
    NdkSide side;
    side.open(16);
    std::string netdev = netdev_of("rxe0");
    ASSERT_FALSE(netdev.empty()) << "no network device under rxe0";
    ASSERT_EQ(shell("ip link set " + netdev + " down"), 0);
    NDK_SGE s{side.src.buffer.data(), 64, side.src.local};
    static int context;
    NTSTATUS posted =
        table(side.a).NdkWrite(side.a, &context, &s, 1, side.dst.address(), side.dst.remote, 0);
    if (posted == STATUS_SUCCESS) {
        NDK_RESULT_EX r{};
        auto until = std::chrono::steady_clock::now() + 60s;
        while (table(side.cq_a).NdkGetCqResultsEx(side.cq_a, &r, 1) == 0 &&
               std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(5ms);
        EXPECT_EQ(r.RequestContext, &context) << "no entry within 60 s";
        EXPECT_TRUE(NT_ERROR(r.Status) || r.Status == STATUS_SUCCESS)
            << "a write with the link down ended with " << std::hex << r.Status;
        std::printf("finding: link down: the write in flight ended with 0x%08x\n",
                    static_cast<unsigned>(r.Status));
    } else {
        EXPECT_TRUE(NT_ERROR(posted)) << std::hex << posted;
    }
    bool closed = returns_within(60s, [&] { side.close(); });
    EXPECT_TRUE(closed) << "closing the adapter with its link down hung";
    ASSERT_EQ(shell("ip link set " + netdev + " up"), 0);
    // The port comes back; then an adapter opens and connects again.
    ASSERT_TRUE(device_back("rxe0")) << "rxe0 did not come back within 20 s";
    if (!closed) return;
    // The device is back for new adapters. (New connections over rxe0 still fail after such an
    // outage: rxe, kernel 6.1, gets no connect event for new rdma_cm connections once a link
    // bounced under open RC connections; rping alike. An rxe finding, README.md.)
    ndkct::platform::Arena arena(64);
    Opened again = open_once(arena);
    EXPECT_EQ(again.status, STATUS_SUCCESS) << again.message;
}

}  // namespace
