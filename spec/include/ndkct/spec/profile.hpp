// ndkct/spec/profile.hpp: profiles, the implementation-defined choices as data.
//
// A profile (spec/profiles/*.json, schema spec/profiles/profile.schema.json) fixes what the
// NDKPI documentation leaves open: the interface version, one reading per ambiguity (the AMB
// entries of the catalog name their knob), the reference provider's adapter limits, and how the
// reference provider picks among allowed outcomes. Anything a profile omits takes the schema's
// documented default.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ndkct/ndkinfo.h"

namespace ndkct::spec {

// A profile that cannot be used. what() lists every problem, one per line, each naming the
// file, the line and the field ("strict.json:14: policies.unknown_flags: ...").
class ProfileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

using ProfileValue = std::variant<bool, int64_t, double, std::string>;

struct Profile {
    std::string name;
    std::string description;
    std::string origin;  // where it came from ("profiles/default.json", a path, "<text>")
    NDK_VERSION version{};
    NDK_ADAPTER_INFO adapter_info{};  // Version filled from `version`
    // Every other leaf setting by dotted path ("policies.unknown_flags", "limits.max_frmr_pages",
    // "reference_provider.pending_percent"), defaults applied.
    std::map<std::string, ProfileValue, std::less<>> settings;
    std::string json;  // the profile with defaults applied, as JSON text (what providers get)

    // Typed access; throws ProfileError naming the path when it is absent or of another type.
    const std::string& text(std::string_view path) const;
    int64_t integer(std::string_view path) const;
    double number(std::string_view path) const;  // integers convert
    bool flag(std::string_view path) const;
    bool has(std::string_view path) const { return settings.contains(path); }
};

// Parses, checks against the schema and applies defaults. Throws ProfileError.
Profile load_profile(std::string_view json_text, std::string_view origin);
Profile load_profile_file(const std::string& path);

// Profiles shipped in spec/profiles ("default", "strict", ...), compiled in.
std::vector<std::string> builtin_profile_names();
Profile builtin_profile(std::string_view name = "default");

// A name of a shipped profile, or a path to a profile file.
Profile resolve_profile(std::string_view name_or_path);

}  // namespace ndkct::spec
