// The schema subset ndkct uses, checked feature by feature.
#include <gtest/gtest.h>

#include "ndkct/spec/json_check.hpp"

namespace ndkct::spec {
namespace {

const char* kSchema = R"({
  "type": "object", "additionalProperties": false, "required": ["id"],
  "properties": {
    "id": {"type": "string", "pattern": "^[A-Z]+-[0-9]{2}$"},
    "depth": {"type": "integer", "minimum": 1, "maximum": 64},
    "ratio": {"type": "number"},
    "mode": {"enum": ["fast", "slow"]},
    "tags": {"type": "array", "items": {"type": "string", "minLength": 2}, "uniqueItems": true,
             "maxItems": 3},
    "item": {"$ref": "#/$defs/item"},
    "either": {"type": ["string", "boolean"]}
  },
  "$defs": {"item": {"type": "object", "properties": {"n": {"const": 7}}}}
})";

std::string first(const std::string& doc) {
    auto problems = check_json(kSchema, doc);
    return problems.empty() ? "" : problems.front().describe("d");
}

TEST(JsonCheck, ValidDocumentHasNoProblem) {
    EXPECT_EQ(first(R"({"id": "AB-01", "depth": 3, "ratio": 1, "mode": "fast",
                        "tags": ["xy", "zw"], "item": {"n": 7}, "either": true})"),
              "");
}

TEST(JsonCheck, EachKeywordBites) {
    EXPECT_EQ(first(R"({})"), "d:1: missing required field \"id\"");
    EXPECT_EQ(first(R"({"id": "ab-1"})"),
              "d:1: id: \"ab-1\" does not match the pattern ^[A-Z]+-[0-9]{2}$");
    EXPECT_EQ(first(R"({"id": "AB-01", "depth": 0})"),
              "d:1: depth: value 0 is below the minimum 1");
    EXPECT_EQ(first(R"({"id": "AB-01", "depth": 65})"),
              "d:1: depth: value 65 is above the maximum 64");
    EXPECT_EQ(first(R"({"id": "AB-01", "depth": 2.5})"),
              "d:1: depth: expected integer, found number 2.5");
    EXPECT_EQ(first(R"({"id": "AB-01", "mode": "medium"})"),
              "d:1: mode: \"medium\" is not one of: fast, slow");
    EXPECT_EQ(first(R"({"id": "AB-01", "tags": ["x"]})"),
              "d:1: tags[0]: text is shorter than 2 characters");
    EXPECT_EQ(first(R"({"id": "AB-01", "tags": ["xy", "xy"]})"),
              "d:1: tags[1]: \"xy\" repeats item 0");
    EXPECT_EQ(first(R"({"id": "AB-01", "tags": ["ab", "cd", "ef", "gh"]})"),
              "d:1: tags: has 4 items, more than 3");
    EXPECT_EQ(first(R"({"id": "AB-01", "item": {"n": 8}})"), "d:1: item.n: 8 must be 7");
    EXPECT_EQ(first(R"({"id": "AB-01", "either": 3})"),
              "d:1: either: expected string, boolean, found integer 3");
    EXPECT_EQ(first(R"({"id": "AB-01", "extra": 1})"),
              "d:1: extra: unknown field \"extra\" (allowed: depth, either, id, item, mode, ratio, "
              "tags)");
}

TEST(JsonCheck, LinesPointAtTheOffendingValue) {
    EXPECT_EQ(first("{\n\"id\": \"AB-01\",\n\"tags\": [\n  \"ok\",\n  \"x\"\n]\n}"),
              "d:5: tags[1]: text is shorter than 2 characters");
    EXPECT_EQ(first("{\n\"id\": \"AB-01\",\n\"depth\":\n   99\n}"),
              "d:3: depth: value 99 is above the maximum 64");
}

TEST(JsonCheck, SyntaxErrorHasLineAndColumn) {
    auto problems = check_json(kSchema, "{\n  \"id\": \"AB-01\",\n  \"depth\": ,\n}");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].line, 3);
    EXPECT_NE(problems[0].message.find("not valid JSON (column"), std::string::npos)
        << problems[0].message;
}

}  // namespace
}  // namespace ndkct::spec
