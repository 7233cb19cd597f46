// ndkct-trace: what the runner's check-trace, trace dump and replay commands run.
//
//   ndkct-trace check [--profile P] [--json OUT] FILE...   judge traces with the oracle
//   ndkct-trace dump [--json] [--header] FILE              every record, readably
//   ndkct-trace replay FILE --provider SPEC [--json OUT]   the calls again, against SPEC
//   ndkct-trace check-definition [FILE...]                 the format's definition against
//                                                          trace_format.h and real traces
// Exit status: 0 all judged and clean; 1 a violation (or a difference, for replay); 2 bad input
// (unreadable, damaged or future-version trace, unknown option).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "ndkct/trace/dump.hpp"
#include "ndkct/trace/judge.hpp"
#include "ndkct/trace/replay.hpp"

namespace {

using nlohmann::json;
using namespace ndkct::trace;

int usage() {
    std::cerr << "usage: ndkct-trace check [--profile P] [--json OUT] FILE...\n"
                 "       ndkct-trace dump [--json] FILE\n"
                 "       ndkct-trace replay FILE --provider SPEC [--profile P] [--json OUT]\n"
                 "       ndkct-trace check-definition [FILE...]\n";
    return 2;
}

// The dump lines of the records a finding points at, and the two before it.
std::map<uint64_t, std::string> lines_for(const std::vector<uint8_t>& bytes,
                                          const std::set<uint64_t>& wanted) {
    std::map<uint64_t, std::string> out;
    if (wanted.empty()) return out;
    Reader reader;
    reader.feed(bytes.data(), bytes.size());
    reader.finish();
    Record r;
    while (reader.next(r) == Reader::Next::record)
        if (wanted.contains(r.index)) out[r.index] = dump_record(r);
    return out;
}

json header_json(const Header& h) {
    json j;
    j["format"] = std::to_string(h.major) + "." + std::to_string(h.minor);
    j["writer"] = h.writer;
    j["label"] = h.label;
    j["provider_name"] = h.provider_name;
    j["provider_version"] = h.provider_version;
    j["provider_description"] = h.provider_description;
    j["provider_spec"] = h.provider_spec;
    j["profile"] = h.profile;
    j["platform"] = h.platform;
    j["ndk_version"] =
        std::to_string(h.ndk_version.Major) + "." + std::to_string(h.ndk_version.Minor);
    j["seed"] = h.seed;
    j["digest_limit"] = h.digest_limit;
    j["capture_flags"] = h.capture_flags;
    if (h.adapter_info) {
        const auto& i = *h.adapter_info;
        j["adapter_info"] = {
            {"Version", std::to_string(i.Version.Major) + "." + std::to_string(i.Version.Minor)},
            {"VendorId", i.VendorId},
            {"DeviceId", i.DeviceId},
            {"MaxRegistrationSize", i.MaxRegistrationSize},
            {"MaxWindowSize", i.MaxWindowSize},
            {"FRMRPageCount", i.FRMRPageCount},
            {"MaxInitiatorRequestSge", i.MaxInitiatorRequestSge},
            {"MaxReceiveRequestSge", i.MaxReceiveRequestSge},
            {"MaxReadRequestSge", i.MaxReadRequestSge},
            {"MaxTransferLength", i.MaxTransferLength},
            {"MaxInlineDataSize", i.MaxInlineDataSize},
            {"MaxInboundReadLimit", i.MaxInboundReadLimit},
            {"MaxOutboundReadLimit", i.MaxOutboundReadLimit},
            {"MaxReceiveQueueDepth", i.MaxReceiveQueueDepth},
            {"MaxInitiatorQueueDepth", i.MaxInitiatorQueueDepth},
            {"MaxSrqDepth", i.MaxSrqDepth},
            {"MaxCqDepth", i.MaxCqDepth},
            {"LargeRequestThreshold", i.LargeRequestThreshold},
            {"MaxCallerData", i.MaxCallerData},
            {"MaxCalleeData", i.MaxCalleeData},
            {"AdapterFlags", i.AdapterFlags},
            {"RdmaTechnology", static_cast<int>(i.RdmaTechnology)}};
    }
    return j;
}

int check(int argc, char** argv) {
    JudgeOptions options;
    std::string json_path;
    std::vector<std::string> files;
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--profile" && i + 1 < argc)
            options.profile = argv[++i];
        else if (a == "--json" && i + 1 < argc)
            json_path = argv[++i];
        else if (a.starts_with("--"))
            return usage();
        else
            files.push_back(a);
    }
    if (files.empty()) return usage();
    std::ofstream json_out;
    if (!json_path.empty()) {
        json_out.open(json_path);
        if (!json_out) {
            std::cerr << "ndkct-trace: cannot write " << json_path << "\n";
            return 2;
        }
    }
    bool failed = false, damaged = false;
    for (const auto& path : files) {
        Header header;
        Verdicts v = ndkct::trace::check_file(path, options, &header);
        std::set<uint64_t> wanted;
        for (const auto& f : v.findings)
            for (uint64_t k = f.record >= 3 ? f.record - 3 : 0; k <= f.record + 1; ++k)
                wanted.insert(k);
        std::vector<uint8_t> bytes;
        std::string error;
        if (!wanted.empty()) read_file(path, bytes, error);  // for the records around findings
        auto lines = lines_for(bytes, wanted);
        bool bad = v.failed();
        bool broken = !v.stopped.empty();
        failed |= bad;
        damaged |= broken;
        // A trace that could not be read at all is no "ok"; one judged up to damage says so.
        const char* word = bad ? "FAIL" : !broken ? "ok" : v.records ? "STOPPED" : "ERROR";
        std::cout << path << ": " << word << " (" << v.records << " records, " << v.calls
                  << " calls, " << v.callbacks << " callbacks, " << v.completions
                  << " completions)";
        if (broken) std::cout << "; stopped at record #" << v.stopped_record << ": " << v.stopped;
        std::cout << "\n";
        for (const auto& f : v.findings)
            std::cout << "  " << (f.violation.warning ? "warning" : "oracle") << ": "
                      << f.violation.describe() << "  [record #" << f.record << " at offset "
                      << f.offset << "]\n";
        if (json_out) {
            json j;
            j["file"] = path;
            j["header"] = header_json(header);
            j["records"] = v.records;
            j["calls"] = v.calls;
            j["callbacks"] = v.callbacks;
            j["completions"] = v.completions;
            j["unjudged_landings"] = v.unjudged_landings;
            j["unjudged_posts"] = v.unjudged_posts;
            j["unknown_records"] = v.unknown_records;
            j["ended"] = v.ended;
            j["stopped"] = v.stopped;
            j["stopped_record"] = v.stopped_record;
            j["stopped_offset"] = v.stopped_offset;
            j["notes"] = v.notes;
            j["failed_rules"] = v.failed_rules();
            json findings = json::array();
            for (const auto& f : v.findings) {
                json counterexample = json::array();
                for (uint64_t k = f.record >= 3 ? f.record - 3 : 0; k <= f.record + 1; ++k)
                    if (auto it = lines.find(k); it != lines.end())
                        counterexample.push_back((k == f.record ? "> " : "  ") + it->second);
                findings.push_back({{"rules", f.violation.rules},
                                    {"message", f.violation.message},
                                    {"warning", f.violation.warning},
                                    {"record", f.record},
                                    {"offset", f.offset},
                                    {"counterexample", counterexample}});
            }
            j["findings"] = findings;
            json_out << j.dump() << "\n";
        }
    }
    return failed ? 1 : damaged ? 2 : 0;
}

int dump(int argc, char** argv) {
    bool as_json = false;
    std::string path;
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json")
            as_json = true;
        else if (a.starts_with("--") || !path.empty())
            return usage();
        else
            path = a;
    }
    if (path.empty()) return usage();
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        std::cerr << "ndkct-trace: cannot read " << path << "\n";
        return 2;
    }
    // Read as it comes, in pieces: the reader is incremental.
    Reader reader;
    std::vector<char> chunk(1 << 16);
    Record r;
    bool header_done = false;
    for (;;) {
        Reader::Next next = reader.next(r);
        if (next == Reader::Next::more) {
            file.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
            std::streamsize got = file.gcount();
            if (got > 0)
                reader.feed(chunk.data(), static_cast<size_t>(got));
            else
                reader.finish();
            continue;
        }
        if (!header_done && reader.has_header()) {
            header_done = true;
            if (as_json)
                std::cout << json{{"header", header_json(reader.header())}}.dump() << "\n";
            else
                std::cout << dump_header(reader.header()) << "\n";
        }
        if (next == Reader::Next::record) {
            std::cout << (as_json ? record_json(r) : dump_record(r)) << "\n";
            continue;
        }
        if (next == Reader::Next::error) {
            std::cout.flush();
            std::cerr << "ndkct-trace: " << path << ": " << reader.problem()->describe()
                      << " (after " << reader.records() << " records)\n";
            return 2;
        }
        return 0;  // end
    }
}

int check_definition(int argc, char** argv) {
    std::string problems = ndkct::trace::check_definition();
    size_t records = 0;
    for (int i = 0; i < argc; ++i) {
        std::vector<uint8_t> bytes;
        std::string error;
        if (!read_file(argv[i], bytes, error)) {
            problems += error + "\n";
            continue;
        }
        Reader reader;
        reader.feed(bytes.data(), bytes.size());
        reader.finish();
        Record r;
        Reader::Next next;
        while ((next = reader.next(r)) == Reader::Next::record) {
            ++records;
            std::string p = check_against_definition(r);
            if (!p.empty())
                problems += std::string(argv[i]) + ": record #" + std::to_string(r.index) + " (" +
                            kind_name(r.head.kind) + "): " + p + "\n";
        }
        if (next == Reader::Next::error)
            problems += std::string(argv[i]) + ": " + reader.problem()->describe() + "\n";
    }
    if (!problems.empty()) {
        std::cerr << problems;
        return 1;
    }
    std::cout << "the definition agrees with trace_format.h";
    if (argc) std::cout << " and decodes all " << records << " records of " << argc << " trace(s)";
    std::cout << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    std::string command = argv[1];
    try {
        if (command == "check") return check(argc - 2, argv + 2);
        if (command == "dump") return dump(argc - 2, argv + 2);
        if (command == "replay") return replay_main(argc - 2, argv + 2);

        if (command == "check-definition") return check_definition(argc - 2, argv + 2);
    } catch (const std::exception& error) {
        std::cerr << "ndkct-trace: " << error.what() << "\n";
        return 2;
    }
    return usage();
}
