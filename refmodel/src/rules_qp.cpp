// Queue pairs and shared receive queues: creation within the adapter's limits, the six data
// requests, flush, and the engine that executes posted requests in order, checks every access,
// and moves bytes (simulate) or records where bytes must land (check).
#include <algorithm>
#include <cstring>
#include <utility>

#include "ndkct/model/model.hpp"
#include "ndkct/spec/hex.hpp"
#include "ndkct/spec/names.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::model {

namespace {

std::string num(uint64_t v) {
    return std::to_string(v);
}

// A RequestContext or QPContext is a pointer to the consumer: shown in hex (spec::hex), as trace
// dumps and debuggers show it.
using spec::hex;

uint64_t total_length(const std::vector<Sge>& sgl) {
    uint64_t total = 0;
    for (const auto& sge : sgl)
        total += sge.length;
    return total;
}

template <typename T>
const T& as(const Call& call) {
    return std::get<T>(call);
}

// The byte buffers of landings already checked (check mode) or placed (simulate), kept for the
// next request's bytes (gather_expected) instead of a heap buffer allocated and freed for every
// request (the oracle's largest malloc/free, refmodel/bench). Per thread, not per Model: the
// property tests make a new Model for every sequence, which then starts with the last one's
// buffers. Bounded: at most kSpareBuffers buffers of at most kSpareBufferBytes each (1 MiB a
// thread); a larger transfer allocates its own, as before.
constexpr size_t kSpareBuffers = 16, kSpareBufferBytes = size_t{64} << 10;
thread_local std::vector<std::vector<std::byte>> spare_bytes;

void recycle_bytes(std::vector<std::byte>&& bytes) {
    if (spare_bytes.size() < kSpareBuffers && bytes.capacity() != 0 &&
        bytes.capacity() <= kSpareBufferBytes)
        spare_bytes.push_back(std::move(bytes));
}

// gather() into `out`, taking a spare buffer when `out` has no storage of its own.
void gather_into(const HostMemoryView& memory, const Extent& extent, std::vector<std::byte>& out) {
    if (out.capacity() == 0 && !spare_bytes.empty()) {
        out = std::move(spare_bytes.back());
        spare_bytes.pop_back();
    }
    gather(memory, extent, out);
}

constexpr size_t kRememberedContexts = 64;

// FR-DEFER-02: the held request was handed over by an NdkFastRegister's inline refusal.
bool handed_over_by_fast_register(const QpState& q, Context request_context) {
    return std::find(q.handed_over_by_fast_register.begin(), q.handed_over_by_fast_register.end(),
                     request_context) != q.handed_over_by_fast_register.end();
}

void remember(std::deque<Context>& list, Context context) {
    list.push_back(context);
    if (list.size() > kRememberedContexts) list.pop_front();
}

void remember(std::vector<Context>& list, Context context) {
    list.push_back(context);
    if (list.size() > kRememberedContexts) list.erase(list.begin());
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

// ======================= The engine =======================

namespace {
// A failure the profile's reading predicts where the other reading succeeds (DESIGN section 5:
// the reading not chosen is a warning, e.g. AMB-37's read into a sink-only region): until its
// entry shows which one the provider follows, whether the QP went to error is open, so what is
// flushed behind it may have run (as error_timing_open says for FLS-03). Without this, an
// entry of a later request retrieved first (another CQ) was judged flushed: FLS-02 against a
// provider following the other reading.
bool contested_failure(const Completion& done) {
    return !done.other_reading.empty() && done.other_reading_succeeds;
}
}  // namespace

namespace {

// Completion::target: the MR or MW a memory request acts on (request_in_flight).
ObjectId target_of(const Call& call) {
    if (const auto* fr = std::get_if<calls::FastRegister>(&call)) return fr->mr;
    if (const auto* bind = std::get_if<calls::Bind>(&call)) return bind->mw;
    if (const auto* inv = std::get_if<calls::Invalidate>(&call)) return inv->target;
    return 0;
}

}  // namespace

Completion Model::initiator_completion(ObjectId qp, Context request_context,
                                       NDK_OPERATION_TYPE type, ObjectId target) const {
    const auto& q = std::get<QpState>(objects_[qp].state);
    Completion done;
    done.qp = qp;
    done.cq = q.initiator_cq;  // CQP-OBJ-02, FR-QP-01, WR-01: initiator requests complete here
    done.qp_context = q.qp_context;  // CQP-CTX-01
    // FR-RES-01 and its siblings: `type` is what NDK_RESULT_EX.Type must say.
    done.request_context = request_context;
    done.type = type;
    done.target = target;
    return done;
}

void Model::post(ObjectId qp, const Call& call, Context request_context, uint32_t flags,
                 bool receive_queue, std::optional<Completion> decided,
                 std::shared_ptr<const WorkRequest::Undo> undo_info) {
    auto& q = std::get<QpState>(objects_[qp].state);
    // The call is copied into the request only when it is queued (a receive, or a request that
    // cannot run now); one that runs as it is posted uses the caller's.
    WorkRequest wr;
    wr.sequence = q.next_sequence++;
    wr.request_context = request_context;
    wr.flags = flags;
    wr.decided = std::move(decided);
    wr.undo = std::move(undo_info);
    const bool is_read = std::holds_alternative<calls::Read>(call);
    if (receive_queue) {
        ++q.receive_outstanding;
    } else {
        ++q.initiator_outstanding;
        if (flags & NDK_OP_FLAG_DEFER)
            q.deferred_posted.push_back(request_context);
        else
            q.deferred_posted.clear();  // DEFER-07: the chain's doorbell
    }
    if (is_read) {
        // MODEL-RD-01 (fail): a read beyond the effective OutboundReadLimit that was accepted.
        wr.over_read_limit = readings_.outbound_read_overflow_fails && q.outbound_read_limit &&
                             q.reads_outstanding >= q.outbound_read_limit;
        ++q.reads_outstanding;
    }
    if (q.unusable) {
        // MODEL-CQ-STATUS-01: accepted on a QP whose CQ or SRQ failed, it does not succeed: it is
        // flushed (cancelled_completion) or fails with any error status (any_error), on its CQ
        // if that CQ still works. None may appear on the failed CQ (CQ-STATUS-02/03).
        wr.call = call;
        Completion done = cancelled(qp, wr, receive_queue);
        done.rules = {"MODEL-CQ-STATUS-01", "FLS-02"};
        done.other_reading.clear();
        if (!readings_.post_after_cq_error_cancelled) {
            done.outcome = Completion::Outcome::any_error;
        } else {  // another error is the any_error reading
            done.other_reading = {"MODEL-CQ-STATUS-01"};
            done.other_reading_succeeds = false;
            done.why = "posted after its CQ or SRQ failed";
        }
        const auto* cq = state_of<CqState>(done.cq);
        if (!cq || cq->failed) {  // CQ-STATUS-02, CQ-STATUS-03
            if (mode_ == Mode::check) remember(q.never, request_context);
            return;
        }
        deliver(std::move(done));
        return;
    }
    if (receive_queue) {
        wr.call = call;
        if (q.error) {  // FLS-02, MODEL-CQ-ERR-01: a QP in error flushes what is posted to it
            deliver(cancelled(qp, wr, true));
            return;
        }
        q.receive.push_back(std::move(wr));
        if (q.peer) run_queues(q.peer);  // a send waiting on this receive may go on
        return;
    }
    // DEFER-02, FR-DEFER-01: a hint. The reference provider holds such requests back until one
    // without it (exercising DEFER-04/05); in check mode timing is the provider's, outcomes are
    // the same. DEFER-03: a deferred request completes like any other.
    bool hold = (flags & NDK_OP_FLAG_DEFER) && readings_.version_at_least(1, 2) &&
                mode_ == Mode::simulate && readings_.reference.hold_deferred;
    wr.deferred = hold;
    posting_qp_ = qp;
    posting_sequence_ = wr.sequence;
    if (!hold && !q.error && q.initiator.empty()) {
        // Nothing ahead of it and no error: it runs now, as run_queues would run it.
        const bool late = reached_at_unknown_moment(q, qp, wr);
        Completion done;
        if (!execute(qp, wr, call, done)) {  // waiting (a send without a receive at the peer)
            wr.call = call;
            std::get<QpState>(objects_[qp].state).initiator.push_back(std::move(wr));
        } else {
            done.deferred = wr.flags & NDK_OP_FLAG_DEFER;
            done.read_fence = (wr.flags & NDK_OP_FLAG_READ_FENCE) && !NT_ERROR(done.status);
            if ((late || contested_failure(done)) && done.outcome != Completion::Outcome::success)
                std::get<QpState>(objects_[qp].state).error_timing_open = true;
            deliver(std::move(done));
            // MODEL-CQ-ERR-01: what is behind a failed request is flushed (run_queues).
            if (std::get<QpState>(objects_[qp].state).error) fail_qp(qp, false);
        }
        posting_qp_ = 0;
        return;
    }
    wr.call = call;
    q.initiator.push_back(std::move(wr));
    if (!hold) {
        // DEFER-07: a request without DEFER takes every earlier deferred one to the hardware.
        for (auto& queued : q.initiator)
            queued.deferred = false;
        run_queues(qp);
    }
    posting_qp_ = 0;
}

void Model::refuse_post(ObjectId qp, Context request_context,
                        std::optional<NTSTATUS> fast_register_status) {
    if (auto* q = state_mut<QpState>(qp)) {
        remember(q->failed_inline, request_context);
        // A context used again: what is remembered is its latest refusal's.
        std::erase(q->failed_inline_fast_register, request_context);
        std::erase(q->failed_inline_access_violation, request_context);
        if (fast_register_status) {
            remember(q->failed_inline_fast_register, request_context);  // FR-ST-04
            if (*fast_register_status == STATUS_ACCESS_VIOLATION)
                remember(q->failed_inline_access_violation, request_context);  // FR-ACC-04
            for (Context held : q->deferred_posted)                            // FR-DEFER-02
                remember(q->handed_over_by_fast_register, held);
        } else {
            for (Context held : q->deferred_posted)
                std::erase(q->handed_over_by_fast_register, held);
        }
        // DEFER-04: the refusal hands the chain so far to the hardware.
        q->handed_over.insert(q->handed_over.end(), q->deferred_posted.begin(),
                              q->deferred_posted.end());
        q->deferred_posted.clear();
    }
    release_deferred(qp);
}

void Model::release_deferred(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q) return;
    bool any = false;
    for (auto& wr : q->initiator)
        any |= std::exchange(wr.deferred, false);
    if (any) run_queues(qp);  // DEFER-04: earlier DEFER requests reach the hardware first
}

bool Model::reached_at_unknown_moment(const QpState& q, ObjectId qp, const WorkRequest& wr) const {
    if (mode_ != Mode::check) return false;
    // A request that waited (a send for a receive at the peer, or one behind it) runs when the
    // device retries.
    if (!(qp == posting_qp_ && wr.sequence == posting_sequence_)) return true;
    // One behind others of its QP that have not completed yet is reached after them. Found
    // across two nodes: qp2's stray-token send behind two reads failed only after the peer's
    // sends had landed in qp2's receives (and then one of those failed first).
    return !q.initiator_pending.empty();
}

void Model::run_queues(ObjectId qp) {
    Object* o = find_mutable(qp);
    if (!o || o->kind != Kind::qp) return;
    for (;;) {
        auto& q = std::get<QpState>(objects_[qp].state);
        // Requests run one at a time in posting order, so READ_FENCE (FR-FENCE-01) always holds.
        if (q.initiator.empty() || q.initiator.front().deferred) return;
        if (q.error) {  // FLS-02: behind an error everything is flushed (undone in reverse)
            fail_qp(qp, false);
            return;
        }
        // Taken off the queue first: a failing request must not be flushed with those behind it.
        WorkRequest wr = std::move(q.initiator.front());
        q.initiator.pop_front();
        bool was_error = q.error;
        const bool late = reached_at_unknown_moment(q, qp, wr);
        Completion done;
        if (!execute(qp, wr, wr.call, done)) {  // waiting (a send without a receive at the peer)
            std::get<QpState>(objects_[qp].state).initiator.push_front(std::move(wr));
            return;
        }
        done.deferred = wr.flags & NDK_OP_FLAG_DEFER;
        done.read_fence = (wr.flags & NDK_OP_FLAG_READ_FENCE) && !NT_ERROR(done.status);
        if ((late || contested_failure(done)) && done.outcome != Completion::Outcome::success)
            std::get<QpState>(objects_[qp].state).error_timing_open = true;
        deliver(std::move(done));
        // MODEL-CQ-ERR-01: the failed request's entry comes first, then what is behind it is
        // flushed (STATUS_CANCELLED).
        if (!was_error && std::get<QpState>(objects_[qp].state).error) fail_qp(qp, false);
    }
}

namespace {
bool overlay(const Completion::Landing& l, const Extent& source, std::vector<std::byte>* out);

// Every landing a QP still owes: its pending entries' (both queues) and its silent requests'.
// `q` const or not: `visit` gets the landings alike.
template <typename Qp, typename Visit>
void for_each_pending_landing(Qp& q, Visit&& visit) {
    for (auto* list : {&q.initiator_pending, &q.receive_pending})
        for (auto& done : *list)
            for (auto& l : done.landings)
                visit(l);
    for (auto& l : q.silent_landings)
        visit(l);
}
}  // namespace

bool Model::on_landing_pages(const Extent& bytes) const {
    return !landing_pages_.empty() &&
           std::any_of(bytes.pages.begin(), bytes.pages.end(),
                       [&](PFN_NUMBER pfn) { return landing_pages_.contains(pfn); });
}

template <typename Visit>
void Model::for_each_landing_qp(Visit&& visit) {
    for (size_t i = 0; i < landing_qps_.size();) {
        ObjectId id = landing_qps_[i];
        auto* q = state_mut<QpState>(id);
        auto holds = [](const Fifo<Completion>& list) {
            return std::any_of(list.begin(), list.end(),
                               [](const Completion& c) { return !c.landings.empty(); });
        };
        if (!q || (q->silent_landings.empty() && !holds(q->initiator_pending) &&
                   !holds(q->receive_pending))) {
            landing_qps_[i] = landing_qps_.back();
            landing_qps_.pop_back();
            continue;
        }
        visit(*q, id);
        ++i;
    }
}

void Model::record_landing(Completion& done, const Extent& target, std::vector<std::byte> bytes) {
    if (mode_ == Mode::simulate) {
        scatter(memory_, target, bytes.data(), bytes.size());
        recycle_bytes(std::move(bytes));
        return;
    }
    Completion::Landing landing;
    landing.at.reserve(target.pages.size());
    landing.sizes.reserve(target.pages.size());
    for (size_t i = 0; i < target.pages.size(); ++i) {
        landing.at.push_back({target.pages[i], target.offsets[i]});
        landing.sizes.push_back(target.sizes[i]);
    }
    landing.bytes = std::move(bytes);
    landing.unchecked = !landings_observable_;
    // RD-01, RCV-03: pieces of one target that overlap (two sink SGEs naming the same bytes)
    // get whichever piece the device wrote last, an order no page fixes.
    if (target.pages.size() > 1) {
        SmallVector<std::tuple<PFN_NUMBER, uint32_t, uint32_t>, 4> pieces;
        for (size_t i = 0; i < target.pages.size(); ++i)
            pieces.push_back({target.pages[i], target.offsets[i], target.sizes[i]});
        std::sort(pieces.begin(), pieces.end());
        for (size_t i = 1; i < pieces.size(); ++i)
            if (std::get<0>(pieces[i]) == std::get<0>(pieces[i - 1]) &&
                std::get<1>(pieces[i]) < std::get<1>(pieces[i - 1]) + std::get<2>(pieces[i - 1]))
                landing.unchecked = true;
    }
    // RD-01, RCV-03, WRT-01: bytes an earlier request landed and this one lands on again may be
    // overwritten before that request's entry is retrieved, where its landing is checked: it is
    // not checked then (the provider may well have placed it right).
    if (on_landing_pages(target))
        for_each_landing_qp([&](QpState& q, ObjectId) {
            for_each_pending_landing(q, [&](Completion::Landing& l) {
                if (!l.unchecked && overlay(l, target, nullptr)) l.unchecked = true;
            });
        });
    done.landings.push_back(std::move(landing));
    note_landing(done.landings.back(), +1);
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

bool Model::execute(ObjectId qp, WorkRequest& wr, const Call& call, Completion& done) {
    auto& q = std::get<QpState>(objects_[qp].state);
    // FR-PAGE-02: the pages of the fast registrations a local SGL names (a receive's or a
    // read's sink), where bytes a wrong page order misplaced are looked for; null when none.
    auto fast_registered_pages_of =
        [this](ObjectId adapter,
               const std::vector<Sge>& sgl) -> std::shared_ptr<const std::vector<PFN_NUMBER>> {
        std::vector<PFN_NUMBER> pages;
        for (const Sge& sge : sgl)
            if (const auto* mr = state_of<MrState>(object_of_token(adapter, sge.token, false));
                mr && mr->fast_register)
                pages.insert(pages.end(), mr->region.pages.begin(), mr->region.pages.end());
        if (pages.empty()) return nullptr;
        return std::make_shared<const std::vector<PFN_NUMBER>>(std::move(pages));
    };
    // FR-MAP-01: parallel to fast_registered_pages_of, the pages of each registration's run
    // from its first entry (its own pages where that run is the array); null when no
    // registration differs from its run.
    auto fast_registered_runs_of =
        [this](ObjectId adapter,
               const std::vector<Sge>& sgl) -> std::shared_ptr<const std::vector<PFN_NUMBER>> {
        std::vector<PFN_NUMBER> runs;
        bool differs = false;
        for (const Sge& sge : sgl)
            if (const auto* mr = state_of<MrState>(object_of_token(adapter, sge.token, false));
                mr && mr->fast_register) {
                const auto& run = mr->run_from_first_entry;
                differs |= run != nullptr;
                runs.insert(runs.end(), run ? run->begin() : mr->region.pages.begin(),
                            run ? run->end() : mr->region.pages.end());
            }
        if (!differs) return nullptr;
        return std::make_shared<const std::vector<PFN_NUMBER>>(std::move(runs));
    };
    // RMR-VA-03: the regions a landing's bytes go to whose MDL's VA maps other pages than its
    // PFNs (decoy-VA MDLs), each PFN with the page its VA maps; null when none.
    auto va_aliases_of = [](const std::vector<const MrState*>& mrs, Completion::Landing& into) {
        std::vector<std::pair<PFN_NUMBER, PFN_NUMBER>> pairs;
        for (const MrState* mr : mrs)
            if (mr && !mr->fast_register && mr->region.va_pages.size() == mr->region.pages.size())
                for (size_t i = 0; i < mr->region.pages.size(); ++i)
                    pairs.emplace_back(mr->region.pages[i], mr->region.va_pages[i]);
        if (pairs.empty()) return;
        into.va_aliases = std::make_shared<const std::vector<std::pair<PFN_NUMBER, PFN_NUMBER>>>(
            std::move(pairs));
        into.va_rule = "RMR-VA-03";
    };
    // ...and for a source extent of such regions: the extent the VA would have read.
    auto note_source_through_va = [](const std::vector<const MrState*>& mrs, const Extent& source,
                                     Completion::Landing& into) {
        bool moved = false;
        Extent through_va;
        for (size_t i = 0; i < source.pages.size(); ++i) {
            PFN_NUMBER page = source.pages[i];
            for (const MrState* mr : mrs)
                if (mr && !mr->fast_register &&
                    mr->region.va_pages.size() == mr->region.pages.size())
                    for (size_t k = 0; k < mr->region.pages.size() && page == source.pages[i]; ++k)
                        if (mr->region.pages[k] == page && mr->region.va_pages[k] != page) {
                            page = mr->region.va_pages[k];
                            moved = true;
                        }
            through_va.append(page, source.offsets[i], source.sizes[i]);
        }
        if (!moved) return;
        into.source_through_va = std::make_shared<const Extent>(std::move(through_va));
        into.va_rule = "RMR-VA-03";
    };
    auto sgl_regions = [this](ObjectId adapter, const std::vector<Sge>& sgl) {
        std::vector<const MrState*> mrs;
        for (const Sge& sge : sgl)
            mrs.push_back(state_of<MrState>(object_of_token(adapter, sge.token, false)));
        return mrs;
    };
    // LAM-VA-01: the pages of decoy-VA mappings (NdkBuildLam over an MDL whose VA maps other
    // pages than its PFNs) an SGL reaches through the privileged token, each PFN with the page
    // its VA maps; empty when none.
    auto lam_va_pairs = [this](ObjectId on_qp, const std::vector<Sge>& sgl) {
        std::vector<std::pair<PFN_NUMBER, PFN_NUMBER>> pairs;
        const Object& qo = objects_[on_qp];
        const auto* pd = state_of<PdState>(std::get<QpState>(qo.state).pd);
        const auto* a = state_of<AdapterState>(qo.adapter);
        if (!pd || !pd->privileged_token || !a) return pairs;
        for (const Sge& sge : sgl) {
            if (sge.token != *pd->privileged_token || sge.length == 0) continue;
            uint64_t first = sge.address & ~uint64_t(PAGE_SIZE - 1);
            for (uint64_t page = first; page < sge.address + sge.length; page += PAGE_SIZE) {
                auto it = a->logical_pages.find(page);
                if (it == a->logical_pages.end()) continue;
                for (const auto& [lam_id, index] : it->second)  // the mapping pfn_of_logical uses
                    if (objects_[lam_id].life == Life::ready) {
                        const auto& lam = std::get<LamState>(objects_[lam_id].state);
                        if (index < lam.va_pfns.size() && lam.va_pfns[index] != lam.pfns[index])
                            pairs.emplace_back(lam.pfns[index], lam.va_pfns[index]);
                        break;
                    }
            }
        }
        return pairs;
    };
    // ...a landing into such pages (a receive, a read's sink)
    auto lam_va_aliases = [&](ObjectId on_qp, const std::vector<Sge>& sgl,
                              Completion::Landing& into) {
        if (into.va_aliases) return;  // (a decoy-VA region already named RMR-VA-03)
        auto pairs = lam_va_pairs(on_qp, sgl);
        if (pairs.empty()) return;
        into.va_aliases = std::make_shared<const std::vector<std::pair<PFN_NUMBER, PFN_NUMBER>>>(
            std::move(pairs));
        into.va_rule = "LAM-VA-01";
    };
    // ...and a source extent from them (a send, a write): the extent the VA would have read.
    auto lam_source_through_va = [&](ObjectId on_qp, const std::vector<Sge>& sgl,
                                     const Extent& source, Completion::Landing& into) {
        if (into.source_through_va) return;
        auto pairs = lam_va_pairs(on_qp, sgl);
        if (pairs.empty()) return;
        Extent through_va;
        for (size_t i = 0; i < source.pages.size(); ++i) {
            PFN_NUMBER page = source.pages[i];
            for (const auto& [pfn, behind_va] : pairs)
                if (pfn == page) {
                    page = behind_va;
                    break;
                }
            through_va.append(page, source.offsets[i], source.sizes[i]);
        }
        into.source_through_va = std::make_shared<const Extent>(std::move(through_va));
        if (!into.va_rule) into.va_rule = "LAM-VA-01";
    };
    bool silent_flag = wr.flags & NDK_OP_FLAG_SILENT_SUCCESS;
    if (wr.decided) {
        done = std::move(*wr.decided);  // (it runs now: the request is not queued again)
        if (q.error) {                  // flushed before it ran: what it did at posting is undone
            undo(wr);
            done = cancelled(qp, wr, false);
        }
        return true;
    }
    if (q.error) {  // a request after an error is flushed (MODEL-CQ-ERR-01, FLS-02)
        done = cancelled(qp, wr, false);
        return true;
    }
    const bool is_send = std::holds_alternative<calls::Send>(call) ||
                         std::holds_alternative<calls::SendAndInvalidate>(call);
    NDK_OPERATION_TYPE type = is_send                                     ? NdkOperationTypeSend
                              : std::holds_alternative<calls::Read>(call) ? NdkOperationTypeRead
                                                                          : NdkOperationTypeWrite;
    done = initiator_completion(qp, wr.request_context, type, 0);
    // MODEL-CQ-ERR-01, AMB-12: a peer QP in error answers nothing, so a send, read or write
    // fails (on InfiniBand when its transport retries run out: STATUS_IO_TIMEOUT), and this QP
    // goes to error with it.
    if (const auto* peer = state_of<QpState>(q.peer); peer && peer->error) {
        remote_failure(qp, done, STATUS_IO_TIMEOUT, {"MODEL-CQ-ERR-01", "AMB-12"},
                       "the peer QP is in error");
        done.outcome = Completion::Outcome::any_error;
        auto& self = std::get<QpState>(objects_[qp].state);
        self.error = true;
        // FLS-03: unless the peer's error came at a moment nobody knows yet: then this request
        // may still have found the peer working.
        if (peer->error_timing_open) {
            done.outcome = Completion::Outcome::any;
            self.error_timing_open = true;
        }
        return true;
    }
    std::string why;
    RuleIds rules;
    // WR-FENCE-01, FR-FENCE-01: requests run one at a time in posting order here, so a fenced
    // one always starts after the reads before it. In check mode the bytes it reads are fixed
    // only as far as the docs order it after earlier requests (gather_expected).
    const bool fenced = wr.flags & NDK_OP_FLAG_READ_FENCE;
    bool determined = true;

    if (is_send) {
        const std::vector<Sge>& sgl = std::holds_alternative<calls::Send>(call)
                                          ? as<calls::Send>(call).sgl
                                          : as<calls::SendAndInvalidate>(call).sgl;
        const std::vector<std::byte>& inline_payload =
            std::holds_alternative<calls::Send>(call)
                ? as<calls::Send>(call).inline_payload
                : as<calls::SendAndInvalidate>(call).inline_payload;
        bool is_inline = wr.flags & NDK_OP_FLAG_INLINE;
        std::vector<std::byte> payload;
        Extent source;
        if (is_inline) {
            payload = inline_payload;  // SGE-03, SGE-06: taken during the call
        } else {
            if (!resolve_local(qp, sgl, 0, source, why, rules)) {
                remote_failure(qp, done, STATUS_ACCESS_VIOLATION, rules, why);  // local protection
                q.error = true;
                return true;
            }
            done.grant_rules = local_grant_rules(qp, sgl, 0);  // RMR-FLG-02, FR-FLG-02, FR-TOK-02
            if (through_lam_outliving_release(qp, sgl)) done.token_rule = "LAM-REL-01";
            note_initialized_local_token(qp, sgl, done);  // IFR-TOK-01
            determined = gather_expected(qp, source, fenced, payload);
        }
        // RCV-03: the next receive at the peer (its receive queue or its SRQ) takes the send.
        auto* peer = state_mut<QpState>(q.peer);
        if (!peer) {  // MODEL-CQ-ERR-01: a transport failure
            remote_failure(qp, done, STATUS_CONNECTION_RESET, {"MODEL-CQ-ERR-01"},
                           "the peer QP is gone");
            q.error = true;
            return true;
        }
        std::optional<WorkRequest> receive;
        ObjectId from_srq = peer->srq;
        if (from_srq) {  // RCV-02: any QP of the SRQ may consume its receives
            auto* s = state_mut<SrqState>(from_srq);
            if (!s || s->receives.empty()) return false;
            receive = std::move(s->receives.front());
            s->receives.pop_front();
            srq_check_threshold(from_srq);  // SRQ-10: the count may drop below the threshold
            peer = state_mut<QpState>(q.peer);
        } else {
            if (peer->receive.empty()) return false;  // waits, as with an infinite RNR retry
            receive = std::move(peer->receive.front());
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
        got.srq = from_srq;
        Extent target;
        std::string rwhy;
        RuleIds rrules;
        // TOK-03, SGE-05 (as for a zero-byte Read or Write): the receive's SGEs the message does
        // not reach are not looked at, so a zero-byte message lands with any token (found on
        // rxe, which checks a token when it places bytes there). A message longer than all of
        // them together is checked against all.
        std::vector<Sge> reached;
        uint64_t unplaced = payload.size();
        for (const Sge& sge : rsgl) {
            if (unplaced == 0) break;
            reached.push_back(sge);
            unplaced -= std::min<uint64_t>(unplaced, sge.length);
        }
        if (unplaced > 0) reached = rsgl;
        if (!payload.empty() &&
            !resolve_local(peer_id, reached, kLocalWrite, target, rwhy, rrules)) {
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
            remote_failure(qp, done, STATUS_BUFFER_TOO_SMALL, {"MODEL-CQ-ERR-01"},
                           "the peer's receive buffer is too small");
        } else {
            // RMR-FLG-03, FR-FLG-03: the grant of the receive's local write; the sender's entry
            // fails with it where the receive does.
            if (!payload.empty())
                got.grant_rules = local_grant_rules(peer_id, reached, kLocalWrite);
            if (!got.grant_rules.empty()) {  // the source's grant first, then the receive's
                RuleList both = done.grant_rules;
                for (const char* rule : got.grant_rules)
                    if (std::find(both.begin(), both.end(), std::string_view(rule)) == both.end())
                        both.push_back(rule);
                done.grant_rules = both;
            }
            // FR-APC-01 (check mode): the fast registrations the send reaches (its source and
            // the receive's buffer), how far, and its shape; the receive's own.
            if (mode_ == Mode::check && !payload.empty()) {
                const uint32_t invalidating = std::holds_alternative<calls::SendAndInvalidate>(call)
                                                  ? as<calls::SendAndInvalidate>(call).remote_token
                                                  : 0;
                done.page_reaches =
                    page_reaches_of(qp, NdkOperationTypeSend, wr.flags, invalidating, 0, 0, 0,
                                    is_inline ? nullptr : &sgl, payload.size(), peer_id, &reached);
                got.page_reaches = page_reaches_of(peer_id, NdkOperationTypeReceive, 0, 0, 0, 0, 0,
                                                   &reached, payload.size());
            }
            Extent used;
            uint64_t left = payload.size();
            for (size_t i = 0; i < target.pages.size() && left > 0; ++i) {
                uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(left, target.sizes[i]));
                used.append(target.pages[i], target.offsets[i], n);
                left -= n;
            }
            got.bytes_transferred = static_cast<uint32_t>(payload.size());  // CQ-RES-01
            record_landing(got, used, std::move(payload));                  // (not read after this)
            if (!got.landings.empty()) {  // FR-PAGE-02: a receive into a fast registration
                got.landings.back().fast_registered_pages =
                    fast_registered_pages_of(objects_[peer_id].adapter, reached);
                got.landings.back().fast_registered_runs =  // FR-MAP-01
                    fast_registered_runs_of(objects_[peer_id].adapter, reached);
            }
            if (!got.landings.empty()) {  // RMR-VA-03: a receive into a decoy-VA region
                va_aliases_of(sgl_regions(objects_[peer_id].adapter, reached), got.landings.back());
                // ...or a send from one
                if (!is_inline)
                    note_source_through_va(sgl_regions(objects_[qp].adapter, sgl), source,
                                           got.landings.back());
                // LAM-VA-01: the same through a LAM's logical addresses (privileged token)
                lam_va_aliases(peer_id, reached, got.landings.back());
                if (!is_inline) lam_source_through_va(qp, sgl, source, got.landings.back());
            }
            if (!determined) got.landings.back().unchecked = true;
            // RCV-03: a source that overlaps the target may have been written by the transfer
            // itself before it is read here (check mode reads it after the provider ran).
            if (!is_inline && !got.landings.empty() &&
                overlay(got.landings.back(), source, nullptr))
                got.landings.back().unchecked = true;
            if (std::holds_alternative<calls::SendAndInvalidate>(call)) {
                // SAI-01: the peer invalidates the token; SAI-02: a bad token aborts there.
                // CQ-RES-06: the sender's own entry stays a Send (initiator_completion above).
                uint32_t token = as<calls::SendAndInvalidate>(call).remote_token;
                ObjectId victim = object_of_token(objects_[peer_id].adapter, token, true);
                // RMR-TOK-02, FR-TOK-01: a token to invalidate that is the MR's local token came
                // from a remote token getter that returned the local one; if the peer then
                // refuses it, that getter broke its rule (named first, as for reads and writes).
                // Only on an adapter whose keys were seen to differ: where they are one (rxe:
                // lkey == rkey), a refused invalidation is SAI-01's finding, not the getter's.
                if (const auto* mr = state_of<MrState>(victim);
                    mr && mr->local_token && *mr->local_token == token) {
                    const auto* adapter = state_of<AdapterState>(objects_[peer_id].adapter);
                    if (adapter && adapter->tokens_differ)
                        got.token_rule = done.token_rule =
                            mr->fast_register ? "FR-TOK-01" : "RMR-TOK-02";
                }
                if (victim) {
                    // CQ-RI-01, CQ-RI-02: retrieved with NdkGetCqResults too, the entry is an
                    // ordinary receive, and the token is invalidated all the same.
                    invalidate_token_of(victim);
                    got.type = NdkOperationTypeReceiveAndInvalidate;  // CQ-RES-07
                    got.invalidated = true;
                    got.invalidated_token = token;
                } else {
                    // SAI-02: the peer aborts the connection. How each side's entry reports it
                    // is the transport's (open when checking), but the connection is gone:
                    // both QPs fail whatever comes after. The reference provider fails both.
                    got.outcome = Completion::Outcome::error;
                    got.status = STATUS_CONNECTION_RESET;
                    got.rules = {"SAI-02"};
                    got.why = "the token to invalidate is not valid here";
                    remote_failure(qp, done, STATUS_CONNECTION_RESET, {"SAI-02"},
                                   "the token to invalidate is not valid at the peer");
                    if (mode_ == Mode::check) {
                        got.outcome = Completion::Outcome::any;
                        done.outcome = Completion::Outcome::any;
                    }
                    q.error = true;
                    peer->error = true;
                }
            }
        }
        bool solicited = wr.flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT;  // SND-04
        got.solicited = solicited;
        const bool receive_failed = got.outcome == Completion::Outcome::error;
        // Deliver the receive first: by the time the sender completes, the data is there.
        deliver(std::move(got));
        // FLS-02, MODEL-CQ-ERR-01: the failed receive moves the peer to error; the receives
        // queued behind it are flushed (found on rxe).
        if (receive_failed) {
            fail_qp(peer_id, true);
            peer = state_mut<QpState>(peer_id);
            // FLS-03: neither side knows when: the receiver fails as the message lands, the
            // sender when the peer's answer comes back (on rxe after a receiver-not-ready wait);
            // meanwhile either side's receives may still take the other's messages.
            if (mode_ == Mode::check) peer->error_timing_open = q.error_timing_open = true;
        }
        if (solicited) notify_cq(peer->receive_cq, false, true);
        if (done.outcome == Completion::Outcome::error) q.error = true;
        done.silent_flag = silent_flag;
        done.silent = silent_flag && done.outcome == Completion::Outcome::success;
        return true;
    }

    // Read and Write.
    bool is_read = type == NdkOperationTypeRead;
    const auto& sgl = is_read ? as<calls::Read>(call).sgl : as<calls::Write>(call).sgl;
    uint64_t remote_address =
        is_read ? as<calls::Read>(call).remote_address : as<calls::Write>(call).remote_address;
    uint32_t remote_token =
        is_read ? as<calls::Read>(call).remote_token : as<calls::Write>(call).remote_token;
    uint64_t bytes = total_length(sgl);
    bool is_inline = !is_read && (wr.flags & NDK_OP_FLAG_INLINE);
    Extent local;
    uint32_t local_need = is_read ? static_cast<uint32_t>(kLocalWrite) : 0u;
    bool sink_ok = adapter_info(qp).AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
    if (is_read && !sink_ok) local_need |= kReadSink;  // RD-03, RMR-SINK-01, FR-SINK-01
    bool resolved = is_inline || resolve_local(qp, sgl, local_need, local, why, rules);
    // AMB-37: a sink holding the read-sink right but not local write. The docs only say the
    // flag lets a provider give a sink what it needs; real RDMA hardware writes read data into
    // a sink only with local write (local_write_and_sink), sink_flag_suffices reads the flag as
    // enough. The reading not chosen is a warning either way.
    bool contested = false;
    if (!resolved && is_read && !sink_ok) {
        Extent lenient;
        std::string lenient_why;
        RuleIds lenient_rules;
        contested =
            resolve_local(qp, sgl, kReadSink | kWriteBySink, lenient, lenient_why, lenient_rules);
        if (contested && readings_.read_sink_flag_suffices) {
            local = std::move(lenient);
            resolved = true;
        }
    }
    if (!resolved) {
        bool sink_only =
            is_read && !sink_ok && resolve_local(qp, sgl, kLocalWrite, local, why, rules);
        remote_failure(qp, done, STATUS_ACCESS_VIOLATION, rules, why);
        if (sink_only) done.outcome = Completion::Outcome::any;  // RD-03 is the caller's duty
        if (contested) {  // AMB-37 (local_write_and_sink): the data may land all the same
            done.rules.push_back("AMB-37");
            done.other_reading = done.rules;
            done.other_reading_succeeds = true;
        }
        q.error = true;
        return true;
    }
    if (contested) {  // AMB-37 (sink_flag_suffices): the provider may still refuse the sink
        // (`rules` and `why` still say why the strict resolution failed: nothing has changed
        // them since; copied here only, not on every read and write.)
        RuleIds contested_rules = rules;
        contested_rules.push_back("AMB-37");
        done.other_reading = std::move(contested_rules);
        done.why = why + " (the read-sink right alone lets it land under the profile)";
    }
    // RMR-FLG-02/03, FR-FLG-02/03, FR-TOK-02: the grant of the local access it relies on.
    if (!is_inline) done.grant_rules = local_grant_rules(qp, sgl, is_read ? kLocalWrite : 0u);
    Extent remote;
    ObjectId target = 0;
    auto note_token = [&] {  // RMR-TOK-02, FR-TOK-01: a remote token that is the local one
        if (const auto* mr = state_of<MrState>(target);
            mr && mr->local_token && *mr->local_token == remote_token)
            done.token_rule = mr->fast_register ? "FR-TOK-01" : "RMR-TOK-02";
        // RMR-TOK-01: a local SGE's token that its MR's previous registration had (its
        // NdkDeregisterMr completed), reported by NdkGetLocalTokenFromMr for the new one: if the
        // request then fails, that getter broke its rule (named first).
        if (done.token_rule || is_inline) return;
        note_initialized_local_token(qp, sgl, done);  // IFR-TOK-01, before RMR-TOK-01
        if (done.token_rule) return;
        const ObjectId adapter = objects_[qp].adapter;
        if (const auto* a = state_of<AdapterState>(adapter))
            for (const auto& sge : sgl)
                if (auto it = a->deregistered_tokens.find(sge.token);
                    it != a->deregistered_tokens.end() &&
                    object_of_token(adapter, sge.token, false) == it->second) {
                    done.token_rule = "RMR-TOK-01";
                    return;
                }
        // RMR-VA-01: a range reaching into the last ByteOffset bytes of a region registered
        // from mid-page, which a region taken from StartVa (ByteOffset left out) does not
        // hold: if the request then fails, that is the likely reason (named first).
        auto in_tail = [](const MrState* mr, uint64_t address, uint64_t length) {
            if (!mr || mr->fast_register || mr->region.first_byte_offset == 0 || length == 0)
                return false;
            const uint64_t end = mr->region.base + mr->region.length;
            return address + length > end - mr->region.first_byte_offset && address < end;
        };
        bool tail = in_tail(state_of<MrState>(target), remote_address, bytes);
        for (const auto& sge : sgl)
            tail = tail || in_tail(state_of<MrState>(object_of_token(adapter, sge.token, false)),
                                   sge.address, sge.length);
        if (tail) done.token_rule = "RMR-VA-01";
    };
    // TOK-03 for an empty transfer: the docs are silent on whether a Read or Write of zero bytes
    // checks its RemoteToken; InfiniBand and RoCE do not validate the R_Key of a zero-length
    // RDMA operation, so the model reads it as touching nothing remote (and succeeding).
    if (bytes > 0 &&
        !resolve_remote(qp, remote_token, remote_address, bytes,
                        is_read ? kRemoteRead : kRemoteWrite, remote, why, rules, &target)) {
        bool beyond = why.find("beyond") != std::string::npos;
        NTSTATUS status = is_read && beyond ? STATUS_REMOTE_RESOURCES : STATUS_ACCESS_VIOLATION;
        if (is_read && beyond) rules.push_back("RD-05");
        remote_failure(qp, done, status, rules, why);
        note_refuted_registration(qp, remote_token, remote_address, bytes,
                                  is_read ? kRemoteRead : kRemoteWrite, done);  // FR-SILENT-02
        q.error = true;
        return true;
    }
    note_token();
    if (!done.token_rule && !is_inline && through_lam_outliving_release(qp, sgl))
        done.token_rule = "LAM-REL-01";
    // The local grant is named first only where the remote side is a region: a window's reach
    // is where hardware families differ (a verbs type-2 window answers only through the QP
    // that bound it, rxe's BND-01 finding), so a failure through one may be the window's.
    if (state_of<MwState>(target)) done.grant_rules = {};
    // FR-APC-01 (check mode): the fast registrations it reaches, how far, and its shape.
    if (mode_ == Mode::check)
        done.page_reaches =
            page_reaches_of(qp, type, wr.flags, remote_token, target, remote_address, bytes,
                            is_inline ? nullptr : &sgl, bytes);
    if (is_read) {
        std::vector<std::byte> data;
        determined = gather_expected(qp, remote, fenced, data);
        record_landing(done, local, std::move(data));  // RD-01
        if (!done.landings.empty()) {
            done.landings.back().from_read = true;
            // FR-PAGE-02: a read into a fast registration
            done.landings.back().fast_registered_pages =
                fast_registered_pages_of(objects_[qp].adapter, sgl);
            done.landings.back().fast_registered_runs =  // FR-MAP-01
                fast_registered_runs_of(objects_[qp].adapter, sgl);
            // RMR-VA-03: a read into a decoy-VA region, or from one
            va_aliases_of(sgl_regions(objects_[qp].adapter, sgl), done.landings.back());
            note_source_through_va({state_of<MrState>(target)}, remote, done.landings.back());
            lam_va_aliases(qp, sgl, done.landings.back());  // LAM-VA-01: a LAM sink
            // ...and a read from one (the peer's region, reached through its remote token)
            if (const auto* mr = state_of<MrState>(target);
                mr && mr->fast_register && !remote.pages.empty()) {
                done.landings.back().source_fast_registered_pages =
                    std::make_shared<const std::vector<PFN_NUMBER>>(mr->region.pages.begin(),
                                                                    mr->region.pages.end());
                done.landings.back().source_fast_registered_runs = mr->run_from_first_entry;
                done.landings.back().source_first_offset = remote.offsets[0];
                auto first =
                    std::find(mr->region.pages.begin(), mr->region.pages.end(), remote.pages[0]);
                done.landings.back().source_first_page = uint32_t(first - mr->region.pages.begin());
            }
            done.landings.back().unchecked |= !determined;
            // RD-01: a remote source overlapping the local target (a loopback onto itself) may
            // have been written by the transfer itself before it is read here.
            done.landings.back().unchecked |= overlay(done.landings.back(), remote, nullptr);
        }
        done.success_warns = wr.over_read_limit;  // MODEL-RD-01 (fail): queued, not failed
        // RD-02, AI-FLAG-05: on success the first SGE's token is invalidated where the adapter
        // supports it; RD-07: without the flag the token stays valid.
        if ((wr.flags & readings_.read_local_invalidate_flag) &&
            (adapter_info(qp).AdapterFlags &
             NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED) &&
            !sgl.empty())
            if (ObjectId victim = object_of_token(objects_[qp].adapter, sgl[0].token, false))
                invalidate_token_of(victim);
    } else {
        std::vector<std::byte> data;
        if (is_inline)
            data = as<calls::Write>(call).inline_payload;  // SGE-06
        else
            determined = gather_expected(qp, local, fenced, data);
        record_landing(done, remote, std::move(data));  // WRT-01
        if (!done.landings.empty()) {  // RMR-VA-03: a write into a decoy-VA region, or from one
            va_aliases_of({state_of<MrState>(target)}, done.landings.back());
            if (!is_inline)
                note_source_through_va(sgl_regions(objects_[qp].adapter, sgl), local,
                                       done.landings.back());
            if (!is_inline)  // LAM-VA-01: from a LAM's logical addresses
                lam_source_through_va(qp, sgl, local, done.landings.back());
        }
        if (!done.landings.empty())
            if (const auto* mr = state_of<MrState>(target); mr && mr->fast_register) {
                done.landings.back().fast_registered_pages =
                    std::make_shared<const std::vector<PFN_NUMBER>>(mr->region.pages);
                done.landings.back().fast_registered_runs = mr->run_from_first_entry;  // FR-MAP-01
            }
        // FR-PAGE-02 for a write from a fast registration (one SGE through its local token): the
        // bytes that land may be another source page's, as for a read from one.
        if (!done.landings.empty() && !is_inline && sgl.size() == 1 && !local.pages.empty())
            if (const auto* mr =
                    state_of<MrState>(object_of_token(objects_[qp].adapter, sgl[0].token, false));
                mr && mr->fast_register) {
                auto first =
                    std::find(mr->region.pages.begin(), mr->region.pages.end(), local.pages[0]);
                if (first != mr->region.pages.end()) {
                    auto& landing = done.landings.back();
                    landing.source_fast_registered_pages =
                        std::make_shared<const std::vector<PFN_NUMBER>>(mr->region.pages.begin(),
                                                                        mr->region.pages.end());
                    landing.source_fast_registered_runs = mr->run_from_first_entry;  // FR-MAP-01
                    landing.source_first_offset = local.offsets[0];
                    landing.source_first_page = uint32_t(first - mr->region.pages.begin());
                }
            }
        if (!done.landings.empty()) {
            done.landings.back().unchecked |= !determined;
            // WRT-01: so may a local source overlapping the remote target.
            if (!is_inline)
                done.landings.back().unchecked |= overlay(done.landings.back(), local, nullptr);
        }
    }
    done.silent = done.silent_flag = silent_flag;
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
    done.deferred = wr.flags & NDK_OP_FLAG_DEFER;
    done.outcome = Completion::Outcome::cancelled;  // FLS-02, CQ-CST-02
    // FLS-03: flushed before the consumer could know its QP had gone to error, a request may
    // have run first (a receive may have taken a message), with whatever outcome that gave it.
    if (q.error_timing_open || q.outcome_open) done.outcome = Completion::Outcome::any;
    done.status = STATUS_CANCELLED;
    done.rules = {"FLS-02"};
    if (q.flushed && !q.unusable) {  // MODEL-FLS-01 (cancelled): posted after NdkFlush
        done.other_reading = {"MODEL-FLS-01"};
        done.other_reading_succeeds = true;
        done.why = "posted after NdkFlush; the QP may still work (the usable reading)";
    }
    std::visit(
        [&](const auto& c) {
            using T = std::decay_t<decltype(c)>;
            if constexpr (std::is_same_v<T, calls::Receive> || std::is_same_v<T, calls::SrqReceive>)
                done.type = NdkOperationTypeReceive;
            else if constexpr (std::is_same_v<T, calls::Read>)
                done.type = NdkOperationTypeRead;
            else if constexpr (std::is_same_v<T, calls::Write>)
                done.type = NdkOperationTypeWrite;
            else if constexpr (std::is_same_v<T, calls::FastRegister>)
                done.type = NdkOperationTypeFastRegister;
            else if constexpr (std::is_same_v<T, calls::Bind>)
                done.type = NdkOperationTypeBind;
            else if constexpr (std::is_same_v<T, calls::Invalidate>)
                done.type = NdkOperationTypeInvalidate;
            else
                done.type = NdkOperationTypeSend;
        },
        wr.call);
    done.target = target_of(wr.call);
    return done;
}

void Model::fail_qp(ObjectId qp, bool flush_receives) {
    error_reaches_peer(qp);
    auto& q = std::get<QpState>(objects_[qp].state);
    q.error = true;
    (void)flush_receives;
    // Requests behind the failed one are flushed (they complete with STATUS_CANCELLED); what
    // they did when posted is undone, newest first.
    std::deque<WorkRequest> rest;
    rest.swap(q.initiator);
    for (auto it = rest.rbegin(); it != rest.rend(); ++it)
        undo(*it);
    for (const auto& wr : rest)
        deliver(cancelled(qp, wr, false));
    auto& q2 = std::get<QpState>(objects_[qp].state);
    std::deque<WorkRequest> receives;
    receives.swap(q2.receive);
    for (const auto& wr : receives)
        deliver(cancelled(qp, wr, true));
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
    // A FastRegister, Bind or Invalidate flushed before it ran leaves no effect (FR-TOK-01 made
    // it visible at posting; undone newest first).
    for (auto it = initiator.rbegin(); it != initiator.rend(); ++it)
        undo(*it);
    for (const auto& wr : initiator)
        deliver(cancelled(qp, wr, false));
    for (const auto& wr : receive)
        deliver(cancelled(qp, wr, true));
}

void Model::undo(const WorkRequest& wr) {
    if (!wr.undo) return;
    const WorkRequest::Undo& u = *wr.undo;
    auto open = [&](ObjectId id) {
        const Object* o = find(id);
        return o && o->life != Life::closed;
    };
    // Only while nothing changed the object after this request: a later bind, registration or
    // invalidation stands (the request's one change is the last: `changes` is one more).
    if (u.mr_state && open(u.mr) && state_of<MrState>(u.mr)->changes == u.mr_state->changes + 1) {
        set_token(u.mr, false, u.mr_state->local_token);
        set_token(u.mr, true, u.mr_state->remote_token);
        *state_mut<MrState>(u.mr) = *u.mr_state;
    }
    if (u.mw_state && open(u.mw) && state_of<MwState>(u.mw)->changes == u.mw_state->changes + 1) {
        set_token(u.mw, true, u.mw_state->remote_token);
        auto* mw = state_mut<MwState>(u.mw);
        auto per_mr = std::move(mw->binds_per_mr);
        *mw = *u.mw_state;
        mw->binds_per_mr = std::move(per_mr);
        if (u.window_mr && open(u.window_mr))
            state_mut<MrState>(u.window_mr)->bound_windows = u.window_mr_windows;
    }
    // LIFE-TREE-04: the MR stops being the MW's antecedent once no bind to it stands, whatever
    // else happened to the MW since.
    if (u.bound_mr && open(u.mw)) {
        auto& per_mr = state_mut<MwState>(u.mw)->binds_per_mr;
        auto count = std::find_if(per_mr.begin(), per_mr.end(),
                                  [&](const auto& entry) { return entry.first == u.bound_mr; });
        if (count != per_mr.end() && --count->second == 0) {
            per_mr.erase(count);
            remove_edge(u.mw, u.bound_mr);
        }
    }
}

void Model::make_unusable(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q || q->unusable) return;
    q->unusable = true;
    fail_qp(qp, true);  // what is queued is flushed
    q = state_mut<QpState>(qp);
    // Nothing more is reported for it: entries still expected may never come.
    for (auto* list : {&q->initiator_pending, &q->receive_pending})
        for (auto& done : *list)
            done.outcome = Completion::Outcome::any;
    for (const auto& l : q->silent_landings)
        note_landing(l, -1);
    q->silent_landings.clear();
}

void Model::fail_cq(ObjectId cq_id, NTSTATUS status) {
    auto* cq = state_mut<CqState>(cq_id);
    if (!cq || cq->failed) return;
    // CQ-STATUS-02 (overrun, STATUS_BUFFER_OVERFLOW), CQ-STATUS-03 (fatal, STATUS_INTERNAL_ERROR):
    // the CQ reports no further completions, and every QP using it is unusable.
    cq->failed = true;
    cq->overrun = status == STATUS_BUFFER_OVERFLOW;
    cq->failure = status;
    std::vector<ObjectId> qps = cq->qps;
    for (ObjectId qp : qps)
        make_unusable(qp);
    cq = state_mut<CqState>(cq_id);
    if (mode_ != Mode::simulate) return;
    cq->entries.clear();
    // CQ-NOT-07: an outstanding arm of any type is satisfied by the CQ's error (CQ-NOT-05).
    if (cq->armed >= 0 && cq->has_notification) {
        cq->armed = -1;
        emit({Event::Kind::cq_notification, cq_id, 0, status, 0});
    }
}

void Model::fail_srq(ObjectId srq_id) {
    auto* s = state_mut<SrqState>(srq_id);
    if (!s || s->failed) return;
    // SRQ-15: the SRQ and every QP attached to it are unusable; no further completions.
    s->failed = true;
    s->notify_armed = false;
    s->receives.clear();
    std::vector<ObjectId> qps = s->qps;
    for (ObjectId qp : qps)
        make_unusable(qp);
}

void Model::retrieved(const Completion& done) {
    auto* q = state_mut<QpState>(done.qp);
    if (!q) return;
    auto drop = [](uint32_t& n, uint32_t k) { n = n > k ? n - k : 0; };
    if (done.receive_queue) {
        if (auto* s = state_mut<SrqState>(done.srq))
            drop(s->outstanding, 1);
        else
            drop(q->receive_outstanding, 1);
        return;
    }
    // Completions of one queue come in order: silent successes before this entry are done too.
    drop(q->initiator_outstanding, 1 + q->initiator_silent);
    drop(q->reads_outstanding, (done.type == NdkOperationTypeRead ? 1u : 0u) + q->reads_silent);
    q->initiator_silent = q->reads_silent = 0;
}

void Model::note_landing(const Completion::Landing& l, int delta) {
    if (mode_ != Mode::check) return;
    for (const auto& [pfn, offset] : l.at) {
        if (delta > 0)
            landing_pages_.add(pfn);
        else
            landing_pages_.remove(pfn);
    }
}

namespace {

// Copies the bytes a landing puts into [the pieces of `source`] into `out` (laid out as the
// source's pieces), and says whether they overlap at all.
bool overlay(const Completion::Landing& l, const Extent& source, std::vector<std::byte>* out) {
    bool overlaps = false;
    size_t at = 0;
    for (size_t i = 0; i < l.at.size(); ++i) {
        auto [pfn, offset] = l.at[i];
        size_t out_at = 0;
        for (size_t j = 0; j < source.pages.size(); ++j) {
            if (source.pages[j] == pfn) {
                uint32_t lo = std::max(offset, source.offsets[j]);
                uint32_t hi = std::min(offset + l.sizes[i], source.offsets[j] + source.sizes[j]);
                if (lo < hi) {
                    overlaps = true;
                    if (out)
                        std::memcpy(out->data() + out_at + (lo - source.offsets[j]),
                                    l.bytes.data() + at + (lo - offset), hi - lo);
                }
            }
            out_at += source.sizes[j];
        }
        at += l.sizes[i];
    }
    return overlaps;
}

}  // namespace

bool Model::gather_expected(ObjectId qp, const Extent& source, bool fenced,
                            std::vector<std::byte>& out) {
    gather_into(memory_, source, out);
    if (mode_ != Mode::check || !on_landing_pages(source)) return true;
    // WR-FENCE-01 (check mode): the provider runs this request later than the model did, and
    // bytes that earlier requests still have to place may not be there yet when it reads. A
    // fenced request starts only after every earlier read of its QP completed, so those reads'
    // bytes are what it reads. Any other overlap (an unfenced request, a write or a receive
    // into the memory, another QP's request) is an order the docs leave open.
    bool determined = true;
    for_each_landing_qp([&](const QpState& q, ObjectId id) {
        if (objects_[id].life == Life::closed) return;
        for_each_pending_landing(q, [&](const Completion::Landing& l) {
            if (id == qp && fenced && l.from_read)
                overlay(l, source, &out);
            else if (overlay(l, source, nullptr))
                determined = false;
        });
    });
    return determined;
}

bool Model::landing_expected_within(const Extent& bytes) {
    if (!on_landing_pages(bytes)) return false;
    bool overlapped = false;
    for_each_landing_qp([&](const QpState& q, ObjectId) {
        for_each_pending_landing(q, [&](const Completion::Landing& l) {
            if (!overlapped && overlay(l, bytes, nullptr)) overlapped = true;
        });
    });
    return overlapped;
}

void Model::deliver(Completion&& done) {
    auto* q = state_mut<QpState>(done.qp);
    if (!q) return;
    bool initiator = !done.receive_queue;
    // Queue slots are free again once the entry is retrieved (retrieved()): the consumer's view
    // of the depth (CQP-DEPTH-01/02).
    if ((q->peer_error || q->outcome_open) && done.outcome == Completion::Outcome::success)
        done.outcome = Completion::Outcome::any;  // the peer's failure may reach this QP
    // MODEL-FLS-01 (usable): posted after NdkFlush; a provider that left the QP in error
    // flushes it, the reading not chosen.
    if (q->flushed_usable && done.outcome == Completion::Outcome::success &&
        done.other_reading.empty()) {
        done.other_reading = {"MODEL-FLS-01"};
        done.why = "posted after NdkFlush; the QP may be in error (the cancelled reading)";
    }
    if (done.silent) {
        // WR-SILENT-01: no entry; the slot frees with the queue's next entry. Check mode: the
        // bytes are checked with that entry.
        ++q->initiator_silent;
        if (done.type == NdkOperationTypeRead) ++q->reads_silent;
        if (mode_ == Mode::check) {
            remember(q->silent_successes, done.request_context);
            if (done.token_rule || !done.grant_rules.empty()) {
                RuleList hints;
                if (done.token_rule) hints.push_back(done.token_rule);
                for (const char* rule : done.grant_rules)
                    hints.push_back(rule);
                q->silent_success_hints.emplace_back(done.request_context, hints);
                if (q->silent_success_hints.size() > kRememberedContexts)
                    q->silent_success_hints.erase(q->silent_success_hints.begin());
            }
            for (auto& l : done.landings)
                q->silent_landings.push_back(std::move(l));
            if (!done.landings.empty()) note_landing_qp(done.qp);
        }
        return;
    }
    auto* cq = state_mut<CqState>(done.cq);
    if (!cq || cq->failed) return;  // CQ-STATUS-02/03: a failed CQ reports nothing more
    bool error_entry = done.outcome == Completion::Outcome::error ||
                       done.outcome == Completion::Outcome::cancelled ||
                       done.outcome == Completion::Outcome::any_error;
    ObjectId cq_id = done.cq;
    if (mode_ == Mode::check) {
        if (initiator) {
            for (auto& l : q->silent_landings)
                done.landings.push_back(std::move(l));
            q->silent_landings.clear();
        }
        bool uncertain = done.outcome == Completion::Outcome::any;
        if (!done.landings.empty()) note_landing_qp(done.qp);
        (initiator ? q->initiator_pending : q->receive_pending).push_back(std::move(done));
        if (uncertain)
            cq->uncertain_since_notification = true;
        else
            notify_cq(cq_id, error_entry, false);  // what the arm may now be satisfied by
        return;
    }
    // Simulate: the entry goes on the CQ. CQ-CREATE-04, CQ-RESIZE-04: up to the depth fits; one
    // more overruns it (CQ-STATUS-02).
    if (cq->entries.size() >= cq->depth) {
        fail_cq(cq_id, STATUS_BUFFER_OVERFLOW);
        return;
    }
    cq->entries.push_back(std::move(done));
    notify_cq(cq_id, error_entry, false);
}

// ======================= Access checks =======================

ObjectId Model::object_of_token(ObjectId adapter, uint32_t token, bool remote) const {
    const auto* a = state_of<AdapterState>(adapter);
    if (!a) return 0;
    const auto& index = remote ? a->remote_tokens : a->local_tokens;
    auto it = index.find(token);
    if (it == index.end()) return remote ? 0 : initialized_token_holder(adapter, token);
    // The holders of this value, oldest first: the first whose registration or binding is live.
    for (ObjectId id : it->second) {
        const Object& o = objects_[id];
        if (o.life == Life::closed) continue;
        if (const auto* mr = std::get_if<MrState>(&o.state)) {
            if (mr->phase == MrState::Phase::registered ||
                mr->phase == MrState::Phase::fast_registered)
                return id;
        } else if (const auto* mw = std::get_if<MwState>(&o.state)) {
            if (remote && mw->bound) return id;
        }
    }
    return remote ? 0 : initialized_token_holder(adapter, token);
}

ObjectId Model::initialized_token_holder(ObjectId adapter, uint32_t token) const {
    const auto* a = state_of<AdapterState>(adapter);
    if (!a) return 0;
    auto it = a->initialized_local_tokens.find(token);
    if (it == a->initialized_local_tokens.end()) return 0;
    const Object* o = find(it->second);
    const auto* mr = o && o->life != Life::closed ? std::get_if<MrState>(&o->state) : nullptr;
    // The first fast registration after the reading (nothing else changed the MR since), and
    // the getter reported another token for it: the model knows both values.
    if (!mr || mr->phase != MrState::Phase::fast_registered || mr->indeterminate ||
        mr->initialized_local_token != token || mr->changes != mr->initialized_local_changes + 1 ||
        mr->local_token == token)
        return 0;
    return it->second;
}

void Model::note_initialized_local_token(ObjectId qp, const std::vector<Sge>& sgl,
                                         Completion& done) const {
    if (done.token_rule) return;
    const ObjectId adapter = objects_[qp].adapter;
    for (const Sge& sge : sgl) {
        if (sge.length == 0 || !initialized_token_holder(adapter, sge.token)) continue;
        if (readings_.fr_local_token_from_initialize) {
            done.token_rule = "IFR-TOK-01";
        } else if (done.other_reading.empty()) {  // AMB-40 after_fast_register_returns
            done.other_reading = {"IFR-TOK-01", "AMB-40"};
            done.why =
                "a local SGE's token was read after the MR's initialization, before its "
                "fast registration, and the getter reports another one now";
        }
        return;
    }
}

namespace {

// Adds [address, address + bytes) of a region to an extent. FR-MAP-01, RMR-VA-01: byte k of a
// region (address base + k) is byte (FBO + k) % PAGE_SIZE of its page (FBO + k) / PAGE_SIZE.
void map_region(const Region& region, uint64_t address, uint64_t bytes, Extent& out) {
    uint64_t offset = region.first_byte_offset + (address - region.base);
    out.reserve((offset % PAGE_SIZE + bytes + PAGE_SIZE - 1) / PAGE_SIZE);
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
            // AI-FLAG-02, PTOK-03: read sinks too where the adapter needs no sink right.
            bool sink_ok =
                adapter_info(qp).AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
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
            if (const auto* a = state_of<AdapterState>(qo.adapter);
                a && a->deregistered_tokens.count(sge.token)) {  // RMR-DEREG-01, named first
                why += " (a token of MR " + num(a->deregistered_tokens.at(sge.token)) +
                       ", whose NdkDeregisterMr completed)";
                rules = {"RMR-DEREG-01", "SGE-05"};
            }
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
        // RMR-ACC-02, FR-FLG-03; AMB-37: under sink_flag_suffices the read-sink right lets a
        // read's data land without local write.
        bool writable = (mr->region.access & kLocalWrite) ||
                        ((need & kWriteBySink) && (mr->region.access & kReadSink));
        if ((need & (kLocalWrite | kWriteBySink)) && !writable) {
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

RuleList Model::local_grant_rules(ObjectId qp, const std::vector<Sge>& sgl, uint32_t need) const {
    const Object& qo = objects_[qp];
    for (const Sge& sge : sgl) {
        if (sge.length == 0) continue;
        const auto* mr = state_of<MrState>(object_of_token(qo.adapter, sge.token, false));
        if (!mr) continue;  // the privileged token
        const uint32_t rights = mr->region.access & (kLocalWrite | kRemoteRead | kRemoteWrite);
        if (mr->fast_register) {
            // FR-TOK-02: the local token with addresses inside [BaseVirtualAddress, + Length)
            // works; FR-FLG-03: 0x10 (or 0x30) grants local write (its own fault, a write let
            // through without it, is judged by resolve_local); FR-FLG-02: local read needs no
            // flag, named first where the region has no other right.
            if (need & kLocalWrite) return {"FR-TOK-02", "FR-FLG-03"};
            if (rights == 0) return {"FR-FLG-02", "FR-TOK-02"};
            return {"FR-TOK-02"};
        }
        // RMR-FLG-03: 0x5 carries local write; RMR-FLG-02: local read needs no flag.
        if ((need & kLocalWrite) && (mr->region.access & kRemoteWrite)) return {"RMR-FLG-03"};
        if (!(need & kLocalWrite) && rights == 0) return {"RMR-FLG-02"};
    }
    return {};
}

void Model::note_refuted_registration(ObjectId qp, uint32_t token, uint64_t address, uint64_t bytes,
                                      uint32_t need, Completion& done) const {
    if (mode_ != Mode::check || done.outcome != Completion::Outcome::error) return;
    const auto& q = std::get<QpState>(objects_[qp].state);
    const Object* peer = find(q.peer);
    if (!peer || peer->life == Life::closed) return;
    const auto* a = state_of<AdapterState>(peer->adapter);
    if (!a) return;
    auto holders = a->remote_tokens.find(token);
    if (holders == a->remote_tokens.end()) return;
    const auto& pq = std::get<QpState>(peer->state);
    for (ObjectId id : holders->second) {
        const Object& o = objects_[id];
        const auto* mr = std::get_if<MrState>(&o.state);
        if (!mr || o.life == Life::closed || !mr->failed_silent || mr->indeterminate) continue;
        const auto& failed = *mr->failed_silent;
        // The token is the one the provider reported for the MR after that registration was
        // posted (FR-TOK-01: it reaches the new region), the MR is in the peer QP's PD (AMB-28),
        // and the registration would have granted this access over this range: only its not
        // having taken effect makes the access fail.
        if (failed.changes != mr->changes || mr->remote_token != token || o.parent != pq.pd ||
            !(failed.requested.access & need) || !failed.requested.covers(address, bytes))
            continue;
        done.refutes_qp = failed.qp;
        done.refutes_request = failed.request_context;
        return;
    }
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
    if (const auto* pd = state_of<PdState>(pq.pd);
        pd && pd->privileged_token && *pd->privileged_token == token) {
        why = "RemoteToken is the peer's privileged token";  // PTOK-02
        rules = {"PTOK-02"};
        return false;
    }
    ObjectId id = object_of_token(peer->adapter, token, true);
    if (target) *target = id;
    const char* right = need & kRemoteWrite ? "remote write" : "remote read";
    if (const auto* mr = state_of<MrState>(id)) {
        // (A literal: a RuleIds is built only on the failure path.)
        const char* access_rule = mr->fast_register
                                      ? (need & kRemoteWrite ? "FR-FLG-05" : "FR-FLG-04")
                                      : (need & kRemoteWrite ? "RMR-FLG-04" : "RMR-ACC-01");
        if (find(id)->parent != pq.pd) {
            why = "the remote token names an MR of another PD than the peer QP's";
            rules = {"AMB-28"};
            return false;
        }
        // RMR-VA-02, FR-ZBVA-01: remote addresses are VAs inside [base, base + length), never
        // offsets from 0.
        if (!mr->region.covers(address, bytes)) {
            why =
                "the access [" + num(address) + ", +" + num(bytes) + ") reaches beyond the region";
            rules = {mr->fast_register ? "FR-LEN-03" : "RMR-ACC-03"};
            // FR-ZBVA-01, RMR-VA-02: an address below the region's start that is an offset
            // inside it is the zero-based form either page rules out, judged first.
            if (mr->region.base != 0 && address < mr->region.base && bytes <= mr->region.length &&
                address <= mr->region.length - bytes)
                rules = mr->fast_register ? RuleIds{"FR-ZBVA-01", "FR-LEN-03"}
                                          : RuleIds{"RMR-VA-02", "RMR-ACC-03"};
            // RMR-VA-01: an access inside [StartVa, StartVa + Length), the span a region taken
            // from its first page's start (ByteOffset left out) would have, is named first.
            else if (const uint64_t fbo = mr->region.first_byte_offset;
                     !mr->fast_register && fbo > 0 && address < mr->region.base &&
                     address >= mr->region.base - fbo && bytes <= mr->region.length &&
                     address - (mr->region.base - fbo) <= mr->region.length - bytes)
                rules = {"RMR-VA-01", "RMR-ACC-03"};
            return false;
        }
        if (!(mr->region.access & need)) {
            why = std::string("the region does not grant ") + right;
            rules = {access_rule};
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
        if (!(mw->region.access & need) || !mr ||
            !(mr->region.access & (kLocalWrite | kRemoteRead | kRemoteWrite))) {
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
    if (const auto* a = state_of<AdapterState>(peer->adapter);
        a && a->deregistered_tokens.count(token)) {  // RMR-DEREG-01, named first
        why = "RemoteToken " + num(token) + " is a token of MR " +
              num(a->deregistered_tokens.at(token)) + ", whose NdkDeregisterMr completed";
        rules = {"RMR-DEREG-01", "TOK-03"};
    } else if (a) {
        // FR-INV-01: the token of a fast-register MR whose registration an invalidation ended
        // (NdkInvalidate; likewise a peer's NdkSendAndInvalidate or a read's local invalidate)
        // grants nothing until its next NdkFastRegister: an access the provider lets through
        // breaks that rule first.
        if (auto it = a->remote_tokens.find(token); it != a->remote_tokens.end())
            for (ObjectId holder : it->second)
                if (const auto* mr = std::get_if<MrState>(&objects_[holder].state);
                    mr && objects_[holder].life != Life::closed && mr->fast_register &&
                    mr->phase == MrState::Phase::invalidated) {
                    why = "RemoteToken " + num(token) + " is the token of MR " + num(holder) +
                          ", whose fast registration an invalidation ended";
                    rules = {"FR-INV-01", "TOK-03", "INV-01"};
                    break;
                }
    }
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
            for (const auto& e : c->entries)
                n += e.qp == qp;
        if (q->initiator_cq == q->receive_cq) break;
    }
    return n;
}

Verdict Model::expect_handed_over_completed(ObjectId qp) const {
    Verdict v;
    const auto* q = state_of<QpState>(qp);
    if (!q || q->handed_over.empty()) return v;
    // Only requests that can end on their own: one that waits on a peer in error (a device
    // retrying a request it gets no answer to) may take longer than any drain, and a flush
    // then cancels it (FLS-02), held or not.
    const auto* peer = q->peer ? state_of<QpState>(q->peer) : nullptr;
    if (q->peer_error || q->error_timing_open || q->outcome_open ||
        (peer && (peer->error || peer->flushed || peer->error_timing_open)) ||
        q->connection != QpState::Connection::connected)
        return v;
    for (const auto& done : q->initiator_pending)
        if (done.outcome != Completion::Outcome::any &&
            std::find(q->handed_over.begin(), q->handed_over.end(), done.request_context) !=
                q->handed_over.end())
            v.add({handed_over_by_fast_register(*q, done.request_context)
                       ? RuleIds{"FR-DEFER-02", "DEFER-04"}
                       : RuleIds{"DEFER-04", "FR-DEFER-02"},
                   "no completion appeared for the request with RequestContext " +
                       hex(done.request_context) + " on QP " + object_text(qp) +
                       ", posted with NDK_OP_FLAG_DEFER before a request the provider refused "
                       "inline (the refusal had to hand it to the hardware)"});
    return v;
}

namespace {

// s11frq: the page rule NdkFastRegister's page gives a missing entry (nullptr: none, or one whose
// rule is its failure's: a silent request that had to fail): any DEFER request an
// NdkFastRegister's inline refusal handed over (FR-DEFER-02), or a fast registration's own.
const char* fast_register_missing_rule(const QpState& q, const Completion& done) {
    if (done.receive_queue) return nullptr;
    if (handed_over_by_fast_register(q, done.request_context)) return "FR-DEFER-02";
    if (done.type != NdkOperationTypeFastRegister) return nullptr;
    if (done.deferred) return "FR-DEFER-01";  // DEFER is a hint: it completes all the same
    // FR-SILENT-02: a silent one that had to fail and was shown not to have taken effect owes
    // its error entry; otherwise its failure's own rule is the one (a wrongful silent success).
    if (done.silent_flag) return done.registration_refuted ? "FR-SILENT-02" : nullptr;
    return "FR-ST-01";  // STATUS_SUCCESS: an entry will be queued
}

}  // namespace

RuleIds Model::missing_entry_page_rules(ObjectId cq) const {
    RuleIds rules;
    const auto* c = state_of<CqState>(cq);
    if (!c) return rules;
    for (ObjectId qp_id : c->qps) {
        const auto* q = state_of<QpState>(qp_id);
        if (!q) continue;
        for (const auto* list : {&q->initiator_pending, &q->receive_pending})
            for (const auto& done : *list) {
                if (done.cq != cq || done.outcome == Completion::Outcome::any) continue;
                const char* rule = fast_register_missing_rule(*q, done);
                if (!rule) return {};  // another request is missing too: the generic rule
                if (std::find(rules.begin(), rules.end(), rule) == rules.end())
                    rules.push_back(rule);
            }
    }
    return rules;
}

Verdict Model::expect_nothing_outstanding(ObjectId qp) {
    Verdict v;
    auto* q = state_mut<QpState>(qp);
    if (!q) return v;
    for (auto* list : {&q->initiator_pending, &q->receive_pending}) {
        for (const auto& done : *list) {
            // WR-10, DEFER-03: an accepted request ends in exactly one entry, deferred or not.
            if (done.outcome != Completion::Outcome::any) {
                auto handed =
                    std::find(q->handed_over.begin(), q->handed_over.end(), done.request_context);
                if (!done.receive_queue && handed != q->handed_over.end())
                    v.add({handed_over_by_fast_register(*q, done.request_context)
                               ? RuleIds{"FR-DEFER-02", "DEFER-04", "WR-10"}
                               : RuleIds{"DEFER-04", "WR-10"},
                           "no completion appeared for the request with RequestContext " +
                               hex(done.request_context) + " on QP " + object_text(qp) +
                               ", posted with NDK_OP_FLAG_DEFER before a request the provider "
                               "refused inline (the refusal had to hand it to the hardware)"});
                else if (done.silent_flag && !done.rules.empty() &&
                         (done.outcome == Completion::Outcome::error ||
                          done.outcome == Completion::Outcome::any_error)) {
                    // A silent request that must fail and made no entry was taken as a
                    // success (a silent success makes none): the rule its failure comes from is
                    // the one broken (RMR-ACC-03 for an access past a region's end), beside
                    // WR-10's missing entry.
                    RuleIds rules = done.rules;
                    for (const char* r : {"WR-10", "FLS-03"})
                        if (std::find(rules.begin(), rules.end(), r) == rules.end())
                            rules.push_back(r);
                    // FR-SILENT-02: unless a failed access it would have let through showed
                    // that it did not take effect: then its error entry was dropped.
                    const bool dropped = done.registration_refuted;
                    if (dropped) rules.insert(rules.begin(), "FR-SILENT-02");
                    v.add(
                        {rules, "no completion appeared for the request with RequestContext " +
                                    hex(done.request_context) + " on QP " + object_text(qp) +
                                    ", posted with NDK_OP_FLAG_SILENT_SUCCESS, which must fail (" +
                                    done.why +
                                    (dropped ? "): an access through the region it would have "
                                               "registered failed, so it did not take effect, "
                                               "and its error entry never came"
                                             : "): it was taken as a silent success")});
                } else if (done.deferred) {  // DEFER-03: DEFER leaves the duty unchanged
                    RuleIds rules{"WR-10", "DEFER-03", "FLS-03"};
                    // FR-DEFER-01: NdkFastRegister's page says so for itself.
                    if (const char* page = fast_register_missing_rule(*q, done))
                        rules.insert(rules.begin(), page);
                    v.add({std::move(rules),
                           "no completion appeared for the request with RequestContext " +
                               hex(done.request_context) + " on QP " + object_text(qp) +
                               ", posted with NDK_OP_FLAG_DEFER"});
                } else {
                    RuleIds rules{"WR-10", "FLS-03"};
                    // FR-ST-01: an NdkFastRegister that returned STATUS_SUCCESS owes its entry.
                    if (const char* page = fast_register_missing_rule(*q, done))
                        rules.insert(rules.begin(), page);
                    v.add({std::move(rules),
                           "no completion appeared for the request with RequestContext " +
                               hex(done.request_context) + " on QP " + object_text(qp)});
                }
            }
            for (const auto& l : done.landings)
                note_landing(l, -1);
            retrieved(done);  // given up on: its slot is free again
        }
        list->clear();
    }
    return v;
}

// FR-PAGE-02 for a read's source: `landed` (the sink's bytes from byte `at` of the landing on)
// equals the bytes at the same in-page offset of a page of the source fast registration other
// than the one the expected bytes came from, and differs from the expected bytes there.
bool Model::moved_through_va(const Completion::Landing& landing) const {
    // Where the bytes are: the target's own pages, or (a decoy-VA target) the pages its VA maps.
    Extent real, through_va;
    bool target_moved = false;
    for (size_t i = 0; i < landing.at.size(); ++i) {
        auto [pfn, offset] = landing.at[i];
        real.append(pfn, offset, landing.sizes[i]);
        if (landing.va_aliases)
            for (const auto& [page, behind_va] : *landing.va_aliases)
                if (page == pfn && behind_va != pfn) {
                    pfn = behind_va;
                    target_moved = true;
                    break;
                }
        through_va.append(pfn, offset, landing.sizes[i]);
    }
    // What they should be: the bytes sent, or (a decoy-VA source) the bytes its VA maps.
    std::vector<std::byte> source_via_va;
    if (landing.source_through_va) gather(memory_, *landing.source_through_va, source_via_va);
    auto holds = [&](const Extent& where, const std::vector<std::byte>& bytes) {
        if (bytes.size() < landing.bytes.size()) return false;
        std::vector<std::byte> found;
        gather(memory_, where, found);
        return std::memcmp(found.data(), bytes.data(), found.size()) == 0;
    };
    // Any combination but the honest one (the PFNs' bytes on the PFNs' pages, which failed).
    if (target_moved && holds(through_va, landing.bytes)) return true;
    if (landing.source_through_va) {
        if (holds(real, source_via_va)) return true;
        if (target_moved && holds(through_va, source_via_va)) return true;
    }
    return false;
}

bool Model::read_from_another_source_page(const Completion::Landing& landing, size_t at,
                                          const std::byte* landed, uint32_t size) const {
    const auto& pages = *landing.source_fast_registered_pages;
    uint64_t from = uint64_t(landing.source_first_offset) + at;
    size_t expected_page = landing.source_first_page + size_t(from / PAGE_SIZE);
    uint32_t in_page = uint32_t(from % PAGE_SIZE);
    uint32_t n = std::min<uint32_t>(size, uint32_t(PAGE_SIZE - in_page));
    if (n == 0 || std::memcmp(landed, landing.bytes.data() + at, n) == 0) return false;
    for (size_t j = 0; j < pages.size(); ++j)
        if (j != expected_page && std::memcmp(memory_.page(pages[j]) + in_page, landed, n) == 0)
            return true;
    return false;
}

namespace {

// FR-MAP-01's forensics: at least half of `n` bytes differ from the expected ones, as where the
// bytes went to another page (the place keeps what it held), not where a few were lost or
// misplaced there (a short write, say), which another page's like bytes must not be taken for.
bool mostly_missing(const std::byte* found, const std::byte* expected, size_t n) {
    size_t differ = 0;
    for (size_t i = 0; i < n; ++i)
        differ += found[i] != expected[i];
    return 2 * differ >= n;
}

}  // namespace

bool Model::landed_as_run(const Completion::Landing& landing, size_t index, size_t at) const {
    const auto& pages = *landing.fast_registered_pages;
    const auto& runs = *landing.fast_registered_runs;
    const auto [page, offset] = landing.at[index];
    const std::byte* bytes = landing.bytes.data() + at;
    if (!mostly_missing(memory_.page(page) + offset, bytes, landing.sizes[index])) return false;
    for (size_t j = 0; j < pages.size() && j < runs.size(); ++j) {
        PFN_NUMBER run = runs[j];
        if (pages[j] != page || run == MrState::kNoPage || run == page) continue;
        if (std::memcmp(memory_.page(run) + offset, bytes, landing.sizes[index]) != 0) continue;
        // Bytes the landing sends to that page anyway prove nothing (page-periodic data).
        bool sent_there = false;
        size_t from = 0;
        for (size_t k = 0; k < landing.at.size() && !sent_there; ++k) {
            sent_there = landing.at[k].first == run && landing.at[k].second == offset &&
                         landing.sizes[k] == landing.sizes[index] &&
                         std::memcmp(landing.bytes.data() + from, bytes, landing.sizes[k]) == 0;
            from += landing.sizes[k];
        }
        if (!sent_there) return true;
    }
    return false;
}

bool Model::read_as_run(const Completion::Landing& landing, size_t at, const std::byte* landed,
                        uint32_t size) const {
    const auto& pages = *landing.source_fast_registered_pages;
    const auto& runs = *landing.source_fast_registered_runs;
    // The piece in source-page parts: the first part that differs from the expected bytes
    // decides (a sink page may span two pages of the source).
    for (uint32_t done = 0; done < size;) {
        uint64_t from = uint64_t(landing.source_first_offset) + at + done;
        size_t e = landing.source_first_page + size_t(from / PAGE_SIZE);
        uint32_t in_page = uint32_t(from % PAGE_SIZE);
        uint32_t n = std::min<uint32_t>(size - done, uint32_t(PAGE_SIZE - in_page));
        if (std::memcmp(landed + done, landing.bytes.data() + at + done, n) != 0) {
            if (e >= pages.size() || e >= runs.size()) return false;
            PFN_NUMBER run = runs[e];
            return run != MrState::kNoPage && run != pages[e] &&
                   mostly_missing(landed + done, landing.bytes.data() + at + done, n) &&
                   std::memcmp(memory_.page(run) + in_page, landed + done, n) == 0;
        }
        done += n;
    }
    return false;
}

namespace {

// FR-APC-01: a request's shape, one value at a time (not a secret: a collision only makes two
// shapes one witness).
uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E37'79B9'7F4A'7C15ull + (h << 6) + (h >> 2);
    return h;
}

// The most shapes a fast registration keeps witnesses for (MrState::reached_by_shape).
constexpr size_t kReachedShapes = 8;

}  // namespace

std::shared_ptr<const Completion::PageReaches> Model::page_reaches_of(
    ObjectId qp, NDK_OPERATION_TYPE type, uint32_t flags, uint32_t remote_token, ObjectId remote,
    uint64_t remote_address, uint64_t remote_bytes, const std::vector<Sge>* local, uint64_t used,
    ObjectId receiver, const std::vector<Sge>* received) const {
    Completion::PageReaches out;
    // A fast registration of two or more pages (an MR's, or a window's MR's), and the highest
    // page index of its region that [address, address + bytes) reaches.
    auto reach = [&](ObjectId id, uint64_t address, uint64_t bytes) {
        if (const auto* mw = state_of<MwState>(id)) id = mw->mr;
        const auto* mr = state_of<MrState>(id);
        if (!mr || !mr->fast_register || mr->phase != MrState::Phase::fast_registered ||
            mr->region.pages.size() < 2 || bytes == 0 || !mr->region.covers(address, bytes))
            return;
        const uint64_t last =
            (mr->region.first_byte_offset + (address - mr->region.base) + bytes - 1) / PAGE_SIZE;
        out.reaches.push_back(
            {id, mr->changes, static_cast<uint32_t>(last), uint32_t(mr->region.pages.size())});
    };
    uint64_t shape = mix(mix(mix(mix(0, qp), uint64_t(type)), flags), remote_token);
    if (remote) reach(remote, remote_address, remote_bytes);
    auto sgl = [&](ObjectId on, const std::vector<Sge>* list, uint64_t bytes) {
        if (!list) return;
        const ObjectId adapter = objects_[on].adapter;
        for (const Sge& sge : *list) {
            shape = mix(shape, sge.token);
            const uint64_t n = std::min<uint64_t>(bytes, sge.length);
            if (n) reach(object_of_token(adapter, sge.token, false), sge.address, n);
            bytes -= n;
        }
    };
    sgl(qp, local, used);
    if (received) {
        shape = mix(shape, receiver);
        sgl(receiver, received, used);
    }
    if (out.reaches.size() == 0) return nullptr;
    out.shape = shape;
    return std::make_shared<const Completion::PageReaches>(std::move(out));
}

void Model::note_pages_reached(const Completion::PageReaches& reaches) {
    for (const auto& reach : reaches.reaches) {
        auto* mr = state_mut<MrState>(reach.mr);
        if (!mr || mr->changes != reach.changes) continue;
        auto& seen = mr->reached_by_shape;
        std::erase_if(seen, [&](const auto& s) { return s.changes != reach.changes; });
        auto it = std::find_if(seen.begin(), seen.end(),
                               [&](const auto& s) { return s.shape == reaches.shape; });
        if (it != seen.end()) {
            it->last_page = std::max(it->last_page, reach.last_page);
            continue;
        }
        if (seen.size() >= kReachedShapes) seen.erase(seen.begin());
        seen.push_back({reaches.shape, reach.changes, reach.last_page});
    }
}

int Model::short_region(const Completion::PageReaches& reaches, std::string& because) const {
    int found = 0;
    for (const auto& reach : reaches.reaches) {
        const auto* mr = state_of<MrState>(reach.mr);
        if (!mr || mr->changes != reach.changes) continue;
        for (const auto& seen : mr->reached_by_shape)
            if (seen.shape == reaches.shape && seen.changes == reach.changes &&
                seen.last_page < reach.last_page) {
                because =
                    " (a request of the same shape, through the same tokens, succeeded "
                    "reaching page " +
                    num(seen.last_page) + " of a fast registration of " + num(reach.pages) +
                    " AdapterPageArray pages; this one reaches page " + num(reach.last_page) +
                    ": the region's backing ends before it, as where the provider read "
                    "fewer than AdapterPageCount entries)";
                return 2;
            }
        if (!found && reach.last_page + 1 == reach.pages) {
            found = 1;
            because = "; it reaches the last of a fast registration's " + num(reach.pages) +
                      " AdapterPageArray pages, which a provider that read fewer than "
                      "AdapterPageCount entries does not back";
        }
    }
    return found;
}

namespace {

// True when the landing sends piece `index` (its bytes from `offset` in the data) to `page` too,
// byte for byte at the same place: then finding those bytes there proves nothing (page-periodic
// data), so a misplaced page cannot be told from a short write.
bool same_bytes_sent_to(const Completion::Landing& landing, PFN_NUMBER page, size_t index,
                        size_t offset) {
    size_t at = 0;
    for (size_t j = 0; j < landing.at.size(); ++j) {
        if (landing.at[j].first == page && landing.at[j].second == landing.at[index].second &&
            landing.sizes[j] == landing.sizes[index] &&
            std::memcmp(landing.bytes.data() + at, landing.bytes.data() + offset,
                        landing.sizes[j]) == 0)
            return true;
        at += landing.sizes[j];
    }
    return false;
}

const char* outcome_rule(NDK_OPERATION_TYPE type) {
    switch (type) {
        case NdkOperationTypeReceive:
        case NdkOperationTypeReceiveAndInvalidate:
            return "RCV-03";
        case NdkOperationTypeSend:
            return "SND-01";
        case NdkOperationTypeFastRegister:
            return "FR-ST-01";
        case NdkOperationTypeBind:
            return "BND-01";
        case NdkOperationTypeInvalidate:
            return "INV-01";
        case NdkOperationTypeRead:
            return "RD-01";
        case NdkOperationTypeWrite:
            return "WRT-01";
    }
    return "CQ-CST-01";
}

}  // namespace

uint64_t Model::expected_landing_bytes(ObjectId cq, const NDK_RESULT_EX& r) const {
    const auto* cq_state = state_of<CqState>(cq);
    if (!cq_state) return 0;
    Context qp_context = reinterpret_cast<uintptr_t>(r.QPContext);
    Context request = reinterpret_cast<uintptr_t>(r.RequestContext);
    for (ObjectId qp_id : cq_state->qps) {
        const auto* q = state_of<QpState>(qp_id);
        if (!q) continue;
        for (bool receive : {false, true}) {
            if ((receive ? q->receive_cq : q->initiator_cq) != cq) continue;
            for (const Completion& c : receive ? q->receive_pending : q->initiator_pending)
                if (c.request_context == request && c.qp_context == qp_context) {
                    uint64_t bytes = 0;
                    for (const auto& l : c.landings)
                        bytes += l.bytes.size();
                    return bytes;
                }
        }
    }
    return 0;
}

Verdict Model::observe_completion(ObjectId cq, const NDK_RESULT_EX& r, bool ex, bool landing_seen) {
    Verdict v;
    Context qp_context = reinterpret_cast<uintptr_t>(r.QPContext);
    Context request = reinterpret_cast<uintptr_t>(r.RequestContext);
    // Built only for a message: most completions are right.
    auto what = [&] {
        return "a completion with RequestContext " + hex(request) + " (" +
               std::string(spec::status_name(r.Status)) + ")";
    };
    // Find the request: QPs reporting to this CQ, with this QPContext, holding this request.
    const auto* cq_state = state_of<CqState>(cq);
    static const std::vector<ObjectId> no_qps;
    for (ObjectId qp_id : cq_state ? cq_state->qps : no_qps) {
        Object& o = objects_[qp_id];
        // A closed QP is still indexed while entries of its flushed requests are due (CLOSE-03,
        // FLS-03: they stay in the CQ after the close).
        auto& q = std::get<QpState>(o.state);
        // Whatever follows matches only the QP the entry names by its QPContext (the entries a
        // QP's lists hold carry its own); another one's context is CQ-RES-02, judged below.
        if (q.qp_context != qp_context) continue;
        for (bool receive : {false, true}) {
            if ((receive ? q.receive_cq : q.initiator_cq) != cq) continue;
            auto& list = receive ? q.receive_pending : q.initiator_pending;
            auto it = std::find_if(list.begin(), list.end(), [&](const Completion& c) {
                return c.request_context == request && c.qp_context == qp_context;
            });
            if (it == list.end()) continue;
            // WR-FENCE-01, FR-FENCE-01: a request posted with READ_FENCE starts only after every
            // earlier read of its QP has completed, so its entry ahead of such a read's is a
            // failure whatever AMB-35 reads for unfenced requests.
            const bool fenced_ahead_of_read =
                it->read_fence && std::any_of(list.begin(), it, [](const Completion& e) {
                    return e.type == NdkOperationTypeRead;
                });
            if (fenced_ahead_of_read) {
                std::string reads;
                size_t count = 0;
                for (auto e = list.begin(); e != it; ++e) {
                    if (e->type != NdkOperationTypeRead) continue;
                    if (count < 4) reads += (count ? ", " : "") + hex(e->request_context);
                    ++count;
                }
                if (count > 4) reads += " and " + std::to_string(count - 4) + " more";
                const bool fast_register = it->type == NdkOperationTypeFastRegister;
                v.add({fast_register ? RuleIds{"FR-FENCE-01", "WR-FENCE-01", "AMB-35"}
                                     : RuleIds{"WR-FENCE-01", "AMB-35"},
                       what() + " of a" + (fast_register ? " fast registration" : " request") +
                           " posted with NDK_OP_FLAG_READ_FENCE arrived ahead of the entries of "
                           "reads posted earlier on its QP (" +
                           reads +
                           "): the fence lets it start only after those reads have completed"});
            } else if (it != list.begin() && !readings_.completion_order_relaxed) {  // AMB-35
                // No page promises that one queue completes in posting order; the deferred
                // processing page promises only that an accepted request "must eventually" make
                // an entry (WR-10, DEFER-03). So an entry ahead of earlier requests is the
                // in_order reading not followed, a warning; the earlier ones stay expected, and
                // one that never comes is a failure when the harness has drained the queue
                // (expect_nothing_outstanding: WR-10, DEFER-03 for a deferred one).
                std::string earlier;
                size_t count = 0;
                for (auto e = list.begin(); e != it; ++e, ++count)
                    if (count < 4) earlier += (count ? ", " : "") + hex(e->request_context);
                if (count > 4) earlier += " and " + std::to_string(count - 4) + " more";
                v.add({{"AMB-35"},
                       what() + " arrived ahead of earlier requests of the same queue (" + earlier +
                           "), out of posting order (the in_order reading); they are still "
                           "expected (WR-10)",
                       true});
            }
            if (!receive) {
                std::erase(q.handed_over, request);
                std::erase(q.handed_over_by_fast_register, request);
            }
            // Judged in place and removed at the end (CQ-GET-04: removed once), not moved out:
            // a Completion is a few hundred bytes and this is every entry's path.
            Completion& expected = *it;
            retrieved(expected);                                  // its queue slot is free again
            if (NT_ERROR(r.Status)) q.error_timing_open = false;  // the error is seen now
            // A closed QP's last entry: it leaves the CQ index (after the loop over it).
            const bool forget = o.life == Life::closed &&
                                q.initiator_pending.size() + q.receive_pending.size() == 1;
            using Out = Completion::Outcome;
            const char* rule = outcome_rule(expected.type);
            bool landed = false;
            // DESIGN section 5: the reading the profile did not choose is a warning.
            const bool succeeded = r.Status == STATUS_SUCCESS;
            const bool other_error_for_cancelled =
                !expected.other_reading.empty() && !expected.other_reading_succeeds &&
                expected.outcome == Out::cancelled && NT_ERROR(r.Status) &&
                r.Status != STATUS_CANCELLED;
            if (other_error_for_cancelled) {
                v.add({expected.other_reading,
                       what() + " failed with another status than STATUS_CANCELLED (" +
                           expected.why + "), the form the profile's reading does not choose",
                       true});
                expected.outcome = Out::any;
            } else if (!expected.other_reading.empty() &&
                       succeeded == expected.other_reading_succeeds &&
                       (succeeded
                            ? expected.outcome == Out::error || expected.outcome == Out::cancelled
                            : expected.outcome == Out::success)) {
                v.add({expected.other_reading,
                       what() + (succeeded ? " succeeded" : " failed") +
                           ", the outcome the profile's reading does not choose (" + expected.why +
                           ")",
                       true});
                expected.outcome = Out::any;
                // What it registered, bound or invalidated is unknown now.
                if (auto* mr = state_mut<MrState>(expected.target)) mr->indeterminate = true;
                if (auto* mw = state_mut<MwState>(expected.target)) mw->indeterminate = true;
                open_outcomes(qp_id);
            }
            switch (expected.outcome) {
                case Out::success:
                    if (r.Status != STATUS_SUCCESS) {
                        RuleIds rules{rule, "CQ-CST-01"};
                        std::string because;
                        if (expected.token_rule) {  // a getter's token (note_token)
                            rules.insert(rules.begin(), expected.token_rule);
                            const std::string_view hint = expected.token_rule;
                            because =
                                hint == "IFR-TOK-01"
                                    ? " (a local SGE's token is the one NdkGetLocalTokenFromMr "
                                      "returned after the MR's initialization, before this "
                                      "fast registration: the getter reports another one "
                                      "now, so the value it gave then was not the MR's "
                                      "local token)"
                                : hint == "RMR-TOK-01"
                                    ? " (a local SGE's token is the one its MR's previous "
                                      "registration had: the local token getter returned a "
                                      "stale token)"
                                : hint == "RMR-VA-01"
                                    ? " (it reaches the last ByteOffset bytes of a region "
                                      "registered from mid-page, which a region taken from "
                                      "StartVa, not MmGetMdlVirtualAddress, leaves out)"
                                : hint == "LAM-REL-01"
                                    ? " (a local SGE's logical addresses belong to a live "
                                      "LAM built before another LAM of the adapter was "
                                      "released: that release likely unmapped them too)"
                                    : " (its RemoteToken is the target MR's local token: the "
                                      "remote token getter returned the local token)";
                        } else if (!expected.grant_rules.empty()) {  // a local access granted
                            rules.insert(rules.begin(), expected.grant_rules.begin(),
                                         expected.grant_rules.end());
                            because = " (its regions' flags grant the local access it needs)";
                        }
                        // FR-APC-01: a request of its shape succeeded short of where this one
                        // reaches into a fast registration (first: the tokens, flags and grants
                        // it relies on worked there), or it reaches the registration's last
                        // page (last: any other cause above is as likely). Not a flush.
                        if (expected.page_reaches && r.Status != STATUS_CANCELLED) {
                            std::string short_by;
                            switch (short_region(*expected.page_reaches, short_by)) {
                                case 2:
                                    rules.insert(rules.begin(), "FR-APC-01");
                                    because += short_by;
                                    break;
                                case 1:
                                    rules.push_back("FR-APC-01");
                                    because += short_by;
                                    break;
                                default:
                                    break;
                            }
                        }
                        v.add({rules, what() + " should have succeeded, but its status is " +
                                          std::to_string(r.Status) + because});
                    }
                    landed = r.Status == STATUS_SUCCESS;
                    break;
                case Out::success_or_cancelled:
                    if (r.Status != STATUS_SUCCESS && r.Status != STATUS_CANCELLED)
                        v.add({{rule, "FLS-02"},
                               what() +
                                   " was flushed: it may succeed or be "
                                   "cancelled, but its status is " +
                                   std::to_string(r.Status)});
                    landed = r.Status == STATUS_SUCCESS;
                    break;
                case Out::cancelled:
                    if (r.Status != STATUS_CANCELLED)
                        v.add({{"FLS-02", "CQ-CST-02"},
                               what() + " was flushed and must complete with STATUS_CANCELLED"});
                    break;
                case Out::error:
                    if (!NT_ERROR(r.Status)) {
                        RuleIds rules = expected.rules;
                        rules.push_back("CQ-CST-03");
                        v.add({rules, what() + " must fail (" + expected.why + "), but succeeded"});
                    } else if (r.Status != expected.status) {
                        // MODEL-CQ-ERR-01 (exact): the status not chosen is a warning; under
                        // any_error any error status is right.
                        if (readings_.completion_error_status_exact)
                            v.add({{"MODEL-CQ-ERR-01"},
                                   what() + " failed with another status than ndkct's table gives",
                                   true});
                    }
                    break;
                case Out::any_error:  // MODEL-CQ-STATUS-01: it may not succeed
                    if (!NT_ERROR(r.Status))
                        v.add({expected.rules, what() +
                                                   " was posted to a QP whose CQ or SRQ had "
                                                   "failed, but completed with status " +
                                                   std::to_string(r.Status)});
                    break;
                case Out::any:
                    break;
            }
            // FR-APC-01: how far a request of this shape reached into fast registrations.
            if (r.Status == STATUS_SUCCESS && expected.page_reaches)
                note_pages_reached(*expected.page_reaches);
            // MODEL-RD-01 (fail): the provider queued a read beyond the OutboundReadLimit.
            if (expected.success_warns && r.Status == STATUS_SUCCESS)
                v.add({{"MODEL-RD-01", "RD-08"},
                       what() + " is a read beyond the OutboundReadLimit that the provider queued "
                                "instead of failing",
                       true});
            // FR-SILENT-02: this access failed where a silent fast registration that had to
            // fail would have let it through: that registration did not take effect, so if its
            // entry never comes, its error entry was dropped (expect_nothing_outstanding).
            if (expected.refutes_qp && expected.outcome == Out::error && NT_ERROR(r.Status) &&
                r.Status != STATUS_CANCELLED)
                if (auto* fq = state_mut<QpState>(expected.refutes_qp))
                    for (auto& pending : fq->initiator_pending)
                        if (pending.request_context == expected.refutes_request &&
                            pending.type == NdkOperationTypeFastRegister && pending.silent_flag &&
                            pending.outcome == Out::error)
                            pending.registration_refuted = true;
            if (ex && expected.outcome != Out::any) {
                NDK_OPERATION_TYPE want = expected.type;
                // CQ-RES-03; FR-RES-01 first for a fast registration: NdkFastRegister's page
                // names the Type its completion must carry.
                if (r.Type != want && !(r.Status == STATUS_CANCELLED))
                    v.add({want == NdkOperationTypeFastRegister ? RuleIds{"FR-RES-01", "CQ-RES-03"}
                                                                : RuleIds{"CQ-RES-03"},
                           what() + " has Type " + spec::operation_type_text(r.Type) +
                               ", expected " + spec::operation_type_text(want)});
                if (want == NdkOperationTypeReceiveAndInvalidate &&
                    static_cast<uint32_t>(r.TypeSpecificCompletionOutput) !=
                        expected.invalidated_token)
                    v.add({{"CQ-RES-07"}, what() + " does not carry the invalidated token"});
                // CQ-GET-03, VER-12, AMB-22: the Ex entry; ProviderErrorCode by the layout in
                // force.
                bool has_code =
                    readings_.result_ex_layout ==
                        Readings::ResultExLayout::with_provider_error_code ||
                    (readings_.result_ex_layout == Readings::ResultExLayout::by_version &&
                     readings_.version_at_least(2, 1));
                if (has_code && r.Status == STATUS_SUCCESS && r.ProviderErrorCode != 0)
                    v.add({{"CQ-RES-04"}, what() + " succeeded with a non-zero ProviderErrorCode"});
            }
            if (landed && receive && r.BytesTransferred != expected.bytes_transferred)
                v.add({{"CQ-RES-01"},
                       what() + " reports " + num(r.BytesTransferred) + " bytes transferred; " +
                           num(expected.bytes_transferred) + " were sent"});
            for (const auto& landing : expected.landings)
                note_landing(landing, -1);
            if (landed && landing_seen) {
                for (const auto& landing : expected.landings) {
                    if (landing.unchecked) continue;  // WR-FENCE-01: the order is open
                    size_t at = 0;
                    for (size_t i = 0; i < landing.at.size(); ++i) {
                        const std::byte* p =
                            memory_.page(landing.at[i].first) + landing.at[i].second;
                        // memcmp: std::equal over std::byte compares byte by byte (the oracle's
                        // hottest loop).
                        if (std::memcmp(p, landing.bytes.data() + at, landing.sizes[i]) != 0) {
                            // FR-MAP-01 first: the bytes sit where the run of consecutive
                            // logical pages from AdapterPageArray[0] puts them (the provider
                            // took the entries for one run), or a read from a fast registration
                            // brought that run's bytes. Looked at before the order (FR-PAGE-02):
                            // that run's page may be another of the registration's.
                            if ((landing.fast_registered_runs && landed_as_run(landing, i, at)) ||
                                (landing.source_fast_registered_runs &&
                                 read_as_run(landing, at, p, landing.sizes[i]))) {
                                v.add({{"FR-MAP-01", "FR-PAGE-02", rule},
                                       what() + " succeeded, but its bytes are where a run of "
                                                "consecutive logical pages from "
                                                "AdapterPageArray[0] puts them, not on the pages "
                                                "the array names"});
                                break;
                            }
                            // FR-PAGE-02, FR-MAP-01: the bytes sit on another page of the fast
                            // registration, at the same offset: its pages are out of order.
                            bool elsewhere = false;
                            if (landing.fast_registered_pages)
                                for (PFN_NUMBER other : *landing.fast_registered_pages)
                                    if (other != landing.at[i].first &&
                                        std::memcmp(memory_.page(other) + landing.at[i].second,
                                                    landing.bytes.data() + at,
                                                    landing.sizes[i]) == 0 &&
                                        !same_bytes_sent_to(landing, other, i, at))
                                        elsewhere = true;
                            // A read from a fast registration whose pages were taken out of
                            // order: the landed bytes are another source page's, at the offset
                            // the expected ones have in theirs.
                            if (!elsewhere && landing.source_fast_registered_pages)
                                elsewhere =
                                    read_from_another_source_page(landing, at, p, landing.sizes[i]);
                            // RMR-VA-03 (LAM-VA-01): the bytes sit on the pages the
                            // region's MDL VA maps, not on its PFNs' pages: the provider wrote
                            // through the VA. (An honest provider never lands there: the pages
                            // differ, and the decoy's bytes are not the ones sent.)
                            if (!elsewhere && (landing.va_aliases || landing.source_through_va) &&
                                moved_through_va(landing)) {
                                v.add({{landing.va_rule, rule},
                                       what() + " succeeded, but the bytes moved through the "
                                                "pages an MDL's virtual address maps, not the "
                                                "pages its PFN array lists: the provider "
                                                "dereferenced the VA"});
                                break;
                            }
                            if (elsewhere)
                                v.add({{"FR-PAGE-02", "FR-MAP-01", rule},
                                       what() + " succeeded, but its bytes landed on another page "
                                                "of the fast registration: the pages are not "
                                                "mapped in AdapterPageArray order"});
                            else {
                                // A fast registration's page order (FR-PAGE-02) is only named
                                // when the bytes are seen on its other pages; where they
                                // cannot be (a trace digests the pages the array names, not
                                // the others), the message still says where to look.
                                std::string through_fr =
                                    landing.fast_registered_pages ||
                                            landing.source_fast_registered_pages
                                        ? " (through a fast registration: its pages out of "
                                          "AdapterPageArray order, FR-PAGE-02, would do this "
                                          "too)"
                                        : "";
                                v.add({{rule},
                                       what() +
                                           " succeeded, but the bytes at the target "
                                           "are not the ones sent" +
                                           through_fr});
                            }
                            break;
                        }
                        at += landing.sizes[i];
                    }
                }
            }
            for (auto& landing : expected.landings)
                recycle_bytes(std::move(landing.bytes));
            list.erase(it);
            if (forget) forget_closed_qp(qp_id);
            return v;
        }
        // AMB-12, MODEL-CQ-ERR-01: a request of the peer failed at this QP (a remote access
        // error, say), and where that moves this QP to error too (as InfiniBand's responder
        // does), requests not yet run here are flushed. The first such entry shows it: the QP
        // is in error from now on, everything queued on it is flushed (FLS-02).
        if (q.peer_error && !q.error && q.qp_context == qp_context) {
            auto queued = [&](const std::deque<WorkRequest>& list) {
                return std::any_of(list.begin(), list.end(), [&](const WorkRequest& wr) {
                    return wr.request_context == request;
                });
            };
            if (queued(q.initiator) || queued(q.receive)) {
                // Unless an entry of this connection showed the reading the profile did not
                // choose (open_outcomes): then the model's prediction that the peer's request
                // failed (and left this one waiting) no longer holds, and the entry says only
                // that it ran (a receive that took the peer's message after a read into a
                // sink-only region landed, AMB-37). It is taken off the queue, not judged.
                const auto* other = state_of<QpState>(q.peer);
                if (q.outcome_open || (other && other->outcome_open)) {
                    for (auto* list : {&q.initiator, &q.receive})
                        std::erase_if(*list, [&](const WorkRequest& wr) {
                            return wr.request_context == request;
                        });
                    return v;
                }
                fail_qp(qp_id, true);
                return observe_completion(cq, r, ex);
            }
        }
        // Not pending: was it a request that must leave no entry?
        auto listed = [&](const auto& list) {
            return q.qp_context == qp_context &&
                   std::find(list.begin(), list.end(), request) != list.end();
        };
        if (listed(q.failed_inline)) {
            // WR-05, DEFER-03: a request refused inline, deferred or not, leaves no entry. An
            // NdkFastRegister's page says so for itself (FR-ST-04), and for its
            // STATUS_ACCESS_VIOLATION in particular (FR-ACC-04): those first.
            RuleIds rules;
            if (listed(q.failed_inline_access_violation)) rules.push_back("FR-ACC-04");
            if (listed(q.failed_inline_fast_register)) rules.push_back("FR-ST-04");
            for (const char* generic : {"WR-05", "DEFER-03"})
                rules.push_back(generic);
            v.add({std::move(rules), what() + " belongs to a request that failed inline"});
            return v;
        }
        if (listed(q.unjudged)) return v;  // accepted against the verdict: reported then
        if (listed(q.never)) {
            v.add({{"CQ-STATUS-02", "MODEL-CQ-STATUS-01"},
                   what() + " appeared on a CQ that had failed (overrun or fatal error)"});
            return v;
        }
        auto silent = std::find(q.silent_successes.begin(), q.silent_successes.end(), request);
        if (silent != q.silent_successes.end() && q.qp_context == qp_context) {
            // FLS-02, AMB-12, FR-SILENT-02: the model ran the request when it was posted, but the
            // device may not have: where the QP went to error since (a flush, a close, a peer's
            // failure that reached it), the request may have been flushed or failed, and then it
            // has an entry (an error one; success still leaves none). Once.
            if (NT_ERROR(r.Status) && (q.error || q.peer_error || q.flushed)) {
                q.silent_successes.erase(silent);
                return v;
            }
            auto hint = std::find_if(q.silent_success_hints.begin(), q.silent_success_hints.end(),
                                     [&](const auto& h) { return h.first == request; });
            if (NT_ERROR(r.Status)) {
                // A silent request the model ran as a success failed: an error entry is what
                // SILENT_SUCCESS leaves (WR-SILENT-01 suppresses success entries only), so what
                // is broken is the success it owed (CQ-CST-01), and first the rule a token
                // getter or a flag's grant breaks where the oracle knows one (as for a request
                // without the flag: Out::success in observe_completion).
                RuleIds rules;
                if (hint != q.silent_success_hints.end())
                    rules.assign(hint->second.begin(), hint->second.end());
                if (ex) rules.push_back(outcome_rule(r.Type));
                rules.push_back("CQ-CST-01");
                q.silent_successes.erase(silent);
                if (hint != q.silent_success_hints.end()) q.silent_success_hints.erase(hint);
                v.add({rules, what() +
                                  " (a request with SILENT_SUCCESS) should have succeeded, "
                                  "but its status is " +
                                  std::to_string(r.Status)});
                return v;
            }
            // The rule of the request's own call first: a fast registration's is FR-SILENT-01.
            RuleIds rules = ex && r.Type == NdkOperationTypeFastRegister
                                ? RuleIds{"FR-SILENT-01", "WR-SILENT-01", "AMB-33"}
                                : RuleIds{"WR-SILENT-01", "FR-SILENT-01", "AMB-33"};
            v.add({rules, what() + " belongs to a request with SILENT_SUCCESS that succeeded",
                   readings_.silent_success_entry_tolerated});
            return v;
        }
    }
    // CQP-CTX-01, CQ-RES-02: the right request with another QPContext than its QP was created
    // with (NdkCreateQp's page says every completion of the QP's requests echoes it).
    if (cq_state)
        for (ObjectId qp_id : cq_state->qps) {
            auto& q = std::get<QpState>(objects_[qp_id].state);
            for (auto* list : {&q.initiator_pending, &q.receive_pending})
                for (auto it = list->begin(); it != list->end(); ++it)
                    if (it->request_context == request && it->cq == cq) {
                        // The rule of the request's own call first: a fast registration's entry
                        // carries its QP's QPContext by NdkFastRegister's page (FR-QP-01).
                        RuleIds rules{"CQP-CTX-01", "CQ-RES-02"};
                        if (it->type == NdkOperationTypeFastRegister)
                            rules.insert(rules.begin(), "FR-QP-01");
                        v.add({std::move(rules), what() + " carries QPContext " + hex(qp_context) +
                                                     "; its QP was created with " +
                                                     hex(q.qp_context)});
                        Completion taken = std::move(*it);
                        list->erase(it);
                        for (const auto& l : taken.landings)
                            note_landing(l, -1);
                        retrieved(taken);
                        return v;
                    }
        }
    // CQP-OBJ-02: the right request of a QP of this CQ, with its QP's QPContext, but owed to
    // the QP's other CQ (a receive's entry on the initiator CQ, or the other way round). A QP
    // made with an SRQ has its page's own rule for its receives (CQP-SRQ-01), named first.
    if (cq_state)
        for (ObjectId qp_id : cq_state->qps) {
            auto& q = std::get<QpState>(objects_[qp_id].state);
            if (q.qp_context != qp_context) continue;
            for (auto* list : {&q.initiator_pending, &q.receive_pending})
                for (auto it = list->begin(); it != list->end(); ++it)
                    if (it->request_context == request && it->cq != cq) {
                        RuleIds rules{"CQP-OBJ-02", "CQ-RES-05"};
                        if (it->receive_queue && q.srq) rules.insert(rules.begin(), "CQP-SRQ-01");
                        // A fast registration completes on the initiator CQ (FR-QP-01).
                        if (it->type == NdkOperationTypeFastRegister)
                            rules.insert(rules.begin(), "FR-QP-01");
                        v.add({std::move(rules),
                               what() + " came on CQ " + object_text(cq) + "; its " +
                                   (it->receive_queue ? "receive" : "initiator") +
                                   " request completes on CQ " + object_text(it->cq)});
                        Completion taken = std::move(*it);
                        list->erase(it);
                        for (const auto& l : taken.landings)
                            note_landing(l, -1);
                        retrieved(taken);
                        return v;
                    }
        }
    // CQ-RES-05 judged first: the entry's RequestContext is none of an outstanding request of
    // its QP (a second delivery of an entry already retrieved, CQ-GET-04, shows the same way:
    // the model keeps no history of retrieved entries to tell them apart).
    v.add({{"CQ-RES-05", "CQ-GET-04"},
           what() + " matches no request posted and outstanding on a QP of this CQ"});
    return v;
}

}  // namespace ndkct::model
