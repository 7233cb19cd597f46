#include "waivers.hpp"

#include <fnmatch.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ndkct::properties {
namespace {

bool glob(const std::string& pattern, const std::string& text) {
    return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

bool Waiver::applies(const NDKCT_PROVIDER_IDENTITY& identity, const NDK_ADAPTER_INFO& info,
                     const std::string& id) const {
    if (!glob(provider, identity.Name ? identity.Name : "")) return false;
    if (!any_vendor && vendor != info.VendorId) return false;
    if (!any_device && device != info.DeviceId) return false;
    if (topology != "*") {  // the run is split across two nodes when NDKCT_PEER names the peer
        const char* peer = std::getenv("NDKCT_PEER");
        if (topology != (peer && *peer ? "two-nodes" : "one-node")) return false;
    }
    if (tests.empty()) return true;
    for (const auto& t : tests)
        if (glob(t, id)) return true;
    return false;
}

bool Waiver::covers(const std::vector<std::string>& failure_rules) const {
    if (failure_rules.empty()) return false;
    for (const auto& rule : failure_rules) {
        bool named = false;
        for (const auto& pattern : rules)
            named |= glob(pattern, rule);
        if (!named) return false;
    }
    return true;
}

std::vector<Waiver> read_waivers(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("waivers: cannot read " + path);
    std::vector<Waiver> out;
    // One stanza at a time: its fields, then checked when a blank line or the end closes it.
    std::vector<std::pair<std::string, std::string>> fields;
    int stanza_line = 0;
    auto fail = [&](int line, const std::string& what) {
        throw std::runtime_error(path + ":" + std::to_string(line) + ": " + what);
    };
    auto number = [&](const std::string& value, bool& any, unsigned long& n) {
        if (value.empty() || value == "*") return;
        try {
            size_t used = 0;
            n = std::stoul(value, &used, 0);
            if (used != value.size()) throw std::invalid_argument(value);
        } catch (const std::exception&) {
            fail(stanza_line, "'" + value + "' is not a number (decimal, 0x hexadecimal or *)");
        }
        any = false;
    };
    auto close = [&] {
        if (fields.empty()) return;
        Waiver w;
        w.where = path + ":" + std::to_string(stanza_line);
        for (const auto& [name, value] : fields) {
            if (name == "provider")
                w.provider = trim(value);
            else if (name == "vendor")
                number(trim(value), w.any_vendor, w.vendor);
            else if (name == "device")
                number(trim(value), w.any_device, w.device);
            else if (name == "tests")
                w.tests = words(value);
            else if (name == "rules")
                w.rules = words(value);
            else if (name == "topology") {
                w.topology = trim(value);
                if (w.topology != "one-node" && w.topology != "two-nodes" && w.topology != "*")
                    fail(stanza_line,
                         "topology: '" + w.topology + "' is not one of one-node, two-nodes, *");
            } else if (name == "reason")
                w.reason = trim(value);
            else if (name != "reference")
                fail(stanza_line, "unknown field '" + name + "'");
        }
        if (w.provider.empty()) fail(stanza_line, "a waiver needs 'provider'");
        if (w.tests.empty() && w.rules.empty())
            fail(stanza_line, "a waiver needs 'tests' or 'rules'");
        out.push_back(std::move(w));
        fields.clear();
    };
    std::string line;
    for (int number_of_line = 1; std::getline(in, line); ++number_of_line) {
        if (!line.empty() && line[0] == '#') continue;
        if (trim(line).empty()) {
            close();
            continue;
        }
        if (line[0] == ' ' || line[0] == '\t') {  // continues the field before
            if (fields.empty()) fail(number_of_line, "a continuation line with no field before");
            fields.back().second += " " + trim(line);
            continue;
        }
        const auto colon = line.find(':');
        if (colon == std::string::npos) fail(number_of_line, "expected 'field: value'");
        if (fields.empty()) stanza_line = number_of_line;
        fields.emplace_back(trim(line.substr(0, colon)), line.substr(colon + 1));
    }
    close();
    return out;
}

}  // namespace ndkct::properties
