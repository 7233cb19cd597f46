// Completion queues: creation, resize, arming and notification, retrieving results, and
// interrupt moderation (CQ-*).
#include <algorithm>

#include "ndkct/model/model.hpp"

namespace ndkct::model {

namespace {

std::string num(uint64_t v) {
    return std::to_string(v);
}

// CQ-NOT-04: a second arm before the first fired keeps the stronger: ANY > SOLICITED > ERRORS.
int arm_rank(int type) {
    switch (type) {
        case NDK_CQ_NOTIFY_ANY:
            return 2;
        case NDK_CQ_NOTIFY_SOLICITED:
            return 1;
        default:
            return 0;
    }
}

}  // namespace

Expectation Model::expect_call(const calls::CreateCq& c) const {
    Expectation e;
    if (!require(e, c.adapter, Kind::adapter, "pNdkAdapter")) return e;
    e.may_pend = e.may_lack_resources = true;  // CQ-CREATE-02
    e.success_rules = {"CQ-CREATE-02", "AI-07"};
    uint32_t max = adapter_info(c.adapter).MaxCqDepth;
    if (c.depth > max)  // CQ-CREATE-01
        e.fail(STATUS_INVALID_PARAMETER, {"CQ-CREATE-01"}, Strength::documented,
               "CqDepth " + num(c.depth) + " exceeds MaxCqDepth " + num(max));
    return e;
}

void Model::commit(const calls::CreateCq& c, const Observed&, Applied& applied, Stage stage) {
    CqState cq;  // CQ-IM-05: moderation off (interval and count 0) until set
    cq.depth = c.depth;
    cq.has_notification = c.has_notification;
    create_stage(Kind::cq, c.adapter, cq, {}, applied, stage);
}

Expectation Model::expect_call(const calls::ResizeCq& c) const {
    Expectation e;
    const Object* o = require(e, c.cq, Kind::cq, "pNdkCq");
    if (!o) return e;
    e.may_pend = e.may_lack_resources = true;  // CQ-RESIZE-03
    e.success_rules = {"CQ-RESIZE-03", "CQ-RESIZE-04"};
    const NDK_ADAPTER_INFO& info = adapter_info(c.cq);
    if (!(info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED)) {
        // AI-FLAG-06: without the flag the consumer does not resize (CQ-RESIZE-01).
        // MODEL-CQ-RESIZE-01: when it does, the resize must fail (inline or through the
        // callback) and the CQ keeps its depth and entries; the profile names the status,
        // another error is a warning.
        e.fail(readings_.resize_cq_unsupported_status, {"MODEL-CQ-RESIZE-01", "CQ-RESIZE-01"},
               Strength::model_choice,
               "the adapter does not report NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED");
        e.consumer_error = true;  // CQ-RESIZE-01: the caller's duty, no documented outcome
        return e;
    }
    if (c.depth > info.MaxCqDepth)  // CQ-RESIZE-02
        e.fail(STATUS_INVALID_PARAMETER, {"CQ-RESIZE-02"}, Strength::documented,
               "CqDepth exceeds MaxCqDepth");
    const auto& cq = std::get<CqState>(o->state);
    if (mode_ == Mode::simulate && c.depth < cq.entries.size()) {  // AMB-25
        if (readings_.resize_below_queued_rejected)
            e.fail(STATUS_INVALID_PARAMETER, {"AMB-25"}, Strength::reading,
                   "the CQ holds more entries than the new depth");
    }
    return e;
}

void Model::commit(const calls::ResizeCq& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::done || stage == Stage::completed)
        state_mut<CqState>(c.cq)->depth = c.depth;
}

Expectation Model::expect_call(const calls::ArmCq& c) const {
    Expectation e;
    e.returns_void = true;
    if (!require(e, c.cq, Kind::cq, "pNdkCq")) return e;
    if (c.type > NDK_CQ_NOTIFY_SOLICITED) {  // CQ-ARM-01
        e.undefined = true;
        e.undefined_rules = {"CQ-ARM-01"};
        e.undefined_why = "Type " + num(c.type) + " is not an arm type";
    }
    return e;
}

void Model::commit(const calls::ArmCq& c, const Observed&, Applied&, Stage) {
    auto* cq = state_mut<CqState>(c.cq);
    int type = static_cast<int>(c.type);
    // Check mode: an arm made while the outstanding one's notification is owed may meet that
    // notification still on its way (the provider fired before this arm, the callback came
    // after it); this arm may then fire again for the entries there (CQ-NOT-02, CQ-NOT-08). One
    // notification more than the arms the oracle counts is therefore no CQ-NOT-01 case. So too
    // when the outstanding arm was made over entries already there: CQ-NOT-08 lets it fire for
    // them, and that notification may still be on its way.
    if (mode_ == Mode::check &&
        (notification_owed(c.cq) || (cq->armed >= 0 && cq->armed_with_entries)))
        ++cq->notifications_in_flight;
    // CQ-NOT-08: an arm may fire for entries already in the CQ; the provider decides when it
    // arms, so entries there then justify a notification that arrives after they were taken.
    if (mode_ == Mode::check && entries_due(c.cq)) cq->armed_with_entries = true;
    // CQ-NOT-02: only entries the CQ still holds make a new arm fire at once; ones already
    // retrieved owe it nothing (the reference provider's CQ is empty then and does not fire).
    if (mode_ == Mode::check && !entries_due(c.cq) && !cq->failed)
        cq->new_since_notification = cq->solicited_since_notification = cq->solicited_by_send =
            cq->uncertain_since_notification = cq->owed_for_certain = false;
    if (cq->armed < 0 || arm_rank(type) > arm_rank(cq->armed)) cq->armed = type;  // CQ-NOT-04
    if (mode_ != Mode::simulate || !cq->has_notification) return;
    // CQ-NOT-02: entries that arrived since the last notification fire the new arm at once;
    // CQ-NOT-08: entries already seen may (the profile decides whether the reference does).
    bool fire = false;
    if (!cq->entries.empty()) {
        // CQ-NOT-10/11: a solicited send's receive or an error entry satisfies SOLICITED.
        bool solicited_or_error =
            std::any_of(cq->entries.begin(), cq->entries.end(), [](const Completion& e) {
                return e.solicited || e.outcome == Completion::Outcome::error ||
                       e.outcome == Completion::Outcome::cancelled ||
                       e.outcome == Completion::Outcome::any_error;
            });
        bool satisfied = cq->armed == NDK_CQ_NOTIFY_ANY ||
                         (cq->armed == NDK_CQ_NOTIFY_SOLICITED && solicited_or_error);
        fire = satisfied &&
               (cq->new_since_notification || readings_.reference.rearm_fires_on_old_entries);
    }
    if (cq->failed) fire = true;  // CQ-NOT-05, CQ-STATUS-02/03: the CQ's error satisfies any arm
    if (fire) {
        cq->armed = -1;
        cq->new_since_notification = cq->solicited_since_notification = false;
        cq->solicited_by_send = false;
        cq->owed_for_certain = false;
        emit({Event::Kind::cq_notification, c.cq, 0, cq->failed ? cq->failure : STATUS_SUCCESS, 0});
    }
}

void Model::notify_cq(ObjectId cq_id, bool error_entry, bool solicited) {
    auto* cq = state_mut<CqState>(cq_id);
    if (!cq) return;
    // What satisfies which arm (both modes keep it: check mode judges notifications by it).
    if (!solicited) cq->new_since_notification = true;
    if (solicited || error_entry) cq->solicited_since_notification = true;
    if (solicited) cq->solicited_by_send = true;
    bool satisfied =
        cq->armed == NDK_CQ_NOTIFY_ANY ||                                      // CQ-NOT-09
        (cq->armed == NDK_CQ_NOTIFY_SOLICITED && (solicited || error_entry));  // CQ-NOT-10/11
    if (solicited && satisfied) cq->owed_for_certain = true;
    // CQ-NOT-05: an ERRORS arm is not satisfied by entries, only by the CQ's own error.
    if (mode_ != Mode::simulate || !cq->has_notification || !satisfied) return;
    // CQ-NOT-07: a satisfied arm is never dropped. CQ-NOT-06: one notification per arm.
    // CQ-STATUS-01: a CQ working normally notifies with STATUS_SUCCESS.
    cq->armed = -1;
    cq->new_since_notification = cq->solicited_since_notification = false;
    cq->solicited_by_send = false;
    cq->owed_for_certain = false;
    emit({Event::Kind::cq_notification, cq_id, 0, STATUS_SUCCESS, 0});
}

bool Model::entries_due(ObjectId cq_id) const {
    const auto* cq = state_of<CqState>(cq_id);
    if (!cq) return false;
    for (ObjectId qp : cq->qps) {
        const auto& q = std::get<QpState>(objects_[qp].state);
        for (const auto* list : {&q.initiator_pending, &q.receive_pending})
            for (const auto& c : *list)
                if (c.cq == cq_id) return true;
    }
    return false;
}

bool Model::notification_owed(ObjectId cq_id) const {
    const auto* cq = state_of<CqState>(cq_id);
    if (!cq || cq->armed < 0 || !cq->has_notification) return false;
    // CQ-NOT-07 (and CQ-NOT-02 for an arm made after the entry came).
    if (cq->failed) return true;
    if (cq->armed == NDK_CQ_NOTIFY_ANY) return cq->new_since_notification;
    if (cq->armed == NDK_CQ_NOTIFY_SOLICITED) return cq->solicited_since_notification;
    return false;
}

bool Model::notification_certainly_owed(ObjectId cq_id) const {
    const auto* cq = state_of<CqState>(cq_id);
    return notification_owed(cq_id) && (cq->failed || cq->owed_for_certain);
}

RuleIds Model::owed_notification_rules(ObjectId cq_id) const {
    const auto* cq = state_of<CqState>(cq_id);
    if (!cq || cq->failed) return {"CQ-NOT-07", "CQ-STATUS-02"};
    if (cq->armed == NDK_CQ_NOTIFY_ANY) return {"CQ-NOT-09", "CQ-NOT-07"};
    if (cq->solicited_by_send) return {"SND-04", "CQ-NOT-10", "CQ-NOT-07"};
    return {"CQ-NOT-11", "CQ-NOT-07"};
}

// Check mode: a CQ notification the provider delivered (CQ-NOT-*, CQ-STATUS-*).
void Model::observe_cq_notification(ObjectId cq_id, NTSTATUS status, Verdict& v) {
    auto* cq = state_mut<CqState>(cq_id);
    if (!cq) return;
    if (mode_ == Mode::check) {
        if (!cq->has_notification)
            v.add({{"CQ-NOT-12"}, "a CQ created without a notification callback was notified"});
        if (status == STATUS_SUCCESS) {
            Verdict unexplained;  // what this notification breaks if the outstanding arm is its
            if (cq->armed < 0)    // CQ-NOT-01, CQ-NOT-06
                unexplained.add({{"CQ-NOT-01", "CQ-NOT-06"},
                                 "a CQ notification came without an outstanding arm"});
            else if (cq->armed == NDK_CQ_NOTIFY_ERRORS)  // CQ-NOT-05
                unexplained.add({{"CQ-NOT-05"},
                                 "an NDK_CQ_NOTIFY_ERRORS arm was notified with STATUS_SUCCESS, "
                                 "as if by an ordinary entry"});
            else {
                // CQ-NOT-08 lets an arm fire for entries already there; with none at all, and
                // nothing satisfying the arm since the last notification, it had no cause.
                bool queued = entries_due(cq_id) || cq->armed_with_entries;
                bool cause = cq->uncertain_since_notification ||
                             (cq->armed == NDK_CQ_NOTIFY_ANY ? cq->new_since_notification
                                                             : cq->solicited_since_notification);
                if (!cause && !queued)
                    unexplained.add(
                        {{cq->armed == NDK_CQ_NOTIFY_ANY ? "CQ-NOT-09" : "CQ-NOT-10", "CQ-NOT-11"},
                         "a CQ notification came with nothing that satisfies its arm"});
            }
            // An earlier arm's notification, late (commit of ArmCq), explains one that the
            // outstanding arm does not; that arm then stays.
            if (!unexplained.clean() && cq->notifications_in_flight > 0) {
                --cq->notifications_in_flight;
                return;
            }
            v.merge(std::move(unexplained));
        } else if (status == STATUS_BUFFER_OVERFLOW) {
            // CQ-CREATE-04, CQ-RESIZE-04: CqDepth entries fit without an overrun. The provider's
            // CQ holds at most what the model still expects there.
            size_t queued = 0;
            for (ObjectId qp : cq->qps) {
                const auto& q = std::get<QpState>(objects_[qp].state);
                for (const auto* list : {&q.initiator_pending, &q.receive_pending})
                    for (const auto& c : *list)
                        queued += c.cq == cq_id;
            }
            if (queued <= cq->depth)
                v.add({{"CQ-CREATE-04", "CQ-RESIZE-04", "CQ-STATUS-02"},
                       "the CQ reported an overrun with at most " + num(queued) +
                           " entries for a depth of " + num(cq->depth)});
        } else if (status != STATUS_INTERNAL_ERROR) {
            v.add({{"CQ-STATUS-01"},
                   "a CQ notification carried CqStatus " + num(static_cast<uint32_t>(status)) +
                       ": only STATUS_SUCCESS, STATUS_BUFFER_OVERFLOW and "
                       "STATUS_INTERNAL_ERROR are defined"});
        }
    }
    cq->armed = -1;
    cq->armed_with_entries = false;
    cq->new_since_notification = cq->solicited_since_notification = false;
    cq->solicited_by_send = false;
    cq->owed_for_certain = false;
    cq->uncertain_since_notification = false;
    // CQ-STATUS-02/03: an overrun or a fatal error; the CQ and its QPs are unusable from now on.
    if (status == STATUS_BUFFER_OVERFLOW || status == STATUS_INTERNAL_ERROR) fail_cq(cq_id, status);
}

Expectation Model::expect_call(const calls::GetCqResults& c) const {
    Expectation e;
    e.returns_void = true;  // CQ-GET-02: no status, never blocks
    if (!require(e, c.cq, Kind::cq, "pNdkCq")) return e;
    if (c.ex && !readings_.version_at_least(1, 2)) {  // VER-08, VER-11 (CQ-GET-03: 1.2 on)
        e.undefined = true;
        e.undefined_rules = {"VER-11"};
        e.undefined_why = "NdkGetCqResultsEx is 1.2 and later";
    }
    return e;
}

void Model::commit(const calls::GetCqResults& c, const Observed& o, Applied& applied, Stage) {
    if (o.value > c.max_results)  // CQ-GET-01
        applied.verdict.add({{"CQ-GET-01"},
                             "NdkGetCqResults returned " + num(o.value) + " results for room of " +
                                 num(c.max_results)});
    if (mode_ == Mode::simulate) {
        auto* cq = state_mut<CqState>(c.cq);
        size_t n = std::min<size_t>(o.value, cq->entries.size());
        for (size_t i = 0; i < n; ++i)
            retrieved(cq->entries[i]);  // CQ-GET-04: removed once
        cq->entries.erase(cq->entries.begin(), cq->entries.begin() + static_cast<ptrdiff_t>(n));
        return;
    }
    for (size_t i = 0; i < o.results.size() && i < o.value; ++i) {
        bool seen = std::find(o.landings_unseen.begin(), o.landings_unseen.end(), i) ==
                    o.landings_unseen.end();
        applied.verdict.merge(observe_completion(c.cq, o.results[i], c.ex, seen));
    }
}

const std::deque<Completion>& Model::cq_entries(ObjectId cq) const {
    static const std::deque<Completion> none;
    const auto* state = state_of<CqState>(cq);
    return state ? state->entries : none;
}

Expectation Model::expect_call(const calls::ControlCqInterruptModeration& c) const {
    Expectation e;
    const Object* o = require(e, c.cq, Kind::cq, "pNdkCq");
    if (!o) return e;
    e.no_pending_rules = {"CQ-IM-04"};
    e.may_lack_resources = true;
    e.success_rules = {"CQ-IM-03", "CQ-IM-10"};
    if (!(adapter_info(c.cq).AdapterFlags & NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED)) {
        // CQ-IM-02, GEN-MAND-02, AI-FLAG-03: implemented all the same, and refusing.
        e.fail(STATUS_NOT_SUPPORTED, {"CQ-IM-02", "GEN-MAND-02"}, Strength::documented,
               "the adapter does not report interrupt moderation");
        return e;
    }
    const auto& cq = std::get<CqState>(o->state);
    bool count_infinite = c.count == MAXULONG || c.count > cq.depth;  // CQ-IM-08
    if (c.interval == MAXULONG && count_infinite)                     // CQ-IM-09
        e.fail(STATUS_INVALID_PARAMETER_MIX, {"CQ-IM-09"}, Strength::documented,
               "both ModerationInterval and ModerationCount are infinite");
    return e;
}

void Model::commit(const calls::ControlCqInterruptModeration& c, const Observed&, Applied&,
                   Stage stage) {
    if (stage != Stage::done) return;
    // CQ-IM-10: the latest settings win. The model keeps the moderation in force as the pages
    // define it (it changes only when interrupts come, which NDKPI calls do not show). 0 = off.
    auto* cq = state_mut<CqState>(c.cq);
    uint32_t interval = c.interval, count = c.count;
    if (count == MAXULONG || count > cq->depth) count = 0;  // CQ-IM-08: interval alone
    if (interval == MAXULONG) interval = 0;                 // CQ-IM-07: count alone
    bool off = c.interval == 0;                             // CQ-IM-06: interval 0 is off
    if (readings_.moderation_count_zero_or_one)
        off |= c.count == 0 || c.count == 1;  // AMB-24
    else
        off |= c.interval == 1;  // AMB-24 literal
    cq->interrupt_interval = off ? 0 : interval;
    cq->interrupt_count = off ? 0 : count;
}

}  // namespace ndkct::model
