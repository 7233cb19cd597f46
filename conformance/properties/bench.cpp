// conformance_properties_bench: how many property sequences of 50 calls per second the
// reference provider sustains (in-process), the oracle judging every call as in the tests.
// Prints figures; asserts nothing.
//
//   conformance_properties_bench [--provider=SPEC] [--seconds=S]
//
// Figures: sequence generation alone (RapidCheck, the World), and whole sequences (a fresh
// Session with its arena and adapter, the connected pair, 50 commands, the teardown's drain,
// flush and closes). With the default profile the reference provider pends half of the calls
// that may pend and calls back from its worker thread.
#include <chrono>
#include <cstring>
#include <iostream>

#include "commands.hpp"
#include "ndkct/conformance/provider_spec.hpp"
#include "property.hpp"

using namespace ndkct;
using namespace ndkct::properties;
using Clock = std::chrono::steady_clock;

namespace {

constexpr size_t kCalls = 50;

const CommandGen& all_calls() {
    static const CommandGen gen =
        machine<CreatePd, CreateCq, CreateQp, CreateMr, CreateMw, RegisterMr, RegisterMr,
                DeregisterMr, InitializeFastRegisterMr, BuildLam, ReleaseLam, FastRegister,
                FastRegister, Invalidate, Bind, Read, Write, Write, Send, Receive, DeferredChain,
                Flush, GetCqResults, GetCqResults, ArmCq, Connect, Disconnect, CloseObject>();
    return gen;
}

// A sequence of exactly kCalls commands (RapidCheck makes 1..size+1; longer ones are cut: a
// prefix of a valid sequence is valid).
rc::state::Commands<Command> sequence(const World& initial, uint64_t seed) {
    auto gen = rc::state::gen::commands(initial, all_calls());
    for (uint64_t attempt = 0;; ++attempt) {
        auto commands = gen(rc::Random(seed * 7919 + attempt), 2 * int(kCalls)).value();
        if (commands.size() >= kCalls) {
            commands.resize(kCalls);
            return commands;
        }
    }
}

void measure(const char* what, const conformance::ProviderSpec& spec, const World& initial,
             double seconds, const PropertyOptions& options) {
    size_t sequences = 0, calls = 0, failed = 0;
    auto start = Clock::now();
    double elapsed = 0;
    std::string first_failure;
    while (elapsed < seconds) {
        try {
            calls += run_sequence(spec, initial, sequence(initial, sequences + 1), options);
        } catch (const rc::detail::CaseResult& failure) {  // counted; the tests would shrink it
            if (!failed++)
                first_failure = failure.description.substr(
                    0, failure.description.find('\n', failure.description.find("oracle:")));
        }
        ++sequences;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    }
    std::cout << what << ": " << sequences << " sequences of " << kCalls << " commands in "
              << elapsed << " s: " << sequences / elapsed << " sequences/s, " << calls / elapsed
              << " commands run/s before a sequence stopped"
              << " (" << failed << " sequences stopped at a violation";
    if (failed) std::cout << "; the first: " << first_failure;
    std::cout << ")\n";
}

}  // namespace

int main(int argc, char** argv) {
    std::string provider = "model:seed=1";
    double seconds = 3;
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--provider=", 11) == 0)
            provider = argv[i] + 11;
        else if (std::strncmp(argv[i], "--seconds=", 10) == 0)
            seconds = std::atof(argv[i] + 10);
        else {
            std::cerr << "usage: " << argv[0] << " [--provider=SPEC] [--seconds=S]\n";
            return 2;
        }
    }
    try {
        auto spec = conformance::parse_provider_specs(provider).at(0);
        PropertyOptions options;
        std::shared_ptr<const NDK_ADAPTER_INFO> info;
        {
            Session probe(spec, session_options(options));
            info = std::make_shared<NDK_ADAPTER_INFO>(probe.info());
        }
        const World initial = initial_world(info);

        size_t generated = 0;
        auto start = Clock::now();
        double elapsed = 0;
        while (elapsed < seconds / 3) {
            generated += sequence(initial, generated + 1).size() == kCalls;
            elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        }
        std::cout << "generation alone: " << generated / elapsed << " sequences/s of " << kCalls
                  << " commands\n";
        measure(("provider " + provider).c_str(), spec, initial, seconds, options);
    } catch (const std::exception& error) {
        std::cerr << "ndkct: " << error.what() << "\n";
        return 2;
    }
    return 0;
}
