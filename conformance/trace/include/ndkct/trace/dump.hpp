// ndkct/trace/dump.hpp: a trace, readably (`ndkct trace dump`), decoded by the format's own
// definition (spec/trace/trace-format.json, compiled in): every field of every record, named as
// the definition names it, so the dump is the definition at work.
#pragma once

#include <string>

#include "ndkct/trace/reader.hpp"

namespace ndkct::trace {

// The header, one "name: value" line per field.
std::string dump_header(const Header& header);

// One line: "#12 @4096 t3 NdkWrite(object 0x55d0.., context 0x10, ...) -> STATUS_SUCCESS".
// A record the definition cannot decode says so on its line (it never throws).
std::string dump_record(const Record& record);

// One JSON object: {"index", "offset", "kind", "name", "flags", "thread", "irql", "seq",
// "return_delta", "time", "duration", "fields": {...}} with every field by the definition.
std::string record_json(const Record& record);

// Decodes a record by the definition alone. Returns "" when every byte of its body is
// accounted for by its fields, else what is wrong (the definition test uses this).
std::string check_against_definition(const Record& record);

// The definition's own consistency with the numbers of trace_format.h ("" when they agree).
std::string check_definition();

}  // namespace ndkct::trace
