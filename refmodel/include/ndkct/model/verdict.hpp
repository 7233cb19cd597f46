// ndkct/model/verdict.hpp: what the oracle says about an observed outcome.
#pragma once

#include <string>
#include <vector>

namespace ndkct::model {

// Rule IDs of the catalog (spec/rules/catalog), e.g. {"FR-ALIGN-01", "AMB-29"}.
using RuleIds = std::vector<std::string>;

// One broken rule: which rules, and one sentence saying what was expected and what happened.
struct Violation {
    RuleIds rules;
    std::string message;
    // A warning: the outcome is allowed by the documentation but differs from the profile's
    // reading (e.g. another error status where the docs name none). Not a failure.
    bool warning = false;

    std::string describe() const;  // "FR-ALIGN-01, AMB-29: expected ..., got ..."
};

// The oracle's answer to one observation: empty when the outcome is allowed.
struct Verdict {
    std::vector<Violation> violations;

    bool ok() const;           // no failure (warnings allowed)
    bool clean() const { return violations.empty(); }
    void add(Violation v) { violations.push_back(std::move(v)); }
    void merge(Verdict other);
    std::string describe() const;  // one violation per line
};

}  // namespace ndkct::model
