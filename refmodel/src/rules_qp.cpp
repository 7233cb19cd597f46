// Queue pairs and shared receive queues: creation within the adapter's limits, the six data
// requests, flush, and the engine that executes posted requests in order, checks every access,
// and moves bytes (simulate) or records where bytes must land (check).
#include <algorithm>
#include <cstring>
#include <utility>

#include "ndkct/model/model.hpp"

namespace ndkct::model {

namespace {

std::string num(uint64_t v) { return std::to_string(v); }

uint64_t total_length(const std::vector<Sge>& sgl) {
    uint64_t total = 0;
    for (const auto& sge : sgl) total += sge.length;
    return total;
}

template <typename T>
const T& as(const Call& call) {
    return std::get<T>(call);
}

constexpr size_t kRememberedContexts = 64;

void remember(std::deque<Context>& list, Context context) {
    list.push_back(context);
    if (list.size() > kRememberedContexts) list.pop_front();
}

}  // namespace

// ======================= NdkCreateQp (CQP-*) =======================

Expectation Model::expect_call(const calls::CreateQp& c) const {
    Expectation e;
    const Object* pd = require(e, c.pd, Kind::pd, "pNdkPd");
    const Object* rcq = require(e, c.receive_cq, Kind::cq, "pReceiveCq");
    const Object* icq = require(e, c.initiator_cq, Kind::cq, "pInitiatorCq");
    if (!pd || !rcq || !icq) return e;
    e.may_pend = e.may_lack_resources = true;  // CQP-ST-02, CQP-ST-03
    e.success_rules = {"CQP-ST-01", "CQP-LIM-07"};
    if (rcq->adapter != pd->adapter || icq->adapter != pd->adapter)  // AMB-28
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-28"}, Strength::model_choice,
               "a CQ belongs to another adapter");
    const NDK_ADAPTER_INFO& info = adapter_info(c.pd);
    // CQP-LIM-01..05, CQP-LIM-06: each limit over its maximum is refused, never clamped.
    auto limit = [&](uint64_t value, uint64_t max, const char* rule, const char* what) {
        if (value > max)
            e.fail(STATUS_INVALID_PARAMETER, {rule, "CQP-LIM-06"}, Strength::documented,
                   std::string(what) + " " + num(value) + " exceeds the adapter's " + num(max));
    };
    limit(c.receive_queue_depth, info.MaxReceiveQueueDepth, "CQP-LIM-01", "ReceiveQueueDepth");
    limit(c.initiator_queue_depth, info.MaxInitiatorQueueDepth, "CQP-LIM-02", "InitiatorQueueDepth");
    limit(c.max_receive_sge, info.MaxReceiveRequestSge, "CQP-LIM-03", "MaxReceiveRequestSge");
    limit(c.max_initiator_sge, info.MaxInitiatorRequestSge, "CQP-LIM-04", "MaxInitiatorRequestSge");
    limit(c.inline_data_size, info.MaxInlineDataSize, "CQP-LIM-05", "InlineDataSize");
    if (readings_.zero_queue_depth_rejected &&  // AMB-27
        (c.receive_queue_depth == 0 || c.initiator_queue_depth == 0 || c.max_receive_sge == 0 ||
         c.max_initiator_sge == 0))
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-27"}, Strength::model_choice,
               "a depth or SGE count is 0");
    if (readings_.cq_capacity_checked) {  // CQP-CQ-01
        const auto& r = std::get<CqState>(rcq->state);
        const auto& i = std::get<CqState>(icq->state);
        if (r.depth < c.receive_queue_depth || i.depth < c.initiator_queue_depth)
            e.fail(STATUS_INVALID_PARAMETER, {"CQP-CQ-01"}, Strength::model_choice,
                   "a CQ is shallower than the queue it serves");
    }
    return e;
}

void Model::commit(const calls::CreateQp& c, const Observed&, Applied& applied, Stage stage) {
    QpState q;
    q.pd = c.pd;
    q.receive_cq = c.receive_cq;
    q.initiator_cq = c.initiator_cq;
    q.qp_context = c.qp_context;
    q.receive_depth = c.receive_queue_depth;
    q.initiator_depth = c.initiator_queue_depth;
    q.max_receive_sge = c.max_receive_sge;
    q.max_initiator_sge = c.max_initiator_sge;
    q.inline_data_size = c.inline_data_size;
    // CQP-OBJ-01: a QP of the PD with a receive and an initiator queue. CQP-LIFE-01,
    // LIFE-TREE-02: the PD is the parent, both CQs antecedents.
    create_stage(Kind::qp, c.pd, q, {c.receive_cq, c.initiator_cq}, applied, stage);
}

Expectation Model::expect_call(const calls::CreateQpWithSrq& c) const {
    Expectation e;
    const Object* pd = require(e, c.pd, Kind::pd, "pNdkPd");
    const Object* rcq = require(e, c.receive_cq, Kind::cq, "pReceiveCq");
    const Object* icq = require(e, c.initiator_cq, Kind::cq, "pInitiatorCq");
    const Object* srq = require(e, c.srq, Kind::srq, "pSrq");
    if (!pd || !rcq || !icq || !srq) return e;
    e.may_pend = e.may_lack_resources = true;
    e.success_rules = {"CQP-SRQ-01"};
    if (rcq->adapter != pd->adapter || icq->adapter != pd->adapter)  // AMB-28
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-28"}, Strength::model_choice,
               "a CQ belongs to another adapter");
    const NDK_ADAPTER_INFO& info = adapter_info(c.pd);
    auto limit = [&](uint64_t value, uint64_t max, const char* rule, const char* what) {
        if (value > max)
            e.fail(STATUS_INVALID_PARAMETER, {rule, "CQP-SRQ-05"}, Strength::documented,
                   std::string(what) + " " + num(value) + " exceeds the adapter's " + num(max));
    };
    limit(c.initiator_queue_depth, info.MaxInitiatorQueueDepth, "CQP-SRQ-02", "InitiatorQueueDepth");
    limit(c.max_initiator_sge, info.MaxInitiatorRequestSge, "CQP-SRQ-03", "MaxInitiatorRequestSge");
    limit(c.inline_data_size, info.MaxInlineDataSize, "CQP-SRQ-04", "InlineDataSize");
    return e;
}

void Model::commit(const calls::CreateQpWithSrq& c, const Observed&, Applied& applied,
                   Stage stage) {
    QpState q;
    q.pd = c.pd;
    q.receive_cq = c.receive_cq;
    q.initiator_cq = c.initiator_cq;
    q.srq = c.srq;
    q.qp_context = c.qp_context;
    q.initiator_depth = c.initiator_queue_depth;
    q.max_initiator_sge = c.max_initiator_sge;
    q.inline_data_size = c.inline_data_size;
    // CQP-SRQ-06, LIFE-TREE-05: the SRQ is an antecedent too.
    create_stage(Kind::qp, c.pd, q, {c.receive_cq, c.initiator_cq, c.srq}, applied, stage);
}

// ======================= SRQ (SRQ-*) =======================

Expectation Model::expect_call(const calls::CreateSrq& c) const {
    Expectation e;
    if (!require(e, c.pd, Kind::pd, "pNdkPd")) return e;
    e.may_pend = e.may_lack_resources = true;  // SRQ-05
    e.success_rules = {"SRQ-05"};
    const NDK_ADAPTER_INFO& info = adapter_info(c.pd);
    if (c.depth > info.MaxSrqDepth)  // SRQ-01, SRQ-06 (MaxSrqDepth 0 = no SRQs)
        e.fail(STATUS_INVALID_PARAMETER, {"SRQ-01", "SRQ-06"}, Strength::documented,
               "SrqDepth " + num(c.depth) + " exceeds MaxSrqDepth " + num(info.MaxSrqDepth));
    if (c.max_receive_sge > info.MaxReceiveRequestSge)  // SRQ-04
        e.fail(STATUS_INVALID_PARAMETER, {"SRQ-04"}, Strength::documented,
               "MaxReceiveRequestSge " + num(c.max_receive_sge) + " exceeds the adapter's " +
                   num(info.MaxReceiveRequestSge));
    return e;
}

void Model::commit(const calls::CreateSrq& c, const Observed&, Applied& applied, Stage stage) {
    SrqState s;
    s.depth = c.depth;
    s.max_sge = c.max_receive_sge;
    s.notify_threshold = c.notify_threshold;
    s.notify_armed = c.notify_threshold > 0 && c.has_notification;  // SRQ-16
    s.has_notification = c.has_notification;
    create_stage(Kind::srq, c.pd, s, {}, applied, stage);
}

Expectation Model::expect_call(const calls::ModifySrq& c) const {
    Expectation e;
    if (!require(e, c.srq, Kind::srq, "pNdkSrq")) return e;
    e.may_pend = e.may_lack_resources = true;  // SRQ-14
    e.success_rules = {"SRQ-14"};
    if (c.depth > adapter_info(c.srq).MaxSrqDepth)  // SRQ-09
        e.fail(STATUS_INVALID_PARAMETER, {"SRQ-09"}, Strength::documented,
               "SrqDepth exceeds MaxSrqDepth");
    return e;
}

void Model::commit(const calls::ModifySrq& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done && stage != Stage::completed) return;
    auto* s = state_mut<SrqState>(c.srq);
    if (c.depth != 0) s->depth = c.depth;  // SRQ-02: 0 keeps the depth
    if (c.notify_threshold > 0) {           // SRQ-10, SRQ-13
        s->notify_threshold = c.notify_threshold;
        s->notify_armed = s->has_notification;
        if (s->notify_armed && s->receives.size() < s->notify_threshold && mode_ == Mode::simulate) {
            s->notify_armed = false;  // SRQ-11, SRQ-12: fires at once, then disarmed
            emit({Event::Kind::srq_notification, c.srq, 0, STATUS_SUCCESS, 0});
        }
    }
}

Expectation Model::expect_call(const calls::SrqReceive& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"RCV-02", "SGE-10"};
    const Object* o = require(e, c.srq, Kind::srq, "pNdkSrq");
    if (!o) return e;
    const auto& s = std::get<SrqState>(o->state);
    if (c.sgl.size() > s.max_sge)  // SGE-10, AMB-26
        e.fail(STATUS_INVALID_PARAMETER, {"SGE-10", "AMB-26"},
               readings_.limit_violation_status_required ? Strength::documented : Strength::model_choice,
               "nSge " + num(c.sgl.size()) + " exceeds the SRQ's MaxReceiveRequestSge " + num(s.max_sge));
    if (s.receives.size() >= s.depth) {  // SRQ-18: beyond the depth is the caller's error
        e.may_lack_resources = true;
        e.preferred = STATUS_INSUFFICIENT_RESOURCES;
    }
    return e;
}

void Model::commit(const calls::SrqReceive& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done) return;
    auto* s = state_mut<SrqState>(c.srq);
    s->receives.push_back({0, c, c.request_context, 0});
    // A send waiting for a receive on any QP of this SRQ may go on now.
    for (const Object& o : objects_)
        if (o.kind == Kind::qp && o.life != Life::closed) {
            const auto& q = std::get<QpState>(o.state);
            if (q.srq == c.srq && q.peer) run_queues(q.peer);
        }
}

// ======================= Receive (RCV-*, WR-06) =======================

Expectation Model::expect_call(const calls::Receive& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"RCV-01", "CQP-STATE-02", "SGE-10", "CQP-DEPTH-01"};
    const Object* o = require(e, c.qp, Kind::qp, "pNdkQp");
    if (!o) return e;
    const auto& q = std::get<QpState>(o->state);
    if (q.srq) {  // the receive side of such a QP is its SRQ
        e.fail(STATUS_INVALID_DEVICE_REQUEST, {"CQP-SRQ-01"}, Strength::model_choice,
               "the QP takes its receives from an SRQ");
        e.consumer_error = true;
        return e;
    }
    if (c.sgl.size() > q.max_receive_sge)  // SGE-10, AMB-26 (up to it is accepted: CQP-SGE-01)
        e.fail(STATUS_INVALID_PARAMETER, {"SGE-10", "AMB-26"},
               readings_.limit_violation_status_required ? Strength::documented : Strength::model_choice,
               "nSge " + num(c.sgl.size()) + " exceeds the QP's MaxReceiveRequestSge " +
                   num(q.max_receive_sge));
    if (q.receive_outstanding >= q.receive_depth) {  // CQP-DEPTH-01: N must fit; N+1 may not
        e.may_lack_resources = true;
        e.preferred = STATUS_INSUFFICIENT_RESOURCES;
    }
    return e;
}

void Model::commit(const calls::Receive& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done) return;
    post(c.qp, c, c.request_context, 0, true);
}

// ======================= Initiator data requests (SND, SAI, RD, WRT) =======================

namespace {

struct DataLimits {
    const char* call;
    const char* not_connected_rule;
    const char* flags_rule;
    uint32_t listed_flags;
    bool read = false;
};

}  // namespace

// Checks shared by Send, SendAndInvalidate, Read and Write.
static void check_data_request(const Model& model, const Readings& r, Expectation& e,
                               const QpState& q, const NDK_ADAPTER_INFO& info,
                               const std::vector<Sge>& sgl, uint32_t flags, const DataLimits& d) {
    (void)model;
    Strength limit = r.limit_violation_status_required ? Strength::documented : Strength::model_choice;
    bool is_inline = flags & NDK_OP_FLAG_INLINE;
    uint64_t bytes = total_length(sgl);
    if (d.read) {
        if (sgl.size() > info.MaxReadRequestSge)  // SGE-11
            e.fail(STATUS_INVALID_PARAMETER, {"SGE-11", "AMB-26"}, limit,
                   "nSge " + num(sgl.size()) + " exceeds MaxReadRequestSge " +
                       num(info.MaxReadRequestSge));
    } else if (!is_inline && sgl.size() > q.max_initiator_sge) {  // SGE-04, CQP-SGE-02, SGE-09
        e.fail(STATUS_INVALID_PARAMETER, {"SGE-04", "AMB-26"}, limit,
               "nSge " + num(sgl.size()) + " exceeds the QP's MaxInitiatorRequestSge " +
                   num(q.max_initiator_sge));
    }
    if (is_inline && bytes > q.inline_data_size)  // SGE-08 (up to it is accepted: CQP-INL-01)
        e.fail(STATUS_INVALID_PARAMETER, {"SGE-08", "AMB-26"}, limit,
               "inline data of " + num(bytes) + " bytes exceeds the QP's InlineDataSize " +
                   num(q.inline_data_size));
    if (bytes > info.MaxTransferLength)  // SGE-12
        e.fail(STATUS_INVALID_PARAMETER, {"SGE-12", "AMB-26"}, limit,
               "the request moves " + num(bytes) + " bytes, more than MaxTransferLength " +
                   num(info.MaxTransferLength));
    if (q.initiator_outstanding >= q.initiator_depth) {  // CQP-DEPTH-02: N must fit, N+1 may not
        e.may_lack_resources = true;
        e.preferred = STATUS_INSUFFICIENT_RESOURCES;
    }
}

Expectation Model::expect_call(const calls::Send& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"SND-01", "SGE-04", "SGE-08", "SGE-12"};
    const QpState* q = require_connected_qp(e, c.qp, "SND-02");
    if (!q) return e;
    uint32_t listed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                      NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT | NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER;
    check_op_flags(e, c.flags, listed, "NdkSend", {"SND-03"});
    check_data_request(*this, readings_, e, *q, adapter_info(c.qp), c.sgl, c.flags,
                       {"NdkSend", "SND-02", "SND-03", listed});
    return e;
}

void Model::commit(const calls::Send& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) {
        if (auto* q = state_mut<QpState>(c.qp)) remember(q->failed_inline, c.request_context);
        release_deferred(c.qp);
    }
    if (stage != Stage::done) return;
    post(c.qp, c, c.request_context, c.flags, false);
}

Expectation Model::expect_call(const calls::SendAndInvalidate& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"SAI-01"};
    const QpState* q = require_connected_qp(e, c.qp, "SAI-04");
    if (!q) return e;
    uint32_t listed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                      NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT | NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER;
    check_op_flags(e, c.flags, listed, "NdkSendAndInvalidate", {"SAI-05"});
    check_data_request(*this, readings_, e, *q, adapter_info(c.qp), c.sgl, c.flags,
                       {"NdkSendAndInvalidate", "SAI-04", "SAI-05", listed});
    return e;
}

void Model::commit(const calls::SendAndInvalidate& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) {
        if (auto* q = state_mut<QpState>(c.qp)) remember(q->failed_inline, c.request_context);
        release_deferred(c.qp);
    }
    if (stage != Stage::done) return;
    post(c.qp, c, c.request_context, c.flags, false);
}

Expectation Model::expect_call(const calls::Read& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"RD-01", "SGE-11", "SGE-12"};
    const QpState* q = require_connected_qp(e, c.qp, "RD-04");
    if (!q) return e;
    uint32_t listed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER;
    if (readings_.version_at_least(1, 2)) listed |= readings_.read_local_invalidate_flag;  // AMB-02
    check_op_flags(e, c.flags, listed, "NdkRead", {"RD-06"});
    check_data_request(*this, readings_, e, *q, adapter_info(c.qp), c.sgl, c.flags,
                       {"NdkRead", "RD-04", "RD-06", listed, true});
    return e;
}

void Model::commit(const calls::Read& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) {
        if (auto* q = state_mut<QpState>(c.qp)) remember(q->failed_inline, c.request_context);
        release_deferred(c.qp);
    }
    if (stage != Stage::done) return;
    post(c.qp, c, c.request_context, c.flags, false);
}

Expectation Model::expect_call(const calls::Write& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"WRT-01", "SGE-04", "SGE-12"};
    const QpState* q = require_connected_qp(e, c.qp, "WRT-02");
    if (!q) return e;
    uint32_t listed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER;
    if (readings_.inline_on_write_listed) listed |= NDK_OP_FLAG_INLINE;  // AMB-13
    check_op_flags(e, c.flags, listed, "NdkWrite", {"WRT-03"});
    check_data_request(*this, readings_, e, *q, adapter_info(c.qp), c.sgl, c.flags,
                       {"NdkWrite", "WRT-02", "WRT-03", listed});
    return e;
}

void Model::commit(const calls::Write& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) {
        if (auto* q = state_mut<QpState>(c.qp)) remember(q->failed_inline, c.request_context);
        release_deferred(c.qp);
    }
    if (stage != Stage::done) return;
    post(c.qp, c, c.request_context, c.flags, false);
}

// ======================= NdkFlush (FLS-*) =======================

Expectation Model::expect_call(const calls::Flush& c) const {
    Expectation e;
    e.returns_void = true;  // FLS-01
    require(e, c.qp, Kind::qp, "pNdkQp");
    return e;
}

void Model::commit(const calls::Flush& c, const Observed&, Applied&, Stage) { flush_qp(c.qp); }

// ======================= The engine =======================

Completion Model::initiator_completion(ObjectId qp, const WorkRequest& wr,
                                       NDK_OPERATION_TYPE type) const {
    const auto& q = std::get<QpState>(objects_[qp].state);
    Completion done;
    done.qp = qp;
    done.cq = q.initiator_cq;       // CQP-OBJ-02, FR-QP-01: initiator requests complete here
    done.qp_context = q.qp_context;  // CQP-CTX-01
    // FR-RES-01 and its siblings: `type` is what NDK_RESULT_EX.Type must say.
    done.request_context = wr.request_context;
    done.type = type;
    return done;
}

void Model::post(ObjectId qp, const Call& call, Context request_context, uint32_t flags,
                 bool receive_queue, std::optional<Completion> decided) {
    auto& q = std::get<QpState>(objects_[qp].state);
    WorkRequest wr{q.next_sequence++, call, request_context, flags, false, std::move(decided)};
    if (receive_queue) {
        ++q.receive_outstanding;
        q.receive.push_back(std::move(wr));
        if (q.peer) run_queues(q.peer);  // a send waiting on this receive may go on
        return;
    }
    ++q.initiator_outstanding;
    // DEFER-02, FR-DEFER-01: a hint. The reference provider holds such requests back until one
    // without it (exercising DEFER-04/05); in check mode timing is the provider's, outcomes are
    // the same.
    bool hold = (flags & NDK_OP_FLAG_DEFER) && readings_.version_at_least(1, 2) &&
                mode_ == Mode::simulate && readings_.reference.hold_deferred;
    wr.deferred = hold;
    q.initiator.push_back(std::move(wr));
    if (!hold) {
        for (auto& queued : q.initiator) queued.deferred = false;
        run_queues(qp);
    }
}

void Model::release_deferred(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q) return;
    bool any = false;
    for (auto& wr : q->initiator) any |= std::exchange(wr.deferred, false);
    if (any) run_queues(qp);  // DEFER-04: earlier DEFER requests reach the hardware first
}

void Model::run_queues(ObjectId qp) {
    Object* o = find_mutable(qp);
    if (!o || o->kind != Kind::qp) return;
    for (;;) {
        auto& q = std::get<QpState>(objects_[qp].state);
        // Requests run one at a time in posting order, so READ_FENCE (FR-FENCE-01) always holds.
        if (q.initiator.empty() || q.initiator.front().deferred) return;
        // Taken off the queue first: a failing request must not be flushed with those behind it.
        WorkRequest wr = std::move(q.initiator.front());
        q.initiator.pop_front();
        bool was_error = q.error;
        Completion done;
        if (!execute(qp, wr, done)) {  // waiting (a send without a receive at the peer)
            std::get<QpState>(objects_[qp].state).initiator.push_front(std::move(wr));
            return;
        }
        deliver(std::move(done));
        // MODEL-CQ-ERR-01: the failed request's entry comes first, then what is behind it is
        // flushed (STATUS_CANCELLED).
        if (!was_error && std::get<QpState>(objects_[qp].state).error) fail_qp(qp, false);
    }
}

void Model::record_landing(Completion& done, const Extent& target, std::vector<std::byte> bytes) {
    if (mode_ == Mode::simulate) {
        scatter(memory_, target, bytes.data(), bytes.size());
        return;
    }
    Completion::Landing landing;
    for (size_t i = 0; i < target.pages.size(); ++i) {
        landing.at.push_back({target.pages[i], target.offsets[i]});
        landing.sizes.push_back(target.sizes[i]);
    }
    landing.bytes = std::move(bytes);
    done.landings.push_back(std::move(landing));
}

void Model::remote_failure(ObjectId qp, Completion& done, NTSTATUS status, RuleIds rules,
                           std::string why) {
    done.outcome = Completion::Outcome::error;
    done.status = status;
    done.rules = std::move(rules);
    done.why = std::move(why);
    // An error completion moves the QP to the error state (later requests are flushed); what
    // becomes of the peer is open (AMB-12, MODEL-CQ-ERR-01), so its completions are not judged.
    auto& q = std::get<QpState>(objects_[qp].state);
    if (auto* peer = state_mut<QpState>(q.peer)) peer->peer_error = true;
}

bool Model::execute(ObjectId qp, const WorkRequest& wr, Completion& done) {
    auto& q = std::get<QpState>(objects_[qp].state);
    bool silent_flag = wr.flags & NDK_OP_FLAG_SILENT_SUCCESS;
    if (wr.decided) {
        done = *wr.decided;
        if (q.error) done = cancelled(qp, wr, false);
        return true;
    }
    if (q.error) {  // a request after an error is flushed (MODEL-CQ-ERR-01, FLS-02)
        done = cancelled(qp, wr, false);
        return true;
    }
    const bool is_send = std::holds_alternative<calls::Send>(wr.call) ||
                         std::holds_alternative<calls::SendAndInvalidate>(wr.call);
    NDK_OPERATION_TYPE type = is_send ? NdkOperationTypeSend
                              : std::holds_alternative<calls::Read>(wr.call) ? NdkOperationTypeRead
                                                                             : NdkOperationTypeWrite;
    done = initiator_completion(qp, wr, type);
    std::string why;
    RuleIds rules;

    if (is_send) {
        const std::vector<Sge>& sgl = std::holds_alternative<calls::Send>(wr.call)
                                          ? as<calls::Send>(wr.call).sgl
                                          : as<calls::SendAndInvalidate>(wr.call).sgl;
        const std::vector<std::byte>& inline_payload =
            std::holds_alternative<calls::Send>(wr.call)
                ? as<calls::Send>(wr.call).inline_payload
                : as<calls::SendAndInvalidate>(wr.call).inline_payload;
        bool is_inline = wr.flags & NDK_OP_FLAG_INLINE;
        std::vector<std::byte> payload;
        if (is_inline) {
            payload = inline_payload;  // SGE-03, SGE-06: taken during the call
        } else {
            Extent source;
            if (!resolve_local(qp, sgl, 0, source, why, rules)) {
                remote_failure(qp, done, STATUS_ACCESS_VIOLATION, rules, why);  // local protection
                q.error = true;
                return true;
            }
            payload = gather(memory_, source);
        }
        // RCV-03: the next receive at the peer (its receive queue or its SRQ) takes the send.
        auto* peer = state_mut<QpState>(q.peer);
        if (!peer) {
            remote_failure(qp, done, STATUS_CONNECTION_ABORTED, {"MODEL-CQ-ERR-01"},
                           "the peer QP is gone");
            q.error = true;
            return true;
        }
        std::optional<WorkRequest> receive;
        if (peer->srq) {
            auto* s = state_mut<SrqState>(peer->srq);
            if (!s || s->receives.empty()) return false;
            receive = s->receives.front();
            s->receives.pop_front();
            if (s->notify_armed && s->receives.size() < s->notify_threshold &&
                mode_ == Mode::simulate) {
                s->notify_armed = false;  // SRQ-10
                emit({Event::Kind::srq_notification, peer->srq, 0, STATUS_SUCCESS, 0});
            }
        } else {
            if (peer->receive.empty()) return false;  // waits, as with an infinite RNR retry
            receive = peer->receive.front();
            peer->receive.pop_front();
        }
        ObjectId peer_id = q.peer;
        const std::vector<Sge>& rsgl = std::holds_alternative<calls::Receive>(receive->call)
                                           ? as<calls::Receive>(receive->call).sgl
                                           : as<calls::SrqReceive>(receive->call).sgl;
        Completion got;
        got.qp = peer_id;
        got.cq = peer->receive_cq;  // CQP-OBJ-02
        got.receive_queue = true;
        got.qp_context = peer->qp_context;  // CQP-CTX-01
        got.request_context = receive->request_context;
        got.type = NdkOperationTypeReceive;
        got.sequence = receive->sequence;
        Extent target;
        std::string rwhy;
        RuleIds rrules;
        if (!resolve_local(peer_id, rsgl, kLocalWrite, target, rwhy, rrules)) {
            got.outcome = Completion::Outcome::error;
            got.status = STATUS_ACCESS_VIOLATION;
            got.rules = rrules;
            got.why = rwhy;
            remote_failure(qp, done, STATUS_ACCESS_VIOLATION, {"MODEL-CQ-ERR-01"},
                           "the peer's receive buffer is not writable: " + rwhy);
        } else if (target.bytes() < payload.size()) {
            got.outcome = Completion::Outcome::error;
            got.status = STATUS_BUFFER_TOO_SMALL;
            got.rules = {"RCV-03", "MODEL-CQ-ERR-01"};
            got.why = "the receive buffer holds " + num(target.bytes()) + " bytes, the send " +
                      num(payload.size());
            remote_failure(qp, done, STATUS_INVALID_BUFFER_SIZE, {"MODEL-CQ-ERR-01"},
                           "the peer's receive buffer is too small");
        } else {
            Extent used;
            uint64_t left = payload.size();
            for (size_t i = 0; i < target.pages.size() && left > 0; ++i) {
                uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(left, target.sizes[i]));
                used.append(target.pages[i], target.offsets[i], n);
                left -= n;
            }
            got.bytes_transferred = static_cast<uint32_t>(payload.size());  // CQ-RES-01
            record_landing(got, used, payload);
            if (std::holds_alternative<calls::SendAndInvalidate>(wr.call)) {
                // SAI-01: the peer invalidates the token; SAI-02: a bad token aborts there.
                uint32_t token = as<calls::SendAndInvalidate>(wr.call).remote_token;
                ObjectId victim = object_of_token(objects_[peer_id].adapter, token, true);
                if (victim) {
                    invalidate_token_of(victim);
                    got.type = NdkOperationTypeReceiveAndInvalidate;  // CQ-RES-07
                    got.invalidated = true;
                    got.invalidated_token = token;
                } else {
                    got.outcome = Completion::Outcome::any;
                    remote_failure(qp, done, STATUS_CONNECTION_ABORTED, {"SAI-02"},
                                   "the token to invalidate is not valid at the peer");
                    done.outcome = Completion::Outcome::any;  // the abort's form is open
                }
            }
        }
        bool solicited = wr.flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT;  // SND-04
        if (got.outcome == Completion::Outcome::error)
            if (auto* pq = state_mut<QpState>(peer_id)) pq->error = true;
        // Deliver the receive first: by the time the sender completes, the data is there.
        deliver(std::move(got));
        if (solicited) notify_cq(peer->receive_cq, false, true);
        if (done.outcome == Completion::Outcome::error) q.error = true;
        done.silent = silent_flag && done.outcome == Completion::Outcome::success;
        return true;
    }

    // Read and Write.
    bool is_read = type == NdkOperationTypeRead;
    const auto& sgl = is_read ? as<calls::Read>(wr.call).sgl : as<calls::Write>(wr.call).sgl;
    uint64_t remote_address = is_read ? as<calls::Read>(wr.call).remote_address
                                      : as<calls::Write>(wr.call).remote_address;
    uint32_t remote_token = is_read ? as<calls::Read>(wr.call).remote_token
                                    : as<calls::Write>(wr.call).remote_token;
    uint64_t bytes = total_length(sgl);
    bool is_inline = !is_read && (wr.flags & NDK_OP_FLAG_INLINE);
    Extent local;
    uint32_t local_need = is_read ? static_cast<uint32_t>(kLocalWrite) : 0u;
    bool sink_ok = adapter_info(qp).AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
    if (is_read && !sink_ok) local_need |= kReadSink;  // RD-03, RMR-SINK-01, FR-SINK-01
    if (!is_inline && !resolve_local(qp, sgl, local_need, local, why, rules)) {
        bool sink_only = is_read && !sink_ok &&
                         resolve_local(qp, sgl, kLocalWrite, local, why, rules);
        remote_failure(qp, done, STATUS_ACCESS_VIOLATION, rules, why);
        if (sink_only) done.outcome = Completion::Outcome::any;  // RD-03 is the caller's duty
        q.error = true;
        return true;
    }
    Extent remote;
    ObjectId target = 0;
    if (!resolve_remote(qp, remote_token, remote_address, bytes,
                        is_read ? kRemoteRead : kRemoteWrite, remote, why, rules, &target)) {
        bool beyond = why.find("beyond") != std::string::npos;
        NTSTATUS status = is_read && beyond ? STATUS_REMOTE_RESOURCES : STATUS_ACCESS_VIOLATION;
        if (is_read && beyond) rules.push_back("RD-05");
        remote_failure(qp, done, status, rules, why);
        q.error = true;
        return true;
    }
    if (is_read) {
        record_landing(done, local, gather(memory_, remote));  // RD-01
        // RD-02: on success the first SGE's token is invalidated (where supported).
        if ((wr.flags & readings_.read_local_invalidate_flag) &&
            (adapter_info(qp).AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED) &&
            !sgl.empty())
            if (ObjectId victim = object_of_token(objects_[qp].adapter, sgl[0].token, false))
                invalidate_token_of(victim);
    } else {
        std::vector<std::byte> data =
            is_inline ? as<calls::Write>(wr.call).inline_payload : gather(memory_, local);
        record_landing(done, remote, std::move(data));  // WRT-01
    }
    done.silent = silent_flag;
    return true;
}

Completion Model::cancelled(ObjectId qp, const WorkRequest& wr, bool receive_queue) const {
    const auto& q = std::get<QpState>(objects_[qp].state);
    Completion done;
    done.qp = qp;
    done.cq = receive_queue ? q.receive_cq : q.initiator_cq;
    done.receive_queue = receive_queue;
    done.qp_context = q.qp_context;
    done.request_context = wr.request_context;
    done.sequence = wr.sequence;
    done.outcome = Completion::Outcome::cancelled;  // FLS-02, CQ-CST-02
    done.status = STATUS_CANCELLED;
    done.rules = {"FLS-02"};
    std::visit([&](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, calls::Receive> || std::is_same_v<T, calls::SrqReceive>)
            done.type = NdkOperationTypeReceive;
        else if constexpr (std::is_same_v<T, calls::Read>) done.type = NdkOperationTypeRead;
        else if constexpr (std::is_same_v<T, calls::Write>) done.type = NdkOperationTypeWrite;
        else if constexpr (std::is_same_v<T, calls::FastRegister>) done.type = NdkOperationTypeFastRegister;
        else if constexpr (std::is_same_v<T, calls::Bind>) done.type = NdkOperationTypeBind;
        else if constexpr (std::is_same_v<T, calls::Invalidate>) done.type = NdkOperationTypeInvalidate;
        else done.type = NdkOperationTypeSend;
    }, wr.call);
    return done;
}

void Model::fail_qp(ObjectId qp, bool flush_receives) {
    auto& q = std::get<QpState>(objects_[qp].state);
    q.error = true;
    (void)flush_receives;
    // Requests behind the failed one are flushed (they complete with STATUS_CANCELLED).
    std::deque<WorkRequest> rest;
    rest.swap(q.initiator);
    for (const auto& wr : rest) deliver(cancelled(qp, wr, false));
    auto& q2 = std::get<QpState>(objects_[qp].state);
    std::deque<WorkRequest> receives;
    receives.swap(q2.receive);
    for (const auto& wr : receives) deliver(cancelled(qp, wr, true));
}

void Model::flush_qp(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q) return;
    // FLS-01..03: everything not yet done completes with STATUS_CANCELLED. In check mode a
    // request the model has already executed may still be in the provider's hands: it may
    // complete normally or be cancelled.
    for (auto& done : q->initiator_pending)
        if (done.outcome == Completion::Outcome::success)
            done.outcome = Completion::Outcome::success_or_cancelled;
    for (auto& done : q->receive_pending)
        if (done.outcome == Completion::Outcome::success)
            done.outcome = Completion::Outcome::success_or_cancelled;
    std::deque<WorkRequest> initiator, receive;
    initiator.swap(q->initiator);
    receive.swap(q->receive);
    for (const auto& wr : initiator) deliver(cancelled(qp, wr, false));
    for (const auto& wr : receive) deliver(cancelled(qp, wr, true));
}

void Model::deliver(Completion done) {
    auto* q = state_mut<QpState>(done.qp);
    if (!q) return;
    bool initiator = !done.receive_queue;
    // Queue slots are counted free once the request is done (the model's reading; the docs only
    // require that a queue accept its depth, CQP-DEPTH-01/02).
    uint32_t& outstanding = initiator ? q->initiator_outstanding : q->receive_outstanding;
    if (outstanding > 0) --outstanding;
    if (q->peer_error && done.outcome == Completion::Outcome::success)
        done.outcome = Completion::Outcome::any;  // the peer's failure may reach this QP
    if (done.silent) {
        // WR-SILENT-01: no entry. Check mode: the bytes are checked with the next entry.
        if (mode_ == Mode::check) {
            remember(q->silent_successes, done.request_context);
            for (auto& l : done.landings) q->silent_landings.push_back(std::move(l));
        }
        return;
    }
    if (mode_ == Mode::check) {
        if (initiator) {
            for (auto& l : q->silent_landings) done.landings.push_back(std::move(l));
            q->silent_landings.clear();
        }
        (initiator ? q->initiator_pending : q->receive_pending).push_back(std::move(done));
        return;
    }
    // Simulate: the entry goes on the CQ (CQ-STATUS-02 on overrun).
    auto* cq = state_mut<CqState>(done.cq);
    if (!cq || cq->overrun) return;
    bool error_entry = done.outcome == Completion::Outcome::error ||
                       done.outcome == Completion::Outcome::cancelled;
    ObjectId cq_id = done.cq;
    if (cq->entries.size() >= cq->depth) {
        cq->overrun = true;
        if (cq->has_notification)
            emit({Event::Kind::cq_notification, cq_id, 0, STATUS_BUFFER_OVERFLOW, 0});
        return;
    }
    cq->entries.push_back(std::move(done));
    notify_cq(cq_id, error_entry, false);
}

// ======================= Access checks =======================

ObjectId Model::object_of_token(ObjectId adapter, uint32_t token, bool remote) const {
    for (const Object& o : objects_) {
        if (o.adapter != adapter || o.life == Life::closed) continue;
        if (o.kind == Kind::mr) {
            const auto& mr = std::get<MrState>(o.state);
            bool live = mr.phase == MrState::Phase::registered ||
                        mr.phase == MrState::Phase::fast_registered;
            const auto& t = remote ? mr.remote_token : mr.local_token;
            if (live && t && *t == token) return o.id;
        } else if (o.kind == Kind::mw && remote) {
            const auto& mw = std::get<MwState>(o.state);
            if (mw.bound && mw.remote_token && *mw.remote_token == token) return o.id;
        }
    }
    return 0;
}

namespace {

// Adds [address, address + bytes) of a region to an extent. FR-MAP-01, RMR-VA-01: byte k of a
// region (address base + k) is byte (FBO + k) % PAGE_SIZE of its page (FBO + k) / PAGE_SIZE.
void map_region(const Region& region, uint64_t address, uint64_t bytes, Extent& out) {
    uint64_t offset = region.first_byte_offset + (address - region.base);
    while (bytes > 0) {
        uint64_t page = offset / PAGE_SIZE;
        uint32_t in_page = static_cast<uint32_t>(offset % PAGE_SIZE);
        uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(bytes, PAGE_SIZE - in_page));
        out.append(region.pages[page], in_page, n);
        offset += n;
        bytes -= n;
    }
}

}  // namespace

bool Model::resolve_local(ObjectId qp, const std::vector<Sge>& sgl, uint32_t need, Extent& out,
                          std::string& why, RuleIds& rules) const {
    const Object& qo = objects_[qp];
    const auto& q = std::get<QpState>(qo.state);
    const auto* pd = state_of<PdState>(q.pd);
    for (size_t i = 0; i < sgl.size(); ++i) {
        const Sge& sge = sgl[i];
        if (sge.length == 0) continue;
        if (pd && pd->privileged_token && sge.token == *pd->privileged_token) {
            // SGE-01, PTOK-01, LAM-USE-02: logical addresses of live LAMs, local read/write.
            bool sink_ok = adapter_info(qp).AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
            if ((need & kReadSink) && !sink_ok) {
                why = "SGE " + num(i) + " uses the privileged token as a read sink";
                rules = {"LAM-USE-03", "PTOK-03"};
                return false;
            }
            uint64_t address = sge.address, left = sge.length;
            while (left > 0) {
                auto pfn = pfn_of_logical(qo.adapter, address);
                if (!pfn) {
                    why = "SGE " + num(i) + " names logical address " + num(address) +
                          " that no live LAM maps";
                    rules = {"SGE-01", "LAM-USE-02"};
                    return false;
                }
                uint32_t in_page = static_cast<uint32_t>(address % PAGE_SIZE);
                uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(left, PAGE_SIZE - in_page));
                out.append(*pfn, in_page, n);
                address += n;
                left -= n;
            }
            continue;
        }
        ObjectId mr_id = object_of_token(qo.adapter, sge.token, false);
        const auto* mr = state_of<MrState>(mr_id);
        if (!mr) {
            why = "SGE " + num(i) + " has token " + num(sge.token) + ", no valid local token";
            rules = {"SGE-05", "MODEL-CQ-ERR-01"};
            return false;
        }
        if (find(mr_id)->parent != q.pd) {  // AMB-28: an MR of another PD
            why = "SGE " + num(i) + " names an MR of another PD";
            rules = {"AMB-28"};
            return false;
        }
        // RMR-ACC-03, FR-LEN-03; FR-TOK-02: the local token with addresses inside the region.
        if (!mr->region.covers(sge.address, sge.length)) {
            why = "SGE " + num(i) + " reaches outside its region";
            rules = {mr->fast_register ? "FR-LEN-03" : "RMR-ACC-03"};
            return false;
        }
        if ((need & kLocalWrite) && !(mr->region.access & kLocalWrite)) {  // RMR-ACC-02, FR-FLG-03
            why = "SGE " + num(i) + " needs local write, which its region lacks";
            rules = {mr->fast_register ? "FR-FLG-03" : "RMR-ACC-02"};
            return false;
        }
        if ((need & kReadSink) && !(mr->region.access & kReadSink)) {  // RMR-SINK-01, FR-SINK-01
            why = "SGE " + num(i) + " is a read sink without the read-sink right";
            rules = {mr->fast_register ? "FR-SINK-01" : "RMR-SINK-01"};
            return false;
        }
        map_region(mr->region, sge.address, sge.length, out);
    }
    return true;
}

bool Model::resolve_remote(ObjectId qp, uint32_t token, uint64_t address, uint64_t bytes,
                           uint32_t need, Extent& out, std::string& why, RuleIds& rules,
                           ObjectId* target) const {
    const auto& q = std::get<QpState>(objects_[qp].state);
    const Object* peer = find(q.peer);
    if (!peer || peer->life == Life::closed) {
        why = "the peer QP is gone";
        rules = {"MODEL-CQ-ERR-01"};
        return false;
    }
    const auto& pq = std::get<QpState>(peer->state);
    if (const auto* pd = state_of<PdState>(pq.pd); pd && pd->privileged_token &&
                                                 *pd->privileged_token == token) {
        why = "RemoteToken is the peer's privileged token";  // PTOK-02
        rules = {"PTOK-02"};
        return false;
    }
    ObjectId id = object_of_token(peer->adapter, token, true);
    if (target) *target = id;
    const char* right = need & kRemoteWrite ? "remote write" : "remote read";
    if (const auto* mr = state_of<MrState>(id)) {
        RuleIds access_rule = {mr->fast_register ? (need & kRemoteWrite ? "FR-FLG-05" : "FR-FLG-04")
                                                 : (need & kRemoteWrite ? "RMR-FLG-04" : "RMR-ACC-01")};
        if (find(id)->parent != pq.pd) {
            why = "the remote token names an MR of another PD than the peer QP's";
            rules = {"AMB-28"};
            return false;
        }
        // RMR-VA-02, FR-ZBVA-01: remote addresses are VAs inside [base, base + length), never
        // offsets from 0.
        if (!mr->region.covers(address, bytes)) {
            why = "the access [" + num(address) + ", +" + num(bytes) + ") reaches beyond the region";
            rules = {mr->fast_register ? "FR-LEN-03" : "RMR-ACC-03"};
            return false;
        }
        if (!(mr->region.access & need)) {
            why = std::string("the region does not grant ") + right;
            rules = access_rule;
            return false;
        }
        map_region(mr->region, address, bytes, out);
        return true;
    }
    if (const auto* mw = state_of<MwState>(id)) {
        const auto* mr = state_of<MrState>(mw->mr);
        if (!mw->region.covers(address, bytes)) {  // BND-08
            why = "the access reaches beyond the window";
            rules = {"BND-08"};
            return false;
        }
        if (!(mw->region.access & need) || !mr || !(mr->region.access & (kLocalWrite | kRemoteRead | kRemoteWrite) ) ) {
            if (!(mw->region.access & need)) {
                why = std::string("the window does not grant ") + right;
                rules = {"BND-08"};
                return false;
            }
        }
        if (!mr || mr->region.pages.empty() || !mr->region.covers(address, bytes)) {
            why = "the window's MR no longer maps the range";  // AMB-31
            rules = {"AMB-31"};
            return false;
        }
        map_region(mr->region, address, bytes, out);
        return true;
    }
    why = "RemoteToken " + num(token) + " is not a valid token at the peer";
    rules = {"TOK-03", "INV-01"};
    return false;
}

// ======================= Completions seen by the oracle (check mode) =======================

size_t Model::outstanding_completions(ObjectId qp) const {
    const auto* q = state_of<QpState>(qp);
    if (!q) return 0;
    if (mode_ == Mode::check) return q->initiator_pending.size() + q->receive_pending.size();
    size_t n = 0;
    for (ObjectId cq : {q->initiator_cq, q->receive_cq}) {
        if (const auto* c = state_of<CqState>(cq))
            for (const auto& e : c->entries) n += e.qp == qp;
        if (q->initiator_cq == q->receive_cq) break;
    }
    return n;
}

Verdict Model::expect_nothing_outstanding(ObjectId qp) {
    Verdict v;
    auto* q = state_mut<QpState>(qp);
    if (!q) return v;
    for (auto* list : {&q->initiator_pending, &q->receive_pending}) {
        for (const auto& done : *list)
            if (done.outcome != Completion::Outcome::any)
                v.add({{"WR-10", "FLS-03"},
                       "no completion appeared for the request with RequestContext " +
                           num(done.request_context) + " on QP " + num(qp)});
        list->clear();
    }
    return v;
}

namespace {

const char* outcome_rule(NDK_OPERATION_TYPE type) {
    switch (type) {
        case NdkOperationTypeReceive:
        case NdkOperationTypeReceiveAndInvalidate: return "RCV-03";
        case NdkOperationTypeSend: return "SND-01";
        case NdkOperationTypeFastRegister: return "FR-ST-01";
        case NdkOperationTypeBind: return "BND-01";
        case NdkOperationTypeInvalidate: return "INV-01";
        case NdkOperationTypeRead: return "RD-01";
        case NdkOperationTypeWrite: return "WRT-01";
    }
    return "CQ-CST-01";
}

}  // namespace

Verdict Model::observe_completion(ObjectId cq, const NDK_RESULT_EX& r, bool ex) {
    Verdict v;
    Context qp_context = reinterpret_cast<uintptr_t>(r.QPContext);
    Context request = reinterpret_cast<uintptr_t>(r.RequestContext);
    std::string what = "a completion with RequestContext " + num(request);
    // Find the request: QPs reporting to this CQ, with this QPContext, holding this request.
    for (Object& o : objects_) {
        if (o.kind != Kind::qp || o.life == Life::closed) continue;
        auto& q = std::get<QpState>(o.state);
        for (bool receive : {false, true}) {
            if ((receive ? q.receive_cq : q.initiator_cq) != cq) continue;
            auto& list = receive ? q.receive_pending : q.initiator_pending;
            auto it = std::find_if(list.begin(), list.end(), [&](const Completion& c) {
                return c.request_context == request && c.qp_context == qp_context;
            });
            if (it == list.end()) continue;
            if (it != list.begin() && !readings_.completion_order_relaxed)  // AMB-35
                v.add({{"AMB-35"}, what + " arrived before earlier requests of the same queue"});
            Completion expected = std::move(*it);
            list.erase(it);
            using Out = Completion::Outcome;
            std::string rule = outcome_rule(expected.type);
            bool landed = false;
            switch (expected.outcome) {
                case Out::success:
                    if (r.Status != STATUS_SUCCESS)
                        v.add({{rule, "CQ-CST-01"}, what + " should have succeeded, but its status is " +
                                                        std::to_string(r.Status)});
                    landed = r.Status == STATUS_SUCCESS;
                    break;
                case Out::success_or_cancelled:
                    if (r.Status != STATUS_SUCCESS && r.Status != STATUS_CANCELLED)
                        v.add({{rule, "FLS-02"}, what + " was flushed: it may succeed or be "
                                                        "cancelled, but its status is " +
                                                        std::to_string(r.Status)});
                    landed = r.Status == STATUS_SUCCESS;
                    break;
                case Out::cancelled:
                    if (r.Status != STATUS_CANCELLED)
                        v.add({{"FLS-02", "CQ-CST-02"},
                               what + " was flushed and must complete with STATUS_CANCELLED"});
                    break;
                case Out::error:
                    if (!NT_ERROR(r.Status)) {
                        RuleIds rules = expected.rules;
                        rules.push_back("CQ-CST-03");
                        v.add({rules, what + " must fail (" + expected.why + "), but succeeded"});
                    } else if (r.Status != expected.status) {
                        v.add({{"MODEL-CQ-ERR-01"},
                               what + " failed with another status than ndkct's table gives",
                               !readings_.completion_error_status_exact});
                    }
                    break;
                case Out::any:
                    break;
            }
            if (ex && expected.outcome != Out::any) {
                NDK_OPERATION_TYPE want = expected.type;
                if (r.Type != want && !(r.Status == STATUS_CANCELLED))  // CQ-RES-03, FR-RES-01
                    v.add({{"CQ-RES-03"}, what + " has Type " + num(r.Type) + ", expected " + num(want)});
                if (want == NdkOperationTypeReceiveAndInvalidate &&
                    static_cast<uint32_t>(r.TypeSpecificCompletionOutput) != expected.invalidated_token)
                    v.add({{"CQ-RES-07"}, what + " does not carry the invalidated token"});
                bool has_code = readings_.result_ex_layout == Readings::ResultExLayout::with_provider_error_code ||
                                (readings_.result_ex_layout == Readings::ResultExLayout::by_version &&
                                 readings_.version_at_least(2, 1));
                if (has_code && r.Status == STATUS_SUCCESS && r.ProviderErrorCode != 0)
                    v.add({{"CQ-RES-04"}, what + " succeeded with a non-zero ProviderErrorCode"});
            }
            if (landed && receive && r.BytesTransferred != expected.bytes_transferred)
                v.add({{"CQ-RES-01"}, what + " reports " + num(r.BytesTransferred) +
                                          " bytes transferred; " + num(expected.bytes_transferred) +
                                          " were sent"});
            if (landed) {
                for (const auto& landing : expected.landings) {
                    size_t at = 0;
                    for (size_t i = 0; i < landing.at.size(); ++i) {
                        const std::byte* p = memory_.page(landing.at[i].first) + landing.at[i].second;
                        // memcmp: std::equal over std::byte compares byte by byte (the oracle's
                        // hottest loop).
                        if (std::memcmp(p, landing.bytes.data() + at, landing.sizes[i]) != 0) {
                            v.add({{rule}, what + " succeeded, but the bytes at the target are not "
                                                  "the ones sent"});
                            break;
                        }
                        at += landing.sizes[i];
                    }
                }
            }
            return v;
        }
        // Not pending: was it a request that must leave no entry?
        if (std::find(q.failed_inline.begin(), q.failed_inline.end(), request) != q.failed_inline.end() &&
            q.qp_context == qp_context) {
            v.add({{"WR-05", "FR-ST-04"}, what + " belongs to a request that failed inline"});
            return v;
        }
        if (std::find(q.silent_successes.begin(), q.silent_successes.end(), request) !=
                q.silent_successes.end() &&
            q.qp_context == qp_context) {
            v.add({{"WR-SILENT-01", "FR-SILENT-01", "AMB-33"},
                   what + " belongs to a request with SILENT_SUCCESS that succeeded",
                   readings_.silent_success_entry_tolerated});
            return v;
        }
    }
    v.add({{"CQ-GET-04", "CQ-RES-05"}, what + " matches no request posted and outstanding on a QP of "
                                             "this CQ"});
    return v;
}

}  // namespace ndkct::model
