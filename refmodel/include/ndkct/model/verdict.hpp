// ndkct/model/verdict.hpp: what the oracle says about an observed outcome.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace ndkct::model {

// Rule IDs of the catalog (spec/rules/catalog), e.g. {"FR-ALIGN-01", "AMB-29"}.
using RuleIds = std::vector<std::string>;

// A short list of rule IDs given as string literals, held inline: the rules an Expectation
// names on every call (success, no-pending) cost no allocation. Converts to RuleIds when a
// violation is reported.
class RuleList {
  public:
    static constexpr size_t kCapacity = 8;
    RuleList() = default;
    RuleList(std::initializer_list<const char*> ids) {
        for (const char* id : ids)
            push_back(id);
    }
    void push_back(const char* id) {
        if (size_ < kCapacity) ids_[size_++] = id;
    }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const char* const* begin() const { return ids_.data(); }
    const char* const* end() const { return ids_.data() + size_; }
    operator RuleIds() const { return RuleIds(begin(), end()); }

  private:
    std::array<const char*, kCapacity> ids_{};
    uint8_t size_ = 0;
};

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

    bool ok() const;  // no failure (warnings allowed)
    bool clean() const { return violations.empty(); }
    void add(Violation v) { violations.push_back(std::move(v)); }
    void merge(Verdict other);
    std::string describe() const;  // one violation per line
};

}  // namespace ndkct::model
