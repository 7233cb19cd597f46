// Hostile input to the spec loaders: each test is a finding of issue 18 (sanitizers, fuzzing)
// that crashed, exhausted memory or threw a library exception before its fix. Bad input must
// end in an error that names the problem, never anything else.
#include <gtest/gtest.h>

#include <string>

#include "ndkct/spec/catalog.hpp"
#include "ndkct/spec/json_check.hpp"
#include "ndkct/spec/profile.hpp"

namespace ndkct::spec {
namespace {

std::string refusal(const std::string& json) {
    try {
        load_profile(json, "hostile.json");
    } catch (const ProfileError& e) {
        return e.what();
    }
    return "(loaded)";
}

// A long field that a schema pattern checks: std::regex matched it recursively, one stack frame
// per character, and the stack overflowed (the runner died with an empty reason).
TEST(HostileInput, LongPatternCheckedFieldIsRefusedNotAStackOverflow) {
    std::string name(1 << 20, 'a');
    name += "A";
    auto message = refusal(R"({"name": ")" + name + R"("})");
    EXPECT_NE(message.find("hostile.json:1: name:"), std::string::npos) << message.substr(0, 300);
    EXPECT_NE(message.find("does not match the pattern"), std::string::npos)
        << message.substr(0, 300);
}

TEST(HostileInput, LongFieldThatMatchesItsPatternIsAccepted) {
    std::string version(1 << 20, '2');
    version += ".1";
    auto problems = check_json(R"({"properties": {"v": {"pattern": "^[0-9]+\\.[0-9]+$"}}})",
                               R"({"v": ")" + version + R"("})");
    EXPECT_TRUE(problems.empty()) << problems.front().message;
}

// Nesting: every value's path was recorded with its line, so memory grew with the square of the
// depth (60 KB of "[" took 3 GB). Nesting beyond the limit is refused, saying so.
TEST(HostileInput, DeepNestingIsRefusedWithAProblem) {
    std::string deep(200000, '[');
    auto problems = check_json(R"({"type": "object"})", deep);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].message.find("nested deeper than 64 levels"), std::string::npos)
        << problems[0].message;
    auto message = refusal(std::string(30000, '[') + std::string(30000, ']'));
    EXPECT_NE(message.find("nested deeper than 64 levels"), std::string::npos) << message;
}

TEST(HostileInput, NestingUpToTheLimitIsFine) {
    std::string doc = std::string(63, '[') + std::string(63, ']');
    EXPECT_TRUE(check_json(R"({"type": "array"})", doc).empty());
}

// "integer" of a huge float: cast to long long first, undefined behaviour beyond 2^63
// (UBSan: float-cast-overflow). 1e300 is an integral number; the maximum still bounds it.
TEST(HostileInput, HugeIntegralNumberIsAnIntegerAndMeetsItsMaximum) {
    const char* schema = R"({"properties": {"n": {"type": "integer", "maximum": 100}}})";
    auto problems = check_json(schema, R"({"n": 1e300})");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].message.find("above the maximum"), std::string::npos)
        << problems[0].message;
    problems = check_json(schema, R"({"n": -1e300})");
    EXPECT_TRUE(problems.empty());
    problems = check_json(schema, R"({"n": 2.5})");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].message.find("expected integer"), std::string::npos);
    auto message = refusal(R"({"name": "x", "adapter_info": {"MaxCqDepth": 1e300}})");
    EXPECT_NE(message.find("adapter_info.MaxCqDepth"), std::string::npos) << message;
}

// A catalog entry of the wrong shape is listed as a problem; json::value() threw type_error.
TEST(HostileInput, MalformedCatalogEntriesAreListedNotThrown) {
    const std::string files[] = {
        R"({"area": "x", "rules": [{"id": "X-01", "advisory": "yes"}]})",
        R"({"area": "x", "rules": {"id": "X-01"}})",
        R"({"area": "x", "rules": "X-01"})",
        R"({"area": "x", "rules": [7, null, [], {"id": 5, "related": "X-02"}]})",
        R"({"area": 3, "rules": [{"level": "model-choice", "knob": "a..b", "default": {}}]})",
    };
    for (const auto& text : files) {
        CatalogSource file{"x.json", text};
        CatalogLoad load;
        ASSERT_NO_THROW(load = load_catalog({&file, 1}, builtin_catalog_context())) << text;
        EXPECT_FALSE(load.problems.empty()) << text;
    }
}

}  // namespace
}  // namespace ndkct::spec
