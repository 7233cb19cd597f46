// The split provider's PD, CQ, MR, MW, SRQ and QP tables, and how their parts come to node B.
#include <algorithm>

#include "split.hpp"

namespace ndkct::twonode {

// Every table's first entry closes the object.
struct AnyInner {
    NDK_OBJECT_HEADER Header;
    NDK_FN_CLOSE_OBJECT* const* Dispatch;
};

namespace {
void ignore_close(void*) {}
}  // namespace

// A split object's close: straight to A while it has no part on B; else both parts, the
// consumer's callback once both are closed (CLOSE-03 holds on each node).
NTSTATUS split_close(NDK_OBJECT_HEADER* header, NDK_FN_CLOSE_COMPLETION* completion,
                     PVOID context) {
    auto* o = reinterpret_cast<Obj*>(header);
    Adapter* ad = o->adapter;
    forget_listener(o);
    uint64_t b = o->b.load();
    if (!b) {
        auto* in = static_cast<AnyInner*>(o->a);
        if (!in) {
            // Its A part was retired (a QP accepted on B whose B part failed): nothing to close.
            return STATUS_SUCCESS;
        }
        return (*in->Dispatch)(&in->Header, completion, context);
    }
    Join* join = new_join(ad, nullptr, completion, context);
    bool pended = false;
    if (o->kind == Kind::listener && o->a) {
        // A listener's address stays held on A until B's listener (and the connectors it
        // accepted there) closed: as one listener's would (CONN-LST-01, CONN-LST-05).
        auto* in = static_cast<AnyInner*>(o->a);
        join->before_close_a = [in, join] {
            ++join->left;
            NTSTATUS st = (*in->Dispatch)(&in->Header, join_close_done, join);
            if (st != STATUS_PENDING) join->part_done(STATUS_SUCCESS);
        };
    } else if (auto* in = static_cast<AnyInner*>(o->a)) {
        ++join->left;
        NTSTATUS st = (*in->Dispatch)(&in->Header, join_close_done, join);
        if (st == STATUS_PENDING)
            pended = true;
        else
            --join->left;
    }
    try {
        Writer w;
        w.u64(b);
        w.u64(reinterpret_cast<uint64_t>(static_cast<Target*>(join)));
        ++join->left;
        Reader r(ad->need_peer().call(Op::close, w, join));
        NTSTATUS st = r.i32();
        if (st == STATUS_PENDING)
            pended = true;
        else
            --join->left;
    } catch (const PeerLost&) {
        --join->left;  // node B is gone, and with it everything it held
    }
    if (!pended && join->before_close_a) {
        // B's listener closed at once: A's part closes now, answering for both.
        join->before_close_a = nullptr;
        auto* in = static_cast<AnyInner*>(o->a);
        return (*in->Dispatch)(&in->Header, completion, context);
    }
    return join_finish(join, pended, STATUS_SUCCESS);
}

namespace {

// A call made on both parts of a materialized object, or on A alone.
template <typename CallA, typename CallB>
NTSTATUS both(Obj* o, NDK_FN_REQUEST_COMPLETION* completion, void* context, CallA call_a,
              CallB call_b) {
    Adapter* ad = o->adapter;
    if (!o->b.load()) return call_a(completion, context);
    Join* join = new_join(ad, completion, nullptr, context);
    bool pended = false;
    ++join->left;
    NTSTATUS st = call_a(completion ? join_request_done : nullptr, completion ? join : nullptr);
    if (st == STATUS_PENDING) {
        pended = true;
    } else {
        --join->left;
        if (!NT_SUCCESS(st)) return join_finish(join, false, st);  // B is not asked
    }
    NTSTATUS sb = STATUS_SUCCESS;
    try {
        ++join->left;
        sb = call_b(join);
        if (sb == STATUS_PENDING)
            pended = true;
        else
            --join->left;
    } catch (const PeerLost&) {
        --join->left;
        sb = STATUS_CONNECTION_ABORTED;
    }
    if (pended) return join_finish(join, true, NT_SUCCESS(sb) ? st : sb);
    return NT_SUCCESS(sb) ? st : sb;
}

uint64_t ctx_of(Target* t) {
    return reinterpret_cast<uint64_t>(t);
}

// ---- PD ----

NTSTATUS split_create_mr(NDK_PD* p, BOOLEAN fast, NDK_FN_CREATE_COMPLETION* completion,
                         PVOID context, NDK_MR** out) {
    auto* pd = as<Pd>(p);
    Adapter* ad = pd->adapter;
    auto* mr = ad->make<Mr>(Kind::mr, &kMrDispatch);
    mr->pd = pd;
    mr->fast = fast;
    {
        std::lock_guard lock(ad->mutex);
        pd->mrs.push_back(mr);
    }
    auto* in = inner<NDK_PD>(pd->a);
    return create_a(ad, mr, completion, context, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return in->Dispatch->NdkCreateMr(in, fast, cb, ctx,
                                                         reinterpret_cast<NDK_MR**>(made));
                    });
}

NTSTATUS split_create_mw(NDK_PD* p, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                         NDK_MW** out) {
    auto* pd = as<Pd>(p);
    Adapter* ad = pd->adapter;
    auto* mw = ad->make<Mw>(Kind::mw, &kMwDispatch);
    mw->pd = pd;
    {
        std::lock_guard lock(ad->mutex);
        pd->mws.push_back(mw);
    }
    auto* in = inner<NDK_PD>(pd->a);
    return create_a(ad, mw, completion, context, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return in->Dispatch->NdkCreateMw(in, cb, ctx,
                                                         reinterpret_cast<NDK_MW**>(made));
                    });
}

void srq_notified_a(void* ctx, NTSTATUS status) {
    auto* srq = static_cast<Srq*>(ctx);
    // Once the SRQ serves B, its A part holds nothing the consumer posts: its threshold
    // notifications are not the consumer's.
    if (srq->home.load() == Node::b && status == STATUS_SUCCESS) return;
    if (srq->notify) srq->notify(srq->notify_context, status);
}

NTSTATUS split_create_srq(NDK_PD* p, ULONG depth, ULONG max_sge, ULONG threshold,
                          NDK_FN_SRQ_NOTIFICATION_CALLBACK* notify, PVOID notify_context,
                          GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION* completion,
                          PVOID context, NDK_SRQ** out) {
    auto* pd = as<Pd>(p);
    Adapter* ad = pd->adapter;
    auto* srq = ad->make<Srq>(Kind::srq, &kSrqDispatch);
    srq->pd = pd;
    srq->depth = depth;
    srq->max_sge = max_sge;
    srq->threshold = threshold;
    srq->notify = notify;
    srq->notify_context = notify_context;
    auto* in = inner<NDK_PD>(pd->a);
    return create_a(ad, srq, completion, context, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return in->Dispatch->NdkCreateSrq(
                            in, depth, max_sge, threshold, notify ? srq_notified_a : nullptr, srq,
                            affinity, cb, ctx, reinterpret_cast<NDK_SRQ**>(made));
                    });
}

Qp* new_qp(Pd* pd, NDK_CQ* rcq, NDK_CQ* icq, NDK_SRQ* srq, PVOID context) {
    Adapter* ad = pd->adapter;
    auto* qp = ad->make<Qp>(Kind::qp, &kQpDispatch);
    qp->pd = pd;
    qp->receive_cq = rcq ? as<Cq>(rcq) : nullptr;
    qp->initiator_cq = icq ? as<Cq>(icq) : nullptr;
    qp->srq = srq ? as<Srq>(srq) : nullptr;
    qp->context = context;
    std::lock_guard lock(ad->mutex);
    ad->tags[&qp->a_tag] = {qp, Node::a};
    ad->tags[&qp->b_tag] = {qp, Node::b};
    return qp;
}

template <typename T>
T* inner_or_null(void* object) {
    return object ? static_cast<T*>(as<Obj>(object)->a) : nullptr;
}

NTSTATUS split_create_qp(NDK_PD* p, NDK_CQ* rcq, NDK_CQ* icq, PVOID context, ULONG rd, ULONG id,
                         ULONG rs, ULONG is, ULONG inline_size,
                         NDK_FN_CREATE_COMPLETION* completion, PVOID request, NDK_QP** out) {
    auto* pd = as<Pd>(p);
    auto* qp = new_qp(pd, rcq, icq, nullptr, context);
    qp->receive_depth = rd;
    qp->initiator_depth = id;
    qp->receive_sge = rs;
    qp->initiator_sge = is;
    qp->inline_size = inline_size;
    auto* in = inner<NDK_PD>(pd->a);
    return create_a(pd->adapter, qp, completion, request, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return in->Dispatch->NdkCreateQp(
                            in, inner_or_null<NDK_CQ>(rcq), inner_or_null<NDK_CQ>(icq), &qp->a_tag,
                            rd, id, rs, is, inline_size, cb, ctx, reinterpret_cast<NDK_QP**>(made));
                    });
}

NTSTATUS split_create_qp_with_srq(NDK_PD* p, NDK_CQ* rcq, NDK_CQ* icq, NDK_SRQ* srq, PVOID context,
                                  ULONG id, ULONG is, ULONG inline_size,
                                  NDK_FN_CREATE_COMPLETION* completion, PVOID request,
                                  NDK_QP** out) {
    auto* pd = as<Pd>(p);
    auto* qp = new_qp(pd, rcq, icq, srq, context);
    qp->initiator_depth = id;
    qp->initiator_sge = is;
    qp->inline_size = inline_size;
    auto* in = inner<NDK_PD>(pd->a);
    return create_a(pd->adapter, qp, completion, request, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return in->Dispatch->NdkCreateQpWithSrq(
                            in, inner_or_null<NDK_CQ>(rcq), inner_or_null<NDK_CQ>(icq),
                            inner_or_null<NDK_SRQ>(srq), &qp->a_tag, id, is, inline_size, cb, ctx,
                            reinterpret_cast<NDK_QP**>(made));
                    });
}

void split_privileged_token(NDK_PD* p, UINT32* token) {
    auto* pd = as<Pd>(p);
    auto* in = inner<NDK_PD>(pd->a);
    in->Dispatch->NdkGetPrivilegedMemoryRegionToken(in, token);
    if (token) note_token(pd->adapter, pd, Node::a, 2, *token);
}

// ---- CQ ----

NTSTATUS split_resize_cq(NDK_CQ* c, ULONG depth, NDK_FN_REQUEST_COMPLETION* completion,
                         PVOID context) {
    auto* cq = as<Cq>(c);
    auto* in = inner<NDK_CQ>(cq->a);
    return both(
        cq, completion, context,
        [&](NDK_FN_REQUEST_COMPLETION* cb, void* ctx) {
            NTSTATUS st = in->Dispatch->NdkResizeCq(in, depth, cb, ctx);
            if (NT_SUCCESS(st)) cq->depth = depth;
            return st;
        },
        [&](Join* join) {
            Writer w;
            w.u64(cq->b);
            w.u32(depth);
            w.u64(ctx_of(join));
            Reader r(cq->adapter->need_peer().call(Op::resize_cq, w, join));
            return static_cast<NTSTATUS>(r.i32());
        });
}

}  // namespace

void arm_part(Cq* cq, Node node, ULONG type) {
    if (node == Node::a) {
        auto* in = inner<NDK_CQ>(cq->a);
        in->Dispatch->NdkArmCq(in, type);
        return;
    }
    try {
        Writer w;
        w.u64(cq->b);
        w.u32(type);
        cq->adapter->need_peer().call(Op::arm_cq, w);
    } catch (const PeerLost&) {
    }
}

namespace {

int strength(ULONG type) {
    return type == NDK_CQ_NOTIFY_ANY ? 2 : type == NDK_CQ_NOTIFY_SOLICITED ? 1 : 0;
}

void split_arm_cq(NDK_CQ* c, ULONG type) {
    auto* cq = as<Cq>(c);
    bool arm[2] = {false, false};
    {
        std::lock_guard lock(cq->arm_mutex);
        // CQ-NOT-04: an arm made while the consumer's last one is outstanding leaves one arm of
        // the stronger type (what notified() judges a part's notification against).
        if (!cq->consumer_armed || strength(type) > strength(cq->consumer_type))
            cq->consumer_type = type;
        cq->consumer_armed = true;
        ++cq->generation;
        cq->taken_since_arm[0] = cq->taken_since_arm[1] = 0;
        bool parts[2] = {cq->a != nullptr, cq->b.load() != 0};
        for (int p = 0; p < 2; ++p) {
            if (!parts[p]) continue;
            // Without a part on B, every arm goes through (the provider's own arm semantics).
            // With one, a part still armed from before is armed again only for a stronger type
            // (CQ-NOT-09: errors < solicited < any).
            bool upgrade = strength(type) > strength(cq->part_type[p]);
            if (!cq->b.load() || !cq->part_armed[p] || upgrade) {
                arm[p] = true;
                cq->part_armed[p] = true;
                cq->part_type[p] = type;
                cq->part_generation[p] = cq->generation;
            }
        }
    }
    if (arm[0]) arm_part(cq, Node::a, type);
    if (arm[1]) arm_part(cq, Node::b, type);
}

// A result's QPContext back to the consumer's: false for an entry of a QP part that was retired
// (the QP moved to B when it was accepted there), which is dropped. A value that is no QP
// part's passes as it is (the oracle judges it).
bool consumer_context(Adapter* ad, void*& qp_context) {
    std::lock_guard lock(ad->mutex);
    auto it = ad->tags.find(qp_context);
    if (it == ad->tags.end()) return true;
    auto [qp, part] = it->second;
    if (part == Node::a && qp->home.load() == Qp::Home::b) return false;
    qp_context = qp->context;
    return true;
}

ULONG translate_results(Adapter* ad, NDK_RESULT_EX* r, ULONG n, Node node) {
    ULONG kept = 0;
    for (ULONG i = 0; i < n; ++i) {
        NDK_RESULT_EX e = r[i];
        if (!consumer_context(ad, e.QPContext)) continue;
        if (e.Type == NdkOperationTypeReceiveAndInvalidate)
            e.TypeSpecificCompletionOutput =
                canonical_of(ad, node, static_cast<UINT32>(e.TypeSpecificCompletionOutput));
        r[kept++] = e;
    }
    return kept;
}

}  // namespace

// Up to `max` entries of one part, QPContexts the consumer's. The A part's answer is returned
// as it is when it claims more than `max` (the oracle judges that).
ULONG poll_part(Cq* cq, Node node, NDK_RESULT_EX* out, ULONG max, bool ex) {
    Adapter* ad = cq->adapter;
    if (node == Node::a) {
        auto* in = inner<NDK_CQ>(cq->a);
        ULONG n;
        if (ex) {
            n = in->Dispatch->NdkGetCqResultsEx(in, out, max);
        } else {
            std::vector<NDK_RESULT> plain(max);
            n = in->Dispatch->NdkGetCqResults(in, plain.data(), max);
            for (ULONG i = 0; i < std::min(n, max); ++i) {
                out[i] = {};
                out[i].Status = plain[i].Status;
                out[i].BytesTransferred = plain[i].BytesTransferred;
                out[i].QPContext = plain[i].QPContext;
                out[i].RequestContext = plain[i].RequestContext;
            }
        }
        if (n > max) return n;
        n = translate_results(ad, out, n, Node::a);
        std::lock_guard lock(cq->arm_mutex);
        cq->taken_since_arm[0] += n;
        return n;
    }
    uint64_t b = cq->b.load();
    if (!b || max == 0 || !ad->peer || ad->peer->lost()) return 0;
    try {
        Peer& peer = ad->need_peer();
        Writer w;
        w.u64(b);
        w.u32(max);
        w.u8(ex ? 1 : 0);
        Reader r(peer.call(Op::poll, w));
        uint32_t got = r.u32();
        std::vector<NDK_RESULT_EX> theirs(std::min<uint32_t>(got, max));
        for (auto& e : theirs)
            r.raw(&e, sizeof e);
        peer.apply_changes(r);  // the bytes these completions (and others) landed on B
        ULONG k = translate_results(ad, theirs.data(), static_cast<ULONG>(theirs.size()), Node::b);
        std::copy_n(theirs.begin(), k, out);
        std::lock_guard lock(cq->arm_mutex);
        cq->taken_since_arm[1] += k;
        return k;
    } catch (const PeerLost&) {
        return 0;
    }
}

namespace {

ULONG poll(Cq* cq, NDK_RESULT_EX* out, ULONG max, bool ex) {
    Adapter* ad = cq->adapter;
    ULONG n = 0;
    {
        // Entries a notification made the split take first (Cq::notified).
        std::lock_guard lock(cq->held_mutex);
        while (n < max && !cq->held.empty()) {
            out[n++] = cq->held.front();
            cq->held.pop_front();
        }
    }
    ULONG from_a = poll_part(cq, Node::a, out + n, max - n, ex);
    if (from_a > max - n) return from_a;
    n += from_a;
    if (!cq->b.load() || !ad->peer || ad->peer->lost()) return n;
    if (n < max) {
        n += poll_part(cq, Node::b, out + n, max - n, ex);  // its reply brings B's bytes too
    } else {
        try {
            ad->need_peer().pull();  // what the completions returned landed on B
        } catch (const PeerLost&) {
        }
    }
    return n;
}

ULONG split_get_cq_results_ex(NDK_CQ* c, NDK_RESULT_EX* results, ULONG max) {
    auto* cq = as<Cq>(c);
    if (!cq->b.load() && !cq->adapter->has_peer()) {
        // Pass-through, but QPContext is the consumer's.
        auto* in = inner<NDK_CQ>(cq->a);
        ULONG n = in->Dispatch->NdkGetCqResultsEx(in, results, max);
        return n > max ? n : translate_results(cq->adapter, results, n, Node::a);
    }
    return poll(cq, results, max, true);
}

ULONG split_get_cq_results(NDK_CQ* c, NDK_RESULT* results, ULONG max) {
    auto* cq = as<Cq>(c);
    if (!cq->b.load() && !cq->adapter->has_peer()) {
        // Pass-through, but QPContext is the consumer's.
        auto* in = inner<NDK_CQ>(cq->a);
        ULONG n = in->Dispatch->NdkGetCqResults(in, results, max);
        if (n > max) return n;
        ULONG kept = 0;
        for (ULONG i = 0; i < n; ++i) {
            NDK_RESULT e = results[i];
            if (consumer_context(cq->adapter, e.QPContext)) results[kept++] = e;
        }
        return kept;
    }
    std::vector<NDK_RESULT_EX> ex(max);
    ULONG n = poll(cq, ex.data(), max, false);
    if (n > max) return n;
    for (ULONG i = 0; i < n; ++i) {
        results[i].Status = ex[i].Status;
        results[i].BytesTransferred = ex[i].BytesTransferred;
        results[i].QPContext = ex[i].QPContext;
        results[i].RequestContext = ex[i].RequestContext;
    }
    return n;
}

NTSTATUS split_control_moderation(NDK_CQ* c, ULONG interval, ULONG count) {
    auto* cq = as<Cq>(c);
    auto* in = inner<NDK_CQ>(cq->a);
    NTSTATUS st = in->Dispatch->NdkControlCqInterruptModeration(in, interval, count);
    if (NT_SUCCESS(st) && cq->b.load()) {
        try {
            Writer w;
            w.u64(cq->b);
            w.u32(interval);
            w.u32(count);
            cq->adapter->need_peer().call(Op::control_moderation, w);
        } catch (const PeerLost&) {
        }
    }
    return st;
}

// ---- MR ----

// Records what a registration left in force when its A part completes, then answers.
struct MrStep : Target {
    Mr* mr = nullptr;
    Mr::State state = Mr::State::none;
    NDK_FN_REQUEST_COMPLETION* completion = nullptr;
    void* context = nullptr;
    void on_event(Event, Reader&) override {}
};

void mr_step_done(void* ctx, NTSTATUS status) {
    auto* s = static_cast<MrStep*>(ctx);
    if (status == STATUS_SUCCESS) s->mr->state = s->state;
    if (s->completion) s->completion(s->context, status);
}

template <typename CallB>
NTSTATUS mr_call(Mr* mr, Mr::State after, NDK_FN_REQUEST_COMPLETION* completion, void* context,
                 const std::function<NTSTATUS(NDK_FN_REQUEST_COMPLETION*, void*)>& call_a,
                 CallB call_b) {
    Adapter* ad = mr->adapter;
    auto step = std::make_unique<MrStep>();
    step->mr = mr;
    step->state = after;
    auto* s = static_cast<MrStep*>(ad->keep(std::move(step)));
    NTSTATUS st = both(
        mr, completion, context,
        [&](NDK_FN_REQUEST_COMPLETION* cb, void* ctx) {
            s->completion = cb;
            s->context = ctx;
            NTSTATUS r = call_a(cb ? mr_step_done : nullptr, cb ? s : nullptr);
            if (r == STATUS_SUCCESS) mr->state = after;
            return r;
        },
        call_b);
    return st;
}

NTSTATUS split_register_mr(NDK_MR* m, MDL* mdl, SIZE_T length, ULONG flags,
                           NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    auto* mr = as<Mr>(m);
    auto* in = inner<NDK_MR>(mr->a);
    std::vector<uint8_t> chain;
    std::vector<PFN_NUMBER> pfns;
    if (mdl) {
        Writer w;
        put_mdl_chain(w, mdl);
        chain = std::move(w.buffer());
        for (const MDL* x = mdl; x; x = x->Next) {
            const PFN_NUMBER* p = MmGetMdlPfnArrayConst(x);
            pfns.insert(pfns.end(), p, p + MmGetMdlPageCount(x));
        }
    }
    NTSTATUS st = mr_call(
        mr, Mr::State::registered, completion, context,
        [&](NDK_FN_REQUEST_COMPLETION* cb, void* ctx) {
            return in->Dispatch->NdkRegisterMr(in, mdl, length, flags, cb, ctx);
        },
        [&](Join* join) {
            Peer& peer = mr->adapter->need_peer();
            peer.mirror().add(pfns);
            Writer w;
            w.u64(mr->b);
            w.raw(chain.data(), chain.size());
            w.u64(length);
            w.u32(flags);
            w.u64(ctx_of(join));
            Reader r(peer.call(Op::register_mr, w, join));
            return static_cast<NTSTATUS>(r.i32());
        });
    // What B's part is registered with when it is made later (materialize_mr): the registration
    // in force, so a refused call (a second NdkRegisterMr of a registered MR, say) leaves the
    // one before it. One that pends is taken as made (its failure leaves state unregistered).
    if (st == STATUS_SUCCESS || st == STATUS_PENDING) {
        mr->chain = std::move(chain);
        mr->pfns = std::move(pfns);
        mr->length = length;
        mr->flags = flags;
        mr->token_node = Node::a;
    }
    return st;
}

void refresh_b_tokens(Mr* mr) {
    Writer w;
    w.u64(mr->b);
    w.u8(0);
    Reader r(mr->adapter->need_peer().call(Op::tokens, w));
    mr->b_local = r.u32();
    mr->b_remote = r.u32();
}

NTSTATUS split_deregister_mr(NDK_MR* m, NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    auto* mr = as<Mr>(m);
    auto* in = inner<NDK_MR>(mr->a);
    return mr_call(
        mr, Mr::State::none, completion, context,
        [&](NDK_FN_REQUEST_COMPLETION* cb, void* ctx) {
            return in->Dispatch->NdkDeregisterMr(in, cb, ctx);
        },
        [&](Join* join) {
            Writer w;
            w.u64(mr->b);
            w.u64(ctx_of(join));
            Reader r(mr->adapter->need_peer().call(Op::deregister_mr, w, join));
            return static_cast<NTSTATUS>(r.i32());
        });
}

NTSTATUS split_initialize_fast_register_mr(NDK_MR* m, ULONG pages, BOOLEAN remote,
                                           NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    auto* mr = as<Mr>(m);
    auto* in = inner<NDK_MR>(mr->a);
    NTSTATUS st = mr_call(
        mr, Mr::State::initialized, completion, context,
        [&](NDK_FN_REQUEST_COMPLETION* cb, void* ctx) {
            return in->Dispatch->NdkInitializeFastRegisterMr(in, pages, remote, cb, ctx);
        },
        [&](Join* join) {
            Writer w;
            w.u64(mr->b);
            w.u32(pages);
            w.u8(remote ? 1 : 0);
            w.u64(ctx_of(join));
            Reader r(mr->adapter->need_peer().call(Op::initialize_fast_register_mr, w, join));
            return static_cast<NTSTATUS>(r.i32());
        });
    // As for NdkRegisterMr: a refused call leaves what B's part is made with later.
    if (st == STATUS_SUCCESS || st == STATUS_PENDING) {
        mr->fr_pages = pages;
        mr->fr_remote = remote;
    }
    return st;
}

UINT32 mr_token_from(Mr* mr, bool remote) {
    UINT32 v;
    if (mr->token_node == Node::b && mr->b.load()) {
        v = remote ? mr->b_remote : mr->b_local;
    } else {
        auto* in = inner<NDK_MR>(mr->a);
        v = remote ? in->Dispatch->NdkGetRemoteTokenFromMr(in)
                   : in->Dispatch->NdkGetLocalTokenFromMr(in);
    }
    note_token(mr->adapter, mr, mr->token_node, remote ? 1 : 0, v);
    return v;
}

UINT32 split_remote_token_mr(NDK_MR* m) {
    return mr_token_from(as<Mr>(m), true);
}

UINT32 split_local_token_mr(NDK_MR* m) {
    return mr_token_from(as<Mr>(m), false);
}

// ---- MW ----

UINT32 split_remote_token_mw(NDK_MW* m) {
    auto* mw = as<Mw>(m);
    UINT32 v;
    if (mw->token_node == Node::b && mw->b.load()) {
        v = mw->b_remote;
    } else {
        auto* in = inner<NDK_MW>(mw->a);
        v = in->Dispatch->NdkGetRemoteTokenFromMw(in);
    }
    note_token(mw->adapter, mw, mw->token_node, 1, v);
    return v;
}

// ---- SRQ ----

NTSTATUS split_modify_srq(NDK_SRQ* s, ULONG depth, ULONG threshold,
                          NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    auto* srq = as<Srq>(s);
    auto* in = inner<NDK_SRQ>(srq->a);
    return both(
        srq, completion, context,
        [&](NDK_FN_REQUEST_COMPLETION* cb, void* ctx) {
            NTSTATUS st = in->Dispatch->NdkModifySrq(in, depth, threshold, cb, ctx);
            if (NT_SUCCESS(st)) srq->depth = depth, srq->threshold = threshold;
            return st;
        },
        [&](Join* join) {
            Writer w;
            w.u64(srq->b);
            w.u32(depth);
            w.u32(threshold);
            w.u64(ctx_of(join));
            Reader r(srq->adapter->need_peer().call(Op::modify_srq, w, join));
            return static_cast<NTSTATUS>(r.i32());
        });
}

NTSTATUS srq_receive_on_b(Srq* srq, void* context, const NDK_SGE* sgl, ULONG n) {
    Adapter* ad = srq->adapter;
    auto sges = sges_on(ad, srq->pd, sgl, n, Node::b, false);
    Peer& peer = ad->need_peer();
    peer.push();
    Writer w;
    w.u64(srq->b);
    w.u64(reinterpret_cast<uint64_t>(context));
    put_sges(w, sges.data(), n, false);
    Reader r(peer.call(Op::srq_receive, w));
    return r.i32();
}

NTSTATUS split_srq_receive(NDK_SRQ* s, PVOID context, const NDK_SGE* sgl, ULONG n) {
    auto* srq = as<Srq>(s);
    if (srq->home.load() == Node::b) {
        try {
            return srq_receive_on_b(srq, context, sgl, n);
        } catch (const PeerLost&) {
            return STATUS_CONNECTION_ABORTED;
        }
    }
    auto* in = inner<NDK_SRQ>(srq->a);
    NTSTATUS st = in->Dispatch->NdkSrqReceive(in, context, sgl, n);
    if (st == STATUS_SUCCESS && sgl) {
        std::lock_guard lock(srq->receives_mutex);
        srq->receives.push_back({context, std::vector<NDK_SGE>(sgl, sgl + n)});
    }
    return st;
}

// ---- QP ----

void split_flush(NDK_QP* q) {
    auto* qp = as<Qp>(q);
    if (qp->node() == Node::b) {
        try {
            Writer w;
            w.u64(qp->b);
            qp->adapter->need_peer().call(Op::flush, w);
        } catch (const PeerLost&) {
        }
        return;
    }
    {
        std::lock_guard lock(qp->receives_mutex);
        qp->receives.clear();
    }
    auto* in = inner<NDK_QP>(qp->a);
    in->Dispatch->NdkFlush(in);
}

// A work request posted on node B: A's changed bytes first, then the request, translated.
NTSTATUS post_on_b(Qp* qp, Op op, void* context, const NDK_SGE* sgl, ULONG n, uint64_t address,
                   UINT32 token, ULONG flags) {
    Adapter* ad = qp->adapter;
    bool inline_data = (flags & NDK_OP_FLAG_INLINE) && op != Op::receive;
    auto sges = sges_on(ad, qp->pd, sgl, n, Node::b, inline_data);
    Peer& peer = ad->need_peer();
    peer.push();
    Writer w;
    w.u64(qp->b);
    w.u64(reinterpret_cast<uint64_t>(context));
    put_sges(w, sgl ? sges.data() : nullptr, sgl ? n : 0, inline_data);
    w.u64(address);
    w.u32(token);
    w.u32(flags);
    Reader r(peer.call(op, w));
    return r.i32();
}

template <typename OnA>
NTSTATUS post(Qp* qp, Op op, void* context, const NDK_SGE* sgl, ULONG n, uint64_t address,
              UINT32 remote_token, ULONG flags, OnA on_a) {
    Adapter* ad = qp->adapter;
    if (qp->node() == Node::b) {
        try {
            return post_on_b(qp, op, context, sgl, n, address,
                             token_on(ad, remote_token, Node::a, 1), flags);
        } catch (const PeerLost&) {
            return STATUS_CONNECTION_ABORTED;
        }
    }
    if (!ad->has_peer()) return on_a(sgl, remote_token);  // nothing on B: as it is
    bool inline_data = (flags & NDK_OP_FLAG_INLINE) && op != Op::receive;
    auto sges = sges_on(ad, qp->pd, sgl, n, Node::a, inline_data);
    UINT32 token = token_on(ad, remote_token, Node::b, 1);
    // The bytes the test wrote into B's memory in its view reach B before this request does:
    // what a read fetches, and what a write or send must not be overwritten by later.
    if (op != Op::receive) ad->peer->push(true);
    return on_a(sgl ? sges.data() : nullptr, token);
}

NTSTATUS split_send(NDK_QP* q, PVOID context, const NDK_SGE* sgl, ULONG n, ULONG flags) {
    auto* qp = as<Qp>(q);
    auto* in = inner<NDK_QP>(qp->a);
    return post(qp, Op::send, context, sgl, n, 0, 0, flags, [&](const NDK_SGE* s, UINT32) {
        return in->Dispatch->NdkSend(in, context, s, n, flags);
    });
}

NTSTATUS split_receive(NDK_QP* q, PVOID context, const NDK_SGE* sgl, ULONG n) {
    auto* qp = as<Qp>(q);
    auto* in = inner<NDK_QP>(qp->a);
    NTSTATUS st = post(qp, Op::receive, context, sgl, n, 0, 0, 0, [&](const NDK_SGE* s, UINT32) {
        return in->Dispatch->NdkReceive(in, context, s, n);
    });
    if (st == STATUS_SUCCESS && qp->home.load() == Qp::Home::unresolved && sgl) {
        // It may still move to B when accepted there: the receive goes with it.
        std::lock_guard lock(qp->receives_mutex);
        qp->receives.push_back({context, std::vector<NDK_SGE>(sgl, sgl + n)});
    }
    return st;
}

NTSTATUS split_read(NDK_QP* q, PVOID context, const NDK_SGE* sgl, ULONG n, UINT64 address,
                    UINT32 token, ULONG flags) {
    auto* qp = as<Qp>(q);
    auto* in = inner<NDK_QP>(qp->a);
    return post(qp, Op::read, context, sgl, n, address, token, flags,
                [&](const NDK_SGE* s, UINT32 t) {
                    return in->Dispatch->NdkRead(in, context, s, n, address, t, flags);
                });
}

NTSTATUS split_write(NDK_QP* q, PVOID context, const NDK_SGE* sgl, ULONG n, UINT64 address,
                     UINT32 token, ULONG flags) {
    auto* qp = as<Qp>(q);
    auto* in = inner<NDK_QP>(qp->a);
    return post(qp, Op::write, context, sgl, n, address, token, flags,
                [&](const NDK_SGE* s, UINT32 t) {
                    return in->Dispatch->NdkWrite(in, context, s, n, address, t, flags);
                });
}

NTSTATUS split_send_and_invalidate(NDK_QP* q, PVOID context, const NDK_SGE* sgl, ULONG n,
                                   ULONG flags, UINT32 token) {
    auto* qp = as<Qp>(q);
    auto* in = inner<NDK_QP>(qp->a);
    return post(qp, Op::send_and_invalidate, context, sgl, n, 0, token, flags,
                [&](const NDK_SGE* s, UINT32 t) {
                    return in->Dispatch->NdkSendAndInvalidate(in, context, s, n, flags, t);
                });
}

NTSTATUS split_bind(NDK_QP* q, PVOID context, NDK_MR* m, NDK_MW* w_, PVOID va, SIZE_T length,
                    ULONG flags) {
    auto* qp = as<Qp>(q);
    auto* mr = m ? as<Mr>(m) : nullptr;
    auto* mw = w_ ? as<Mw>(w_) : nullptr;
    if (qp->node() == Node::b && mr && mw) {
        Adapter* ad = qp->adapter;
        try {
            materialize_mr(ad, mr);
            materialize_mw(ad, mw);
            Writer w;
            w.u64(qp->b);
            w.u64(reinterpret_cast<uint64_t>(context));
            w.u64(mr->b);
            w.u64(mw->b);
            w.u64(reinterpret_cast<uint64_t>(va));
            w.u64(length);
            w.u32(flags);
            Reader r(ad->need_peer().call(Op::bind, w));
            NTSTATUS st = r.i32();
            mw->b_remote = r.u32();
            if (NT_SUCCESS(st)) mw->token_node = Node::b;
            return st;
        } catch (const PeerLost&) {
            return STATUS_CONNECTION_ABORTED;
        }
    }
    auto* in = inner<NDK_QP>(qp->a);
    NTSTATUS st = in->Dispatch->NdkBind(in, context, mr ? inner<NDK_MR>(mr->a) : nullptr,
                                        mw ? inner<NDK_MW>(mw->a) : nullptr, va, length, flags);
    if (NT_SUCCESS(st) && mw) mw->token_node = Node::a;
    return st;
}

NTSTATUS split_fast_register(NDK_QP* q, PVOID context, NDK_MR* m, ULONG count,
                             const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base,
                             ULONG flags) {
    auto* qp = as<Qp>(q);
    auto* mr = m ? as<Mr>(m) : nullptr;
    if (qp->node() == Node::b && mr) {
        Adapter* ad = qp->adapter;
        try {
            materialize_mr(ad, mr);
            Writer w;
            w.u64(qp->b);
            w.u64(reinterpret_cast<uint64_t>(context));
            w.u64(mr->b);
            w.u32(pages ? count : 0);
            for (ULONG i = 0; pages && i < count; ++i)
                w.u64(logical_on_b(ad, static_cast<uint64_t>(pages[i].QuadPart)));
            w.u32(fbo);
            w.u64(length);
            w.u64(reinterpret_cast<uint64_t>(base));
            w.u32(flags);
            Reader r(ad->need_peer().call(Op::fast_register, w));
            NTSTATUS st = r.i32();
            mr->b_local = r.u32();
            mr->b_remote = r.u32();
            if (NT_SUCCESS(st)) mr->token_node = Node::b;
            return st;
        } catch (const PeerLost&) {
            return STATUS_CONNECTION_ABORTED;
        }
    }
    auto* in = inner<NDK_QP>(qp->a);
    NTSTATUS st = in->Dispatch->NdkFastRegister(in, context, mr ? inner<NDK_MR>(mr->a) : nullptr,
                                                count, pages, fbo, length, base, flags);
    if (NT_SUCCESS(st) && mr) mr->token_node = Node::a;
    return st;
}

NTSTATUS split_invalidate(NDK_QP* q, PVOID context, NDK_OBJECT_HEADER* target, ULONG flags) {
    auto* qp = as<Qp>(q);
    auto* t = target ? reinterpret_cast<Obj*>(target) : nullptr;
    if (qp->node() == Node::b && t) {
        Adapter* ad = qp->adapter;
        try {
            if (t->kind == Kind::mr) materialize_mr(ad, static_cast<Mr*>(t));
            if (t->kind == Kind::mw) materialize_mw(ad, static_cast<Mw*>(t));
            Writer w;
            w.u64(qp->b);
            w.u64(reinterpret_cast<uint64_t>(context));
            w.u64(t->b);
            w.u32(flags);
            Reader r(ad->need_peer().call(Op::invalidate, w));
            return r.i32();
        } catch (const PeerLost&) {
            return STATUS_CONNECTION_ABORTED;
        }
    }
    auto* in = inner<NDK_QP>(qp->a);
    return in->Dispatch->NdkInvalidate(in, context,
                                       t ? static_cast<NDK_OBJECT_HEADER*>(t->a) : nullptr, flags);
}

}  // namespace

// ---- Making parts on B ----

void materialize_pd(Adapter* ad, Pd* pd) {
    std::lock_guard lock(ad->materialize);
    if (pd->b.load()) return;
    Waiter* waiter = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
    Writer w;
    w.u64(ctx_of(waiter));
    pd->b = create_on_b(ad, Op::create_pd, w, waiter);
}

namespace {
struct CqEvents : Target {
    Cq* cq;
    explicit CqEvents(Cq* c) : cq(c) {}
    void on_event(Event kind, Reader& r) override {
        if (kind == Event::cq_notification) cq->notified(Node::b, r.i32());
    }
};
struct SrqEvents : Target {
    Srq* srq;
    explicit SrqEvents(Srq* s) : srq(s) {}
    void on_event(Event kind, Reader& r) override {
        NTSTATUS st = r.i32();
        if (kind == Event::srq_notification && srq->notify) srq->notify(srq->notify_context, st);
    }
};
}  // namespace

ULONG poll_part(Cq* cq, Node node, NDK_RESULT_EX* out, ULONG max, bool ex);

// Takes what a part holds into the split's own list (returned by the next polls first).
size_t hold_from(Cq* cq, Node node) {
    NDK_VERSION v = cq->Header.Version;
    bool ex = v.Major > 1 || v.Minor >= 2;
    std::vector<NDK_RESULT_EX> got(64);
    ULONG n = poll_part(cq, node, got.data(), 64, ex);
    if (n > 64) n = 64;
    std::lock_guard lock(cq->held_mutex);
    cq->held.insert(cq->held.end(), got.begin(), got.begin() + n);
    return n;
}

void Cq::notified(Node node, NTSTATUS status) {
    int p = static_cast<int>(node);
    if (!b.load()) {
        // Alone on A, every notification goes through (the oracle judges them).
        {
            std::lock_guard lock(arm_mutex);
            part_armed[p] = false;
            consumer_armed = false;
        }
        deliver(status);
        return;
    }
    bool wanted, stale;
    ULONG type;
    {
        std::lock_guard lock(arm_mutex);
        part_armed[p] = false;
        wanted = consumer_armed;
        type = consumer_type;
        // Armed for an earlier arm of the consumer, which the other part answered: this
        // notification may be for an entry the consumer took before arming again (B's come over
        // the side channel, after the entry could be polled). Unless an entry of this part came
        // since the consumer's arm, it is not this arm's.
        stale = part_generation[p] != generation && taken_since_arm[p] == 0;
    }
    if (status == STATUS_SUCCESS) {
        if (!wanted) return;  // the other part answered this arm already
        // CQ-NOT-05: an ordinary notification never satisfies an NDK_CQ_NOTIFY_ERRORS arm. It
        // comes from a part still armed for an earlier, stronger arm of the consumer (a part
        // armed from before is not armed again for a weaker type): that arm is spent now, so
        // the part is armed for this one, which only the CQ's own error satisfies.
        if (type == NDK_CQ_NOTIFY_ERRORS) {
            {
                std::lock_guard lock(arm_mutex);
                if (!consumer_armed || consumer_type != NDK_CQ_NOTIFY_ERRORS) return;
                part_armed[p] = true;
                part_type[p] = NDK_CQ_NOTIFY_ERRORS;
                part_generation[p] = generation;
            }
            arm_part(this, node, NDK_CQ_NOTIFY_ERRORS);
            return;
        }
        // A stale one: the split looks. Entries there are taken into its own list (the next
        // polls return them first) and notified; none: the part is armed for this arm and
        // looked at once more (an entry between the two), else its own notification will come.
        if (stale && hold_from(this, node) == 0) {
            {
                std::lock_guard lock(arm_mutex);
                part_armed[p] = true;
                part_type[p] = type;
                part_generation[p] = generation;
            }
            arm_part(this, node, type);
            if (hold_from(this, node) == 0) return;
        }
    }
    {
        std::lock_guard lock(arm_mutex);
        if (status == STATUS_SUCCESS && !consumer_armed) return;
        consumer_armed = false;
    }
    deliver(status);
}

// CQ-NOT-03: a CQ's notification callbacks never run at once. A's come from its provider's
// thread, B's from the side channel's; a notification that arrives while the consumer's
// callback runs is queued and delivered by that thread after it returns (not by waiting: the
// callback may re-arm, and an arm of B's part needs the side channel's thread).
void Cq::deliver(NTSTATUS status) {
    {
        std::lock_guard lock(deliver_mutex);
        undelivered.push_back(status);
        if (delivering) return;
        delivering = true;
    }
    for (;;) {
        NTSTATUS next;
        {
            std::lock_guard lock(deliver_mutex);
            if (undelivered.empty()) {
                delivering = false;
                return;
            }
            next = undelivered.front();
            undelivered.pop_front();
        }
        if (notify) notify(notify_context, next);
    }
}

void materialize_cq(Adapter* ad, Cq* cq) {
    std::lock_guard lock(ad->materialize);
    if (cq->b.load()) return;
    if (!cq->events) cq->events = ad->keep(std::make_unique<CqEvents>(cq));
    Waiter* waiter = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
    Writer w;
    w.u32(cq->depth);
    w.u64(ctx_of(cq->events));
    w.u64(ctx_of(waiter));
    cq->b = create_on_b(ad, Op::create_cq, w, waiter);
    bool arm;
    ULONG type;
    {
        std::lock_guard al(cq->arm_mutex);
        arm = cq->consumer_armed;
        type = cq->consumer_type;
        if (arm) cq->part_armed[1] = true, cq->part_type[1] = type;
    }
    if (arm) arm_part(cq, Node::b, type);
}

void materialize_mr(Adapter* ad, Mr* mr) {
    std::lock_guard lock(ad->materialize);
    if (mr->b.load()) return;
    materialize_pd(ad, mr->pd);
    Peer& peer = ad->need_peer();
    Waiter* waiter = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
    Writer w;
    w.u64(mr->pd->b);
    w.u8(mr->fast ? 1 : 0);
    w.u64(ctx_of(waiter));
    uint64_t b = create_on_b(ad, Op::create_mr, w, waiter);
    // Its registration in force on A, made again on B.
    if (mr->state == Mr::State::registered && !mr->chain.empty()) {
        peer.mirror().add(mr->pfns);
        Waiter* done = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
        Writer r;
        r.u64(b);
        r.raw(mr->chain.data(), mr->chain.size());
        r.u64(mr->length);
        r.u32(mr->flags);
        r.u64(ctx_of(done));
        Reader rr(peer.call(Op::register_mr, r, done));
        NTSTATUS st = rr.i32();
        if (st == STATUS_PENDING && done->wait()) st = done->status;
        if (st != STATUS_SUCCESS)
            split_log("the registration of an MR on node B failed: 0x%08x",
                      static_cast<unsigned>(st));
    } else if (mr->state == Mr::State::initialized) {
        Waiter* done = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
        Writer r;
        r.u64(b);
        r.u32(mr->fr_pages);
        r.u8(mr->fr_remote ? 1 : 0);
        r.u64(ctx_of(done));
        Reader rr(peer.call(Op::initialize_fast_register_mr, r, done));
        NTSTATUS st = rr.i32();
        if (st == STATUS_PENDING && done->wait()) st = done->status;
        if (st != STATUS_SUCCESS)
            split_log("the fast-register MR's initialization on node B failed: 0x%08x",
                      static_cast<unsigned>(st));
    }
    mr->b = b;
    refresh_b_tokens(mr);
}

void materialize_mw(Adapter* ad, Mw* mw) {
    std::lock_guard lock(ad->materialize);
    if (mw->b.load()) return;
    materialize_pd(ad, mw->pd);
    Waiter* waiter = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
    Writer w;
    w.u64(mw->pd->b);
    w.u64(ctx_of(waiter));
    mw->b = create_on_b(ad, Op::create_mw, w, waiter);
    Writer t;
    t.u64(mw->b);
    t.u8(1);
    Reader r(ad->need_peer().call(Op::tokens, t));
    r.u32();
    mw->b_remote = r.u32();
}

void materialize_srq(Adapter* ad, Srq* srq) {
    std::lock_guard lock(ad->materialize);
    if (srq->b.load()) return;
    materialize_pd(ad, srq->pd);
    if (!srq->events) srq->events = ad->keep(std::make_unique<SrqEvents>(srq));
    Waiter* waiter = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
    Writer w;
    w.u64(srq->pd->b);
    w.u32(srq->depth);
    w.u32(srq->max_sge);
    w.u32(srq->threshold);
    w.u64(ctx_of(srq->events));
    w.u64(ctx_of(waiter));
    srq->b = create_on_b(ad, Op::create_srq, w, waiter);
    srq->home = Node::b;
    std::vector<PostedReceive> moved;
    {
        std::lock_guard rl(srq->receives_mutex);
        moved.swap(srq->receives);
    }
    for (auto& p : moved)
        srq_receive_on_b(srq, p.context, p.sgl.data(), static_cast<ULONG>(p.sgl.size()));
}

void materialize_qp(Adapter* ad, Qp* qp) {
    std::lock_guard lock(ad->materialize);
    if (qp->b.load()) return;
    materialize_pd(ad, qp->pd);
    if (qp->receive_cq) materialize_cq(ad, qp->receive_cq);
    if (qp->initiator_cq) materialize_cq(ad, qp->initiator_cq);
    if (qp->srq) materialize_srq(ad, qp->srq);
    Waiter* waiter = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
    Writer w;
    w.u64(qp->pd->b);
    w.u64(qp->receive_cq ? qp->receive_cq->b.load() : 0);
    w.u64(qp->initiator_cq ? qp->initiator_cq->b.load() : 0);
    w.u64(qp->srq ? qp->srq->b.load() : 0);
    w.u64(reinterpret_cast<uint64_t>(&qp->b_tag));
    w.u32(qp->receive_depth);
    w.u32(qp->initiator_depth);
    w.u32(qp->receive_sge);
    w.u32(qp->initiator_sge);
    w.u32(qp->inline_size);
    w.u64(ctx_of(waiter));
    qp->b = create_on_b(ad, Op::create_qp, w, waiter);
    // From now on the QP is B's: its A part is closed (what it held is flushed there and dropped
    // from A's CQs), and the receives posted on it so far are posted on B.
    qp->home = Qp::Home::b;
    ad->crossed = true;
    if (auto* in = static_cast<AnyInner*>(qp->a)) {
        qp->a = nullptr;
        (*in->Dispatch)(&in->Header, ignore_close, nullptr);
    }
    std::vector<PostedReceive> moved;
    {
        std::lock_guard rl(qp->receives_mutex);
        moved.swap(qp->receives);
    }
    for (auto& p : moved) {
        NTSTATUS st = post_on_b(qp, Op::receive, p.context, p.sgl.data(),
                                static_cast<ULONG>(p.sgl.size()), 0, 0, 0);
        if (st != STATUS_SUCCESS)
            split_log("a receive posted before the QP moved to node B was refused there: 0x%08x",
                      static_cast<unsigned>(st));
    }
}

void materialize_lams(Adapter* ad) {
    std::lock_guard lock(ad->materialize);
    std::vector<std::pair<const NDK_LOGICAL_ADDRESS_MAPPING*, Lam>> todo;
    {
        std::lock_guard l(ad->mutex);
        for (auto& [key, lam] : ad->lams)
            if (!lam.b) todo.emplace_back(key, lam);
    }
    if (todo.empty()) return;
    Peer& peer = ad->need_peer();
    for (auto& [key, lam] : todo) {
        peer.mirror().add(lam.pfns);
        Waiter* done = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
        Writer w;
        w.raw(lam.chain.data(), lam.chain.size());
        w.u64(lam.length);
        w.u32(static_cast<uint32_t>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(lam.pages_a.size() + 1)));
        w.u64(ctx_of(done));
        Reader r(peer.call(Op::build_lam, w, done));
        NTSTATUS st = r.i32();
        uint64_t handle = r.u64();
        r.u32();
        r.u32();
        uint32_t n = r.u32();
        std::vector<uint64_t> pages(n);
        for (auto& p : pages)
            p = r.u64();
        if (st == STATUS_PENDING && done->wait()) {
            st = done->status;
            pages = done->values;
        }
        if (st != STATUS_SUCCESS) {
            split_log("NdkBuildLAM on node B failed: 0x%08x", static_cast<unsigned>(st));
            continue;
        }
        std::lock_guard l(ad->mutex);
        auto it = ad->lams.find(key);
        if (it == ad->lams.end()) continue;
        it->second.b = handle;
        it->second.pages_b = pages;
        for (size_t i = 0; i < std::min(pages.size(), it->second.pages_a.size()); ++i)
            ad->logical_a_to_b[it->second.pages_a[i] & ~uint64_t(PAGE_SIZE - 1)] = pages[i];
    }
}

UINT32 privileged_on_b(Adapter* ad, Pd* pd) {
    std::lock_guard lock(ad->materialize);
    if (pd->have_b_privileged) return pd->b_privileged;
    materialize_pd(ad, pd);
    Writer w;
    w.u64(pd->b);
    Reader r(ad->need_peer().call(Op::privileged_token, w));
    pd->b_privileged = r.u32();
    pd->have_b_privileged = true;
    return pd->b_privileged;
}

// ---- Tables ----

const NDK_PD_DISPATCH kPdDispatch = {
    .NdkClosePd = split_close,
    .NdkQueryExtension = split_query_extension,
    .NdkCreateMr = split_create_mr,
    .NdkCreateMw = split_create_mw,
    .NdkCreateSrq = split_create_srq,
    .NdkCreateQp = split_create_qp,
    .NdkCreateQpWithSrq = split_create_qp_with_srq,
    .NdkGetPrivilegedMemoryRegionToken = split_privileged_token,
};

const NDK_CQ_DISPATCH kCqDispatch = {
    .NdkCloseCq = split_close,
    .NdkQueryExtension = split_query_extension,
    .NdkResizeCq = split_resize_cq,
    .NdkArmCq = split_arm_cq,
    .NdkGetCqResults = split_get_cq_results,
    .NdkControlCqInterruptModeration = split_control_moderation,
    .NdkGetCqResultsEx = split_get_cq_results_ex,
};

const NDK_MR_DISPATCH kMrDispatch = {
    .NdkCloseMr = split_close,
    .NdkQueryExtension = split_query_extension,
    .NdkRegisterMr = split_register_mr,
    .NdkDeregisterMr = split_deregister_mr,
    .NdkInitializeFastRegisterMr = split_initialize_fast_register_mr,
    .NdkGetRemoteTokenFromMr = split_remote_token_mr,
    .NdkGetLocalTokenFromMr = split_local_token_mr,
};

const NDK_MW_DISPATCH kMwDispatch = {
    .NdkCloseMw = split_close,
    .NdkQueryExtension = split_query_extension,
    .NdkGetRemoteTokenFromMw = split_remote_token_mw,
};

const NDK_QP_DISPATCH kQpDispatch = {
    .NdkCloseQp = split_close,
    .NdkQueryExtension = split_query_extension,
    .NdkFlush = split_flush,
    .NdkSend = split_send,
    .NdkReceive = split_receive,
    .NdkBind = split_bind,
    .NdkFastRegister = split_fast_register,
    .NdkInvalidate = split_invalidate,
    .NdkRead = split_read,
    .NdkWrite = split_write,
    .NdkSendAndInvalidate = split_send_and_invalidate,
};

const NDK_SRQ_DISPATCH kSrqDispatch = {
    .NdkCloseSrq = split_close,
    .NdkQueryExtension = split_query_extension,
    .NdkModifySrq = split_modify_srq,
    .NdkSrqReceive = split_srq_receive,
};

}  // namespace ndkct::twonode
