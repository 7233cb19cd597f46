// The verbs provider's internals: NDKPI objects on libibverbs and librdmacm.
//
// Layout of every object: the NDK object (Header, Dispatch) first, so the consumer's pointer is
// ours too (GEN-LAYOUT-01), then `Life` (lifetime bookkeeping shared by every kind), then the
// kind's own state. There are no virtual functions: a vtable pointer would come before the NDK
// object.
//
// Threads per adapter:
//   - the event thread: poll()s the rdma_cm event channel, the completion channel shared by the
//     adapter's CQs and the device's async-event fd; it never calls the consumer;
//   - the worker: the only thread that calls the consumer back (request, create and close
//     completions, CQ and SRQ notifications, connect and disconnect events), one callback at a
//     time, with no lock held (CQ-NOT-03, GEN-CB-01).
// Posting (NdkSend ... NdkSrqReceive) and polling (NdkGetCqResults[Ex]) take no lock and allocate
// nothing (WR-08); everything else may take the adapter mutex.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>

#include "ndkct/provider.h"

namespace ndkct::adapters::verbs {

struct Adapter;
struct Pd;
struct Cq;
struct Mr;
struct Mw;
struct Qp;
struct Srq;
struct Connector;
struct Listener;
struct SharedEndpoint;

// The NDK object types we hand out, for Life::kind.
enum class Kind : uint8_t { pd, cq, mr, mw, qp, srq, connector, listener, shared_endpoint };

// ---------------------------------------------------------------- lifetime (LIFE-*, CLOSE-*)

// Every object's bookkeeping; the fields below `adapter`/`kind` are guarded by Adapter::mutex.
struct Life {
    Adapter* adapter = nullptr;
    Kind kind = Kind::pd;
    // Open objects that must close first: children and successors (CLOSE-02, LIFE-TREE-*).
    int successors = 0;
    // Callbacks queued or running for the object, and its pending requests (CLOSE-03, CLOSE-07).
    int busy = 0;
    bool closing = false;
    bool close_pended = false;  // the close returned STATUS_PENDING: NdkCloseCompletion is owed
    NDK_FN_CLOSE_COMPLETION* close_completion = nullptr;
    void* close_context = nullptr;
    // Antecedents whose `successors` this object holds (parent first); at most 4 static ones,
    // plus dynamic ones (MW -> MR through NdkBind, connector -> QP through connect/accept).
    Life* antecedents[6] = {};
    // Every open object of the adapter, for the forced cleanup of NdkctCloseAdapter.
    Life* prev = nullptr;
    Life* next = nullptr;
};

template <typename Ndk>
struct Object {
    Ndk ndk;  // first: the consumer's NDK pointer is this object (GEN-LAYOUT-01)
    Life life;
};

template <typename T>
T* self(const void* ndk_object) {
    return const_cast<T*>(static_cast<const T*>(ndk_object));
}
inline Life* life_of(const void* ndk_object) {
    return &self<Object<NDK_PD>>(ndk_object)->life;  // `life` follows the 48-byte NDK object
}

// ---------------------------------------------------------------- the worker

// Runs consumer callbacks, one at a time, in the order they were queued.
class Worker {
  public:
    void start();
    void stop();  // runs what is queued, then joins
    void post(std::function<void()> task);
    void drain();  // returns when everything queued so far has run
    bool on_worker_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

  private:
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::deque<std::function<void()>> tasks_;
    bool running_ = false;
    bool stop_ = false;
    std::thread thread_;
};

// ---------------------------------------------------------------- memory

// One registration of arena pages with the device: a virtually contiguous alias of the pages
// (mmap of the arena memfd page run by page run; the NDK virtual address is only a label, never
// dereferenced: RMR-VA-03, LAM-VA-01) registered at the NDK address with ibv_reg_mr_iova.
struct Registration {
    ibv_mr* mr = nullptr;
    void* alias =
        nullptr;  // page-aligned start of the alias mapping, when the registration owns it
    size_t alias_bytes = 0;
    uint64_t iova = 0;  // the region's NDK virtual address
    uint64_t length = 0;
    // A cached fast registration (Mr::parked): what it was made of, its key in the cache.
    std::vector<PFN_NUMBER> pfns;
    uint32_t fbo = 0;
    int access = 0;
    bool same(const PFN_NUMBER* p, size_t count, uint32_t offset, uint64_t bytes, uint64_t va,
              int rights) const {
        return fbo == offset && length == bytes && iova == va && access == rights &&
               pfns.size() == count && std::equal(p, p + count, pfns.begin());
    }
    ~Registration();
};

// Maps the pages contiguously, registers [alias + fbo, +length) at iova. nullptr + errno on
// failure.
Registration* register_pages(Adapter* a, ibv_pd* pd, const PFN_NUMBER* pfns, size_t count,
                             uint32_t fbo, uint64_t length, uint64_t iova, int access);

// The alias of a fast-register MR: a range reserved once for AdapterPageCount pages
// (NdkInitializeFastRegisterMr) into which each NdkFastRegister maps its pages with MAP_FIXED,
// and not at all when they are the pages it holds already. Kept until the MR closes: no mmap and
// munmap per fast registration (a munmap costs a TLB shootdown). A registration keeps its
// physical pages pinned, so a retired one still reaches its own pages after a later
// NdkFastRegister has remapped the range.
struct FastAlias {
    void* base = nullptr;
    size_t pages = 0;                // reserved
    std::vector<PFN_NUMBER> mapped;  // what the range holds now, page by page
    bool reserve(size_t count);      // errno on failure
    bool map(int memfd, const PFN_NUMBER* pfns, size_t count);  // errno on failure
    ~FastAlias();
};

// Registers [alias + fbo, + length) of an alias mapped already (a FastAlias); the registration
// does not own the mapping.
Registration* register_alias(ibv_pd* pd, void* alias, uint32_t fbo, uint64_t length, uint64_t iova,
                             int access);

struct Pd : Object<NDK_PD> {
    ibv_pd* pd = nullptr;
    // The whole arena registered once in this PD (lazily, at the first
    // NdkGetPrivilegedMemoryRegionToken): its lkey is the privileged token (PTOK-01); it never
    // grants remote access (PTOK-02).
    std::once_flag arena_once;
    ibv_mr* arena_mr = nullptr;
    // A type 1 window bound again and again to nothing (length 0, the same key): that bind is
    // the completion marker of work done outside the device (post_marker in queues.cpp). Local,
    // so it never depends on the peer (WR-SILENT-01). Null where the device has no windows.
    ibv_mw* marker_window = nullptr;
    ibv_mr* marker_region = nullptr;  // what the bind names (rxe's library reads its lkey)
    std::vector<Mw*> windows;  // guarded by Adapter::mutex: for unbinding before a QP is destroyed
    // Fast-register MRs (guarded by Adapter::mutex): for rolling back flushed fast
    // registrations, remote invalidation of windowed ones (SAI-01) and unbinding their windows
    // before a QP is destroyed.
    std::vector<Mr*> fast_mrs;
};

struct Mr : Object<NDK_MR> {
    Pd* pd = nullptr;
    bool fast_register = false;  // CMR-01: fixed for the MR's life
    enum class Phase : uint8_t { created, registered, initialized, fast_registered, invalidated };
    std::atomic<Phase> phase{Phase::created};
    uint32_t flags = 0;          // NdkRegisterMr flags (for BND-06)
    uint32_t max_pages = 0;      // NdkInitializeFastRegisterMr AdapterPageCount
    bool remote_access = false;  // NdkInitializeFastRegisterMr RemoteAccess
    uint32_t fr_flags = 0;       // the last NdkFastRegister's flags
    FastAlias alias;             // fast-register MRs: where the LAM's pages are mapped
    // The registration in force. A fast-register MR's previous registration is retired by
    // NdkInvalidate and deregistered when that request's completion is reaped, so that requests
    // posted before the invalidation still find it (in order with the QP's other requests).
    std::atomic<Registration*> current{nullptr};
    // A fast registration whose request was flushed after a later NdkInvalidate had retired it:
    // that invalidation, flushed too, must not bring it back (roll_back_invalidate). Compared,
    // never dereferenced. Guarded by Adapter::mutex.
    Registration* flushed_registration = nullptr;
    std::atomic<uint32_t> lkey{0}, rkey{0};
    int bound_windows = 0;  // guarded by Adapter::mutex
    // With NDKCT_VERBS_FR_WINDOWS=1 (Adapter::fr_windows), a fast registration with remote rights
    // is exposed through this window, bound over the whole registration by the NdkFastRegister
    // request itself (IBV_WR_BIND_MW): the remote token is the window's key, which a peer's
    // IBV_WR_SEND_WITH_INV can invalidate (SAI-01; an ibv_reg_mr region cannot be invalidated
    // remotely). The registration itself has local rights only.
    ibv_mw* fr_window = nullptr;
    std::atomic<bool> fr_window_bound{false};
    std::atomic<Qp*> fr_window_qp{nullptr};  // the QP it is bound through (type 2B: QP-bound)
    // The fast-registration cache (Adapter::fr_cache, README "Fast registration"): the local
    // token is a provider token (Adapter::fr_tokens slot `token_slot`, generation `token_gen`)
    // that every post translates into the registration's lkey while it is in force; the remote
    // token is the key of `cache_window`, a type 1 window (PD-wide) bound over the registration
    // by the NdkFastRegister request and bound to nothing, with a new key, by NdkInvalidate.
    // The registration itself has local rights and MW_BIND only, and survives the invalidation
    // as `parked`, reused by the next NdkFastRegister of the same pages, offset, length, address
    // and local rights (guarded by Adapter::mutex).
    static constexpr uint32_t kNoTokenSlot = ~0u;
    uint32_t token_slot = kNoTokenSlot;
    uint8_t token_gen = 0;
    ibv_mw* cache_window = nullptr;
    Registration* parked = nullptr;
    bool cached() const { return token_slot != kNoTokenSlot; }
};

struct Mw : Object<NDK_MW> {
    Pd* pd = nullptr;
    ibv_mw* mw = nullptr;
    // Type 2 windows keep the key the library does not update after a bind (rxe-notes): the
    // key of the last bind, which NdkGetRemoteTokenFromMw returns once NdkBind returned (MW-02).
    std::atomic<uint32_t> rkey{0};
    std::atomic<bool> bound{false};
    // Bound in NDK terms, but its device window was reallocated (its MR deregistered or its QP
    // destroyed): it reaches nothing (AMB-31) and an NdkInvalidate of it simply succeeds.
    std::atomic<bool> orphaned{false};
    std::atomic<Qp*> bound_qp{nullptr};  // type 2: the QP the window is bound through
    Mr* bound_mr = nullptr;              // guarded by Adapter::mutex: antecedent (LIFE-TREE-04)
    // Binds to bound_mr not rolled back (guarded by Adapter::mutex): the MR stops being the
    // window's antecedent only when every bind that made it one was flushed.
    int bound_mr_binds = 0;
    // NdkBind calls so far: a bind's rollback applies only while no later bind happened (its
    // key cannot tell: the window may have been reallocated, with a new key, meanwhile).
    std::atomic<uint32_t> binds{0};
};

// ---------------------------------------------------------------- queues

// What a posted work request needs when its completion is reaped.
struct Slot {
    struct Rings* rings = nullptr;
    void* request_context = nullptr;
    std::atomic<Registration*> retire{
        nullptr};  // deregister when reaped (NdkInvalidate of an FR MR)
    NTSTATUS override_status = STATUS_SUCCESS;  // our own verdict, replacing a successful status
    uint16_t type = 0;                          // NDK_OPERATION_TYPE
    uint8_t silent = 0;                         // no entry when it succeeds (SILENT_SUCCESS)
    uint8_t receive = 0;
    uint8_t internal = 0;  // ours alone: never reported
    uint8_t refused = 0;   // a held (DEFER) request the device refused: completes in error
    uint32_t index = 0;
    std::atomic<uint8_t> done{0};  // SRQ slots: reaped
    // NdkFastRegister: the MR and the registration it made at the call, rolled back when the
    // request completes in error (flushed before it ran): the MR is invalidated again.
    Mr* rollback_mr = nullptr;
    Registration* rollback_registration = nullptr;
    // NdkBind: the window it bound at the call, unbound again when the bind completes in error
    // (flushed before it ran, as after NdkFlush: the MR is no antecedent of the window then).
    struct Mw* rollback_mw = nullptr;
    uint32_t rollback_bind = 0;              // that bind's number (Mw::binds)
    struct Mr* rollback_bound_mr = nullptr;  // the MR that bind bound the window to
    // NdkInvalidate of a fast-registered MR: the MR whose registration `retire` holds, given
    // back when the request completes in error (flushed before it ran: it invalidated nothing).
    struct Mr* restore_mr = nullptr;
    // A cached MR's NdkFastRegister or NdkInvalidate (Mr::cached): the registration it named
    // (rollback_registration) and the window key before its bind, given back on a flush.
    uint8_t cached = 0;
    uint32_t rollback_window_key = 0;
};

// The slot rings of a QP (or an SRQ). Outlives the QP until its CQs hold no more of its entries
// (a destroyed QP's completions may still sit in a CQ and must be dropped, not dereferenced).
struct Rings {
    Qp* qp = nullptr;
    Srq* srq = nullptr;  // an SRQ's receive ring (its completions name their QP by qp_num)
    void* qp_context = nullptr;
    std::atomic<bool> dead{false};
    std::atomic<int> refs{1};  // one per CQ graveyard it sits in after the QP is destroyed
    // Initiator ring: posted by the (serialized) poster, reaped by the initiator CQ's poller.
    Slot* send = nullptr;
    uint32_t send_size = 0;
    std::atomic<uint32_t> send_head{0};  // next slot to reap
    uint32_t send_tail = 0;              // next slot to post (poster only)
    // Receive ring (QP without SRQ), same discipline with the receive CQ's poller.
    Slot* recv = nullptr;
    uint32_t recv_size = 0;
    std::atomic<uint32_t> recv_head{0};
    uint32_t recv_tail = 0;
    ~Rings();
};

struct Cq : Object<NDK_CQ> {
    ibv_cq* cq = nullptr;
    uint32_t depth = 0;  // the NDK depth
    NDK_FN_CQ_NOTIFICATION_CALLBACK* notify = nullptr;
    void* notify_context = nullptr;
    // The outstanding arm: -1 none, else NDK_CQ_NOTIFY_* (CQ-NOT-04 combines to the strongest).
    std::atomic<int> armed{-1};
    std::atomic<bool> overrun{false};  // IBV_EVENT_CQ_ERR seen (CQ-STATUS-02)
    std::atomic<bool> overrun_reported{false};
    // Completions taken from the device by NdkArmCq to learn whether the CQ holds entries
    // (CQ-NOT-02); GetCqResults hands them out first. Touched only by the serialized
    // GetCqResults / GetCqResultsEx / ArmCq calls (CQ-SER-01).
    static constexpr unsigned kCarry = 32;
    ibv_wc carry[kCarry];
    unsigned carry_at = 0, carry_count = 0;
    // Rings of destroyed QPs whose entries may still be in this CQ.
    // A ring buried before poll call number k can go once call k has seen the CQ empty.
    struct Buried {
        Rings* rings;
        uint64_t buried_at;
    };
    std::mutex graveyard_mutex;
    std::vector<Buried> graveyard;
    std::atomic<bool> graveyard_nonempty{false};
    std::atomic<uint64_t> poll_calls{0};
};

struct Srq : Object<NDK_SRQ> {
    Pd* pd = nullptr;
    ibv_srq* srq = nullptr;
    uint32_t depth = 0, max_sge = 0;
    NDK_FN_SRQ_NOTIFICATION_CALLBACK* notify = nullptr;
    void* notify_context = nullptr;
    uint32_t threshold = 0;
    std::atomic<bool> notify_armed{false};
    // Receive slots, reaped out of order by the pollers of every attached QP's receive CQ: each
    // reaped slot is marked done and the poster sweeps the head forward.
    Rings* rings = nullptr;
    std::atomic<uint32_t> reaped{0};  // receives completed (for the threshold check, SRQ-11)
    // QPs attached to the SRQ, by qp_num (copy on write; old tables freed at close).
    struct Attached {
        std::vector<std::pair<uint32_t, Qp*>> qps;  // immutable once published
    };
    std::atomic<Attached*> attached{nullptr};
    std::vector<Attached*> retired_tables;  // guarded by Adapter::mutex
};

// QP connection state, read without a lock on the post path (CQP-STATE-01).
enum class Conn : uint8_t { idle, connecting, connected, disconnected };

struct Qp : Object<NDK_QP> {
    Pd* pd = nullptr;
    Cq* receive_cq = nullptr;
    Cq* initiator_cq = nullptr;
    Srq* srq = nullptr;
    void* context = nullptr;
    ibv_qp* qp = nullptr;
    std::atomic<Conn> conn{Conn::idle};
    // NdkFlush left the device QP in error. Receives posted then are refused inline
    // (MODEL-FLS-01): rxe does not flush a receive posted from user space to a QP already in
    // error, and a QP flushed before its connection is reset when it connects, which would drop
    // them without an entry (WR-10). Cleared by that reset.
    std::atomic<bool> flushed{false};
    // The limits given at creation (SGE-04, SGE-08, SGE-10); the device QP may allow more.
    uint32_t max_send_sge = 0, max_recv_sge = 0, max_read_sge = 0, inline_size = 0;
    uint32_t device_send_sge = 0;
    uint32_t initiator_depth = 0, receive_depth = 0;
    Rings* rings = nullptr;
    // Unsignaled (SILENT_SUCCESS) runs are cut by a signaled request every `signal_every` posts,
    // whose entry is hidden when it succeeds, so that the send queue never fills with
    // unreaped unsignaled work.
    uint32_t unsignaled_run = 0, signal_every = 1;
    // NDK_OP_FLAG_DEFER: requests held back and handed to the device with the next request
    // without DEFER, or before an inline failure (DEFER-04, DEFER-07).
    static constexpr unsigned kMaxDefer = 16;
    ibv_send_wr* defer_wr = nullptr;  // kMaxDefer entries
    ibv_sge* defer_sge = nullptr;     // kMaxDefer * max_send_sge entries
    unsigned defer_count = 0;
    Connector* connector = nullptr;  // guarded by Adapter::mutex
    uint32_t peer_qp_num = 0;        // the connected peer's QP number (from RTR)
};

// ---------------------------------------------------------------- connections

struct Connector : Object<NDK_CONNECTOR> {
    rdma_cm_id* id = nullptr;
    std::vector<rdma_cm_id*> stale_ids;  // ids of failed attempts, destroyed off the event thread
    enum class Phase : uint8_t {
        idle,                        // created, no request
        resolving,                   // NdkConnect: address and route
        connecting,                  // REQ sent
        connected_pending_complete,  // REP received: NdkGetConnectionData, NdkCompleteConnect
        incoming,                    // passive: from a connect event, before NdkAccept / NdkReject
        accepting,                   // passive: REP sent, waiting for RTU
        established,
        disconnecting,  // our NdkDisconnect sent a DREQ
        disconnected,
        failed,
    };
    Phase phase = Phase::idle;
    bool passive = false;
    Qp* qp = nullptr;
    Listener* listener = nullptr;
    SharedEndpoint* endpoint = nullptr;
    // Read limits: what this side asked for and what the peer offered (CONN-RL-01/02).
    uint32_t ird = 0, ord = 0, peer_ird = 0, peer_ord = 0;
    // The consumer named a loopback address (127.0.0.0/8, ::1) of this family: addresses read
    // back are shown in that form.
    int alias_family = 0;
    std::vector<uint8_t> private_data;       // what this side sends
    std::vector<uint8_t> peer_private_data;  // what the peer sent (NdkGetConnectionData)
    bool have_connection_data = false;
    // The pending request (connect, accept or disconnect) and its callback.
    enum class Pending : uint8_t { none, connect, accept, disconnect };
    Pending pending = Pending::none;
    NDK_FN_REQUEST_COMPLETION* completion = nullptr;
    void* completion_context = nullptr;
    NDK_FN_DISCONNECT_EVENT_CALLBACK* disconnect_event = nullptr;
    NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* disconnect_event_ex = nullptr;
    void* disconnect_context = nullptr;
    bool peer_disconnected = false;
    bool disconnect_delivered = false;
};

struct Listener : Object<NDK_LISTENER> {
    rdma_cm_id* id = nullptr;
    NDK_FN_CONNECT_EVENT_CALLBACK* connect_event = nullptr;
    void* connect_event_context = nullptr;
    bool listening = false;
    bool paused = false;
    int alias_family =
        0;  // as Connector::alias_family  // NdkControlConnectEvents (CONN-CTL-01/02)
};

struct SharedEndpoint : Object<NDK_SHARED_ENDPOINT> {
    rdma_cm_id* id = nullptr;    // holds the address (REUSEADDR)
    sockaddr_storage address{};  // what the device bound
    int alias_family = 0;        // as Connector::alias_family
};

// ---------------------------------------------------------------- the adapter

// Device facts probed once per device and process (creating queues at the limits is slow).
struct Probe {
    uint32_t max_inline = 0;
    bool cq_resize = false;
    uint32_t max_queue_depth = 0;
};

struct Adapter {
    NDK_ADAPTER ndk;  // first: the consumer's NDK_ADAPTER* is this Adapter
    NDK_VERSION version{};
    NDKCT_HOST_MEMORY memory{};
    std::string device_name;
    ibv_context* context = nullptr;
    ibv_context** rdma_devices = nullptr;  // from rdma_get_devices (owns `context`)
    bool own_context = false;              // opened with ibv_open_device instead
    ibv_device_attr_ex attr{};
    ibv_port_attr port{};
    uint8_t port_num = 1;
    NDK_ADAPTER_INFO info{};
    Probe probe{};
    bool mw_type2 = false;
    bool fr_windows = false;  // NDKCT_VERBS_FR_WINDOWS (see open_adapter)
    // The fast-registration cache (Mr::cached; NDKCT_VERBS_FR_CACHE=0 turns it off). Local
    // tokens of cached MRs are kFrTokenBit | slot << 8 | generation: the bit is above every key
    // the device hands out (enabled only where max_mr << 8 stays below it), so a token that is
    // no longer in force, passed to the device as it is, fails there like an invalidated key.
    bool fr_cache = false;
    static constexpr uint32_t kFrTokenBit = 0x80000000u;
    static constexpr uint32_t kFrTokenSlots = 4096;
    // Per slot: bit 63 in force, bits 32..39 the generation, bits 0..31 the registration's lkey.
    std::unique_ptr<std::atomic<uint64_t>[]> fr_tokens;
    std::vector<uint32_t> fr_free_slots;  // guarded by mutex
    static uint64_t fr_entry(uint8_t gen, uint32_t lkey) {
        return (uint64_t{1} << 63) | (uint64_t{gen} << 32) | lkey;
    }
    static uint32_t fr_token(uint32_t slot, uint8_t gen) { return kFrTokenBit | slot << 8 | gen; }
    // The device key a token stands for: the lkey while in force; otherwise the token itself,
    // which no device key equals (INV-01: the request fails on the device).
    uint32_t fr_token_lkey(uint32_t token) const {
        uint32_t slot = (token & ~kFrTokenBit) >> 8;
        if (slot >= kFrTokenSlots) return token;
        uint64_t e = fr_tokens[slot].load(std::memory_order_acquire);
        if (!(e >> 63) || ((e >> 32) & 0xff) != (token & 0xff)) return token;
        return static_cast<uint32_t>(e);
    }

    // The device's own IP addresses (from its RoCE GID table). rdma_cm cannot route loopback
    // addresses to an RDMA device, so 127.0.0.0/8 and ::1 stand for these (see connection.cpp).
    bool has_ipv4 = false, has_ipv6 = false;
    bool loopback_alias = true;  // NDKCT_VERBS_LOOPBACK_ALIAS=0 turns it off (two nodes)
    sockaddr_in ipv4{};
    sockaddr_in6 ipv6{};

    ibv_comp_channel* channel = nullptr;
    rdma_event_channel* cm_channel = nullptr;
    int wake_fd = -1;
    std::thread event_thread;
    std::atomic<bool> stopping{false};
    Worker worker;

    std::mutex mutex;         // lifetime fields, connection state, object list
    Life* objects = nullptr;  // every open object (intrusive list)
    bool closing = false;     // NdkctCloseAdapter: no more callbacks
    std::atomic<long> live_lams{0};

    // Logical addresses (NdkBuildLam): PFN n is kLogicalBase + n * PAGE_SIZE, inside every PD's
    // whole-arena registration at that iova.
    static constexpr uint64_t kLogicalBase = uint64_t{1} << 44;
    uint64_t logical_of(PFN_NUMBER pfn) const {
        return kLogicalBase + (uint64_t(pfn) << PAGE_SHIFT);
    }
    bool pfn_of(uint64_t logical, PFN_NUMBER& pfn) const {
        if (logical < kLogicalBase || (logical & (PAGE_SIZE - 1))) return false;
        pfn = (logical - kLogicalBase) >> PAGE_SHIFT;
        return pfn < memory.PageCount;
    }

    // ---- objects and lifetime (adapter.cpp) ----
    // Links a fully built object into the adapter: the object list and its antecedents.
    void adopt(Life* object, std::initializer_list<Life*> antecedents);
    void adopt_locked(Life* object,
                      std::initializer_list<Life*> antecedents);  // caller holds mutex
    void link_antecedent(Life* object, Life* antecedent);         // caller holds mutex
    void unlink_antecedent(Life* object,
                           Life* antecedent);  // caller holds mutex; may finish closes
    NTSTATUS close(Life* object, NDK_FN_CLOSE_COMPLETION* completion, void* context);
    // Runs `callback` on the worker for `object`: counted in its busy count so that its close
    // waits (CLOSE-03, CLOSE-07). Returns false (and drops it) when the object or the adapter is
    // closing and `even_when_closing` is false. Caller holds mutex.
    bool schedule(Life* object, std::function<void()> callback, bool even_when_closing = false);
    void maybe_finish_close(Life* object, std::unique_lock<std::mutex>& lock);
    void destroy(Life* object);  // frees the object's device resources and memory (no lock)
    void force_close_all();

    // ---- events (adapter.cpp, connection.cpp, queues.cpp) ----
    void event_loop();
    void on_cm_event(rdma_cm_event* event);
    void on_async_event(const ibv_async_event& event);
    void on_cq_event(Cq* cq);
};

// A new object of type T with its NDK header filled (GEN-CREATE-03/06/07, VER-03); not yet
// visible to the adapter (Adapter::adopt links it once its device resources exist).
template <typename T, typename Table>
T* new_object(Adapter* a, Kind kind, NDK_OBJECT_TYPE type, const Table* dispatch) {
    T* o = new (std::nothrow) T{};
    if (!o) return nullptr;
    o->ndk.Header.Version = a->version;
    o->ndk.Header.ObjectType = type;
    // NdkReserved is zero from the value-initialization above (GEN-CREATE-07).
    o->ndk.Dispatch = dispatch;
    o->life.adapter = a;
    o->life.kind = kind;
    return o;
}

// ---------------------------------------------------------------- shared helpers

// NDKCT_VERBS_TRACE=1 in the environment: one line per connection event and refusal on stderr
// (for bring-up; the provider never writes to stdout).
bool trace_enabled();
void trace(const char* format, ...) __attribute__((format(printf, 1, 2)));
#define VERBS_TRACE(...)                                  \
    do {                                                  \
        if (::ndkct::adapters::verbs::trace_enabled())    \
            ::ndkct::adapters::verbs::trace(__VA_ARGS__); \
    } while (0)

// The one table (adapter.cpp); `type` is the request's NDK_OPERATION_TYPE (a read's remote
// access error is reported as NdkRead documents it, RD-05).
NTSTATUS wc_status_to_ntstatus(ibv_wc_status status, NDK_OPERATION_TYPE type);
NTSTATUS errno_to_ntstatus(int error);
int mr_access(uint32_t ndk_mr_flags, bool mw_bind);
int op_access(uint32_t ndk_op_flags, bool mw_bind);

// Fills NDK_RESULT(_EX) entries from the CQ; shared by both getters (queues.cpp).
template <typename Result>
ULONG get_results(Cq* cq, Result* results, ULONG count);

// Ends the rings of a destroyed QP: entries still queued in its CQs are dropped (queues.cpp).
void bury_rings(Qp* qp);
// Unbinds (by reallocating) every type-2 window bound through qp before the QP is destroyed:
// rxe blocks ~51 s destroying a QP with a bound type-2 window (rxe-notes).
void unbind_windows_of(Qp* qp);
void unbind_windows_of(Mr* mr);
// A window bound through a QP other than `qp` gets a fresh device window (the old key reaches
// nothing at once): how NdkInvalidate and NdkBind on `qp` take it back from that QP. Nothing
// orders `qp`'s requests after the other QP's bind, and the local invalidation of a type 2
// window that bind has not reached yet (free) panics rxe (README.md, rxe findings).
void orphan_window_bound_elsewhere(Mw* mw, const Qp* qp);
// Frees a CQ's graveyard once it is known to hold no entries of buried QPs.
void sweep_graveyard(Cq* cq, bool all);
void move_qp_to_error(Qp* qp);
// Connected QPs of the process (connection.cpp): a QP is noted at RTR and forgotten before it is
// destroyed; abort_connection puts a QP and its peer (when in this process) in error (SAI-02).
void note_peer(Qp* qp, uint32_t peer_qp_num);
void forget_peer(Qp* qp);
void abort_connection(Qp* qp);
void flush_deferred(Qp* qp);

// Dispatch tables (dispatch.cpp).
extern const NDK_ADAPTER_DISPATCH kAdapterDispatch;
extern const NDK_PD_DISPATCH kPdDispatch;
extern const NDK_CQ_DISPATCH kCqDispatch;
extern const NDK_MR_DISPATCH kMrDispatch;
extern const NDK_MW_DISPATCH kMwDispatch;
extern const NDK_QP_DISPATCH kQpDispatch;
extern const NDK_SRQ_DISPATCH kSrqDispatch;
extern const NDK_CONNECTOR_DISPATCH kConnectorDispatch;
extern const NDK_LISTENER_DISPATCH kListenerDispatch;
extern const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch;

// The functions behind the tables, named after the NDK calls.
NDK_FN_CLOSE_OBJECT verbs_close_object;
NDK_FN_QUERY_EXTENSION_INTERFACE verbs_query_extension;
NDK_FN_QUERY_ADAPTER_INFO verbs_query_adapter_info;
NDK_FN_CREATE_CQ verbs_create_cq;
NDK_FN_CREATE_PD verbs_create_pd;
NDK_FN_CREATE_SHARED_ENDPOINT verbs_create_shared_endpoint;
NDK_FN_CREATE_CONNECTOR verbs_create_connector;
NDK_FN_CREATE_LISTENER verbs_create_listener;
NDK_FN_BUILD_LAM verbs_build_lam;
NDK_FN_RELEASE_LAM verbs_release_lam;
NDK_FN_RESIZE_CQ verbs_resize_cq;
NDK_FN_ARM_CQ verbs_arm_cq;
NDK_FN_GET_CQ_RESULTS verbs_get_cq_results;
NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION verbs_control_cq_interrupt_moderation;
NDK_FN_GET_CQ_RESULTS_EX verbs_get_cq_results_ex;
NDK_FN_REGISTER_MR verbs_register_mr;
NDK_FN_DEREGISTER_MR verbs_deregister_mr;
NDK_FN_INITIALIZE_FAST_REGISTER_MR verbs_initialize_fast_register_mr;
NDK_FN_GET_REMOTE_TOKEN_FROM_MR verbs_get_remote_token_from_mr;
NDK_FN_GET_LOCAL_TOKEN_FROM_MR verbs_get_local_token_from_mr;
NDK_FN_GET_REMOTE_TOKEN_FROM_MW verbs_get_remote_token_from_mw;
NDK_FN_MODIFY_SRQ verbs_modify_srq;
NDK_FN_SRQ_RECEIVE verbs_srq_receive;
NDK_FN_FLUSH verbs_flush;
NDK_FN_SEND verbs_send;
NDK_FN_RECEIVE verbs_receive;
NDK_FN_BIND verbs_bind;
NDK_FN_FAST_REGISTER verbs_fast_register;
NDK_FN_INVALIDATE verbs_invalidate;
NDK_FN_READ verbs_read;
NDK_FN_WRITE verbs_write;
NDK_FN_SEND_AND_INVALIDATE verbs_send_and_invalidate;
NDK_FN_CREATE_MR verbs_create_mr;
NDK_FN_CREATE_MW verbs_create_mw;
NDK_FN_CREATE_SRQ verbs_create_srq;
NDK_FN_CREATE_QP verbs_create_qp;
NDK_FN_CREATE_QP_WITH_SRQ verbs_create_qp_with_srq;
NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN verbs_get_privileged_memory_region_token;
NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS verbs_get_shared_endpoint_local_address;
NDK_FN_CONNECT verbs_connect;
NDK_FN_CONNECT_WITH_SHARED_ENDPOINT verbs_connect_with_shared_endpoint;
NDK_FN_COMPLETE_CONNECT verbs_complete_connect;
NDK_FN_ACCEPT verbs_accept;
NDK_FN_REJECT verbs_reject;
NDK_FN_GET_CONNECTION_DATA verbs_get_connection_data;
NDK_FN_GET_LOCAL_ADDRESS verbs_get_local_address;
NDK_FN_GET_PEER_ADDRESS verbs_get_peer_address;
NDK_FN_DISCONNECT verbs_disconnect;
NDK_FN_COMPLETE_CONNECT_EX verbs_complete_connect_ex;
NDK_FN_ACCEPT_EX verbs_accept_ex;
NDK_FN_LISTEN verbs_listen;
NDK_FN_GET_LISTENER_LOCAL_ADDRESS verbs_get_listener_local_address;
NDK_FN_CONTROL_CONNECT_EVENTS verbs_control_connect_events;

// Opening and closing (adapter.cpp), behind the three exports.
NTSTATUS open_adapter(const NDKCT_HOST_MEMORY* memory, const NDKCT_OPEN_OPTIONS* options,
                      NDK_ADAPTER** adapter);
void close_adapter(NDK_ADAPTER* adapter);
const NDKCT_PROVIDER_IDENTITY* provider_identity();

// ---- per-kind cleanup (each file), called by Adapter::destroy ----
void destroy_pd(Pd* pd);
void destroy_cq(Cq* cq);
void destroy_mr(Mr* mr);
void destroy_mw(Mw* mw);
void destroy_qp(Qp* qp);
void destroy_srq(Srq* srq);
void destroy_connector(Connector* c);
void destroy_listener(Listener* l);
void destroy_shared_endpoint(SharedEndpoint* e);
// Called with the mutex held when a close starts, to begin cancellation (CLOSE-08).
void begin_close_connection(Life* object);

}  // namespace ndkct::adapters::verbs
