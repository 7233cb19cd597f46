// Loopback pairs for the verbs provider's benchmark and its allocation test: a connected pair of
// NDK QPs through the provider (its own rdma_cm path on 127.0.0.1) and a raw libibverbs pair on
// the same device with the device queues the provider creates for the same NDK depths. Both do
// the same 64-byte work with the same one-entry spin poll.
#pragma once

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ndkct/adapters/verbs_provider.hpp"
#include "ndkct/platform/arena.hpp"
#include "ndkct/platform/mdl.hpp"
#include "roce_gid.hpp"

namespace ndkct::adapters::verbs::bench {

using ndkct::platform::Arena;
using ndkct::platform::LockedBuffer;

inline constexpr ULONG kDepth = 64;     // initiator and receive depth of every QP
inline constexpr ULONG kSge = 4;        // SGEs per request the QPs are created with
inline constexpr ULONG kCqDepth = 256;  // NDK CQ depth (device CQ: 2 * depth + 64, as the provider)
inline constexpr uint32_t kMessage = 64;  // bytes per message
inline constexpr int kBatch = 32;         // the message-rate batch, last one signaled
inline constexpr int kReceivePool = 32;   // receives kept posted for the send latency

[[noreturn]] inline void die(const std::string& what) {
    std::fprintf(stderr, "verbs_bench: %s\n", what.c_str());
    std::exit(1);
}

// ibv_modify_qp returns an errno value: the message names it and the GID the pair used, so
// a transient failure on a device (seen once in CI: "RTR failed") says what the device refused.
inline std::string modify_failure(const char* state, int rc, const RoceGid& gid) {
    return std::string(state) + " failed: " + std::strerror(rc) + " (" + describe(gid) + ")";
}

// ---------------------------------------------------------------- NDK side

struct Waiter {
    std::mutex m;
    std::condition_variable cv;
    int calls = 0;
    NTSTATUS status = STATUS_PENDING;
    bool wait(std::chrono::milliseconds t = std::chrono::milliseconds(20000)) {
        std::unique_lock l(m);
        return cv.wait_for(l, t, [&] { return calls > 0; });
    }
};
inline void on_request(void* c, NTSTATUS s) {
    if (!c) return;
    auto* w = static_cast<Waiter*>(c);
    std::lock_guard l(w->m);
    ++w->calls;
    w->status = s;
    w->cv.notify_all();
}
inline void on_create(void*, NTSTATUS, NDK_OBJECT_HEADER*) {}
inline void on_cq(void*, NTSTATUS) {}
inline void on_disconnect(void*) {}

struct Incoming {
    std::mutex m;
    std::condition_variable cv;
    NDK_CONNECTOR* connector = nullptr;
};
inline void on_connect_event(void* c, NDK_CONNECTOR* connector) {
    auto* in = static_cast<Incoming*>(c);
    std::lock_guard l(in->m);
    in->connector = connector;
    in->cv.notify_all();
}

template <typename T>
const auto& table(T* object) {
    return *object->Dispatch;
}

inline NTSTATUS finish(NTSTATUS s, Waiter& w) {
    if (s != STATUS_PENDING) return s;
    if (!w.wait()) die("a pending NDK request never completed");
    return w.status;
}

inline void check(NTSTATUS s, const char* what) {
    if (s != STATUS_SUCCESS) {
        char text[160];
        std::snprintf(text, sizeof text, "%s failed: 0x%08x", what, static_cast<unsigned>(s));
        die(text);
    }
}

struct NdkRegion {
    LockedBuffer buffer;
    ndkct::platform::MdlChain chain;
    NDK_MR* mr = nullptr;
    UINT32 local = 0, remote = 0;
    uint64_t address() const { return reinterpret_cast<uint64_t>(buffer.data()); }
};

struct NdkSide {
    std::unique_ptr<Arena> arena;
    NDK_ADAPTER* adapter = nullptr;
    NDK_ADAPTER_INFO info{};
    NDK_PD* pd = nullptr;
    NDK_CQ* cq_a = nullptr;  // QP a's receive and initiator CQ
    NDK_CQ* cq_b = nullptr;  // QP b's
    NDK_QP* a = nullptr;
    NDK_QP* b = nullptr;
    NDK_LISTENER* listener = nullptr;
    NDK_CONNECTOR *active = nullptr, *passive = nullptr;
    Incoming incoming;
    NdkRegion src, dst, in;  // source, remote target (read/write), receive buffer
    // Fast registration: a LAM over `fr_pages` scattered arena pages and a fast-register MR.
    LockedBuffer fr_memory;
    std::vector<unsigned char> lam_storage;
    NDK_LOGICAL_ADDRESS_MAPPING* lam = nullptr;
    NDK_MR* fr = nullptr;
    // NdkRegisterMr + NdkDeregisterMr cycles: an MR and the chains of the fast registration's
    // memory (first 1, 2, ... pages), made on first use.
    NDK_MR* plain = nullptr;
    std::vector<ndkct::platform::MdlChain> plain_chains;

    NdkRegion region(size_t bytes, ULONG flags) {
        NdkRegion r;
        r.buffer = arena->allocate(bytes);
        r.chain = ndkct::platform::describe(r.buffer, 0, bytes);
        check(table(pd).NdkCreateMr(pd, FALSE, on_create, nullptr, &r.mr), "NdkCreateMr");
        Waiter w;
        check(finish(table(r.mr).NdkRegisterMr(r.mr, r.chain.head(), bytes, flags, on_request, &w),
                     w),
              "NdkRegisterMr");
        r.local = table(r.mr).NdkGetLocalTokenFromMr(r.mr);
        r.remote = table(r.mr).NdkGetRemoteTokenFromMr(r.mr);
        return r;
    }

    void open(ULONG fr_pages) {
        arena = std::make_unique<Arena>(2048 + fr_pages);
        NDKCT_OPEN_OPTIONS o{};
        o.Size = sizeof o;
        o.Version = NDKCT_MAKE_VERSION(2, 1);
        char message[256] = {};
        o.ErrorMessage = message;
        o.ErrorMessageSize = sizeof message;
        const char* device = std::getenv("NDKCT_RDMA_DEV");
        if (device && *device) o.DeviceName = device;
        NTSTATUS s =
            ndkct::adapters::verbs::entry_points().OpenAdapter(&arena->host_memory(), &o, &adapter);
        if (s != STATUS_SUCCESS) die(std::string("cannot open the verbs provider: ") + message);
        ULONG size = sizeof info;
        check(table(adapter).NdkQueryAdapterInfo(adapter, &info, &size), "NdkQueryAdapterInfo");
        check(table(adapter).NdkCreatePd(adapter, on_create, nullptr, &pd), "NdkCreatePd");
        for (NDK_CQ** cq : {&cq_a, &cq_b})
            check(table(adapter).NdkCreateCq(adapter, kCqDepth, on_cq, nullptr, nullptr, on_create,
                                             nullptr, cq),
                  "NdkCreateCq");
        static int context_a, context_b;
        check(table(pd).NdkCreateQp(pd, cq_a, cq_a, &context_a, kDepth, kDepth, kSge, kSge, 0,
                                    on_create, nullptr, &a),
              "NdkCreateQp");
        check(table(pd).NdkCreateQp(pd, cq_b, cq_b, &context_b, kDepth, kDepth, kSge, kSge, 0,
                                    on_create, nullptr, &b),
              "NdkCreateQp");
        connect();
        src = region(PAGE_SIZE, 0);
        dst = region(PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                    NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        in = region(PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        std::memset(src.buffer.data(), 0x5a, PAGE_SIZE);
        // The fast registration's pages, mapped by NdkBuildLam.
        fr_memory = arena->allocate(size_t{fr_pages} * PAGE_SIZE);
        auto chain = ndkct::platform::describe(fr_memory, 0, fr_memory.size());
        lam_storage.assign(
            sizeof(NDK_LOGICAL_ADDRESS_MAPPING) + fr_pages * sizeof(NDK_LOGICAL_ADDRESS), 0);
        lam = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam_storage.data());
        ULONG lam_size = static_cast<ULONG>(lam_storage.size()), fbo = 0;
        Waiter w;
        check(finish(table(adapter).NdkBuildLAM(adapter, chain.head(), fr_memory.size(), on_request,
                                                &w, lam, &lam_size, &fbo),
                     w),
              "NdkBuildLAM");
        check(table(pd).NdkCreateMr(pd, TRUE, on_create, nullptr, &fr), "NdkCreateMr(fast)");
        Waiter iw;
        check(
            finish(table(fr).NdkInitializeFastRegisterMr(fr, fr_pages, TRUE, on_request, &iw), iw),
            "NdkInitializeFastRegisterMr");
    }

    void connect() { connect(a, b); }

    // Connects QP x (active side) to QP y (passive) through a new listener and two new
    // connectors (the last pair's are kept in listener, active and passive).
    void connect(NDK_QP* x, NDK_QP* y) {
        {
            std::lock_guard l(incoming.m);
            incoming.connector = nullptr;
        }
        check(table(adapter).NdkCreateListener(adapter, on_connect_event, &incoming, on_create,
                                               nullptr, &listener),
              "NdkCreateListener");
        sockaddr_in any{};
        any.sin_family = AF_INET;
        any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        Waiter lw;
        check(finish(table(listener).NdkListen(listener, reinterpret_cast<sockaddr*>(&any),
                                               sizeof any, on_request, &lw),
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
            table(active).NdkConnect(active, x, nullptr, 0, reinterpret_cast<sockaddr*>(&bound),
                                     bound_length, 4, 4, nullptr, 0, on_request, &cw);
        if (s != STATUS_PENDING && s != STATUS_SUCCESS) check(s, "NdkConnect");
        {
            std::unique_lock l(incoming.m);
            if (!incoming.cv.wait_for(l, std::chrono::seconds(20),
                                      [&] { return incoming.connector != nullptr; }))
                die("no connect event");
            passive = incoming.connector;
        }
        NTSTATUS accepted = table(passive).NdkAccept(passive, y, 4, 4, nullptr, 0, on_disconnect,
                                                     nullptr, on_request, &aw);
        if (accepted != STATUS_PENDING && accepted != STATUS_SUCCESS) check(accepted, "NdkAccept");
        check(finish(s, cw), "NdkConnect");
        check(finish(table(active).NdkCompleteConnect(active, on_disconnect, nullptr, on_request,
                                                      &ccw),
                     ccw),
              "NdkCompleteConnect");
        check(finish(accepted, aw), "NdkAccept");
    }

    void close() {
        if (adapter) ndkct::adapters::verbs::entry_points().CloseAdapter(adapter);
        adapter = nullptr;
    }

    // Spins on a one-entry poll until one entry arrives; fails on an error status.
    static void wait_one(NDK_CQ* cq) {
        NDK_RESULT r;
        while (table(cq).NdkGetCqResults(cq, &r, 1) == 0) {
        }
        if (r.Status != STATUS_SUCCESS) {
            char text[96];
            std::snprintf(text, sizeof text, "an NDK request failed: 0x%08x",
                          static_cast<unsigned>(r.Status));
            die(text);
        }
    }
    void post_receive() {
        NDK_SGE s{in.buffer.data(), kMessage, in.local};
        check(table(b).NdkReceive(b, nullptr, &s, 1), "NdkReceive");
    }
    void write(ULONG flags) {
        NDK_SGE s{src.buffer.data(), kMessage, src.local};
        check(table(a).NdkWrite(a, nullptr, &s, 1, dst.address(), dst.remote, flags), "NdkWrite");
    }
    void read() {
        NDK_SGE s{in.buffer.data(), kMessage, in.local};
        check(table(a).NdkRead(a, nullptr, &s, 1, dst.address(), dst.remote, 0), "NdkRead");
    }
    void send() {
        NDK_SGE s{src.buffer.data(), kMessage, src.local};
        check(table(a).NdkSend(a, nullptr, &s, 1, 0), "NdkSend");
    }
    // NdkFastRegister of the first `pages` pages of the LAM (all of them when 0), NdkInvalidate,
    // and the invalidation's completion.
    // One fast-register MR per size, as a consumer keeps one per buffer (the provider's
    // registration cache is per MR: sizes taking turns on one MR would miss at every turn).
    std::map<ULONG, NDK_MR*> fr_by_size;
    NDK_MR* fast_mr(ULONG pages) {
        if (pages == lam->AdapterPageCount) return fr;
        NDK_MR*& mr = fr_by_size[pages];
        if (!mr) {
            check(table(pd).NdkCreateMr(pd, TRUE, on_create, nullptr, &mr), "NdkCreateMr(fast)");
            Waiter iw;
            check(
                finish(table(mr).NdkInitializeFastRegisterMr(mr, pages, TRUE, on_request, &iw), iw),
                "NdkInitializeFastRegisterMr");
        }
        return mr;
    }
    void fast_register_cycle(ULONG pages = 0) {
        if (pages == 0 || pages > lam->AdapterPageCount) pages = lam->AdapterPageCount;
        NDK_MR* mr = fast_mr(pages);
        check(table(a).NdkFastRegister(
                  a, nullptr, mr, pages, lam->AdapterPageArray, 0, size_t{pages} * PAGE_SIZE,
                  fr_memory.data(),
                  NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ |
                      NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS),
              "NdkFastRegister");
        check(table(a).NdkInvalidate(a, nullptr, &mr->Header, 0), "NdkInvalidate");
        wait_one(cq_a);
    }
    // NdkRegisterMr + NdkDeregisterMr of the first `pages` pages of the same memory, with the
    // rights of the fast registration (both finish inline on this provider).
    void register_cycle(ULONG pages) {
        if (!plain) {
            check(table(pd).NdkCreateMr(pd, FALSE, on_create, nullptr, &plain), "NdkCreateMr");
            size_t most = fr_memory.size() / PAGE_SIZE;
            for (size_t n = 1; n <= most; ++n)
                plain_chains.push_back(ndkct::platform::describe(fr_memory, 0, n * PAGE_SIZE));
        }
        if (pages == 0 || pages > plain_chains.size()) die("register_cycle: bad page count");
        Waiter w;
        check(finish(table(plain).NdkRegisterMr(
                         plain, plain_chains[pages - 1].head(), size_t{pages} * PAGE_SIZE,
                         NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                             NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                         on_request, &w),
                     w),
              "NdkRegisterMr");
        Waiter d;
        check(finish(table(plain).NdkDeregisterMr(plain, on_request, &d), d), "NdkDeregisterMr");
    }
};

// ---------------------------------------------------------------- raw side

struct RawSide {
    ibv_context* context = nullptr;
    ibv_pd* pd = nullptr;
    ibv_cq* cq[2] = {};
    ibv_qp* qp[2] = {};
    std::vector<unsigned char> src, dst, in, fr;
    ibv_mr *src_mr = nullptr, *dst_mr = nullptr, *in_mr = nullptr;

    void open(const char* device_name, const NDK_ADAPTER_INFO& info, size_t fr_bytes) {
        int n = 0;
        ibv_device** list = ibv_get_device_list(&n);
        if (!list || n == 0) die("no RDMA device");
        ibv_device* device = list[0];
        for (int k = 0; k < n && device_name; ++k)
            if (std::strcmp(ibv_get_device_name(list[k]), device_name) == 0) device = list[k];
        context = ibv_open_device(device);
        ibv_free_device_list(list);
        if (!context) die("ibv_open_device failed");
        ibv_port_attr port{};
        if (ibv_query_port(context, 1, &port)) die("ibv_query_port failed");
        // An IPv4-mapped RoCE GID, as rdma_cm picks for the provider's connection (roce_gid.hpp).
        RoceGid gid = find_ipv4_gid(context, port.gid_tbl_len);
        if (gid.index < 0) die("no IPv4 RoCE GID on port 1");
        pd = ibv_alloc_pd(context);
        if (!pd) die("ibv_alloc_pd failed");
        // The queues the provider creates for the same NDK depths (see create_qp, create_cq).
        for (auto& c : cq) {
            c = ibv_create_cq(context, static_cast<int>(2 * kCqDepth + 64), nullptr, nullptr, 0);
            if (!c) die("ibv_create_cq failed");
        }
        uint32_t device_send_sge = std::max<uint32_t>({1, kSge, info.MaxReadRequestSge});
        for (int k = 0; k < 2; ++k) {
            ibv_qp_init_attr init{};
            init.send_cq = init.recv_cq = cq[k];
            init.qp_type = IBV_QPT_RC;
            init.cap.max_send_wr = init.cap.max_recv_wr = 2 * kDepth;
            init.cap.max_send_sge = device_send_sge;
            init.cap.max_recv_sge = kSge;
            qp[k] = ibv_create_qp(pd, &init);
            if (!qp[k]) die("ibv_create_qp failed");
            ibv_qp_attr attr{};
            attr.qp_state = IBV_QPS_INIT;
            attr.port_num = 1;
            attr.qp_access_flags =
                IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
            if (int rc = ibv_modify_qp(
                    qp[k], &attr,
                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
                die(modify_failure("INIT", rc, gid));
        }
        for (int k = 0; k < 2; ++k) {
            ibv_qp_attr attr{};
            attr.qp_state = IBV_QPS_RTR;
            attr.path_mtu = port.active_mtu;
            attr.dest_qp_num = qp[1 - k]->qp_num;
            attr.max_dest_rd_atomic = 4;
            attr.min_rnr_timer = 12;
            if (int rc =
                    modify_to_rtr(qp[k], attr,
                                  IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                                  context, port.gid_tbl_len, gid))
                die(modify_failure("RTR", rc, gid));
            attr.qp_state = IBV_QPS_RTS;
            attr.timeout = 14;
            attr.retry_cnt = 7;
            attr.rnr_retry = 7;
            attr.max_rd_atomic = 4;
            if (int rc =
                    ibv_modify_qp(qp[k], &attr,
                                  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
                die(modify_failure("RTS", rc, gid));
        }
        src.assign(PAGE_SIZE, 0x5a);
        dst.assign(PAGE_SIZE, 0);
        in.assign(PAGE_SIZE, 0);
        fr.assign(fr_bytes, 0);
        src_mr = ibv_reg_mr(pd, src.data(), src.size(), 0);
        dst_mr =
            ibv_reg_mr(pd, dst.data(), dst.size(),
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
        in_mr = ibv_reg_mr(pd, in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE);
        if (!src_mr || !dst_mr || !in_mr) die("ibv_reg_mr failed");
    }

    void close() {
        for (auto* q : qp)
            if (q) ibv_destroy_qp(q);
        if (bind_mw) ibv_dealloc_mw(bind_mw);
        for (auto* m : {src_mr, dst_mr, in_mr, bind_mr})
            if (m) ibv_dereg_mr(m);
        for (auto* c : cq)
            if (c) ibv_destroy_cq(c);
        if (pd) ibv_dealloc_pd(pd);
        if (context) ibv_close_device(context);
        context = nullptr;
    }

    static void wait_one(ibv_cq* c) {
        ibv_wc wc;
        int n;
        while ((n = ibv_poll_cq(c, 1, &wc)) == 0) {
        }
        if (n < 0 || wc.status != IBV_WC_SUCCESS) {
            char text[96];
            std::snprintf(text, sizeof text, "a raw request failed: %s",
                          n < 0 ? "poll error" : ibv_wc_status_str(wc.status));
            die(text);
        }
    }
    void post(ibv_wr_opcode opcode, unsigned flags, ibv_sge sge) {
        ibv_send_wr wr{}, *bad = nullptr;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = opcode;
        wr.send_flags = flags;
        if (opcode != IBV_WR_SEND) {
            wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst.data());
            wr.wr.rdma.rkey = dst_mr->rkey;
        }
        if (ibv_post_send(qp[0], &wr, &bad)) die("ibv_post_send failed");
    }
    void post_receive() {
        ibv_sge sge{reinterpret_cast<uintptr_t>(in.data()), kMessage, in_mr->lkey};
        ibv_recv_wr wr{}, *bad = nullptr;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        if (ibv_post_recv(qp[1], &wr, &bad)) die("ibv_post_recv failed");
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
    // The device's floor for a cached fast-registration cycle: a type 1 window bound over the
    // first `pages` pages of a region registered once (unsignaled), then bound to nothing with a
    // new key (signaled), and that completion: the two local requests a cycle of the provider's
    // registration cache posts, without any of the provider's work.
    ibv_mr* bind_mr = nullptr;
    ibv_mw* bind_mw = nullptr;
    void bind_cycle(size_t pages) {
        if (!bind_mr) {
            bind_mr =
                ibv_reg_mr(pd, fr.data(), fr.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
            bind_mw = bind_mr ? ibv_alloc_mw(pd, IBV_MW_TYPE_1) : nullptr;
            if (!bind_mw) die("no type 1 window for the bind cycle");
        }
        size_t bytes = std::min(fr.size(), pages * PAGE_SIZE);
        for (int k = 0; k < 2; ++k) {
            ibv_send_wr wr{}, *bad = nullptr;
            wr.opcode = IBV_WR_BIND_MW;
            wr.send_flags = k == 1 ? IBV_SEND_SIGNALED : 0;
            wr.bind_mw.mw = bind_mw;
            wr.bind_mw.rkey = ibv_inc_rkey(bind_mw->rkey);
            wr.bind_mw.bind_info.mr = bind_mr;
            wr.bind_mw.bind_info.addr = reinterpret_cast<uintptr_t>(fr.data());
            wr.bind_mw.bind_info.length = k == 0 ? bytes : 0;
            wr.bind_mw.bind_info.mw_access_flags =
                k == 0 ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE : 0;
            if (ibv_post_send(qp[0], &wr, &bad)) die("bind post failed");
            bind_mw->rkey = wr.bind_mw.rkey;
        }
        wait_one(cq[0]);
    }
    // ibv_reg_mr_iova + ibv_dereg_mr of the first `pages` pages (all of them when 0).
    void register_cycle(size_t pages = 0) {
        size_t bytes = pages == 0 ? fr.size() : std::min(fr.size(), pages * PAGE_SIZE);
        ibv_mr* mr = ibv_reg_mr_iova(
            pd, fr.data(), bytes, reinterpret_cast<uintptr_t>(fr.data()),
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
        if (!mr) die("ibv_reg_mr_iova failed");
        if (ibv_dereg_mr(mr)) die("ibv_dereg_mr failed");
    }
};

}  // namespace ndkct::adapters::verbs::bench
