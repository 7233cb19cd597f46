// ndkct/spec/status.hpp: NTSTATUS names for messages and for the catalog's status lists.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ndkct/ntstatus.h"

namespace ndkct::spec {

// "STATUS_PENDING", or "0xC0001234" for a value ndkct has no name for.
std::string status_name(NTSTATUS status);

// The value of a status name from ndkct/ntstatus.h, or nullopt.
std::optional<NTSTATUS> status_from_name(std::string_view name);

}  // namespace ndkct::spec
