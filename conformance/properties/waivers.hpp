// Known findings of a provider (conformance/waivers/*.txt, the runner's format) as the property
// tests meet them: a sequence whose failure names only rules a waiver covers is not a failure of
// the property; it is discarded (like a sequence whose preconditions do not hold), counted and
// reported with the waiver, and generation goes on. A new failure, or one naming a rule more,
// still fails the property.
#pragma once

#include <string>
#include <vector>

#include "ndkct/conformance/session.hpp"

namespace ndkct::properties {

struct Waiver {
    std::string where;  // file:line
    std::string provider;
    bool any_vendor = true, any_device = true;
    unsigned long vendor = 0, device = 0;
    // one-node, two-nodes (a run split across two nodes: NDKCT_PEER set, conformance/twonode)
    // or * (either, the default)
    std::string topology = "*";
    std::vector<std::string> tests, rules;  // globs
    std::string reason;

    // Whether it applies to this provider and property (by its dotted ID).
    bool applies(const NDKCT_PROVIDER_IDENTITY& identity, const NDK_ADAPTER_INFO& info,
                 const std::string& id) const;
    // Whether every rule the failure names is among its rules (a failure naming none is not).
    bool covers(const std::vector<std::string>& failure_rules) const;
};

// Reads a waiver file; throws std::runtime_error naming the file, the line and the problem.
std::vector<Waiver> read_waivers(const std::string& path);

}  // namespace ndkct::properties
