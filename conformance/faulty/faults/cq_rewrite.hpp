// Rewriting a batch of CQ entries as NdkGetCqResults(Ex) returns it: faults whose hardware
// reports completions other than the reference provider does (the order of the entries). Works
// on NDK_RESULT and NDK_RESULT_EX alike; a fault says which entry goes where.
#pragma once

#include <algorithm>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

// Moves results[from] to index `to` (to < from), the entries in between one place later: as if
// the device had written that entry first.
template <typename Result>
void move_entry_ahead(Result* results, ULONG from, ULONG to) {
    if (to >= from) return;
    std::rotate(results + to, results + from, results + from + 1);
}

}  // namespace
}  // namespace ndkct::faulty
