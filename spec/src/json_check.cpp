// Schema checking with line numbers: a SAX pass records where each value starts, a DOM pass
// validates against ndkct's JSON Schema subset.
#include <regex.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "json_internal.hpp"

namespace ndkct::spec {

std::string JsonProblem::describe(std::string_view origin) const {
    std::ostringstream out;
    out << origin;
    if (line > 0) out << ':' << line;
    out << ": ";
    if (!path.empty()) out << path << ": ";
    out << message;
    return out.str();
}

std::string describe_problems(const std::vector<JsonProblem>& problems, std::string_view origin) {
    std::string all;
    for (const auto& problem : problems) {
        if (!all.empty()) all += '\n';
        all += problem.describe(origin);
    }
    return all;
}

namespace detail {

std::string child_path(const std::string& parent, const std::string& key) {
    return parent.empty() ? key : parent + "." + key;
}

std::string child_path(const std::string& parent, size_t index) {
    return parent + "[" + std::to_string(index) + "]";
}

int ParsedJson::line_of(const std::string& path) const {
    // The nearest recorded ancestor gives a useful line for a missing child.
    std::string probe = path;
    for (;;) {
        if (auto it = lines.find(probe); it != lines.end()) return it->second;
        if (probe.empty()) return 0;
        auto cut = probe.find_last_of(".[");
        probe = cut == std::string::npos ? std::string() : probe.substr(0, cut);
    }
}

namespace {

// Input iterator that publishes how far the lexer has read, so SAX events can be given lines.
struct TrackingIterator {
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    const char* position = nullptr;
    const char** cursor = nullptr;

    reference operator*() const { return *position; }
    TrackingIterator& operator++() {
        ++position;
        *cursor = position;
        return *this;
    }
    TrackingIterator operator++(int) {
        TrackingIterator before = *this;
        ++*this;
        return before;
    }
    bool operator==(const TrackingIterator& other) const { return position == other.position; }
    bool operator!=(const TrackingIterator& other) const { return position != other.position; }
};

class LineRecorder : public nlohmann::json_sax<Json> {
  public:
    LineRecorder(std::string_view text, const char** cursor) : text_(text), cursor_(cursor) {
        line_starts_.push_back(0);
        for (size_t i = 0; i < text.size(); ++i)
            if (text[i] == '\n') line_starts_.push_back(i + 1);
    }

    std::map<std::string, int> lines;
    std::string error;
    int error_line = 0;
    int error_column = 0;
    bool refused_depth = false;  // stopped at kMaxJsonDepth, not at a syntax error

    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t&) override { return value(); }
    bool string(string_t&) override { return value(); }
    bool binary(binary_t&) override { return value(); }
    bool start_object(std::size_t) override {
        if (too_deep()) return false;
        frames_.push_back({false, 0, value_path(), {}});
        return true;
    }
    bool key(string_t& key) override {
        auto& frame = frames_.back();
        frame.key_path = child_path(frame.path, key);
        lines[frame.key_path] = current_line();
        return true;
    }
    bool end_object() override {
        frames_.pop_back();
        return true;
    }
    bool start_array(std::size_t) override {
        if (too_deep()) return false;
        frames_.push_back({true, 0, value_path(), {}});
        return true;
    }
    bool end_array() override {
        frames_.pop_back();
        return true;
    }
    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& ex) override {
        size_t offset = position > 0 ? position - 1 : 0;
        auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
        error_line = static_cast<int>(it - line_starts_.begin());
        error_column = static_cast<int>(offset - line_starts_[error_line - 1]) + 1;
        error = ex.what();
        // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 3, column 5: ".
        if (auto colon = error.find(": "); colon != std::string::npos)
            error = error.substr(colon + 2);
        return false;
    }

  private:
    // Every value's path is recorded with its line, so memory grows with the square of the
    // nesting depth (60 KB of "[" took 3 GB), and the DOM checks recurse once per level. No
    // ndkct document nests deeper than a few levels: beyond kMaxJsonDepth the input is refused
    // with a problem that says so.
    bool too_deep() {
        if (frames_.size() < kMaxJsonDepth) return false;
        size_t offset = static_cast<size_t>(*cursor_ - text_.data());
        auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
        error_line = static_cast<int>(it - line_starts_.begin());
        error_column = static_cast<int>(offset - line_starts_[error_line - 1]) + 1;
        error = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
        refused_depth = true;
        return true;
    }

    struct Frame {
        bool is_array;
        size_t next_index;
        std::string path;
        std::string key_path;
    };

    bool value() {
        value_path();
        return true;
    }

    // The path of the value the parser is at, recording its line for array elements and root.
    std::string value_path() {
        if (frames_.empty()) {
            lines.emplace("", current_line());
            return {};
        }
        auto& frame = frames_.back();
        if (!frame.is_array) return frame.key_path;  // line recorded at the key
        std::string path = child_path(frame.path, frame.next_index++);
        lines[path] = current_line();
        return path;
    }

    int current_line() const {
        // The lexer may have read one character past the token; step back over white space.
        size_t offset = static_cast<size_t>(*cursor_ - text_.data());
        while (offset > 0 && std::isspace(static_cast<unsigned char>(text_[offset - 1])))
            --offset;
        offset = offset > 0 ? offset - 1 : 0;
        auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
        return static_cast<int>(it - line_starts_.begin());
    }

    std::string_view text_;
    const char** cursor_;
    std::vector<size_t> line_starts_;
    std::vector<Frame> frames_;
};

std::string short_text(const Json& value) {
    std::string text = value.dump();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return text;
}

std::string type_name(const Json& value) {
    if (value.is_number_integer()) return "integer";
    if (value.is_number()) return "number";
    return value.type_name();
}

bool has_type(const Json& value, const std::string& type) {
    if (type == "object") return value.is_object();
    if (type == "array") return value.is_array();
    if (type == "string") return value.is_string();
    if (type == "boolean") return value.is_boolean();
    if (type == "null") return value.is_null();
    if (type == "number") return value.is_number();
    if (type == "integer") {
        if (value.is_number_integer()) return true;
        if (!value.is_number_float()) return false;
        // An integral value of any size (1e300 is one); casting it to an integer type first
        // was undefined behaviour beyond 2^63 (UBSan, float-cast-overflow).
        double d = value.get<double>();
        return std::isfinite(d) && std::trunc(d) == d;
    }
    return false;
}

// "pattern" keywords, matched with POSIX extended regular expressions (the schemas' patterns
// are anchored character classes and groups, which ERE writes alike). Not std::regex: libstdc++
// matches recursively, one stack frame per character, so a long profile field overflowed the
// stack (the runner then died with an empty reason). glibc's matcher keeps its state on the heap.
struct CompiledPattern {
    regex_t regex{};
    bool ok = false;
    CompiledPattern(const CompiledPattern&) = delete;
    CompiledPattern& operator=(const CompiledPattern&) = delete;
    explicit CompiledPattern(const std::string& pattern)
        : ok(regcomp(&regex, pattern.c_str(), REG_EXTENDED | REG_NOSUB) == 0) {}
    ~CompiledPattern() {
        if (ok) regfree(&regex);
    }
};

// Whether text matches; nullopt when the schema's pattern is not a valid expression.
std::optional<bool> matches(const std::string& pattern, const std::string& text) {
    static std::mutex lock;
    static std::unordered_map<std::string, std::unique_ptr<CompiledPattern>> cache;
    const CompiledPattern* compiled;
    {
        std::lock_guard guard(lock);
        auto& slot = cache[pattern];
        if (!slot) slot = std::make_unique<CompiledPattern>(pattern);
        compiled = slot.get();
    }
    if (!compiled->ok) return std::nullopt;
    // regexec reads a C string: text with a NUL in it is compared up to the NUL, so it must
    // not match a pattern that an anchored whole string would fail.
    if (text.find('\0') != std::string::npos) return false;
    return regexec(&compiled->regex, text.c_str(), 0, nullptr, 0) == 0;
}

const Json& resolve(const Json& root, const Json& schema) {
    const Json* node = &schema;
    // Follow chains of $ref; only local "#/..." references are used by ndkct's schemas.
    for (int depth = 0; node->is_object() && node->contains("$ref") && depth < 16; ++depth) {
        auto ref = (*node)["$ref"].get<std::string>();
        if (ref.rfind("#", 0) != 0) throw std::runtime_error("unsupported $ref " + ref);
        node = &root.at(Json::json_pointer(ref.substr(1)));
    }
    return *node;
}

std::string joined_names(const Json& list) {
    std::string out;
    for (const auto& item : list) {
        if (!out.empty()) out += ", ";
        out += item.is_string() ? item.get<std::string>() : item.dump();
    }
    return out;
}

class Validator {
  public:
    Validator(const Json& root, const ParsedJson& doc, std::vector<JsonProblem>& problems)
        : root_(root), doc_(doc), problems_(problems) {}

    void check(const Json& schema_in, const Json& value, const std::string& path) {
        const Json& schema = resolve(root_, schema_in);
        if (!schema.is_object()) return;

        if (auto type = schema.find("type"); type != schema.end()) {
            bool ok = false;
            if (type->is_string()) {
                ok = has_type(value, type->get<std::string>());
            } else {
                for (const auto& t : *type)
                    ok = ok || has_type(value, t.get<std::string>());
            }
            if (!ok) {
                std::string expected =
                    type->is_string() ? type->get<std::string>() : joined_names(*type);
                report(path, "expected " + expected + ", found " + type_name(value) + " " +
                                 short_text(value));
                return;  // nothing below makes sense for the wrong type
            }
        }
        if (auto allowed = schema.find("enum"); allowed != schema.end()) {
            if (std::find(allowed->begin(), allowed->end(), value) == allowed->end())
                report(path, short_text(value) + " is not one of: " + joined_names(*allowed));
        }
        if (auto constant = schema.find("const"); constant != schema.end() && *constant != value)
            report(path, short_text(value) + " must be " + constant->dump());

        if (value.is_string()) check_string(schema, value.get<std::string>(), path);
        if (value.is_number()) check_number(schema, value, path);
        if (value.is_object()) check_object(schema, value, path);
        if (value.is_array()) check_array(schema, value, path);
    }

  private:
    void report(const std::string& path, std::string message) {
        problems_.push_back({path, doc_.line_of(path), std::move(message)});
    }

    void check_string(const Json& schema, const std::string& text, const std::string& path) {
        if (auto min = schema.find("minLength"); min != schema.end() && text.size() < *min)
            report(path, "text is shorter than " + min->dump() + " characters");
        if (auto pattern = schema.find("pattern"); pattern != schema.end()) {
            auto match = matches(pattern->get<std::string>(), text);
            if (!match)
                report(path, "the schema's pattern " + pattern->get<std::string>() +
                                 " is not a valid regular expression");
            else if (!*match)
                report(path, short_text(Json(text)) + " does not match the pattern " +
                                 pattern->get<std::string>());
        }
    }

    void check_number(const Json& schema, const Json& value, const std::string& path) {
        double number = value.get<double>();
        if (auto min = schema.find("minimum"); min != schema.end() && number < min->get<double>())
            report(path, "value " + value.dump() + " is below the minimum " + min->dump());
        if (auto max = schema.find("maximum"); max != schema.end() && number > max->get<double>())
            report(path, "value " + value.dump() + " is above the maximum " + max->dump());
    }

    void check_object(const Json& schema, const Json& value, const std::string& path) {
        if (auto required = schema.find("required"); required != schema.end()) {
            for (const auto& name : *required)
                if (!value.contains(name.get<std::string>()))
                    report(path, "missing required field \"" + name.get<std::string>() + "\"");
        }
        const Json* properties = nullptr;
        if (auto it = schema.find("properties"); it != schema.end()) properties = &*it;
        auto additional = schema.find("additionalProperties");
        for (const auto& [key, child] : value.items()) {
            std::string child_at = child_path(path, key);
            if (properties && properties->contains(key)) {
                check((*properties)[key], child, child_at);
            } else if (additional != schema.end()) {
                if (additional->is_boolean() && !additional->get<bool>()) {
                    std::string allowed = properties ? joined_keys(*properties) : "none";
                    report(child_at, "unknown field \"" + key + "\" (allowed: " + allowed + ")");
                } else if (additional->is_object()) {
                    check(*additional, child, child_at);
                }
            }
        }
    }

    void check_array(const Json& schema, const Json& value, const std::string& path) {
        if (auto min = schema.find("minItems"); min != schema.end() && value.size() < *min)
            report(path,
                   "has " + std::to_string(value.size()) + " items, fewer than " + min->dump());
        if (auto max = schema.find("maxItems"); max != schema.end() && value.size() > *max)
            report(path,
                   "has " + std::to_string(value.size()) + " items, more than " + max->dump());
        if (auto unique = schema.find("uniqueItems");
            unique != schema.end() && unique->get<bool>()) {
            for (size_t i = 0; i < value.size(); ++i)
                for (size_t j = 0; j < i; ++j)
                    if (value[i] == value[j])
                        report(child_path(path, i),
                               short_text(value[i]) + " repeats item " + std::to_string(j));
        }
        if (auto items = schema.find("items"); items != schema.end()) {
            for (size_t i = 0; i < value.size(); ++i)
                check(*items, value[i], child_path(path, i));
        }
    }

    static std::string joined_keys(const Json& properties) {
        std::string out;
        for (const auto& [key, unused] : properties.items()) {
            if (!out.empty()) out += ", ";
            out += key;
        }
        return out;
    }

    const Json& root_;
    const ParsedJson& doc_;
    std::vector<JsonProblem>& problems_;
};

}  // namespace

std::optional<ParsedJson> parse_json(std::string_view text, std::vector<JsonProblem>& problems) {
    const char* cursor = text.data();
    LineRecorder recorder(text, &cursor);
    TrackingIterator first{text.data(), &cursor};
    TrackingIterator last{text.data() + text.size(), &cursor};
    if (!Json::sax_parse(first, last, &recorder)) {
        problems.push_back(
            {"", recorder.error_line,
             (recorder.refused_depth ? "refused (column " : "not valid JSON (column ") +
                 std::to_string(recorder.error_column) + "): " + recorder.error});
        return std::nullopt;
    }
    ParsedJson parsed;
    parsed.value = Json::parse(text);
    parsed.lines = std::move(recorder.lines);
    return parsed;
}

void validate(const Json& root_schema, const ParsedJson& doc, std::vector<JsonProblem>& problems) {
    Validator(root_schema, doc, problems).check(root_schema, doc.value, "");
}

void apply_defaults(const Json& root_schema, Json& doc) {
    const Json& schema = resolve(root_schema, root_schema);
    auto fill = [&](auto& self, const Json& node_schema_in, Json& node) -> void {
        const Json& node_schema = resolve(root_schema, node_schema_in);
        if (!node.is_object() || !node_schema.contains("properties")) return;
        for (const auto& [key, child_schema_in] : node_schema["properties"].items()) {
            const Json& child_schema = resolve(root_schema, child_schema_in);
            if (!node.contains(key)) {
                if (child_schema.contains("default")) {
                    node[key] = child_schema["default"];
                    continue;
                }
                if (!child_schema.contains("properties")) continue;
                node[key] = Json::object();
            }
            self(self, child_schema, node[key]);
        }
    };
    fill(fill, schema, doc);
}

}  // namespace detail

std::vector<JsonProblem> check_json(std::string_view schema_text, std::string_view document_text) {
    std::vector<JsonProblem> problems;
    std::vector<JsonProblem> schema_problems;
    auto schema = detail::parse_json(schema_text, schema_problems);
    if (!schema) {
        for (auto& p : schema_problems)
            p.message = "in the schema: " + p.message;
        return schema_problems;
    }
    auto doc = detail::parse_json(document_text, problems);
    if (doc) detail::validate(schema->value, *doc, problems);
    return problems;
}

}  // namespace ndkct::spec
