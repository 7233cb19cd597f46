// The conformance test executables' main: --provider=SPEC[,SPEC...] chooses the providers
// (default: NDKCT_PROVIDERS, else the reference provider under three seeds).
//
// Modes for people and for the runner (conformance/runner), none of which runs a test body:
//   --coverage[=FILE]        which tests cover each catalog rule (JSON lines)
//   --ndkct_list=json        every instantiated test: gtest name, dotted ID, rule IDs, provider
//   --ndkct_describe         opens the first provider once and prints its identity, its
//                            NDK_ADAPTER_INFO and the profile (JSON)
// and one for running:
//   --ndkct_events=FILE      appends one JSON line when each test starts and one when it ends
//                            (verdict material: result, messages, properties), flushed at once,
//                            so that a crash or a hang loses nothing that already finished
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "ndkct/conformance/suite.hpp"
#include "ndkct/spec/catalog.hpp"
#include "ndkct/spec/profile.hpp"

namespace {

using ndkct::conformance::declared_tests;
using ndkct::conformance::TestDeclaration;

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20) {
                    char escaped[8];
                    std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
                    out += escaped;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

std::string json_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i)
        out += (i ? ", " : "") + json_string(items[i]);
    return out + "]";
}

// The declaration of a gtest test ("Providers/FastRegister", "BaseVa/model_seed1"), if any.
const TestDeclaration* declaration_of(std::string suite, std::string name) {
    suite = suite.substr(suite.find('/') + 1);  // "Providers/FastRegister" -> "FastRegister"
    name = name.substr(0, name.find('/'));      // "BaseVa/model_seed1" -> "BaseVa"
    auto it = declared_tests().find(suite + "." + name);
    return it == declared_tests().end() ? nullptr : it->second;
}

// --coverage[=FILE]: which tests cover each rule of the catalog (JSON lines: one rule a line),
// and a summary of the `must` rules no test names yet.
int write_coverage(const char* path) {
    using ndkct::spec::RuleLevel;
    std::map<std::string, std::vector<std::string>> tests_of;
    for (const auto& [key, declaration] : declared_tests())
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
    for (const auto& rule : ndkct::spec::builtin_catalog().rules()) {
        const auto& tests = tests_of[rule.id];
        *out << "{\"rule\": \"" << rule.id << "\", \"level\": \""
             << ndkct::spec::to_string(rule.level) << "\", \"function\": \"" << rule.function
             << "\", \"tests\": " << json_list(tests) << "}\n";
        if (rule.level == RuleLevel::must) {
            ++must;
            if (!tests.empty()) ++covered;
        }
    }
    std::cerr << "ndkct: " << covered << " of " << must << " must rules have a test; "
              << declared_tests().size() << " tests declared\n";
    return 0;
}

// --ndkct_list=json: one JSON line per instantiated test (the runner filters and shards).
int write_listing() {
    const auto& unit = *::testing::UnitTest::GetInstance();
    for (int s = 0; s < unit.total_test_suite_count(); ++s) {
        const auto& suite = *unit.GetTestSuite(s);
        for (int t = 0; t < suite.total_test_count(); ++t) {
            const auto& test = *suite.GetTestInfo(t);
            const std::string full = std::string(suite.name()) + "." + test.name();
            const TestDeclaration* declaration = declaration_of(suite.name(), test.name());
            std::cout << "{\"test\": " << json_string(full)
                      << ", \"id\": " << json_string(declaration ? declaration->id : "")
                      << ", \"suite\": " << json_string(declaration ? declaration->suite : "")
                      << ", \"rules\": "
                      << json_list(declaration ? declaration->rules : std::vector<std::string>{})
                      << ", \"provider\": "
                      << json_string(test.value_param() ? test.value_param() : "")
                      << ", \"file\": " << json_string(test.file()) << ", \"line\": " << test.line()
                      << "}\n";
        }
    }
    return 0;
}

// --ndkct_describe: the first provider's identity and NDK_ADAPTER_INFO, and the profile.
int describe_provider() {
    const auto& spec = ndkct::conformance::providers_under_test().at(0);
    try {
        ndkct::spec::Profile profile = ndkct::spec::resolve_profile(spec.profile);
        ndkct::conformance::Session session(spec);
        const NDKCT_PROVIDER_IDENTITY& id = session.identity();
        const NDK_ADAPTER_INFO& info = session.info();
        auto version = [](NDK_VERSION v) {
            return json_string(std::to_string(v.Major) + "." + std::to_string(v.Minor));
        };
        auto text = [](const char* s) { return json_string(s ? s : ""); };
        std::ostringstream out;
        out << "{\"spec\": " << json_string(spec.text) << ", \"kind\": " << json_string(spec.kind)
            << ", \"seed\": " << spec.seed << ",\n \"identity\": {\"name\": " << text(id.Name)
            << ", \"version\": " << text(id.Version)
            << ", \"ndk_version\": " << version(id.NdkVersion)
            << ", \"description\": " << text(id.Description)
            << ", \"abi_version\": " << id.AbiVersion << ", \"vendor_id\": " << info.VendorId
            << ", \"device_id\": " << info.DeviceId << "},\n \"adapter_info\": {"
            << "\"Version\": " << version(info.Version) << ", \"VendorId\": " << info.VendorId
            << ", \"DeviceId\": " << info.DeviceId
            << ", \"MaxRegistrationSize\": " << info.MaxRegistrationSize
            << ", \"MaxWindowSize\": " << info.MaxWindowSize
            << ", \"FRMRPageCount\": " << info.FRMRPageCount
            << ", \"MaxInitiatorRequestSge\": " << info.MaxInitiatorRequestSge
            << ", \"MaxReceiveRequestSge\": " << info.MaxReceiveRequestSge
            << ", \"MaxReadRequestSge\": " << info.MaxReadRequestSge
            << ", \"MaxTransferLength\": " << info.MaxTransferLength
            << ", \"MaxInlineDataSize\": " << info.MaxInlineDataSize
            << ", \"MaxInboundReadLimit\": " << info.MaxInboundReadLimit
            << ", \"MaxOutboundReadLimit\": " << info.MaxOutboundReadLimit
            << ", \"MaxReceiveQueueDepth\": " << info.MaxReceiveQueueDepth
            << ", \"MaxInitiatorQueueDepth\": " << info.MaxInitiatorQueueDepth
            << ", \"MaxSrqDepth\": " << info.MaxSrqDepth << ", \"MaxCqDepth\": " << info.MaxCqDepth
            << ", \"LargeRequestThreshold\": " << info.LargeRequestThreshold
            << ", \"MaxCallerData\": " << info.MaxCallerData
            << ", \"MaxCalleeData\": " << info.MaxCalleeData
            << ", \"AdapterFlags\": " << info.AdapterFlags
            << ", \"RdmaTechnology\": " << static_cast<int>(info.RdmaTechnology) << "},\n"
            << " \"profile\": {\"name\": " << json_string(profile.name)
            << ", \"origin\": " << json_string(profile.origin)
            << ", \"ndk_version\": " << version(profile.version) << "}}\n";
        std::cout << out.str();
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "ndkct: cannot open the provider '" << spec.text << "': " << error.what()
                  << "\n";
        return 3;
    }
}

// --ndkct_events=FILE: one JSON line when a test starts and one when it ends. Each line is
// flushed before the test body runs on, so the runner knows which test was running when the
// process died or hung, and keeps every result before it.
class EventStream : public ::testing::EmptyTestEventListener {
  public:
    explicit EventStream(std::FILE* file) : file_(file) {}

    void OnTestStart(const ::testing::TestInfo& test) override {
        started_ = std::chrono::steady_clock::now();
        failure_rules_.clear();
        const TestDeclaration* declaration = declaration_of(test.test_suite_name(), test.name());
        sole_rule_ = declaration && declaration->rules.size() == 1 ? declaration->rules
                                                                   : std::vector<std::string>{};
        write("{\"event\": \"start\", \"test\": " + full_name(test) + "}");
    }

    // Called on the reporting thread as each failure is recorded: the rules of its RuleScope;
    // outside every scope, the test's rule when it declares exactly one (all it checks).
    void OnTestPartResult(const ::testing::TestPartResult& part) override {
        if (!part.failed()) return;
        const auto& scoped = ndkct::conformance::current_rules();
        failure_rules_.push_back(scoped.empty() ? sole_rule_ : scoped);
    }

    void OnTestEnd(const ::testing::TestInfo& test) override {
        const ::testing::TestResult& result = *test.result();
        auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - started_)
                          .count();
        std::vector<std::string> failures, skips;
        for (int i = 0; i < result.total_part_count(); ++i) {
            const auto& part = result.GetTestPartResult(i);
            std::string where = part.file_name() ? std::string(part.file_name()) + ":" +
                                                       std::to_string(part.line_number()) + ": "
                                                 : "";
            if (part.skipped())
                skips.push_back(part.message());
            else if (part.failed())
                failures.push_back(where + part.message());
        }
        std::string properties = "{";
        for (int i = 0; i < result.test_property_count(); ++i) {
            const auto& property = result.GetTestProperty(i);
            properties += (i ? ", " : "") + json_string(property.key()) + ": " +
                          json_string(property.value());
        }
        properties += "}";
        const char* outcome = result.Failed() ? "failed" : result.Skipped() ? "skipped" : "passed";
        write("{\"event\": \"end\", \"test\": " + full_name(test) + ", \"result\": \"" + outcome +
              "\", \"duration_us\": " + std::to_string(micros) + ", \"failures\": " +
              json_list(failures) + ", \"failure_rules\": " + rules_of_failures(failures.size()) +
              ", \"skips\": " + json_list(skips) + ", \"properties\": " + properties + "}");
    }

  private:
    // One list of rule IDs per failure, in the order of "failures" (a failure recorded outside
    // the test's thread, or outside every scope, names none).
    std::string rules_of_failures(size_t failures) const {
        std::string out = "[";
        for (size_t i = 0; i < failures; ++i)
            out +=
                (i ? ", " : "") + json_list(i < failure_rules_.size() ? failure_rules_[i]
                                                                      : std::vector<std::string>{});
        return out + "]";
    }
    static std::string full_name(const ::testing::TestInfo& test) {
        return json_string(std::string(test.test_suite_name()) + "." + test.name());
    }
    void write(const std::string& line) {
        std::fputs((line + "\n").c_str(), file_);
        std::fflush(file_);
    }
    std::FILE* file_;
    std::chrono::steady_clock::time_point started_;
    std::vector<std::vector<std::string>> failure_rules_;
    std::vector<std::string> sole_rule_;
};

}  // namespace

int main(int argc, char** argv) {
    const char* events_path = nullptr;
    bool list = false, describe = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--coverage") == 0) return write_coverage(nullptr);
        if (std::strncmp(argv[i], "--coverage=", 11) == 0) return write_coverage(argv[i] + 11);
        if (std::strcmp(argv[i], "--ndkct_list=json") == 0) list = true;
        if (std::strcmp(argv[i], "--ndkct_describe") == 0) describe = true;
        if (std::strncmp(argv[i], "--ndkct_events=", 15) == 0) events_path = argv[i] + 15;
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
    if (describe) return describe_provider();
    ::testing::InitGoogleTest(&argc, argv);
    if (list) return write_listing();
    if (events_path) {
        std::FILE* file = std::fopen(events_path, "a");
        if (!file) {
            std::cerr << "ndkct: cannot write the event stream " << events_path << ": "
                      << std::strerror(errno) << "\n";
            return 2;
        }
        ::testing::UnitTest::GetInstance()->listeners().Append(new EventStream(file));
    }
    return RUN_ALL_TESTS();
}
