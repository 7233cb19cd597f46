// The model's machinery: objects, pending requests, closes, and the judge-then-advance loop.
// The rules of each NDK function are in rules_*.cpp.
#include "ndkct/model/model.hpp"

#include <algorithm>
#include <string_view>

namespace ndkct::model {

namespace {

// The object a call is made on (the first object parameter), for pending-request bookkeeping.
ObjectId primary_object(const Call& call) {
    return std::visit(
        [](const auto& c) -> ObjectId {
            if constexpr (requires { c.connector; })
                return c.connector;
            else if constexpr (requires { c.listener; })
                return c.listener;
            else if constexpr (requires { c.pd; })
                return c.pd;
            else if constexpr (requires { c.adapter; })
                return c.adapter;
            else if constexpr (requires { c.qp; })
                return c.qp;
            else if constexpr (requires { c.srq; })
                return c.srq;
            else if constexpr (requires { c.cq; })
                return c.cq;
            else if constexpr (requires { c.mr; })
                return c.mr;
            else if constexpr (requires { c.mw; })
                return c.mw;
            else
                return c.object;
        },
        call);
}

// CQP-LIFE-01, CQP-SRQ-06: NdkCreateQp's page makes a QP's PD, CQs and SRQ what the QP holds
// open. When an open QP is among an object's successors, the close that did not wait for it
// breaks that page's rule first, the generic CLOSE-02 beside it; nullptr when none is a QP.
const char* qp_successor_rule(const std::vector<Object>& objects, const Object& o) {
    if (o.kind != Kind::pd && o.kind != Kind::cq && o.kind != Kind::srq) return nullptr;
    for (const Object& s : objects)
        if (s.kind == Kind::qp && s.life != Life::closed &&
            (s.parent == o.id ||
             std::find(s.antecedents.begin(), s.antecedents.end(), o.id) != s.antecedents.end()))
            return o.kind == Kind::srq ? "CQP-SRQ-06" : "CQP-LIFE-01";
    return nullptr;
}

}  // namespace

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::adapter:
            return "adapter";
        case Kind::pd:
            return "PD";
        case Kind::cq:
            return "CQ";
        case Kind::qp:
            return "QP";
        case Kind::srq:
            return "SRQ";
        case Kind::mr:
            return "MR";
        case Kind::mw:
            return "MW";
        case Kind::lam:
            return "LAM";
        case Kind::connector:
            return "connector";
        case Kind::listener:
            return "listener";
        case Kind::shared_endpoint:
            return "shared endpoint";
    }
    return "?";
}

Model::Model(Readings readings, HostMemoryView memory, Mode mode)
    : readings_(std::move(readings)), memory_(memory), mode_(mode) {
    objects_.emplace_back();  // id 0 is "no object"
}

// ---- Objects ----

const Object* Model::require(Expectation& e, ObjectId id, Kind kind, const char* role) const {
    const Object* o = find(id);
    auto undefined = [&](RuleIds rules, std::string why) {
        e.undefined = true;
        for (auto& r : rules)
            e.undefined_rules.push_back(std::move(r));
        if (!e.undefined_why.empty()) e.undefined_why += "; ";
        e.undefined_why += why;
        return nullptr;
    };
    if (!o || o->kind != kind)
        return undefined({"GEN-CB-03"}, std::string(role) + " is not an open " + kind_name(kind));
    if (o->life == Life::closing || o->life == Life::closed)  // CLOSE-06
        return undefined({"CLOSE-06"}, std::string(role) + " is used after its close began");
    if (o->life == Life::creating)  // GEN-CREATE-01: the object exists once its creation completed
        return undefined({"GEN-CREATE-01"},
                         std::string(role) + " is used before its creation completed");
    return o;
}

ObjectId Model::create_object(Kind kind, ObjectId parent, ObjectState state,
                              std::vector<ObjectId> antecedents) {
    Object o;
    o.id = static_cast<ObjectId>(objects_.size());
    o.kind = kind;
    o.parent = parent;
    o.adapter = parent
                    ? (objects_[parent].kind == Kind::adapter ? parent : objects_[parent].adapter)
                    : o.id;
    o.life = Life::creating;
    o.antecedents = std::move(antecedents);
    o.state = std::move(state);
    // LIFE-TREE-01/02: a parent or antecedent cannot finish closing while this is open.
    if (parent) ++objects_[parent].open_successors;
    for (ObjectId a : o.antecedents)
        ++objects_[a].open_successors;
    objects_.push_back(std::move(o));
    ObjectId id = objects_.back().id;
    index_object(id);
    return id;
}

// ---- Indexes ----

namespace {

void erase_id(std::vector<ObjectId>& list, ObjectId id) {
    list.erase(std::remove(list.begin(), list.end(), id), list.end());
}

}  // namespace

void Model::set_token(ObjectId object, bool remote, std::optional<uint32_t> value) {
    Object* o = find_mutable(object);
    if (!o) return;
    std::optional<uint32_t>* slot = nullptr;
    if (auto* mr = std::get_if<MrState>(&o->state))
        slot = remote ? &mr->remote_token : &mr->local_token;
    else if (auto* mw = std::get_if<MwState>(&o->state); mw && remote)
        slot = &mw->remote_token;
    if (!slot || *slot == value) return;
    auto* a = state_mut<AdapterState>(o->adapter);
    auto& index = remote ? a->remote_tokens : a->local_tokens;
    if (*slot) {
        auto it = index.find(**slot);
        if (it != index.end()) {
            erase_id(it->second, object);
            if (it->second.empty()) index.erase(it);
        }
    }
    *slot = value;
    // (An MR registered with a remote right: rxe gives one without any an rkey of 0, which
    // differs from its lkey without saying the keys are not one.)
    constexpr uint32_t remote_rights =
        NDK_MR_FLAG_ALLOW_REMOTE_READ |
        (NDK_MR_FLAG_ALLOW_REMOTE_WRITE & ~NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    if (auto* mr = std::get_if<MrState>(&o->state);
        mr && !mr->fast_register && (mr->flags & remote_rights) && mr->local_token &&
        mr->remote_token && *mr->local_token != *mr->remote_token)
        a->tokens_differ = true;
    if (value) {
        // RMR-DEREG-01: the value is held again. (By the same MR as its local token, it is kept:
        // a request through it that fails names RMR-TOK-01, the getter's stale token.)
        if (auto it = a->deregistered_tokens.find(*value);
            it != a->deregistered_tokens.end() && (remote || it->second != object))
            a->deregistered_tokens.erase(it);
        auto& holders = index[*value];
        // Kept in id order: with two holders of one value, the older object wins (as a scan
        // over the object table would find it first).
        holders.insert(std::upper_bound(holders.begin(), holders.end(), object), object);
    }
}

void Model::index_object(ObjectId id) {
    Object& o = objects_[id];
    if (auto* q = std::get_if<QpState>(&o.state)) {
        qps_.push_back(id);  // (indexed once, at creation)
        for (ObjectId cq : {q->receive_cq, q->initiator_cq})
            if (auto* c = state_mut<CqState>(cq);
                c && std::find(c->qps.begin(), c->qps.end(), id) == c->qps.end())
                c->qps.push_back(id);
        if (auto* s = state_mut<SrqState>(q->srq)) s->qps.push_back(id);
    } else if (auto* lam = std::get_if<LamState>(&o.state)) {
        auto* a = state_mut<AdapterState>(o.adapter);
        for (uint32_t i = 0; i < lam->logical_pages.size(); ++i)
            a->logical_pages[lam->logical_pages[i]].emplace_back(id, i);
    }
}

void Model::unindex_object(ObjectId id) {
    Object& o = objects_[id];
    if (auto* q = std::get_if<QpState>(&o.state)) {
        // CLOSE-03, FLS-01..03: the close flushed the QP, and the entries of its cancelled
        // requests stay in its CQs after the close: check mode keeps the QP in the CQ index
        // until they are retrieved (observe_completion drops it then).
        bool entries_left = !q->initiator_pending.empty() || !q->receive_pending.empty();
        if (!entries_left || mode_ != Mode::check)
            for (ObjectId cq : {q->receive_cq, q->initiator_cq})
                if (auto* c = state_mut<CqState>(cq)) erase_id(c->qps, id);
        if (auto* s = state_mut<SrqState>(q->srq)) erase_id(s->qps, id);
    } else if (auto* lam = std::get_if<LamState>(&o.state)) {
        auto* a = state_mut<AdapterState>(o.adapter);
        for (uint64_t page : lam->logical_pages) {
            auto it = a->logical_pages.find(page);
            if (it == a->logical_pages.end()) continue;
            std::erase_if(it->second, [&](const auto& entry) { return entry.first == id; });
            if (it->second.empty()) a->logical_pages.erase(it);
        }
    } else if (o.kind == Kind::mr || o.kind == Kind::mw) {
        auto* a = state_mut<AdapterState>(o.adapter);
        auto drop = [&](auto& index, const std::optional<uint32_t>& token) {
            if (!token) return;
            auto it = index.find(*token);
            if (it == index.end()) return;
            erase_id(it->second, id);
            if (it->second.empty()) index.erase(it);
        };
        if (auto* mr = std::get_if<MrState>(&o.state)) {
            drop(a->local_tokens, mr->local_token);
            drop(a->remote_tokens, mr->remote_token);
        } else if (auto* mw = std::get_if<MwState>(&o.state)) {
            drop(a->remote_tokens, mw->remote_token);
        }
    }
}

void Model::forget_closed_qp(ObjectId qp) {
    if (const auto* q = state_of<QpState>(qp))
        for (ObjectId cq : {q->receive_cq, q->initiator_cq})
            if (auto* c = state_mut<CqState>(cq)) erase_id(c->qps, qp);
}

void Model::ready(ObjectId id) {
    objects_[id].life = Life::ready;
}

void Model::destroy(ObjectId id) {
    Object& o = objects_[id];
    if (o.life == Life::closed) return;
    unindex_object(id);
    o.life = Life::closed;
    std::vector<ObjectId> released = o.antecedents;
    if (o.parent) released.push_back(o.parent);
    for (ObjectId a : released) {
        Object& up = objects_[a];
        if (up.open_successors > 0) --up.open_successors;
        finish_close(a);  // CLOSE-02: an antecedent whose close was pending may now finish
    }
}

void Model::finish_close(ObjectId id) {
    const Object* o = find(id);
    if (!o || !o->close_requested || o->life != Life::closing || o->open_successors != 0 ||
        o->pending_requests != 0 || mode_ != Mode::simulate)
        return;
    for (const auto& [pid, p] : pending_)
        if (p.object == id && std::holds_alternative<calls::CloseObject>(p.call))
            emit({Event::Kind::request_complete, id, 0, STATUS_SUCCESS, pid});
}

void Model::remove_edge(ObjectId successor, ObjectId antecedent) {
    Object* o = find_mutable(successor);
    if (!o) return;
    auto it = std::find(o->antecedents.begin(), o->antecedents.end(), antecedent);
    if (it == o->antecedents.end()) return;
    o->antecedents.erase(it);
    if (o->life == Life::closed) return;  // its close already released the edge
    Object& up = objects_[antecedent];
    if (up.open_successors > 0) --up.open_successors;
    finish_close(antecedent);
}

uint64_t Model::add_pending(const Call& call, const Expectation& e, ObjectId object,
                            ObjectId created) {
    // GEN-CB-02: nothing waits for a pending request; further calls on the object are judged
    // as usual meanwhile.
    uint64_t id = next_pending_++;
    pending_.emplace(id, Pending{id, call, e, object, created});
    // CLOSE-03: a pending close does not wait for itself.
    if (Object* o = find_mutable(object); o && !std::holds_alternative<calls::CloseObject>(call))
        ++o->pending_requests;
    return id;
}

void Model::emit(Event event) {
    // CLOSE-04, CLOSE-CQ-01: after an object's close completed no callback names it. (A pending
    // request's own completion is not an event of this kind.)
    if (event.kind != Event::Kind::request_complete)
        if (const Object* o = find(event.object); o && o->life == Life::closed) return;
    events_.push_back(event);
}

void Model::create_stage(Kind kind, ObjectId parent, ObjectState state,
                         std::vector<ObjectId> antecedents, Applied& applied, Stage stage) {
    switch (stage) {
        case Stage::done:
            applied.created = create_object(kind, parent, std::move(state), std::move(antecedents));
            ready(applied.created);
            break;
        case Stage::pending:  // GEN-CREATE-01: the object reaches the consumer in the callback
            applied.created = create_object(kind, parent, std::move(state), std::move(antecedents));
            break;
        case Stage::completed:
            ready(applied.created);
            break;
        case Stage::failed:  // GEN-CREATE-02: after a failed create no object exists
            destroy(applied.created);
            break;
        case Stage::refused:  // CQP-ST-04 and its siblings: an inline failure creates nothing
            break;
    }
}

void Model::wrong_mr_state(Expectation& e, const char* rule, std::string why) const {
    // AMB-16: a consumer error with no documented status; the profile picks the reference's.
    e.fail(readings_.mr_wrong_state_status, {rule, "AMB-16"}, Strength::model_choice,
           std::move(why));
    e.consumer_error = true;
}

const NDK_ADAPTER_INFO& Model::adapter_info(ObjectId any_object) const {
    const Object* o = find(any_object);
    ObjectId adapter = o ? o->adapter : 0;
    if (const auto* a = state_of<AdapterState>(adapter)) return a->info;
    return readings_.adapter_info;
}

void Model::mark_indeterminate(const Call& call) {
    ObjectId id = primary_object(call);
    std::visit(
        [&](const auto& c) {
            if constexpr (requires { c.mr; })
                if (auto* mr = state_mut<MrState>(c.mr)) mr->indeterminate = true;
            if constexpr (requires { c.mw; })
                if (auto* mw = state_mut<MwState>(c.mw)) mw->indeterminate = true;
        },
        call);
    if (auto* mr = state_mut<MrState>(id)) mr->indeterminate = true;
}

std::vector<Event> Model::take_events() {
    std::vector<Event> out;
    out.swap(events_);
    return out;
}

// ---- Adapters (outside the dispatch tables) ----

// ADP-OPEN-04: each open is an instance of its own, with its own objects and close.
ObjectId Model::open_adapter() {
    AdapterState adapter;
    adapter.info = readings_.adapter_info;
    ObjectId id = create_object(Kind::adapter, 0, adapter);
    ready(id);
    return id;
}

Verdict Model::close_adapter(ObjectId adapter) {
    Verdict v;
    // CLOSE-ADP-01, ADP-CLOSE-01: blocking, no status; everything under the adapter goes with
    // it. AMB-36: LAMs left open.
    for (Object& o : objects_) {
        if (o.id == 0 || o.id == adapter || o.adapter != adapter || o.life == Life::closed)
            continue;
        if (o.kind == Kind::lam && readings_.live_lam_warns)
            v.add({{"AMB-36"},
                   "the adapter closed with LAM " + std::to_string(o.id) + " not released",
                   true});
        o.life = Life::closed;
    }
    if (Object* a = find_mutable(adapter)) {
        a->life = Life::closed;
        if (auto* state = std::get_if<AdapterState>(&a->state)) {  // its indexes go with it
            state->local_tokens.clear();
            state->remote_tokens.clear();
            state->logical_pages.clear();
        }
    }
    std::erase_if(pending_, [&](const auto& kv) {
        const Object* o = find(kv.second.object);
        return o && (o->adapter == adapter || o->id == adapter);
    });
    return v;
}

Expectation Model::expect_open(NDK_VERSION requested) const {
    Expectation e;
    // ADP-OPEN-05: synchronous, the return value is final. ADP-OPEN-03: NDIS_STATUS_RESOURCES
    // is STATUS_INSUFFICIENT_RESOURCES. ADP-OPEN-01: success hands out an adapter instance.
    e.no_pending_rules = {"ADP-OPEN-05"};
    e.may_lack_resources = true;
    e.success_rules = {"VER-02", "ADP-OPEN-01"};
    const NDK_VERSION highest = readings_.version;  // VER-01: {Major, Minor}
    if (requested.Major != highest.Major)           // VER-04
        e.fail(NDIS_STATUS_BAD_VERSION, {"VER-04"}, Strength::documented,
               "major version " + std::to_string(requested.Major) + " is not implemented");
    else if (requested.Minor > highest.Minor)  // VER-05 (VER-07: a lower minor is a subset)
        e.fail(NDIS_STATUS_BAD_VERSION, {"VER-05"}, Strength::documented,
               "minor " + std::to_string(requested.Minor) + " is above the highest, " +
                   std::to_string(highest.Minor));
    return e;
}

// ---- Judge, then advance ----

namespace {

// The nine work-request calls (WR-04): synchronous, no callback; their outcome is a CQ entry.
bool is_work_request(const Call& call) {
    return std::holds_alternative<calls::Send>(call) ||
           std::holds_alternative<calls::SendAndInvalidate>(call) ||
           std::holds_alternative<calls::Read>(call) ||
           std::holds_alternative<calls::Write>(call) ||
           std::holds_alternative<calls::FastRegister>(call) ||
           std::holds_alternative<calls::Bind>(call) ||
           std::holds_alternative<calls::Invalidate>(call) ||
           std::holds_alternative<calls::Receive>(call) ||
           std::holds_alternative<calls::SrqReceive>(call);
}

// LAM-ERR-01, LAM-ST-03: says, beside a refusal for want of resources that names them
// (Model::lam_refusal_rules), what the witness showed.
void explain_lam_refusal(Verdict& v, uint64_t pages, uint32_t failures, uint32_t lacked) {
    for (Violation& violation : v.violations)
        if (!violation.warning && !violation.rules.empty() &&
            (violation.rules.front() == "LAM-ERR-01" || violation.rules.front() == "LAM-ST-03"))
            violation.message += " (a mapping of " + std::to_string(pages) +
                                 " pages succeeded and was released since, with only " +
                                 std::to_string(failures) + " failed NdkBuildLam requests, " +
                                 std::to_string(lacked) +
                                 " of them for want of resources, between: they kept its room)";
}

}  // namespace

Expectation Model::expect(const Call& call) const {
    Expectation e = std::visit([this](const auto& c) { return expect_call(c); }, call);
    // MODEL-WR-RES-01 (allowed): a valid work request may be refused inline for want of
    // resources. Each post's page lists "Other status codes: An error occurred", and the
    // deferred-processing scheme gives the duties of an initiator call that "returns a failure
    // status" (no entry, WR-05; earlier DEFER requests handed over first, DEFER-04). A call
    // that must fail keeps its documented status.
    // Not for a request only the QP's own size covers (Expectation::promised): the QP was
    // created for it, and the page says it must be accepted (CQP-DEPTH-*, CQP-SGE-*, CQP-INL-01).
    if (readings_.post_resource_failure_allowed && is_work_request(call) && !e.must_fail() &&
        !e.undefined && !e.promised)
        e.may_lack_resources = true;
    return e;
}

void Model::remember_unjudged(const Call& call) {
    std::visit(
        [&](const auto& c) {
            if constexpr (requires {
                              c.qp;
                              c.request_context;
                          })
                if (auto* q = state_mut<QpState>(c.qp)) {
                    q->unjudged.push_back(c.request_context);
                    if (q->unjudged.size() > 64) q->unjudged.erase(q->unjudged.begin());
                }
        },
        call);
}

Applied Model::apply(const Call& call, const Observed& observed) {
    // commit() posts `call` itself (call_of), not a copy of it.
    struct Applying {
        const Call*& slot;
        const Call* outer;
        ~Applying() { slot = outer; }
    } applying{applying_, std::exchange(applying_, &call)};
    Applied applied;
    Expectation e = expect(call);
    const char* name = ndk_function_name(call);
    if (!e.returns_void) applied.verdict = judge_inline(e, observed.status, name);
    if (std::holds_alternative<calls::BuildLam>(call) &&
        observed.status == STATUS_INSUFFICIENT_RESOURCES)
        explain_lam_refusal(applied.verdict, lam_witness_.pages, lam_witness_.failures,
                            lam_witness_.lacked_resources);
    // FR-ACC-02: local write (0x10) with no remote bit on an MR initialized without RemoteAccess
    // refused with STATUS_ACCESS_VIOLATION (the status of rights) took 0x10 for a remote right:
    // FR-ACC-02 is the rule the refusal breaks, judged first (the status decides, so here).
    if (const auto* fr = std::get_if<calls::FastRegister>(&call);
        fr && observed.status == STATUS_ACCESS_VIOLATION &&
        (fr->flags & NDK_OP_FLAG_ALLOW_LOCAL_WRITE) &&
        !(fr->flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT)))
        if (const auto* mr = state_of<MrState>(fr->mr); mr && !mr->remote_access)
            for (auto& v : applied.verdict.violations)
                if (auto it = std::find(v.rules.begin(), v.rules.end(), "FR-ACC-02");
                    !v.warning && it != v.rules.end())
                    std::rotate(v.rules.begin(), it, it + 1);
    // FR-ACC-03: remote rights on an MR initialized with RemoteAccess = TRUE refused with
    // STATUS_ACCESS_VIOLATION: FR-ACC-03 is the rule the refusal breaks, judged first.
    if (const auto* fr = std::get_if<calls::FastRegister>(&call);
        fr && observed.status == STATUS_ACCESS_VIOLATION &&
        (fr->flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT)))
        if (const auto* mr = state_of<MrState>(fr->mr); mr && mr->remote_access)
            for (auto& v : applied.verdict.violations)
                if (auto it = std::find(v.rules.begin(), v.rules.end(), "FR-ACC-03");
                    !v.warning && it != v.rules.end())
                    std::rotate(v.rules.begin(), it, it + 1);
    // IFR-RA-02: RemoteAccess = TRUE must be accepted as FALSE is. STATUS_IMPLEMENTATION_LIMIT
    // is the page's status for a page count the adapter does not support (IFR-APC-02/04 stay
    // first); any other refusal of a RemoteAccess = TRUE initialization breaks IFR-RA-02 first.
    if (const auto* ifr = std::get_if<calls::InitializeFastRegisterMr>(&call);
        ifr && ifr->remote_access && observed.status != STATUS_IMPLEMENTATION_LIMIT)
        for (auto& v : applied.verdict.violations)
            if (auto it = std::find(v.rules.begin(), v.rules.end(), "IFR-RA-02");
                !v.warning && it != v.rules.end())
                std::rotate(v.rules.begin(), it, it + 1);
    // LAM-ERR-01, LAM-ST-03: only failed NdkBuildLam requests and NdkReleaseLam calls keep the
    // witness of the room mappings had (lam_refusal_rules); anything else may take that room.
    if (!(std::holds_alternative<calls::BuildLam>(call) ||
          std::holds_alternative<calls::ReleaseLam>(call)) ||
        e.undefined || !applied.verdict.ok())
        lam_witness_ = {};
    if (e.undefined) {  // a consumer duty was broken: nothing to judge or apply...
        // ...but an accepted work request still leaves an entry, which is not judged (WR-10).
        if (is_work_request(call) && NT_SUCCESS(observed.status) &&
            observed.status != STATUS_PENDING)
            remember_unjudged(call);
        return applied;
    }
    if (!applied.verdict.ok()) {
        // Off the documented path: the state is unknown. A work request is still remembered: one
        // refused inline leaves no entry (WR-05) and hands earlier DEFER requests over (DEFER-04);
        // the entry of one accepted against the verdict is not judged a second time.
        if (is_work_request(call) && observed.status != STATUS_PENDING) {
            if (NT_ERROR(observed.status)) {
                std::visit([&](const auto& c) { commit(c, observed, applied, Stage::refused); },
                           call);
            } else {
                remember_unjudged(call);
            }
        }
        return applied;
    }

    if (!e.returns_void && observed.status == STATUS_PENDING) {
        if (observed.output_written_while_pending)
            applied.verdict.add({{"GEN-CREATE-01"},
                                 std::string(name) + " returned STATUS_PENDING "
                                                     "but wrote its out-parameter anyway"});
        // AMB-16: a consumer error's request moves nothing while it pends (the MR keeps its state).
        // A call that must fail moves nothing either: its failure, inline or through the
        // callback, leaves the state as it was (AMB-10: a refused re-initialization keeps the
        // previous one in force).
        bool committed = !e.consumer_error && e.may_take_effect();
        // (NdkBuildLam's pending stage only judges the form, AMB-15: it runs either way.)
        if (committed || std::holds_alternative<calls::BuildLam>(call))
            std::visit([&](const auto& c) { commit(c, observed, applied, Stage::pending); }, call);
        applied.pending = add_pending(call, e, primary_object(call), applied.created);
        pending_.at(applied.pending).committed = committed;
    } else if (e.returns_void || (NT_SUCCESS(observed.status) && e.may_take_effect())) {
        // (A refusal that is only the profile's reading, Strength::reading: the provider took
        // the other reading, and the call takes effect as a valid one.)
        std::visit([&](const auto& c) { commit(c, observed, applied, Stage::done); }, call);
    } else if (e.consumer_error && NT_SUCCESS(observed.status)) {
        mark_indeterminate(call);  // AMB-16: accepted a call it may refuse; state now unknown
        // ...and an accepted work request still leaves an entry, which is not judged (WR-10).
        if (is_work_request(call)) remember_unjudged(call);
    } else if (e.must_fail() && e.failure_may_surface_in_completion &&
               observed.status == STATUS_SUCCESS) {
        // AMB-29: accepted, to fail in its completion; the commit posts it as a failing request.
        std::visit([&](const auto& c) { commit(c, observed, applied, Stage::done); }, call);
    } else {
        std::visit([&](const auto& c) { commit(c, observed, applied, Stage::refused); }, call);
    }
    return applied;
}

Applied Model::complete(uint64_t id, NTSTATUS status, const Observed& outputs) {
    Applied result;
    // Id 0 is no request: apply() left nothing pending (an undefined call, e.g. a close of an
    // object the oracle never saw), so its callback has nothing to be judged against.
    if (id == 0) return result;
    auto it = pending_.find(id);
    if (it == pending_.end()) {
        result.verdict.add({{"GEN-ASYNC-01"},
                            "a completion callback came for a request that has none pending "
                            "(a second callback, or one after an inline result)"});
        return result;
    }
    Pending p = std::move(it->second);
    pending_.erase(it);
    // LAM-ERR-01, LAM-ST-03: another request's completion ends the witness (lam_refusal_rules);
    // a pended NdkBuildLam's refusal is judged strictly only if the witness still holds now.
    if (const auto* lam = std::get_if<calls::BuildLam>(&p.call)) {
        if (!p.expected.may_lack_resources && !p.expected.must_fail() && !p.expected.undefined &&
            lam_refusal_rules(*lam).empty()) {
            p.expected.may_lack_resources = true;  // the shortage may be real after all
            RuleList rules;
            for (const char* rule : p.expected.success_rules)
                if (std::string_view(rule) != "LAM-ERR-01" && std::string_view(rule) != "LAM-ST-03")
                    rules.push_back(rule);
            p.expected.success_rules = rules;
        }
    } else {
        lam_witness_ = {};
    }
    // CLOSE-08: a close of the object cancels what is pending on it; the docs name no status
    // for the cancelled request, so any failure is right.
    const Object* on = find(p.object);
    bool cancelled_by_close = on && on->close_requested && NT_ERROR(status) &&
                              !std::holds_alternative<calls::CloseObject>(p.call);
    Verdict v =
        cancelled_by_close ? Verdict{} : judge_async(p.expected, status, ndk_function_name(p.call));
    if (std::holds_alternative<calls::BuildLam>(p.call) && status == STATUS_INSUFFICIENT_RESOURCES)
        explain_lam_refusal(v, lam_witness_.pages, lam_witness_.failures,
                            lam_witness_.lacked_resources);

    Observed with_status = outputs;
    with_status.status = status;
    Applied applied;
    applied.created = p.created;
    bool success = NT_SUCCESS(status) && status != STATUS_PENDING;
    Stage stage = success && p.expected.may_take_effect() ? Stage::completed : Stage::failed;
    if (!p.committed) {
        // Nothing was applied when it pended: a failure is a refusal, as if returned inline.
        if (!p.expected.consumer_error && !success)
            std::visit([&](const auto& c) { commit(c, with_status, applied, Stage::refused); },
                       p.call);
        else if (success)
            mark_indeterminate(p.call);  // AMB-16: accepted through the callback; state now unknown
    } else {
        std::visit([&](const auto& c) { commit(c, with_status, applied, stage); }, p.call);
    }
    v.merge(std::move(applied.verdict));

    if (Object* o = find_mutable(p.object)) {
        if (o->pending_requests > 0 && !std::holds_alternative<calls::CloseObject>(p.call))
            --o->pending_requests;
        finish_close(o->id);  // CLOSE-03: a close waiting for this request may now finish
    }
    result.verdict = std::move(v);
    result.created = applied.created;
    return result;
}

// ---- Checks shared by the initiator calls ----

void Model::check_op_flags(Expectation& e, uint32_t flags, uint32_t listed, const char* call,
                           const char* rule) const {
    // DEFER-01, VER-09: DEFER from 1.2; VER-07: a higher minor keeps every lower one's flags.
    if (!readings_.version_at_least(1, 2)) listed &= ~NDK_OP_FLAG_DEFER;
    uint32_t unknown = flags & ~NDKCT_OP_FLAGS_DOCUMENTED;
    if (unknown && readings_.unknown_flags_rejected)  // AMB-04
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-04"}, Strength::reading,
               std::string("Flags has undocumented bits ") + std::to_string(unknown));
    uint32_t unlisted = flags & NDKCT_OP_FLAGS_DOCUMENTED & ~listed;
    if (unlisted && readings_.unlisted_flag_rejected) {  // OPF-01
        e.fail(STATUS_INVALID_PARAMETER, {rule, "OPF-01"}, Strength::reading,
               std::string(call) + " does not list flag bits " + std::to_string(unlisted));
    }
}

const QpState* Model::require_connected_qp(Expectation& e, ObjectId qp, const char* rule) const {
    const Object* o = require(e, qp, Kind::qp, "pNdkQp");
    if (!o) return nullptr;
    const auto& q = std::get<QpState>(o->state);
    // WR-04, CQP-STATE-01: initiator calls on a QP that is not connected (as every new QP is)
    // fail inline.
    if (q.connection != QpState::Connection::connected &&
        q.connection != QpState::Connection::disconnecting) {
        // CQP-STATE-01 first for a QP no connector has connected yet: NdkCreateQp's page says
        // a new QP refuses initiator requests until then (the call's own rule follows).
        const bool never_connected = q.connection == QpState::Connection::idle ||
                                     q.connection == QpState::Connection::connecting;
        RuleIds rules;
        if (never_connected) rules.push_back("CQP-STATE-01");
        rules.push_back(rule);
        rules.push_back("WR-04");
        e.fail(STATUS_CONNECTION_INVALID, std::move(rules), Strength::documented,
               "the QP is not connected");
        return &q;
    }
    // MODEL-FLS-01 (cancelled): a QP the consumer flushed is in error; it flushes the request
    // (FLS-02) or refuses it inline. (usable: it works on, and a refusal is a warning.)
    if (q.flushed || q.flushed_usable) {
        e.may_fail_any = true;
        e.any_failure_warns = q.flushed_usable;
        e.any_failure_rules = {rule, "MODEL-FLS-01"};
    }
    // WR-04: once the consumer started closing the QP's connector, the connection is
    // going away: a post may already find it gone.
    if (const Object* c = find(q.connector); c && c->life != Life::ready)
        e.also_allowed.push_back({STATUS_CONNECTION_INVALID,
                                  {rule, "WR-04"},
                                  Strength::documented,
                                  "the QP's connector is being closed"});
    return &q;
}

// MODEL-CQ-STATUS-01 (CQ-STATUS-02/03, SRQ-15): posting to a QP whose CQ or SRQ failed is a
// consumer error. The request never succeeds: the default reading lets the call fail inline
// with any status or be accepted and then fail; cancelled_completion expects it accepted and
// flushed, an inline error being a warning.
void Model::check_usable(Expectation& e, const QpState& q) const {
    // Check mode: more entries owed to one of its CQs than the CQ holds may already have
    // overrun it in the provider, which then refuses posts, before the overrun's notification
    // (CQ-STATUS-02), delivered on another thread or never (an unarmed CQ), reached the oracle.
    bool maybe_overrun = mode_ == Mode::check && !q.unusable &&
                         (may_have_overrun(q.initiator_cq) ||
                          (q.receive_cq != q.initiator_cq && may_have_overrun(q.receive_cq)));
    if (!q.unusable && !maybe_overrun) return;
    e.may_fail_any = true;
    e.any_failure_warns = readings_.post_after_cq_error_cancelled;
    e.any_failure_rules = {"MODEL-CQ-STATUS-01", "CQ-STATUS-02"};
    e.preferred =
        readings_.post_after_cq_error_cancelled ? STATUS_SUCCESS : STATUS_INVALID_DEVICE_STATE;
}

// Check mode: whether the entries still owed to the CQ (posted on its QPs, not yet retrieved)
// exceed its depth, so that the provider may have overrun it (CQ-CREATE-04, CQ-STATUS-02).
bool Model::may_have_overrun(ObjectId cq_id) const {
    const auto* cq = state_of<CqState>(cq_id);
    if (!cq || cq->failed) return false;
    size_t owed = 0;
    for (ObjectId id : cq->qps) {
        const auto* q = state_of<QpState>(id);
        if (!q) continue;
        if (q->initiator_cq == cq_id) owed += q->initiator_pending.size();
        if (q->receive_cq == cq_id) owed += q->receive_pending.size();
        if (owed > cq->depth) return true;
    }
    return false;
}

// CQP-DEPTH-01/02, SRQ-17: up to the depth must be accepted. MODEL-WR-DEPTH-01: beyond it a
// provider with a deeper queue may accept (and the request completes normally) or refuse
// inline: with any error status (any_error), or STATUS_INSUFFICIENT_RESOURCES (another error
// is then the reading not chosen, a warning).
void Model::check_depth(Expectation& e, uint32_t outstanding, uint32_t depth,
                        const char* rule) const {
    if (outstanding < depth) return;
    e.may_lack_resources = true;
    e.preferred = STATUS_INSUFFICIENT_RESOURCES;  // the reference provider refuses
    if (!e.may_fail_any) {
        e.may_fail_any = true;
        e.any_failure_warns = readings_.queue_overflow_resources;
        e.any_failure_rules = {rule, "MODEL-WR-DEPTH-01"};
    }
}

// CQP-DEPTH-*, CQP-SGE-*, CQP-INL-01: a valid request that only the QP's creation-time size
// covers names that promise first if it is refused (the call's own rule follows).
void Model::promise_first(Expectation& e, const char* rule) {
    RuleList rules;
    rules.push_back(rule);
    for (const char* r : e.success_rules)
        if (std::string_view(r) != rule) rules.push_back(r);
    e.success_rules = rules;
    e.promised = true;
}

void Model::limit_exceeded(Expectation& e, RuleIds rules, std::string why) const {
    rules.push_back("AMB-26");
    e.fail(STATUS_INVALID_PARAMETER, std::move(rules),
           readings_.limit_violation_status_required ? Strength::model_choice : Strength::any_error,
           std::move(why));
    e.consumer_error = true;
}

// ---- Close and extension (every object) ----

Expectation Model::expect_call(const calls::CloseObject& c) const {
    Expectation e;
    const Object* o = find(c.object);
    if (!o || o->life == Life::closing || o->life == Life::closed || o->life == Life::creating) {
        e.undefined = true;  // CLOSE-06: never close an object twice or before it exists
        e.undefined_rules = {"CLOSE-06"};
        e.undefined_why = "object " + object_text(c.object) + " is not open";
        return e;
    }
    if (o->kind == Kind::adapter) {  // AMB-19, CLOSE-API-02: through the provider entry point
        e.undefined = true;
        e.undefined_rules = {"AMB-19"};
        e.undefined_why = "the adapter closes through NdkctCloseAdapter, not NdkCloseObject";
        return e;
    }
    if (o->kind == Kind::lam) {  // AMB-36: a LAM is released with NdkReleaseLam
        e.undefined = true;
        e.undefined_rules = {"RLAM-01"};
        e.undefined_why = "a LAM is released with NdkReleaseLam";
        return e;
    }
    e.may_pend = true;  // CLOSE-01
    e.success_rules = {"CLOSE-01"};
    if (o->open_successors > 0) {  // CLOSE-02
        // ...unless each is a window whose bind the device may have flushed (MwState), or a
        // connector whose NdkConnect is still pending (check mode): a connect that fails
        // associates nothing any more (LIFE-TREE-06), and the provider knows it failed before
        // its callback tells the consumer.
        uint32_t uncertain = 0;
        if (mode_ == Mode::check && (o->kind == Kind::mr || o->kind == Kind::qp))
            for (const Object& s : objects_) {
                if (s.life == Life::closed || std::find(s.antecedents.begin(), s.antecedents.end(),
                                                        o->id) == s.antecedents.end())
                    continue;
                if (s.kind == Kind::mw && std::get<MwState>(s.state).edge_uncertain) ++uncertain;
                if (s.kind == Kind::connector &&
                    std::get<ConnectorState>(s.state).phase == ConnectorState::Phase::connecting)
                    ++uncertain;
            }
        if (uncertain < o->open_successors) {
            e.must_pend = true;
            if (const char* page = qp_successor_rule(objects_, *o))
                e.must_pend_rules.push_back(page);
            e.must_pend_rules.push_back("CLOSE-02");
        }
    }
    if (o->pending_requests > 0) {  // CLOSE-03
        e.must_pend = true;
        e.must_pend_rules.push_back("CLOSE-03");
    }
    return e;
}

void Model::commit(const calls::CloseObject& c, const Observed&, Applied& applied, Stage stage) {
    Object& o = objects_[c.object];
    switch (stage) {
        case Stage::pending:
            o.life = Life::closing;
            o.close_requested = true;
            // CLOSE-08: a close starts what its pending work needs to finish: a QP is flushed
            // (CLOSE-03 then waits for nothing that would not come), and a connector's connect
            // or accept waiting for its peer is cancelled. CONN-LST-03: a closing listener
            // takes no more requests (listener_for skips it).
            if (o.kind == Kind::qp) {  // ...and it answers its peer no more (AMB-12)
                flush_qp(c.object);
                leave_in_error(c.object);
            }
            if (o.kind == Kind::connector) abandon_connection(c.object);  // CONN-21, WR-04
            if (mode_ == Mode::simulate && o.kind == Kind::connector)
                for (const auto& [pid, p] : pending_)
                    if (p.object == c.object &&
                        (std::holds_alternative<calls::Connect>(p.call) ||
                         std::holds_alternative<calls::ConnectWithSharedEndpoint>(p.call) ||
                         std::holds_alternative<calls::Accept>(p.call)))
                        emit({Event::Kind::request_complete, c.object, 0, STATUS_CANCELLED, pid});
            if (mode_ == Mode::simulate && o.open_successors == 0 && o.pending_requests == 0)
                emit({Event::Kind::request_complete, c.object, 0, STATUS_SUCCESS, next_pending_});
            break;
        case Stage::completed:
        case Stage::failed:
            if (o.open_successors > 0) {
                RuleIds rules{"CLOSE-02"};
                if (const char* page = qp_successor_rule(objects_, o))
                    rules.insert(rules.begin(), page);
                applied.verdict.add(
                    {std::move(rules), "the close of " + std::string(kind_name(o.kind)) + " " +
                                           std::to_string(o.id) +
                                           " completed while a successor is still open"});
            }
            if (o.kind == Kind::qp) flush_qp(c.object);
            destroy(c.object);
            break;
        case Stage::done:
            if (o.kind == Kind::qp) flush_qp(c.object);
            if (o.kind == Kind::connector) abandon_connection(c.object);  // CONN-21, WR-04
            destroy(c.object);
            break;
        case Stage::refused:  // CLOSE-01: a close does not fail (AMB-18 reads an error as closed)
            if (readings_.close_may_fail) destroy(c.object);
            break;
    }
}

Expectation Model::expect_call(const calls::QueryExtensionInterface& c) const {
    Expectation e;
    const Object* o = find(c.object);
    if (!o || o->life != Life::ready) {
        e.undefined = true;
        e.undefined_rules = {"CLOSE-06"};
        e.undefined_why = "object " + object_text(c.object) + " is not open";
        return e;
    }
    // EXT-01, GEN-MAND-02: no standard extension exists, so STATUS_NOT_SUPPORTED is the answer
    // ndkct knows; a provider with a vendor extension may also succeed.
    e.fail(STATUS_NOT_SUPPORTED, {"EXT-01"}, Strength::reading, "no extension is defined");
    return e;
}

void Model::commit(const calls::QueryExtensionInterface&, const Observed&, Applied&, Stage) {}

}  // namespace ndkct::model
