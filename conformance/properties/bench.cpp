// conformance_properties_bench: how many property sequences of 50 calls per second the
// reference provider sustains (in-process), the oracle judging every call as in the tests.
// Prints figures; asserts nothing.
//
//   conformance_properties_bench [--provider=SPEC] [--seconds=S] [--calls=N[,N...]] [--jobs=N]
//
// Figures: sequence generation alone (RapidCheck, the World), and whole sequences (a fresh
// Session with its arena and adapter, the connected pair, N commands (50 unless --calls says),
// the teardown's drain, flush and closes), twice: as the tests' search runs them, the quiet
// period after CloseNdkAdapter (--ndkct_quiet_us, 1 ms) judged across sequences
// (QuietPeriods: a sequence is parked and judged once its period is over, while the next
// runs), and with each sequence waiting out its own period (as shrinking and replays do: alone
// it caps a run at 1,000 sequences/s). Each run also prints where a sequence's wall time goes
// (PhaseTimes) and the process's CPU time per sequence (on a shared machine wall time is
// mostly other people's work). With --jobs=N the search's way runs once more in N processes at
// once (independent sessions, one per core, as ctest runs the property tests side by side),
// the figure being all their sequences over the wall time. With --calls=10,50,200 the cost of
// sequence length (issue #16, scale). Every figure is also printed as an `ndkct-bench: {json}` line
// (bench/README.md). With the default profile the reference provider pends half of the calls that
// may pend and calls back from its worker thread.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <regex>
#include <sstream>

#include "commands.hpp"
#include "ndkct/conformance/provider_spec.hpp"
#include "property.hpp"

using namespace ndkct;
using namespace ndkct::properties;
using Clock = std::chrono::steady_clock;

namespace {

size_t kCalls = 50;

// CPU seconds of the process (every thread: the provider's worker too).
double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void emit(const std::string& name, double value, const std::string& unit,
          const std::string& note = "") {
    std::ostringstream line;
    line << "ndkct-bench: {\"bench\": \"properties\", \"name\": \"" << name
         << "\", \"value\": " << value << ", \"unit\": \"" << unit << "\", \"better\": \"higher\"";
    if (!note.empty()) line << ", \"note\": \"" << note << "\"";
    std::cout << line.str() << "}\n";
}

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

// What one process's loop measured (trivially copyable: a child process writes it to a pipe).
struct Tally {
    size_t sequences = 0, calls = 0, failed = 0;
    size_t hosts_made = 0, hosts_reused = 0;  // host memory (QuietPeriods::take_host)
    double elapsed = 0, cpu = 0, generating = 0, judging = 0;
    PhaseTimes times;
    char first_failure[400] = "";
};

// Runs sequences for `seconds` (sequence seeds from seed_base), as the tests' search does.
Tally run_loop(const conformance::ProviderSpec& spec, const World& initial, double seconds,
               PropertyOptions options, bool amortized, size_t seed_base) {
    Tally t;
    options.times = &t.times;
    QuietPeriods quiet_periods;
    const double cpu_at_start = cpu_seconds();
    auto start = Clock::now();
    // The first failure, with the seed of its sequence (sequence(initial, seed) makes it again).
    auto note_failure = [&](const std::string& description, size_t index) {
        if (!t.failed++)
            std::snprintf(
                t.first_failure, sizeof t.first_failure, "sequence seed %zu: %s",
                seed_base + index + 1,
                description.substr(0, description.find('\n', description.find("oracle:"))).c_str());
    };
    while (t.elapsed < seconds) {
        try {
            auto generated_at = Clock::now();
            auto commands = sequence(initial, seed_base + t.sequences + 1);
            t.generating += std::chrono::duration<double>(Clock::now() - generated_at).count();
            t.calls += run_sequence(spec, initial, commands, options, nullptr, nullptr,
                                    amortized ? &quiet_periods : nullptr, t.sequences);
        } catch (const rc::detail::CaseResult& failure) {  // counted; the tests would shrink it
            note_failure(failure.description, t.sequences);
        }
        ++t.sequences;
        auto judged_at = Clock::now();
        if (auto late = quiet_periods.judge(false)) note_failure(late->description, late->tag);
        t.judging += std::chrono::duration<double>(Clock::now() - judged_at).count();
        t.elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    }
    auto judged_at = Clock::now();
    if (auto late = quiet_periods.judge(true)) note_failure(late->description, late->tag);
    t.judging += std::chrono::duration<double>(Clock::now() - judged_at).count();
    t.elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    t.hosts_made = quiet_periods.hosts_made();
    t.hosts_reused = quiet_periods.hosts_reused();
    t.cpu = cpu_seconds() - cpu_at_start;
    return t;
}

// Runs the loop in `jobs` processes at once (independent sessions, one per core: as ctest runs
// the property tests side by side) and adds up what they measured.
Tally run_jobs(const conformance::ProviderSpec& spec, const World& initial, double seconds,
               const PropertyOptions& options, bool amortized, int jobs) {
    if (jobs <= 1) return run_loop(spec, initial, seconds, options, amortized, 0);
    std::cout.flush();
    std::vector<std::pair<pid_t, int>> children;
    for (int j = 0; j < jobs; ++j) {
        int fds[2];
        if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
        pid_t pid = fork();
        if (pid < 0) throw std::runtime_error("fork failed");
        if (pid == 0) {
            close(fds[0]);
            Tally t = run_loop(spec, initial, seconds, options, amortized, size_t(j) << 32);
            ssize_t written = write(fds[1], &t, sizeof t);
            _exit(written == ssize_t(sizeof t) ? 0 : 1);
        }
        close(fds[1]);
        children.emplace_back(pid, fds[0]);
    }
    Tally sum;
    for (auto [pid, fd] : children) {
        Tally t;
        size_t got = 0;
        for (ssize_t n; got < sizeof t &&
                        (n = read(fd, reinterpret_cast<char*>(&t) + got, sizeof t - got)) > 0;)
            got += size_t(n);
        close(fd);
        int status = 0;
        waitpid(pid, &status, 0);
        if (got != sizeof t) throw std::runtime_error("a benchmark process failed");
        if (!sum.failed && t.failed)
            std::memcpy(sum.first_failure, t.first_failure, sizeof t.first_failure);
        sum.sequences += t.sequences;
        sum.calls += t.calls;
        sum.failed += t.failed;
        sum.hosts_made += t.hosts_made;
        sum.hosts_reused += t.hosts_reused;
        sum.elapsed = std::max(sum.elapsed, t.elapsed);
        sum.cpu += t.cpu;
        sum.generating += t.generating;
        sum.judging += t.judging;
        for (double PhaseTimes::*f :
             {&PhaseTimes::session, &PhaseTimes::buffers, &PhaseTimes::setup, &PhaseTimes::commands,
              &PhaseTimes::drain, &PhaseTimes::notifications, &PhaseTimes::closes,
              &PhaseTimes::adapter_close, &PhaseTimes::quiet, &PhaseTimes::destroy})
            sum.times.*f += t.times.*f;
        sum.times.notifications_given_up += t.times.notifications_given_up;
    }
    return sum;
}

void measure(const std::string& what, const std::string& key, const conformance::ProviderSpec& spec,
             const World& initial, double seconds, const PropertyOptions& options, bool amortized,
             int jobs) {
    const Tally t = run_jobs(spec, initial, seconds, options, amortized, jobs);
    const double sequences = double(t.sequences);
    std::cout << what << (jobs > 1 ? ", " + std::to_string(jobs) + " processes" : "") << ": "
              << t.sequences << " sequences of " << kCalls << " commands in " << t.elapsed
              << " s: " << sequences / t.elapsed << " sequences/s, " << t.calls / t.elapsed
              << " commands run/s before a sequence stopped; CPU " << int(t.cpu / sequences * 1e6)
              << " us per sequence (" << sequences / t.cpu << " sequences per CPU second)"
              << " (" << t.failed << " sequences stopped at a violation";
    if (t.failed) std::cout << "; the first: " << t.first_failure;
    std::cout << ")\n";
    if (t.hosts_made)
        std::cout << "  host memory: " << t.hosts_made << " arenas made, " << t.hosts_reused
                  << " sequences on a rewound one\n";
    // Where the time went, per sequence (a sequence that stopped at a violation skips the rest).
    auto us = [&](double total) { return std::to_string(int(total / sequences * 1e6 + 0.5)); };
    std::cout << "  per sequence, us: generation " << us(t.generating) << ", session "
              << us(t.times.session) << ", buffers " << us(t.times.buffers) << ", setup "
              << us(t.times.setup) << ", commands " << us(t.times.commands) << ", drain "
              << us(t.times.drain) << ", notifications " << us(t.times.notifications) << ", closes "
              << us(t.times.closes) << ", adapter close " << us(t.times.adapter_close)
              << ", quiet wait " << us(t.times.quiet) << ", destructors " << us(t.times.destroy)
              << ", parked periods judged and released " << us(t.judging) << "\n  "
              << t.times.notifications_given_up
              << " teardowns waited the whole 20 ms for a notification the oracle counted owed "
                 "(none came)\n";
    const std::string name = "sequences_per_s." + key + ".calls_" + std::to_string(kCalls) +
                             (jobs > 1 ? ".jobs_" + std::to_string(jobs) : "");
    emit(name, sequences / t.elapsed, "sequences/s", "wall, generation included");
    emit(name + ".per_cpu_s", sequences / t.cpu, "sequences/CPU s");
}

// --replay=SEED: runs the sequence of that seed alone (each sequence waiting out its own quiet
// period) and, if it fails, removes commands one at a time while it still fails the same way
// (the first line of the oracle's finding), the World's preconditions holding at each step.
// Prints the shortest sequence found. A debugging aid: the tests shrink with RapidCheck.
int replay(const conformance::ProviderSpec& spec, const World& initial,
           const PropertyOptions& options, size_t seed) {
    auto first_line = [](const std::string& d) {
        auto at = d.find("oracle:");
        return at == std::string::npos ? d.substr(0, d.find('\n'))
                                       : d.substr(at, d.find('\n', at) - at);
    };
    auto failure_of = [&](const rc::state::Commands<Command>& commands) -> std::string {
        try {
            run_sequence(spec, initial, commands, options);
        } catch (const rc::detail::CaseResult& failure) {
            if (failure.type == rc::detail::CaseResult::Type::Failure) return failure.description;
        }
        return "";
    };
    auto valid = [&](const rc::state::Commands<Command>& commands) {
        World state = initial;
        try {
            for (const auto& c : commands) {
                c->checkPreconditions(state);
                c->apply(state);
            }
        } catch (...) {
            return false;
        }
        return true;
    };
    auto commands = sequence(initial, seed);
    std::string found = failure_of(commands);
    if (found.empty()) {
        std::cout << "sequence seed " << seed << " of " << kCalls << " calls passes\n";
        return 0;
    }
    const std::string want = first_line(found);
    std::cout << "sequence seed " << seed << ": " << want << "\nshrinking...\n";
    for (bool shrunk = true; shrunk;) {
        shrunk = false;
        for (size_t i = commands.size(); i-- > 0;) {
            auto fewer = commands;
            fewer.erase(fewer.begin() + long(i));
            if (!valid(fewer)) continue;
            if (auto d = failure_of(fewer); !d.empty() && first_line(d) == want) {
                commands = std::move(fewer);
                found = d;
                shrunk = true;
            }
        }
    }
    std::cout << commands.size() << " commands:\n";
    for (const auto& c : commands) {
        c->show(std::cout);
        std::cout << "\n";
    }
    std::cout << "\n" << found << "\n";
    return 1;
}

// --check-reuse=N: the proof that reusing host memory changes no verdict. The sequences of
// seeds 1..N each run twice, alternating: alone on a fresh arena (as shrinking and replays run
// them) and as the search runs them (parked, judged, their arena rewound for the next one).
// Both runs must end the same way (passed, or failed with the same finding) with the same log:
// every call and every answer the provider gave. When they differ, both are tried twice more
// (a provider's timing can change any one run; reuse would change every reused one); exit
// status 1 when no reused run ends like any fresh one. With
// --fresh-hosts the second run has a fresh arena too: the control (what differs then is the
// provider's own timing, as with a timing fault, not reuse).
int check_reuse(const conformance::ProviderSpec& spec, const World& initial,
                PropertyOptions options, size_t count) {
    QuietPeriods quiet_periods;
    // One run: how it ended ("" = passed, else the failure's description) and its log.
    auto run = [&](const rc::state::Commands<Command>& commands, bool reused, size_t seed) {
        std::pair<std::string, std::vector<std::string>> out;
        options.log = &out.second;
        try {
            run_sequence(spec, initial, commands, options, nullptr, nullptr,
                         reused ? &quiet_periods : nullptr, seed);
            if (reused)
                if (auto late = quiet_periods.judge(true)) out.first = late->description;
        } catch (const rc::detail::CaseResult& failure) {
            out.first = failure.description;
        }
        if (!out.first.empty()) out.second.clear();  // the description has the log
        // Buffer addresses (mmap's) differ between any two runs, fresh or not: not compared.
        static const std::regex address("0x7f[0-9a-f]{10}");
        out.first = std::regex_replace(out.first, address, "0x(buffer address)");
        for (auto& line : out.second)
            line = std::regex_replace(line, address, "0x(buffer address)");
        return out;
    };
    size_t differences = 0, timing = 0, failed = 0;
    for (size_t seed = 1; seed <= count; ++seed) {
        const auto commands = sequence(initial, seed);
        const auto fresh = run(commands, false, seed);
        failed += !fresh.first.empty();
        const auto reused = run(commands, true, seed);
        if (reused == fresh) continue;
        // A provider's own timing (a timing fault, a completion polled a little later, a
        // machine busy with other tests) can change any one run, the fresh one as well; reuse
        // would change every reused run and no fresh one: both get two more tries, and reuse
        // is blamed only when no reused run ends like any fresh one.
        std::vector<decltype(run(commands, false, seed))> fresh_runs{fresh}, reused_runs{reused};
        bool agreed = false;
        for (int again = 0; again < 2 && !agreed; ++again) {
            fresh_runs.push_back(run(commands, false, seed));
            reused_runs.push_back(run(commands, true, seed));
            for (const auto& f : fresh_runs)
                for (const auto& r : reused_runs)
                    agreed = agreed || f == r;
        }
        if (agreed) {
            ++timing;
            continue;
        }
        ++differences;
        std::cout << "sequence seed " << seed << ": fresh and reused host memory differ\n"
                  << "fresh:\n"
                  << fresh.first;
        for (const auto& line : fresh.second)
            std::cout << "  " << line << "\n";
        std::cout << "reused (the first try of three):\n" << reused.first;
        for (const auto& line : reused.second)
            std::cout << "  " << line << "\n";
    }
    std::cout << count << " sequences of " << kCalls << " calls run on fresh and on reused host "
              << "memory (" << quiet_periods.hosts_made() << " arenas made, "
              << quiet_periods.hosts_reused() << " runs on a rewound one): " << differences
              << " differed three times, " << timing << " differed once and then agreed, " << failed
              << " failed\n";
    return differences || (options.reuse_hosts && quiet_periods.hosts_reused() == 0) ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string provider = "model:seed=1";
    double seconds = 3;
    std::vector<size_t> lengths{50};
    int jobs = 1;
    size_t replay_seed = 0;
    size_t check_reuse_count = 0;
    bool fresh_hosts = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--provider=", 11) == 0) {
            provider = argv[i] + 11;
        } else if (std::strncmp(argv[i], "--seconds=", 10) == 0) {
            seconds = std::atof(argv[i] + 10);
        } else if (std::strncmp(argv[i], "--replay=", 9) == 0) {
            replay_seed = size_t(std::atol(argv[i] + 9));
        } else if (std::strcmp(argv[i], "--fresh-hosts") == 0) {
            fresh_hosts = true;
        } else if (std::strncmp(argv[i], "--check-reuse=", 14) == 0) {
            check_reuse_count = size_t(std::atol(argv[i] + 14));
        } else if (std::strncmp(argv[i], "--jobs=", 7) == 0) {
            jobs = std::max(1, std::atoi(argv[i] + 7));
        } else if (std::strncmp(argv[i], "--calls=", 8) == 0) {
            lengths.clear();
            std::istringstream list(argv[i] + 8);
            for (std::string n; std::getline(list, n, ',');)
                if (long v = std::atol(n.c_str()); v > 0) lengths.push_back(size_t(v));
            if (lengths.empty()) {
                std::cerr << "ndkct: --calls: a comma-separated list of positive numbers\n";
                return 2;
            }
        } else {
            std::cerr << "usage: " << argv[0]
                      << " [--provider=SPEC] [--seconds=S] [--calls=N[,N...]] [--jobs=N] "
                         "[--replay=SEED] [--check-reuse=N] [--fresh-hosts]\n";
            return 2;
        }
    }
    try {
        auto spec = conformance::parse_provider_specs(provider).at(0);
        PropertyOptions options;
        options.reuse_hosts = !fresh_hosts;
        std::shared_ptr<const NDK_ADAPTER_INFO> info;
        {
            Session probe(spec, session_options(options));
            info = std::make_shared<NDK_ADAPTER_INFO>(probe.info());
        }
        const World initial = initial_world(info);
        if (check_reuse_count) {
            kCalls = lengths.at(0);
            return check_reuse(spec, initial, options, check_reuse_count);
        }
        if (replay_seed) {
            kCalls = lengths.at(0);
            return replay(spec, initial, options, replay_seed);
        }

        for (size_t length : lengths) {
            kCalls = length;
            size_t generated = 0;
            auto start = Clock::now();
            const double cpu_at_start = cpu_seconds();
            double elapsed = 0;
            while (elapsed < seconds / 3) {
                generated += sequence(initial, generated + 1).size() == kCalls;
                elapsed = std::chrono::duration<double>(Clock::now() - start).count();
            }
            const double cpu = cpu_seconds() - cpu_at_start;
            std::cout << "generation alone: " << generated / elapsed << " sequences/s of " << kCalls
                      << " commands; CPU " << int(cpu / double(generated) * 1e6)
                      << " us per sequence (" << double(generated) / cpu
                      << " sequences per CPU second)\n";
            emit("generation_per_s.calls_" + std::to_string(kCalls) + ".per_cpu_s",
                 double(generated) / cpu, "sequences/CPU s");
            emit("generation_per_s.calls_" + std::to_string(kCalls), generated / elapsed,
                 "sequences/s");
            // As the tests' search runs them (the quiet periods judged across sequences), and
            // with each sequence waiting out its own (shrinking, replays).
            const std::string quiet = std::to_string(options.quiet.count()) + " us";
            measure(
                "provider " + provider + " (quiet period " + quiet + " judged across sequences)",
                "amortized_quiet", spec, initial, seconds, options, true, 1);
            PropertyOptions fresh = options;
            fresh.reuse_hosts = false;
            measure("provider " + provider + " (quiet period " + quiet +
                        " judged across sequences, a fresh arena for each sequence)",
                    "amortized_quiet_fresh_hosts", spec, initial, seconds, fresh, true, 1);
            if (jobs > 1)
                measure("provider " + provider + " (quiet period " + quiet +
                            " judged across sequences)",
                        "amortized_quiet", spec, initial, seconds, options, true, jobs);
            measure(
                "provider " + provider + " (each sequence waits its quiet period, " + quiet + ")",
                "own_quiet", spec, initial, seconds, options, false, 1);
        }
    } catch (const std::exception& error) {
        std::cerr << "ndkct: " << error.what() << "\n";
        return 2;
    }
    return 0;
}
