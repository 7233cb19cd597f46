// The directed conformance tests' main: --provider=SPEC[,SPEC...] chooses the providers
// (default: NDKCT_PROVIDERS, else the reference provider under three seeds); --coverage[=FILE]
// prints which tests cover each catalog rule instead of running anything.
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>

#include "ndkct/conformance/suite.hpp"
#include "ndkct/spec/catalog.hpp"

namespace {

// --coverage[=FILE]: which tests cover each rule of the catalog (JSON lines: one rule a line),
// and a summary of the `must` rules no test names yet.
int write_coverage(const char* path) {
    using ndkct::spec::RuleLevel;
    std::map<std::string, std::vector<std::string>> tests_of;
    for (const auto& [key, declaration] : ndkct::conformance::declared_tests())
        for (const auto& rule : declaration->rules)
            tests_of[rule].push_back(declaration->id);
    std::ofstream file;
    std::ostream* out = &std::cout;
    if (path && *path) {
        file.open(path);
        if (!file) {
            std::cerr << "ndkct: cannot write " << path << "\n";
            return 2;
        }
        out = &file;
    }
    size_t must = 0, covered = 0;
    std::vector<std::string> uncovered;
    for (const auto& rule : ndkct::spec::builtin_catalog().rules()) {
        const auto& tests = tests_of[rule.id];
        *out << "{\"rule\": \"" << rule.id << "\", \"level\": \""
             << ndkct::spec::to_string(rule.level) << "\", \"function\": \"" << rule.function
             << "\", \"tests\": [";
        for (size_t i = 0; i < tests.size(); ++i)
            *out << (i ? ", " : "") << "\"" << tests[i] << "\"";
        *out << "]}\n";
        if (rule.level == RuleLevel::must) {
            ++must;
            if (tests.empty())
                uncovered.push_back(rule.id);
            else
                ++covered;
        }
    }
    std::cerr << "ndkct: " << covered << " of " << must << " must rules have a test; "
              << ndkct::conformance::declared_tests().size() << " tests declared\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--coverage") == 0) return write_coverage(nullptr);
        if (std::strncmp(argv[i], "--coverage=", 11) == 0) return write_coverage(argv[i] + 11);
        if (std::strncmp(argv[i], "--provider=", 11) == 0) {
            try {
                ndkct::conformance::providers_under_test() =
                    ndkct::conformance::parse_provider_specs(argv[i] + 11);
            } catch (const std::exception& error) {
                std::cerr << "ndkct: " << error.what() << "\n";
                return 2;
            }
        }
    }
    try {
        (void)ndkct::conformance::providers_under_test();
    } catch (const std::exception& error) {
        std::cerr << "ndkct: NDKCT_PROVIDERS: " << error.what() << "\n";
        return 2;
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
