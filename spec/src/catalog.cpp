// Loading and checking the rule catalog.
#include "ndkct/spec/catalog.hpp"

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "json_internal.hpp"
#include "ndkct/spec/embedded.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::spec {

using detail::Json;

std::string_view to_string(RuleLevel level) {
    switch (level) {
        case RuleLevel::must:
            return "must";
        case RuleLevel::consumer_duty:
            return "consumer-duty";
        case RuleLevel::model_choice:
            return "model-choice";
    }
    return "?";
}

Catalog::Catalog(std::vector<Rule> rules) : rules_(std::move(rules)) {
    for (size_t i = 0; i < rules_.size(); ++i)
        index_.emplace(rules_[i].id, i);
}

const Rule* Catalog::find(std::string_view id) const {
    auto it = index_.find(id);
    return it == index_.end() ? nullptr : &rules_[it->second];
}

namespace {

std::set<std::string, std::less<>> page_names(std::string_view pages) {
    std::set<std::string, std::less<>> names;
    std::istringstream in{std::string(pages)};
    for (std::string line; std::getline(in, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
            line.pop_back();
        if (!line.empty() && line[0] != '#') names.insert(line);
    }
    return names;
}

std::vector<std::string> strings(const Json& entry, const char* key) {
    std::vector<std::string> out;
    if (auto it = entry.find(key); it != entry.end() && it->is_array())
        for (const auto& item : *it)
            if (item.is_string()) out.push_back(item.get<std::string>());
    return out;
}

std::string text(const Json& entry, const char* key) {
    auto it = entry.find(key);
    return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Every field is read through these: an entry of the wrong shape has already been reported by
// the schema check, and must not end the load with a library exception (json::value() threw
// type_error on "advisory": "yes").
bool flag(const Json& entry, const char* key) {
    auto it = entry.find(key);
    return it != entry.end() && it->is_boolean() && it->get<bool>();
}

// The schema node of a dotted knob path ("policies.unknown_flags") in the profile schema.
const Json* knob_schema(const Json& root, const std::string& knob) {
    const Json* node = &root;
    std::istringstream parts(knob);
    for (std::string part; std::getline(parts, part, '.');) {
        while (node->contains("$ref")) {
            auto ref = (*node)["$ref"].get<std::string>();
            node = &root.at(Json::json_pointer(ref.substr(1)));
        }
        auto props = node->find("properties");
        if (props == node->end() || !props->contains(part)) return nullptr;
        node = &(*props)[part];
    }
    while (node->contains("$ref")) {
        auto ref = (*node)["$ref"].get<std::string>();
        node = &root.at(Json::json_pointer(ref.substr(1)));
    }
    return node;
}

// A schema parsed once per process and text: every load of one file checks it against the
// same two schemas (about 50 KB of JSON), whose parse cost more than the file's own check.
const detail::ParsedJson* parsed_schema(std::string_view text, std::vector<JsonProblem>& problems) {
    static std::mutex lock;
    static std::map<std::string, std::optional<detail::ParsedJson>, std::less<>> cache;
    std::lock_guard guard(lock);
    auto it = cache.find(text);
    if (it == cache.end()) {
        std::vector<JsonProblem> found;
        it = cache.emplace(std::string(text), detail::parse_json(text, found)).first;
        if (!it->second) {  // not kept: the problems are reported each time
            problems.insert(problems.end(), found.begin(), found.end());
            cache.erase(it);
            return nullptr;
        }
    }
    return &*it->second;
}

}  // namespace

CatalogLoad load_catalog(std::span<const CatalogSource> files, const CatalogContext& context) {
    CatalogLoad load;
    auto& problems = load.problems;
    auto pages = page_names(context.pages);

    std::vector<JsonProblem> schema_problems;
    const auto* catalog_schema = parsed_schema(context.catalog_schema, schema_problems);
    const auto* profile_schema = parsed_schema(context.profile_schema, schema_problems);
    if (!catalog_schema || !profile_schema) {
        problems.push_back("schema: " + describe_problems(schema_problems, "schema"));
        return load;
    }

    std::vector<Rule> rules;
    std::map<std::string, std::string> first_seen;  // id -> "file:line"
    for (const auto& file : files) {
        std::vector<JsonProblem> file_problems;
        auto doc = detail::parse_json(file.text, file_problems);
        if (doc) detail::validate(catalog_schema->value, *doc, file_problems);
        for (const auto& p : file_problems)
            problems.push_back(p.describe(file.name));
        if (!doc || !doc->value.is_object()) continue;

        std::string stem = file.name.substr(file.name.find_last_of('/') + 1);
        stem = stem.substr(0, stem.rfind(".json"));
        std::string area = text(doc->value, "area");
        if (area != stem)
            problems.push_back(file.name + ":" + std::to_string(doc->line_of("area")) +
                               ": area \"" + area + "\" differs from the file name \"" + stem +
                               "\"");

        static const Json kNone = Json::array();
        auto listed = doc->value.find("rules");
        const Json& entries = listed != doc->value.end() && listed->is_array() ? *listed : kNone;
        for (size_t i = 0; i < entries.size(); ++i) {
            const Json& entry = entries[i];
            if (!entry.is_object()) continue;
            Rule rule;
            rule.id = text(entry, "id");
            rule.area = area;
            rule.function = text(entry, "function");
            rule.also_functions = strings(entry, "also_functions");
            rule.object = text(entry, "object");
            std::string level = text(entry, "level");
            rule.level = level == "consumer-duty"  ? RuleLevel::consumer_duty
                         : level == "model-choice" ? RuleLevel::model_choice
                                                   : RuleLevel::must;
            rule.advisory = flag(entry, "advisory");
            rule.summary = text(entry, "summary");
            if (auto q = entry.find("quotes"); q != entry.end() && q->is_array())
                for (const auto& quote : *q)
                    if (quote.is_object())
                        rule.quotes.push_back({text(quote, "page"), text(quote, "text")});
            rule.sources = strings(entry, "source");
            rule.statuses = strings(entry, "statuses");
            rule.related = strings(entry, "related");
            rule.min_version = text(entry, "min_version");
            rule.reason = text(entry, "reason");
            rule.open_question = text(entry, "open_question");
            rule.knob = text(entry, "knob");
            if (entry.contains("default")) rule.default_value = entry["default"].dump();
            std::string path = detail::child_path("rules", i);
            rule.line = doc->line_of(path);
            std::string where = file.name + ":" + std::to_string(rule.line) + ": " + rule.id;

            if (auto [it, fresh] =
                    first_seen.emplace(rule.id, file.name + ":" + std::to_string(rule.line));
                !fresh)
                problems.push_back(where + ": duplicate rule ID (first at " + it->second + ")");
            for (const auto& page : rule.sources)
                if (!pages.contains(page))
                    problems.push_back(where + ": source \"" + page +
                                       "\" is not a documented NDKPI page (rules/pages.txt)");
            for (const auto& quote : rule.quotes)
                if (!pages.contains(quote.page))
                    problems.push_back(
                        where + ": quote from \"" + quote.page +
                        "\", which is not a documented NDKPI page (rules/pages.txt)");
            // Every obligation the docs state is shown in their words; a rule no sentence states
            // is a model choice (or an AMB entry) with a knob.
            if (rule.level != RuleLevel::model_choice && rule.quotes.empty())
                problems.push_back(where + ": " + std::string(to_string(rule.level)) +
                                   " rule without a quote of the sentence that states it");
            for (const auto& status : rule.statuses)
                if (!status_from_name(status))
                    problems.push_back(where + ": unknown status \"" + status + "\"");

            bool is_ambiguity = rule.id.rfind("AMB-", 0) == 0;
            if (is_ambiguity && rule.level != RuleLevel::model_choice)
                problems.push_back(where + ": an AMB entry must be level model-choice");
            if (rule.level == RuleLevel::consumer_duty && rule.reason.empty())
                problems.push_back(where + ": consumer-duty rule without a reason");
            if (rule.level == RuleLevel::model_choice) {
                if (rule.open_question.empty())
                    problems.push_back(where + ": model-choice rule without an open_question");
                if (rule.knob.empty()) {
                    problems.push_back(where + ": model-choice rule without a knob");
                } else if (const Json* knob = knob_schema(profile_schema->value, rule.knob);
                           !knob) {
                    problems.push_back(where + ": knob \"" + rule.knob +
                                       "\" is not in the profile schema");
                } else if (!knob->contains("default")) {
                    problems.push_back(where + ": knob \"" + rule.knob +
                                       "\" has no default in the profile schema");
                } else if (!entry.contains("default") || (*knob)["default"] != entry["default"]) {
                    problems.push_back(where + ": default " +
                                       (entry.contains("default") ? entry["default"].dump()
                                                                  : std::string("(none)")) +
                                       " differs from the profile schema's default " +
                                       (*knob)["default"].dump() + " for " + rule.knob);
                }
            }
            rules.push_back(std::move(rule));
        }
    }
    for (const auto& rule : rules)
        for (const auto& other : rule.related)
            if (!first_seen.contains(other))
                problems.push_back(rule.area + ".json:" + std::to_string(rule.line) + ": " +
                                   rule.id + ": related rule " + other + " does not exist");
    load.catalog = Catalog(std::move(rules));
    return load;
}

std::vector<CatalogSource> builtin_catalog_sources() {
    std::vector<CatalogSource> sources;
    for (const auto& file : embedded_spec_files())
        if (file.name.starts_with("rules/catalog/") && file.name.ends_with(".json"))
            sources.push_back({std::string(file.name.substr(14)), file.text});
    return sources;
}

CatalogContext builtin_catalog_context() {
    auto need = [](std::string_view name) {
        auto text = embedded_spec_file(name);
        if (!text)
            throw std::runtime_error("spec file missing from the build: " + std::string(name));
        return *text;
    };
    return {need("rules/pages.txt"), need("rules/catalog.schema.json"),
            need("profiles/profile.schema.json")};
}

const Catalog& builtin_catalog() {
    static const Catalog catalog = [] {
        auto sources = builtin_catalog_sources();
        auto load = load_catalog(sources, builtin_catalog_context());
        if (!load.problems.empty()) {
            std::string all = "the built-in rule catalog has problems:";
            for (const auto& p : load.problems)
                all += "\n  " + p;
            throw std::runtime_error(all);
        }
        return std::move(load.catalog);
    }();
    return catalog;
}

std::optional<std::string_view> embedded_spec_file(std::string_view name) {
    for (const auto& file : embedded_spec_files())
        if (file.name == name) return file.text;
    return std::nullopt;
}

}  // namespace ndkct::spec
