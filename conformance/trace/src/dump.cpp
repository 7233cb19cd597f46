// Decoding records by the format's definition (spec/trace/trace-format.json, embedded), for
// `ndkct trace dump` and for the test that holds the definition and the code to each other.
#include "ndkct/trace/dump.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "ndkct/spec/embedded.hpp"
#include "ndkct/spec/hex.hpp"
#include "ndkct/spec/names.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::trace {

namespace {

using nlohmann::json;

struct Field {
    std::string name, type;
    std::string count_field;   // array length from an earlier field
    int64_t count_fixed = -1;  // or a number (bytes: exactly that many)
    std::string when_field;
    uint64_t when_mask = 0;
};

struct Kind {
    std::string name, cls;
    uint32_t function = 0;
    std::vector<Field> args, outcome, fields;
};

struct Definition {
    std::map<std::string, std::vector<Field>> structs;
    std::map<uint16_t, Kind> kinds;
    std::map<uint16_t, std::string> tags;
    json raw;
};

std::vector<Field> fields_of(const json& list) {
    std::vector<Field> out;
    for (const auto& f : list) {
        Field x;
        x.name = f.at("name").get<std::string>();
        x.type = f.at("type").get<std::string>();
        if (f.contains("count")) {
            if (f["count"].is_string())
                x.count_field = f["count"].get<std::string>();
            else
                x.count_fixed = f["count"].get<int64_t>();
        }
        if (f.contains("when")) {
            x.when_field = f["when"].at("field").get<std::string>();
            x.when_mask = f["when"].at("mask").get<uint64_t>();
        }
        out.push_back(std::move(x));
    }
    return out;
}

const Definition& definition() {
    static const Definition def = [] {
        auto text = spec::embedded_spec_file("trace/trace-format.json");
        if (!text) throw std::runtime_error("trace/trace-format.json is not compiled in");
        Definition d;
        d.raw = json::parse(*text);
        for (const auto& [name, list] : d.raw.at("structs").items())
            d.structs[name] = fields_of(list);
        for (const auto& r : d.raw.at("records")) {
            Kind k;
            k.name = r.at("name").get<std::string>();
            k.cls = r.at("class").get<std::string>();
            if (r.contains("function")) k.function = r["function"].get<uint32_t>();
            if (r.contains("args")) k.args = fields_of(r["args"]);
            if (r.contains("outcome")) k.outcome = fields_of(r["outcome"]);
            if (r.contains("fields")) k.fields = fields_of(r["fields"]);
            d.kinds[r.at("kind").get<uint16_t>()] = std::move(k);
        }
        for (const auto& t : d.raw.at("tags"))
            d.tags[t.at("tag").get<uint16_t>()] = t.at("name").get<std::string>();
        return d;
    }();
    return def;
}

// Walks fields over a body into JSON; throws std::runtime_error naming the field that does not
// fit.
class Walker {
  public:
    Walker(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}

    json fields(const std::vector<Field>& list) {
        json out = json::object();
        for (const auto& f : list) {
            if (!f.when_field.empty()) {
                uint64_t v = out.contains(f.when_field) ? out[f.when_field].get<uint64_t>() : 0;
                if (!(v & f.when_mask)) continue;
            }
            if (f.type == "bytes") {
                size_t n = f.count_fixed >= 0 ? static_cast<size_t>(f.count_fixed)
                                              : out.at(f.count_field).get<size_t>();
                out[f.name] = bytes(n, f.name);
                continue;
            }
            if (f.count_fixed >= 0 || !f.count_field.empty()) {
                size_t n = f.count_fixed >= 0 ? static_cast<size_t>(f.count_fixed)
                                              : out.at(f.count_field).get<size_t>();
                if (n > static_cast<size_t>(end_ - p_))
                    throw std::runtime_error("field " + f.name + " claims " + std::to_string(n) +
                                             " elements, more than the body holds");
                json elements = json::array();
                for (size_t i = 0; i < n; ++i)
                    elements.push_back(value(f.type, f.name));
                out[f.name] = std::move(elements);
                continue;
            }
            out[f.name] = value(f.type, f.name);
        }
        return out;
    }

    json value(const std::string& type, const std::string& name) {
        if (type == "u8") return take<uint8_t>(name);
        if (type == "u16") return take<uint16_t>(name);
        if (type == "u32") return take<uint32_t>(name);
        if (type == "u64") return take<uint64_t>(name);
        if (type == "i32") return take<int32_t>(name);
        auto it = definition().structs.find(type);
        if (it == definition().structs.end())
            throw std::runtime_error("the definition has no type " + type);
        return fields(it->second);
    }

    json bytes(size_t n, const std::string& name) {
        size_t padded = (n + 7) & ~size_t{7};
        if (padded > static_cast<size_t>(end_ - p_))
            throw std::runtime_error("field " + name + " (" + std::to_string(n) +
                                     " bytes) runs past the end of the record");
        std::string hex;
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; ++i) {
            hex += digits[p_[i] >> 4];
            hex += digits[p_[i] & 15];
        }
        p_ += padded;
        return hex;
    }

    size_t left() const { return static_cast<size_t>(end_ - p_); }

  private:
    template <typename T>
    json take(const std::string& name) {
        if (sizeof(T) > static_cast<size_t>(end_ - p_))
            throw std::runtime_error("field " + name + " runs past the end of the record");
        T v;
        std::memcpy(&v, p_, sizeof v);
        p_ += sizeof v;
        return v;
    }
    const uint8_t* p_;
    const uint8_t* end_;
};

// The record's fields by the definition; `leftover` gets the bytes no field took.
json decode_fields(const Record& r, size_t& leftover) {
    const auto& def = definition();
    auto it = def.kinds.find(r.head.kind);
    if (it == def.kinds.end())
        throw std::runtime_error("the definition has no kind " + std::to_string(r.head.kind));
    Walker w(r.body, r.body_size);
    json out;
    if (it->second.cls == "call") {
        out = w.fields(it->second.args);
        json outcome = w.fields(it->second.outcome);
        for (auto& [k, v] : outcome.items())
            out[k] = v;
    } else {
        out = w.fields(it->second.fields);
        if (r.head.kind == NDKT_META_RETURN) {  // followed by the function's outcome
            uint32_t function = out["function"].get<uint32_t>();
            auto call = def.kinds.find(static_cast<uint16_t>(NDKT_KIND_CALL | function));
            if (call != def.kinds.end()) {
                json outcome = w.fields(call->second.outcome);
                for (auto& [k, v] : outcome.items())
                    out[k] = v;
            }
        }
    }
    leftover = w.left();
    return out;
}

using spec::hex;

bool hex_field(const std::string& name) {
    static const char* const names[] = {"object",
                                        "context",
                                        "request",
                                        "qp",
                                        "mr",
                                        "mw",
                                        "target",
                                        "srq",
                                        "lam",
                                        "receive_cq",
                                        "initiator_cq",
                                        "qp_context",
                                        "handle",
                                        "listener",
                                        "cq",
                                        "connector",
                                        "shared_endpoint",
                                        "virtual_address",
                                        "base_virtual_address",
                                        "remote_address",
                                        "address",
                                        "start_va",
                                        "mapped_system_va",
                                        "digest",
                                        "request_context",
                                        "pfn",
                                        "first_pfn",
                                        "pages",
                                        "adapter",
                                        "flags",
                                        "remote_token",
                                        "token",
                                        "type_specific"};
    for (const char* n : names)
        if (name == n) return true;
    return false;
}

std::string address_text(const json& a) {
    if (!a.value("present", 0)) return "NULL";
    std::string bytes = a.value("bytes", std::string());
    std::vector<uint8_t> raw(bytes.size() / 2);
    for (size_t i = 0; i < raw.size(); ++i)
        raw[i] = static_cast<uint8_t>(std::stoi(bytes.substr(2 * i, 2), nullptr, 16));
    char text[INET6_ADDRSTRLEN + 16] = "?";
    if (raw.size() >= 2) {
        uint16_t family;
        std::memcpy(&family, raw.data(), 2);
        if (family == AF_INET && raw.size() >= sizeof(sockaddr_in)) {
            sockaddr_in in;
            std::memcpy(&in, raw.data(), sizeof in);
            char ip[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &in.sin_addr, ip, sizeof ip);
            std::snprintf(text, sizeof text, "%s:%u", ip, ntohs(in.sin_port));
        } else if (family == AF_INET6 && raw.size() >= sizeof(sockaddr_in6)) {
            sockaddr_in6 in6;
            std::memcpy(&in6, raw.data(), sizeof in6);
            char ip[INET6_ADDRSTRLEN];
            inet_ntop(AF_INET6, &in6.sin6_addr, ip, sizeof ip);
            std::snprintf(text, sizeof text, "[%s]:%u", ip, ntohs(in6.sin6_port));
        } else {
            std::snprintf(text, sizeof text, "family %u", family);
        }
    }
    return std::string(text) + " (" + std::to_string(a.value("length", 0)) + " bytes)";
}

std::string text_of(const std::string& name, const json& v, int depth = 0);

std::string data_text(const json& d) {
    uint32_t flags = d.value("flags", 0u);
    if (flags & NDKT_DATA_OVER_LIMIT)
        return "not digested: " + std::to_string(d.value("length", 0u)) +
               " bytes, over the capture's digest limit";
    if (flags & NDKT_DATA_UNRESOLVED) return "unresolved";
    std::string s = "digest " + hex(d.value("digest", uint64_t{0})) + ", " +
                    std::to_string(d.value("length", 0u)) + " bytes in " +
                    std::to_string(d.value("piece_count", 0u)) + " piece(s)";
    if (d.contains("pieces") && !d["pieces"].empty()) {
        s += " [";
        size_t shown = 0;
        for (const auto& p : d["pieces"]) {
            if (shown++) s += ", ";
            if (shown > 4) {
                s += "...";
                break;
            }
            s += "pfn " + hex(p.value("pfn", uint64_t{0})) + "+" +
                 std::to_string(p.value("offset", 0u)) + ":" + std::to_string(p.value("size", 0u));
        }
        s += "]";
    }
    if (flags & NDKT_DATA_BYTES) s += " with the bytes";
    return s;
}

std::string text_of(const std::string& name, const json& v, int depth) {
    if (v.is_number_integer() || v.is_number_unsigned()) {
        if (name == "status" || name.ends_with("_status"))
            return spec::status_name(static_cast<NTSTATUS>(v.get<int64_t>()));
        // NDKPI numbers with their names: a result's Type (inside the result), NdkArmCq's
        // Type (an argument), a request's and a region's Flags.
        auto u32 = [&] { return static_cast<uint32_t>(v.get<int64_t>()); };
        if (name == "type")
            return depth ? spec::operation_type_text(u32()) : spec::notify_type_text(u32());
        if (name == "op_flags") return spec::op_flags_text(u32());
        if (name == "mr_flags") return spec::mr_flags_text(u32());
        if (hex_field(name)) return hex(v.get<uint64_t>());
        return std::to_string(v.get<int64_t>());
    }
    if (v.is_string()) {
        std::string s = v.get<std::string>();
        if (s.size() > 64)
            return s.substr(0, 64) + "...(" + std::to_string(s.size() / 2) + " bytes)";
        return s.empty() ? "-" : s;
    }
    if (v.is_array()) {
        std::string s = "[";
        size_t i = 0;
        for (const auto& x : v) {
            if (i) s += ", ";
            if (++i > 8) {
                s += "... " + std::to_string(v.size()) + " in all";
                break;
            }
            s += text_of(name, x, depth + 1);
        }
        return s + "]";
    }
    if (v.is_object()) {
        if (v.contains("digest") && v.contains("role")) return data_text(v);
        if (v.contains("present") && v.contains("captured")) return address_text(v);
        if (v.contains("present") && v.contains("bytes") && v.contains("length"))  // BLOB
            return v["present"].get<uint64_t>() ? text_of("bytes", v["bytes"], depth + 1) : "NULL";
        if (v.contains("count") && v.contains("data") && v["data"].is_array())  // DATAOPT
            return v["data"].empty() ? "-" : data_text(v["data"][0]);
        std::string s = "{";
        bool first = true;
        for (const auto& [k, x] : v.items()) {
            if (k.starts_with("reserved")) continue;
            if (!first) s += ", ";
            first = false;
            s += k + " " + text_of(k, x, depth + 1);
        }
        return s + "}";
    }
    return v.dump();
}

std::string flags_text(uint8_t flags) {
    std::string s;
    if (flags & NDKT_FLAG_IN_CALLBACK) s += " in-callback";
    if (flags & NDKT_FLAG_NESTED) s += " NESTED";
    if (flags & NDKT_FLAG_CALL_PENDING) s += " before-its-call-returned";
    if (flags & NDKT_FLAG_EXPIRED) s += " written-before-return";
    return s;
}

}  // namespace

std::string dump_header(const Header& h) {
    std::string s;
    auto line = [&](const char* name, const std::string& value) {
        if (!value.empty()) s += std::string(name) + ": " + value + "\n";
    };
    line("format", std::to_string(h.major) + "." + std::to_string(h.minor));
    line("writer", h.writer);
    line("label", h.label);
    line("provider", h.provider_name + " " + h.provider_version);
    line("description", h.provider_description);
    line("provider spec", h.provider_spec);
    line("profile", h.profile);
    line("platform", h.platform);
    line("NDKPI", std::to_string(h.ndk_version.Major) + "." + std::to_string(h.ndk_version.Minor));
    if (h.adapter_info)
        line("NDK_ADAPTER_INFO",
             std::to_string(h.adapter_info_size) + " bytes (VendorId " +
                 hex(h.adapter_info->VendorId) + ", DeviceId " + hex(h.adapter_info->DeviceId) +
                 ", MaxCqDepth " + std::to_string(h.adapter_info->MaxCqDepth) + ", FRMRPageCount " +
                 std::to_string(h.adapter_info->FRMRPageCount) + ", ...)");
    line("adapter", hex(h.adapter));
    line("page size", std::to_string(h.page_size));
    line("PFN space", std::to_string(h.pfn_space));
    line("ticks per second", std::to_string(h.ticks_per_second));
    std::string flags;
    if (h.capture_flags & NDKT_CAPTURE_DIGESTS) flags += " digests";
    if (h.capture_flags & NDKT_CAPTURE_SOURCE_BYTES) flags += " source-bytes";
    if (h.capture_flags & NDKT_CAPTURE_LANDED_BYTES) flags += " landed-bytes";
    if (h.capture_flags & NDKT_CAPTURE_IRQL) flags += " irql";
    if (h.capture_flags & NDKT_CAPTURE_TIMES) flags += " times";
    if (h.capture_flags & NDKT_CAPTURE_DATA_PATH_UNTIMED) flags += " data-path-untimed";
    line("capture", flags.empty() ? "-" : flags.substr(1));
    if (h.digest_limit)
        line("digest limit", std::to_string(h.digest_limit) + " bytes (longer blocks not read)");
    line("seed", std::to_string(h.seed));
    return s;
}

std::string dump_record_text(const Record& r);

std::string dump_record(const Record& r) {
    try {
        return dump_record_text(r);
    } catch (const std::exception& error) {
        return "#" + std::to_string(r.index) + " " + kind_name(r.head.kind) + ": cannot show (" +
               error.what() + ")";
    }
}

std::string dump_record_text(const Record& r) {
    std::string s = "#" + std::to_string(r.index) + " @" + std::to_string(r.offset) + " t" +
                    std::to_string(r.head.thread) + " seq " + std::to_string(r.head.seq);
    if (r.head.return_delta) s += "+" + std::to_string(r.head.return_delta);
    s += flags_text(r.head.flags) + " ";
    json fields;
    try {
        size_t leftover = 0;
        fields = decode_fields(r, leftover);
    } catch (const std::exception& error) {
        return s + kind_name(r.head.kind) + ": cannot decode (" + error.what() + ")";
    }
    const auto& def = definition();
    const Kind& k = def.kinds.at(r.head.kind);
    auto list = [&](const std::vector<Field>& names, bool skip_object) {
        std::string out;
        for (const auto& f : names) {
            if (!fields.contains(f.name) || f.name.starts_with("reserved")) continue;
            if (skip_object && f.name == "object") continue;
            if (!out.empty()) out += ", ";
            out += f.name + " " + text_of(f.name, fields[f.name]);
        }
        return out;
    };
    if (k.cls == "call") {
        s += k.name + "(" +
             (fields.contains("object") ? hex(fields["object"].get<uint64_t>()) : "") +
             (k.args.size() > 1 ? ", " : "") + list(k.args, true) + ")";
        std::string outcome = list(k.outcome, false);
        if (!outcome.empty()) s += " -> " + outcome;
    } else if (k.cls == "callback") {
        s += "<- " + k.name + "(" + list(k.fields, false) + ")";
    } else {
        s += "-- " + k.name + " " + list(k.fields, false);
    }
    return s;
}

std::string record_json(const Record& r) {
    json out;
    out["index"] = r.index;
    out["offset"] = r.offset;
    out["kind"] = r.head.kind;
    out["name"] = kind_name(r.head.kind);
    out["flags"] = r.head.flags;
    out["thread"] = r.head.thread;
    out["irql"] = r.head.irql;
    out["parent"] = r.head.parent;
    out["seq"] = r.head.seq;
    out["return_delta"] = r.head.return_delta;
    out["time"] = r.head.time;
    out["duration"] = r.head.duration;
    try {
        size_t leftover = 0;
        out["fields"] = decode_fields(r, leftover);
    } catch (const std::exception& error) {
        out["error"] = error.what();
    }
    return out.dump();
}

std::string check_against_definition(const Record& r) {
    try {
        size_t leftover = 0;
        decode_fields(r, leftover);
        if (leftover)
            return std::to_string(leftover) + " bytes of the body are not in the definition";
        return "";
    } catch (const std::exception& error) {
        return error.what();
    }
}

std::string check_definition() {
    try {
        const auto& def = definition();
        std::string problems;
        if (def.raw.at("version").at("major").get<int>() != NDKT_VERSION_MAJOR ||
            def.raw.at("version").at("minor").get<int>() != NDKT_VERSION_MINOR)
            problems += "the definition's version is not trace_format.h's\n";
        if (def.raw.at("frame_magic").get<uint32_t>() != NDKT_FRAME_MAGIC)
            problems += "frame_magic differs from NDKT_FRAME_MAGIC\n";
        for (uint32_t f = 1; f < NDKT_FN_COUNT; ++f) {
            auto it = def.kinds.find(static_cast<uint16_t>(NDKT_KIND_CALL | f));
            if (it == def.kinds.end())
                problems += "function " + std::to_string(f) + " has no record kind\n";
            else if (it->second.name != function_name(f))
                problems += "function " + std::to_string(f) + " is " + it->second.name +
                            " in the definition, " + function_name(f) + " in the code\n";
        }
        for (uint32_t cb = 1; cb < NDKT_CB_COUNT; ++cb) {
            auto it = def.kinds.find(static_cast<uint16_t>(NDKT_KIND_CALLBACK | cb));
            if (it == def.kinds.end() ||
                it->second.name != kind_name(static_cast<uint16_t>(NDKT_KIND_CALLBACK | cb)))
                problems += "callback " + std::to_string(cb) + " differs\n";
        }
        for (uint16_t m :
             {NDKT_META_LOSS, NDKT_META_MARK, NDKT_META_ADAPTER_CLOSE, NDKT_META_RETURN,
              NDKT_META_END, NDKT_META_DRAINED, NDKT_META_OVERDUE, NDKT_META_UNNOTIFIED}) {
            auto it = def.kinds.find(m);
            if (it == def.kinds.end() || it->second.name != kind_name(m))
                problems += "meta record " + std::to_string(m) + " differs\n";
        }
        for (const auto& r : def.raw.at("records"))
            if (r.at("class") == "call" && (r.at("recorded") == "entry") !=
                                               recorded_at_entry(r.at("function").get<uint32_t>()))
                problems +=
                    r.at("name").get<std::string>() + ": 'recorded' differs from the code's\n";
        if (def.tags.size() != NDKT_TAG_COUNT - 1)
            problems += "the definition has " + std::to_string(def.tags.size()) +
                        " header tags, trace_format.h " + std::to_string(NDKT_TAG_COUNT - 1) + "\n";
        return problems;
    } catch (const std::exception& error) {
        return error.what();
    }
}

}  // namespace ndkct::trace
