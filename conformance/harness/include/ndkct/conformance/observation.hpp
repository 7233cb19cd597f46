// ndkct/conformance/observation.hpp: what the live harness and the offline trace checker judge
// alike, written once.
//
// The Session (session.hpp) watches a provider as it runs; the trace checker
// (conformance/trace) reads the same observations from a recording. Both hand the NDK calls to
// the oracle through the translations of ndkct/model/translate.hpp, and both judge what the
// oracle does not see with the functions here: a handed-out object's header and table, and the
// callback contract's verdicts, so that a rule broken live and in a trace reads the same.
#pragma once

#include <string>

#include "ndkct/model/model.hpp"
#include "ndkct/ndkpi.h"

namespace ndkct::conformance {

// What a consumer sees of an object a provider hands out.
struct HandedOut {
    bool present = false;  // the provider gave an object at all
    uint32_t object_type = 0;
    NDK_VERSION version{0, 0};
    bool reserved_zero = true;  // Header.NdkReserved
    bool has_dispatch = true;
    int null_member = -1;  // the first NULL entry of its table, or -1
};

// The view of a live object whose table has `members` entries.
HandedOut view_handed_out(const void* object, size_t members);

// GEN-CREATE-01/03/06/07, GEN-MAND-01, VER-03: a handed-out object is well formed.
model::Verdict check_handed_out(const HandedOut& object, uint32_t expected_type,
                                NDK_VERSION negotiated, const std::string& call);

// The callback contract (GEN-ASYNC-01/03, GEN-CB-03) and GEN-IRQL-01, in one wording; each names
// the call's own page rule first where its page restates the contract (model/page_rules.hpp).
model::Violation second_callback(const std::string& call);
model::Violation callback_after_final_status(const std::string& call, NTSTATUS returned);
model::Violation callback_before_final_status(const std::string& call, NTSTATUS returned);
model::Violation stray_callback(const std::string& what);
// GEN-CREATE-02: a create whose CreateCompletion reported a failure passed an object anyway.
// NdkCreateQp's page says a resource failure, inline or through the callback, creates no QP
// (CQP-ST-03): for a QP's STATUS_INSUFFICIENT_RESOURCES that rule comes first.
model::Violation failed_create_with_object(const std::string& call, NTSTATUS status);
// WR-10: `expected - arrived` completions the consumer was owed on the CQ did not come within
// `waited_ms`, after the fast registration's page rule where every entry still owed there is one
// (FR-ST-01, FR-DEFER-01/02, FR-SILENT-02): Session::drain's words, and a trace's OVERDUE record's.
model::Violation completions_overdue(const model::Model& oracle, model::ObjectId cq,
                                     size_t expected, size_t arrived, long long waited_ms);
// CQ-NOT-07: the consumer waited `waited_ms` for a notification of the CQ (`cq_name` in the
// message) and none came; empty unless the arm owes one beyond doubt, else naming what satisfied
// it: Session::expect_notification_delivered's words, and a trace's UNNOTIFIED record's.
model::Verdict notification_overdue(const model::Model& oracle, model::ObjectId cq,
                                    long long waited_ms, const std::string& cq_name);
// CLOSE-05: an object's close completed (`how`) while the close callback of a successor ran.
// Where the successor is a QP and the object its CQ or SRQ, NdkCreateQp's page rule comes first
// (CQP-LIFE-01, CQP-SRQ-06: that close completes only after the QP has been closed).
model::Violation close_during_successor_close(const model::Model& oracle,
                                              model::ObjectId antecedent, model::ObjectId successor,
                                              const std::string& how);
model::Violation blocked_in_callback(const std::string& call, long long took_ms,
                                     long long watchdog_ms);
model::Violation late_callback(const std::string& what);  // CLOSE-04

// The LAM NdkBuildLam just made (the oracle's newest ready LAM object), or 0.
model::ObjectId newest_lam(const model::Model& oracle);

}  // namespace ndkct::conformance
