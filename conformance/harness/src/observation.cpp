// Judgements shared by the live harness (session.cpp) and the trace checker (conformance/trace).
#include "ndkct/conformance/observation.hpp"

#include <algorithm>
#include <cstddef>

#include "ndkct/model/page_rules.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::conformance {

namespace {

model::Violation violation(model::RuleIds rules, std::string message) {
    return {std::move(rules), std::move(message), false};
}

}  // namespace

HandedOut view_handed_out(const void* object, size_t members) {
    HandedOut h;
    if (!object) return h;
    h.present = true;
    const auto* header = static_cast<const NDK_OBJECT_HEADER*>(object);
    h.object_type = static_cast<uint32_t>(header->ObjectType);
    h.version = header->Version;
    const auto* reserved = reinterpret_cast<const std::byte*>(&header->NdkReserved);
    h.reserved_zero = std::all_of(reserved, reserved + sizeof header->NdkReserved,
                                  [](std::byte b) { return b == std::byte{0}; });
    // Every NDK object has its Dispatch right after the 40-byte header (GEN-LAYOUT-01).
    const auto* table = *reinterpret_cast<const void* const* const*>(
        static_cast<const char*>(object) + offsetof(NDK_PD, Dispatch));
    h.has_dispatch = table != nullptr;
    if (table)
        for (size_t i = 0; i < members; ++i)
            if (!table[i]) {
                h.null_member = static_cast<int>(i);
                break;
            }
    return h;
}

model::Verdict check_handed_out(const HandedOut& o, uint32_t expected_type, NDK_VERSION version,
                                const std::string& call) {
    model::Verdict v;
    if (!o.present) {
        v.add(violation({"GEN-CREATE-01"}, call + " succeeded without an object"));
        return v;
    }
    // CQP-OBJ-01: NdkCreateQp's page restates the header's duties for the QP it hands out
    // (ObjectType NdkObjectTypeQp, Dispatch its NDK_QP_DISPATCH): its rule comes first.
    auto with_qp_page = [&](model::RuleIds generic) {
        if (expected_type == NdkObjectTypeQp) generic.insert(generic.begin(), "CQP-OBJ-01");
        return generic;
    };
    if (o.object_type != expected_type)
        v.add(violation(with_qp_page({"GEN-CREATE-06"}),
                        call + ": Header.ObjectType is " + std::to_string(o.object_type)));
    if (o.version.Major != version.Major || o.version.Minor != version.Minor)
        v.add(violation({"VER-03"}, call + ": Header.Version differs from the negotiated version"));
    // GEN-CREATE-07: NdkReserved is zeroed when the object is made.
    if (!o.reserved_zero)
        v.add(violation({"GEN-CREATE-07"}, call + ": Header.NdkReserved is not zeroed"));
    if (!o.has_dispatch) {
        v.add(violation(with_qp_page({"GEN-CREATE-03"}), call + ": the object has no Dispatch"));
        return v;
    }
    if (o.null_member >= 0)
        v.add(violation({"GEN-MAND-01"},
                        call + ": dispatch member " + std::to_string(o.null_member) + " is NULL"));
    return v;
}

// The seed pages restate the generic contract per function (model/page_rules.hpp): their rule
// comes first, the generic one beside it.
model::Violation second_callback(const std::string& call) {
    return violation(
        model::with_page_rule(call, model::Contract::callback_not_once, {"GEN-ASYNC-01"}),
        call + ": a second completion callback");
}

namespace {
model::RuleIds inline_result_rules(const std::string& call, NTSTATUS returned) {
    return model::with_page_rule(call,
                                 returned == STATUS_SUCCESS
                                     ? model::Contract::callback_after_success
                                     : model::Contract::callback_after_failure,
                                 {"GEN-ASYNC-03", "GEN-ASYNC-01"});
}
}  // namespace

model::Violation callback_after_final_status(const std::string& call, NTSTATUS returned) {
    return violation(inline_result_rules(call, returned),
                     call + ": a completion callback after the call returned " +
                         spec::status_name(returned) + " (a final status)");
}

model::Violation callback_before_final_status(const std::string& call, NTSTATUS status) {
    return violation(inline_result_rules(call, status),
                     call + " called its completion callback and then returned " +
                         spec::status_name(status) + " instead of STATUS_PENDING");
}

model::Violation stray_callback(const std::string& what) {
    return violation({"GEN-CB-03"}, what);
}

model::Violation blocked_in_callback(const std::string& call, long long took_ms,
                                     long long watchdog_ms) {
    return violation(model::with_page_rule(call, model::Contract::irql, {"GEN-IRQL-01"}),
                     call + " took " + std::to_string(took_ms) +
                         " ms inside a provider callback (it may not block "
                         "there; the watchdog is " +
                         std::to_string(watchdog_ms) + " ms)");
}

model::Violation completions_overdue(const model::Model& oracle, model::ObjectId cq,
                                     size_t expected, size_t arrived, long long waited_ms) {
    model::RuleIds rules = oracle.missing_entry_page_rules(cq);
    rules.push_back("WR-10");
    return violation(std::move(rules),
                     std::to_string(expected - arrived) + " of " + std::to_string(expected) +
                         " completions did not appear within " + std::to_string(waited_ms) + " ms");
}

model::Verdict notification_overdue(const model::Model& oracle, model::ObjectId cq,
                                    long long waited_ms, const std::string& cq_name) {
    model::Verdict v;
    if (oracle.notification_certainly_owed(cq))  // CQ-NOT-07: a satisfied arm is never dropped
        v.add(violation(oracle.owed_notification_rules(cq),
                        "no notification came for a satisfied arm of " + cq_name + " (waited " +
                            std::to_string(waited_ms) + " ms)"));
    return v;
}

model::Violation failed_create_with_object(const std::string& call, NTSTATUS status) {
    model::RuleIds rules{"GEN-CREATE-02"};
    if ((call == "NdkCreateQp" || call == "NdkCreateQpWithSrq") &&
        status == STATUS_INSUFFICIENT_RESOURCES)
        rules.insert(rules.begin(), "CQP-ST-03");
    return violation(std::move(rules), call + ": CreateCompletion reported " +
                                           spec::status_name(status) +
                                           " and passed an object (pNdkObject is not NULL)");
}

model::Violation close_during_successor_close(const model::Model& oracle,
                                              model::ObjectId antecedent, model::ObjectId successor,
                                              const std::string& how) {
    model::RuleIds rules{"CLOSE-05"};
    const model::Object* up = oracle.find(antecedent);
    const model::Object* down = oracle.find(successor);
    if (up && down && down->kind == model::Kind::qp) {
        if (up->kind == model::Kind::cq || up->kind == model::Kind::pd)
            rules.insert(rules.begin(), "CQP-LIFE-01");
        else if (up->kind == model::Kind::srq)
            rules.insert(rules.begin(), "CQP-SRQ-06");
    }
    return violation(std::move(rules),
                     "the close " + how + " while the close callback of a successor was running");
}

model::Violation late_callback(const std::string& what) {
    return violation({"CLOSE-04"}, what);
}

model::ObjectId newest_lam(const model::Model& oracle) {
    model::ObjectId newest = 0;
    for (model::ObjectId i = 1; i <= oracle.object_count(); ++i)
        if (const auto* o = oracle.find(i);
            o && o->kind == model::Kind::lam && o->life == model::Life::ready)
            newest = i;
    return newest;
}

}  // namespace ndkct::conformance
