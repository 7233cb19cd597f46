#include "property.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <regex>

namespace ndkct::properties {

namespace {

// Reads --NAME=VALUE from the command line as a number; a malformed value is an error.
bool number_flag(const std::string& arg, const char* name, long long& out) {
    std::string prefix = std::string("--") + name + "=";
    if (arg.rfind(prefix, 0) != 0) return false;
    const char* text = arg.c_str() + prefix.size();
    char* end = nullptr;
    out = std::strtoll(text, &end, 0);
    if (!*text || *end || out < 0) {
        std::cerr << "ndkct: " << arg << ": not a non-negative number\n";
        std::exit(2);
    }
    return true;
}

// RapidCheck's listener interface; the runs report through gtest instead.
class QuietListener : public rc::detail::TestListener {
  public:
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

}  // namespace

const PropertyOptions& PropertyOptions::from_command_line() {
    static const PropertyOptions parsed = [] {
        PropertyOptions o;
        for (const std::string& arg : ::testing::internal::GetArgvs()) {
            long long v = 0;
            if (number_flag(arg, "ndkct_seed", v)) o.seed = uint64_t(v);
            if (number_flag(arg, "ndkct_tests", v)) o.tests = int(v);
            if (number_flag(arg, "ndkct_size", v)) o.max_size = int(v);
            if (number_flag(arg, "ndkct_callback_ms", v))
                o.callback_timeout = std::chrono::milliseconds(v);
            if (number_flag(arg, "ndkct_drain_ms", v))
                o.drain_timeout = std::chrono::milliseconds(v);
            if (number_flag(arg, "ndkct_quiet_us", v)) o.quiet = std::chrono::microseconds(v);
            if (number_flag(arg, "ndkct_shrink_ms", v))
                o.shrink_budget = std::chrono::milliseconds(v);
            if (arg == "--ndkct_no_shrink") o.shrink = false;
            if (arg == "--ndkct_fresh_hosts") o.reuse_hosts = false;
            if (arg.rfind("--ndkct_waivers=", 0) == 0) o.waiver_files.push_back(arg.substr(16));
        }
        return o;
    }();
    return parsed;
}

conformance::SessionOptions session_options(const PropertyOptions& options) {
    conformance::SessionOptions s;
    s.arena_pages = 64;  // the buffers (kBuffers * kBufferPages) and room to spare
    s.callback_timeout = options.callback_timeout;
    return s;
}

QuietPeriods::~QuietPeriods() {
    clear();
}

void QuietPeriods::park(std::unique_ptr<Session> session, std::unique_ptr<Sut> sut, size_t tag,
                        Host host) {
    parked_.push_back({std::move(session), std::move(sut), tag, std::move(host)});
}

Host QuietPeriods::take_host(const conformance::ProviderSpec& spec,
                             const PropertyOptions& options) {
    if (!hosts_.empty()) {
        Host host = std::move(hosts_.back());
        hosts_.pop_back();
        ++hosts_reused_;
        return host;
    }
    // What a fresh Session and Sut make: the arena for the spec's seed, then the Sut's buffers.
    Host host;
    host.arena = std::make_shared<platform::Arena>(session_options(options).arena_pages, spec.seed);
    for (auto& buffer : host.buffers)
        buffer = host.arena->allocate(kBufferBytes);
    host.mark = host.arena->mark();
    ++hosts_made_;
    return host;
}

void QuietPeriods::recycle(Parked& p) {
    if (!p.host.arena) return;
    p.host.buffers = p.sut->take_buffers();
    p.sut.reset();  // before its Session
    p.session.reset();
    // Only this pool holds the arena now, and nothing but the buffers is in use (rewind checks).
    if (p.host.arena.use_count() == 1 && p.host.arena->rewind(p.host.mark))
        hosts_.push_back(std::move(p.host));
}

std::optional<QuietPeriods::Late> QuietPeriods::judge(bool all) {
    // Parked in the order their adapters closed, with one period: their ends are in order too.
    while (!parked_.empty() &&
           (all || std::chrono::steady_clock::now() >= parked_.front().sut->quiet_until())) {
        Parked p = std::move(parked_.front());
        parked_.pop_front();
        try {
            p.sut->judge_quiet();
        } catch (const rc::detail::CaseResult& failure) {
            // A waived finding discards its sequence (counted as waived): nothing to report.
            if (failure.type == rc::detail::CaseResult::Type::Failure)
                return Late{p.tag, failure.description};
            continue;  // its arena is not reused
        }
        recycle(p);  // a clean sequence: its host memory serves the next one
    }
    return std::nullopt;
}

void QuietPeriods::clear() {
    while (!parked_.empty()) {
        parked_.front().sut.reset();  // before its Session
        parked_.pop_front();
    }
}

size_t run_sequence(const conformance::ProviderSpec& spec, const World& initial,
                    const rc::state::Commands<Command>& commands, const PropertyOptions& options,
                    const std::vector<Waiver>* waivers, std::vector<size_t>* waived,
                    QuietPeriods* quiet_periods, size_t tag) {
    Laps laps(options.times);
    size_t run = 0;
    {
        // Host memory reused only where the quiet period is judged later (the search): a clean
        // sequence's arena goes back to the pool once judged (QuietPeriods::recycle).
        const bool defer_quiet = quiet_periods != nullptr && options.quiet.count() > 0;
        Host host;
        if (defer_quiet && options.reuse_hosts &&
            conformance::CaptureSettings::from_environment().directory.empty())
            host = quiet_periods->take_host(spec, options);
        conformance::SessionOptions session_opts = session_options(options);
        session_opts.arena = host.arena;
        auto session = std::make_unique<Session>(spec, std::move(session_opts));
        laps.lap(&PhaseTimes::session);
        SutOptions sut_options;
        sut_options.drain_timeout = options.drain_timeout;
        sut_options.quiet = options.quiet;
        sut_options.defer_quiet = defer_quiet;
        sut_options.times = options.times;
        sut_options.waivers = waivers;
        sut_options.waived = waived;
        auto sut = std::make_unique<Sut>(*session, sut_options, std::move(host.buffers));
        laps.lap(&PhaseTimes::buffers);
        sut->setup();
        laps.lap(&PhaseTimes::setup);
        World state = initial;
        for (const auto& command : commands) {
            command->run(state, *sut);
            command->apply(state);
        }
        laps.lap(&PhaseTimes::commands);
        sut->teardown(state);
        run = sut->commands_run();
        if (options.log) *options.log = sut->lines();
        laps = Laps(options.times);  // the teardown timed itself
        if (sut->options.defer_quiet) {
            quiet_periods->park(std::move(session), std::move(sut), tag, std::move(host));
        } else {
            sut.reset();  // before its Session
        }
    }
    laps.lap(&PhaseTimes::destroy);
    return run;
}

PropertyOutcome check_property(const std::string& id, const conformance::ProviderSpec& spec,
                               const CommandGen& commands, const PropertyOptions& options) {
    PropertyOutcome outcome;
    std::shared_ptr<const NDK_ADAPTER_INFO> info;
    std::vector<Waiver> waivers;  // those that apply to this provider and property
    {
        Session probe(spec, session_options(options));  // the adapter's limits, for generation
        info = std::make_shared<NDK_ADAPTER_INFO>(probe.info());
        for (const auto& file : options.waiver_files)
            for (auto& w : read_waivers(file))
                if (w.applies(probe.identity(), *info, id)) waivers.push_back(std::move(w));
    }
    const World initial = initial_world(info);
    // The first failure as it happened, before shrinking: when a failure does not come back on
    // replay (timing), it is the only record of it.
    std::string first_failure;
    // The search judges quiet periods across sequences (QuietPeriods); shrinking and replays
    // wait out each sequence's period before the next, so a failure is the sequence's own.
    const bool replaying = rc::detail::configuration().reproduce.contains(id);
    bool each_own_quiet = replaying || options.quiet.count() == 0;
    QuietPeriods quiet_periods;
    std::vector<std::pair<rc::Random, int>> cases;  // the search's cases (random, size), in order
    std::optional<QuietPeriods::Late> late;         // a stray callback found after its case passed
    // Shrinking runs candidates until none fails; past its budget every candidate counts as
    // passing without being run, so RapidCheck ends with the smallest failure found by then.
    std::optional<std::chrono::steady_clock::time_point> shrink_until;
    std::string last_failure;
    bool last_run_failed = false;  // whether the last sequence run failed
    bool budget_spent = false;
    std::vector<size_t> waived(waivers.size());
    auto property = [&] {
        if (late) return;  // the search is over: the rest pass without running (see below)
        const auto sequence = *rc::state::gen::commands(initial, commands);
        if (shrink_until && std::chrono::steady_clock::now() > *shrink_until) {
            budget_spent = true;
            return;
        }
        last_run_failed = false;
        try {
            if (each_own_quiet) {
                run_sequence(spec, initial, sequence, options, &waivers, &waived);
                return;
            }
            run_sequence(spec, initial, sequence, options, &waivers, &waived, &quiet_periods,
                         cases.size() - 1);
            late = quiet_periods.judge(false);
        } catch (const rc::detail::CaseResult& failure) {
            if (failure.type != rc::detail::CaseResult::Type::Failure) throw;
            last_failure = failure.description;  // while shrinking: the smallest so far
            last_run_failed = true;
            if (first_failure.empty()) {
                first_failure = failure.description;
                shrink_until = std::chrono::steady_clock::now() + options.shrink_budget;
            }
            each_own_quiet = true;  // shrinking follows
            quiet_periods.clear();
            throw;
        }
    };
    const rc::detail::Property base = rc::detail::toProperty(property);
    // The search's cases are recorded as they are drawn, so that a case found failing after it
    // passed (its quiet period judged later) can be shrunk, and replayed, as itself.
    const rc::detail::Property recorded([&](const rc::Random& random, int size) {
        cases.emplace_back(random, size);
        return base(random, size);
    });
    rc::detail::TestMetadata metadata;
    metadata.id = id;
    metadata.description = id;
    rc::detail::TestParams params;
    params.seed = options.seed;
    params.maxSuccess = options.tests;
    params.maxSize = options.max_size;
    params.disableShrinking = !options.shrink;
    QuietListener listener;
    auto result = rc::detail::checkProperty(replaying ? base : recorded, metadata, params, listener,
                                            rc::detail::configuration().reproduce);
    if (!each_own_quiet && !late) late = quiet_periods.judge(true);  // the last periods
    if (late && result.is<rc::detail::SuccessResult>()) {
        // A case passed and its quiet period then saw a stray callback: that case again, with
        // its own quiet period, shrunk as RapidCheck shrinks; the reproduce string names it.
        first_failure = late->description;
        shrink_until = std::chrono::steady_clock::now() + options.shrink_budget;
        const auto [random, size] = cases.at(late->tag);
        const int passed_before = int(late->tag);
        each_own_quiet = true;
        late.reset();
        const rc::detail::Property again([&, random = random, size = size](const rc::Random&, int) {
            return base(random, size);
        });
        rc::detail::TestParams once = params;
        once.maxSuccess = 1;
        result = rc::detail::checkProperty(again, metadata, once, listener);
        if (result.is<rc::detail::FailureResult>()) {
            auto& failure = result.get<rc::detail::FailureResult>();
            failure.numSuccess = passed_before;
            failure.reproduce.random = random;
            failure.reproduce.size = size;
        } else {  // it did not fail again (timing): the failure as first seen, unshrunk
            rc::detail::FailureResult failure;
            failure.numSuccess = passed_before;
            failure.description = "the case passed when replayed with its own quiet period";
            failure.reproduce = rc::detail::Reproduce{random, size, {}};
            result = failure;
        }
    }
    for (size_t i = 0; i < waivers.size(); ++i)
        if (waived[i])
            outcome.waived.push_back(std::to_string(waived[i]) +
                                     " sequences ended at a finding waived by " + waivers[i].where +
                                     ": " + waivers[i].reason);
    if (result.is<rc::detail::SuccessResult>()) {
        outcome.passed = true;
        outcome.sequences = result.get<rc::detail::SuccessResult>().numSuccess;
    } else if (result.is<rc::detail::FailureResult>()) {
        const auto& failure = result.get<rc::detail::FailureResult>();
        outcome.sequences = failure.numSuccess;
        // RapidCheck adopts every failing candidate while it shrinks, so the last failure that
        // ran is the smallest one. It then runs that case once more to describe it; a failure
        // that depends on timing may not come back on that run, and a shrink cut short by its
        // budget ends on a candidate that was not run at all. Either way the description is the
        // smallest failure's own, from the run in which it failed.
        const bool rerun_passed = !budget_spent && !last_run_failed && !last_failure.empty();
        outcome.message = last_failure.empty() ? failure.description : last_failure;
        outcome.rules = failure_rules(outcome.message);
        if (outcome.rules.empty()) outcome.rules = failure_rules(first_failure);
        if (last_failure.empty() && !first_failure.empty())  // a late failure that did not recur
            outcome.message +=
                "\nthe failure as first seen (not shrunk):\n" +
                std::regex_replace(first_failure, std::regex("minimal sequence \\("), "sequence (");
        std::smatch m;
        if (std::regex_search(outcome.message, m, std::regex(R"(\((\d+) calls after setup\))")))
            outcome.shrunk_calls = std::stoi(m[1]);
        if (rerun_passed)
            outcome.message +=
                "\nthe smallest case above did not fail again when RapidCheck ran it once more to "
                "describe it: its failure depends on timing (replay it a few times)\n";
        if (budget_spent) {
            outcome.shrink_cut = true;
            outcome.message += "\nshrinking stopped at its budget of " +
                               std::to_string(options.shrink_budget.count()) +
                               " ms: the sequence above is the smallest failing one found by "
                               "then, perhaps not minimal\n";
        }
        rc::detail::Configuration replay;
        replay.reproduce[id] = failure.reproduce;
        outcome.reproduce = rc::detail::configToMinimalString(replay);
    } else {
        std::ostringstream os;
        rc::detail::printResultMessage(result, os);
        outcome.message = os.str();
    }
    return outcome;
}

}  // namespace ndkct::properties
