// Traces (spec/TRACE.md) for Python: a trace file's records, readably and as fields, and the
// oracle's verdicts over it (what ./ndkct trace dump and ./ndkct check-trace give).
#include "core.hpp"
#include "ndkct/trace/dump.hpp"
#include "ndkct/trace/judge.hpp"
#include "ndkct/trace/reader.hpp"

namespace ndkct::python {

namespace {

// Every record of the file: its dump line and its fields (record_json), and, for a damaged or
// unreadable file, where and why reading stopped (the records before it are kept).
py::dict read_trace(const std::string& path) {
    std::vector<uint8_t> bytes;
    std::string why;
    py::dict out;
    py::list records;
    out["records"] = records;
    out["header"] = py::none();
    out["problem"] = py::none();
    if (!trace::read_file(path, bytes, why)) {
        out["problem"] = why;
        return out;
    }
    trace::Reader reader;
    reader.feed(bytes.data(), bytes.size());
    reader.finish();
    trace::Record r;
    py::object loads = py::module_::import("json").attr("loads");
    while (reader.next(r) == trace::Reader::Next::record) {
        py::dict record = loads(trace::record_json(r));
        record["line"] = trace::dump_record(r);
        // What the record is, by its kind's class (the "kind" field is the number itself).
        uint16_t kind_class = NDKT_KIND_CLASS(r.head.kind);
        record["type"] = kind_class == NDKT_KIND_CALL       ? "call"
                         : kind_class == NDKT_KIND_CALLBACK ? "callback"
                                                            : "meta";
        records.append(record);
    }
    if (reader.has_header()) out["header"] = trace::dump_header(reader.header());
    if (reader.problem()) out["problem"] = reader.problem()->describe();
    return out;
}

py::dict check_trace(const std::string& path, const std::string& profile) {
    trace::JudgeOptions options;
    options.profile = profile;
    trace::Verdicts v = trace::check_file(path, options);
    py::list findings;
    for (const trace::Finding& f : v.findings) {
        py::dict finding;
        finding["violation"] = f.violation;
        finding["record"] = f.record;
        finding["offset"] = f.offset;
        findings.append(finding);
    }
    py::dict out;
    out["findings"] = findings;
    out["records"] = v.records;
    out["calls"] = v.calls;
    out["callbacks"] = v.callbacks;
    out["completions"] = v.completions;
    out["unjudged_landings"] = v.unjudged_landings;
    out["unjudged_posts"] = v.unjudged_posts;
    out["ended"] = v.ended;
    out["stopped"] = v.stopped.empty() ? py::object(py::none()) : py::str(v.stopped);
    out["stopped_record"] = v.stopped_record;
    out["stopped_offset"] = v.stopped_offset;
    py::list notes;
    for (const std::string& note : v.notes)
        notes.append(note);
    out["notes"] = notes;
    return out;
}

}  // namespace

void bind_trace(py::module_& m) {
    m.def("read_trace", &read_trace, py::arg("path"),
          "A trace file's header (dump text) and records (each its fields as a dict, as "
          "`ndkct trace dump --json` gives them, and its dump line); `problem`: where and why "
          "reading stopped, or None.");
    m.def("check_trace", &check_trace, py::arg("path"), py::arg("profile") = "",
          "The oracle over a trace (as ./ndkct check-trace judges it): findings (violation, "
          "record number, offset), counts, and where judging stopped, if it did. Never raises "
          "for a bad file: `stopped` says why.");
}

}  // namespace ndkct::python
