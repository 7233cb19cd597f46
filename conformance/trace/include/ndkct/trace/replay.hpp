// ndkct/trace/replay.hpp: a trace's calls again, against another provider (`ndkct replay`).
//
// The recorded calls are issued in the recorded order through a Session (conformance/harness),
// so the live oracle judges provider P exactly as in a run; the replay also compares what P
// answers with what the recording says (final statuses, completions, tokens, connection data)
// and reports each difference at the record where it shows.
//
// What is remapped: object handles (recorded pointer -> P's object), memory tokens (recorded
// token -> P's token for the same MR, MW or PD), logical addresses (recorded LAM pages -> P's,
// page by page), listener ports (recorded port -> the one P picked). Memory: the arena has the
// recording's page count and every PFN, MDL and VA label of the trace is used as recorded; the
// bytes a request reads are written into P's arena from the source DATA blocks before it is
// posted, so a trace captured without source bytes (NDKCAP_SOURCE_BYTES, NDKCT_CAPTURE_BYTES=1)
// is refused, naming the first request whose bytes it lacks. Calls the recording made inside
// provider callbacks are made from the replaying thread; callbacks are awaited, not replayed.
#pragma once

#include <string>
#include <vector>

#include "ndkct/model/verdict.hpp"

namespace ndkct::trace {

struct ReplayOptions {
    std::string provider;  // a provider spec (model:seed=N, lib:PATH, verbs)
    std::string profile;   // empty: the trace's
    bool require_bytes = true;
};

struct Difference {
    uint64_t record = 0;
    std::string call;  // the NDK function
    std::string what;  // "recorded STATUS_SUCCESS, replayed STATUS_ACCESS_VIOLATION"
};

struct ReplayResult {
    bool refused = false;  // nothing was replayed: `refusal` says why
    std::string refusal;
    uint64_t calls = 0, skipped = 0, moved_out_of_callbacks = 0;
    std::vector<Difference> differences;
    model::Verdict verdict;  // the live oracle's, on provider P
    std::string provider_name;
    std::vector<std::string> notes;
};

ReplayResult replay_file(const std::string& path, const ReplayOptions& options);

// `ndkct-trace replay FILE --provider SPEC [--profile P] [--json OUT]`.
int replay_main(int argc, char** argv);

}  // namespace ndkct::trace
