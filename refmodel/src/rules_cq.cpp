// Completion queues: creation, resize, arming and notification, retrieving results, and
// interrupt moderation (CQ-*).
#include <algorithm>

#include "ndkct/model/model.hpp"

namespace ndkct::model {

namespace {

std::string num(uint64_t v) { return std::to_string(v); }

// CQ-NOT-04: a second arm before the first fired keeps the stronger: ANY > SOLICITED > ERRORS.
int arm_rank(int type) {
    switch (type) {
        case NDK_CQ_NOTIFY_ANY: return 2;
        case NDK_CQ_NOTIFY_SOLICITED: return 1;
        default: return 0;
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
    CqState cq;
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
    if (!(info.AdapterFlags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED)) {  // CQ-RESIZE-01
        e.fail(STATUS_NOT_SUPPORTED, {"CQ-RESIZE-01"}, Strength::model_choice,
               "the adapter does not report NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED");
        e.consumer_error = true;
        return e;
    }
    if (c.depth > info.MaxCqDepth)  // CQ-RESIZE-02
        e.fail(STATUS_INVALID_PARAMETER, {"CQ-RESIZE-02"}, Strength::documented,
               "CqDepth exceeds MaxCqDepth");
    const auto& cq = std::get<CqState>(o->state);
    if (mode_ == Mode::simulate && c.depth < cq.entries.size()) {  // AMB-25
        if (readings_.resize_below_queued_rejected)
            e.fail(STATUS_INVALID_PARAMETER, {"CQ-RESIZE-04", "AMB-25"}, Strength::model_choice,
                   "the CQ holds more entries than the new depth");
    }
    return e;
}

void Model::commit(const calls::ResizeCq& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::done || stage == Stage::completed) state_mut<CqState>(c.cq)->depth = c.depth;
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
    if (cq->armed < 0 || arm_rank(type) > arm_rank(cq->armed)) cq->armed = type;  // CQ-NOT-04
    if (mode_ != Mode::simulate || !cq->has_notification) return;
    // CQ-NOT-02: entries that arrived since the last notification fire the new arm at once;
    // CQ-NOT-08: entries already seen may (the profile decides whether the reference does).
    bool fire = false;
    if (!cq->entries.empty()) {
        bool any_error = std::any_of(cq->entries.begin(), cq->entries.end(), [](const Completion& e) {
            return e.outcome == Completion::Outcome::error || e.outcome == Completion::Outcome::cancelled;
        });
        bool satisfied = cq->armed == NDK_CQ_NOTIFY_ANY ||
                         (cq->armed == NDK_CQ_NOTIFY_SOLICITED && any_error);
        fire = satisfied && (cq->new_since_notification || readings_.reference.rearm_fires_on_old_entries);
    }
    if (cq->overrun) fire = true;
    if (fire) {
        cq->armed = -1;
        cq->new_since_notification = false;
        emit({Event::Kind::cq_notification, c.cq, 0,
              cq->overrun ? STATUS_BUFFER_OVERFLOW : STATUS_SUCCESS, 0});
    }
}

void Model::notify_cq(ObjectId cq_id, bool error_entry, bool solicited) {
    auto* cq = state_mut<CqState>(cq_id);
    if (!cq) return;
    bool satisfied = cq->armed == NDK_CQ_NOTIFY_ANY ||                                  // CQ-NOT-09
                     (cq->armed == NDK_CQ_NOTIFY_SOLICITED && (solicited || error_entry));  // CQ-NOT-10/11
    if (mode_ != Mode::simulate || !cq->has_notification || !satisfied) {
        if (!solicited) cq->new_since_notification = true;
        return;
    }
    cq->armed = -1;  // CQ-NOT-06: one notification per arm
    cq->new_since_notification = false;
    emit({Event::Kind::cq_notification, cq_id, 0, STATUS_SUCCESS, 0});
}

Expectation Model::expect_call(const calls::GetCqResults& c) const {
    Expectation e;
    e.returns_void = true;  // CQ-GET-02: no status, never blocks
    if (!require(e, c.cq, Kind::cq, "pNdkCq")) return e;
    if (c.ex && !readings_.version_at_least(1, 2)) {  // VER-08, VER-11
        e.undefined = true;
        e.undefined_rules = {"VER-11"};
        e.undefined_why = "NdkGetCqResultsEx is 1.2 and later";
    }
    return e;
}

void Model::commit(const calls::GetCqResults& c, const Observed& o, Applied& applied, Stage) {
    if (o.value > c.max_results)  // CQ-GET-01
        applied.verdict.add({{"CQ-GET-01"}, "NdkGetCqResults returned " + num(o.value) +
                                                " results for room of " + num(c.max_results)});
    if (mode_ == Mode::simulate) {
        auto* cq = state_mut<CqState>(c.cq);
        size_t n = std::min<size_t>(o.value, cq->entries.size());
        cq->entries.erase(cq->entries.begin(), cq->entries.begin() + static_cast<ptrdiff_t>(n));
        return;
    }
    for (size_t i = 0; i < o.results.size() && i < o.value; ++i)
        applied.verdict.merge(observe_completion(c.cq, o.results[i], c.ex));
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
        e.fail(STATUS_NOT_SUPPORTED, {"CQ-IM-02"}, Strength::documented,
               "the adapter does not report interrupt moderation");  // CQ-IM-02
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
    auto* cq = state_mut<CqState>(c.cq);  // CQ-IM-10: the latest settings win
    cq->interrupt_interval = c.interval;
    cq->interrupt_count = c.count;
}

}  // namespace ndkct::model
