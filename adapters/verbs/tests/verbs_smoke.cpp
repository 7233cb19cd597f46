// A smoke test of the verbs provider on a real device (rxe in the guest): raw NDK calls through
// the dispatch tables, with small synchronous helpers. It checks what the conformance suite
// does not reach directly (provider internals: hidden completions, DEFER batching, queue
// wrap-around, windows, remote invalidation) and measures the post/poll path against plain
// libibverbs in the same run. Needs an RDMA device: run it through adapters/rxe/run-in-guest.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "../bench/roce_gid.hpp"
#include "ndkct/adapters/verbs_provider.hpp"
#include "ndkct/platform/arena.hpp"
#include "ndkct/platform/mdl.hpp"

namespace {

using namespace std::chrono_literals;
using ndkct::platform::Arena;
using ndkct::platform::LockedBuffer;
namespace bench = ndkct::adapters::verbs::bench;

// ---- callbacks ----

struct Waiter {
    std::mutex m;
    std::condition_variable cv;
    int calls = 0;
    NTSTATUS status = STATUS_PENDING;
    NDK_OBJECT_HEADER* object = nullptr;
    bool wait(std::chrono::milliseconds t = 10000ms) {
        std::unique_lock l(m);
        return cv.wait_for(l, t, [&] { return calls > 0; });
    }
};
void on_request(void* c, NTSTATUS s) {
    auto* w = static_cast<Waiter*>(c);
    std::lock_guard l(w->m);
    ++w->calls;
    w->status = s;
    w->cv.notify_all();
}
void on_create(void* c, NTSTATUS s, NDK_OBJECT_HEADER* o) {
    auto* w = static_cast<Waiter*>(c);
    std::lock_guard l(w->m);
    ++w->calls;
    w->status = s;
    w->object = o;
    w->cv.notify_all();
}
[[maybe_unused]] void on_close(void* c) {
    on_request(c, STATUS_SUCCESS);
}

struct Events {
    std::mutex m;
    std::condition_variable cv;
    std::vector<NDK_CONNECTOR*> incoming;
    int notifications = 0;
    int disconnects = 0;
};
// Callback contexts live until the process ends. The provider may call a connector's disconnect
// callback (or a CQ's, an SRQ's, a listener's) until that object or the adapter is closed, and
// the fixture closes the adapter in TearDown, after the test body's locals are gone: a Pair on
// the test's stack whose passive connector was still open got its disconnect callback on the
// worker after the test returned, locking a mutex in a dead stack frame (std::system_error
// "Invalid argument" from pthread_mutex_lock, uncaught on the worker: the smoke test's abort).
Events& new_events() {
    static std::deque<Events> all;  // references stay valid as it grows
    return all.emplace_back();
}

void on_cq(void* c, NTSTATUS) {
    auto* e = static_cast<Events*>(c);
    std::lock_guard l(e->m);
    ++e->notifications;
    e->cv.notify_all();
}
void on_connect_event(void* c, NDK_CONNECTOR* connector) {
    auto* e = static_cast<Events*>(c);
    std::lock_guard l(e->m);
    e->incoming.push_back(connector);
    e->cv.notify_all();
}
void on_disconnect(void* c) {
    auto* e = static_cast<Events*>(c);
    std::lock_guard l(e->m);
    ++e->disconnects;
    e->cv.notify_all();
}

template <typename T>
const auto& table(T* object) {
    return *object->Dispatch;
}

NTSTATUS finish(NTSTATUS s, Waiter& w) {
    if (s != STATUS_PENDING) return s;
    EXPECT_TRUE(w.wait()) << "a pending request never completed";
    return w.status;
}

// ---- the fixture: an adapter over an arena, a connected pair ----

class Verbs : public ::testing::Test {
  protected:
    void SetUp() override {
        arena = std::make_unique<Arena>(4096);
        NDKCT_OPEN_OPTIONS o{};
        o.Size = sizeof o;
        o.Version = NDKCT_MAKE_VERSION(2, 1);
        char message[256] = {};
        o.ErrorMessage = message;
        o.ErrorMessageSize = sizeof message;
        const auto& entry = ndkct::adapters::verbs::entry_points();
        NTSTATUS s = entry.OpenAdapter(&arena->host_memory(), &o, &adapter);
        if (s == NDIS_STATUS_ADAPTER_NOT_READY) GTEST_SKIP() << message;
        ASSERT_EQ(s, STATUS_SUCCESS) << message;
        ULONG size = sizeof info;
        ASSERT_EQ(table(adapter).NdkQueryAdapterInfo(adapter, &info, &size), STATUS_SUCCESS);
    }
    void TearDown() override {
        if (adapter) ndkct::adapters::verbs::entry_points().CloseAdapter(adapter);
    }

    template <typename T>
    void close(T* object) {
        Waiter w;
        auto fn = *reinterpret_cast<NDK_FN_CLOSE_OBJECT* const*>(object->Dispatch);
        EXPECT_EQ(finish(fn(&object->Header, on_close, &w), w), STATUS_SUCCESS);
    }

    NDK_PD* pd() {
        NDK_PD* p = nullptr;
        EXPECT_EQ(table(adapter).NdkCreatePd(adapter, on_create, nullptr, &p), STATUS_SUCCESS);
        return p;
    }
    NDK_CQ* cq(ULONG depth, Events* events = nullptr) {
        NDK_CQ* c = nullptr;
        EXPECT_EQ(table(adapter).NdkCreateCq(adapter, depth, on_cq, events, nullptr, on_create,
                                             nullptr, &c),
                  STATUS_SUCCESS);
        return c;
    }
    NDK_QP* qp(NDK_PD* p, NDK_CQ* c, ULONG depth = 64, ULONG sge = 4, ULONG inline_size = 0) {
        NDK_QP* q = nullptr;
        static int context;
        EXPECT_EQ(table(p).NdkCreateQp(p, c, c, &context, depth, depth, sge, sge, inline_size,
                                       on_create, nullptr, &q),
                  STATUS_SUCCESS);
        return q;
    }
    struct Region {
        LockedBuffer buffer;
        NDK_MR* mr = nullptr;
        UINT32 local = 0, remote = 0;
        ndkct::platform::MdlChain chain;
        uint64_t address(size_t offset = 0) const {
            return reinterpret_cast<uint64_t>(buffer.data() + offset);
        }
    };
    // What NdkFastRegister needs: a fast-register MR of `p` initialized for `pages` pages
    // (RemoteAccess TRUE) and the LAM of the first `pages` pages of `memory`.
    struct FastRegisterable {
        NDK_MR* mr = nullptr;
        alignas(8) unsigned char lam_buffer[64];  // room for 2 pages
        NDK_LOGICAL_ADDRESS_MAPPING* lam() {
            return reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_buffer);
        }
    };
    void fast_registerable(NDK_PD* p, const LockedBuffer& memory, ULONG pages,
                           FastRegisterable& out) {
        auto chain = ndkct::platform::describe(memory, 0, pages * PAGE_SIZE);
        ULONG size = sizeof out.lam_buffer, fbo = 0;
        ASSERT_EQ(table(adapter).NdkBuildLAM(adapter, chain.head(), pages * PAGE_SIZE, on_request,
                                             nullptr, out.lam(), &size, &fbo),
                  STATUS_SUCCESS);
        ASSERT_EQ(table(p).NdkCreateMr(p, TRUE, on_create, nullptr, &out.mr), STATUS_SUCCESS);
        Waiter w;
        ASSERT_EQ(
            finish(table(out.mr).NdkInitializeFastRegisterMr(out.mr, pages, TRUE, on_request, &w),
                   w),
            STATUS_SUCCESS);
    }

    Region region(NDK_PD* p, size_t bytes, ULONG flags, size_t offset = 0, size_t length = 0) {
        Region r;
        r.buffer = arena->allocate(bytes);
        if (!length) length = bytes - offset;
        r.chain = ndkct::platform::describe(r.buffer, offset, length);
        EXPECT_EQ(table(p).NdkCreateMr(p, FALSE, on_create, nullptr, &r.mr), STATUS_SUCCESS);
        Waiter w;
        EXPECT_EQ(
            finish(table(r.mr).NdkRegisterMr(r.mr, r.chain.head(), length, flags, on_request, &w),
                   w),
            STATUS_SUCCESS);
        r.local = table(r.mr).NdkGetLocalTokenFromMr(r.mr);
        r.remote = table(r.mr).NdkGetRemoteTokenFromMr(r.mr);
        return r;
    }
    static NDK_SGE sge(const Region& r, size_t offset, ULONG length) {
        NDK_SGE s{};
        s.VirtualAddress = r.buffer.data() + offset;
        s.Length = length;
        s.MemoryRegionToken = r.local;
        return s;
    }
    std::vector<NDK_RESULT_EX> drain(NDK_CQ* c, size_t n, std::chrono::milliseconds t = 5000ms) {
        std::vector<NDK_RESULT_EX> all;
        auto end = std::chrono::steady_clock::now() + t;
        while (all.size() < n && std::chrono::steady_clock::now() < end) {
            NDK_RESULT_EX r[16];
            ULONG got = table(c).NdkGetCqResultsEx(c, r, 16);
            all.insert(all.end(), r, r + got);
            if (!got) std::this_thread::sleep_for(1ms);
        }
        return all;
    }

    // Two QPs of one PD connected through a listener and a connector on this adapter.
    struct Pair {
        NDK_PD* pd = nullptr;
        NDK_CQ* cq = nullptr;
        NDK_QP* a = nullptr;
        NDK_QP* b = nullptr;
        NDK_CONNECTOR *active = nullptr, *passive = nullptr;
        NDK_LISTENER* listener = nullptr;
        Events& events = new_events();
    };
    void connect(Pair& p, const sockaddr* address, ULONG length, ULONG depth = 64,
                 ULONG inline_size = 0, NDK_PD* shared_pd = nullptr) {
        p.pd = shared_pd ? shared_pd : pd();
        p.cq = cq(1024, &p.events);
        p.a = qp(p.pd, p.cq, depth, 4, inline_size);
        p.b = qp(p.pd, p.cq, depth, 4, inline_size);
        ASSERT_EQ(table(adapter).NdkCreateListener(adapter, on_connect_event, &p.events, on_create,
                                                   nullptr, &p.listener),
                  STATUS_SUCCESS);
        Waiter lw;
        ASSERT_EQ(finish(table(p.listener)
                             .NdkListen(p.listener, const_cast<sockaddr*>(address), length,
                                        on_request, &lw),
                         lw),
                  STATUS_SUCCESS);
        sockaddr_storage bound{};
        ULONG bound_length = sizeof bound;
        ASSERT_EQ(
            table(p.listener)
                .NdkGetLocalAddress(p.listener, reinterpret_cast<sockaddr*>(&bound), &bound_length),
            STATUS_SUCCESS);
        ASSERT_EQ(table(adapter).NdkCreateConnector(adapter, on_create, nullptr, &p.active),
                  STATUS_SUCCESS);
        Waiter cw;
        const uint8_t hello[] = {1, 2, 3, 4, 5};
        NTSTATUS s = table(p.active).NdkConnect(
            p.active, p.a, nullptr, 0, reinterpret_cast<sockaddr*>(&bound), bound_length, 4, 4,
            const_cast<uint8_t*>(hello), sizeof hello, on_request, &cw);
        ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << std::hex << s;
        {
            std::unique_lock l(p.events.m);
            ASSERT_TRUE(p.events.cv.wait_for(l, 10s, [&] { return !p.events.incoming.empty(); }))
                << "no connect event";
            p.passive = p.events.incoming.front();
        }
        uint8_t got[64] = {};
        ULONG got_length = sizeof got;
        ASSERT_EQ(
            table(p.passive).NdkGetConnectionData(p.passive, nullptr, nullptr, got, &got_length),
            STATUS_SUCCESS);
        EXPECT_GE(got_length, sizeof hello);
        EXPECT_EQ(std::memcmp(got, hello, sizeof hello), 0);
        Waiter aw;
        s = table(p.passive).NdkAccept(p.passive, p.b, 4, 4, nullptr, 0, on_disconnect, &p.events,
                                       on_request, &aw);
        ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS);
        ASSERT_EQ(finish(s == STATUS_PENDING ? STATUS_PENDING : STATUS_SUCCESS, cw),
                  STATUS_SUCCESS);
        Waiter ccw;
        ASSERT_EQ(finish(table(p.active).NdkCompleteConnect(p.active, on_disconnect, &p.events,
                                                            on_request, &ccw),
                         ccw),
                  STATUS_SUCCESS);
        ASSERT_EQ(finish(s, aw), STATUS_SUCCESS);
    }
    void connect(Pair& p, ULONG depth = 64, ULONG inline_size = 0, NDK_PD* shared_pd = nullptr) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        connect(p, reinterpret_cast<sockaddr*>(&a), sizeof a, depth, inline_size, shared_pd);
    }

    std::unique_ptr<Arena> arena;
    NDK_ADAPTER* adapter = nullptr;
    NDK_ADAPTER_INFO info{};
};

void fill(LockedBuffer& b, uint8_t seed) {
    for (size_t i = 0; i < b.size(); ++i)
        b.data()[i] = std::byte(uint8_t(i * 31 + seed) | 1);
}

TEST_F(Verbs, InfoIsPlausible) {
    EXPECT_GE(info.FRMRPageCount, 16u);
    EXPECT_GT(info.MaxInitiatorQueueDepth, 0u);
    EXPECT_GT(info.MaxInlineDataSize, 0u);
    EXPECT_TRUE(info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED);
    std::printf(
        "MaxQueueDepth %u MaxCqDepth %u MaxInline %u MaxSge %u/%u/%u MaxTransfer %u Flags 0x%x\n",
        info.MaxInitiatorQueueDepth, info.MaxCqDepth, info.MaxInlineDataSize,
        info.MaxInitiatorRequestSge, info.MaxReceiveRequestSge, info.MaxReadRequestSge,
        info.MaxTransferLength, info.AdapterFlags);
}

// Writes that end exactly at the end of a region (rxe: does it check the bounds right?).
TEST_F(Verbs, WriteToTheEndOfARegion) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    fill(src.buffer, 3);
    for (size_t offset : {size_t{0}, size_t{700}}) {
        for (size_t length : {size_t{PAGE_SIZE}, size_t{2 * PAGE_SIZE}, size_t{PAGE_SIZE - 100}}) {
            Pair q;
            connect(q);
            Region dst =
                region(q.pd, 3 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE, offset, length);
            Region s2 = region(q.pd, PAGE_SIZE, 0);
            fill(s2.buffer, 3);
            for (size_t at : {size_t{0}, length - 8, length / 2}) {
                NDK_SGE e = sge(s2, 0, 8);
                int context;
                ASSERT_EQ(table(q.b).NdkWrite(q.b, &context, &e, 1, dst.address(offset + at),
                                              dst.remote, 0),
                          STATUS_SUCCESS);
                auto r = drain(q.cq, 1);
                ASSERT_EQ(r.size(), 1u);
                EXPECT_EQ(r[0].Status, STATUS_SUCCESS)
                    << "offset " << offset << " length " << length << " at " << at << " code "
                    << r[0].ProviderErrorCode;
                if (r[0].Status != STATUS_SUCCESS) {
                    break;
                }
            }
        }
    }
}

// ---- completion semantics ----

int ctx_id(const NDK_RESULT_EX& r) {
    return static_cast<int>(reinterpret_cast<uintptr_t>(r.RequestContext));
}
void* ctx(int n) {
    return reinterpret_cast<void*>(static_cast<uintptr_t>(n));
}

TEST_F(Verbs, SilentSuccessesMakeNoEntryAndNeverFillTheQueue) {
    Pair p;
    connect(p, 16);
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region dst = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    NDK_SGE e = sge(src, 0, 64);
    // Far more silent requests than the queue depth: the provider cuts the runs with hidden
    // signaled requests, reaped by the polls below.
    for (int k = 0; k < 200; ++k) {
        ASSERT_EQ(table(p.a).NdkWrite(p.a, ctx(1000 + k), &e, 1, dst.address(), dst.remote,
                                      NDK_OP_FLAG_SILENT_SUCCESS),
                  STATUS_SUCCESS)
            << k;
        if (k % 4 == 3) {
            EXPECT_TRUE(drain(p.cq, 1, 1ms).empty());
        }
    }
    ASSERT_EQ(table(p.a).NdkWrite(p.a, ctx(7), &e, 1, dst.address(), dst.remote, 0),
              STATUS_SUCCESS);
    auto r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(ctx_id(r[0]), 7);
    EXPECT_TRUE(drain(p.cq, 1, 50ms).empty());
}

TEST_F(Verbs, DeferredRequestsGoWithTheNextOneInOrder) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region dst = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    NDK_SGE e = sge(src, 0, 64);
    for (int k = 0; k < 20; ++k)
        ASSERT_EQ(table(p.a).NdkWrite(p.a, ctx(k + 1), &e, 1, dst.address(), dst.remote,
                                      NDK_OP_FLAG_DEFER),
                  STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkWrite(p.a, ctx(21), &e, 1, dst.address(), dst.remote, 0),
              STATUS_SUCCESS);
    auto r = drain(p.cq, 21);
    ASSERT_EQ(r.size(), 21u);
    for (int k = 0; k < 21; ++k) {
        EXPECT_EQ(ctx_id(r[k]), k + 1);
        EXPECT_EQ(r[k].Status, STATUS_SUCCESS);
        EXPECT_EQ(r[k].Type, NdkOperationTypeWrite);
    }
}

TEST_F(Verbs, ArmedCqNotifiesOnceForNewAndQueuedEntries) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region dst = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    NDK_SGE e = sge(src, 0, 8);
    table(p.cq).NdkArmCq(p.cq, NDK_CQ_NOTIFY_ANY);
    ASSERT_EQ(table(p.a).NdkWrite(p.a, ctx(1), &e, 1, dst.address(), dst.remote, 0),
              STATUS_SUCCESS);
    {
        std::unique_lock l(p.events.m);
        EXPECT_TRUE(p.events.cv.wait_for(l, 5s, [&] { return p.events.notifications == 1; }));
    }
    // An entry already queued satisfies the next arm at once (CQ-NOT-02).
    std::this_thread::sleep_for(100ms);
    table(p.cq).NdkArmCq(p.cq, NDK_CQ_NOTIFY_ANY);
    {
        std::unique_lock l(p.events.m);
        EXPECT_TRUE(p.events.cv.wait_for(l, 5s, [&] { return p.events.notifications == 2; }));
    }
    EXPECT_EQ(drain(p.cq, 1).size(), 1u);
    std::this_thread::sleep_for(100ms);
    std::lock_guard l(p.events.m);
    EXPECT_EQ(p.events.notifications, 2) << "one notification per arm";
}

TEST_F(Verbs, SolicitedArmWaitsForTheSolicitedSend) {
    Pair p;
    connect(p);
    Region out = region(p.pd, PAGE_SIZE, 0);
    Region in = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE rcv = sge(in, 0, 100), snd = sge(out, 0, 10);
    for (int k = 0; k < 2; ++k)
        ASSERT_EQ(table(p.b).NdkReceive(p.b, ctx(10 + k), &rcv, 1), STATUS_SUCCESS);
    table(p.cq).NdkArmCq(p.cq, NDK_CQ_NOTIFY_SOLICITED);
    ASSERT_EQ(table(p.a).NdkSend(p.a, ctx(1), &snd, 1, NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
    std::this_thread::sleep_for(300ms);
    {
        std::lock_guard l(p.events.m);
        EXPECT_EQ(p.events.notifications, 0) << "an unsolicited receive does not satisfy SOLICITED";
    }
    ASSERT_EQ(table(p.a).NdkSend(p.a, ctx(2), &snd, 1, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT),
              STATUS_SUCCESS);
    std::unique_lock l(p.events.m);
    EXPECT_TRUE(p.events.cv.wait_for(l, 5s, [&] { return p.events.notifications == 1; }));
}

// ---- windows and invalidation ----

TEST_F(Verbs, WindowBindWriteInvalidate) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    fill(src.buffer, 5);
    Region mem = region(p.pd, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_MW* mw = nullptr;
    ASSERT_EQ(table(p.pd).NdkCreateMw(p.pd, on_create, nullptr, &mw), STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(1), mem.mr, mw, mem.buffer.data() + 100, 1000,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_SUCCESS);
    UINT32 token = table(mw).NdkGetRemoteTokenFromMw(mw);
    auto r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(r[0].Type, NdkOperationTypeBind);
    NDK_SGE e = sge(src, 0, 64);
    // The peer (b) writes through the window: the request arrives on a, the QP it was bound on.
    ASSERT_EQ(table(p.b).NdkWrite(p.b, ctx(2), &e, 1, mem.address(200), token, 0), STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(mem.buffer.data() + 200, src.buffer.data(), 64), 0);
    ASSERT_EQ(table(p.a).NdkInvalidate(p.a, ctx(3), &mw->Header, 0), STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(r[0].Type, NdkOperationTypeInvalidate);
    ASSERT_EQ(table(p.b).NdkWrite(p.b, ctx(4), &e, 1, mem.address(300), token, 0), STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NE(r[0].Status, STATUS_SUCCESS) << "the invalidated window still granted access";
}

// Reported, not asserted: how rxe treats a type 2B window reached through another QP, and an
// access outside the window but inside its MR (rxe-notes: bounds are not enforced).
TEST_F(Verbs, WindowFindings) {
    for (int variant = 0; variant < 2; ++variant) {
        Pair p;
        connect(p);
        Region src = region(p.pd, PAGE_SIZE, 0);
        Region mem = region(p.pd, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        NDK_MW* mw = nullptr;
        ASSERT_EQ(table(p.pd).NdkCreateMw(p.pd, on_create, nullptr, &mw), STATUS_SUCCESS);
        ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(1), mem.mr, mw, mem.buffer.data() + 100, 1000,
                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
                  STATUS_SUCCESS);
        ASSERT_EQ(drain(p.cq, 1).size(), 1u);
        UINT32 token = table(mw).NdkGetRemoteTokenFromMw(mw);
        NDK_SGE e = sge(src, 0, 64);
        NDK_QP* writer = variant == 0 ? p.a : p.b;
        uint64_t at = variant == 0 ? mem.address(200) : mem.address(2000);
        ASSERT_EQ(table(writer).NdkWrite(writer, ctx(2), &e, 1, at, token, 0), STATUS_SUCCESS);
        auto r = drain(p.cq, 1);
        ASSERT_EQ(r.size(), 1u);
        std::printf("finding: %s -> status 0x%08x (verbs status %u)\n",
                    variant == 0
                        ? "write through a window bound on the writer's own QP (type 2B: other QP)"
                        : "write outside the window, inside its MR (BND-08)",
                    static_cast<unsigned>(r[0].Status), r[0].ProviderErrorCode);
    }
}

TEST_F(Verbs, SendAndInvalidateOfAWindow) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region in = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    Region mem = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_MW* mw = nullptr;
    ASSERT_EQ(table(p.pd).NdkCreateMw(p.pd, on_create, nullptr, &mw), STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(1), mem.mr, mw, mem.buffer.data(), PAGE_SIZE,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_SUCCESS);
    ASSERT_EQ(drain(p.cq, 1).size(), 1u);
    UINT32 token = table(mw).NdkGetRemoteTokenFromMw(mw);
    NDK_SGE rcv = sge(in, 0, 100), snd = sge(src, 0, 10);
    ASSERT_EQ(table(p.a).NdkReceive(p.a, ctx(2), &rcv, 1), STATUS_SUCCESS);
    ASSERT_EQ(table(p.b).NdkSendAndInvalidate(p.b, ctx(3), &snd, 1, 0, token), STATUS_SUCCESS);
    auto r = drain(p.cq, 2);
    ASSERT_EQ(r.size(), 2u);
    for (auto& x : r) {
        EXPECT_EQ(x.Status, STATUS_SUCCESS);
        if (ctx_id(x) == 2) {
            EXPECT_EQ(x.Type, NdkOperationTypeReceiveAndInvalidate);
            EXPECT_EQ(static_cast<UINT32>(x.TypeSpecificCompletionOutput), token);
            EXPECT_EQ(x.BytesTransferred, 10u);
        } else {
            EXPECT_EQ(x.Type, NdkOperationTypeSend);
        }
    }
    NDK_SGE e = sge(src, 0, 8);
    ASSERT_EQ(table(p.b).NdkWrite(p.b, ctx(4), &e, 1, mem.address(), token, 0), STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NE(r[0].Status, STATUS_SUCCESS)
        << "the remotely invalidated window still granted access";
}

// SAI-02: a send-and-invalidate naming a token the peer does not have aborts the connection:
// the receive fails, and the connection carries nothing after it. rxe acknowledges the send
// instead of answering with a NAK (printed as a finding), so the sender learns of the abort only
// when its next request finds the peer's QP silent: that request fails after the transport's
// retries (about 2 s; rxe retried forever with a retry count of 7) instead of hanging.
TEST_F(Verbs, SendAndInvalidateOfABadTokenBreaksTheConnection) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region in = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    Region target = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    std::memset(target.buffer.data(), 0, PAGE_SIZE);
    NDK_SGE rcv = sge(in, 0, 100), snd = sge(src, 0, 10);
    ASSERT_EQ(table(p.b).NdkReceive(p.b, ctx(1), &rcv, 1), STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkSendAndInvalidate(p.a, ctx(2), &snd, 1, 0, target.remote ^ 0x5A5A5A00u),
              STATUS_SUCCESS);
    auto r = drain(p.cq, 2);
    ASSERT_EQ(r.size(), 2u);
    for (auto& x : r) {
        if (ctx_id(x) == 1)
            EXPECT_NE(x.Status, STATUS_SUCCESS) << "the receive of a bad invalidation succeeded";
        else if (x.Status == STATUS_SUCCESS)
            std::printf(
                "finding: SAI-02: the sender's send-and-invalidate of a bad token "
                "succeeded (rxe acknowledges it; IB answers with a NAK)\n");
    }
    NDK_SGE e = sge(src, 0, 8);
    auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(table(p.a).NdkWrite(p.a, ctx(3), &e, 1, target.address(), target.remote, 0),
              STATUS_SUCCESS);
    r = drain(p.cq, 1, 20000ms);
    ASSERT_EQ(r.size(), 1u) << "the write after the abort never completed";
    EXPECT_NE(r[0].Status, STATUS_SUCCESS) << "the aborted connection carried a write";
    std::printf("timing: the write after the abort failed (0x%08x) after %.1f s\n",
                static_cast<unsigned>(r[0].Status),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    for (size_t k = 0; k < PAGE_SIZE; ++k)
        ASSERT_EQ(target.buffer.data()[k], std::byte{0}) << "a write landed after the abort";
}

TEST_F(Verbs, ClosingAQpWithABoundWindowIsQuick) {
    Pair p;
    connect(p);
    Region mem = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_MW* mw = nullptr;
    ASSERT_EQ(table(p.pd).NdkCreateMw(p.pd, on_create, nullptr, &mw), STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(1), mem.mr, mw, mem.buffer.data(), PAGE_SIZE,
                                 NDK_OP_FLAG_ALLOW_REMOTE_READ),
              STATUS_SUCCESS);
    ASSERT_EQ(drain(p.cq, 1).size(), 1u);
    auto start = std::chrono::steady_clock::now();
    close(p.active);
    close(p.a);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 10.0) << "rxe blocks ~51 s destroying a QP with a bound type-2 window";
}

// ---- fast registration and the privileged token ----

TEST_F(Verbs, LamPagesWithThePrivilegedTokenAndFastRegister) {
    Pair p;
    connect(p);
    LockedBuffer memory = arena->allocate(4 * PAGE_SIZE);
    fill(memory, 9);
    auto chain = ndkct::platform::describe(memory, 0, 4 * PAGE_SIZE);
    alignas(8) unsigned char buffer[256];
    auto* lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(buffer);
    ULONG size = sizeof buffer, fbo = 99;
    ASSERT_EQ(table(adapter).NdkBuildLAM(adapter, chain.head(), 4 * PAGE_SIZE, on_request, nullptr,
                                         lam, &size, &fbo),
              STATUS_SUCCESS);
    ASSERT_EQ(lam->AdapterPageCount, 4u);
    EXPECT_EQ(fbo, 0u);
    UINT32 privileged = 0;
    table(p.pd).NdkGetPrivilegedMemoryRegionToken(p.pd, &privileged);
    // A send from the logical address of page 2 with the privileged token.
    Region in = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE rcv = sge(in, 0, 100);
    ASSERT_EQ(table(p.b).NdkReceive(p.b, ctx(1), &rcv, 1), STATUS_SUCCESS);
    NDK_SGE snd{};
    snd.LogicalAddress.QuadPart = lam->AdapterPageArray[2].QuadPart + 16;
    snd.Length = 32;
    snd.MemoryRegionToken = privileged;
    ASSERT_EQ(table(p.a).NdkSend(p.a, ctx(2), &snd, 1, 0), STATUS_SUCCESS);
    auto r = drain(p.cq, 2);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(r[1].Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(in.buffer.data(), memory.data() + 2 * PAGE_SIZE + 16, 32), 0);
    // The privileged token never grants remote access (PTOK-02).
    Region src = region(p.pd, PAGE_SIZE, 0);
    NDK_SGE e = sge(src, 0, 8);
    ASSERT_EQ(table(p.b).NdkWrite(p.b, ctx(3), &e, 1,
                                  static_cast<uint64_t>(lam->AdapterPageArray[0].QuadPart),
                                  privileged, 0),
              STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NE(r[0].Status, STATUS_SUCCESS);
    table(adapter).NdkReleaseLAM(adapter, lam);
}

// With NDKCT_VERBS_FR_WINDOWS=1 a fast registration is exposed through a type 2 window, which a
// peer's NdkSendAndInvalidate can invalidate (off by default: the window makes the token
// reachable through the posting QP only, see README.md).
TEST_F(Verbs, FastRegisterZeroBasedAndRemoteInvalidation) {
    TearDown();
    setenv("NDKCT_VERBS_FR_WINDOWS", "1", 1);
    SetUp();
    unsetenv("NDKCT_VERBS_FR_WINDOWS");
    ASSERT_TRUE(adapter);
    Pair p;
    connect(p);
    LockedBuffer memory = arena->allocate(2 * PAGE_SIZE);
    FastRegisterable fr;
    ASSERT_NO_FATAL_FAILURE(fast_registerable(p.pd, memory, 2, fr));
    NDK_MR* mr = fr.mr;
    auto* lam = fr.lam();
    ASSERT_EQ(table(p.a).NdkFastRegister(p.a, ctx(1), mr, 2, lam->AdapterPageArray, 0,
                                         2 * PAGE_SIZE, nullptr, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_SUCCESS);
    UINT32 token = table(mr).NdkGetRemoteTokenFromMr(mr);
    auto r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Type, NdkOperationTypeFastRegister);
    Region src = region(p.pd, PAGE_SIZE, 0);
    fill(src.buffer, 4);
    NDK_SGE e = sge(src, 0, 16);
    ASSERT_EQ(table(p.b).NdkWrite(p.b, ctx(2), &e, 1, PAGE_SIZE + 8, token, 0),
              STATUS_SUCCESS);  // zero-based
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(memory.data() + PAGE_SIZE + 8, src.buffer.data(), 16), 0);
    // SAI-01, CQ-RES-07: a peer's NdkSendAndInvalidate invalidates a fast-registered token (the
    // provider exposes the region through a type 2 window whose key is the remote token).
    Region in = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE rcv = sge(in, 0, 100);
    ASSERT_EQ(table(p.a).NdkReceive(p.a, ctx(3), &rcv, 1), STATUS_SUCCESS);
    ASSERT_EQ(table(p.b).NdkSendAndInvalidate(p.b, ctx(4), &e, 1, 0, token), STATUS_SUCCESS);
    r = drain(p.cq, 2);
    ASSERT_EQ(r.size(), 2u);
    for (auto& x : r) {
        EXPECT_EQ(x.Status, STATUS_SUCCESS) << ctx_id(x) << " verbs " << x.ProviderErrorCode;
        if (ctx_id(x) == 3) {
            EXPECT_EQ(x.Type, NdkOperationTypeReceiveAndInvalidate);
            EXPECT_EQ(static_cast<UINT32>(x.TypeSpecificCompletionOutput), token);
            EXPECT_EQ(x.BytesTransferred, 16u);
        } else {
            EXPECT_EQ(ctx_id(x), 4);
            EXPECT_EQ(x.Type, NdkOperationTypeSend);  // CQ-RES-06
        }
    }
    // CQ-RI-01: a later NdkInvalidate of it fails (by its completion, AMB-32).
    ASSERT_EQ(table(p.a).NdkInvalidate(p.a, ctx(5), &mr->Header, 0), STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(ctx_id(r[0]), 5);
    EXPECT_NE(r[0].Status, STATUS_SUCCESS);
    // The local token went with it: a request reading the region fails (and ends the pair).
    NDK_SGE local{};
    local.VirtualAddress = reinterpret_cast<void*>(8);  // zero-based
    local.Length = 16;
    local.MemoryRegionToken = table(mr).NdkGetLocalTokenFromMr(mr);
    Region dst = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_EQ(table(p.a).NdkWrite(p.a, ctx(6), &local, 1, dst.address(), dst.remote, 0),
              STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(ctx_id(r[0]), 6);
    EXPECT_NE(r[0].Status, STATUS_SUCCESS) << "the local token still worked after invalidation";
    close(p.active);
    close(p.passive);
    close(p.a);
    close(p.b);
    close(mr);
    table(adapter).NdkReleaseLAM(adapter, lam);
}

// A fast registration flushed before it ran never took effect: its MR is invalidated again and
// can be fast-registered at once (without the rollback the next one fails, AMB-30).
TEST_F(Verbs, FlushedFastRegistrationIsRolledBack) {
    Pair p;
    connect(p);
    Pair q;
    connect(q, 64, 0, p.pd);  // same PD: the MR serves both pairs
    LockedBuffer memory = arena->allocate(PAGE_SIZE);
    FastRegisterable fr;
    ASSERT_NO_FATAL_FAILURE(fast_registerable(p.pd, memory, 1, fr));
    NDK_MR* mr = fr.mr;
    auto* lam = fr.lam();
    table(p.a).NdkFlush(p.a);  // FLS-01: p.a is in error from now on
    auto base = reinterpret_cast<void*>(0x7000000000ull);
    ASSERT_EQ(table(p.a).NdkFastRegister(p.a, ctx(1), mr, 1, lam->AdapterPageArray, 0, PAGE_SIZE,
                                         base, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_SUCCESS);
    auto r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(ctx_id(r[0]), 1);
    EXPECT_EQ(r[0].Status, STATUS_CANCELLED);  // FLS-02
    ASSERT_EQ(table(q.a).NdkFastRegister(q.a, ctx(2), mr, 1, lam->AdapterPageArray, 0, PAGE_SIZE,
                                         base, NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_SUCCESS);
    UINT32 token = table(mr).NdkGetRemoteTokenFromMr(mr);
    r = drain(q.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS) << "the flushed registration was not rolled back";
    Region src = region(p.pd, PAGE_SIZE, 0);
    fill(src.buffer, 6);
    NDK_SGE e = sge(src, 0, 64);
    ASSERT_EQ(table(q.b).NdkWrite(q.b, ctx(3), &e, 1, 0x7000000000ull + 128, token, 0),
              STATUS_SUCCESS);
    r = drain(q.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(memory.data() + 128, src.buffer.data(), 64), 0);
    table(adapter).NdkReleaseLAM(adapter, lam);
}

// INV-01 with the fast-registration cache (README "Fast registration"): the second
// NdkFastRegister of the same pages at the same address reuses the registration the first one
// made, and the first one's tokens still fail after NdkInvalidate: the remote token (a write by
// the peer) and the local token (a write from the region), while the new tokens work.
TEST_F(Verbs, CachedFastRegistrationOldTokensFailAfterInvalidate) {
    Pair p, q, t;
    connect(p);
    connect(q, 64, 0, p.pd);  // same PD: tokens of the MR are valid on every pair
    connect(t, 64, 0, p.pd);
    LockedBuffer memory = arena->allocate(2 * PAGE_SIZE);
    std::memset(memory.data(), 0, memory.size());
    FastRegisterable fr;
    ASSERT_NO_FATAL_FAILURE(fast_registerable(p.pd, memory, 2, fr));
    NDK_MR* mr = fr.mr;
    auto* lam = fr.lam();
    const uint64_t base = 0x6000000000ull;
    const ULONG rights = NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ |
                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
    auto fast_register = [&](int id) {
        ASSERT_EQ(table(p.a).NdkFastRegister(p.a, ctx(id), mr, 2, lam->AdapterPageArray, 0,
                                             2 * PAGE_SIZE, reinterpret_cast<void*>(base), rights),
                  STATUS_SUCCESS);
        auto r = drain(p.cq, 1);
        ASSERT_EQ(r.size(), 1u);
        EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    };
    auto invalidate = [&](int id) {
        ASSERT_EQ(table(p.a).NdkInvalidate(p.a, ctx(id), &mr->Header, 0), STATUS_SUCCESS);
        auto r = drain(p.cq, 1);
        ASSERT_EQ(r.size(), 1u);
        EXPECT_EQ(r[0].Status, STATUS_SUCCESS);  // INV-01: completed
    };
    Region src = region(p.pd, PAGE_SIZE, 0);
    fill(src.buffer, 7);
    Region sink =
        region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    std::memset(sink.buffer.data(), 0, PAGE_SIZE);
    // A write by `qp` of `bytes` from `from` to the remote address with `token`; its status.
    auto write = [&](Pair& pair, NDK_QP* qp, NDK_SGE e, uint64_t to, UINT32 token, int id) {
        EXPECT_EQ(table(qp).NdkWrite(qp, ctx(id), &e, 1, to, token, 0), STATUS_SUCCESS);
        auto r = drain(pair.cq, 1);
        EXPECT_EQ(r.size(), 1u);
        return r.empty() ? STATUS_PENDING : r[0].Status;
    };

    fast_register(1);
    UINT32 local1 = table(mr).NdkGetLocalTokenFromMr(mr);
    UINT32 remote1 = table(mr).NdkGetRemoteTokenFromMr(mr);
    // The first registration works: the peer writes into it, and it is the source of a write.
    EXPECT_EQ(write(p, p.b, sge(src, 0, 64), base + 100, remote1, 2), STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(memory.data() + 100, src.buffer.data(), 64), 0);
    NDK_SGE from{};
    from.VirtualAddress = reinterpret_cast<void*>(base + 100);
    from.Length = 64;
    from.MemoryRegionToken = local1;
    EXPECT_EQ(write(p, p.a, from, sink.address(), sink.remote, 3), STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(sink.buffer.data(), src.buffer.data(), 64), 0);
    invalidate(4);

    fast_register(5);  // the same pages, offset, length, address and rights: the cache's reuse
    UINT32 local2 = table(mr).NdkGetLocalTokenFromMr(mr);
    UINT32 remote2 = table(mr).NdkGetRemoteTokenFromMr(mr);
    EXPECT_NE(local2, local1) << "a new registration needs a new local token (FR-TOK-02)";
    EXPECT_NE(remote2, remote1) << "a new registration needs a new remote token (FR-TOK-02)";
    // The new tokens work.
    fill(src.buffer, 8);
    EXPECT_EQ(write(p, p.b, sge(src, 0, 64), base + 200, remote2, 6), STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(memory.data() + 200, src.buffer.data(), 64), 0);
    from.VirtualAddress = reinterpret_cast<void*>(base + 200);
    from.MemoryRegionToken = local2;
    EXPECT_EQ(write(p, p.a, from, sink.address() + 512, sink.remote, 7), STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(sink.buffer.data() + 512, src.buffer.data(), 64), 0);
    // The old ones do not (each failure puts its pair in error: one pair per check).
    fill(src.buffer, 9);
    EXPECT_NE(write(q, q.b, sge(src, 0, 64), base + 300, remote1, 8), STATUS_SUCCESS)
        << "INV-01: the invalidated remote token still reaches the reused pages";
    EXPECT_NE(std::memcmp(memory.data() + 300, src.buffer.data(), 64), 0);
    from.VirtualAddress = reinterpret_cast<void*>(base + 100);
    from.MemoryRegionToken = local1;
    EXPECT_NE(write(t, t.a, from, sink.address() + 1024, sink.remote, 9), STATUS_SUCCESS)
        << "INV-01: the invalidated local token still reaches the reused pages";
    EXPECT_NE(std::memcmp(sink.buffer.data() + 1024, memory.data() + 100, 64), 0);
    // And after the second invalidation, the second tokens fail too (pair p is still healthy).
    invalidate(10);
    EXPECT_NE(write(p, p.b, sge(src, 0, 64), base + 400, remote2, 11), STATUS_SUCCESS)
        << "INV-01: the invalidated remote token still reaches the parked registration";
    EXPECT_NE(std::memcmp(memory.data() + 400, src.buffer.data(), 64), 0);
    table(adapter).NdkReleaseLAM(adapter, lam);
}

// ---- receive queues ----

TEST_F(Verbs, SrqReceivesCarryTheirQpContextAndNotify) {
    Pair p;
    connect(p);  // a and b exist; a third pair of QPs uses an SRQ
    Events& srq_events = new_events();
    NDK_SRQ* srq = nullptr;
    ASSERT_EQ(table(p.pd).NdkCreateSrq(
                  p.pd, 16, 2, 0, [](void* c, NTSTATUS) { on_cq(c, STATUS_SUCCESS); }, &srq_events,
                  nullptr, on_create, nullptr, &srq),
              STATUS_SUCCESS);
    NDK_QP* s1 = nullptr;
    static int s1_context;
    ASSERT_EQ(table(p.pd).NdkCreateQpWithSrq(p.pd, p.cq, p.cq, srq, &s1_context, 16, 2, 0,
                                             on_create, nullptr, &s1),
              STATUS_SUCCESS);
    // Connect s1 to a fresh QP through the listener of the pair.
    Region in = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    for (int k = 0; k < 4; ++k) {
        NDK_SGE rcv = sge(in, 100 * k, 100);
        ASSERT_EQ(table(srq).NdkSrqReceive(srq, ctx(10 + k), &rcv, 1), STATUS_SUCCESS);
    }
    Waiter mw;
    ASSERT_EQ(finish(table(srq).NdkModifySrq(srq, 0, 3, on_request, &mw), mw), STATUS_SUCCESS);
    NDK_QP* peer = qp(p.pd, p.cq);
    NDK_CONNECTOR* active = nullptr;
    ASSERT_EQ(table(adapter).NdkCreateConnector(adapter, on_create, nullptr, &active),
              STATUS_SUCCESS);
    sockaddr_storage bound{};
    ULONG bound_length = sizeof bound;
    ASSERT_EQ(
        table(p.listener)
            .NdkGetLocalAddress(p.listener, reinterpret_cast<sockaddr*>(&bound), &bound_length),
        STATUS_SUCCESS);
    Waiter cw, aw;
    ASSERT_EQ(
        table(active).NdkConnect(active, peer, nullptr, 0, reinterpret_cast<sockaddr*>(&bound),
                                 bound_length, 0, 0, nullptr, 0, on_request, &cw),
        STATUS_PENDING);
    NDK_CONNECTOR* passive = nullptr;
    {
        std::unique_lock l(p.events.m);
        ASSERT_TRUE(p.events.cv.wait_for(l, 10s, [&] { return p.events.incoming.size() == 2; }));
        passive = p.events.incoming.back();
    }
    NTSTATUS s =
        table(passive).NdkAccept(passive, s1, 0, 0, nullptr, 0, nullptr, nullptr, on_request, &aw);
    ASSERT_EQ(finish(STATUS_PENDING, cw), STATUS_SUCCESS);
    Waiter ccw;
    ASSERT_EQ(
        finish(table(active).NdkCompleteConnect(active, nullptr, nullptr, on_request, &ccw), ccw),
        STATUS_SUCCESS);
    ASSERT_EQ(finish(s, aw), STATUS_SUCCESS);
    Region out = region(p.pd, PAGE_SIZE, 0);
    NDK_SGE snd = sge(out, 0, 20);
    ASSERT_EQ(table(peer).NdkSend(peer, ctx(1), &snd, 1, 0), STATUS_SUCCESS);
    ASSERT_EQ(table(peer).NdkSend(peer, ctx(2), &snd, 1, 0), STATUS_SUCCESS);
    auto r = drain(p.cq, 4);
    ASSERT_EQ(r.size(), 4u);
    int receives = 0;
    for (auto& x : r) {
        EXPECT_EQ(x.Status, STATUS_SUCCESS);
        if (x.Type == NdkOperationTypeReceive) {
            ++receives;
            EXPECT_EQ(x.QPContext, &s1_context);
            EXPECT_EQ(x.BytesTransferred, 20u);
        }
    }
    EXPECT_EQ(receives, 2);
    std::unique_lock l(srq_events.m);
    EXPECT_TRUE(srq_events.cv.wait_for(l, 5s, [&] { return srq_events.notifications == 1; }))
        << "2 receives left, threshold 3: the SRQ notifies";
}

TEST_F(Verbs, FlushCancelsEverythingPending) {
    Pair p;
    connect(p);
    Region in = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE rcv = sge(in, 0, 100);
    for (int k = 0; k < 5; ++k)
        ASSERT_EQ(table(p.b).NdkReceive(p.b, ctx(k + 1), &rcv, 1), STATUS_SUCCESS);
    table(p.b).NdkFlush(p.b);
    auto r = drain(p.cq, 5);
    ASSERT_EQ(r.size(), 5u);
    for (int k = 0; k < 5; ++k) {
        EXPECT_EQ(r[k].Status, STATUS_CANCELLED);
        EXPECT_EQ(ctx_id(r[k]), k + 1);
    }
}

// ---- connections ----

TEST_F(Verbs, DisconnectFlushesAndThePeerHearsOfIt) {
    Pair p;
    connect(p);
    Region in = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_SGE rcv = sge(in, 0, 100);
    ASSERT_EQ(table(p.a).NdkReceive(p.a, ctx(1), &rcv, 1), STATUS_SUCCESS);
    Waiter w;
    ASSERT_EQ(finish(table(p.active).NdkDisconnect(p.active, on_request, &w), w), STATUS_SUCCESS);
    auto r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_CANCELLED);
    {
        std::unique_lock l(p.events.m);
        EXPECT_TRUE(p.events.cv.wait_for(l, 10s, [&] { return p.events.disconnects == 1; }));
    }
    NDK_SGE e = sge(in, 0, 8);
    EXPECT_EQ(table(p.a).NdkSend(p.a, ctx(2), &e, 1, 0), STATUS_CONNECTION_INVALID);
}

TEST_F(Verbs, Ipv6LoopbackConnects) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    Pair p;
    connect(p, reinterpret_cast<sockaddr*>(&a), sizeof a);
    sockaddr_storage local{};
    ULONG length = sizeof local;
    ASSERT_EQ(
        table(p.active).NdkGetPeerAddress(p.active, reinterpret_cast<sockaddr*>(&local), &length),
        STATUS_SUCCESS);
    EXPECT_EQ(local.ss_family, AF_INET6);
    EXPECT_EQ(length, sizeof(sockaddr_in6));
}

TEST_F(Verbs, ListenerPortZeroIsEphemeralAndRejectCarriesData) {
    Events& events = new_events();
    NDK_LISTENER* l = nullptr;
    ASSERT_EQ(table(adapter).NdkCreateListener(adapter, on_connect_event, &events, on_create,
                                               nullptr, &l),
              STATUS_SUCCESS);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    Waiter lw;
    ASSERT_EQ(
        finish(table(l).NdkListen(l, reinterpret_cast<sockaddr*>(&a), sizeof a, on_request, &lw),
               lw),
        STATUS_SUCCESS);
    sockaddr_in bound{};
    ULONG length = sizeof bound;
    ASSERT_EQ(table(l).NdkGetLocalAddress(l, reinterpret_cast<sockaddr*>(&bound), &length),
              STATUS_SUCCESS);
    EXPECT_GE(ntohs(bound.sin_port), 49152);
    EXPECT_EQ(bound.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    NDK_PD* p = pd();
    NDK_CQ* c = cq(16);
    NDK_QP* q = qp(p, c);
    NDK_CONNECTOR* active = nullptr;
    ASSERT_EQ(table(adapter).NdkCreateConnector(adapter, on_create, nullptr, &active),
              STATUS_SUCCESS);
    Waiter cw;
    ASSERT_EQ(table(active).NdkConnect(active, q, nullptr, 0, reinterpret_cast<sockaddr*>(&bound),
                                       length, 0, 0, nullptr, 0, on_request, &cw),
              STATUS_PENDING);
    NDK_CONNECTOR* passive = nullptr;
    {
        std::unique_lock lk(events.m);
        ASSERT_TRUE(events.cv.wait_for(lk, 10s, [&] { return !events.incoming.empty(); }));
        passive = events.incoming.front();
    }
    const uint8_t no[] = {9, 8, 7};
    ASSERT_EQ(table(passive).NdkReject(passive, const_cast<uint8_t*>(no), sizeof no),
              STATUS_SUCCESS);
    EXPECT_EQ(finish(STATUS_PENDING, cw), STATUS_CONNECTION_REFUSED);
    uint8_t got[256] = {};
    ULONG got_length = sizeof got;
    EXPECT_EQ(table(active).NdkGetConnectionData(active, nullptr, nullptr, got, &got_length),
              STATUS_SUCCESS);
    EXPECT_EQ(std::memcmp(got, no, sizeof no), 0);
    // Nobody listens on the next port: refused as well.
    NDK_CONNECTOR* again = nullptr;
    ASSERT_EQ(table(adapter).NdkCreateConnector(adapter, on_create, nullptr, &again),
              STATUS_SUCCESS);
    bound.sin_port = htons(
        static_cast<uint16_t>(ntohs(bound.sin_port) == 65535 ? 65534 : ntohs(bound.sin_port) + 1));
    Waiter w2;
    NTSTATUS s = table(again).NdkConnect(again, q, nullptr, 0, reinterpret_cast<sockaddr*>(&bound),
                                         length, 0, 0, nullptr, 0, on_request, &w2);
    EXPECT_EQ(finish(s, w2), STATUS_CONNECTION_REFUSED);
}

TEST_F(Verbs, ResizeCq) {
    if (!(info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED)) GTEST_SKIP() << "no resize";
    NDK_CQ* c = cq(16);
    Waiter w;
    EXPECT_EQ(finish(table(c).NdkResizeCq(c, 256, on_request, &w), w), STATUS_SUCCESS);
    EXPECT_EQ(table(c).NdkControlCqInterruptModeration(c, 10, 10), STATUS_NOT_SUPPORTED);
}

// ---- the post and poll paths against plain libibverbs ----

// Two RC QPs of the device connected by hand (no rdma_cm), for the baseline.
struct RawPair {
    ibv_context* context = nullptr;
    ibv_pd* pd = nullptr;
    ibv_cq* cq = nullptr;
    ibv_qp* qp[2] = {};
    ibv_mr* src = nullptr;
    ibv_mr* dst = nullptr;
    std::vector<char> a, b;
    bool ok = false;
    RawPair() {
        int n = 0;
        ibv_device** list = ibv_get_device_list(&n);
        if (!list || n == 0) return;
        context = ibv_open_device(list[0]);
        ibv_free_device_list(list);
        if (!context) return;
        ibv_port_attr port{};
        ibv_query_port(context, 1, &port);
        bench::RoceGid gid = bench::find_ipv4_gid(context, port.gid_tbl_len);
        if (gid.index < 0) return;
        pd = ibv_alloc_pd(context);
        cq = ibv_create_cq(context, 256, nullptr, nullptr, 0);
        a.assign(1 << 16, 1);
        b.assign(1 << 16, 0);
        src = ibv_reg_mr(pd, a.data(), a.size(), IBV_ACCESS_LOCAL_WRITE);
        dst = ibv_reg_mr(pd, b.data(), b.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        for (auto& q : qp) {
            ibv_qp_init_attr init{};
            init.send_cq = init.recv_cq = cq;
            init.qp_type = IBV_QPT_RC;
            init.cap.max_send_wr = init.cap.max_recv_wr = 128;
            init.cap.max_send_sge = init.cap.max_recv_sge = 4;
            q = ibv_create_qp(pd, &init);
            if (!q) return;
            ibv_qp_attr attr{};
            attr.qp_state = IBV_QPS_INIT;
            attr.port_num = 1;
            attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
            if (ibv_modify_qp(q, &attr,
                              IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
                return;
        }
        for (int k = 0; k < 2; ++k) {
            ibv_qp_attr attr{};
            attr.qp_state = IBV_QPS_RTR;
            attr.path_mtu = port.active_mtu;
            attr.dest_qp_num = qp[1 - k]->qp_num;
            attr.max_dest_rd_atomic = 1;
            attr.min_rnr_timer = 12;
            if (bench::modify_to_rtr(qp[k], attr,
                                     IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                         IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                         IBV_QP_MIN_RNR_TIMER,
                                     context, port.gid_tbl_len, gid))
                return;
            attr.qp_state = IBV_QPS_RTS;
            attr.timeout = 14;
            attr.retry_cnt = 7;
            attr.rnr_retry = 7;
            attr.max_rd_atomic = 1;
            if (ibv_modify_qp(qp[k], &attr,
                              IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
                return;
        }
        ok = true;
    }
    ~RawPair() {
        for (auto* q : qp)
            if (q) ibv_destroy_qp(q);
        if (src) ibv_dereg_mr(src);
        if (dst) ibv_dereg_mr(dst);
        if (cq) ibv_destroy_cq(cq);
        if (pd) ibv_dealloc_pd(pd);
        if (context) ibv_close_device(context);
    }
    // `batch` writes, the last signaled, then poll it.
    void round(int batch) {
        ibv_sge sge{reinterpret_cast<uintptr_t>(a.data()), 64, src->lkey};
        for (int k = 0; k < batch; ++k) {
            ibv_send_wr wr{}, *bad = nullptr;
            wr.wr_id = static_cast<uint64_t>(k);
            wr.sg_list = &sge;
            wr.num_sge = 1;
            wr.opcode = IBV_WR_RDMA_WRITE;
            wr.send_flags = k == batch - 1 ? IBV_SEND_SIGNALED : 0;
            wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(b.data());
            wr.wr.rdma.rkey = dst->rkey;
            ibv_post_send(qp[0], &wr, &bad);
        }
        ibv_wc wc;
        while (ibv_poll_cq(cq, 1, &wc) == 0) {
        }
    }
};

TEST_F(Verbs, PostAndPollCostAgainstRawVerbs) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region dst = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    RawPair raw;
    ASSERT_TRUE(raw.ok) << "raw verbs pair";
    NDK_SGE e = sge(src, 0, 64);
    auto ndk_round = [&](int batch) {
        for (int k = 0; k < batch; ++k)
            table(p.a).NdkWrite(p.a, ctx(k + 1), &e, 1, dst.address(), dst.remote,
                                k == batch - 1 ? 0 : NDK_OP_FLAG_SILENT_SUCCESS);
        NDK_RESULT r;
        while (table(p.cq).NdkGetCqResults(p.cq, &r, 1) == 0) {
        }
    };
    for (int batch : {1, 16}) {
        const int rounds = batch == 1 ? 4000 : 500;
        for (int k = 0; k < 20; ++k) {  // warm up both
            ndk_round(batch);
            raw.round(batch);
        }
        double best_ndk = 1e9, best_raw = 1e9;
        for (int trial = 0; trial < 3;
             ++trial) {  // interleaved, best of three: the machine is shared
            auto t0 = std::chrono::steady_clock::now();
            for (int k = 0; k < rounds; ++k)
                ndk_round(batch);
            auto t1 = std::chrono::steady_clock::now();
            for (int k = 0; k < rounds; ++k)
                raw.round(batch);
            auto t2 = std::chrono::steady_clock::now();
            best_ndk = std::min(
                best_ndk, std::chrono::duration<double, std::micro>(t1 - t0).count() / rounds);
            best_raw = std::min(
                best_raw, std::chrono::duration<double, std::micro>(t2 - t1).count() / rounds);
        }
        std::printf(
            "timing: %2d writes per round (last signaled): NDK %.1f us, raw verbs %.1f us, ratio "
            "%.2f\n",
            batch, best_ndk, best_raw, best_ndk / best_raw);
        EXPECT_EQ(drain(p.cq, 1, 20ms).size(), 0u) << "silent writes made entries";
    }
}

// ---- windows: rebinding, and a deregistered MR (AMB-31) ----

TEST_F(Verbs, RebindWithoutInvalidateAndDeregisterUnderAWindow) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region mem = region(p.pd, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_MW* mw = nullptr;
    ASSERT_EQ(table(p.pd).NdkCreateMw(p.pd, on_create, nullptr, &mw), STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(1), mem.mr, mw, mem.buffer.data(), 100,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(2), mem.mr, mw, mem.buffer.data() + 1000, 100,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
              STATUS_SUCCESS);
    UINT32 token = table(mw).NdkGetRemoteTokenFromMw(mw);
    auto r = drain(p.cq, 2);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    EXPECT_EQ(r[1].Status, STATUS_SUCCESS)
        << "rebinding a bound window (verbs status " << r[1].ProviderErrorCode << ")";
    NDK_SGE e = sge(src, 0, 8);
    ASSERT_EQ(table(p.b).NdkWrite(p.b, ctx(3), &e, 1, mem.address(1000), token, 0), STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    // AMB-31: deregistering the MR under a bound window is allowed; the window reaches nothing,
    // and invalidating it afterwards still succeeds.
    Waiter w;
    ASSERT_EQ(finish(table(mem.mr).NdkDeregisterMr(mem.mr, on_request, &w), w), STATUS_SUCCESS);
    ASSERT_EQ(table(p.b).NdkWrite(p.b, ctx(4), &e, 1, mem.address(1000), token, 0), STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NE(r[0].Status, STATUS_SUCCESS);
}

TEST_F(Verbs, InvalidateOfAnOrphanedWindowSucceeds) {
    Pair p;
    connect(p);
    Region mem = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_MW* mw = nullptr;
    ASSERT_EQ(table(p.pd).NdkCreateMw(p.pd, on_create, nullptr, &mw), STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(1), mem.mr, mw, mem.buffer.data(), 100,
                                 NDK_OP_FLAG_ALLOW_REMOTE_READ),
              STATUS_SUCCESS);
    ASSERT_EQ(drain(p.cq, 1).size(), 1u);
    Waiter w;
    ASSERT_EQ(finish(table(mem.mr).NdkDeregisterMr(mem.mr, on_request, &w), w), STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkInvalidate(p.a, ctx(2), &mw->Header, 0), STATUS_SUCCESS);
    auto r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
    // Invalidating it again: the token is no longer valid (AMB-32: an error completion).
    ASSERT_EQ(table(p.a).NdkInvalidate(p.a, ctx(3), &mw->Header, 0), STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_INVALID_DEVICE_STATE);
    // ... and the QP still works (our verdict does not break it).
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region dst = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    NDK_SGE e = sge(src, 0, 8);
    ASSERT_EQ(table(p.a).NdkWrite(p.a, ctx(4), &e, 1, dst.address(), dst.remote, 0),
              STATUS_SUCCESS);
    r = drain(p.cq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].Status, STATUS_SUCCESS);
}

// ---- lifetime ----

TEST_F(Verbs, AdapterCloseReleasesWhateverIsOpen) {
    Pair p;
    connect(p);
    Region mem = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_MW* mw = nullptr;
    ASSERT_EQ(table(p.pd).NdkCreateMw(p.pd, on_create, nullptr, &mw), STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(1), mem.mr, mw, mem.buffer.data(), 100,
                                 NDK_OP_FLAG_ALLOW_REMOTE_READ),
              STATUS_SUCCESS);
    NDK_SGE rcv = sge(mem, 0, 10);
    ASSERT_EQ(table(p.b).NdkReceive(p.b, ctx(2), &rcv, 1), STATUS_SUCCESS);
    table(p.cq).NdkArmCq(p.cq, NDK_CQ_NOTIFY_ANY);
    auto start = std::chrono::steady_clock::now();
    ndkct::adapters::verbs::entry_points().CloseAdapter(adapter);  // everything still open
    adapter = nullptr;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              10.0);
}

TEST_F(Verbs, ClosingACqWaitsForItsQpAndThenCompletes) {
    NDK_PD* p = pd();
    NDK_CQ* c = cq(16);
    NDK_QP* q = qp(p, c);
    Waiter cq_closed;
    ASSERT_EQ(table(c).NdkCloseCq(&c->Header, on_close, &cq_closed), STATUS_PENDING);
    EXPECT_FALSE(cq_closed.wait(100ms));
    close(q);
    EXPECT_TRUE(cq_closed.wait());
    close(p);
}

TEST_F(Verbs, TwoAdaptersConnectToEachOther) {
    NDK_ADAPTER* second = nullptr;
    NDKCT_OPEN_OPTIONS o{};
    o.Size = sizeof o;
    o.Version = NDKCT_MAKE_VERSION(1, 1);
    ASSERT_EQ(
        ndkct::adapters::verbs::entry_points().OpenAdapter(&arena->host_memory(), &o, &second),
        STATUS_SUCCESS);
    NDK_ADAPTER_INFO info2{};
    ULONG size = sizeof info2;
    ASSERT_EQ(table(second).NdkQueryAdapterInfo(second, &info2, &size), STATUS_SUCCESS);
    EXPECT_EQ(info2.Version.Major, 1);
    EXPECT_EQ(info2.Version.Minor, 2) << "major 1 runs at our highest minor, 1.2 (VER-02)";
    // A listener on the second adapter, a connector on the first.
    Events& events = new_events();
    NDK_LISTENER* l = nullptr;
    ASSERT_EQ(
        table(second).NdkCreateListener(second, on_connect_event, &events, on_create, nullptr, &l),
        STATUS_SUCCESS);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    Waiter lw;
    ASSERT_EQ(
        finish(table(l).NdkListen(l, reinterpret_cast<sockaddr*>(&a), sizeof a, on_request, &lw),
               lw),
        STATUS_SUCCESS);
    ULONG length = sizeof a;
    ASSERT_EQ(table(l).NdkGetLocalAddress(l, reinterpret_cast<sockaddr*>(&a), &length),
              STATUS_SUCCESS);
    NDK_PD* pd2 = nullptr;
    ASSERT_EQ(table(second).NdkCreatePd(second, on_create, nullptr, &pd2), STATUS_SUCCESS);
    NDK_CQ* cq2 = nullptr;
    ASSERT_EQ(
        table(second).NdkCreateCq(second, 16, on_cq, nullptr, nullptr, on_create, nullptr, &cq2),
        STATUS_SUCCESS);
    NDK_QP* q2 = qp(pd2, cq2);
    NDK_PD* pd1 = pd();
    NDK_CQ* cq1 = cq(16);
    NDK_QP* q1 = qp(pd1, cq1);
    NDK_CONNECTOR* active = nullptr;
    ASSERT_EQ(table(adapter).NdkCreateConnector(adapter, on_create, nullptr, &active),
              STATUS_SUCCESS);
    Waiter cw, aw, ccw;
    ASSERT_EQ(table(active).NdkConnect(active, q1, nullptr, 0, reinterpret_cast<sockaddr*>(&a),
                                       length, 0, 0, nullptr, 0, on_request, &cw),
              STATUS_PENDING);
    NDK_CONNECTOR* passive = nullptr;
    {
        std::unique_lock lk(events.m);
        ASSERT_TRUE(events.cv.wait_for(lk, 10s, [&] { return !events.incoming.empty(); }));
        passive = events.incoming.front();
    }
    NTSTATUS s =
        table(passive).NdkAccept(passive, q2, 0, 0, nullptr, 0, nullptr, nullptr, on_request, &aw);
    ASSERT_EQ(finish(STATUS_PENDING, cw), STATUS_SUCCESS);
    ASSERT_EQ(
        finish(table(active).NdkCompleteConnect(active, nullptr, nullptr, on_request, &ccw), ccw),
        STATUS_SUCCESS);
    ASSERT_EQ(finish(s, aw), STATUS_SUCCESS);
    ndkct::adapters::verbs::entry_points().CloseAdapter(second);
}

TEST_F(Verbs, BindInvalidateBindAgain) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region mem = region(p.pd, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    NDK_MW* mw = nullptr;
    ASSERT_EQ(table(p.pd).NdkCreateMw(p.pd, on_create, nullptr, &mw), STATUS_SUCCESS);
    for (int round = 0; round < 3; ++round) {
        ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(1), mem.mr, mw, mem.buffer.data() + 8 * round, 100,
                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
                  STATUS_SUCCESS);
        UINT32 token = table(mw).NdkGetRemoteTokenFromMw(mw);
        auto r = drain(p.cq, 1);
        ASSERT_EQ(r.size(), 1u);
        EXPECT_EQ(r[0].Status, STATUS_SUCCESS)
            << "round " << round << " bind, verbs " << r[0].ProviderErrorCode << " token "
            << std::hex << token;
        ASSERT_EQ(table(p.a).NdkInvalidate(p.a, ctx(2), &mw->Header, 0), STATUS_SUCCESS);
        r = drain(p.cq, 1);
        ASSERT_EQ(r.size(), 1u);
        EXPECT_EQ(r[0].Status, STATUS_SUCCESS)
            << "round " << round << " invalidate, verbs " << r[0].ProviderErrorCode;
        (void)src;
    }
}

// BND-01 with Length 0: IB forbids zero-length type 2 binds (rxe: IBV_WC_MW_BIND_ERR), so the
// provider binds nothing on the device; NDK's bind succeeds, the window reaches nothing, and it
// can be invalidated and bound again.
TEST_F(Verbs, ZeroLengthBindSucceedsAndReachesNothing) {
    Pair p;
    connect(p);
    Region mem = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    Region src = region(p.pd, PAGE_SIZE, 0);
    NDK_MW* mw = nullptr;
    ASSERT_EQ(table(p.pd).NdkCreateMw(p.pd, on_create, nullptr, &mw), STATUS_SUCCESS);
    for (SIZE_T length : {SIZE_T{100}, SIZE_T{0}, SIZE_T{100}}) {
        ASSERT_EQ(table(p.a).NdkBind(p.a, ctx(1), mem.mr, mw, mem.buffer.data(), length,
                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE),
                  STATUS_SUCCESS);
        auto r = drain(p.cq, 1);
        ASSERT_EQ(r.size(), 1u);
        EXPECT_EQ(r[0].Status, STATUS_SUCCESS) << "bind of " << length << " bytes";
        if (length == 0) {  // a write through the window's key fails at the peer
            NDK_SGE e = sge(src, 0, 1);
            ASSERT_EQ(table(p.b).NdkWrite(p.b, ctx(2), &e, 1,
                                          reinterpret_cast<uint64_t>(mem.buffer.data()),
                                          table(mw).NdkGetRemoteTokenFromMw(mw), 0),
                      STATUS_SUCCESS);
            r = drain(p.cq, 1, 20000ms);
            ASSERT_EQ(r.size(), 1u);
            EXPECT_NE(r[0].Status, STATUS_SUCCESS) << "a zero-byte window took a write";
            return;  // the write's failure broke the connection
        }
    }
}

// SND-01, FLS-03: NdkSend waiting for a receive the peer has not posted (receiver not ready:
// the provider retries forever), then NdkWrite through a token the peer's region does not
// grant. The write is behind the send: both wait (IB drops the write's packets while it refuses
// the send). The property tests once saw the send fail instead, with an access error (seed 7,
// MemoryRegistration, from a fast-registered source): not this plain case, where rxe waits.
TEST_F(Verbs, AWriteBehindAWaitingSendWaitsToo) {
    Pair p;
    connect(p);
    Region src = region(p.pd, PAGE_SIZE, 0);
    Region target = region(p.pd, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    // As the property tests found it: the send held back (DEFER) and the write silent, with
    // three SGEs, so both reach the device in one chain.
    NDK_SGE one = sge(src, 0, 1);
    NDK_SGE three[3] = {one, one, one};
    ASSERT_EQ(table(p.a).NdkSend(p.a, ctx(1), &one, 1, NDK_OP_FLAG_DEFER), STATUS_SUCCESS);
    ASSERT_EQ(table(p.a).NdkWrite(p.a, ctx(2), three, 3, target.address(), target.remote,
                                  NDK_OP_FLAG_SILENT_SUCCESS),
              STATUS_SUCCESS);
    auto r = drain(p.cq, 2, 3000ms);
    for (auto& x : r)
        ADD_FAILURE() << (ctx_id(x) == 1 ? "the waiting send" : "the write behind it")
                      << " completed with 0x" << std::hex << x.Status << " (verbs " << std::dec
                      << x.ProviderErrorCode << ")";
    // Whatever rxe did, a receive posted now ends the send's wait or finds the QP in error.
    NDK_SGE rcv = sge(target, 0, 16);
    ASSERT_EQ(table(p.b).NdkReceive(p.b, ctx(3), &rcv, 1), STATUS_SUCCESS);
    table(p.a).NdkFlush(p.a);
    table(p.b).NdkFlush(p.b);
    auto rest = drain(p.cq, 3 - r.size(), 20000ms);
    EXPECT_EQ(r.size() + rest.size(), 3u) << "a request never completed";
}

TEST_F(Verbs, SharedEndpointCarriesTwoConnectionsAndAddressesInUseAreRefused) {
    Pair p;
    connect(p);  // a listener on 127.0.0.1 (ephemeral port) with its connection
    sockaddr_in at{};
    ULONG at_length = sizeof at;
    ASSERT_EQ(table(p.listener)
                  .NdkGetLocalAddress(p.listener, reinterpret_cast<sockaddr*>(&at), &at_length),
              STATUS_SUCCESS);
    // CONN-04: the same address and port again is in use.
    NDK_LISTENER* second = nullptr;
    ASSERT_EQ(table(adapter).NdkCreateListener(adapter, on_connect_event, &p.events, on_create,
                                               nullptr, &second),
              STATUS_SUCCESS);
    Waiter lw;
    EXPECT_EQ(finish(table(second).NdkListen(second, reinterpret_cast<sockaddr*>(&at), at_length,
                                             on_request, &lw),
                     lw),
              STATUS_SHARING_VIOLATION);
    // A shared endpoint on 127.0.0.1, port 0, and two connections through it to the listener.
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    NDK_SHARED_ENDPOINT* endpoint = nullptr;
    ASSERT_EQ(table(adapter).NdkCreateSharedEndpoint(adapter, reinterpret_cast<sockaddr*>(&local),
                                                     sizeof local, on_create, nullptr, &endpoint),
              STATUS_SUCCESS);
    sockaddr_in shown{};
    ULONG shown_length = sizeof shown;
    ASSERT_EQ(table(endpoint).NdkGetLocalAddress(endpoint, reinterpret_cast<sockaddr*>(&shown),
                                                 &shown_length),
              STATUS_SUCCESS);
    EXPECT_EQ(shown.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    EXPECT_GE(ntohs(shown.sin_port), 49152);
    // A second listener on another port: one endpoint's two connections need two four-tuples.
    NDK_LISTENER* other = nullptr;
    ASSERT_EQ(table(adapter).NdkCreateListener(adapter, on_connect_event, &p.events, on_create,
                                               nullptr, &other),
              STATUS_SUCCESS);
    sockaddr_in any_port{};
    any_port.sin_family = AF_INET;
    any_port.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    Waiter ow;
    ASSERT_EQ(finish(table(other).NdkListen(other, reinterpret_cast<sockaddr*>(&any_port),
                                            sizeof any_port, on_request, &ow),
                     ow),
              STATUS_SUCCESS);
    sockaddr_in at_other{};
    ULONG at_other_length = sizeof at_other;
    ASSERT_EQ(table(other).NdkGetLocalAddress(other, reinterpret_cast<sockaddr*>(&at_other),
                                              &at_other_length),
              STATUS_SUCCESS);
    sockaddr_in targets[2] = {at, at_other};
    for (int k = 0; k < 2; ++k) {
        if (k == 1) {
            // CONN-12: the first connection's four-tuple again is refused.
            NDK_QP* q = qp(p.pd, p.cq);
            NDK_CONNECTOR* c = nullptr;
            ASSERT_EQ(table(adapter).NdkCreateConnector(adapter, on_create, nullptr, &c),
                      STATUS_SUCCESS);
            Waiter cw;
            NTSTATUS s = table(c).NdkConnectWithSharedEndpoint(
                c, q, endpoint, reinterpret_cast<sockaddr*>(&at), at_length, 0, 0, nullptr, 0,
                on_request, &cw);
            EXPECT_EQ(finish(s, cw), STATUS_ADDRESS_ALREADY_EXISTS);
        }
        NDK_QP* q = qp(p.pd, p.cq);
        NDK_QP* peer = qp(p.pd, p.cq);
        NDK_CONNECTOR* c = nullptr;
        ASSERT_EQ(table(adapter).NdkCreateConnector(adapter, on_create, nullptr, &c),
                  STATUS_SUCCESS);
        Waiter cw, aw, ccw;
        NTSTATUS s = table(c).NdkConnectWithSharedEndpoint(
            c, q, endpoint, reinterpret_cast<sockaddr*>(&targets[k]), sizeof targets[k], 0, 0,
            nullptr, 0, on_request, &cw);
        ASSERT_TRUE(s == STATUS_PENDING || s == STATUS_SUCCESS) << std::hex << s;
        NDK_CONNECTOR* passive = nullptr;
        {
            std::unique_lock lk(p.events.m);
            ASSERT_TRUE(p.events.cv.wait_for(
                lk, 10s, [&] { return p.events.incoming.size() == size_t(2 + k); }));
            passive = p.events.incoming.back();
        }
        NTSTATUS as = table(passive).NdkAccept(passive, peer, 0, 0, nullptr, 0, nullptr, nullptr,
                                               on_request, &aw);
        ASSERT_EQ(finish(s, cw), STATUS_SUCCESS) << "connection " << k;
        ASSERT_EQ(finish(table(c).NdkCompleteConnect(c, nullptr, nullptr, on_request, &ccw), ccw),
                  STATUS_SUCCESS);
        ASSERT_EQ(finish(as, aw), STATUS_SUCCESS);
        sockaddr_in mine{};
        ULONG mine_length = sizeof mine;
        ASSERT_EQ(table(c).NdkGetLocalAddress(c, reinterpret_cast<sockaddr*>(&mine), &mine_length),
                  STATUS_SUCCESS);
        EXPECT_EQ(mine.sin_port, shown.sin_port) << "the endpoint's port";
        EXPECT_EQ(mine.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
    }
}

TEST_F(Verbs, AddressErrors) {
    sockaddr_in foreign{};
    foreign.sin_family = AF_INET;
    inet_pton(AF_INET, "192.0.2.1", &foreign.sin_addr);  // TEST-NET-1: nobody's
    NDK_LISTENER* l = nullptr;
    Events& events = new_events();
    ASSERT_EQ(table(adapter).NdkCreateListener(adapter, on_connect_event, &events, on_create,
                                               nullptr, &l),
              STATUS_SUCCESS);
    Waiter lw;
    EXPECT_EQ(finish(table(l).NdkListen(l, reinterpret_cast<sockaddr*>(&foreign), sizeof foreign,
                                        on_request, &lw),
                     lw),
              STATUS_INVALID_ADDRESS)
        << "CONN-04: not an address of this adapter";
    NDK_PD* p = pd();
    NDK_CQ* c = cq(16);
    NDK_QP* q = qp(p, c);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    local.sin_port = htons(50000);
    NDK_CONNECTOR* k = nullptr;
    ASSERT_EQ(table(adapter).NdkCreateConnector(adapter, on_create, nullptr, &k), STATUS_SUCCESS);
    Waiter w1;
    EXPECT_EQ(finish(table(k).NdkConnect(k, q, reinterpret_cast<sockaddr*>(&foreign),
                                         sizeof foreign, reinterpret_cast<sockaddr*>(&local),
                                         sizeof local, 0, 0, nullptr, 0, on_request, &w1),
                     w1),
              STATUS_INVALID_ADDRESS)
        << "CONN-10: the source is not ours";
    Waiter w2;
    NTSTATUS s = table(k).NdkConnect(k, q, nullptr, 0, reinterpret_cast<sockaddr*>(&foreign),
                                     sizeof foreign, 0, 0, nullptr, 0, on_request, &w2);
    NTSTATUS final_status = finish(s, w2);
    std::printf("finding: connect to an unreachable address: 0x%08x\n",
                static_cast<unsigned>(final_status));
    EXPECT_TRUE(final_status == STATUS_NETWORK_UNREACHABLE ||
                final_status == STATUS_HOST_UNREACHABLE || final_status == STATUS_IO_TIMEOUT ||
                final_status == STATUS_INVALID_ADDRESS)
        << std::hex << final_status;
}

// Reported: the verbs statuses rxe gives both sides of a failed receive (for the status table).
TEST_F(Verbs, ReceiveFailureStatuses) {
    for (int variant = 0; variant < 2; ++variant) {
        Pair p;
        connect(p);
        Region out = region(p.pd, PAGE_SIZE, 0);
        Region in =
            region(p.pd, PAGE_SIZE,
                   variant == 0 ? NDK_MR_FLAG_ALLOW_LOCAL_WRITE : NDK_MR_FLAG_ALLOW_REMOTE_READ);
        NDK_SGE rcv = sge(in, 0, variant == 0 ? 10 : 100), snd = sge(out, 0, 50);
        ASSERT_EQ(table(p.b).NdkReceive(p.b, ctx(1), &rcv, 1), STATUS_SUCCESS);
        ASSERT_EQ(table(p.a).NdkSend(p.a, ctx(2), &snd, 1, 0), STATUS_SUCCESS);
        auto r = drain(p.cq, 2);
        for (auto& x : r)
            std::printf(
                "finding: %s: %s status 0x%08x (verbs %u)\n",
                variant == 0 ? "receive buffer too small" : "receive buffer without local write",
                ctx_id(x) == 1 ? "receiver" : "sender", static_cast<unsigned>(x.Status),
                x.ProviderErrorCode);
    }
}

}  // namespace
