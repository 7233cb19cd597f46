#include "ndkct/conformance/suite.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>

#include "ndkct/twonode/split_provider.hpp"

namespace ndkct::conformance {

namespace {

std::map<std::string, const TestDeclaration*>& registry() {
    static std::map<std::string, const TestDeclaration*> r;
    return r;
}

thread_local std::vector<const RuleScope*> rule_scopes;

std::mutex reached_mutex;
std::vector<std::string> reached;  // in the order first reached

std::atomic<Session*> the_session{nullptr};

std::string joined(const std::vector<std::string>& rules) {
    std::string text;
    for (const auto& r : rules)
        text += (text.empty() ? "" : ", ") + r;
    return text;
}

}  // namespace

const char* to_string(FailureKind kind) {
    switch (kind) {
        case FailureKind::oracle:
            return "oracle";
        case FailureKind::setup:
            return "setup";
        default:
            return "rule";
    }
}

RuleScope::RuleScope(std::vector<std::string> rules, FailureKind kind, const char* file, int line)
    : rules_(std::move(rules)),
      kind_(kind),
      trace_(file, line,
             (kind == FailureKind::setup ? "needs what " : "checks rule ") + joined(rules_)) {
    rule_scopes.push_back(this);
    if (kind_ != FailureKind::rule) return;
    std::lock_guard lock(reached_mutex);
    for (const auto& r : rules_)
        if (std::find(reached.begin(), reached.end(), r) == reached.end()) reached.push_back(r);
}

RuleScope::~RuleScope() {
    rule_scopes.pop_back();
}

const RuleScope* current_scope() {
    return rule_scopes.empty() ? nullptr : rule_scopes.back();
}

const std::vector<std::string>& current_rules() {
    static const std::vector<std::string> none;
    return rule_scopes.empty() ? none : rule_scopes.back()->rules();
}

std::vector<std::string> rules_reached() {
    std::lock_guard lock(reached_mutex);
    return reached;
}

void reset_rules_reached() {
    std::lock_guard lock(reached_mutex);
    reached.clear();
}

Session* current_session() {
    return the_session.load();
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
        // The provider opened once for the run (the runner's describe step), so what fails
        // here is the open itself (ADP-OPEN-01): every rule of the test is blocked by it.
        RuleScope scope({"ADP-OPEN-01"}, FailureKind::setup);
        FAIL() << "cannot open the provider: " << error.what();
    }
    the_session.store(session_.get());
}

void ProviderTest::expect_clean_so_far() {
    for (const auto& v : session_->verdict().violations) {
        if (v.warning) continue;
        RuleScope scope(v.rules, FailureKind::oracle);
        ADD_FAILURE() << v.describe();
    }
}

void ProviderTest::TearDown() {
    if (!session_) return;
    session_->drop_hooks();  // the body's hooks end with the body (its frame is gone)
    for (const auto& error : session_->hook_errors())
        ADD_FAILURE() << "a call made inside a provider callback could not go on: " << error;
    try {
        session_->close_all();
    } catch (const std::exception& error) {
        ADD_FAILURE() << "closing the test's objects: " << error.what();
    }
    // Two nodes (NDKCT_PEER): whether the test crossed to the peer, and a peer lost by surprise.
    if (twonode::crossed_nodes(session_->adapter())) RecordProperty("nodes", 2);
    if (std::string lost = twonode::peer_lost_reason(session_->adapter()); !lost.empty())
        ADD_FAILURE() << "node B (the peer) was lost during the test: " << lost
                      << "; requests pending there completed with STATUS_CONNECTION_ABORTED";
    model::Verdict verdict = session_->verdict();
    the_session.store(nullptr);
    session_.reset();  // closes the adapter (blocking)
    std::string warnings;
    for (const auto& v : verdict.violations) {
        if (v.warning) {
            warnings += (warnings.empty() ? "" : "\n") + v.describe();
        } else {
            RuleScope scope(v.rules, FailureKind::oracle);
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
