// property.hpp: running one state-machine property against one provider with RapidCheck, and
// what came of it (for the gtest report and the benchmark).
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "machine.hpp"

namespace ndkct::properties {

// A command generator: for a World, a generator of one command valid in it.
using CommandGen = std::function<rc::Gen<std::shared_ptr<const Command>>(const World&)>;

// A machine made of the listed commands (a type may be listed more than once: a weight).
template <typename... Commands>
CommandGen machine() {
    return rc::state::gen::execOneOfWithArgs<Commands...>();
}

struct PropertyOptions {
    uint64_t seed = 1;
    int tests = 100;    // sequences to try
    int max_size = 50;  // a sequence has 1..max_size+1 commands (RapidCheck's size)
    std::chrono::milliseconds callback_timeout{5000};
    std::chrono::milliseconds drain_timeout{1000};
    std::chrono::microseconds quiet{1000};  // SutOptions::quiet
    bool shrink = true;
    // How long shrinking may take after the first failure: then the smallest counterexample
    // found so far is reported (a test's time limit must not turn a failure into a bare
    // timeout).
    std::chrono::milliseconds shrink_budget{20000};
    // Waiver files (conformance/waivers format): the provider's known findings (waivers.hpp).
    std::vector<std::string> waiver_files;
    PhaseTimes* times = nullptr;  // SutOptions::times
    // The search's sequences reuse host memory (HostPool below); --ndkct_fresh_hosts: never.
    bool reuse_hosts = true;
    // The log of each sequence run (the calls and their answers, as a failure prints them),
    // filled once its teardown ran; for tests that compare runs (nullptr elsewhere).
    std::vector<std::string>* log = nullptr;

    // --ndkct_seed=N --ndkct_tests=N --ndkct_size=N --ndkct_callback_ms=N --ndkct_drain_ms=N
    // --ndkct_quiet_us=N --ndkct_shrink_ms=N --ndkct_no_shrink --ndkct_waivers=FILE (repeatable),
    // read from the command line (unknown to gtest, so left for us).
    static const PropertyOptions& from_command_line();
};

struct PropertyOutcome {
    bool passed = false;
    int sequences = 0;               // sequences that passed before the failure (or in all)
    std::string message;             // the oracle's violation and the minimal sequence as NDK calls
    std::vector<std::string> rules;  // the rules the reported failure broke (as data)
    int shrunk_calls = -1;           // commands in the minimal sequence (after the setup)
    bool shrink_cut = false;         // shrinking stopped at its budget (may not be minimal)
    // Sequences that ended at a waived finding, one line per waiver that took any.
    std::vector<std::string> waived;
    std::string reproduce;  // RC_PARAMS value that replays exactly the minimal sequence
};

// Runs the property `id` (the ndkct ID, also RapidCheck's test ID for reproduce strings).
// An RC_PARAMS="reproduce=..." in the environment replays the case it names.
PropertyOutcome check_property(const std::string& id, const conformance::ProviderSpec& spec,
                               const CommandGen& commands, const PropertyOptions& options);

// Host memory kept across the search's sequences: an arena and the Sut's buffers on it, made
// once instead of per sequence (a memfd, its mapping, and every buffer page mapped on its own:
// a third of a sequence's fixed cost). Fresh-equivalence: a sequence that ended cleanly (its
// teardown and its quiet period judged without a finding) has closed its adapter and released
// every buffer but the Sut's; its arena is then rewound to the mark taken right after those
// buffers were made (platform::Arena::rewind: every page zeroed, placement's random sequence
// put back; refused when any other page is still in use), and the Sut copies the buffers'
// patterns in again. The next sequence's provider gets an arena whose pages, PFNs in use and
// bytes are those of a fresh arena of the same seed after the same allocations; only virtual
// addresses differ, as between two fresh ones. A sequence that failed, was waived, or whose
// quiet period saw anything drops its arena; shrinking and replays never reuse (each sequence
// as it would run alone), and with capture on (NDKCT_CAPTURE_DIR) nothing is reused.
struct Host {
    std::shared_ptr<platform::Arena> arena;
    std::array<platform::LockedBuffer, kBuffers> buffers;  // destroyed before the arena
    platform::Arena::Mark mark;                            // right after the buffers were made
};

// GEN-ASYNC-03, GEN-CB-03: the quiet period after CloseNdkAdapter, judged across sequences.
// Nothing may call back once an adapter is closed; a callback that still comes is a stray one
// of the sequence that made the adapter. Instead of waiting out each sequence's period before
// the next begins, a sequence whose adapter closed is parked (its Session and Sut kept whole:
// a late callback still finds its objects and its oracle) and judged once its period is over,
// while the next sequences run. The period is never shorter than --ndkct_quiet_us; a parked
// sequence is judged when a later one finishes, so it is often longer.
class QuietPeriods {
  public:
    struct Late {                 // a parked sequence whose quiet period saw a stray callback
        size_t tag = 0;           // the tag it was parked with (the caller's case number)
        std::string description;  // its failure, as check() describes it (the calls included)
    };
    ~QuietPeriods();
    void park(std::unique_ptr<Session> session, std::unique_ptr<Sut> sut, size_t tag,
              Host host = {});
    // Host memory for a sequence: one a clean sequence left (rewound), or a new one.
    Host take_host(const conformance::ProviderSpec& spec, const PropertyOptions& options);
    size_t hosts_made() const { return hosts_made_; }
    size_t hosts_reused() const { return hosts_reused_; }
    // Judges the parked sequences whose period is over (every one with `all`, waiting out the
    // rest); returns the first that failed. Judged sequences are released.
    std::optional<Late> judge(bool all);
    void clear();  // releases every parked sequence unjudged (a failure is already reported)
    size_t parked() const { return parked_.size(); }

  private:
    struct Parked {
        std::unique_ptr<Session> session;
        std::unique_ptr<Sut> sut;
        size_t tag;
        Host host;  // its arena and mark (the buffers are the Sut's until it is released)
    };
    void recycle(Parked& parked);
    std::deque<Parked> parked_;
    std::vector<Host> hosts_;  // rewound, ready for the next sequence
    size_t hosts_made_ = 0, hosts_reused_ = 0;
};

// One sequence: setup, the commands, teardown. Returns the number of commands run; throws on a
// violation (RapidCheck's failure), or a discard when one of `waivers` covers it (counted in
// `waived`, SutOptions). With `quiet_periods`, the quiet period after CloseNdkAdapter is not
// waited for here: the sequence is parked there (tagged `tag`).
size_t run_sequence(const conformance::ProviderSpec& spec, const World& initial,
                    const rc::state::Commands<Command>& commands, const PropertyOptions& options,
                    const std::vector<Waiver>* waivers = nullptr,
                    std::vector<size_t>* waived = nullptr, QuietPeriods* quiet_periods = nullptr,
                    size_t tag = 0);

conformance::SessionOptions session_options(const PropertyOptions& options);

}  // namespace ndkct::properties
