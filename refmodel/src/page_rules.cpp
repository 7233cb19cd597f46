// The seed pages' restatements of the generic completion / context / IRQL contract, per function.
#include "ndkct/model/page_rules.hpp"

#include <array>

namespace ndkct::model {

namespace {

struct PageRules {
    std::string_view function;
    const char* after_success;  // *-ST-01: "never calls back after an inline success"
    const char* after_failure;  // *-ST-04 (IFR-ST-03): "an inline failure finishes the request"
    const char* not_once;       // *-ST-02: "after STATUS_PENDING, exactly one callback"
    const char* context;        // *-CTX-01: "Context is exactly the RequestContext"
    const char* irql;           // *-IRQL-01: "IRQL <= DISPATCH_LEVEL"
};

// NdkCreateQp's page has no context rule of its own (CQP-CTX-01 is the QPContext of completions);
// NdkFastRegister has no completion callback (FR-ST-* are about CQ entries).
constexpr std::array kPages{
    PageRules{"NdkInitializeFastRegisterMr", "IFR-ST-01", "IFR-ST-03", "IFR-ST-02", "IFR-CTX-01",
              "IFR-IRQL-01"},
    PageRules{"NdkRegisterMr", "RMR-ST-01", "RMR-ST-04", "RMR-ST-02", "RMR-CTX-01", "RMR-IRQL-01"},
    PageRules{"NdkBuildLam", "LAM-ST-01", "LAM-ST-04", "LAM-ST-02", "LAM-CTX-01", "LAM-IRQL-01"},
    PageRules{"NdkCreateQp", "CQP-ST-01", "CQP-ST-04", "CQP-ST-02", nullptr, "CQP-IRQL-01"},
    PageRules{"NdkCreateQpWithSrq", "CQP-ST-01", "CQP-ST-04", "CQP-ST-02", nullptr, "CQP-IRQL-01"},
    PageRules{"NdkFastRegister", nullptr, nullptr, nullptr, nullptr, "FR-IRQL-01"},
};

}  // namespace

const char* page_rule(std::string_view function, Contract part) {
    for (const auto& p : kPages) {
        if (p.function != function) continue;
        switch (part) {
            case Contract::callback_after_success:
                return p.after_success;
            case Contract::callback_after_failure:
                return p.after_failure;
            case Contract::callback_not_once:
                return p.not_once;
            case Contract::callback_context:
                return p.context;
            case Contract::irql:
                return p.irql;
        }
    }
    return nullptr;
}

RuleIds with_page_rule(std::string_view function, Contract part, RuleIds generic) {
    if (const char* rule = page_rule(function, part)) generic.insert(generic.begin(), rule);
    return generic;
}

}  // namespace ndkct::model
