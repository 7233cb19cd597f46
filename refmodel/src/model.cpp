// The model's machinery: objects, pending requests, closes, and the judge-then-advance loop.
// The rules of each NDK function are in rules_*.cpp.
#include "ndkct/model/model.hpp"

#include <algorithm>

namespace ndkct::model {

namespace {

// The object a call is made on (the first object parameter), for pending-request bookkeeping.
ObjectId primary_object(const Call& call) {
    return std::visit(
        [](const auto& c) -> ObjectId {
            if constexpr (requires { c.connector; }) return c.connector;
            else if constexpr (requires { c.listener; }) return c.listener;
            else if constexpr (requires { c.pd; }) return c.pd;
            else if constexpr (requires { c.adapter; }) return c.adapter;
            else if constexpr (requires { c.qp; }) return c.qp;
            else if constexpr (requires { c.srq; }) return c.srq;
            else if constexpr (requires { c.cq; }) return c.cq;
            else if constexpr (requires { c.mr; }) return c.mr;
            else if constexpr (requires { c.mw; }) return c.mw;
            else return c.object;
        },
        call);
}

}  // namespace

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::adapter: return "adapter";
        case Kind::pd: return "PD";
        case Kind::cq: return "CQ";
        case Kind::qp: return "QP";
        case Kind::srq: return "SRQ";
        case Kind::mr: return "MR";
        case Kind::mw: return "MW";
        case Kind::lam: return "LAM";
        case Kind::connector: return "connector";
        case Kind::listener: return "listener";
        case Kind::shared_endpoint: return "shared endpoint";
    }
    return "?";
}

Model::Model(Readings readings, HostMemoryView memory, Mode mode)
    : readings_(std::move(readings)), memory_(memory), mode_(mode) {
    objects_.emplace_back();  // id 0 is "no object"
}

// ---- Objects ----

const Object* Model::find(ObjectId id) const {
    return id > 0 && id < objects_.size() ? &objects_[id] : nullptr;
}

Object* Model::find_mutable(ObjectId id) {
    return id > 0 && id < objects_.size() ? &objects_[id] : nullptr;
}

const Object* Model::require(Expectation& e, ObjectId id, Kind kind, const char* role) const {
    const Object* o = find(id);
    auto undefined = [&](RuleIds rules, std::string why) {
        e.undefined = true;
        for (auto& r : rules) e.undefined_rules.push_back(std::move(r));
        if (!e.undefined_why.empty()) e.undefined_why += "; ";
        e.undefined_why += why;
        return nullptr;
    };
    if (!o || o->kind != kind)
        return undefined({"GEN-CB-03"}, std::string(role) + " is not an open " + kind_name(kind));
    if (o->life == Life::closing || o->life == Life::closed)  // CLOSE-06
        return undefined({"CLOSE-06"}, std::string(role) + " is used after its close began");
    if (o->life == Life::creating)  // GEN-CREATE-01: the object exists once its creation completed
        return undefined({"GEN-CREATE-01"}, std::string(role) + " is used before its creation completed");
    return o;
}

ObjectId Model::create_object(Kind kind, ObjectId parent, ObjectState state,
                              std::vector<ObjectId> antecedents) {
    Object o;
    o.id = static_cast<ObjectId>(objects_.size());
    o.kind = kind;
    o.parent = parent;
    o.adapter = parent ? (objects_[parent].kind == Kind::adapter ? parent : objects_[parent].adapter)
                       : o.id;
    o.life = Life::creating;
    o.antecedents = std::move(antecedents);
    o.state = std::move(state);
    // LIFE-TREE-01/02: a parent or antecedent cannot finish closing while this is open.
    if (parent) ++objects_[parent].open_successors;
    for (ObjectId a : o.antecedents) ++objects_[a].open_successors;
    objects_.push_back(std::move(o));
    return objects_.back().id;
}

void Model::ready(ObjectId id) { objects_[id].life = Life::ready; }

void Model::destroy(ObjectId id) {
    Object& o = objects_[id];
    if (o.life == Life::closed) return;
    o.life = Life::closed;
    std::vector<ObjectId> released = o.antecedents;
    if (o.parent) released.push_back(o.parent);
    for (ObjectId a : released) {
        Object& up = objects_[a];
        if (up.open_successors > 0) --up.open_successors;
        // CLOSE-02: an antecedent whose close was pending may now finish.
        if (up.close_requested && up.life == Life::closing && up.open_successors == 0 &&
            up.pending_requests == 0 && mode_ == Mode::simulate) {
            for (const auto& [pid, p] : pending_)
                if (p.object == a && std::holds_alternative<calls::CloseObject>(p.call))
                    emit({Event::Kind::request_complete, a, 0, STATUS_SUCCESS, pid});
        }
    }
}

uint64_t Model::add_pending(const Call& call, const Expectation& e, ObjectId object,
                            ObjectId created) {
    uint64_t id = next_pending_++;
    pending_.emplace(id, Pending{id, call, e, object, created});
    // CLOSE-03: a pending close does not wait for itself.
    if (Object* o = find_mutable(object); o && !std::holds_alternative<calls::CloseObject>(call))
        ++o->pending_requests;
    return id;
}

void Model::emit(Event event) { events_.push_back(event); }

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
        case Stage::failed:
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
    std::visit([&](const auto& c) {
        if constexpr (requires { c.mr; })
            if (auto* mr = state_mut<MrState>(c.mr)) mr->indeterminate = true;
        if constexpr (requires { c.mw; })
            if (auto* mw = state_mut<MwState>(c.mw)) mw->indeterminate = true;
    }, call);
    if (auto* mr = state_mut<MrState>(id)) mr->indeterminate = true;
}

std::vector<Event> Model::take_events() {
    std::vector<Event> out;
    out.swap(events_);
    return out;
}

// ---- Adapters (outside the dispatch tables) ----

ObjectId Model::open_adapter() {
    AdapterState adapter;
    adapter.info = readings_.adapter_info;
    ObjectId id = create_object(Kind::adapter, 0, adapter);
    ready(id);
    return id;
}

Verdict Model::close_adapter(ObjectId adapter) {
    Verdict v;
    // CLOSE-ADP-01: blocking; everything under the adapter goes with it. AMB-36: LAMs left open.
    for (Object& o : objects_) {
        if (o.id == 0 || o.id == adapter || o.adapter != adapter || o.life == Life::closed) continue;
        if (o.kind == Kind::lam && readings_.live_lam_warns)
            v.add({{"AMB-36"}, "the adapter closed with LAM " + std::to_string(o.id) +
                                   " not released", true});
        o.life = Life::closed;
    }
    if (Object* a = find_mutable(adapter)) a->life = Life::closed;
    std::erase_if(pending_, [&](const auto& kv) {
        const Object* o = find(kv.second.object);
        return o && (o->adapter == adapter || o->id == adapter);
    });
    return v;
}

// ---- Judge, then advance ----

Expectation Model::expect(const Call& call) const {
    return std::visit([this](const auto& c) { return expect_call(c); }, call);
}

Applied Model::apply(const Call& call, const Observed& observed) {
    Applied applied;
    Expectation e = expect(call);
    std::string name = function_name(call);
    if (!e.returns_void) applied.verdict = judge_inline(e, observed.status, name);
    if (e.undefined) return applied;  // a consumer duty was broken: nothing to judge or apply
    if (!applied.verdict.ok()) return applied;  // off the documented path: the state is unknown

    if (!e.returns_void && observed.status == STATUS_PENDING) {
        if (observed.output_written_while_pending)
            applied.verdict.add({{"GEN-CREATE-01"}, name + " returned STATUS_PENDING but wrote "
                                                       "its out-parameter anyway"});
        // AMB-16: a consumer error's request moves nothing while it pends (the MR keeps its state).
        if (!e.consumer_error)
            std::visit([&](const auto& c) { commit(c, observed, applied, Stage::pending); }, call);
        applied.pending = add_pending(call, e, primary_object(call), applied.created);
    } else if (e.returns_void || (NT_SUCCESS(observed.status) && !e.must_fail())) {
        std::visit([&](const auto& c) { commit(c, observed, applied, Stage::done); }, call);
    } else if (e.must_fail() && e.failure_may_surface_in_completion &&
               observed.status == STATUS_SUCCESS) {
        // AMB-29: accepted, to fail in its completion; the commit posts it as a failing request.
        std::visit([&](const auto& c) { commit(c, observed, applied, Stage::done); }, call);
    } else if (e.consumer_error && NT_SUCCESS(observed.status)) {
        mark_indeterminate(call);  // AMB-16: accepted a call it may refuse; state now unknown
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
    std::string name = function_name(p.call);
    Verdict v = judge_async(p.expected, status, name);

    Observed with_status = outputs;
    with_status.status = status;
    Applied applied;
    applied.created = p.created;
    Stage stage = NT_SUCCESS(status) && status != STATUS_PENDING && !p.expected.must_fail()
                      ? Stage::completed
                      : Stage::failed;
    if (!p.expected.consumer_error)
        std::visit([&](const auto& c) { commit(c, with_status, applied, stage); }, p.call);
    else if (NT_SUCCESS(status) && status != STATUS_PENDING)
        mark_indeterminate(p.call);  // AMB-16: accepted through the callback; state now unknown
    v.merge(std::move(applied.verdict));

    if (Object* o = find_mutable(p.object)) {
        if (o->pending_requests > 0 && !std::holds_alternative<calls::CloseObject>(p.call))
            --o->pending_requests;
        // CLOSE-03: a close waiting for this request may now finish.
        if (o->close_requested && o->life == Life::closing && o->open_successors == 0 &&
            o->pending_requests == 0 && mode_ == Mode::simulate) {
            for (const auto& [pid, other] : pending_)
                if (other.object == o->id && std::holds_alternative<calls::CloseObject>(other.call))
                    emit({Event::Kind::request_complete, o->id, 0, STATUS_SUCCESS, pid});
        }
    }
    result.verdict = std::move(v);
    result.created = applied.created;
    return result;
}

// ---- Checks shared by the initiator calls ----

void Model::check_op_flags(Expectation& e, uint32_t flags, uint32_t listed, const char* call,
                           const RuleIds& rules) const {
    if (!readings_.version_at_least(1, 2)) listed &= ~NDK_OP_FLAG_DEFER;  // DEFER-01: 1.2+
    uint32_t unknown = flags & ~NDKCT_OP_FLAGS_DOCUMENTED;
    if (unknown && readings_.unknown_flags_rejected)  // AMB-04
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-04"}, Strength::model_choice,
               std::string("Flags has undocumented bits ") + std::to_string(unknown));
    uint32_t unlisted = flags & NDKCT_OP_FLAGS_DOCUMENTED & ~listed;
    if (unlisted && readings_.unlisted_flag_rejected) {  // OPF-01
        RuleIds why = rules;
        why.push_back("OPF-01");
        e.fail(STATUS_INVALID_PARAMETER, why, Strength::model_choice,
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
        q.connection != QpState::Connection::disconnecting)
        e.fail(STATUS_CONNECTION_INVALID, {rule, "WR-04"}, Strength::documented,
               "the QP is not connected");
    return &q;
}

// ---- Close and extension (every object) ----

Expectation Model::expect_call(const calls::CloseObject& c) const {
    Expectation e;
    const Object* o = find(c.object);
    if (!o || o->life == Life::closing || o->life == Life::closed || o->life == Life::creating) {
        e.undefined = true;  // CLOSE-06: never close an object twice or before it exists
        e.undefined_rules = {"CLOSE-06"};
        e.undefined_why = "object " + std::to_string(c.object) + " is not open";
        return e;
    }
    if (o->kind == Kind::adapter) {  // AMB-19: adapters close through the provider entry point
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
        e.must_pend = true;
        e.must_pend_rules.push_back("CLOSE-02");
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
            if (o.kind == Kind::qp) flush_qp(c.object);  // CLOSE-03: a close starts the flush
            if (mode_ == Mode::simulate && o.open_successors == 0 && o.pending_requests == 0)
                emit({Event::Kind::request_complete, c.object, 0, STATUS_SUCCESS, next_pending_});
            break;
        case Stage::completed:
        case Stage::failed:
            if (o.open_successors > 0)
                applied.verdict.add({{"CLOSE-02"}, "the close of " + std::string(kind_name(o.kind)) +
                                                       " " + std::to_string(o.id) +
                                                       " completed while a successor is still open"});
            if (o.kind == Kind::qp) flush_qp(c.object);
            destroy(c.object);
            break;
        case Stage::done:
            if (o.kind == Kind::qp) flush_qp(c.object);
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
        e.undefined_why = "object " + std::to_string(c.object) + " is not open";
        return e;
    }
    // EXT-01: no standard extension exists, so STATUS_NOT_SUPPORTED is the answer ndkct knows;
    // a provider with a vendor extension may also succeed.
    e.fail(STATUS_NOT_SUPPORTED, {"EXT-01"}, Strength::documented, "no extension is defined");
    e.failures.back().strength = Strength::model_choice;
    return e;
}

void Model::commit(const calls::QueryExtensionInterface&, const Observed&, Applied&, Stage) {}

}  // namespace ndkct::model
