// ndkct/spec/hex.hpp: a number as verdicts, trace dumps and replays show handles, contexts,
// tokens and digests: "0x55ce0ea0", or zero-padded to `digits` hex digits.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace ndkct::spec {

inline std::string hex(uint64_t value, int digits = 0) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%0*llx", digits, static_cast<unsigned long long>(value));
    return text;
}

}  // namespace ndkct::spec
