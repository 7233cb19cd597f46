// ndkct/spec/json_check.hpp: schema checking of ndkct's JSON files (profiles, catalog, waivers).
//
// ndkct's schemas use a small subset of JSON Schema 2020-12 (type, properties, required,
// additionalProperties, enum, const, minimum, maximum, minLength, pattern, items, minItems,
// maxItems, uniqueItems, $ref into $defs). Problems name the field as a dotted path and the line
// it is on, so that a user can fix a file from the message alone.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ndkct::spec {

struct JsonProblem {
    std::string
        path;      // dotted path of the offending value ("policies.unknown_flags", "rules[3].id")
    int line = 0;  // 1-based line in the document; 0 when unknown
    std::string message;

    // "<origin>:<line>: <path>: <message>"
    std::string describe(std::string_view origin) const;
};

// Checks document_text against schema_text. An empty result means the document is valid.
// A syntax error in the document is one problem with its line and column.
std::vector<JsonProblem> check_json(std::string_view schema_text, std::string_view document_text);

// Joins problems into one message, one per line, each prefixed by origin.
std::string describe_problems(const std::vector<JsonProblem>& problems, std::string_view origin);

}  // namespace ndkct::spec
