// ndkct-spec: look at and check the spec data (rule catalog, profiles) from the command line.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ndkct/spec/catalog.hpp"
#include "ndkct/spec/profile.hpp"

namespace {

int usage() {
    std::cerr
        << "usage: ndkct-spec COMMAND\n"
           "  profiles                 list the built-in profiles\n"
           "  profile NAME|FILE        check a profile and print it with defaults applied\n"
           "  rules [LEVEL]            list the catalog's rules (LEVEL: must, consumer-duty,\n"
           "                           model-choice)\n"
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
