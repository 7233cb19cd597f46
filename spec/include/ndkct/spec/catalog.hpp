// ndkct/spec/catalog.hpp: the rule catalog (spec/rules/catalog/*.json) as C++ values.
//
// Every documented NDKPI rule has an entry with a stable ID. The model cites the IDs beside the
// code that implements them, tests declare them, reports and waivers key on them.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ndkct::spec {

enum class RuleLevel {
    must,           // a provider obligation; tests check it
    consumer_duty,  // the caller's obligation; the harness keeps it
    model_choice,   // the docs are silent or contradict; a profile knob decides
};

std::string_view to_string(RuleLevel level);

// A sentence of the documentation that states a rule, verbatim in its page's language.
struct Quote {
    std::string page;  // as in rules/pages.txt, e.g. "seed/nc-ndkpi-ndk_fn_build_lam"
    std::string text;
};

struct Rule {
    std::string id;        // "FR-ALIGN-01"
    std::string area;      // catalog file, e.g. "fast_register"
    std::string function;  // "NdkFastRegister", or "*" for cross-cutting rules
    std::vector<std::string> also_functions;
    std::string object;  // "MR", "QP", ..., "General"
    RuleLevel level = RuleLevel::must;
    bool advisory = false;  // a documented "should": a warning, not a failure
    std::string summary;
    std::vector<Quote> quotes;         // the sentences that state it (every must and consumer duty)
    std::vector<std::string> sources;  // documentation page names
    std::vector<std::string> statuses;
    std::vector<std::string> related;
    std::string min_version;    // "" = every version
    std::string reason;         // consumer-duty: why the provider is not judged on it
    std::string open_question;  // model-choice: what the docs leave open
    std::string knob;           // model-choice: profile path, e.g. "policies.unknown_flags"
    std::string default_value;  // model-choice: the knob's default, as JSON text
    int line = 0;               // where the entry starts in its file
};

// A catalog file to load: its name ("fast_register.json") and its JSON text.
struct CatalogSource {
    std::string name;
    std::string_view text;
};

// What the catalog checks need besides the catalog files.
struct CatalogContext {
    std::string_view pages;           // rules/pages.txt: allowed source page names
    std::string_view catalog_schema;  // rules/catalog.schema.json
    std::string_view profile_schema;  // profiles/profile.schema.json: where knobs must exist
};

class Catalog {
  public:
    Catalog() = default;
    explicit Catalog(std::vector<Rule> rules);

    std::span<const Rule> rules() const { return rules_; }
    const Rule* find(std::string_view id) const;
    size_t size() const { return rules_.size(); }

  private:
    std::vector<Rule> rules_;
    std::map<std::string, size_t, std::less<>> index_;
};

struct CatalogLoad {
    Catalog catalog;
    // One line per problem, "<file>:<line>: <what>" (duplicate IDs, unknown pages, knob-less
    // ambiguities, schema violations...). Empty when the catalog is sound.
    std::vector<std::string> problems;
};

// Loads and checks catalog files. Entries with problems are still loaded where they parse.
CatalogLoad load_catalog(std::span<const CatalogSource> files, const CatalogContext& context);

// The catalog compiled into this binary (checked; throws std::runtime_error listing the
// problems if the shipped catalog is unsound, which the spec tests prevent).
const Catalog& builtin_catalog();

// The catalog files and context compiled into this binary, for tests that mutate them.
std::vector<CatalogSource> builtin_catalog_sources();
CatalogContext builtin_catalog_context();

}  // namespace ndkct::spec
