// Private to spec/: the nlohmann-based pieces shared by the loaders. Not installed, not included
// from any public header (each includer pays the json.hpp compile cost).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ndkct/spec/json_check.hpp"

namespace ndkct::spec::detail {

using Json = nlohmann::json;

// A parsed document and the line on which each value starts, keyed by dotted path.
struct ParsedJson {
    Json value;
    std::map<std::string, int> lines;

    int line_of(const std::string& path) const;
};

// The deepest nesting of objects and arrays a document may have (ndkct's own nest a few levels).
constexpr size_t kMaxJsonDepth = 64;

// Parses text; on a syntax error, or nesting deeper than kMaxJsonDepth, appends one problem
// (with line and column) and returns nullopt.
std::optional<ParsedJson> parse_json(std::string_view text, std::vector<JsonProblem>& problems);

// Validates doc against schema (the root schema, for $ref resolution), appending problems.
void validate(const Json& root_schema, const ParsedJson& doc, std::vector<JsonProblem>& problems);

// Fills every property that is absent from doc but has a "default" in the schema, recursively
// (objects absent from doc are created when their schema has properties with defaults).
void apply_defaults(const Json& root_schema, Json& doc);

// "a.b[2].c" from a parent path and a key or index.
std::string child_path(const std::string& parent, const std::string& key);
std::string child_path(const std::string& parent, size_t index);

}  // namespace ndkct::spec::detail
