// The verbs provider against raw libibverbs across a real link: node A's QP, node B's peer.
//
// NDK side: the verbs provider split across the two nodes (the passive QP on B under
// ndkct-agent, conformance/twonode); the timed loops then call the provider's own objects on A
// (not the split around them) with B's keys, so the figures are the provider's and the link's.
// Raw side: a libibverbs RC QP on A connected by hand to one this program makes on B (--serve),
// their numbers exchanged over TCP as ibv_rc_pingpong does. Both sides: the device queues the
// provider creates for NDK depth 64, 64-byte messages, a one-entry spin poll. Measured, as
// adapters/verbs/bench does on one node: Write, Read and Send post->completion latency (median,
// p99) and the rate of 64-byte writes in batches of 32 (last signaled), NDK and raw alternating
// with the order flipped each round. Printed, never asserted; ratios are NDK/raw.
//
//   on B: ndkct-agent --listen 7000 & twonode_bench --serve 7100
//   on A: twonode_bench --peer B:7000 --raw-peer B:7100 [--quick] [--rounds N] [--iterations N]
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

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

#include "ndkct/adapters/verbs_provider.hpp"
#include "ndkct/platform/arena.hpp"
#include "ndkct/platform/mdl.hpp"
#include "ndkct/twonode/split_provider.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
using ndkct::platform::Arena;
using ndkct::platform::LockedBuffer;

constexpr ULONG kDepth = 64;
constexpr ULONG kSge = 4;
constexpr ULONG kCqDepth = 256;
constexpr uint32_t kMessage = 64;
constexpr int kBatch = 32;

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "twonode_bench: %s\n", what.c_str());
    std::exit(1);
}

// ---- The clock (the guest's steady_clock ticks in 4 ms steps: the TSC of one pinned CPU) ----
#if defined(__x86_64__) || defined(__i386__)
uint64_t ticks() {
    return __rdtsc();
}
#else
uint64_t ticks() {
    return static_cast<uint64_t>(Clock::now().time_since_epoch().count());
}
#endif
double g_ticks_per_us = 1;

void pin_and_calibrate(int milliseconds) {
    int cpu = sched_getcpu();
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    auto w0 = Clock::now();
    uint64_t t0 = ticks();
    while (Clock::now() - w0 < std::chrono::milliseconds(milliseconds)) {
    }
    auto w1 = Clock::now();
    g_ticks_per_us = static_cast<double>(ticks() - t0) /
                     std::chrono::duration<double, std::micro>(w1 - w0).count();
}

double us_since(uint64_t start) {
    return static_cast<double>(ticks() - start) / g_ticks_per_us;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t at = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(at, v.size() - 1)];
}

// ---- TCP for the raw side's exchange ----

int tcp_connect(const std::string& text) {
    auto colon = text.rfind(':');
    if (colon == std::string::npos) die("--raw-peer wants HOST:PORT");
    std::string host = text.substr(0, colon), port = text.substr(colon + 1);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &list) != 0) die("cannot resolve " + host);
    for (int attempt = 0; attempt < 240; ++attempt) {
        int fd = socket(list->ai_family, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, list->ai_addr, list->ai_addrlen) == 0) {
            freeaddrinfo(list);
            return fd;
        }
        if (fd >= 0) close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(250));  // B may still be starting
    }
    die("cannot connect to the raw peer at " + text);
}

void send_all(int fd, const void* p, size_t n) {
    if (send(fd, p, n, MSG_NOSIGNAL) != static_cast<ssize_t>(n)) die("the exchange failed");
}

void recv_all(int fd, void* p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t k = recv(fd, static_cast<char*>(p) + got, n - got, 0);
        if (k <= 0) die("the exchange ended early");
        got += static_cast<size_t>(k);
    }
}

// What the two raw ends exchange.
struct Endpoint {
    uint32_t qpn, psn, rkey;
    uint64_t address;
    uint8_t gid[16];
};

// ---- Raw side: one RC QP, connected by hand to the other node's ----

struct Raw {
    ibv_context* context = nullptr;
    ibv_pd* pd = nullptr;
    ibv_comp_channel* channel = nullptr;
    ibv_cq* cq = nullptr;
    ibv_qp* qp = nullptr;
    ibv_port_attr port{};
    int gid_index = -1;
    ibv_gid gid{};
    std::vector<unsigned char> src, dst, in;
    ibv_mr *src_mr = nullptr, *dst_mr = nullptr, *in_mr = nullptr;
    Endpoint peer{};

    void open(uint32_t device_send_sge) {
        int n = 0;
        ibv_device** list = ibv_get_device_list(&n);
        if (!list || n == 0) die("no RDMA device");
        const char* name = std::getenv("NDKCT_RDMA_DEV");
        ibv_device* device = list[0];
        for (int k = 0; k < n && name && *name; ++k)
            if (std::strcmp(ibv_get_device_name(list[k]), name) == 0) device = list[k];
        context = ibv_open_device(device);
        ibv_free_device_list(list);
        if (!context || ibv_query_port(context, 1, &port)) die("cannot open the device");
        const char* want = std::getenv("NDKCT_RDMA_ADDR");
        in_addr address{};
        bool by_address = want && inet_pton(AF_INET, want, &address) == 1;
        for (int k = 0; k < port.gid_tbl_len; ++k) {
            ibv_gid g{};
            if (ibv_query_gid(context, 1, k, &g) != 0) break;
            if (g.raw[10] != 0xff || g.raw[11] != 0xff) continue;
            if (by_address && std::memcmp(g.raw + 12, &address, 4) != 0) continue;
            gid_index = k;
            gid = g;
            break;
        }
        if (gid_index < 0) die("no IPv4 RoCE GID (of NDKCT_RDMA_ADDR) on port 1");
        pd = ibv_alloc_pd(context);
        channel = ibv_create_comp_channel(context);
        cq = ibv_create_cq(context, static_cast<int>(2 * kCqDepth + 64), nullptr, channel, 0);
        ibv_qp_init_attr init{};
        init.send_cq = init.recv_cq = cq;
        init.qp_type = IBV_QPT_RC;
        init.cap.max_send_wr = init.cap.max_recv_wr = 2 * kDepth;
        init.cap.max_send_sge = device_send_sge;
        init.cap.max_recv_sge = kSge;
        qp = pd && cq ? ibv_create_qp(pd, &init) : nullptr;
        if (!qp) die("cannot create the raw QP");
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_INIT;
        attr.port_num = 1;
        attr.qp_access_flags =
            IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
        if (ibv_modify_qp(qp, &attr,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
            die("INIT failed");
        src.assign(4096, 0x5a);
        dst.assign(4096, 0);
        in.assign(4096, 0);
        src_mr = ibv_reg_mr(pd, src.data(), src.size(), 0);
        dst_mr =
            ibv_reg_mr(pd, dst.data(), dst.size(),
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
        in_mr = ibv_reg_mr(pd, in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE);
        if (!src_mr || !dst_mr || !in_mr) die("ibv_reg_mr failed");
    }

    Endpoint mine() const {
        Endpoint e{};
        e.qpn = qp->qp_num;
        e.psn = 0x1234;
        e.rkey = dst_mr->rkey;
        e.address = reinterpret_cast<uintptr_t>(dst.data());
        std::memcpy(e.gid, gid.raw, 16);
        return e;
    }

    void connect_to(const Endpoint& other) {
        peer = other;
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_RTR;
        attr.path_mtu = port.active_mtu;
        attr.dest_qp_num = other.qpn;
        attr.rq_psn = other.psn;
        attr.max_dest_rd_atomic = 4;
        attr.min_rnr_timer = 12;
        attr.ah_attr.is_global = 1;
        std::memcpy(attr.ah_attr.grh.dgid.raw, other.gid, 16);
        attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index);
        attr.ah_attr.grh.hop_limit = 1;
        attr.ah_attr.port_num = 1;
        if (ibv_modify_qp(qp, &attr,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
            die("RTR failed");
        // The provider's transport settings (adapters/verbs: retry 6, ACK timeout 16 at most).
        attr.qp_state = IBV_QPS_RTS;
        attr.timeout = 14;
        attr.retry_cnt = 6;
        attr.rnr_retry = 7;
        attr.sq_psn = 0x1234;
        attr.max_rd_atomic = 4;
        if (ibv_modify_qp(qp, &attr,
                          IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                              IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
            die("RTS failed");
    }

    void wait_one() {
        ibv_wc wc;
        int n;
        while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
        }
        if (n < 0 || wc.status != IBV_WC_SUCCESS)
            die(std::string("a raw request failed: ") +
                (n < 0 ? "poll error" : ibv_wc_status_str(wc.status)));
    }
    void post(ibv_wr_opcode opcode, unsigned flags, ibv_sge sge) {
        ibv_send_wr wr{}, *bad = nullptr;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = opcode;
        wr.send_flags = flags;
        if (opcode != IBV_WR_SEND) {
            wr.wr.rdma.remote_addr = peer.address;
            wr.wr.rdma.rkey = peer.rkey;
        }
        if (ibv_post_send(qp, &wr, &bad)) die("ibv_post_send failed");
    }
    void post_receive() {
        ibv_sge sge{reinterpret_cast<uintptr_t>(in.data()), kMessage, in_mr->lkey};
        ibv_recv_wr wr{}, *bad = nullptr;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (ibv_post_recv(qp, &wr, &bad)) die("ibv_post_recv failed");
    }
    void write(unsigned flags) {
        post(IBV_WR_RDMA_WRITE, flags,
             {reinterpret_cast<uintptr_t>(src.data()), kMessage, src_mr->lkey});
    }
    void read() {
        post(IBV_WR_RDMA_READ, IBV_SEND_SIGNALED,
             {reinterpret_cast<uintptr_t>(in.data()), kMessage, in_mr->lkey});
    }
    void send() {
        post(IBV_WR_SEND, IBV_SEND_SIGNALED,
             {reinterpret_cast<uintptr_t>(src.data()), kMessage, src_mr->lkey});
    }
};

// --serve PORT: node B's raw end. Keeps receives posted for A's sends until A hangs up.
int serve(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_port = htons(static_cast<uint16_t>(port));
    if (bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof any) || listen(fd, 4))
        die("cannot listen on the raw port");
    std::fprintf(stderr, "twonode_bench: raw peer listening on port %d\n", port);
    for (;;) {
        int c = accept(fd, nullptr, nullptr);
        if (c < 0) continue;
        uint32_t device_send_sge = 0;
        recv_all(c, &device_send_sge, sizeof device_send_sge);
        Raw raw;
        raw.open(device_send_sge);
        for (ULONG k = 0; k < kDepth; ++k)
            raw.post_receive();
        Endpoint theirs{}, mine = raw.mine();
        send_all(c, &mine, sizeof mine);
        recv_all(c, &theirs, sizeof theirs);
        raw.connect_to(theirs);
        uint8_t ready = 1;
        send_all(c, &ready, 1);
        // Every receive that completes is posted again, until A closes the exchange. The keeper
        // sleeps on the completion channel (B has one vCPU: a spinning thread would slow B's
        // side of every measurement); A's NDK peer on B, the agent, does not spin either.
        std::atomic<bool> done{false};
        std::thread keeper([&] {
            ibv_wc wc[16];
            while (!done) {
                ibv_req_notify_cq(raw.cq, 0);
                int n;
                while ((n = ibv_poll_cq(raw.cq, 16, wc)) > 0)
                    for (int k = 0; k < n; ++k)
                        if (wc[k].status == IBV_WC_SUCCESS && wc[k].opcode == IBV_WC_RECV)
                            raw.post_receive();
                pollfd p{raw.channel->fd, POLLIN, 0};
                if (poll(&p, 1, 100) > 0) {
                    ibv_cq* cq;
                    void* ctx;
                    if (ibv_get_cq_event(raw.channel, &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
                }
            }
        });
        uint8_t bye;
        recv(c, &bye, 1, 0);
        done = true;
        keeper.join();
        close(c);
        ibv_destroy_qp(raw.qp);
        for (auto* m : {raw.src_mr, raw.dst_mr, raw.in_mr})
            ibv_dereg_mr(m);
        ibv_destroy_cq(raw.cq);
        ibv_destroy_comp_channel(raw.channel);
        ibv_dealloc_pd(raw.pd);
        ibv_close_device(raw.context);
    }
}

// ---- NDK side: the verbs provider split across the nodes ----

struct Waiter {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    NTSTATUS status = STATUS_PENDING;
    NDK_CONNECTOR* connector = nullptr;
};
void on_request(void* c, NTSTATUS s) {
    auto* w = static_cast<Waiter*>(c);
    std::lock_guard lock(w->m);
    w->status = s;
    w->done = true;
    w->cv.notify_all();
}
void on_create(void*, NTSTATUS, NDK_OBJECT_HEADER*) {}
void on_cq(void*, NTSTATUS) {}
void on_disconnect(void*) {}
void on_connect_event(void* c, NDK_CONNECTOR* connector) {
    auto* w = static_cast<Waiter*>(c);
    std::lock_guard lock(w->m);
    w->connector = connector;
    w->done = true;
    w->cv.notify_all();
}
NTSTATUS finish(NTSTATUS s, Waiter& w) {
    if (s != STATUS_PENDING) return s;
    std::unique_lock lock(w.m);
    if (!w.cv.wait_for(lock, std::chrono::seconds(60), [&] { return w.done; }))
        die("a request never completed");
    return w.status;
}
void check(NTSTATUS s, const char* what) {
    if (s != STATUS_SUCCESS) {
        char text[128];
        std::snprintf(text, sizeof text, "%s failed: 0x%08x", what, static_cast<unsigned>(s));
        die(text);
    }
}
template <typename T>
const auto& table(T* object) {
    return *object->Dispatch;
}

struct Region {
    LockedBuffer buffer;
    ndkct::platform::MdlChain chain;
    NDK_MR* mr = nullptr;
    UINT32 local = 0, remote = 0;
};

struct Ndk {
    std::unique_ptr<Arena> arena;
    const NDKCT_PROVIDER_ENTRY_POINTS* entry = nullptr;
    NDK_ADAPTER* adapter = nullptr;
    NDK_ADAPTER_INFO info{};
    NDK_PD* pd = nullptr;
    NDK_CQ *cq_a = nullptr, *cq_b = nullptr;
    NDK_QP *a = nullptr, *b = nullptr;
    NDK_LISTENER* listener = nullptr;
    NDK_CONNECTOR *active = nullptr, *passive = nullptr;
    Region src, dst, in;
    // The provider's own objects on A, and B's key of the target: what the timed loops use.
    NDK_QP* qp = nullptr;
    NDK_CQ* cq = nullptr;
    UINT32 dst_key = 0;

    Region region(ULONG flags) {
        Region r;
        r.buffer = arena->allocate(4096);
        r.chain = ndkct::platform::describe(r.buffer, 0, 4096);
        check(table(pd).NdkCreateMr(pd, FALSE, on_create, nullptr, &r.mr), "NdkCreateMr");
        Waiter w;
        check(
            finish(table(r.mr).NdkRegisterMr(r.mr, r.chain.head(), 4096, flags, on_request, &w), w),
            "NdkRegisterMr");
        r.local = table(r.mr).NdkGetLocalTokenFromMr(r.mr);
        r.remote = table(r.mr).NdkGetRemoteTokenFromMr(r.mr);
        return r;
    }

    void open(const ndkct::twonode::PeerAddress& peer) {
        arena = std::make_unique<Arena>(2048);
        entry = &ndkct::twonode::split_entry_points(ndkct::adapters::verbs::entry_points(), "verbs",
                                                    peer);
        NDKCT_OPEN_OPTIONS o{};
        o.Size = sizeof o;
        o.Version = NDKCT_MAKE_VERSION(2, 1);
        char message[256] = {};
        o.ErrorMessage = message;
        o.ErrorMessageSize = sizeof message;
        if (entry->OpenAdapter(&arena->host_memory(), &o, &adapter) != STATUS_SUCCESS)
            die(std::string("cannot open the verbs provider: ") + message);
        ULONG size = sizeof info;
        check(table(adapter).NdkQueryAdapterInfo(adapter, &info, &size), "NdkQueryAdapterInfo");
        check(table(adapter).NdkCreatePd(adapter, on_create, nullptr, &pd), "NdkCreatePd");
        for (NDK_CQ** c : {&cq_a, &cq_b})
            check(table(adapter).NdkCreateCq(adapter, kCqDepth, on_cq, nullptr, nullptr, on_create,
                                             nullptr, c),
                  "NdkCreateCq");
        static int context_a, context_b;
        check(table(pd).NdkCreateQp(pd, cq_a, cq_a, &context_a, kDepth, kDepth, kSge, kSge, 0,
                                    on_create, nullptr, &a),
              "NdkCreateQp");
        check(table(pd).NdkCreateQp(pd, cq_b, cq_b, &context_b, kDepth, kDepth, kSge, kSge, 0,
                                    on_create, nullptr, &b),
              "NdkCreateQp");
        // b is accepted on node B: the connection crosses the link.
        Waiter incoming;
        check(table(adapter).NdkCreateListener(adapter, on_connect_event, &incoming, on_create,
                                               nullptr, &listener),
              "NdkCreateListener");
        sockaddr_in here{};
        here.sin_family = AF_INET;
        here.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        Waiter lw;
        check(finish(table(listener).NdkListen(listener, reinterpret_cast<sockaddr*>(&here),
                                               sizeof here, on_request, &lw),
                     lw),
              "NdkListen");
        sockaddr_storage bound{};
        ULONG bound_length = sizeof bound;
        check(table(listener).NdkGetLocalAddress(listener, reinterpret_cast<sockaddr*>(&bound),
                                                 &bound_length),
              "NdkGetLocalAddress");
        check(table(adapter).NdkCreateConnector(adapter, on_create, nullptr, &active),
              "NdkCreateConnector");
        Waiter cw, aw, ccw;
        NTSTATUS s =
            table(active).NdkConnect(active, a, nullptr, 0, reinterpret_cast<sockaddr*>(&bound),
                                     bound_length, 4, 4, nullptr, 0, on_request, &cw);
        if (s != STATUS_PENDING && s != STATUS_SUCCESS) check(s, "NdkConnect");
        {
            std::unique_lock lock(incoming.m);
            if (!incoming.cv.wait_for(lock, std::chrono::seconds(60),
                                      [&] { return incoming.connector != nullptr; }))
                die("no connect event from node B");
            passive = incoming.connector;
        }
        NTSTATUS accepted = table(passive).NdkAccept(passive, b, 4, 4, nullptr, 0, on_disconnect,
                                                     nullptr, on_request, &aw);
        if (accepted != STATUS_PENDING && accepted != STATUS_SUCCESS) check(accepted, "NdkAccept");
        check(finish(s, cw), "NdkConnect");
        check(finish(table(active).NdkCompleteConnect(active, on_disconnect, nullptr, on_request,
                                                      &ccw),
                     ccw),
              "NdkCompleteConnect");
        check(finish(accepted, aw), "NdkAccept");
        if (!ndkct::twonode::crossed_nodes(adapter)) die("the pair did not cross to node B");
        src = region(0);
        dst = region(NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                     NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        in = region(NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        std::memset(src.buffer.data(), 0x5a, 4096);
        qp = static_cast<NDK_QP*>(ndkct::twonode::part_on_a(a));
        cq = static_cast<NDK_CQ*>(ndkct::twonode::part_on_a(cq_a));
        dst_key = ndkct::twonode::token_on_peer(adapter, dst.remote, true);
        for (ULONG k = 0; k < kDepth / 2; ++k)
            post_receive();
    }

    void close() {
        if (adapter) entry->CloseAdapter(adapter);
        adapter = nullptr;
    }

    // On A, the provider's own objects.
    void wait_one() {
        NDK_RESULT r;
        while (table(cq).NdkGetCqResults(cq, &r, 1) == 0) {
        }
        if (r.Status != STATUS_SUCCESS) {
            char text[64];
            std::snprintf(text, sizeof text, "an NDK request failed: 0x%08x",
                          static_cast<unsigned>(r.Status));
            die(text);
        }
    }
    void write(ULONG flags) {
        NDK_SGE s{src.buffer.data(), kMessage, src.local};
        check(table(qp).NdkWrite(qp, nullptr, &s, 1, reinterpret_cast<uint64_t>(dst.buffer.data()),
                                 dst_key, flags),
              "NdkWrite");
    }
    void read() {
        NDK_SGE s{in.buffer.data(), kMessage, in.local};
        check(table(qp).NdkRead(qp, nullptr, &s, 1, reinterpret_cast<uint64_t>(dst.buffer.data()),
                                dst_key, 0),
              "NdkRead");
    }
    void send() {
        NDK_SGE s{src.buffer.data(), kMessage, src.local};
        check(table(qp).NdkSend(qp, nullptr, &s, 1, 0), "NdkSend");
    }
    // On B, through the split (untimed): the receive a send consumed, posted again.
    void post_receive() {
        NDK_SGE s{in.buffer.data(), kMessage, in.local};
        check(table(b).NdkReceive(b, nullptr, &s, 1), "NdkReceive");
    }
    // Receives consumed by sends are posted again 16 at a time: each is a call to B through the
    // side channel, whose traffic would otherwise sit between every two timed sends.
    int consumed = 0;
    void rebuy() {
        if (++consumed < 16) return;
        NDK_RESULT r[16];
        for (int got = 0; got < consumed;)
            got += static_cast<int>(table(cq_b).NdkGetCqResults(cq_b, r, 16));
        for (; consumed > 0; --consumed)
            post_receive();
    }
};

struct Options {
    int rounds = 10;
    int iterations = 300;
    int batches = 50;
};

}  // namespace

int main(int argc, char** argv) {
    Options o;
    std::string peer_text, raw_peer;
    int serve_port = 0;
    for (int k = 1; k < argc; ++k) {
        std::string arg = argv[k];
        auto value = [&](const char* name) -> std::string {
            if (k + 1 >= argc) die(std::string(name) + " needs a value");
            return argv[++k];
        };
        if (arg == "--quick") {
            o.rounds = 2;
            o.iterations = 40;
            o.batches = 5;
        } else if (arg == "--rounds") {
            o.rounds = std::max(1, std::atoi(value("--rounds").c_str()));
        } else if (arg == "--iterations") {
            o.iterations = std::max(1, std::atoi(value("--iterations").c_str()));
        } else if (arg == "--peer") {
            peer_text = value("--peer");
        } else if (arg == "--raw-peer") {
            raw_peer = value("--raw-peer");
        } else if (arg == "--serve") {
            serve_port = std::atoi(value("--serve").c_str());
        } else {
            die("unknown argument " + arg +
                " (twonode_bench --serve PORT | --peer HOST:PORT --raw-peer HOST:PORT [--quick] "
                "[--rounds N] [--iterations N])");
        }
    }
    if (serve_port) return serve(serve_port);
    if (peer_text.empty() || raw_peer.empty()) die("--peer and --raw-peer are required on node A");
    std::string error;
    auto peer = ndkct::twonode::parse_peer(peer_text, error);
    if (!peer) die("--peer: " + error);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);

    Ndk ndk;
    ndk.open(*peer);
    Raw raw;
    uint32_t device_send_sge = std::max<uint32_t>({1, kSge, ndk.info.MaxReadRequestSge});
    raw.open(device_send_sge);
    int exchange = tcp_connect(raw_peer);
    send_all(exchange, &device_send_sge, sizeof device_send_sge);
    Endpoint theirs{}, mine = raw.mine();
    recv_all(exchange, &theirs, sizeof theirs);
    send_all(exchange, &mine, sizeof mine);
    raw.connect_to(theirs);
    uint8_t ready = 0;
    recv_all(exchange, &ready, 1);
    pin_and_calibrate(o.rounds > 2 ? 1000 : 300);
    std::printf(
        "twonode_bench: RC across the link (node A %s, node B %s), QP depth %lu, %u-byte "
        "messages, %d rounds (NDK and raw alternate, order flipped each round)\n",
        std::getenv("NDKCT_RDMA_ADDR") ? std::getenv("NDKCT_RDMA_ADDR") : "?", peer->host.c_str(),
        static_cast<unsigned long>(kDepth), kMessage, o.rounds);

    std::vector<double> wn, wr, rn, rr, sn, sr;
    std::vector<double> write_ratio, read_ratio, send_ratio, rate_ratio;
    double rate_n_total = 0, rate_r_total = 0;
    auto timed = [&](std::vector<double>& into, const std::function<void()>& op,
                     const std::function<void()>& wait, const std::function<void()>& after) {
        size_t start = into.size();
        for (int k = 0; k < o.iterations; ++k) {
            uint64_t t0 = ticks();
            op();
            wait();
            into.push_back(us_since(t0));
            if (after) after();
        }
        return percentile(std::vector<double>(into.begin() + static_cast<long>(start), into.end()),
                          0.5);
    };
    auto nw = [&] { ndk.wait_one(); };
    auto rw = [&] { raw.wait_one(); };
    for (int k = 0; k < 10; ++k) {  // warm-up
        ndk.write(0);
        nw();
        raw.write(IBV_SEND_SIGNALED);
        rw();
    }
    for (int round = 0; round < o.rounds; ++round) {
        bool ndk_first = round % 2 == 0;
        auto pair = [&](std::vector<double>& n, std::vector<double>& r, std::vector<double>& ratios,
                        const std::function<void()>& op_n, const std::function<void()>& op_r,
                        const std::function<void()>& after_n) {
            double mn, mr;
            if (ndk_first) {
                mn = timed(n, op_n, nw, after_n);
                mr = timed(r, op_r, rw, nullptr);
            } else {
                mr = timed(r, op_r, rw, nullptr);
                mn = timed(n, op_n, nw, after_n);
            }
            ratios.push_back(mn / mr);
        };
        pair(
            wn, wr, write_ratio, [&] { ndk.write(0); }, [&] { raw.write(IBV_SEND_SIGNALED); },
            nullptr);
        pair(
            rn, rr, read_ratio, [&] { ndk.read(); }, [&] { raw.read(); }, nullptr);
        pair(
            sn, sr, send_ratio, [&] { ndk.send(); }, [&] { raw.send(); }, [&] { ndk.rebuy(); });
        auto rate = [&](bool is_ndk) {
            uint64_t t0 = ticks();
            for (int b = 0; b < o.batches; ++b) {
                for (int k = 0; k < kBatch; ++k) {
                    if (is_ndk)
                        ndk.write(k == kBatch - 1 ? 0 : NDK_OP_FLAG_SILENT_SUCCESS);
                    else
                        raw.write(k == kBatch - 1 ? IBV_SEND_SIGNALED : 0);
                }
                if (is_ndk)
                    nw();
                else
                    rw();
            }
            return us_since(t0) / 1e6;
        };
        double tn, tr;
        if (ndk_first) {
            tn = rate(true);
            tr = rate(false);
        } else {
            tr = rate(false);
            tn = rate(true);
        }
        rate_n_total += tn;
        rate_r_total += tr;
        rate_ratio.push_back(tr / tn);
    }
    auto line = [&](const char* name, const std::vector<double>& n, const std::vector<double>& r,
                    const std::vector<double>& ratios) {
        double nm = percentile(n, 0.5), rm = percentile(r, 0.5);
        std::printf(
            "%-5s latency  NDK median %8.1f us p99 %8.1f us | raw median %8.1f us p99 %8.1f "
            "us | ratio %.3f (rounds %.3f..%.3f)\n",
            name, nm, percentile(n, 0.99), rm, percentile(r, 0.99), nm / rm,
            *std::min_element(ratios.begin(), ratios.end()),
            *std::max_element(ratios.begin(), ratios.end()));
    };
    line("Write", wn, wr, write_ratio);
    line("Read", rn, rr, read_ratio);
    line("Send", sn, sr, send_ratio);
    double messages = static_cast<double>(o.rounds) * o.batches * kBatch;
    double all_n = messages / rate_n_total, all_r = messages / rate_r_total;
    std::printf(
        "rate  %u-byte writes, batches of %d (last signaled): NDK %.0f msg/s | raw %.0f "
        "msg/s | ratio %.3f (rounds %.3f..%.3f)\n",
        kMessage, kBatch, all_n, all_r, all_n / all_r,
        *std::min_element(rate_ratio.begin(), rate_ratio.end()),
        *std::max_element(rate_ratio.begin(), rate_ratio.end()));
    uint8_t bye = 0;
    send_all(exchange, &bye, 1);
    close(exchange);
    ndk.close();
    std::printf("ratios across the link (NDK/raw): write %.3f read %.3f send %.3f rate %.3f\n",
                percentile(wn, 0.5) / percentile(wr, 0.5),
                percentile(rn, 0.5) / percentile(rr, 0.5),
                percentile(sn, 0.5) / percentile(sr, 0.5), all_n / all_r);
    return 0;
}
