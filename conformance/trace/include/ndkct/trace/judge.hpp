// ndkct/trace/judge.hpp: the oracle over a trace (`ndkct check-trace`).
//
// A Judge is the same check-mode reference model the live harness uses, fed from the records
// of a trace instead of a running provider: every call goes to the oracle through the same
// translations (ndkct/model/translate.hpp: MDL chains rebuilt from their PFN runs, SGE lists,
// socket addresses), and what the oracle does not see is judged by the harness's own checks
// (ndkct/conformance/observation.hpp). Verdicts and rule IDs are therefore a live run's.
//
// Memory: the trace carries no arena, only digests (or bytes) of what requests read and where
// they landed. The Judge keeps a shadow of the pages the trace names: a request's source is
// written there before its call is judged, and what landed before its entry is judged, so the
// oracle's byte comparisons see what the provider saw. From digests alone the shadow holds a
// stand-in expanded from each digest (equal digests give equal bytes); a request whose source
// overlaps bytes still landing is then not judged where it lands (the stand-ins could not
// compose), nor is any landing the trace could not digest.
//
// Records are fed one at a time (record()), so a trace can be judged as it arrives.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ndkct/model/verdict.hpp"
#include "ndkct/trace/reader.hpp"

namespace ndkct::trace {

struct JudgeOptions {
    std::string profile;           // empty: the trace's (NDKT_TAG_PROFILE), else "default"
    long long watchdog_ms = 1000;  // GEN-IRQL-01: as the live harness's hook watchdog
    // GEN-ASYNC-01: a completion later than this is one the live harness gave up waiting for
    // (SessionOptions::callback_timeout); it is not applied, as it was not live.
    long long callback_timeout_ms = 10000;
};

// One violation, and the record that shows it.
struct Finding {
    model::Violation violation;
    uint64_t record = 0, offset = 0;
};

struct Verdicts {
    std::vector<Finding> findings;
    uint64_t records = 0, calls = 0, callbacks = 0, completions = 0;
    uint64_t unjudged_landings = 0;  // results whose landed bytes the trace could not show
    // Posts whose source bytes the trace could not show (unresolved, over the capture's digest
    // limit, or not composable from digests): where their bytes land goes unjudged too.
    uint64_t unjudged_posts = 0;
    uint64_t unknown_records = 0;  // kinds of a later minor version, skipped
    bool ended = false;            // the END record was read
    // Why judging stopped before the trace's end ("" when it did not), and where.
    std::string stopped;
    uint64_t stopped_record = 0, stopped_offset = 0;
    std::vector<std::string> notes;       // things worth saying that are not violations
    bool failed() const;                  // a finding that is not a warning
    model::RuleIds failed_rules() const;  // the rule each failing finding judged (its first)
};

class Judge {
  public:
    // Throws std::runtime_error when the profile cannot be loaded.
    explicit Judge(const Header& header, JudgeOptions options = {});
    ~Judge();
    Judge(const Judge&) = delete;
    Judge& operator=(const Judge&) = delete;

    // Judges one record; false once judging has stopped (see Verdicts::stopped).
    bool record(const Record& r);
    // The stream is over: `reader` says whether it ended cleanly or where it was damaged.
    void finish(const Reader& reader);
    const Verdicts& verdicts() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A whole trace, bytes in, verdicts out. Never throws: a file that cannot be read or judged is
// a Verdicts with `stopped` saying why (at offset 0 when nothing could be read).
Verdicts check(std::span<const uint8_t> bytes, const JudgeOptions& options = {},
               Header* header = nullptr);
Verdicts check_file(const std::string& path, const JudgeOptions& options = {},
                    Header* header = nullptr);

}  // namespace ndkct::trace
