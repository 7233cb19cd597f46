// ndkct-spec: look at and check the spec data (rule catalog, profiles) from the command line.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "ndkct/spec/catalog.hpp"
#include "ndkct/spec/profile.hpp"
#include "ndkct/spec/quotes.hpp"

namespace {

int usage() {
    std::cerr
        << "usage: ndkct-spec COMMAND\n"
           "  profiles                 list the built-in profiles\n"
           "  profile NAME|FILE        check a profile and print it with defaults applied\n"
           "  rules [LEVEL]            list the catalog's rules (LEVEL: must, consumer-duty,\n"
           "                           model-choice)\n"
           "  rules --page NAME        a page's statements (its sentences the catalog quotes)\n"
           "                           with their rules, then the function's other rules and\n"
           "                           model choices; NAME is a function (NdkBuildLam) or a\n"
           "                           page (ddi/nc-ndkpi-ndk_fn_bind)\n"
           "  verify-quotes DIR...     check every quote against the documentation pages in\n"
           "                           the folders (a developer check, not run in CI)\n"
           "  check-catalog DIR        check catalog files in DIR against the built-in\n"
           "                           page list and schemas (for editing the catalog)\n";
    return 2;
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// `rules --page`: what a reviewer needs to audit one page in one screen.
int print_page(const std::string& name) {
    using namespace ndkct::spec;
    const Catalog& catalog = builtin_catalog();
    auto pages = pages_of(name);
    auto statements = statements_on(catalog, pages);
    if (statements.empty()) {
        std::cerr << "ndkct-spec: no rule quotes " << name << " (pages:";
        for (const auto& p : pages)
            std::cerr << " " << p;
        std::cerr << ")\n";
        return 1;
    }
    std::string function = name.starts_with("Ndk") ? name : "";
    std::string shown;
    size_t n = 0;
    for (const auto& s : statements) {
        if (s.page != shown) {
            std::cout << s.page << "\n";
            shown = s.page;
        }
        std::string rules;
        for (const auto& r : s.rules)
            rules += (rules.empty() ? "" : " ") + r;
        std::cout << "  " << ++n << ". [" << rules << "] " << s.text << "\n";
    }
    // The function's rules that are stated elsewhere, and its model choices.
    auto is_function = [&](const Rule& rule) {
        if (function.empty()) return false;
        std::string lower = function;
        auto same = [](std::string a, std::string b) {
            auto low = [](std::string x) {
                std::transform(x.begin(), x.end(), x.begin(), ::tolower);
                return x;
            };
            return low(a) == low(b);
        };
        if (same(rule.function, lower)) return true;
        return std::any_of(rule.also_functions.begin(), rule.also_functions.end(),
                           [&](const std::string& f) { return same(f, lower); });
    };
    std::string elsewhere, choices;
    for (const auto& rule : catalog.rules()) {
        if (!is_function(rule)) continue;
        bool here = std::any_of(rule.quotes.begin(), rule.quotes.end(), [&](const Quote& q) {
            return std::find(pages.begin(), pages.end(), q.page) != pages.end();
        });
        if (rule.level == RuleLevel::model_choice)
            choices += "  " + rule.id + "  " + rule.knob + " = " + rule.default_value + "\n";
        else if (!here && !rule.quotes.empty())
            elsewhere += "  " + rule.id + "  (" + rule.quotes.front().page + ")\n";
    }
    if (!elsewhere.empty()) std::cout << "stated on other pages:\n" << elsewhere;
    if (!choices.empty())
        std::cout << "model choices (no sentence states them; knob = default):\n" << choices;
    return 0;
}

// `verify-quotes DIR...`: every quote of the catalog is on its page, verbatim.
int verify_quotes_in(const std::vector<std::string>& folders) {
    using namespace ndkct::spec;
    std::map<std::string, std::string> pages;
    for (const auto& folder : folders) {
        if (!std::filesystem::is_directory(folder)) {
            std::cerr << "ndkct-spec: " << folder << " is not a folder\n";
            return 2;
        }
        for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
            if (!entry.is_regular_file()) continue;
            std::string text = read_file(entry.path());
            std::string name = page_name_of_file(entry.path().string(), text);
            if (!name.empty()) pages[name] = normalize_documentation_text(text);
        }
    }
    auto check = verify_quotes(builtin_catalog(), pages);
    for (const auto& problem : check.problems)
        std::cout << problem << "\n";
    std::cout << check.verified << " of " << check.quotes
              << " quotes found verbatim on their pages (" << pages.size() << " pages read)\n";
    return check.problems.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    std::string command = argv[1];
    try {
        if (command == "profiles") {
            for (const auto& name : ndkct::spec::builtin_profile_names()) {
                auto profile = ndkct::spec::builtin_profile(name);
                std::cout << name << "\t" << profile.description << "\n";
            }
            return 0;
        }
        if (command == "profile" && argc == 3) {
            std::cout << ndkct::spec::resolve_profile(argv[2]).json << "\n";
            return 0;
        }
        if (command == "rules" && argc == 4 && std::string(argv[2]) == "--page")
            return print_page(argv[3]);
        if (command == "verify-quotes" && argc >= 3)
            return verify_quotes_in(std::vector<std::string>(argv + 2, argv + argc));
        if (command == "rules") {
            std::string level = argc > 2 ? argv[2] : "";
            for (const auto& rule : ndkct::spec::builtin_catalog().rules()) {
                if (!level.empty() && ndkct::spec::to_string(rule.level) != level) continue;
                std::cout << rule.id << "\t" << ndkct::spec::to_string(rule.level) << "\t"
                          << rule.function << "\t" << rule.summary << "\n";
            }
            return 0;
        }
        if (command == "check-catalog" && argc == 3) {
            std::vector<std::string> texts;
            std::vector<std::filesystem::path> paths;
            for (const auto& entry : std::filesystem::directory_iterator(argv[2]))
                if (entry.path().extension() == ".json") paths.push_back(entry.path());
            std::sort(paths.begin(), paths.end());
            for (const auto& path : paths)
                texts.push_back(read_file(path));
            std::vector<ndkct::spec::CatalogSource> sources;
            for (size_t i = 0; i < paths.size(); ++i)
                sources.push_back({paths[i].filename().string(), texts[i]});
            auto load = ndkct::spec::load_catalog(sources, ndkct::spec::builtin_catalog_context());
            for (const auto& problem : load.problems)
                std::cout << problem << "\n";
            std::cout << load.catalog.size() << " rules in " << paths.size() << " files, "
                      << load.problems.size() << " problems\n";
            return load.problems.empty() ? 0 : 1;
        }
    } catch (const std::exception& error) {
        std::cerr << "ndkct-spec: " << error.what() << "\n";
        return 1;
    }
    return usage();
}
