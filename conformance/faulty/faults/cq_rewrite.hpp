// Rewriting a batch of CQ entries as NdkGetCqResults(Ex) returns it: faults whose hardware
// reports completions other than the reference provider does (the order of the entries, entries
// missing). Works on NDK_RESULT and NDK_RESULT_EX alike; a fault says which entry goes where.
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

// Removes the entries `drop(entry)` picks, the others closing up in order; returns how many are
// left: as if the device had never written those entries.
template <typename Result, typename Drop>
ULONG drop_entries(Result* results, ULONG n, Drop&& drop) {
    ULONG kept = 0;
    for (ULONG i = 0; i < n; ++i) {
        if (drop(results[i])) continue;
        if (kept != i) results[kept] = results[i];
        ++kept;
    }
    return kept;
}

}  // namespace
}  // namespace ndkct::faulty
