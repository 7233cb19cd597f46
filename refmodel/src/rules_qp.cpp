// Queue pairs and shared receive queues: creation within the adapter's limits, the six data
// requests (what each call must return and what it leaves posted), flush, and a QP in error.
// The engine that executes what is posted is rules_execute.cpp; the access checks
// rules_access.cpp; the completions the oracle sees rules_completion.cpp.
#include <algorithm>
#include <cstring>
#include <utility>

#include "ndkct/spec/status.hpp"

#include "ndkct/model/model.hpp"
#include "qp_rules.hpp"

namespace ndkct::model {

using namespace qp_rules;

// ======================= NdkCreateQp (CQP-*) =======================

Expectation Model::expect_call(const calls::CreateQp& c) const {
    Expectation e;
    const Object* pd = require(e, c.pd, Kind::pd, "pNdkPd");
    const Object* rcq = require(e, c.receive_cq, Kind::cq, "pReceiveCq");
    const Object* icq = require(e, c.initiator_cq, Kind::cq, "pInitiatorCq");
    if (!pd || !rcq || !icq) return e;
    e.may_pend = e.may_lack_resources = true;  // CQP-ST-02, CQP-ST-03
    // CQP-LIM-07 first: it is the rule that says a request within every limit must not be
    // refused (CQP-ST-01 says what an inline success means).
    e.success_rules = {"CQP-LIM-07", "CQP-ST-01"};
    if (rcq->adapter != pd->adapter || icq->adapter != pd->adapter)  // AMB-28
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-28"}, Strength::reading,
               "a CQ belongs to another adapter");
    const NDK_ADAPTER_INFO& info = adapter_info(c.pd);
    // CQP-LIM-01..05, CQP-LIM-06: each limit over its maximum is refused, never clamped. A
    // clamp (acceptance) or another status breaks CQP-LIM-06 first: it is the rule that says
    // how a limit violation is refused; the limit's own rule follows.
    auto limit = [&](uint64_t value, uint64_t max, const char* rule, const char* what) {
        if (value > max)
            e.fail(STATUS_INVALID_PARAMETER, {"CQP-LIM-06", rule}, Strength::documented,
                   std::string(what) + " " + num(value) + " exceeds the adapter's " + num(max));
    };
    limit(c.receive_queue_depth, info.MaxReceiveQueueDepth, "CQP-LIM-01", "ReceiveQueueDepth");
    limit(c.initiator_queue_depth, info.MaxInitiatorQueueDepth, "CQP-LIM-02",
          "InitiatorQueueDepth");
    limit(c.max_receive_sge, info.MaxReceiveRequestSge, "CQP-LIM-03", "MaxReceiveRequestSge");
    limit(c.max_initiator_sge, info.MaxInitiatorRequestSge, "CQP-LIM-04", "MaxInitiatorRequestSge");
    limit(c.inline_data_size, info.MaxInlineDataSize, "CQP-LIM-05", "InlineDataSize");
    if (readings_.zero_queue_depth_rejected &&  // AMB-27
        (c.receive_queue_depth == 0 || c.initiator_queue_depth == 0 || c.max_receive_sge == 0 ||
         c.max_initiator_sge == 0))
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-27"}, Strength::reading,
               "a depth or SGE count is 0");
    if (readings_.cq_capacity_checked) {  // CQP-CQ-01
        const auto& r = std::get<CqState>(rcq->state);
        const auto& i = std::get<CqState>(icq->state);
        if (r.depth < c.receive_queue_depth || i.depth < c.initiator_queue_depth)
            e.fail(STATUS_INVALID_PARAMETER, {"CQP-CQ-01"}, Strength::reading,
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
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-28"}, Strength::reading,
               "a CQ belongs to another adapter");
    const NDK_ADAPTER_INFO& info = adapter_info(c.pd);
    auto limit = [&](uint64_t value, uint64_t max, const char* rule, const char* what) {
        if (value > max)
            e.fail(STATUS_INVALID_PARAMETER, {rule, "CQP-SRQ-05"}, Strength::documented,
                   std::string(what) + " " + num(value) + " exceeds the adapter's " + num(max));
    };
    limit(c.initiator_queue_depth, info.MaxInitiatorQueueDepth, "CQP-SRQ-02",
          "InitiatorQueueDepth");
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
    // SRQ-16: the create's threshold arms the notification when there is a callback (SRQ-07:
    // none is called otherwise). MODEL-SRQ-02: whether the empty new SRQ counts as below it.
    s.notify_armed = c.notify_threshold > 0 && c.has_notification;
    s.needs_reach = !readings_.srq_initial_notify_immediate;
    s.has_notification = c.has_notification;
    create_stage(Kind::srq, c.pd, s, {}, applied, stage);
    if (stage == Stage::done || stage == Stage::completed) srq_check_threshold(applied.created);
}

void Model::srq_check_threshold(ObjectId srq) {
    auto* s = state_mut<SrqState>(srq);
    if (!s || s->failed) return;
    if (s->receives.size() >= s->notify_threshold) s->reached = true;
    // SRQ-10: armed, and the queued receives are below the threshold (SRQ-11: already below
    // when armed by NdkModifySrq counts); MODEL-SRQ-02: the arm made at creation waits until
    // the count reached the threshold once (after_threshold_reached).
    bool due = s->notify_armed && s->receives.size() < s->notify_threshold &&
               (!s->needs_reach || s->reached);
    if (!due || mode_ != Mode::simulate) return;
    s->notify_armed = false;  // SRQ-12: one notification, then disarmed
    emit({Event::Kind::srq_notification, srq, 0, STATUS_SUCCESS, 0});  // SRQ-03
}

Expectation Model::expect_call(const calls::ModifySrq& c) const {
    Expectation e;
    if (!require(e, c.srq, Kind::srq, "pNdkSrq")) return e;
    e.may_pend = e.may_lack_resources = true;  // SRQ-14
    e.success_rules = {"SRQ-14"};
    if (c.depth > adapter_info(c.srq).MaxSrqDepth)  // SRQ-09
        e.fail(STATUS_INVALID_PARAMETER, {"SRQ-09"}, Strength::documented,
               "SrqDepth exceeds MaxSrqDepth");
    const auto& s = std::get<SrqState>(find(c.srq)->state);
    // MODEL-SRQ-01: a depth below the receives now queued (reject: the call fails and changes
    // nothing, inline or through its callback; accept: the new depth holds, the queued
    // receives stay and further posts wait for room, MODEL-WR-DEPTH-01).
    if (c.depth != 0 && c.depth < s.outstanding && readings_.modify_srq_below_queued_rejected)
        e.fail(STATUS_INVALID_PARAMETER, {"MODEL-SRQ-01"}, Strength::reading,
               "SrqDepth " + num(c.depth) + " is below the " + num(s.outstanding) +
                   " receives outstanding");
    return e;
}

void Model::commit(const calls::ModifySrq& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done && stage != Stage::completed) return;
    auto* s = state_mut<SrqState>(c.srq);
    if (c.depth != 0) s->depth = c.depth;  // SRQ-02: 0 keeps the depth (SRQ-17: the new one holds)
    if (c.notify_threshold > 0) {  // SRQ-10: sets and arms; SRQ-13: 0 keeps threshold and arm
        s->notify_threshold = c.notify_threshold;
        s->notify_armed = s->has_notification && !s->armed_by_pending_modify_fired;  // SRQ-07
        s->armed_by_pending_modify_fired = false;
        s->needs_reach = false;  // SRQ-11: already below the threshold fires at once
    }
    srq_check_threshold(c.srq);
}

Expectation Model::expect_call(const calls::SrqReceive& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"RCV-02", "SGE-10"};
    const Object* o = require(e, c.srq, Kind::srq, "pNdkSrq");
    if (!o) return e;
    const auto& s = std::get<SrqState>(o->state);
    if (c.sgl.size() > s.max_sge)  // SGE-10, AMB-26
        limit_exceeded(e, {"SGE-10"},
                       "nSge " + num(c.sgl.size()) + " exceeds the SRQ's MaxReceiveRequestSge " +
                           num(s.max_sge));
    // SRQ-17: up to the current depth must be accepted; beyond it (SRQ-18, the caller's error)
    // MODEL-WR-DEPTH-01 decides.
    check_depth(e, s.outstanding, s.depth, "SRQ-17");
    if (s.failed) {  // SRQ-15, MODEL-CQ-STATUS-01: the SRQ is unusable
        e.may_fail_any = true;
        e.any_failure_warns = readings_.post_after_cq_error_cancelled;
        e.any_failure_rules = {"MODEL-CQ-STATUS-01", "SRQ-15"};
    }
    return e;
}

void Model::commit(const calls::SrqReceive& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done) return;
    auto* s = state_mut<SrqState>(c.srq);
    if (s->failed) return;  // SRQ-15: it reports no further completions
    s->receives.push_back({0, c, c.request_context, 0});
    ++s->posted;
    ++s->outstanding;
    if (s->receives.size() >= s->notify_threshold) s->reached = true;  // MODEL-SRQ-02
    // A send waiting for a receive on any QP of this SRQ may go on now.
    std::vector<ObjectId> attached = s->qps;  // run_queues may change the list
    for (ObjectId id : attached)
        if (const Object* o = find(id); o && o->life != Life::closed)
            if (ObjectId peer = std::get<QpState>(o->state).peer) run_queues(peer);
}

// Check mode: an SRQ notification the provider delivered (SRQ-03/07/10/12/15/16, MODEL-SRQ-02).
void Model::observe_srq_notification(ObjectId srq, NTSTATUS status, Verdict& v) {
    auto* s = state_mut<SrqState>(srq);
    if (!s) return;
    if (mode_ == Mode::check) {
        if (!s->has_notification)  // SRQ-07
            v.add({{"SRQ-07"}, "an SRQ created without a notification callback was notified"});
        if (status == STATUS_SUCCESS) {
            // An NdkModifySrq that arms may notify (SRQ-11) before its own callback came.
            bool arming = false;
            for (const auto& [pid, p] : pending_)
                if (const auto* m = std::get_if<calls::ModifySrq>(&p.call);
                    m && m->srq == srq && m->notify_threshold > 0 && p.committed)
                    arming = true;
            if (!s->notify_armed && arming) {
                s->armed_by_pending_modify_fired = true;
            } else if (!s->notify_armed) {  // SRQ-12: one notification per arm
                v.add({{"SRQ-12"}, "an SRQ notification came while it was not armed"});
            } else if (s->needs_reach && s->posted < s->notify_threshold) {  // MODEL-SRQ-02, SRQ-16
                v.add({{"MODEL-SRQ-02", "SRQ-16"},
                       "the SRQ was notified although its receives never reached the threshold " +
                           num(s->notify_threshold) + " (" + num(s->posted) + " posted)"});
            }
        } else if (status != STATUS_INTERNAL_ERROR) {  // SRQ-03
            v.add({{"SRQ-03"},
                   "an SRQ notification carried SrqStatus " + num(static_cast<uint32_t>(status)) +
                       ": only STATUS_SUCCESS and STATUS_INTERNAL_ERROR are defined"});
        }
    }
    s->notify_armed = false;
    if (status == STATUS_INTERNAL_ERROR) fail_srq(srq);  // SRQ-15
}

// ======================= Receive (RCV-*, WR-06) =======================

Expectation Model::expect_call(const calls::Receive& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"RCV-01", "SGE-10", "CQP-DEPTH-01"};
    const Object* o = require(e, c.qp, Kind::qp, "pNdkQp");
    if (!o) return e;
    const auto& q = std::get<QpState>(o->state);
    if (q.srq) {
        // MODEL-RCV-01, WR-06, CQP-SRQ-01: the receive side of such a QP is its SRQ, so the call
        // must fail inline (the profile's status; another error is a warning), leaving no
        // entry and the SRQ untouched.
        e.fail(readings_.receive_on_srq_qp_status, {"MODEL-RCV-01", "WR-06", "CQP-SRQ-01"},
               Strength::model_choice, "the QP takes its receives from an SRQ");
        e.consumer_error = true;  // no page gives it an outcome: any is a warning
        return e;
    }
    if (c.sgl.size() > q.max_receive_sge)  // SGE-10, AMB-26 (up to it is accepted: CQP-SGE-01)
        limit_exceeded(e, {"SGE-10"},
                       "nSge " + num(c.sgl.size()) + " exceeds the QP's MaxReceiveRequestSge " +
                           num(q.max_receive_sge));
    check_depth(e, q.receive_outstanding, q.receive_depth, "CQP-DEPTH-01");  // N fits; N+1 may not
    // CQP-DEPTH-01, CQP-SGE-01 first where only the QP's own size covers the request: the
    // receive that fills the queue's last slot, or uses the last SGE the QP was created with.
    if (c.sgl.size() > 1 && c.sgl.size() == q.max_receive_sge) promise_first(e, "CQP-SGE-01");
    if (q.receive_depth > 1 && q.receive_outstanding + 1 == q.receive_depth)
        promise_first(e, "CQP-DEPTH-01");
    check_usable(e, q);
    // MODEL-FLS-01 (cancelled): a QP the consumer flushed is in error; it flushes the receive
    // (FLS-02) or refuses it inline, as for initiator requests (require_connected_qp).
    if (q.flushed || q.flushed_usable) {
        e.may_fail_any = true;
        e.any_failure_warns = q.flushed_usable;
        e.any_failure_rules = {"RCV-01", "MODEL-FLS-01"};
    }
    // CQP-STATE-02, AMB-39: a receive before the QP is connected; the docs do not say.
    const bool unconnected = q.connection == QpState::Connection::idle ||
                             q.connection == QpState::Connection::connecting;
    if (unconnected && readings_.receive_before_connect_rejected) {
        e.fail(STATUS_CONNECTION_INVALID, {"CQP-STATE-02", "AMB-39"}, Strength::reading,
               "the QP is not connected yet");
    } else if (unconnected && !e.may_fail_any) {
        e.may_fail_any = e.any_failure_warns = true;
        e.any_failure_rules = {"CQP-STATE-02", "AMB-39"};
    }
    return e;
}

void Model::commit(const calls::Receive& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done) return;
    post(c.qp, call_of(c), c.request_context, 0, true);
}

// ======================= Initiator data requests (SND, SAI, RD, WRT) =======================

// Checks shared by Send, SendAndInvalidate, Read and Write.
void Model::check_data_request(Expectation& e, const QpState& q, const std::vector<Sge>& sgl,
                               uint32_t flags, bool read) const {
    const Readings& r = readings_;
    const NDK_ADAPTER_INFO& info = adapter_info(q.pd);
    // NdkRead does not list NDK_OP_FLAG_INLINE: on a read the bit is an unlisted flag, which
    // check_op_flags judges (OPF-01), not a request for inline data (SGE-08).
    bool is_inline = !read && (flags & NDK_OP_FLAG_INLINE);
    uint64_t bytes = total_length(sgl);
    if (read) {
        if (sgl.size() > info.MaxReadRequestSge)  // SGE-11
            limit_exceeded(e, {"SGE-11"},
                           "nSge " + num(sgl.size()) + " exceeds MaxReadRequestSge " +
                               num(info.MaxReadRequestSge));
    } else if (!is_inline && sgl.size() > q.max_initiator_sge) {  // SGE-04, CQP-SGE-02, SGE-09
        limit_exceeded(e, {"SGE-04"},
                       "nSge " + num(sgl.size()) + " exceeds the QP's MaxInitiatorRequestSge " +
                           num(q.max_initiator_sge));
    }
    if (is_inline && bytes > q.inline_data_size)  // SGE-08 (up to it is accepted: CQP-INL-01)
        limit_exceeded(e, {"SGE-08"},
                       "inline data of " + num(bytes) + " bytes exceeds the QP's InlineDataSize " +
                           num(q.inline_data_size));
    if (bytes > info.MaxTransferLength)  // SGE-12
        limit_exceeded(e, {"SGE-12"},
                       "the request moves " + num(bytes) + " bytes, more than MaxTransferLength " +
                           num(info.MaxTransferLength));
    check_depth(e, q.initiator_outstanding, q.initiator_depth,
                "CQP-DEPTH-02");  // N fits, N+1 may not
    // CQP-SGE-02, CQP-INL-01, CQP-DEPTH-02 first where only the QP's own size covers the
    // request: the last SGE it was created with, inline data within its InlineDataSize (the
    // INLINE flag is what that size promises), the initiator queue's last slot.
    if (!read && !is_inline && sgl.size() > 1 && sgl.size() == q.max_initiator_sge)
        promise_first(e, "CQP-SGE-02");
    if (is_inline && bytes > 0 && bytes <= q.inline_data_size) promise_first(e, "CQP-INL-01");
    if (q.initiator_depth > 1 && q.initiator_outstanding + 1 == q.initiator_depth)
        promise_first(e, "CQP-DEPTH-02");
    // RD-08: as many reads in progress as the effective OutboundReadLimit must work. Beyond it,
    // MODEL-RD-01: queue (the read waits and succeeds: nothing to judge here) or fail (a consumer
    // error: any inline error, or an error completion; queueing it is a warning).
    if (read && q.outbound_read_limit && q.reads_outstanding >= q.outbound_read_limit &&
        r.outbound_read_overflow_fails) {
        e.may_fail_any = true;
        e.any_failure_rules = {"MODEL-RD-01", "RD-08"};
        e.preferred = STATUS_INSUFFICIENT_RESOURCES;  // the reference provider refuses it inline
    }
    check_usable(e, q);
}

Expectation Model::expect_call(const calls::Send& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"SND-01", "SGE-04", "SGE-08", "SGE-12"};
    const QpState* q = require_connected_qp(e, c.qp, "SND-02");
    if (!q) return e;
    uint32_t listed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                      NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT | NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER;
    check_op_flags(e, c.flags, listed, "NdkSend", "SND-03");
    check_data_request(e, *q, c.sgl, c.flags, false);
    // LAM-USE-02: logical addresses of live mappings with the PD's privileged token are local
    // sources; a refusal of a send from them breaks that rule first.
    if (!(c.flags & NDK_OP_FLAG_INLINE) && from_live_mappings(c.qp, c.sgl))
        promise_first(e, "LAM-USE-02");
    return e;
}

// Whether some SGE carries the QP's PD's privileged token, and every such SGE's first and last
// bytes are at logical addresses a live LAM maps (LAM-USE-02, PTOK-01).
bool Model::from_live_mappings(ObjectId qp, const std::vector<Sge>& sgl) const {
    const Object& qo = objects_[qp];
    const auto* pd = state_of<PdState>(std::get<QpState>(qo.state).pd);
    if (!pd || !pd->privileged_token) return false;
    bool any = false;
    for (const Sge& sge : sgl) {
        if (sge.token != *pd->privileged_token || sge.length == 0) continue;
        if (!pfn_of_logical(qo.adapter, sge.address) ||
            !pfn_of_logical(qo.adapter, sge.address + sge.length - 1))
            return false;
        any = true;
    }
    return any;
}

void Model::commit(const calls::Send& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) refuse_post(c.qp, c.request_context);
    if (stage != Stage::done) return;
    post(c.qp, call_of(c), c.request_context, c.flags, false);
}

Expectation Model::expect_call(const calls::SendAndInvalidate& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"SAI-01"};
    const QpState* q = require_connected_qp(e, c.qp, "SAI-04");
    if (!q) return e;
    uint32_t listed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                      NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT | NDK_OP_FLAG_INLINE | NDK_OP_FLAG_DEFER;
    check_op_flags(e, c.flags, listed, "NdkSendAndInvalidate", "SAI-05");
    check_data_request(e, *q, c.sgl, c.flags, false);
    return e;
}

void Model::commit(const calls::SendAndInvalidate& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) refuse_post(c.qp, c.request_context);
    if (stage != Stage::done) return;
    post(c.qp, call_of(c), c.request_context, c.flags, false);
}

Expectation Model::expect_call(const calls::Read& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"RD-01", "SGE-11", "SGE-12"};
    const QpState* q = require_connected_qp(e, c.qp, "RD-04");
    if (!q) return e;
    uint32_t listed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER;
    if (readings_.version_at_least(1, 2)) listed |= readings_.read_local_invalidate_flag;  // AMB-02
    check_op_flags(e, c.flags, listed, "NdkRead", "RD-06");
    check_data_request(e, *q, c.sgl, c.flags, true);
    return e;
}

void Model::commit(const calls::Read& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) refuse_post(c.qp, c.request_context);
    if (stage != Stage::done) return;
    post(c.qp, call_of(c), c.request_context, c.flags, false);
}

Expectation Model::expect_call(const calls::Write& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"WRT-01", "SGE-04", "SGE-12"};
    const QpState* q = require_connected_qp(e, c.qp, "WRT-02");
    if (!q) return e;
    uint32_t listed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER;
    if (readings_.inline_on_write_listed) listed |= NDK_OP_FLAG_INLINE;  // AMB-13
    check_op_flags(e, c.flags, listed, "NdkWrite", "WRT-03");
    check_data_request(e, *q, c.sgl, c.flags, false);
    return e;
}

void Model::commit(const calls::Write& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) refuse_post(c.qp, c.request_context);
    if (stage != Stage::done) return;
    post(c.qp, call_of(c), c.request_context, c.flags, false);
}

// ======================= NdkFlush (FLS-*) =======================

Expectation Model::expect_call(const calls::Flush& c) const {
    Expectation e;
    e.returns_void = true;  // FLS-01
    require(e, c.qp, Kind::qp, "pNdkQp");
    return e;
}

void Model::commit(const calls::Flush& c, const Observed&, Applied&, Stage) {
    flush_qp(c.qp);
    if (auto* q = state_mut<QpState>(c.qp)) q->deferred_posted.clear();  // cancelled, not held
    // MODEL-FLS-01 (cancelled): the flush leaves the QP in the error state, so what is posted
    // later is flushed too (FLS-02) and does nothing; "usable" keeps the QP working.
    if (readings_.flush_leaves_error)
        leave_in_error(c.qp);
    else if (auto* q = state_mut<QpState>(c.qp))
        q->flushed_usable = true;
}

// MODEL-FLS-01 (cancelled), WR-04: a QP left in error by the consumer (NdkFlush, or the close of
// its connector). Its later posts are flushed or refused (require_connected_qp), and it answers
// its peer no more (AMB-12): the peer's requests still in flight may fail or be cancelled, and
// later ones fail (execute()).
void Model::leave_in_error(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q) return;
    error_reaches_peer(qp);
    q = state_mut<QpState>(qp);
    q->error = q->flushed = true;
}

// FLS-02, AMB-12 (check mode): a QP going to error flushes the receives its peer's sends took in
// the model but that may not have landed yet, and answers its peer no more: the peer's
// requests in flight may fail in any way (a transport timeout on InfiniBand), and what the peer
// runs later is open (peer_error).
void Model::open_outcomes(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q || mode_ != Mode::check) return;
    q->outcome_open = true;
    for (auto* list : {&q->initiator_pending, &q->receive_pending})
        for (auto& done : *list)
            done.outcome = Completion::Outcome::any;
    // A request that failed here may have failed the peer's side too (AMB-12).
    if (auto* peer = state_mut<QpState>(q->peer)) peer->peer_error = true;
}

void Model::error_reaches_peer(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q || mode_ != Mode::check) return;
    for (auto& done : q->receive_pending)
        if (done.outcome == Completion::Outcome::success)
            done.outcome = Completion::Outcome::success_or_cancelled;
    auto* peer = state_mut<QpState>(q->peer);
    if (!peer) return;
    peer->peer_error = true;
    for (auto& done : peer->initiator_pending)
        if (done.outcome == Completion::Outcome::success) done.outcome = Completion::Outcome::any;
    for (auto& done : peer->receive_pending)
        if (done.outcome == Completion::Outcome::success)
            done.outcome = Completion::Outcome::success_or_cancelled;
}

}  // namespace ndkct::model
