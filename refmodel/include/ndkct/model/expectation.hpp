// ndkct/model/expectation.hpp: the set of outcomes the documentation allows for one call.
//
// The model never guesses where the docs allow a choice: an Expectation is a set. A valid call
// may succeed inline, or (where the function takes a completion callback) return STATUS_PENDING
// and report later through exactly one callback, or (where documented) fail for want of
// resources, inline or through the callback. An invalid call must fail, with the documented
// status where there is one, or with the profile's reading where the docs name none.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ndkct/model/verdict.hpp"
#include "ndkct/ntstatus.h"

namespace ndkct::model {

// How firmly the model holds to a failure status.
enum class Strength {
    documented,    // the page names this status: any other outcome breaks the rule
    model_choice,  // the docs say the call fails but not how: another error is a warning
    any_error,     // the call must fail, and the profile reads any error status as right
    // The docs do not say the call fails at all: the profile reads it as refused with this
    // status (a reading, DESIGN section 5). Another error and an acceptance are both the reading
    // not chosen: warnings, and on an acceptance the model follows the provider (the call takes
    // effect as a valid one would).
    reading,
    reading_any_error,  // as reading, but the profile takes any error status as its refusal
};

struct ExpectedFailure {
    NTSTATUS status;  // the status the model expects (and the reference provider returns)
    RuleIds rules;    // the rules that make the call fail
    Strength strength;
    std::string why;  // a short clause: "BaseVirtualAddress % PAGE_SIZE is 17, FBO is 0"
};

struct Expectation {
    // Non-empty: the call must fail; any listed status is right (several rules may be broken
    // at once and the docs give no precedence).
    std::vector<ExpectedFailure> failures;
    // The caller broke a consumer duty whose consequence is undefined: any outcome that does
    // not crash is allowed, and the model stops judging what depends on it.
    bool undefined = false;
    RuleIds undefined_rules;
    std::string undefined_why;

    bool may_pend = false;   // STATUS_PENDING plus exactly one callback is allowed
    bool must_pend = false;  // STATUS_SUCCESS is not allowed (CLOSE-02, CLOSE-03)
    RuleList must_pend_rules;
    bool may_lack_resources = false;  // STATUS_INSUFFICIENT_RESOURCES, inline or via callback
    // A work request that only the QP's creation-time size covers (CQP-DEPTH-01/02, CQP-SGE-01/02,
    // CQP-INL-01: the last free slot, the last SGE, inline data within InlineDataSize): what
    // NdkCreateQp promised, so no shortage of resources excuses refusing it (MODEL-WR-RES-01 does
    // not apply; Model::promise_first).
    bool promised = false;
    bool returns_void = false;  // the function has no status (VOID / ULONG / UINT32)
    RuleList success_rules;     // the rules that say a valid call succeeds
    // A valid call refused with this status breaks these rules too, named first (NdkBuildLam's
    // STATUS_BUFFER_TOO_SMALL for a buffer of the required size: LAM-SIZE-05). 0: none.
    NTSTATUS refused_with = 0;
    RuleList refused_with_rules;
    // A call that must fail, refused with this other status: the argument that status points
    // at breaks these rules too, named beside the expected failure's (an NdkFastRegister at
    // BaseVirtualAddress 0 with FBO 0 refused with STATUS_INVALID_PARAMETER where remote rights
    // on a local MR owe STATUS_ACCESS_VIOLATION: FR-ALIGN-02). 0: none.
    NTSTATUS mismatch_status = 0;
    RuleList mismatch_rules;
    RuleList no_pending_rules{"GEN-ASYNC-01"};  // the rules broken by an unallowed STATUS_PENDING

    // Outcomes of a valid call that the docs also allow (e.g. STATUS_IMPLEMENTATION_LIMIT above
    // FRMRPageCount, AMB-08), and ones the docs allow but the profile reads otherwise (warning).
    std::vector<ExpectedFailure> also_allowed;
    std::vector<ExpectedFailure> tolerated;
    // The status the reference provider returns for a valid call (STATUS_SUCCESS, or one of
    // also_allowed where the profile says so).
    NTSTATUS preferred = STATUS_SUCCESS;
    // For work requests whose argument errors the docs do not place (AMB-29): accepting the
    // call and failing its completion instead is a warning, not a violation.
    bool failure_may_surface_in_completion = false;
    // The caller broke a consumer duty whose status the docs leave open (AMB-16): the call
    // should fail, but any outcome is only a warning, and a success leaves the state unknown.
    bool consumer_error = false;
    // A valid call that the profile also lets fail with any error status, inline or through
    // its callback (MODEL-WR-DEPTH-01, MODEL-CQ-STATUS-01, MODEL-RD-01); with
    // `any_failure_warns` such a failure is allowed by the docs but a warning.
    bool may_fail_any = false;
    bool any_failure_warns = false;
    RuleIds any_failure_rules;

    bool must_fail() const { return !failures.empty(); }
    // Every failure listed is a reading (Strength::reading): an acceptance is a warning, and the
    // model applies it as a valid call.
    bool refusal_is_reading() const;
    // The call may take effect: it need not fail, or its refusal is only the profile's reading.
    bool may_take_effect() const { return !must_fail() || refusal_is_reading(); }
    // The status the model itself produces: the first failure, else `preferred`.
    NTSTATUS model_status() const;

    void fail(NTSTATUS status, RuleIds rules, Strength strength, std::string why);
};

// Judges an inline status against an expectation. `call` names the NDK function for messages.
// STATUS_PENDING is judged allowed or not here; the callback's status is judged by
// judge_async(). The verdict names the rules.
Verdict judge_inline(const Expectation& expected, NTSTATUS observed, std::string_view call);

// Judges the status a completion callback delivered after STATUS_PENDING.
Verdict judge_async(const Expectation& expected, NTSTATUS observed, std::string_view call);

}  // namespace ndkct::model
