// ndkct_coverage_gate: fails when a `must` rule of the catalog has neither a directed test nor a
// reasoned exemption, and when an exemption is stale (the rule has a test, or is not a `must`
// rule), unknown, duplicated or malformed. Every problem is named, one a line.
//
//   ndkct_coverage_gate --coverage=FILE --exemptions=FILE
//   ndkct_coverage_gate --self-test
//
// FILE of --coverage is what `conformance_tests --coverage=FILE` writes: one JSON object a line,
// {"rule": ID, "level": "must"|"consumer-duty"|"model-choice", "function": ..., "tests": [...]}.
// The exemption file holds one rule a line: `ID  CATEGORY  reason...`; `#` starts a comment.
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Why a `must` rule may go without a directed test.
const std::set<std::string> kCategories = {
    "not_observable",  // nothing an NDKPI consumer can call or see shows it (NDIS miniport
                       // duties, hardware faults that cannot be induced, pure preferences)
    "abi_static",      // fixed by the layout alone: pinned by spec/include's static asserts
    "consumer_duty",   // worded as a provider rule but binding only the caller
};

struct Rule {
    std::string level, function;
    std::vector<std::string> tests;
};

struct Judgement {
    std::vector<std::string> problems;  // each a full sentence naming the rule
    size_t must = 0, tested = 0, exempted = 0, missing = 0;
};

std::map<std::string, Rule> read_coverage(std::istream& in, std::vector<std::string>& problems) {
    std::map<std::string, Rule> rules;
    std::string line;
    for (size_t number = 1; std::getline(in, line); ++number) {
        if (line.empty()) continue;
        try {
            auto j = nlohmann::json::parse(line);
            Rule r{j.at("level").get<std::string>(), j.at("function").get<std::string>(),
                   j.at("tests").get<std::vector<std::string>>()};
            rules[j.at("rule").get<std::string>()] = std::move(r);
        } catch (const std::exception& error) {
            problems.push_back("coverage line " + std::to_string(number) +
                               " is not a rule's coverage: " + error.what());
        }
    }
    return rules;
}

Judgement judge(std::istream& coverage, std::istream& exemptions) {
    Judgement j;
    auto rules = read_coverage(coverage, j.problems);
    if (rules.empty()) j.problems.push_back("the coverage lists no rule at all");
    std::map<std::string, std::string> exempt;  // rule -> category
    std::string line;
    for (size_t number = 1; std::getline(exemptions, line); ++number) {
        if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::istringstream fields(line);
        std::string id, category, reason;
        if (!(fields >> id)) continue;  // blank or comment
        fields >> category;
        std::getline(fields >> std::ws, reason);
        std::string where = "exemption line " + std::to_string(number) + " (" + id + "): ";
        if (category.empty() || reason.empty()) {
            j.problems.push_back(where + "needs a rule ID, a category and a reason");
            continue;
        }
        if (!kCategories.contains(category)) {
            j.problems.push_back(where + "unknown category '" + category +
                                 "' (not_observable, abi_static, consumer_duty)");
            continue;
        }
        auto it = rules.find(id);
        if (it == rules.end()) {
            j.problems.push_back(where + "no such rule in the catalog");
            continue;
        }
        if (!exempt.emplace(id, category).second) {
            j.problems.push_back(where + "exempted twice");
            continue;
        }
        if (it->second.level != "must")
            j.problems.push_back(where + "stale: the rule is " + it->second.level +
                                 ", not must; only must rules need a test");
        else if (!it->second.tests.empty())
            j.problems.push_back(where + "stale: the rule has a test (" + it->second.tests[0] +
                                 (it->second.tests.size() > 1 ? ", ..." : "") +
                                 "); remove the exemption");
    }
    for (const auto& [id, rule] : rules) {
        if (rule.level != "must") continue;
        ++j.must;
        if (!rule.tests.empty()) {
            ++j.tested;
        } else if (exempt.contains(id)) {
            ++j.exempted;
        } else {
            ++j.missing;
            j.problems.push_back("missing: " + id + " (" + rule.function +
                                 ") has no directed test and no exemption");
        }
    }
    return j;
}

int self_test() {
    auto run = [](const std::string& coverage, const std::string& exemptions) {
        std::istringstream c(coverage), e(exemptions);
        return judge(c, e);
    };
    const std::string coverage =
        R"({"rule": "A-01", "level": "must", "function": "F", "tests": ["ndk.a"]})"
        "\n"
        R"({"rule": "A-02", "level": "must", "function": "F", "tests": []})"
        "\n"
        R"({"rule": "A-03", "level": "consumer-duty", "function": "F", "tests": []})"
        "\n";
    int failures = 0;
    auto expect = [&](bool ok, const char* what, const Judgement& j) {
        if (ok) return;
        ++failures;
        std::cerr << "self-test failed: " << what << "\n";
        for (const auto& p : j.problems)
            std::cerr << "  " << p << "\n";
    };
    auto has = [](const Judgement& j, const std::string& text) {
        for (const auto& p : j.problems)
            if (p.find(text) != std::string::npos) return true;
        return false;
    };
    auto clean = run(coverage, "# comment\nA-02 not_observable nothing shows it\n");
    expect(clean.problems.empty() && clean.tested == 1 && clean.exempted == 1, "a clean pass",
           clean);
    auto missing = run(coverage, "");
    expect(missing.problems.size() == 1 && has(missing, "missing: A-02"), "a missing rule",
           missing);
    auto stale = run(coverage, "A-01 abi_static x\nA-02 abi_static y\n");
    expect(has(stale, "(A-01): stale: the rule has a test") && stale.problems.size() == 1,
           "an exemption of a tested rule", stale);
    auto not_must = run(coverage, "A-02 abi_static y\nA-03 consumer_duty z\n");
    expect(has(not_must, "(A-03): stale: the rule is consumer-duty"), "a non-must exemption",
           not_must);
    auto unknown = run(coverage, "A-02 abi_static y\nB-09 abi_static y\n");
    expect(has(unknown, "(B-09): no such rule"), "an unknown rule", unknown);
    auto bad = run(coverage, "A-02 guesswork y\n");
    expect(has(bad, "unknown category 'guesswork'") && has(bad, "missing: A-02"),
           "an unknown category", bad);
    auto short_line = run(coverage, "A-02 abi_static\n");
    expect(has(short_line, "needs a rule ID, a category and a reason"), "a line without reason",
           short_line);
    auto twice = run(coverage, "A-02 abi_static y\nA-02 not_observable z\n");
    expect(has(twice, "exempted twice"), "a duplicate", twice);
    auto garbage = run("not json\n", "");
    expect(has(garbage, "coverage line 1") && has(garbage, "no rule at all"), "bad coverage",
           garbage);
    std::cout << (failures ? "coverage gate self-test: FAILED\n" : "coverage gate self-test: ok\n");
    return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string coverage_path, exemptions_path;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--self-test") == 0) return self_test();
        if (std::strncmp(argv[i], "--coverage=", 11) == 0) {
            coverage_path = argv[i] + 11;
        } else if (std::strncmp(argv[i], "--exemptions=", 13) == 0) {
            exemptions_path = argv[i] + 13;
        } else {
            std::cerr << "ndkct_coverage_gate: unknown argument " << argv[i]
                      << "\nusage: ndkct_coverage_gate --coverage=FILE --exemptions=FILE | "
                         "--self-test\n";
            return 2;
        }
    }
    if (coverage_path.empty() || exemptions_path.empty()) {
        std::cerr << "ndkct_coverage_gate: --coverage=FILE and --exemptions=FILE are required\n";
        return 2;
    }
    std::ifstream coverage(coverage_path), exemptions(exemptions_path);
    if (!coverage || !exemptions) {
        std::cerr << "ndkct_coverage_gate: cannot read "
                  << (!coverage ? coverage_path : exemptions_path) << "\n";
        return 2;
    }
    Judgement j = judge(coverage, exemptions);
    for (const auto& p : j.problems)
        std::cout << p << "\n";
    std::cout << "coverage gate: " << j.must << " must rules: " << j.tested << " with a test, "
              << j.exempted << " exempted, " << j.missing << " missing; " << j.problems.size()
              << " problem(s)\n";
    return j.problems.empty() ? 0 : 1;
}
