#include "ndkct/spec/status.hpp"

#include <cstdio>

namespace {

struct StatusEntry {
    const char* name;
    NTSTATUS value;
};

#define NDKCT_STATUS_ENTRY(name, value) {#name, (NTSTATUS)(value##u)},
constexpr StatusEntry kStatuses[] = {NDKCT_NTSTATUS_TABLE(NDKCT_STATUS_ENTRY)};
#undef NDKCT_STATUS_ENTRY

}  // namespace

extern "C" const char* ndkct_status_name(NTSTATUS status) {
    for (const auto& entry : kStatuses)
        if (entry.value == status) return entry.name;
    return nullptr;
}

namespace ndkct::spec {

std::string status_name(NTSTATUS status) {
    if (const char* name = ndkct_status_name(status)) return name;
    char text[16];
    std::snprintf(text, sizeof text, "0x%08X", static_cast<unsigned>(status));
    return text;
}

std::optional<NTSTATUS> status_from_name(std::string_view name) {
    for (const auto& entry : kStatuses)
        if (name == entry.name) return entry.value;
    if (name == "NDIS_STATUS_RESOURCES") return STATUS_INSUFFICIENT_RESOURCES;
    return std::nullopt;
}

}  // namespace ndkct::spec
