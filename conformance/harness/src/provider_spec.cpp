#include "ndkct/conformance/provider_spec.hpp"

#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "ndkct/adapters/model_provider.hpp"
#include "ndkct/loader/provider_library.hpp"
#include "ndkct/twonode/split_provider.hpp"

namespace ndkct::conformance {

namespace {

std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}
std::map<std::string, const NDKCT_PROVIDER_ENTRY_POINTS*>& builtins() {
    static std::map<std::string, const NDKCT_PROVIDER_ENTRY_POINTS*> b{
        {"model", &adapters::model_provider()}};
    return b;
}
std::map<std::string, loader::ProviderLibrary>& libraries() {
    static std::map<std::string, loader::ProviderLibrary> l;
    return l;
}

std::vector<std::string> split(const std::string& text, char by) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, by))
        parts.push_back(part);
    return parts;
}

}  // namespace

std::string ProviderSpec::label() const {
    std::string out = kind;
    if (kind == "lib") {
        std::string base = path.substr(path.find_last_of('/') + 1);
        out += "_" + base;
    }
    if (kind == "verbs" && !device.empty()) out += "_" + device;
    out += "_seed" + std::to_string(seed);
    if (profile != "default") out += "_" + profile.substr(profile.find_last_of('/') + 1);
    for (char& c : out)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return out;
}

void PrintTo(const ProviderSpec& spec, std::ostream* out) {
    *out << spec.text;
}

std::vector<ProviderSpec> parse_provider_specs(const std::string& text) {
    std::vector<ProviderSpec> specs;
    for (const std::string& item : split(text, ',')) {
        if (item.empty()) continue;
        auto parts = split(item, ':');
        ProviderSpec spec;
        spec.text = item;
        spec.kind = parts[0];
        size_t next = 1;
        if (spec.kind == "lib") {
            if (parts.size() < 2 || parts[1].empty())
                throw ProviderSpecError("provider '" + item +
                                        "': lib needs a path (lib:/path/libvendor.so)");
            spec.path = parts[1];
            next = 2;
        } else if (spec.kind != "model" && spec.kind != "verbs") {
            throw ProviderSpecError("provider '" + item + "': unknown kind '" + spec.kind +
                                    "' (use model, lib:PATH or verbs)");
        }
        for (size_t i = next; i < parts.size(); ++i) {
            auto eq = parts[i].find('=');
            std::string key = parts[i].substr(0, eq);
            std::string value = eq == std::string::npos ? "" : parts[i].substr(eq + 1);
            if (key == "seed") {
                char* end = nullptr;
                spec.seed = std::strtoull(value.c_str(), &end, 10);
                if (value.empty() || *end)
                    throw ProviderSpecError("provider '" + item + "': seed '" + value +
                                            "' is not a number");
            } else if (key == "profile" && !value.empty()) {
                spec.profile = value;
            } else if (key == "device" && !value.empty()) {
                spec.device = value;
            } else {
                throw ProviderSpecError("provider '" + item + "': unknown option '" + parts[i] +
                                        "' (seed=N, profile=NAME, device=NAME)");
            }
        }
        specs.push_back(spec);
    }
    if (specs.empty()) throw ProviderSpecError("no provider named in '" + text + "'");
    return specs;
}

std::vector<ProviderSpec> providers_from_environment() {
    if (const char* env = std::getenv("NDKCT_PROVIDERS"); env && *env)
        return parse_provider_specs(env);
    return parse_provider_specs("model:seed=1,model:seed=2,model:seed=3");
}

void register_builtin_provider(const std::string& kind, const NDKCT_PROVIDER_ENTRY_POINTS* entry) {
    std::lock_guard lock(registry_mutex());
    builtins()[kind] = entry;
}

namespace {
const NDKCT_PROVIDER_ENTRY_POINTS& own_entry_points_for(const ProviderSpec& spec);
}

// With NDKCT_PEER=HOST:PORT the provider is split across two nodes: the passive side of every
// connection runs on the peer, under `ndkct agent` (conformance/twonode).
const NDKCT_PROVIDER_ENTRY_POINTS& entry_points_for(const ProviderSpec& spec) {
    const NDKCT_PROVIDER_ENTRY_POINTS& own = own_entry_points_for(spec);
    std::optional<twonode::PeerAddress> peer;
    try {
        peer = twonode::peer_from_environment();
    } catch (const std::invalid_argument& error) {
        throw ProviderSpecError(error.what());
    }
    return peer ? twonode::split_entry_points(own, spec.text, *peer) : own;
}

namespace {
const NDKCT_PROVIDER_ENTRY_POINTS& own_entry_points_for(const ProviderSpec& spec) {
    std::lock_guard lock(registry_mutex());
    if (spec.kind == "lib") {
        auto it = libraries().find(spec.path);
        if (it == libraries().end()) {
            try {
                it = libraries().emplace(spec.path, loader::ProviderLibrary::open(spec.path)).first;
            } catch (const loader::ProviderLoadError& error) {
                throw ProviderSpecError(error.what());
            }
        }
        return it->second.entry_points();
    }
    auto it = builtins().find(spec.kind);
    if (it == builtins().end())
        throw ProviderSpecError("provider '" + spec.text + "': the " + spec.kind +
                                " provider is not built into this binary");
    return *it->second;
}

}  // namespace

}  // namespace ndkct::conformance
