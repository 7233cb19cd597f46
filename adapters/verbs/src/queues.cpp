// Completion queues, queue pairs, shared receive queues and every work request (CQ-*, CQP-*,
// SRQ-*, WR-*, SND-*, RCV-*, RD-*, WRT-*, SAI-*, FR-*, BND-*, INV-*, FLS-*, DEFER-*).
//
// The post path (NdkSend ... NdkSrqReceive) and the poll path (NdkGetCqResults[Ex]) take no lock
// and allocate nothing (WR-08): every request gets a preallocated Slot whose address is the
// verbs wr_id, and NDK_SGE has the layout of ibv_sge, so SGE arrays go to the device as they are.
// NdkFastRegister and NdkInvalidate of a fast-register MR are the exception: user-space verbs has
// no fast-register work request, so they map and register pages (see verbs_fast_register).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "device_order.hpp"
#include "verbs.hpp"

namespace ndkct::adapters::verbs {

static_assert(sizeof(NDK_SGE) == sizeof(ibv_sge), "NDK_SGE must have ibv_sge's layout");
static_assert(offsetof(NDK_SGE, Length) == offsetof(ibv_sge, length),
              "NDK_SGE.Length is ibv_sge.length");
static_assert(offsetof(NDK_SGE, MemoryRegionToken) == offsetof(ibv_sge, lkey),
              "NDK_SGE.MemoryRegionToken is ibv_sge.lkey");

namespace {

// A request binding window `mw` under the key `rkey` to [addr, addr + length) of `region` with
// `access` (length 0: bound to nothing). Every window bind of the provider is one.
inline ibv_send_wr bind_request(ibv_mw* mw, uint32_t rkey, ibv_mr* region, uint64_t addr,
                                uint64_t length, unsigned access) {
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_BIND_MW;
    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info = {region, addr, length, access};
    return wr;
}

inline ibv_sge* as_ibv(const NDK_SGE* sgl) {
    return reinterpret_cast<ibv_sge*>(const_cast<NDK_SGE*>(sgl));
}

// Room for a translated SGE list (device_sges); above every device's SGE limit here (rxe: 32).
constexpr ULONG kScratchSges = 64;

// INV-01 for cached fast registrations (Mr::cached): an SGE naming a provider token gets the
// lkey it stands for while its registration is in force, and keeps the token otherwise, which
// the device refuses like any invalidated key. The consumer's array goes to the device as it is
// unless one SGE names such a token (then a copy on the stack: no allocation, no lock, WR-08).
inline ibv_sge* device_sges(const Adapter* a, const NDK_SGE* sgl, ULONG count, ibv_sge* scratch) {
    ibv_sge* sges = as_ibv(sgl);
    if (!a->fr_cache) return sges;
    ULONG k = 0;
    while (k < count && !(sges[k].lkey & Adapter::kFrTokenBit))
        ++k;
    if (k == count || count > kScratchSges) return sges;
    std::memcpy(scratch, sges, sizeof(ibv_sge) * count);
    for (; k < count; ++k)
        if (scratch[k].lkey & Adapter::kFrTokenBit)
            scratch[k].lkey = a->fr_token_lkey(scratch[k].lkey);
    return scratch;
}

bool same_adapter(const Life* a, const Life* b) {
    return a->adapter == b->adapter;
}

void notify_srq(Srq* srq, NTSTATUS status);

// The device refused a request the provider had checked against every documented limit (and,
// for a held one, had already accepted): it cannot take it now. ENOMEM, EAGAIN and any other
// refusal alike: the status of a call that lacks resources (MODEL-WR-RES-01, WR-05: no entry).
NTSTATUS refused_by_device(int) {
    return STATUS_INSUFFICIENT_RESOURCES;
}

}  // namespace

Rings::~Rings() {
    delete[] send;
    delete[] recv;
}

// ================================================================ CQ

NTSTATUS verbs_create_cq(NDK_ADAPTER* ndk, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK* notify,
                         PVOID notify_context, GROUP_AFFINITY*, NDK_FN_CREATE_COMPLETION*, PVOID,
                         NDK_CQ** out) {
    auto* a = reinterpret_cast<Adapter*>(ndk);
    if (depth > a->info.MaxCqDepth) return STATUS_INVALID_PARAMETER;  // CQ-CREATE-01
    Cq* cq = new_object<Cq>(a, Kind::cq, NdkObjectTypeCq, &kCqDispatch);
    if (!cq) return STATUS_INSUFFICIENT_RESOURCES;
    cq->depth = depth;
    cq->notify = notify;  // CQ-NOT-12
    cq->notify_context = notify_context;
    // Twice the NDK depth plus room: entries of silent requests that are hidden from the
    // consumer (a signaled request now and then, see Qp::signal_every) share the device CQ
    // (CQ-CREATE-04: CqDepth visible entries fit without an overrun).
    int cqe =
        static_cast<int>(std::min<uint64_t>(2 * uint64_t{depth} + 64, a->attr.orig_attr.max_cqe));
    cq->cq = ibv_create_cq(a->context, cqe, cq, a->channel, 0);
    if (!cq->cq) {
        delete cq;
        return STATUS_INSUFFICIENT_RESOURCES;  // CQ-CREATE-02
    }
    a->adopt(&cq->life, {});
    *out = &cq->ndk;
    return STATUS_SUCCESS;
}

void destroy_cq(Cq* cq) {
    sweep_graveyard(cq, true);
    if (cq->cq) ibv_destroy_cq(cq->cq);
    delete cq;
}

NTSTATUS verbs_resize_cq(NDK_CQ* ndk, ULONG depth, NDK_FN_REQUEST_COMPLETION*, PVOID) {
    Cq* cq = self<Cq>(ndk);
    Adapter* a = cq->life.adapter;
    // CQ-RESIZE-01: only with NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED (profile: STATUS_NOT_SUPPORTED).
    if (!a->probe.cq_resize) return STATUS_NOT_SUPPORTED;
    if (depth == 0 || depth > a->info.MaxCqDepth) return STATUS_INVALID_PARAMETER;  // CQ-RESIZE-02
    int cqe =
        static_cast<int>(std::min<uint64_t>(2 * uint64_t{depth} + 64, a->attr.orig_attr.max_cqe));
    if (int rc = ibv_resize_cq(cq->cq, cqe); rc != 0)
        return rc == EINVAL ? STATUS_INVALID_PARAMETER : STATUS_INSUFFICIENT_RESOURCES;  // AMB-25
    cq->depth = depth;  // CQ-RESIZE-04
    return STATUS_SUCCESS;
}

NTSTATUS verbs_control_cq_interrupt_moderation(NDK_CQ*, ULONG, ULONG) {
    // CQ-IM-02, GEN-MAND-02: the adapter does not report CQ_INTERRUPT_MODERATION_SUPPORTED.
    return STATUS_NOT_SUPPORTED;
}

namespace {

// Hands the CQ's notification to the worker, once per arm (CQ-NOT-01): whoever takes the arm
// (this call or the event thread) delivers it.
void fire(Cq* cq, NTSTATUS status) {
    if (cq->armed.exchange(-1) == -1) return;
    Adapter* a = cq->life.adapter;
    std::lock_guard lock(a->mutex);
    a->schedule(&cq->life, [cq, status] { cq->notify(cq->notify_context, status); });  // CQ-NOT-03
}

// Would this completion reach the consumer? (Entries of destroyed QPs, internal requests and
// silent successes do not.)
bool visible(const ibv_wc& wc) {
    const Slot* s = reinterpret_cast<const Slot*>(wc.wr_id);
    device_acquire(s);
    if (s->rings->dead.load(std::memory_order_acquire) || s->internal) return false;
    if (wc.status != IBV_WC_SUCCESS) return true;
    return !s->silent || s->override_status != STATUS_SUCCESS;
}

}  // namespace

void verbs_arm_cq(NDK_CQ* ndk, ULONG type) {
    Cq* cq = self<Cq>(ndk);
    if (!cq->notify || type > NDK_CQ_NOTIFY_SOLICITED)
        return;  // CQ-NOT-12: no callback, no notification
    // CQ-NOT-04: combine with an outstanding arm, ANY > SOLICITED > ERRORS.
    auto rank = [](int t) {
        return t == NDK_CQ_NOTIFY_ANY ? 3 : t == NDK_CQ_NOTIFY_SOLICITED ? 2 : t == 0 ? 1 : 0;
    };
    int current = cq->armed.load();
    int want = rank(static_cast<int>(type)) >= rank(current) ? static_cast<int>(type) : current;
    cq->armed.store(want);
    // CQ-NOT-09/10/11: the device notifies the next completion, or the next solicited or failed
    // one.
    if (want != NDK_CQ_NOTIFY_ERRORS) ibv_req_notify_cq(cq->cq, want == NDK_CQ_NOTIFY_SOLICITED);
    // CQ-STATUS-02, CQ-NOT-05: an overrun reported by the device satisfies any arm.
    if (cq->overrun.load() && !cq->overrun_reported.exchange(true)) {
        fire(cq, STATUS_BUFFER_OVERFLOW);
        return;
    }
    if (want == NDK_CQ_NOTIFY_ERRORS) return;
    // CQ-NOT-02: entries already in the CQ satisfy the arm at once; the device only notifies
    // new ones. Take a look at what is queued (kept for NdkGetCqResults: CQ-SER-01 makes this
    // safe). CQ-NOT-08 allows notifying for entries that were there before the last notification.
    if (cq->carry_at == cq->carry_count) {
        int n = ibv_poll_cq(cq->cq, Cq::kCarry, cq->carry);
        cq->carry_at = 0;
        cq->carry_count = n > 0 ? static_cast<unsigned>(n) : 0;
    }
    for (unsigned k = cq->carry_at; k < cq->carry_count; ++k) {
        const ibv_wc& wc = cq->carry[k];
        if (!visible(wc)) continue;
        // CQ-NOT-11: an error satisfies SOLICITED. CQ-NOT-02/10: so does a solicited send's
        // receive already queued, but ibv_wc does not say whether the send was solicited: any
        // queued receive fires it (CQ-NOT-02 asks an arm over new entries to fire at once).
        if (want == NDK_CQ_NOTIFY_ANY || wc.status != IBV_WC_SUCCESS || (wc.opcode & IBV_WC_RECV)) {
            fire(cq, STATUS_SUCCESS);
            return;
        }
    }
}

void Adapter::on_cq_event(Cq* cq) {
    int armed = cq->armed.load();
    if (armed == NDK_CQ_NOTIFY_ANY || armed == NDK_CQ_NOTIFY_SOLICITED)
        fire(cq, STATUS_SUCCESS);  // CQ-NOT-07
}

// Device events: CQ overrun (CQ-STATUS-02), SRQ threshold (SRQ-10/12) and SRQ failure (SRQ-15).
void Adapter::on_async_event(const ibv_async_event& event) {
    switch (event.event_type) {
        case IBV_EVENT_CQ_ERR: {
            auto* cq = static_cast<Cq*>(event.element.cq->cq_context);
            cq->overrun.store(true);
            if (cq->armed.load() != -1 && !cq->overrun_reported.exchange(true))
                fire(cq, STATUS_BUFFER_OVERFLOW);
            break;
        }
        case IBV_EVENT_SRQ_LIMIT_REACHED: {
            auto* srq = static_cast<Srq*>(event.element.srq->srq_context);
            if (srq->notify && srq->notify_armed.exchange(false)) notify_srq(srq, STATUS_SUCCESS);
            break;
        }
        case IBV_EVENT_SRQ_ERR: {
            auto* srq = static_cast<Srq*>(event.element.srq->srq_context);
            if (srq->notify) notify_srq(srq, STATUS_INTERNAL_ERROR);
            break;
        }
        default:
            break;
    }
}

void sweep_graveyard(Cq* cq, bool all) {
    std::lock_guard lock(cq->graveyard_mutex);
    uint64_t now = cq->poll_calls.load();
    std::erase_if(cq->graveyard, [&](const Cq::Buried& b) {
        // Buried before this poll call began: every entry of that QP was in the CQ by then, and
        // the call has seen the CQ empty.
        if (!all && b.buried_at > now) return false;
        if (b.rings->refs.fetch_sub(1) == 1) delete b.rings;
        return true;
    });
    cq->graveyard_nonempty.store(!cq->graveyard.empty());
}

namespace {

// The rare path of a receive that invalidated one of our tokens (SAI-01, CQ-RI-02): the window
// is no longer bound.
void note_remote_invalidation(Adapter* a, Rings* r, Qp* srq_qp_alive, uint32_t token) {
    std::lock_guard lock(
        a->mutex);  // bury_rings marks rings dead under it: the QP lives while we hold it
    Qp* qp = r->srq ? srq_qp_alive : r->qp;
    if (r->dead.load() || !qp) return;
    for (Mw* mw : qp->pd->windows)
        if (mw->rkey.load() == token) {
            mw->bound.store(false);
            mw->bound_qp.store(nullptr);
        }
    // A fast registration exposed through its window: the device invalidated the window; the
    // region goes too, so that its local token fails as well once the consumer sees this
    // completion (CQ-RI-01: a later NdkInvalidate of it fails; INV-01). Deregistering here is
    // a system call on the poll path, on this rare path only.
    for (Mr* mr : qp->pd->fast_mrs)
        if (mr->fr_window_bound.load() && mr->rkey.load() == token &&
            mr->phase.load() == Mr::Phase::fast_registered) {
            mr->fr_window_bound.store(false);
            mr->fr_window_qp.store(nullptr);
            mr->phase.store(Mr::Phase::invalidated);
            delete mr->current.exchange(nullptr);
        }
}

// A fast registration whose request completed in error never took effect in NDK terms (it was
// flushed, or the QP failed before it ran): the registration made at the call is undone and the
// MR is invalidated again, ready for the next NdkFastRegister.
void roll_back_fast_register(Adapter* a, Qp* qp, Slot* s) {
    std::lock_guard lock(a->mutex);
    Mr* mr = s->rollback_mr;
    s->rollback_mr = nullptr;
    if (!qp ||
        std::find(qp->pd->fast_mrs.begin(), qp->pd->fast_mrs.end(), mr) == qp->pd->fast_mrs.end())
        return;  // closed meanwhile
    if (mr->phase.load() == Mr::Phase::invalidated && !mr->current.load()) {
        // Retired by a later NdkInvalidate still in flight: if that one is flushed too, it
        // gives back nothing.
        mr->flushed_registration = s->rollback_registration;
        return;
    }
    if (mr->current.load() != s->rollback_registration ||
        mr->phase.load() != Mr::Phase::fast_registered)
        return;                        // invalidated or registered again since
    mr->fr_window_bound.store(false);  // the bind did not run
    mr->fr_window_qp.store(nullptr);
    mr->phase.store(Mr::Phase::invalidated);
    delete mr->current.exchange(nullptr);
}

bool is_open(const Qp* qp, const Mr* mr) {
    return qp && std::find(qp->pd->fast_mrs.begin(), qp->pd->fast_mrs.end(), mr) !=
                     qp->pd->fast_mrs.end();
}

// A cached MR's fast registration that completed in error (flushed before it ran): its bind of
// the window did not run, so the window keeps the key it had; the registration is parked again.
void roll_back_cached_fast_register(Adapter* a, Qp* qp, Slot* s) {
    std::lock_guard lock(a->mutex);
    Mr* mr = std::exchange(s->rollback_mr, nullptr);
    Registration* r = s->rollback_registration;
    s->cached = 0;
    if (!is_open(qp, mr)) return;  // closed meanwhile
    if (mr->phase.load() == Mr::Phase::invalidated && !mr->current.load() && mr->parked == r) {
        // Parked by a later NdkInvalidate still in flight: if that one is flushed too, it
        // gives back nothing (roll_back_cached_invalidate).
        mr->flushed_registration = r;
        mr->cache_window->rkey = s->rollback_window_key;
        return;
    }
    if (mr->current.load() != r || mr->phase.load() != Mr::Phase::fast_registered) return;
    a->fr_tokens[mr->token_slot].store(0, std::memory_order_release);
    --mr->token_gen;  // IFR-TOK-01: it never ran; the next registration takes its token (lkey)
    mr->current.store(nullptr);
    mr->phase.store(Mr::Phase::invalidated);
    delete std::exchange(mr->parked, r);
    mr->cache_window->rkey = s->rollback_window_key;
}

// A cached MR's NdkInvalidate that completed in error (flushed before it ran) invalidated
// nothing: the registration, its token and its window's binding are in force again, unless the
// MR moved on since, or the fast registration was flushed too.
void roll_back_cached_invalidate(Adapter* a, Qp* qp, Slot* s) {
    std::lock_guard lock(a->mutex);
    Mr* mr = std::exchange(s->restore_mr, nullptr);
    Registration* r = s->rollback_registration;
    s->cached = 0;
    if (!is_open(qp, mr)) return;
    if (std::exchange(mr->flushed_registration, nullptr) == r) return;  // never in force
    if (mr->phase.load() != Mr::Phase::invalidated || mr->current.load() || mr->parked != r)
        return;  // moved on
    mr->parked = nullptr;
    mr->current.store(r);
    a->fr_tokens[mr->token_slot].store(Adapter::fr_entry(mr->token_gen, r->mr->lkey),
                                       std::memory_order_release);
    mr->cache_window->rkey = s->rollback_window_key;  // the device kept the earlier bind
    mr->phase.store(Mr::Phase::fast_registered);
}

// INV-01, FLS-02: an NdkInvalidate of a fast-registered MR that completed in error (flushed
// before it ran) invalidated nothing: the registration it retired is in force again, unless the
// MR moved on since (initialized or registered again).
void roll_back_invalidate(Adapter* a, Qp* qp, Slot* s) {
    std::lock_guard lock(a->mutex);
    Mr* mr = std::exchange(s->restore_mr, nullptr);
    Registration* r = s->retire.exchange(nullptr);
    bool open = qp && std::find(qp->pd->fast_mrs.begin(), qp->pd->fast_mrs.end(), mr) !=
                          qp->pd->fast_mrs.end();
    if (!open || !r || mr->phase.load() != Mr::Phase::invalidated || mr->current.load() ||
        std::exchange(mr->flushed_registration, nullptr) == r) {
        delete r;  // closed, changed meanwhile, or never in force: it goes as usual
        return;
    }
    mr->current.store(r);
    mr->phase.store(Mr::Phase::fast_registered);
}

// LIFE-TREE-04, MW-02: a bind that completed in error bound nothing; the window is unbound and
// its MR no longer waits for it (unless the window was bound again since).
void roll_back_bind(Adapter* a, Qp* qp, Slot* s) {
    std::lock_guard lock(a->mutex);
    Mw* mw = std::exchange(s->rollback_mw, nullptr);
    if (!qp ||
        std::find(qp->pd->windows.begin(), qp->pd->windows.end(), mw) == qp->pd->windows.end())
        return;                                                        // closed meanwhile
    if (mw->binds.load() == s->rollback_bind) mw->bound.store(false);  // the last bind: undone
    // The MR waits no more for the window once no bind to it stands (flushed binds never bound
    // it; invalidated or rebound since or not), as the oracle undoes them.
    Mr* mr = std::exchange(s->rollback_bound_mr, nullptr);
    if (!mr || mw->bound_mr != mr || --mw->bound_mr_binds > 0) return;
    mw->bound_mr = nullptr;
    --mr->bound_windows;
    a->unlink_antecedent(&mw->life, &mr->life);
}

Qp* srq_qp(const Srq* srq, uint32_t qp_num) {
    const Srq::Attached* t = srq->attached.load(std::memory_order_acquire);
    if (!t) return nullptr;
    for (const auto& [num, qp] : t->qps)
        if (num == qp_num) return qp;
    return nullptr;
}

template <typename Result>
void fill(Result& out, NTSTATUS status, uint32_t bytes, void* qp_context, void* request_context) {
    out.Status = status;
    out.BytesTransferred = bytes;          // CQ-RES-01: meaningful for receives
    out.QPContext = qp_context;            // CQ-RES-02, CQP-CTX-01
    out.RequestContext = request_context;  // CQ-RES-05
}

// One device completion -> at most one NDK result. Returns false when the consumer must not
// see it. Reaping moves the ring's head (the slot may be reused after this).
template <typename Result>
bool translate(Adapter* a, const ibv_wc& wc, Result& out) {
    Slot* s = reinterpret_cast<Slot*>(wc.wr_id);
    device_acquire(s);
    Rings* r = s->rings;
    if (r->dead.load(std::memory_order_acquire)) return false;  // a destroyed QP's leftovers
    NDK_OPERATION_TYPE type = static_cast<NDK_OPERATION_TYPE>(s->type);
    NTSTATUS status =
        wc.status == IBV_WC_SUCCESS ? s->override_status : wc_status_to_ntstatus(wc.status, type);
    void* request_context = s->request_context;
    void* qp_context = r->qp_context;
    uint32_t token = 0;
    bool show;
    if (!s->receive) {
        // Completions of one send queue come in posting order: this one also finishes every
        // unsignaled (silent, successful) request before it.
        // A request the device refused never ran either (complete_refused).
        const bool did_not_run = wc.status != IBV_WC_SUCCESS || s->refused;
        if (s->restore_mr && did_not_run) {
            if (s->cached)
                roll_back_cached_invalidate(a, r->qp, s);
            else
                roll_back_invalidate(a, r->qp, s);
        }
        // INV-01: a retired registration goes now (the rare case: checked before exchanging).
        if (s->retire.load(std::memory_order_relaxed))
            if (Registration* retired = s->retire.exchange(nullptr)) delete retired;
        if (did_not_run) {
            if (s->rollback_mr) {
                if (s->cached)
                    roll_back_cached_fast_register(a, r->qp, s);
                else
                    roll_back_fast_register(a, r->qp, s);
            }
            if (s->rollback_mw) roll_back_bind(a, r->qp, s);
        }
        show = !s->internal && (status != STATUS_SUCCESS || !s->silent);
        r->send_head.store(s->index + 1, std::memory_order_release);
    } else {
        Qp* qp = r->qp;
        if (Srq* srq = r->srq) {  // an SRQ receive: the QP that consumed it
            qp = srq_qp(srq, wc.qp_num);
            qp_context = qp ? qp->context : nullptr;
            srq->reaped.fetch_add(1, std::memory_order_relaxed);
            s->done.store(1, std::memory_order_release);
            if (!qp) return false;  // its QP is gone
        } else {
            r->recv_head.store(s->index + 1, std::memory_order_release);
        }
        // SAI-01, CQ-RES-07: rxe never sets IBV_WC_WITH_INV; the kernel's IB_WC_WITH_INVALIDATE
        // (0x4) arrives raw (where IBV_WC_IP_CSUM_OK sits) with the key in invalidated_rkey.
        // NDKPI never sends immediate data, so the union holds the invalidated key.
        bool invalidated = wc.status == IBV_WC_SUCCESS && !(wc.wc_flags & IBV_WC_WITH_IMM) &&
                           ((wc.wc_flags & (IBV_WC_WITH_INV | 0x4)) != 0);
        // SAI-02: the sender named a token that is not valid here (rxe reports the receive
        // with IBV_WC_REM_INV_REQ_ERR): the connection is aborted (the rare path: system calls).
        if (wc.status == IBV_WC_REM_INV_REQ_ERR && qp) abort_connection(qp);
        if (invalidated) {
            type = NdkOperationTypeReceiveAndInvalidate;
            token = wc.invalidated_rkey;
            note_remote_invalidation(a, r, r->srq ? qp : nullptr, token);
        }
        show = true;
    }
    if (!show) return false;
    fill(out, status, wc.status == IBV_WC_SUCCESS ? wc.byte_len : 0, qp_context, request_context);
    if constexpr (std::is_same_v<Result, NDK_RESULT_EX>) {
        out.Type = type;  // CQ-RES-03, FR-RES-01
        // CQ-RES-04 (2.1): 0 on success; on failure the verbs status (0 for our own verdicts).
        out.ProviderErrorCode = NDKCT_VERSION_AT_LEAST(a->version, 2, 1) && status != STATUS_SUCCESS
                                    ? static_cast<ULONG>(wc.status)
                                    : 0;
        out.TypeSpecificCompletionOutput = token;  // CQ-RES-07 (0 otherwise)
    }
    return true;
}

}  // namespace

// CQ-GET-01/02/04: removes up to `count` entries, never blocks.
template <typename Result>
ULONG get_results(Cq* cq, Result* results, ULONG count) {
    Adapter* a = cq->life.adapter;
    // This call's number (see sweep_graveyard). Calls are serialized (CQ-SER-01): a plain
    // store, no locked read-modify-write on the poll path.
    cq->poll_calls.store(cq->poll_calls.load(std::memory_order_relaxed) + 1,
                         std::memory_order_release);
    ULONG got = 0;
    while (got < count && cq->carry_at < cq->carry_count) {
        const ibv_wc& wc = cq->carry[cq->carry_at++];
        if (translate(a, wc, results[got])) ++got;
    }
    bool empty = false;
    while (got < count) {
        ibv_wc wcs[16];
        int want = static_cast<int>(std::min<ULONG>(count - got, 16));
        int n = ibv_poll_cq(cq->cq, want, wcs);
        if (n <= 0) {
            empty = true;
            break;
        }
        for (int k = 0; k < n; ++k)  // at most `want` visible: each fits
            if (translate(a, wcs[k], results[got])) ++got;
        if (n < want) {
            empty = true;
            break;
        }
    }
    // Rings buried before this call are safe to free once the CQ was seen empty.
    if (empty && cq->carry_at == cq->carry_count &&
        cq->graveyard_nonempty.load(std::memory_order_relaxed)) {
        sweep_graveyard(cq, false);
    }
    return got;
}

template ULONG get_results<NDK_RESULT>(Cq*, NDK_RESULT*, ULONG);
template ULONG get_results<NDK_RESULT_EX>(Cq*, NDK_RESULT_EX*, ULONG);

ULONG verbs_get_cq_results(NDK_CQ* ndk, NDK_RESULT results[], ULONG count) {
    return get_results(self<Cq>(ndk), results, count);  // CQ-RI-01: plain results too
}

ULONG verbs_get_cq_results_ex(NDK_CQ* ndk, NDK_RESULT_EX results[], ULONG count) {
    return get_results(self<Cq>(ndk), results, count);  // CQ-GET-03
}

// ================================================================ SRQ

namespace {

void attach_to_srq(Srq* srq, Qp* qp, bool attach) {  // caller holds the adapter mutex
    const Srq::Attached* old = srq->attached.load();
    auto* t = new Srq::Attached{};
    if (old) *t = *old;
    if (attach)
        t->qps.emplace_back(qp->qp->qp_num, qp);
    else
        std::erase_if(t->qps, [&](const auto& e) { return e.second == qp; });
    srq->attached.store(t, std::memory_order_release);
    if (old) srq->retired_tables.push_back(const_cast<Srq::Attached*>(old));
}

// SRQ-11: fewer receives queued than the threshold already.
uint32_t queued(const Srq* srq) {
    return srq->rings->recv_tail - srq->reaped.load(std::memory_order_relaxed);
}

void notify_srq(Srq* srq, NTSTATUS status) {
    Adapter* a = srq->life.adapter;
    std::lock_guard lock(a->mutex);
    a->schedule(&srq->life, [srq, status] { srq->notify(srq->notify_context, status); });
}

}  // namespace

NTSTATUS verbs_create_srq(NDK_PD* ndk, ULONG depth, ULONG max_sge, ULONG threshold,
                          NDK_FN_SRQ_NOTIFICATION_CALLBACK* notify, PVOID notify_context,
                          GROUP_AFFINITY*, NDK_FN_CREATE_COMPLETION*, PVOID, NDK_SRQ** out) {
    Pd* pd = self<Pd>(ndk);
    Adapter* a = pd->life.adapter;
    const NDK_ADAPTER_INFO& info = a->info;
    if (depth > info.MaxSrqDepth || max_sge > info.MaxReceiveRequestSge)  // SRQ-01, SRQ-04, SRQ-06
        return STATUS_INVALID_PARAMETER;
    Srq* srq = new_object<Srq>(a, Kind::srq, NdkObjectTypeSrq, &kSrqDispatch);
    if (!srq) return STATUS_INSUFFICIENT_RESOURCES;
    srq->pd = pd;
    srq->depth = depth;
    srq->max_sge = max_sge;
    srq->notify = notify;  // SRQ-07
    srq->notify_context = notify_context;
    srq->threshold = threshold;
    ibv_srq_init_attr init{};
    init.srq_context = srq;
    init.attr.max_wr = std::max<uint32_t>(1, 2 * depth);
    init.attr.max_sge = std::max<uint32_t>(1, max_sge);
    srq->srq = ibv_create_srq(pd->pd, &init);
    // Slots for the largest depth NdkModifySrq may set (SRQ-17), twice over for reaping slack.
    srq->rings = new (std::nothrow) Rings;
    if (srq->rings) {
        srq->rings->recv_size = 2 * std::max<uint32_t>(1, info.MaxSrqDepth);
        srq->rings->recv = new (std::nothrow) Slot[srq->rings->recv_size];
        srq->rings->srq = srq;
    }
    if (!srq->srq || !srq->rings || !srq->rings->recv) {
        if (srq->srq) ibv_destroy_srq(srq->srq);
        delete srq->rings;
        delete srq;
        return STATUS_INSUFFICIENT_RESOURCES;  // SRQ-05
    }
    for (uint32_t k = 0; k < srq->rings->recv_size; ++k) {
        srq->rings->recv[k].rings = srq->rings;
        srq->rings->recv[k].receive = 1;
        srq->rings->recv[k].type = NdkOperationTypeReceive;
        srq->rings->recv[k].done.store(1);
    }
    // SRQ-16: the initial threshold arms a notification once receives drop below it (the device
    // limit event fires when a receive is consumed below the limit: "after_threshold_reached").
    if (notify && threshold > 0) {
        ibv_srq_attr attr{};
        attr.srq_limit = std::min(threshold, init.attr.max_wr - 1);
        if (ibv_modify_srq(srq->srq, &attr, IBV_SRQ_LIMIT) == 0) srq->notify_armed.store(true);
    }
    a->adopt(&srq->life, {&pd->life});
    *out = &srq->ndk;
    return STATUS_SUCCESS;
}

void destroy_srq(Srq* srq) {
    if (srq->srq) ibv_destroy_srq(srq->srq);
    delete srq->rings;
    delete srq->attached.load();
    for (auto* t : srq->retired_tables)
        delete t;
    delete srq;
}

NTSTATUS verbs_modify_srq(NDK_SRQ* ndk, ULONG depth, ULONG threshold, NDK_FN_REQUEST_COMPLETION*,
                          PVOID) {
    Srq* srq = self<Srq>(ndk);
    Adapter* a = srq->life.adapter;
    if (depth > a->info.MaxSrqDepth) return STATUS_INVALID_PARAMETER;  // SRQ-09
    if (depth != 0 && depth != srq->depth) {                           // SRQ-02: 0 keeps the depth
        // Below what is queued: refused (ours, profile modify_srq_below_queued: reject).
        if (depth < queued(srq)) return STATUS_INVALID_PARAMETER;
        ibv_srq_attr attr{};
        attr.max_wr = 2 * depth;
        // The slot ring enforces the NDK depth; the device queue only has to be large enough,
        // so a refused shrink is harmless.
        if (int rc = ibv_modify_srq(srq->srq, &attr, IBV_SRQ_MAX_WR); rc != 0 && depth > srq->depth)
            return rc == EINVAL ? STATUS_INVALID_PARAMETER : STATUS_INSUFFICIENT_RESOURCES;
        srq->depth = depth;  // SRQ-17
    }
    if (threshold > 0 && srq->notify) {  // SRQ-10: arm; SRQ-13: 0 keeps the arm as it is
        srq->threshold = threshold;
        srq->notify_armed.store(true);
        if (queued(srq) < threshold) {  // SRQ-11: already below
            if (srq->notify_armed.exchange(false)) notify_srq(srq, STATUS_SUCCESS);
        } else {
            ibv_srq_attr attr{};
            attr.srq_limit = threshold;
            ibv_modify_srq(srq->srq, &attr, IBV_SRQ_LIMIT);
        }
    }
    return STATUS_SUCCESS;  // SRQ-14
}

NTSTATUS verbs_srq_receive(NDK_SRQ* ndk, PVOID context, const NDK_SGE* sgl, ULONG count) {
    Srq* srq = self<Srq>(ndk);
    Rings* r = srq->rings;
    if (count > srq->max_sge) return STATUS_INVALID_PARAMETER;  // SGE-10, AMB-26
    // Slots are reaped out of order (several CQs); the head moves over reaped ones here.
    while (r->recv_head.load(std::memory_order_relaxed) != r->recv_tail) {
        Slot& h = r->recv[r->recv_head.load(std::memory_order_relaxed) % r->recv_size];
        if (!h.done.load(std::memory_order_acquire)) break;
        r->recv_head.fetch_add(1, std::memory_order_relaxed);
    }
    uint32_t depth = std::min<uint32_t>(r->recv_size, 2 * std::max<uint32_t>(1, srq->depth));
    if (r->recv_tail - r->recv_head.load(std::memory_order_relaxed) >= depth)
        return STATUS_INSUFFICIENT_RESOURCES;  // SRQ-17: beyond its depth
    Slot* s = &r->recv[r->recv_tail % r->recv_size];
    if (!s->done.load(std::memory_order_acquire)) return STATUS_INSUFFICIENT_RESOURCES;
    s->done.store(0, std::memory_order_relaxed);
    s->request_context = context;
    s->index = r->recv_tail;
    ibv_recv_wr wr{};
    wr.wr_id = reinterpret_cast<uintptr_t>(s);
    ibv_sge scratch[kScratchSges];
    wr.sg_list = device_sges(srq->life.adapter, sgl, count, scratch);
    wr.num_sge = static_cast<int>(count);
    ibv_recv_wr* bad = nullptr;
    ++r->recv_tail;
    device_release(s);
    if (int rc = ibv_post_srq_recv(srq->srq, &wr, &bad); rc != 0) {
        --r->recv_tail;
        s->done.store(1, std::memory_order_relaxed);
        return refused_by_device(rc);
    }
    return STATUS_SUCCESS;  // RCV-02
}

// ================================================================ QP

namespace {

NTSTATUS create_qp(Pd* pd, Cq* receive_cq, Cq* initiator_cq, Srq* srq, void* context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_QP** out) {
    Adapter* a = pd->life.adapter;
    const NDK_ADAPTER_INFO& info = a->info;
    if (!receive_cq || !initiator_cq) return STATUS_INVALID_PARAMETER;
    // AMB-28: objects of another adapter are refused inline.
    if (!same_adapter(&receive_cq->life, &pd->life) ||
        !same_adapter(&initiator_cq->life, &pd->life) ||
        (srq && !same_adapter(&srq->life, &pd->life)))
        return STATUS_INVALID_PARAMETER;
    // CQP-LIM-01..06, CQP-SRQ-02..05: over a limit is rejected, never clamped.
    if (receive_depth > info.MaxReceiveQueueDepth ||
        initiator_depth > info.MaxInitiatorQueueDepth || receive_sge > info.MaxReceiveRequestSge ||
        initiator_sge > info.MaxInitiatorRequestSge || inline_size > info.MaxInlineDataSize)
        return STATUS_INVALID_PARAMETER;
    Qp* qp = new_object<Qp>(a, Kind::qp, NdkObjectTypeQp, &kQpDispatch);
    if (!qp) return STATUS_INSUFFICIENT_RESOURCES;
    qp->pd = pd;
    qp->receive_cq = receive_cq;
    qp->initiator_cq = initiator_cq;
    qp->srq = srq;
    qp->context = context;
    qp->initiator_depth = initiator_depth;
    qp->receive_depth = srq ? 0 : receive_depth;
    qp->max_send_sge = initiator_sge;
    qp->max_recv_sge = srq ? 0 : receive_sge;
    qp->max_read_sge = info.MaxReadRequestSge;  // SGE-11: reads are bounded by the adapter limit
    qp->inline_size = inline_size;
    // AMB-27: zero depths and SGE counts are accepted (a send-only or receive-only QP).
    uint32_t send_slots = 2 * std::max<uint32_t>(1, initiator_depth);
    uint32_t recv_slots = srq ? 0 : 2 * std::max<uint32_t>(1, receive_depth);
    qp->device_send_sge = std::max<uint32_t>({1, initiator_sge, info.MaxReadRequestSge});
    qp->signal_every = std::max<uint32_t>(1, initiator_depth / 2);

    ibv_qp_init_attr init{};
    init.qp_context = qp;
    init.send_cq = initiator_cq->cq;
    init.recv_cq = receive_cq->cq;
    init.srq = srq ? srq->srq : nullptr;
    init.qp_type = IBV_QPT_RC;
    init.sq_sig_all = 0;
    init.cap.max_send_wr = send_slots;
    init.cap.max_recv_wr = srq ? 0 : recv_slots;
    init.cap.max_send_sge = qp->device_send_sge;
    init.cap.max_recv_sge = srq ? 0 : std::max<uint32_t>(1, receive_sge);
    init.cap.max_inline_data = inline_size;
    qp->qp = ibv_create_qp(pd->pd, &init);
    qp->rings = new (std::nothrow) Rings;
    if (qp->rings) {
        qp->rings->qp = qp;
        qp->rings->qp_context = context;
        qp->rings->send_size = send_slots;
        qp->rings->send = new (std::nothrow) Slot[send_slots];
        qp->rings->recv_size = recv_slots;
        qp->rings->recv = recv_slots ? new (std::nothrow) Slot[recv_slots] : nullptr;
    }
    qp->defer_wr = new (std::nothrow) ibv_send_wr[Qp::kMaxDefer];
    qp->defer_sge = new (std::nothrow) ibv_sge[Qp::kMaxDefer * qp->device_send_sge];
    bool ok = qp->qp && qp->rings && qp->rings->send && (srq || qp->rings->recv) && qp->defer_wr &&
              qp->defer_sge;
    // RCV-01, CQP-STATE-02: receives may be posted before the QP is connected; INIT takes them.
    if (ok) {
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_INIT;
        attr.pkey_index = 0;
        attr.port_num = a->port_num;
        attr.qp_access_flags =
            IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
        ok = ibv_modify_qp(qp->qp, &attr,
                           IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
             0;
    }
    if (!ok) {
        if (qp->qp) ibv_destroy_qp(qp->qp);
        delete qp->rings;
        delete[] qp->defer_wr;
        delete[] qp->defer_sge;
        delete qp;
        return STATUS_INSUFFICIENT_RESOURCES;  // CQP-ST-03
    }
    for (uint32_t k = 0; k < send_slots; ++k)
        qp->rings->send[k].rings = qp->rings;
    for (uint32_t k = 0; k < recv_slots; ++k) {
        qp->rings->recv[k].rings = qp->rings;
        qp->rings->recv[k].receive = 1;
        qp->rings->recv[k].type = NdkOperationTypeReceive;
    }
    if (srq) {
        std::lock_guard lock(a->mutex);
        attach_to_srq(srq, qp, true);
    }
    // LIFE-TREE-02/03/05, CQP-LIFE-01: PD parent; CQs and SRQ antecedents.
    a->adopt(&qp->life, {&pd->life, &receive_cq->life,
                         initiator_cq != receive_cq ? &initiator_cq->life : nullptr,
                         srq ? &srq->life : nullptr});
    *out = &qp->ndk;
    return STATUS_SUCCESS;  // CQP-ST-01
}

}  // namespace

NTSTATUS verbs_create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID context,
                         ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                         ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION*, PVOID,
                         NDK_QP** out) {
    return create_qp(self<Pd>(pd), self<Cq>(receive_cq), self<Cq>(initiator_cq), nullptr, context,
                     receive_depth, initiator_depth, receive_sge, initiator_sge, inline_size, out);
}

NTSTATUS verbs_create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                                  NDK_SRQ* srq, PVOID context, ULONG initiator_depth,
                                  ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION*,
                                  PVOID, NDK_QP** out) {
    if (!srq) return STATUS_INVALID_PARAMETER;
    return create_qp(self<Pd>(pd), self<Cq>(receive_cq), self<Cq>(initiator_cq), self<Srq>(srq),
                     context, 0, initiator_depth, 0, initiator_sge, inline_size,
                     out);  // CQP-SRQ-01
}

void bury_rings(Qp* qp) {
    Rings* r = qp->rings;
    if (!r) return;
    // Retired registrations still waiting in unreaped slots go now: the QP is gone.
    for (uint32_t k = 0; k < r->send_size; ++k)
        delete r->send[k].retire.exchange(nullptr);
    bool drained = r->send_head.load() == r->send_tail && r->recv_head.load() == r->recv_tail;
    {
        std::lock_guard lock(qp->life.adapter->mutex);  // see note_remote_invalidation
        r->dead.store(true,
                      std::memory_order_release);  // before anything else: pollers check it first
    }
    r->qp = nullptr;
    if (drained) {  // no entry of this QP can be left in a CQ
        delete r;
        return;
    }
    Cq* cqs[2] = {qp->initiator_cq, qp->receive_cq != qp->initiator_cq ? qp->receive_cq : nullptr};
    r->refs.store(cqs[1] ? 2 : 1);
    for (Cq* cq : cqs)
        if (cq) {
            std::lock_guard lock(cq->graveyard_mutex);
            cq->graveyard.push_back({r, cq->poll_calls.load() + 1});
            cq->graveyard_nonempty.store(true);
        }
}

void destroy_qp(Qp* qp) {
    Adapter* a = qp->life.adapter;
    unbind_windows_of(qp);  // rxe blocks ~51 s destroying a QP with a bound type-2 window
    if (qp->srq) {
        std::lock_guard lock(a->mutex);
        attach_to_srq(qp->srq, qp, false);
    }
    forget_peer(qp);
    if (qp->qp) ibv_destroy_qp(qp->qp);
    bury_rings(qp);
    delete[] qp->defer_wr;
    delete[] qp->defer_sge;
    delete qp;
}

void move_qp_to_error(Qp* qp) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(qp->qp, &attr, IBV_QP_STATE);
}

// FLS-01/02/03: the device flushes every outstanding request with IBV_WC_WR_FLUSH_ERR, which
// becomes STATUS_CANCELLED. May run while another thread posts (WR-03): ibv_modify_qp is safe
// against ibv_post_send. The QP stays in error: it is not usable for new work afterwards.
void verbs_flush(NDK_QP* ndk) {
    Qp* qp = self<Qp>(ndk);
    qp->flushed.store(true, std::memory_order_release);
    move_qp_to_error(qp);
}

// ================================================================ posting

namespace {

// A request that does nothing: the completion of work done outside the device (see
// post_marker). Where the device has windows it binds the PD's type 1 marker window to nothing
// (length 0, its key unchanged); otherwise a zero-length RDMA WRITE.
ibv_send_wr marker_request(Qp* qp) {
    ibv_send_wr wr{};
    if (ibv_mw* marker = qp->pd->marker_window) {
        ibv_mr* region = qp->pd->marker_region;
        wr = bind_request(marker, marker->rkey, region, reinterpret_cast<uint64_t>(region->addr), 0,
                          0);
    } else {
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.wr.rdma.remote_addr = 0;
        wr.wr.rdma.rkey = 0;
    }
    return wr;
}

// DEFER-03, WR-05: a held request returned STATUS_SUCCESS, so it must complete. The device
// refused it (twice): it completes in error, through a marker in its own slot (so its entry
// comes in order, with its RequestContext and type), and what it did at the call is undone as
// for a request flushed before it ran (Slot::refused). If the device refuses even the marker,
// the QP goes to error and the marker is offered once more, to be flushed (STATUS_CANCELLED).
void complete_refused(Qp* qp, Slot* s, NTSTATUS status) {
    s->override_status = status;
    s->refused = 1;
    s->silent = 0;
    device_release(s);
    ibv_send_wr wr = marker_request(qp);
    wr.wr_id = reinterpret_cast<uintptr_t>(s);
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(qp->qp, &wr, &bad) == 0) return;
    move_qp_to_error(qp);
    if (ibv_post_send(qp->qp, &wr, &bad) == 0) return;
    // Nothing left to try: the device takes no request at all on this QP.
    VERBS_TRACE("a deferred request (slot %u) was refused by the device and cannot complete",
                s->index);
}

// Hands the held (DEFER) requests to the device, followed by `last` (nullptr: only the held
// ones; DEFER-04, DEFER-07). What the device refuses is offered once more from the first
// refused request (a refusal may be transient: a full queue, an ENOMEM); held requests it still
// refuses complete in error (complete_refused). Returns 0, or the device's refusal of `last`,
// which the caller fails inline (WR-05: no entry for it).
int post_chain(Qp* qp, ibv_send_wr* last) {
    const unsigned held = qp->defer_count;
    qp->defer_count = 0;
    ibv_send_wr* head = last;
    if (held > 0) {
        qp->defer_wr[held - 1].next = last;
        head = qp->defer_wr;
    }
    if (!head) return 0;
    ibv_send_wr* bad = nullptr;
    int rc = ibv_post_send(qp->qp, head, &bad);
    if (rc == 0) return 0;
    ibv_send_wr* again = bad ? bad : head;  // a device that does not say took nothing
    bad = nullptr;
    rc = ibv_post_send(qp->qp, again, &bad);
    if (rc == 0) return 0;
    if (!bad) bad = again;
    // The held requests from the first refused one on (the array is the chain's order).
    if (bad >= qp->defer_wr && bad < qp->defer_wr + held)
        for (auto k = static_cast<unsigned>(bad - qp->defer_wr); k < held; ++k)
            complete_refused(qp, reinterpret_cast<Slot*>(qp->defer_wr[k].wr_id),
                             refused_by_device(rc));
    return rc;
}

}  // namespace

void flush_deferred(Qp* qp) {
    post_chain(qp, nullptr);
}

namespace {

// An initiator call that fails inline: earlier deferred requests reach the device first
// (DEFER-04, FR-DEFER-02), and no CQ entry will ever name this one (WR-05).
inline NTSTATUS refuse(Qp* qp, NTSTATUS status) {
    flush_deferred(qp);
    return status;
}

inline Slot* take_send_slot(Qp* qp) {
    Rings* r = qp->rings;
    uint32_t t = r->send_tail;
    if (t - r->send_head.load(std::memory_order_acquire) >= r->send_size) return nullptr;
    Slot* s = &r->send[t % r->send_size];
    s->index = t;
    s->override_status = STATUS_SUCCESS;
    s->silent = 0;
    s->internal = 0;
    s->refused = 0;
    s->rollback_mr = nullptr;
    s->rollback_mw = nullptr;
    s->rollback_bound_mr = nullptr;
    s->restore_mr = nullptr;
    s->cached = 0;
    return s;
}

// Hands a prepared work request (with wr.sg_list already set) to the device, or holds it back
// (DEFER). Decides signaling: SILENT_SUCCESS requests are unsignaled, except every
// signal_every-th whose entry is hidden when it succeeds, so unsignaled work never fills the
// send queue. A failed request always makes an entry (WR-SILENT-01, FR-SILENT-02).
NTSTATUS post(Qp* qp, Slot* s, ibv_send_wr& wr, ULONG flags, bool force_signal = false) {
    wr.wr_id = reinterpret_cast<uintptr_t>(s);
    wr.next = nullptr;
    if (!(flags & NDK_OP_FLAG_SILENT_SUCCESS) || s->override_status != STATUS_SUCCESS) {
        wr.send_flags |= IBV_SEND_SIGNALED;
        qp->unsignaled_run = 0;
    } else {
        s->silent = 1;
        if (force_signal || ++qp->unsignaled_run >= qp->signal_every) {
            wr.send_flags |= IBV_SEND_SIGNALED;
            qp->unsignaled_run = 0;
        }
    }
    if (flags & NDK_OP_FLAG_READ_FENCE) wr.send_flags |= IBV_SEND_FENCE;  // WR-FENCE-01
    device_release(s);  // the slot is complete: from here on the device may hand it back
    Rings* r = qp->rings;
    ++r->send_tail;
    // DEFER-02: a hint; held back up to kMaxDefer requests. Inline data is taken now (SGE-06).
    if ((flags & NDK_OP_FLAG_DEFER) && !(wr.send_flags & IBV_SEND_INLINE) &&
        qp->defer_count < Qp::kMaxDefer &&
        static_cast<uint32_t>(wr.num_sge) <= qp->device_send_sge) {
        unsigned k = qp->defer_count++;
        ibv_send_wr& held = qp->defer_wr[k];
        held = wr;
        ibv_sge* sges = qp->defer_sge + k * qp->device_send_sge;
        if (wr.num_sge > 0) std::memcpy(sges, wr.sg_list, sizeof(ibv_sge) * wr.num_sge);
        held.sg_list = sges;
        if (k > 0) qp->defer_wr[k - 1].next = &held;
        return STATUS_SUCCESS;
    }
    // DEFER-07: the held requests go with this one, before it.
    if (int rc = post_chain(qp, &wr); rc != 0) {
        --r->send_tail;
        return refused_by_device(rc);
    }
    return STATUS_SUCCESS;
}

// The completion of work done outside the device (fast registration, invalidation of a
// fast-registered MR, our own verdicts): a request that does nothing, completing in order with
// the QP's other requests and flushed with them (FLS-02). Where the device has windows it binds
// the PD's type 1 marker window to nothing (length 0, its key unchanged, so a flushed one leaves
// nothing to repair): local, so it succeeds while the peer's QP is in error (WR-SILENT-01,
// FR-ST-01). Otherwise a zero-length RDMA WRITE (no key is checked for zero bytes, IB C9-88),
// which waits for the peer's acknowledgement. (Not the local invalidation of a free type 2
// window: rxe, kernel 6.1, dereferences the window's null MR there and panics, README.md.)
NTSTATUS post_marker(Qp* qp, Slot* s, ULONG flags, bool force_signal = false) {
    ibv_send_wr wr = marker_request(qp);
    return post(qp, s, wr, flags & ~NDK_OP_FLAG_INLINE, force_signal);
}

inline bool connected(const Qp* qp) {
    return qp->conn.load(std::memory_order_acquire) == Conn::connected;
}

// Send, SendAndInvalidate, Read, Write: the data requests.
NTSTATUS post_data(Qp* qp, void* context, const NDK_SGE* sgl, ULONG count, ULONG flags,
                   ibv_wr_opcode opcode, NDK_OPERATION_TYPE type, uint64_t remote_address,
                   uint32_t remote_token, uint32_t invalidate_token) {
    if (!connected(qp))
        return refuse(qp, STATUS_CONNECTION_INVALID);  // SND-02, WRT-02, RD-04, SAI-04
    Adapter* a = qp->life.adapter;
    ibv_send_wr wr{};
    wr.opcode = opcode;
    wr.sg_list = as_ibv(sgl);  // the same layout: no copy
    wr.num_sge = static_cast<int>(count);
    uint64_t total = 0;
    for (ULONG k = 0; k < count; ++k)
        total += sgl[k].Length;
    if (total > a->info.MaxTransferLength)
        return refuse(qp, STATUS_INVALID_PARAMETER);  // SGE-12, AMB-26
    ibv_sge merged;
    ibv_sge scratch[kScratchSges];
    alignas(16) unsigned char bounce[1024];
    bool is_inline =
        (flags & NDK_OP_FLAG_INLINE) && opcode != IBV_WR_RDMA_READ;  // AMB-13: writes too
    if (is_inline) {
        // SGE-03/08/09: tokens ignored; the total within InlineDataSize; any SGE count.
        if (total > qp->inline_size) return refuse(qp, STATUS_INVALID_PARAMETER);
        wr.send_flags |= IBV_SEND_INLINE;
        if (count > qp->device_send_sge && total <= sizeof bounce) {
            size_t at = 0;
            for (ULONG k = 0; k < count; ++k) {
                std::memcpy(bounce + at, sgl[k].VirtualAddress, sgl[k].Length);  // SGE-06, SGE-07
                at += sgl[k].Length;
            }
            merged = {reinterpret_cast<uintptr_t>(bounce), static_cast<uint32_t>(total), 0};
            wr.sg_list = &merged;
            wr.num_sge = 1;
        }
    } else {
        uint32_t limit = opcode == IBV_WR_RDMA_READ ? qp->max_read_sge : qp->max_send_sge;
        if (count > limit) return refuse(qp, STATUS_INVALID_PARAMETER);  // SGE-04, SGE-11, AMB-26
        wr.sg_list = device_sges(a, sgl, count, scratch);
    }
    if (opcode == IBV_WR_RDMA_READ || opcode == IBV_WR_RDMA_WRITE) {
        wr.wr.rdma.remote_addr = remote_address;  // RD-01, WRT-01: VA-based, host byte order
        wr.wr.rdma.rkey = remote_token;           // TOK-03
    }
    if (opcode == IBV_WR_SEND_WITH_INV) wr.invalidate_rkey = invalidate_token;            // SAI-01
    if (flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT) wr.send_flags |= IBV_SEND_SOLICITED;  // SND-04
    Slot* s = take_send_slot(qp);
    if (!s) return refuse(qp, STATUS_INSUFFICIENT_RESOURCES);  // beyond the queue depth
    s->request_context = context;
    s->type = static_cast<uint16_t>(type);
    NTSTATUS status = post(qp, s, wr, flags);
    if (status != STATUS_SUCCESS) flush_deferred(qp);
    return status;
}

}  // namespace

NTSTATUS verbs_send(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, ULONG flags) {
    return post_data(self<Qp>(qp), context, sgl, count, flags, IBV_WR_SEND, NdkOperationTypeSend, 0,
                     0, 0);
}

NTSTATUS verbs_send_and_invalidate(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count,
                                   ULONG flags, UINT32 remote_token) {
    // CQ-RES-06: the sender's entry is a Send.
    return post_data(self<Qp>(qp), context, sgl, count, flags, IBV_WR_SEND_WITH_INV,
                     NdkOperationTypeSend, 0, 0, remote_token);
}

NTSTATUS verbs_read(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count,
                    UINT64 remote_address, UINT32 remote_token, ULONG flags) {
    // RD-07: RDMA_READ_LOCAL_INVALIDATE is not supported here and so is ignored.
    return post_data(self<Qp>(qp), context, sgl, count, flags & ~NDK_OP_FLAG_INLINE,
                     IBV_WR_RDMA_READ, NdkOperationTypeRead, remote_address, remote_token, 0);
}

NTSTATUS verbs_write(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count,
                     UINT64 remote_address, UINT32 remote_token, ULONG flags) {
    return post_data(self<Qp>(qp), context, sgl, count, flags, IBV_WR_RDMA_WRITE,
                     NdkOperationTypeWrite, remote_address, remote_token, 0);
}

NTSTATUS verbs_receive(NDK_QP* ndk, PVOID context, const NDK_SGE* sgl, ULONG count) {
    Qp* qp = self<Qp>(ndk);
    if (qp->srq)
        return STATUS_INVALID_DEVICE_REQUEST;  // the QP's receives come from its SRQ (ours)
    if (count > qp->max_recv_sge) return STATUS_INVALID_PARAMETER;             // SGE-10, AMB-26
    if (qp->flushed.load(std::memory_order_acquire)) return STATUS_CANCELLED;  // MODEL-FLS-01
    Rings* r = qp->rings;
    uint32_t t = r->recv_tail;
    if (t - r->recv_head.load(std::memory_order_acquire) >= r->recv_size)
        return STATUS_INSUFFICIENT_RESOURCES;
    Slot* s = &r->recv[t % r->recv_size];
    s->index = t;
    s->request_context = context;
    ibv_recv_wr wr{};
    wr.wr_id = reinterpret_cast<uintptr_t>(s);
    ibv_sge scratch[kScratchSges];
    wr.sg_list = device_sges(qp->life.adapter, sgl, count, scratch);
    wr.num_sge = static_cast<int>(count);
    ibv_recv_wr* bad = nullptr;
    r->recv_tail = t + 1;
    device_release(s);
    if (int rc = ibv_post_recv(qp->qp, &wr, &bad); rc != 0) {
        r->recv_tail = t;
        return refused_by_device(rc);
    }
    return STATUS_SUCCESS;  // RCV-01: also before the QP is connected
}

// ---------------------------------------------------------------- NdkFastRegister

namespace {

// NdkFastRegister of a cached MR (Mr::cached; README "Fast registration"). The registration
// (local rights and MW_BIND) is the one parked by the last NdkInvalidate when it was made of the
// same pages, offset, length, address and local rights; otherwise the pages are registered and
// the parked one is deregistered when this request's completion is reaped (after every request
// posted before it). The request binds the MR's type 1 window over the region with the remote
// rights and a new key (the remote token); the local token is a new generation of the MR's
// provider token (FR-TOK-01/02: both exist when the call returns).
NTSTATUS fast_register_cached(Qp* qp, Slot* s, Mr* mr, const PFN_NUMBER* pfns, ULONG page_count,
                              ULONG fbo, SIZE_T length, uint64_t base, ULONG flags) {
    Adapter* a = qp->life.adapter;
    int access = op_access(flags, true);
    int remote = access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
    int local = (access & ~remote) | IBV_ACCESS_MW_BIND;
    Registration* r = nullptr;
    Registration* evicted = nullptr;
    {
        std::lock_guard lock(a->mutex);
        if (mr->parked && mr->parked->same(pfns, page_count, fbo, length, base, local))
            r = std::exchange(mr->parked, nullptr);  // a hit: nothing to map or register
        else
            evicted = std::exchange(mr->parked, nullptr);
    }
    const bool hit = r != nullptr;
    if (!hit) {
        r = mr->alias.map(a->memory.MemFd, pfns, page_count)
                ? register_alias(mr->pd->pd, mr->alias.base, fbo, length, base, local)
                : nullptr;
        if (!r) {  // arguments checked: the device could not take it (MODEL-WR-RES-01)
            int e = errno;
            std::lock_guard lock(a->mutex);
            mr->parked = evicted;
            return refuse(qp, refused_by_device(e));
        }
        r->pfns.assign(pfns, pfns + page_count);
        r->fbo = fbo;
        r->access = local;
    }
    Mr::Phase before = mr->phase.load();
    uint8_t gen = ++mr->token_gen;
    mr->current.store(r);
    a->fr_tokens[mr->token_slot].store(Adapter::fr_entry(gen, r->mr->lkey),
                                       std::memory_order_release);
    mr->lkey.store(Adapter::fr_token(mr->token_slot, gen));  // FR-TOK-02
    mr->fr_flags = flags;
    mr->phase.store(Mr::Phase::fast_registered);
    // Set before the post: its completion may be reaped before this call returns.
    const uint32_t old_key = mr->cache_window->rkey;
    const uint32_t rkey = ibv_inc_rkey(old_key);
    s->rollback_mr = mr;
    s->rollback_registration = r;
    s->rollback_window_key = old_key;
    s->cached = 1;
    s->retire.store(evicted);  // deregistered when reaped: hence signaled (entry hidden if silent)
    ibv_send_wr wr =
        bind_request(mr->cache_window, rkey, r->mr, base, length, static_cast<unsigned>(remote));
    // Not held back (DEFER is a hint): ibv_mw.rkey changes below (see verbs_bind).
    NTSTATUS status =
        post(qp, s, wr, flags & ~(NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER), evicted != nullptr);
    if (status != STATUS_SUCCESS) {  // refused inline: nothing in force, no entry (FR-ST-04)
        s->rollback_mr = nullptr;
        s->cached = 0;
        s->retire.store(nullptr);
        a->fr_tokens[mr->token_slot].store(0, std::memory_order_release);
        --mr->token_gen;  // IFR-TOK-01: the next registration takes the token reported (lkey)
        mr->current.store(nullptr);
        mr->phase.store(before);
        std::lock_guard lock(a->mutex);
        if (hit) {
            mr->parked = r;
        } else {
            mr->parked = evicted;
            delete r;
        }
        return refuse(qp, status);
    }
    mr->cache_window->rkey = rkey;  // the library names the window by it in the next bind
    mr->rkey.store(rkey);
    return STATUS_SUCCESS;
}

// NdkInvalidate of a cached, fast-registered MR: INV-01 for the local token at once (posts made
// from now on translate it to nothing, device_sges); for the remote token by the request, which
// binds the window to nothing with a new key, in order with the QP's other requests. The
// registration is parked for the next NdkFastRegister, still reachable by requests posted
// before this one.
NTSTATUS invalidate_cached(Qp* qp, Slot* s, Mr* mr, ULONG flags) {
    Adapter* a = qp->life.adapter;
    Registration* r = mr->current.exchange(nullptr);
    a->fr_tokens[mr->token_slot].store(0, std::memory_order_release);
    mr->phase.store(Mr::Phase::invalidated);
    {
        std::lock_guard lock(a->mutex);
        delete std::exchange(mr->parked, r);  // none: parked only while invalidated
    }
    const uint32_t old_key = mr->cache_window->rkey;
    const uint32_t rkey = ibv_inc_rkey(old_key);
    s->restore_mr = mr;  // a flushed invalidation is undone (roll_back_cached_invalidate)
    s->rollback_registration = r;
    s->rollback_window_key = old_key;
    s->cached = 1;
    ibv_send_wr wr = bind_request(mr->cache_window, rkey, r->mr, r->iova, 0, 0);  // to nothing
    NTSTATUS status =
        post(qp, s, wr, flags & ~(NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER), /*force_signal=*/true);
    if (status != STATUS_SUCCESS) {
        s->restore_mr = nullptr;
        s->cached = 0;
        {
            std::lock_guard lock(a->mutex);
            mr->parked = nullptr;
        }
        mr->current.store(r);
        a->fr_tokens[mr->token_slot].store(Adapter::fr_entry(mr->token_gen, r->mr->lkey),
                                           std::memory_order_release);
        mr->phase.store(Mr::Phase::fast_registered);
        flush_deferred(qp);
        return status;
    }
    mr->cache_window->rkey = rkey;
    return STATUS_SUCCESS;
}

}  // namespace
//
// User-space verbs has no fast-register work request. The registration is made at the call: the
// LAM's pages are mapped contiguously from the arena memfd and registered with ibv_reg_mr_iova at
// BaseVirtualAddress (zero-based included), so the new tokens exist when the call returns
// (FR-TOK-01). The completion duties of an initiator request are kept with a zero-length marker
// write queued with the QP's other requests: one entry in order, none on SILENT_SUCCESS success
// (FR-SILENT-01), none when refused inline (FR-ST-04).
NTSTATUS verbs_fast_register(NDK_QP* ndk, PVOID context, NDK_MR* ndk_mr, ULONG page_count,
                             const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length,
                             PVOID base_virtual_address, ULONG flags) {
    Qp* qp = self<Qp>(ndk);
    Mr* mr = self<Mr>(ndk_mr);
    Adapter* a = qp->life.adapter;
    if (!connected(qp)) return refuse(qp, STATUS_CONNECTION_INVALID);  // FR-ST-02
    if (!mr || !same_adapter(&mr->life, &qp->life))
        return refuse(qp, STATUS_INVALID_PARAMETER);  // AMB-28
    Mr::Phase phase = mr->phase.load();
    if (!mr->fast_register ||
        (phase != Mr::Phase::initialized && phase != Mr::Phase::fast_registered &&
         phase != Mr::Phase::invalidated))
        return refuse(qp, STATUS_INVALID_DEVICE_STATE);  // FR-MR-01, IFR-POST-01 (AMB-16)
    // FR-ACC-01/02: a remote right is the 0x8 or the 0x20 bit, never 0x10 alone.
    if (!mr->remote_access &&
        (flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT)))
        return refuse(qp, STATUS_ACCESS_VIOLATION);
    // FR-APC-02, AMB-09, FR-FBO-02, FR-LEN-02, FR-ALIGN-01/03 (AMB-29: inline INVALID_PARAMETER).
    uint64_t base = reinterpret_cast<uint64_t>(base_virtual_address);
    if (page_count == 0 || page_count > mr->max_pages || !pages || fbo >= PAGE_SIZE ||
        length == 0 || length > uint64_t{page_count} * PAGE_SIZE - fbo ||
        (base & (PAGE_SIZE - 1)) != fbo)
        return refuse(qp, STATUS_INVALID_PARAMETER);
    // FR-PAGE-01/02, FR-LAM-01: logical addresses of our LAMs, in array order.
    PFN_NUMBER small[64];
    std::vector<PFN_NUMBER> large;
    PFN_NUMBER* pfns = small;
    if (page_count > 64) {
        large.resize(page_count);
        pfns = large.data();
    }
    for (ULONG k = 0; k < page_count; ++k)
        if (!a->pfn_of(static_cast<uint64_t>(pages[k].QuadPart), pfns[k]))
            return refuse(qp, STATUS_INVALID_PARAMETER);
    Slot* s = take_send_slot(qp);
    if (!s) return refuse(qp, STATUS_INSUFFICIENT_RESOURCES);
    s->request_context = context;
    s->type = NdkOperationTypeFastRegister;  // FR-RES-01
    if (mr->pd != qp->pd) {
        s->override_status = STATUS_ACCESS_VIOLATION;  // AMB-28: another PD, a protection error
    } else if (phase == Mr::Phase::fast_registered) {
        s->override_status =
            STATUS_INVALID_DEVICE_STATE;  // AMB-30: not invalidated (profile: completion error)
    } else if (mr->cached()) {
        return fast_register_cached(qp, s, mr, pfns, page_count, fbo, length, base, flags);
    } else {
        int access = op_access(flags, a->attr.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
        int remote = access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
        // With remote rights and a window: the region gets local rights only, the window the
        // remote ones (SAI-01: the window's key can be invalidated by a peer).
        bool windowed = remote && mr->fr_window && !mr->fr_window_bound.load();
        Registration* r =
            mr->alias.map(a->memory.MemFd, pfns, page_count)
                ? register_alias(mr->pd->pd, mr->alias.base, fbo, length, base,
                                 windowed ? (access & ~remote) | IBV_ACCESS_MW_BIND : access)
                : nullptr;
        if (!r)  // arguments checked above: the device could not take it (MODEL-WR-RES-01)
            return refuse(qp, refused_by_device(errno));
        Mr::Phase before = phase;
        delete mr->current.exchange(r);  // nothing was in force (initialized or invalidated)
        mr->lkey.store(r->mr->lkey);     // FR-TOK-02
        mr->fr_flags = flags;
        mr->phase.store(Mr::Phase::fast_registered);
        s->rollback_mr = mr;
        s->rollback_registration = r;
        if (windowed) {
            // The request itself binds the window (in order with the QP's other requests): its
            // completion is the fast registration's.
            uint32_t rkey = ibv_inc_rkey(mr->fr_window->rkey);
            ibv_send_wr wr = bind_request(mr->fr_window, rkey, r->mr, base, length,
                                          static_cast<unsigned>(remote));
            // Not held back: ibv_mw.rkey changes below (see verbs_bind).
            NTSTATUS status = post(qp, s, wr, flags & ~(NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER));
            if (status != STATUS_SUCCESS) {  // refused inline: no registration, no entry (FR-ST-04)
                s->rollback_mr = nullptr;
                delete mr->current.exchange(nullptr);
                mr->lkey.store(0);
                mr->phase.store(before);
                return refuse(qp, status);
            }
            mr->fr_window->rkey = rkey;  // the library does not track it (rxe-notes)
            mr->rkey.store(rkey);        // FR-TOK-01: the window's key
            mr->fr_window_qp.store(qp);
            mr->fr_window_bound.store(true);
            return STATUS_SUCCESS;  // FR-ST-01
        }
        mr->rkey.store(r->mr->rkey);  // FR-TOK-01
    }
    // With SILENT_SUCCESS the marker is unsignaled: no entry when it succeeds (FR-SILENT-01),
    // a STATUS_CANCELLED one when the QP is in error and flushes it (FR-SILENT-02, FLS-02).
    NTSTATUS status = post_marker(qp, s, flags);
    if (status != STATUS_SUCCESS) flush_deferred(qp);
    return status;  // FR-ST-01
}

// ---------------------------------------------------------------- NdkBind

namespace {

// After a bind posted in slot `s`: the MR becomes the window's antecedent
// (LIFE-TREE-04: it waits for the window's close), and the slot remembers what to undo if the
// bind completes in error (roll_back_bind).
void bound_to(Adapter* a, Mw* mw, Mr* mr, Slot* s) {
    s->rollback_mw = mw;
    s->rollback_bind = ++mw->binds;
    s->rollback_bound_mr = mr;
    std::lock_guard lock(a->mutex);
    if (mw->bound_mr == mr) {
        ++mw->bound_mr_binds;
        return;
    }
    if (mw->bound_mr) {
        --mw->bound_mr->bound_windows;
        a->unlink_antecedent(&mw->life, &mw->bound_mr->life);
    }
    mw->bound_mr = mr;
    mw->bound_mr_binds = 1;
    ++mr->bound_windows;
    a->link_antecedent(&mw->life, &mr->life);
}

// What NdkBind does to a window (bound, through which QP, to which MR: roll_back_bind's
// inputs), applied before the device can complete the request, since a poller may reap its
// completion and roll a failed one back before NdkBind returns; undone if the post is refused
// inline. (Applied after the post, a poller could read the slot's rollback fields before they
// were written, and a rolled-back window was then marked bound again.)
class BindEffect {
  public:
    BindEffect(Adapter* a, Mw* mw)
        : a_(a),
          mw_(mw),
          bound_(mw->bound.load()),
          orphaned_(mw->orphaned.load()),
          bound_qp_(mw->bound_qp.load()) {
        std::lock_guard lock(a->mutex);
        bound_mr_ = mw->bound_mr;
        bound_mr_binds_ = mw->bound_mr_binds;
    }
    void apply(Mr* mr, Slot* s, Qp* through, bool orphaned) {
        mw_->bound.store(true);
        mw_->orphaned.store(orphaned);
        mw_->bound_qp.store(through);
        bound_to(a_, mw_, mr, s);
    }
    void undo() {
        --mw_->binds;
        {
            std::lock_guard lock(a_->mutex);
            if (Mr* now = mw_->bound_mr; now != bound_mr_) {
                if (now) {
                    --now->bound_windows;
                    a_->unlink_antecedent(&mw_->life, &now->life);
                }
                if (bound_mr_) {
                    ++bound_mr_->bound_windows;
                    a_->link_antecedent(&mw_->life, &bound_mr_->life);
                }
            }
            mw_->bound_mr = bound_mr_;
            mw_->bound_mr_binds = bound_mr_binds_;
        }
        mw_->bound.store(bound_);
        mw_->orphaned.store(orphaned_);
        mw_->bound_qp.store(bound_qp_);
    }

  private:
    Adapter* a_;
    Mw* mw_;
    bool bound_, orphaned_;
    Qp* bound_qp_;
    Mr* bound_mr_ = nullptr;
    int bound_mr_binds_ = 0;
};

}  // namespace

NTSTATUS verbs_bind(NDK_QP* ndk, PVOID context, NDK_MR* ndk_mr, NDK_MW* ndk_mw,
                    PVOID virtual_address, SIZE_T length, ULONG flags) {
    Qp* qp = self<Qp>(ndk);
    Mr* mr = self<Mr>(ndk_mr);
    Mw* mw = self<Mw>(ndk_mw);
    Adapter* a = qp->life.adapter;
    if (!connected(qp)) return refuse(qp, STATUS_CONNECTION_INVALID);  // BND-05
    if (!mr || !mw || !same_adapter(&mr->life, &qp->life) || !same_adapter(&mw->life, &qp->life))
        return refuse(qp, STATUS_INVALID_PARAMETER);  // AMB-28
    Mr::Phase phase = mr->phase.load();
    Registration* reg = mr->current.load();
    if ((phase != Mr::Phase::registered && phase != Mr::Phase::fast_registered) || !reg)
        return refuse(qp, STATUS_INVALID_DEVICE_STATE);  // BND-02 (AMB-16)
    // BND-06: a remote-write window needs an MR with local write.
    bool local_write =
        mr->fast_register
            ? (mr->fr_flags & (NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDKCT_OP_FLAG_REMOTE_WRITE_BIT))
            : (mr->flags & (NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDKCT_MR_FLAG_REMOTE_WRITE_BIT));
    if ((flags & NDKCT_OP_FLAG_REMOTE_WRITE_BIT) && !local_write)
        return refuse(qp, STATUS_ACCESS_VIOLATION);
    // AMB-20: [VirtualAddress, + Length) inside the MR's range (BND-03: only an index).
    uint64_t va = reinterpret_cast<uint64_t>(virtual_address);
    if (va < reg->iova || length > reg->length || va - reg->iova > reg->length - length ||
        length > a->info.MaxWindowSize)
        return refuse(qp, STATUS_INVALID_PARAMETER);  // BND-09 (MODEL-BND-01)
    Slot* s = take_send_slot(qp);
    if (!s) return refuse(qp, STATUS_INSUFFICIENT_RESOURCES);
    s->request_context = context;
    s->type = NdkOperationTypeBind;
    if (mr->pd != qp->pd || mw->pd != qp->pd || !mw->mw) {
        s->override_status = STATUS_ACCESS_VIOLATION;  // AMB-28: another PD, a protection error
        NTSTATUS status = post_marker(qp, s, flags);
        if (status != STATUS_SUCCESS) flush_deferred(qp);
        return status;
    }
    int access = 0;
    if (flags & NDK_OP_FLAG_ALLOW_REMOTE_READ) access |= IBV_ACCESS_REMOTE_READ;
    if (flags & NDKCT_OP_FLAG_REMOTE_WRITE_BIT) access |= IBV_ACCESS_REMOTE_WRITE;
    NTSTATUS status;
    uint32_t rkey;
    if (a->mw_type2) {
        // A type 2 window must be free to be bound again (rxe: IBV_WC_MW_BIND_ERR otherwise);
        // NDKPI simply rebinds, so a bound window is first invalidated by an internal request
        // chained before the bind (never reported; a failure there flushes the bind).
        orphan_window_bound_elsewhere(mw, qp);
        if (mw->bound.load() && !mw->orphaned.load()) {
            Slot* inv = s;
            inv->internal = 1;
            inv->request_context = nullptr;
            inv->type = NdkOperationTypeInvalidate;
            ibv_send_wr wr{};
            wr.opcode = IBV_WR_LOCAL_INV;
            wr.invalidate_rkey = mw->rkey.load();
            if (NTSTATUS st = post(qp, inv, wr, NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_DEFER);
                st != STATUS_SUCCESS)
                return refuse(qp, st);
            mw->bound.store(false);
            mw->bound_qp.store(nullptr);
            s = take_send_slot(qp);
            if (!s) return refuse(qp, STATUS_INSUFFICIENT_RESOURCES);
            s->request_context = context;
            s->type = NdkOperationTypeBind;
        }
        if (length == 0) {
            // BND-01 with Length 0: a window of no bytes, which reaches nothing. A type 2 window
            // cannot be bound to zero bytes (IB o10-37.2.40; rxe: IBV_WC_MW_BIND_ERR), and the
            // device window, free now, reaches nothing too: the bind is our marker alone.
            BindEffect effect(a, mw);
            effect.apply(mr, s, nullptr, true);  // bound in NDK terms; no device bind (AMB-31)
            status = post_marker(qp, s, flags);
            if (status != STATUS_SUCCESS) {
                effect.undo();
                return refuse(qp, status);
            }
            return STATUS_SUCCESS;
        }
        // Type 2: bound by a work request; the library does not track the new key (rxe-notes).
        rkey = ibv_inc_rkey(mw->rkey.load());
        ibv_send_wr wr =
            bind_request(mw->mw, rkey, reg->mr, va, length, static_cast<unsigned>(access));
        // Never held back (DEFER-02 makes DEFER a hint): the library reads the window's current
        // key from ibv_mw.rkey when the request reaches it, and that field takes the new key
        // right after this call; a held bind would name the new key as the current one and
        // fail with IBV_WC_MW_BIND_ERR. Earlier deferred requests still go first (DEFER-07).
        BindEffect effect(a, mw);
        effect.apply(mr, s, qp, false);
        status = post(qp, s, wr, flags & ~NDK_OP_FLAG_DEFER);
        if (status != STATUS_SUCCESS) {
            effect.undo();
            return refuse(qp, status);
        }
    } else {
        flush_deferred(qp);
        ibv_mw_bind bind{};
        bind.wr_id = reinterpret_cast<uintptr_t>(s);
        bind.send_flags = (flags & NDK_OP_FLAG_SILENT_SUCCESS) ? 0 : IBV_SEND_SIGNALED;
        if (flags & NDK_OP_FLAG_SILENT_SUCCESS) s->silent = 1;
        bind.bind_info = {reg->mr, va, length, static_cast<unsigned>(access)};
        BindEffect effect(a, mw);
        effect.apply(mr, s, qp, false);
        ++qp->rings->send_tail;
        device_release(s);
        if (ibv_bind_mw(qp->qp, mw->mw, &bind) != 0) {
            --qp->rings->send_tail;
            effect.undo();
            return refuse(qp, STATUS_INSUFFICIENT_RESOURCES);
        }
        rkey = mw->mw->rkey;
    }
    // The provider library names the window by ibv_mw.rkey in the next bind (rxe: a stale key
    // fails it with IBV_WC_MW_BIND_ERR), and does not update it itself (rxe-notes).
    mw->mw->rkey = rkey;
    mw->rkey.store(rkey);   // MW-02: readable once NdkBind returned
    return STATUS_SUCCESS;  // BND-01
}

// ---------------------------------------------------------------- NdkInvalidate

NTSTATUS verbs_invalidate(NDK_QP* ndk, PVOID context, NDK_OBJECT_HEADER* target, ULONG flags) {
    Qp* qp = self<Qp>(ndk);
    if (!connected(qp)) return refuse(qp, STATUS_CONNECTION_INVALID);  // INV-03
    if (!target || !same_adapter(life_of(target), &qp->life))
        return refuse(qp, STATUS_INVALID_PARAMETER);
    Slot* s = nullptr;
    if (target->ObjectType == NdkObjectTypeMr) {
        Mr* mr = self<Mr>(target);
        if (!mr->fast_register) return refuse(qp, STATUS_INVALID_DEVICE_STATE);  // INV-02 (AMB-16)
        if (!(s = take_send_slot(qp))) return refuse(qp, STATUS_INSUFFICIENT_RESOURCES);
        s->request_context = context;
        s->type = NdkOperationTypeInvalidate;
        if (mr->phase.load() == Mr::Phase::fast_registered && mr->cached())
            return invalidate_cached(qp, s, mr, flags);
        if (mr->phase.load() == Mr::Phase::fast_registered) {
            // INV-01, FR-INV-01: the registration is retired now and deregistered when this
            // request's completion is reaped, after every request posted before it. A window
            // exposing it is invalidated by the request itself (IBV_WR_LOCAL_INV, in order).
            s->retire.store(mr->current.exchange(nullptr));
            mr->phase.store(Mr::Phase::invalidated);
            bool windowed = mr->fr_window && mr->fr_window_bound.exchange(false);
            NTSTATUS status;
            if (windowed) {
                ibv_send_wr wr{};
                wr.opcode = IBV_WR_LOCAL_INV;
                wr.invalidate_rkey = mr->fr_window->rkey;
                status = post(qp, s, wr, flags & ~NDK_OP_FLAG_INLINE, true);
            } else {
                // A flushed invalidation is undone (roll_back_invalidate). Set before the post:
                // its completion may be reaped before this call returns.
                s->restore_mr = mr;
                status = post_marker(qp, s, flags, true);
            }
            if (status != STATUS_SUCCESS) {
                s->restore_mr = nullptr;
                mr->current.store(s->retire.exchange(nullptr));
                mr->phase.store(Mr::Phase::fast_registered);
                if (windowed) mr->fr_window_bound.store(true);
                flush_deferred(qp);
            } else if (windowed) {
                mr->fr_window_qp.store(nullptr);
            }
            return status;
        }
        s->override_status = STATUS_INVALID_DEVICE_STATE;  // CQ-RI-03, AMB-32: by completion
    } else if (target->ObjectType == NdkObjectTypeMw) {
        Mw* mw = self<Mw>(target);
        if (!(s = take_send_slot(qp))) return refuse(qp, STATUS_INSUFFICIENT_RESOURCES);
        s->request_context = context;
        s->type = NdkOperationTypeInvalidate;
        orphan_window_bound_elsewhere(mw, qp);  // INV-01: its old key reaches nothing now
        if (mw->bound.load() && !mw->orphaned.load() && qp->life.adapter->mw_type2) {
            ibv_send_wr wr{};
            wr.opcode = IBV_WR_LOCAL_INV;
            wr.invalidate_rkey = mw->rkey.load();
            NTSTATUS status = post(qp, s, wr, flags);
            if (status != STATUS_SUCCESS) return refuse(qp, status);
            mw->bound.store(false);  // INV-01
            mw->bound_qp.store(nullptr);
            return STATUS_SUCCESS;
        }
        if (mw->bound.load()) {  // orphaned (reaches nothing already) or a type 1 window
            mw->bound.store(false);
            mw->orphaned.store(false);
        } else {
            s->override_status = STATUS_INVALID_DEVICE_STATE;  // CQ-RI-03, AMB-32
        }
    } else {
        return refuse(qp, STATUS_INVALID_PARAMETER);
    }
    NTSTATUS status = post_marker(qp, s, flags);
    if (status != STATUS_SUCCESS) flush_deferred(qp);
    return status;
}

}  // namespace ndkct::adapters::verbs
