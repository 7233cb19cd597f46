// The conformance test executables' main: --provider=SPEC[,SPEC...] chooses the providers
// (default: NDKCT_PROVIDERS, else the reference provider under three seeds).
//
// Modes for people and for the runner (conformance/runner), none of which runs a test body:
//   --coverage[=FILE]        which tests cover each catalog rule (JSON lines)
//   --ndkct_list=json        every instantiated test: gtest name, dotted ID, rule IDs, provider
//   --ndkct_identity         loads the first provider and prints its identity (no adapter)
//   --ndkct_describe         opens the first provider once and prints its identity, its
//                            NDK_ADAPTER_INFO and the profile (JSON)
//   --ndkct_out=FILE         where those three write their JSON instead of stdout (a provider
//                            may print to stdout; the runner's protocol never reads it)
// and for running:
//   --ndkct_events=FILE      appends one JSON line when each test starts and one when it ends
//                            (verdict material: result, messages and the rules and kind of each
//                            failure, the rules its checks reached, the NDK functions it called,
//                            properties), flushed at once, so that a crash or a hang loses
//                            nothing that already finished; the start line holds the offset of
//                            the test's own output in stdout (when that is a file)
//   --ndkct_flight=FILE      the call-in-flight record (ndkct/conformance/in_flight.hpp): which
//                            NDK call each thread is in, and what a crash left
// Every mode installs the crash handler (the signal, the thread and the top frames go to the
// call-in-flight record) before the provider is loaded.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "ndkct/conformance/capture_host.hpp"
#include "ndkct/conformance/in_flight.hpp"
#include "ndkct/conformance/suite.hpp"
#include "ndkct/spec/catalog.hpp"
#include "ndkct/spec/profile.hpp"

namespace {

using ndkct::conformance::declared_tests;
using ndkct::conformance::TestDeclaration;
namespace in_flight = ndkct::conformance::in_flight;

// Where --ndkct_list, --ndkct_identity and --ndkct_describe write (--ndkct_out=FILE).
std::ostream* g_out = &std::cout;

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
            *g_out << "{\"test\": " << json_string(full)
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
        *g_out << out.str();
        g_out->flush();
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "ndkct: cannot open the provider '" << spec.text << "': " << error.what()
                  << "\n";
        return 3;
    }
}

// --ndkct_identity: the first provider's NdkctGetProviderIdentity(), without opening an adapter
// (the runner chooses the NDKPI version from it before the run's first open).
int provider_identity() {
    const auto& spec = ndkct::conformance::providers_under_test().at(0);
    try {
        const auto& entry = ndkct::conformance::entry_points_for(spec);
        const NDKCT_PROVIDER_IDENTITY* id = nullptr;
        {
            in_flight::Call flight("NdkctGetProviderIdentity", "", "",
                                   "NdkctGetProviderIdentity()");
            id = entry.GetProviderIdentity();
        }
        auto text = [](const char* s) { return json_string(s ? s : ""); };
        *g_out << "{\"name\": " << text(id->Name) << ", \"version\": " << text(id->Version)
               << ", \"ndk_version\": "
               << json_string(std::to_string(id->NdkVersion.Major) + "." +
                              std::to_string(id->NdkVersion.Minor))
               << ", \"description\": " << text(id->Description)
               << ", \"abi_version\": " << id->AbiVersion << "}\n";
        g_out->flush();
        return 0;
    } catch (const std::exception& error) {
        std::cerr << "ndkct: cannot load the provider '" << spec.text << "': " << error.what()
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
        failures_.clear();
        ndkct::conformance::reset_rules_reached();
        in_flight::reset_functions_called();
        const std::string name = std::string(test.test_suite_name()) + "." + test.name();
        in_flight::set_test(name);
        const TestDeclaration* declaration = declaration_of(test.test_suite_name(), test.name());
        sole_rule_ = declaration && declaration->rules.size() == 1 ? declaration->rules
                                                                   : std::vector<std::string>{};
        // Where this test's own output starts in the log (stdout and stderr share one file).
        std::cout.flush();
        std::cerr.flush();
        std::fflush(stdout);
        off_t offset = lseek(STDOUT_FILENO, 0, SEEK_CUR);
        write("{\"event\": \"start\", \"test\": " + json_string(name) +
              ", \"log_offset\": " + std::to_string(offset < 0 ? -1 : offset) + "}");
    }

    // Called on the reporting thread as each failure is recorded: the rules of its RuleScope
    // and its kind; outside every scope, what blocked the test (a setup failure) when the
    // session knows, else the test's rule when it declares exactly one (see suite.hpp).
    void OnTestPartResult(const ::testing::TestPartResult& part) override {
        if (!part.failed()) return;
        using ndkct::conformance::FailureKind;
        Failure f;
        if (const auto* scope = ndkct::conformance::current_scope()) {
            f.kind = scope->kind();
            f.rules = scope->rules();
        } else if (!(f.rules = ndkct::conformance::Session::any_blocker(
                                   ndkct::conformance::current_session())
                                   .rules)
                        .empty()) {
            f.kind = FailureKind::setup;
        } else {
            f.kind = FailureKind::rule;
            f.rules = sole_rule_;
        }
        failures_.push_back(std::move(f));
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
        in_flight::set_test("");
        write("{\"event\": \"end\", \"test\": " + full_name(test) + ", \"result\": \"" + outcome +
              "\", \"duration_us\": " + std::to_string(micros) + ", \"failures\": " +
              json_list(failures) + ", \"failure_rules\": " + rules_of_failures(failures.size()) +
              ", \"failure_kinds\": " + kinds_of_failures(failures.size()) +
              ", \"rules_reached\": " + json_list(ndkct::conformance::rules_reached()) +
              ", \"functions\": " + json_list(in_flight::functions_called()) +
              ", \"skips\": " + json_list(skips) + ", \"properties\": " + properties + "}");
    }

  private:
    struct Failure {
        ndkct::conformance::FailureKind kind;
        std::vector<std::string> rules;
    };
    // One list of rule IDs per failure, in the order of "failures" (a failure recorded outside
    // the test's thread, or outside every scope with no cause known, names none).
    std::string rules_of_failures(size_t count) const {
        std::string out = "[";
        for (size_t i = 0; i < count; ++i)
            out += (i ? ", " : "") + json_list(i < failures_.size() ? failures_[i].rules
                                                                    : std::vector<std::string>{});
        return out + "]";
    }
    std::string kinds_of_failures(size_t count) const {
        std::string out = "[";
        for (size_t i = 0; i < count; ++i)
            out += std::string(i ? ", " : "") + "\"" +
                   (i < failures_.size() ? to_string(failures_[i].kind) : "rule") + "\"";
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
    std::vector<Failure> failures_;
    std::vector<std::string> sole_rule_;
};

// NDKCT_CAPTURE_DIR (./ndkct run --capture): each test's sessions write traces named after it.
class CaptureLabels : public ::testing::EmptyTestEventListener {
    void OnTestStart(const ::testing::TestInfo& test) override {
        ndkct::conformance::set_capture_label(std::string(test.test_suite_name()) + "." +
                                              test.name());
    }
};

}  // namespace

int main(int argc, char** argv) {
    in_flight::install_crash_handler();
    const char* events_path = nullptr;
    const char* out_path = nullptr;
    bool list = false, describe = false, identity = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--coverage") == 0) return write_coverage(nullptr);
        if (std::strncmp(argv[i], "--coverage=", 11) == 0) return write_coverage(argv[i] + 11);
        if (std::strcmp(argv[i], "--ndkct_list=json") == 0) list = true;
        if (std::strcmp(argv[i], "--ndkct_describe") == 0) describe = true;
        if (std::strcmp(argv[i], "--ndkct_identity") == 0) identity = true;
        if (std::strncmp(argv[i], "--ndkct_out=", 12) == 0) out_path = argv[i] + 12;
        if (std::strncmp(argv[i], "--ndkct_events=", 15) == 0) events_path = argv[i] + 15;
        if (std::strncmp(argv[i], "--ndkct_flight=", 15) == 0) {
            std::string error;
            if (!in_flight::open_file(argv[i] + 15, error)) {
                std::cerr << "ndkct: cannot write the call-in-flight record " << error << "\n";
                return 2;
            }
        }
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
    std::ofstream out_file;
    if (out_path) {
        out_file.open(out_path);
        if (!out_file) {
            std::cerr << "ndkct: cannot write " << out_path << ": " << std::strerror(errno) << "\n";
            return 2;
        }
        g_out = &out_file;
    }
    if (identity) return provider_identity();
    if (describe) return describe_provider();
    ::testing::InitGoogleTest(&argc, argv);
    if (list) return write_listing();
    ::testing::UnitTest::GetInstance()->listeners().Append(new CaptureLabels);
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
