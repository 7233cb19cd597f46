// conformance_properties_bench: how many property sequences of 50 calls per second the
// reference provider sustains (in-process), the oracle judging every call as in the tests.
// Prints figures; asserts nothing.
//
//   conformance_properties_bench [--provider=SPEC] [--seconds=S]
//
// Figures: sequence generation alone (RapidCheck, the World), and whole sequences (a fresh
// Session with its arena and adapter, the connected pair, 50 commands, the teardown's drain,
// flush and closes), twice: with the quiet wait after CloseNdkAdapter that the tests make
// (--ndkct_quiet_us, 1 ms: alone it caps a run at 1,000 sequences/s) and without it. Each run
// also prints where a sequence's wall time goes (PhaseTimes). With the default profile the
// reference provider pends half of the calls that may pend and calls back from its worker
// thread.
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

// A sequence of exactly kCalls commands, generated as rc::state::gen::commands generates each
// of its commands (a command drawn for the World so far, redrawn while its preconditions
// discard it, then applied), at the tests' size. (Drawing whole sequences of a random length
// 1..size+1 and keeping those long enough threw half the work away.)
rc::state::Commands<Command> sequence(const World& initial, uint64_t seed) {
    rc::Random random(seed * 7919);
    World state = initial;
    rc::state::Commands<Command> commands;
    commands.reserve(kCalls);
    while (commands.size() < kCalls) {
        for (int tries = 0;; ++tries) {
            if (tries == 100) throw std::runtime_error("no command could be generated");
            try {
                auto command = all_calls()(state)(random.split(), int(kCalls)).value();
                command->checkPreconditions(state);
                command->apply(state);
                commands.push_back(std::move(command));
                break;
            } catch (const rc::detail::CaseResult& discarded) {  // RC_PRE: draw another
                if (discarded.type != rc::detail::CaseResult::Type::Discard) throw;
            } catch (const rc::GenerationFailure&) {
            }
        }
    }
    return commands;
}

void measure(const std::string& what, const conformance::ProviderSpec& spec, const World& initial,
             double seconds, PropertyOptions options) {
    size_t sequences = 0, calls = 0, failed = 0;
    PhaseTimes times;
    options.times = &times;
    double generating = 0;
    auto start = Clock::now();
    double elapsed = 0;
    std::string first_failure;
    while (elapsed < seconds) {
        try {
            auto generated_at = Clock::now();
            auto commands = sequence(initial, sequences + 1);
            generating += std::chrono::duration<double>(Clock::now() - generated_at).count();
            calls += run_sequence(spec, initial, commands, options);
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
    // Where the time went, per sequence (a sequence that stopped at a violation skips the rest).
    auto us = [&](double total) { return std::to_string(int(total / sequences * 1e6 + 0.5)); };
    std::cout << "  per sequence, us: generation " << us(generating) << ", session "
              << us(times.session) << ", buffers " << us(times.buffers) << ", setup "
              << us(times.setup) << ", commands " << us(times.commands) << ", drain "
              << us(times.drain) << ", notifications " << us(times.notifications) << ", closes "
              << us(times.closes) << ", adapter close " << us(times.adapter_close)
              << ", quiet wait " << us(times.quiet) << ", destructors " << us(times.destroy)
              << "\n  " << times.notifications_given_up
              << " teardowns waited the whole 20 ms for a notification the oracle counted owed "
                 "(none came)\n";
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
        // As the tests run (the quiet wait of --ndkct_quiet_us after CloseNdkAdapter, 1 ms,
        // so at most 1,000 sequences/s), and without it (what the rest costs).
        measure("provider " + provider + " (quiet wait " + std::to_string(options.quiet.count()) +
                    " us)",
                spec, initial, seconds, options);
        PropertyOptions no_quiet = options;
        no_quiet.quiet = std::chrono::microseconds(0);
        measure("provider " + provider + " (no quiet wait)", spec, initial, seconds, no_quiet);
    } catch (const std::exception& error) {
        std::cerr << "ndkct: " << error.what() << "\n";
        return 2;
    }
    return 0;
}
