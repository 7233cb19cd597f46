// Profiles: schema-checked JSON to a Profile value.
#include "ndkct/spec/profile.hpp"

#include <fstream>
#include <sstream>

#include "json_internal.hpp"
#include "ndkct/spec/embedded.hpp"

namespace ndkct::spec {

using detail::Json;

namespace {

struct FlagName {
    const char* name;
    ULONG bit;
};
constexpr FlagName kAdapterFlags[] = {
    {"IN_ORDER_DMA_SUPPORTED", NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED},
    {"RDMA_READ_SINK_NOT_REQUIRED", NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED},
    {"CQ_INTERRUPT_MODERATION_SUPPORTED", NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED},
    {"MULTI_ENGINE_SUPPORTED", NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED},
    {"RDMA_READ_LOCAL_INVALIDATE_SUPPORTED", NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED},
    {"CQ_RESIZE_SUPPORTED", NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED},
    {"LOOPBACK_CONNECTIONS_SUPPORTED", NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED},
};

struct TechnologyName {
    const char* name;
    NDK_RDMA_TECHNOLOGY value;
};
constexpr TechnologyName kTechnologies[] = {
    {"Undefined", NdkUndefined}, {"iWarp", NdkiWarp},   {"InfiniBand", NdkInfiniBand},
    {"RoCE", NdkRoCE},           {"RoCEv2", NdkRoCEv2},
};

const Json& profile_schema() {
    static const Json schema = [] {
        auto text = embedded_spec_file("profiles/profile.schema.json");
        if (!text) throw ProfileError("profiles/profile.schema.json is missing from the build");
        return Json::parse(*text);
    }();
    return schema;
}

// Flattens every leaf except name/description/ndk_version/adapter_info into dotted settings.
void flatten(const Json& node, const std::string& path, Profile& profile) {
    if (node.is_object()) {
        for (const auto& [key, child] : node.items())
            flatten(child, detail::child_path(path, key), profile);
    } else if (node.is_boolean()) {
        profile.settings[path] = node.get<bool>();
    } else if (node.is_number_integer()) {
        profile.settings[path] = node.get<int64_t>();
    } else if (node.is_number()) {
        profile.settings[path] = node.get<double>();
    } else if (node.is_string()) {
        profile.settings[path] = node.get<std::string>();
    }
}

template <typename T>
T field(const Json& info, const char* name, std::vector<std::string>& missing) {
    auto it = info.find(name);
    if (it == info.end() || !it->is_number()) {
        missing.push_back(name);
        return T{};
    }
    return it->get<T>();
}

NDK_ADAPTER_INFO adapter_info_from(const Json& info, NDK_VERSION version,
                                   const std::string& origin) {
    NDK_ADAPTER_INFO out{};
    std::vector<std::string> missing;
    out.Version = version;
    out.VendorId = field<UINT32>(info, "VendorId", missing);
    out.DeviceId = field<UINT32>(info, "DeviceId", missing);
    out.MaxRegistrationSize = field<SIZE_T>(info, "MaxRegistrationSize", missing);
    out.MaxWindowSize = field<SIZE_T>(info, "MaxWindowSize", missing);
    out.FRMRPageCount = field<ULONG>(info, "FRMRPageCount", missing);
    out.MaxInitiatorRequestSge = field<ULONG>(info, "MaxInitiatorRequestSge", missing);
    out.MaxReceiveRequestSge = field<ULONG>(info, "MaxReceiveRequestSge", missing);
    out.MaxReadRequestSge = field<ULONG>(info, "MaxReadRequestSge", missing);
    out.MaxTransferLength = field<ULONG>(info, "MaxTransferLength", missing);
    out.MaxInlineDataSize = field<ULONG>(info, "MaxInlineDataSize", missing);
    out.MaxInboundReadLimit = field<ULONG>(info, "MaxInboundReadLimit", missing);
    out.MaxOutboundReadLimit = field<ULONG>(info, "MaxOutboundReadLimit", missing);
    out.MaxReceiveQueueDepth = field<ULONG>(info, "MaxReceiveQueueDepth", missing);
    out.MaxInitiatorQueueDepth = field<ULONG>(info, "MaxInitiatorQueueDepth", missing);
    out.MaxSrqDepth = field<ULONG>(info, "MaxSrqDepth", missing);
    out.MaxCqDepth = field<ULONG>(info, "MaxCqDepth", missing);
    out.LargeRequestThreshold = field<ULONG>(info, "LargeRequestThreshold", missing);
    out.MaxCallerData = field<ULONG>(info, "MaxCallerData", missing);
    out.MaxCalleeData = field<ULONG>(info, "MaxCalleeData", missing);
    if (!missing.empty()) {
        std::string all;
        for (const auto& name : missing)
            all += (all.empty() ? "" : ", ") + name;
        throw ProfileError(origin + ": adapter_info lacks " + all +
                           " (the schema gives no default for it)");
    }
    if (auto flags = info.find("AdapterFlags"); flags != info.end()) {
        for (const auto& name : *flags) {
            for (const auto& flag : kAdapterFlags)
                if (name == flag.name) out.AdapterFlags |= flag.bit;
        }
    }
    if (auto tech = info.find("RdmaTechnology"); tech != info.end() && tech->is_string()) {
        for (const auto& t : kTechnologies)
            if (*tech == t.name || *tech == std::string("Ndk") + t.name)
                out.RdmaTechnology = t.value;
    }
    return out;
}

[[noreturn]] void wrong_setting(const Profile& profile, std::string_view path, const char* want) {
    throw ProfileError(
        profile.origin + ": setting " + std::string(path) +
        (profile.has(path) ? std::string(" is not ") + want : std::string(" does not exist")));
}

}  // namespace

const std::string& Profile::text(std::string_view path) const {
    auto it = settings.find(path);
    if (it == settings.end() || !std::holds_alternative<std::string>(it->second))
        wrong_setting(*this, path, "text");
    return std::get<std::string>(it->second);
}

int64_t Profile::integer(std::string_view path) const {
    auto it = settings.find(path);
    if (it == settings.end() || !std::holds_alternative<int64_t>(it->second))
        wrong_setting(*this, path, "an integer");
    return std::get<int64_t>(it->second);
}

double Profile::number(std::string_view path) const {
    auto it = settings.find(path);
    if (it != settings.end() && std::holds_alternative<double>(it->second))
        return std::get<double>(it->second);
    if (it != settings.end() && std::holds_alternative<int64_t>(it->second))
        return static_cast<double>(std::get<int64_t>(it->second));
    wrong_setting(*this, path, "a number");
}

bool Profile::flag(std::string_view path) const {
    auto it = settings.find(path);
    if (it == settings.end() || !std::holds_alternative<bool>(it->second))
        wrong_setting(*this, path, "true or false");
    return std::get<bool>(it->second);
}

Profile load_profile(std::string_view json_text, std::string_view origin) {
    std::string where(origin);
    std::vector<JsonProblem> problems;
    auto doc = detail::parse_json(json_text, problems);
    if (doc) detail::validate(profile_schema(), *doc, problems);
    if (!problems.empty())
        throw ProfileError("profile " + where + " is not valid:\n" +
                           describe_problems(problems, where));

    Json value = doc->value;
    detail::apply_defaults(profile_schema(), value);

    Profile profile;
    profile.origin = where;
    profile.name = value.value("name", "");
    profile.description = value.value("description", "");
    std::string version = value.value("ndk_version", "2.1");
    profile.version = NDKCT_MAKE_VERSION(static_cast<USHORT>(version[0] - '0'),
                                         static_cast<USHORT>(version[2] - '0'));
    profile.adapter_info =
        adapter_info_from(value.value("adapter_info", Json::object()), profile.version, where);
    for (const auto& [key, child] : value.items()) {
        if (key == "name" || key == "description" || key == "ndk_version" || key == "adapter_info")
            continue;
        flatten(child, key, profile);
    }
    profile.json = value.dump(2);
    return profile;
}

Profile load_profile_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw ProfileError("cannot read profile file " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return load_profile(text.str(), path);
}

std::vector<std::string> builtin_profile_names() {
    std::vector<std::string> names;
    for (const auto& file : embedded_spec_files()) {
        if (file.name.starts_with("profiles/") && file.name.ends_with(".json") &&
            !file.name.ends_with(".schema.json"))
            names.emplace_back(file.name.substr(9, file.name.size() - 9 - 5));
    }
    return names;
}

Profile builtin_profile(std::string_view name) {
    std::string file = "profiles/" + std::string(name) + ".json";
    auto text = embedded_spec_file(file);
    if (!text) {
        std::string known;
        for (const auto& n : builtin_profile_names())
            known += (known.empty() ? "" : ", ") + n;
        throw ProfileError("no built-in profile \"" + std::string(name) +
                           "\" (there are: " + known + ")");
    }
    return load_profile(*text, file);
}

Profile resolve_profile(std::string_view name_or_path) {
    if (name_or_path.find('/') == std::string_view::npos && !name_or_path.ends_with(".json"))
        return builtin_profile(name_or_path);
    return load_profile_file(std::string(name_or_path));
}

}  // namespace ndkct::spec
