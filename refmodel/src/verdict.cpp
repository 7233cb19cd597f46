#include <algorithm>

#include "ndkct/model/expectation.hpp"
#include "ndkct/model/page_rules.hpp"
#include "ndkct/model/verdict.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::model {

namespace {

std::string join(const RuleIds& rules) {
    std::string out;
    for (const auto& rule : rules)
        out += (out.empty() ? "" : ", ") + rule;
    return out;
}

std::string expected_failures(const Expectation& e) {
    std::string out;
    for (const auto& f : e.failures) {
        if (!out.empty()) out += " or ";
        out += spec::status_name(f.status);
        if (!f.why.empty()) out += " (" + f.why + ")";
    }
    return out;
}

RuleIds failure_rules(const Expectation& e, bool documented_only) {
    RuleIds rules;
    for (const auto& f : e.failures) {
        if (documented_only && f.strength != Strength::documented) continue;
        for (const auto& r : f.rules)
            if (std::find(rules.begin(), rules.end(), r) == rules.end()) rules.push_back(r);
    }
    return rules;
}

Verdict judge_strict(const Expectation& e, NTSTATUS observed, const std::string& call, bool async);

Verdict judge_status(const Expectation& e, NTSTATUS observed, std::string_view call_name,
                     bool async) {
    Verdict v;
    // The common case, a valid call that succeeded (or pended where it may), builds no text.
    if (!e.undefined && !e.must_fail() && !e.consumer_error &&
        ((observed == STATUS_SUCCESS && !(e.must_pend && !async)) ||
         (observed == STATUS_PENDING && e.may_pend && !async)))
        return v;
    const std::string call(call_name);
    if (e.undefined) return v;
    if (e.refusal_is_reading() && observed != STATUS_PENDING) {
        // DESIGN section 5: the docs do not say this call fails; the profile reads it as refused.
        // Any other outcome is the reading not chosen: a warning, never a failure.
        for (const auto& f : e.failures)
            if (f.status == observed ||
                (f.strength == Strength::reading_any_error && NT_ERROR(observed)))
                return v;
        if (observed == STATUS_INSUFFICIENT_RESOURCES && e.may_lack_resources) return v;
        std::string how = async ? " through its completion callback" : "";
        if (NT_ERROR(observed))
            v.add({failure_rules(e, false),
                   call + ": " + spec::status_name(observed) + how + " where the profile reads " +
                       expected_failures(e) + " (another error; the docs name no status here)",
                   true});
        else
            v.add({failure_rules(e, false),
                   call + " accepted a call" + how + " that the profile reads as refused (" +
                       expected_failures(e) + "); the docs do not say it fails",
                   true});
        return v;
    }
    if (e.may_fail_any && !e.must_fail() && NT_ERROR(observed)) {
        if (e.any_failure_warns &&
            !(observed == STATUS_INSUFFICIENT_RESOURCES && e.may_lack_resources))
            v.add({e.any_failure_rules,
                   call + ": " + spec::status_name(observed) +
                       " is allowed by the docs but the profile expects "
                       "the call to be accepted",
                   true});
        return v;
    }
    // An allowed failure (the connection already gone, say) stands in for a required one too:
    // when several failures apply, the docs order none of them.
    for (const auto& a : e.also_allowed)
        if (a.status == observed && (!e.must_fail() || NT_ERROR(a.status))) return v;
    for (const auto& t : e.tolerated) {
        if (t.status == observed && !e.must_fail()) {
            v.add({t.rules,
                   call + ": " + spec::status_name(observed) + " (" + t.why +
                       ") is allowed by the docs but differs from the profile's reading",
                   true});
            return v;
        }
    }
    if (e.must_fail() && e.failure_may_surface_in_completion && observed == STATUS_SUCCESS &&
        !async) {
        bool all_choices = std::all_of(e.failures.begin(), e.failures.end(), [](const auto& f) {
            return f.strength != Strength::documented;
        });
        bool any_error = std::any_of(e.failures.begin(), e.failures.end(), [](const auto& f) {
            return f.strength == Strength::any_error;
        });
        if (any_error) return v;  // its completion must report the error, in any form
        if (all_choices) {
            v.add({failure_rules(e, false),
                   call + " accepted a request the profile expects refused inline (" +
                       expected_failures(e) + "); its completion must report the error",
                   true});
            return v;
        }
    }
    v = judge_strict(e, observed, call, async);
    if (e.consumer_error)
        for (auto& violation : v.violations) {
            violation.warning = true;
            violation.message += " (a consumer error with no documented status)";
        }
    return v;
}

Verdict judge_strict(const Expectation& e, NTSTATUS observed, const std::string& call, bool async) {
    Verdict v;
    std::string got = spec::status_name(observed);
    std::string how = async ? " through its completion callback" : "";
    if (observed == STATUS_PENDING) {
        if (async) {
            v.add({with_page_rule(call, Contract::callback_not_once, {"GEN-ASYNC-01"}),
                   call + ": a completion callback reported STATUS_PENDING"});
        } else if (!e.may_pend) {
            v.add({e.no_pending_rules, call + " may not return STATUS_PENDING here, but did"});
        }
        return v;
    }
    bool resources = observed == STATUS_INSUFFICIENT_RESOURCES && e.may_lack_resources;
    if (e.must_fail()) {
        for (const auto& f : e.failures)
            if (f.status == observed) return v;
        // A shortage of resources does not stand in for a refusal whose status the page names
        // for this very condition (STATUS_INVALID_PARAMETER for NdkCreateQp over a limit, say):
        // the condition is known before any resource is needed.
        bool documented = std::any_of(e.failures.begin(), e.failures.end(), [](const auto& f) {
            return f.strength == Strength::documented;
        });
        if (resources && !documented) return v;
        bool all_choices = std::all_of(e.failures.begin(), e.failures.end(), [](const auto& f) {
            return f.strength != Strength::documented;
        });
        bool any_error = std::any_of(e.failures.begin(), e.failures.end(), [](const auto& f) {
            return f.strength == Strength::any_error;
        });
        if (NT_ERROR(observed) && any_error) return v;
        if (NT_ERROR(observed) && all_choices) {
            v.add({failure_rules(e, false),
                   call + ": expected " + expected_failures(e) + ", got " + got + how +
                       " (another error; the docs name no status here)",
                   true});
        } else if (NT_ERROR(observed)) {
            RuleIds rules = failure_rules(e, true);
            if (e.mismatch_status != 0 && observed == e.mismatch_status)
                rules.insert(rules.end(), e.mismatch_rules.begin(), e.mismatch_rules.end());
            v.add({rules, call + ": expected " + expected_failures(e) + ", got " + got + how});
        } else {
            // An acceptance breaks the failures that are more than a reading.
            RuleIds rules;
            for (const auto& f : e.failures)
                if (f.strength != Strength::reading && f.strength != Strength::reading_any_error)
                    for (const auto& r : f.rules)
                        if (std::find(rules.begin(), rules.end(), r) == rules.end())
                            rules.push_back(r);
            v.add({rules, call + ": expected " + expected_failures(e) + ", got " + got + how +
                              ": the call was accepted"});
        }
        return v;
    }
    if (observed == STATUS_SUCCESS && e.must_pend && !async) {
        v.add({e.must_pend_rules, call + " must return STATUS_PENDING here (it cannot finish yet), "
                                         "but returned STATUS_SUCCESS"});
        return v;
    }
    if (observed == STATUS_SUCCESS || resources) return v;
    RuleIds rules = e.success_rules;
    if (e.refused_with != 0 && observed == e.refused_with)
        rules.insert(rules.begin(), e.refused_with_rules.begin(), e.refused_with_rules.end());
    v.add(
        {rules,
         call + ": a valid call must succeed" +
             std::string(e.may_lack_resources ? " (or report STATUS_INSUFFICIENT_RESOURCES)" : "") +
             ", got " + got + how});
    return v;
}

}  // namespace

std::string Violation::describe() const {
    return (warning ? "warning: " : "") + join(rules) + ": " + message;
}

bool Verdict::ok() const {
    return std::all_of(violations.begin(), violations.end(),
                       [](const Violation& v) { return v.warning; });
}

void Verdict::merge(Verdict other) {
    for (auto& v : other.violations)
        violations.push_back(std::move(v));
}

std::string Verdict::describe() const {
    std::string out;
    for (const auto& v : violations)
        out += (out.empty() ? "" : "\n") + v.describe();
    return out;
}

bool Expectation::refusal_is_reading() const {
    return !failures.empty() && std::all_of(failures.begin(), failures.end(), [](const auto& f) {
        return f.strength == Strength::reading || f.strength == Strength::reading_any_error;
    });
}

NTSTATUS Expectation::model_status() const {
    return failures.empty() ? preferred : failures.front().status;
}

void Expectation::fail(NTSTATUS status, RuleIds rules, Strength strength, std::string why) {
    failures.push_back({status, std::move(rules), strength, std::move(why)});
}

namespace {

// GEN-MAND-01: every NDK function is mandatory. STATUS_NOT_IMPLEMENTED (a provider's TODO entry)
// is no answer a call is judged by: where the status alone would pass (a refusal the call
// expects, an error the docs allow, a consumer error, a profile's reading), it fails here, so that
// no test of a function not written yet passes. A valid call's own rule already fails it.
Verdict judge(const Expectation& e, NTSTATUS observed, std::string_view call, bool async) {
    Verdict v = judge_status(e, observed, call, async);
    if (observed != STATUS_NOT_IMPLEMENTED || !v.ok()) return v;
    std::string expected = e.must_fail() ? expected_failures(e) : "success";
    v.violations.erase(std::remove_if(v.violations.begin(), v.violations.end(),
                                      [](const Violation& w) { return w.warning; }),
                       v.violations.end());
    v.add({{"GEN-MAND-01"},
           std::string(call) + " returned STATUS_NOT_IMPLEMENTED" +
               (async ? " through its completion callback" : "") + " where " +
               (e.undefined ? "the call breaks a consumer duty" : "the call expects " + expected) +
               ": every NDK function is mandatory, and one not implemented is judged by nothing "
               "else"});
    return v;
}

}  // namespace

Verdict judge_inline(const Expectation& expected, NTSTATUS observed, std::string_view call) {
    return judge(expected, observed, call, false);
}

Verdict judge_async(const Expectation& expected, NTSTATUS observed, std::string_view call) {
    return judge(expected, observed, call, true);
}

}  // namespace ndkct::model
