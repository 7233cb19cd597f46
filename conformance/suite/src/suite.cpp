#include "ndkct/conformance/suite.hpp"

#include <cstdlib>
#include <iostream>

namespace ndkct::conformance {

namespace {

std::map<std::string, const TestDeclaration*>& registry() {
    static std::map<std::string, const TestDeclaration*> r;
    return r;
}

thread_local std::vector<const std::vector<std::string>*> rule_scopes;

std::string joined(const std::vector<std::string>& rules) {
    std::string text;
    for (const auto& r : rules)
        text += (text.empty() ? "" : ", ") + r;
    return text;
}

}  // namespace

RuleScope::RuleScope(std::vector<std::string> rules, const char* file, int line)
    : rules_(std::move(rules)), trace_(file, line, "checks rule " + joined(rules_)) {
    rule_scopes.push_back(&rules_);
}

RuleScope::~RuleScope() {
    rule_scopes.pop_back();
}

const std::vector<std::string>& current_rules() {
    static const std::vector<std::string> none;
    return rule_scopes.empty() ? none : *rule_scopes.back();
}

TestDeclaration::TestDeclaration(std::string suite_, std::string name_, std::string id_,
                                 std::vector<std::string> rules_)
    : suite(std::move(suite_)),
      name(std::move(name_)),
      id(std::move(id_)),
      rules(std::move(rules_)) {
    registry()[suite + "." + name] = this;
}

const std::map<std::string, const TestDeclaration*>& declared_tests() {
    return registry();
}

std::vector<ProviderSpec>& providers_under_test() {
    static std::vector<ProviderSpec> providers = providers_from_environment();
    return providers;
}

std::string provider_label(const ::testing::TestParamInfo<ProviderSpec>& info) {
    return info.param.label();
}

void ProviderTest::SetUp() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string suite = test->test_suite_name();
    suite = suite.substr(suite.find('/') + 1);  // "Providers/FastRegister" -> "FastRegister"
    std::string name = test->name();
    name = name.substr(0, name.find('/'));
    if (auto it = registry().find(suite + "." + name); it != registry().end()) {
        std::string rules;
        for (const auto& r : it->second->rules)
            rules += (rules.empty() ? "" : ",") + r;
        RecordProperty("ndkct_id", it->second->id);
        RecordProperty("rules", rules);
    }
    RecordProperty("provider", GetParam().text);
    try {
        session_ = std::make_unique<Session>(GetParam());
    } catch (const std::exception& error) {
        FAIL() << "cannot open the provider: " << error.what();
    }
}

void ProviderTest::expect_clean_so_far() {
    for (const auto& v : session_->verdict().violations) {
        if (v.warning) continue;
        RuleScope scope(v.rules);
        ADD_FAILURE() << v.describe();
    }
}

void ProviderTest::TearDown() {
    if (!session_) return;
    session_->close_all();
    model::Verdict verdict = session_->verdict();
    session_.reset();  // closes the adapter (blocking)
    std::string warnings;
    for (const auto& v : verdict.violations) {
        if (v.warning) {
            warnings += (warnings.empty() ? "" : "\n") + v.describe();
        } else {
            RuleScope scope(v.rules);
            ADD_FAILURE() << "oracle: " << v.describe();
        }
    }
    if (!warnings.empty()) {
        RecordProperty("warnings", warnings);
        std::cout << "[ ndkct  ] warnings (allowed by the docs, unlike the profile):\n"
                  << warnings << "\n";
    }
}

}  // namespace ndkct::conformance
