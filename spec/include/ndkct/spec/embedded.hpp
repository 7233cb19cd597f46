// ndkct/spec/embedded.hpp: the spec data files compiled into every ndkct binary.
//
// Names are paths relative to spec/ ("rules/catalog/fast_register.json",
// "profiles/default.json", "rules/pages.txt"), so a binary never needs the source tree.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace ndkct::spec {

struct EmbeddedFile {
    std::string_view name;
    std::string_view text;
};

std::span<const EmbeddedFile> embedded_spec_files();

// The file of that name, or nullopt.
std::optional<std::string_view> embedded_spec_file(std::string_view name);

}  // namespace ndkct::spec
