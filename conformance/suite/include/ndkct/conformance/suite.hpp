// ndkct/conformance/suite.hpp: how a directed (or property) test is written.
//
//   NDKCT_SUITE(FastRegister);
//   NDKCT_TEST(FastRegister, BaseVaNotFboAligned, "ndk.mr.fast_register.base_va_not_fbo_aligned",
//              "FR-ALIGN-01", "FR-ALIGN-03") {
//       NDKCT_REQUIRE(has_flag(...), "what is missing");   // else: not_supported (a skip)
//       ... calls through session() ...
//   }
//
// One test body runs against every provider (value-parameterized over ProviderSpec). The test
// declares its stable dotted ID and the rules it covers; the oracle watches every call, so the
// test also fails on rules it did not name, and the failure message names them.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ndkct/conformance/session.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::conformance {

struct TestDeclaration {
    std::string suite, name, id;
    std::vector<std::string> rules;
    TestDeclaration(std::string suite, std::string name, std::string id,
                    std::vector<std::string> rules);
};

// Every declared test, keyed "Suite.Name".
const std::map<std::string, const TestDeclaration*>& declared_tests();

// The providers this run tests (set by main from --provider or NDKCT_PROVIDERS).
std::vector<ProviderSpec>& providers_under_test();

class ProviderTest : public ::testing::TestWithParam<ProviderSpec> {
  protected:
    void SetUp() override;
    void TearDown() override;
    Session& session() { return *session_; }
    bool has_flag(ULONG flag) const { return session_->has_flag(flag); }
    const NDK_ADAPTER_INFO& info() const { return session_->info(); }
    // The oracle's violations so far fail the test now (for tests that go on to dependent steps).
    void expect_clean_so_far();

  private:
    std::unique_ptr<Session> session_;
};

std::string provider_label(const ::testing::TestParamInfo<ProviderSpec>& info);

// Which rules a failure names, as data (never read back from message text). Every failure a test
// records while a RuleScope is alive on the reporting thread names the rules of the innermost
// scope: an oracle violation names the rules the oracle gave, a plain EXPECT/ASSERT names the
// rules its NDKCT_RULE scope declares. The event stream (--ndkct_events) carries them beside each
// message, with the failure's kind, and the runner's verdicts and waivers use only them. The
// rules also appear in gtest's trace for people reading the console.
//
// The kinds: `rule` (a check of the rules under test: they are broken), `oracle` (a violation
// the oracle found: broken), `setup` (a step the test needs failed: the test's own rules could
// not be checked; the failure names what stopped it, which blocks them). A failure outside
// every scope is a setup failure when the session knows a cause (an oracle violation so far, or
// a call the model held valid that failed: Session::blocker()); else it names the test's rule
// when the test declares exactly one; else it names none (a test to fix: every check of a
// test with several rules belongs in an NDKCT_RULE scope).
enum class FailureKind { rule, oracle, setup };
const char* to_string(FailureKind kind);

class RuleScope {
  public:
    explicit RuleScope(std::vector<std::string> rules, FailureKind kind = FailureKind::rule,
                       const char* file = __builtin_FILE(), int line = __builtin_LINE());
    ~RuleScope();
    RuleScope(const RuleScope&) = delete;
    RuleScope& operator=(const RuleScope&) = delete;

    const std::vector<std::string>& rules() const { return rules_; }
    FailureKind kind() const { return kind_; }

  private:
    std::vector<std::string> rules_;
    FailureKind kind_;
    ::testing::ScopedTrace trace_;
};

// The innermost RuleScope on this thread, or nullptr outside every scope.
const RuleScope* current_scope();
// The rules of the innermost RuleScope on this thread; empty outside every scope.
const std::vector<std::string>& current_rules();
// The rules whose checks a test reached (NDKCT_RULE scopes entered, on any thread) since the
// last reset: with no failure naming them, they held in that test.
std::vector<std::string> rules_reached();
void reset_rules_reached();

// The session of the test now running (set by ProviderTest), for the cause of a setup failure.
Session* current_session();

}  // namespace ndkct::conformance

#define NDKCT_RULE_CONCAT_(a, b) a##b
#define NDKCT_RULE_CONCAT(a, b) NDKCT_RULE_CONCAT_(a, b)
// The plain assertions that follow, to the end of the enclosing block, check these rules:
//   NDKCT_RULE("FR-TOK-01");
//   EXPECT_NE(remote_token, local_token);   // a failure here names FR-TOK-01
#define NDKCT_RULE(...)                                                                    \
    const ::ndkct::conformance::RuleScope NDKCT_RULE_CONCAT(ndkct_rule_scope_, __LINE__) { \
        std::vector<std::string> {                                                         \
            __VA_ARGS__                                                                    \
        }                                                                                  \
    }

// A suite of directed tests, instantiated for every provider under test.
#define NDKCT_SUITE(suite)                                                                      \
    class suite : public ::ndkct::conformance::ProviderTest {};                                 \
    INSTANTIATE_TEST_SUITE_P(Providers, suite,                                                  \
                             ::testing::ValuesIn(::ndkct::conformance::providers_under_test()), \
                             ::ndkct::conformance::provider_label)

#define NDKCT_TEST(suite, name, test_id, ...)                                              \
    static const ::ndkct::conformance::TestDeclaration ndkct_declaration_##suite##_##name{ \
        #suite, #name, test_id, {__VA_ARGS__}};                                            \
    TEST_P(suite, name)

// A capability the test needs: when absent the verdict is not_supported, decided before the
// body goes on (GTEST_SKIP with a "not_supported:" message).
#define NDKCT_REQUIRE(condition, what)                                 \
    do {                                                               \
        if (!(condition)) GTEST_SKIP() << "not_supported: " << (what); \
    } while (0)

// Status comparison with names in the message.
#define EXPECT_STATUS(expected, actual) \
    EXPECT_EQ(::ndkct::spec::status_name(actual), ::ndkct::spec::status_name(expected))
#define ASSERT_STATUS(expected, actual) \
    ASSERT_EQ(::ndkct::spec::status_name(actual), ::ndkct::spec::status_name(expected))
