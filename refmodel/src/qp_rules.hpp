// Helpers the QP rule files share (rules_qp, rules_execute, rules_access, rules_completion):
// internal to refmodel/src, not part of the model's interface.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "ndkct/model/model.hpp"
#include "ndkct/spec/hex.hpp"

namespace ndkct::model::qp_rules {

inline std::string num(uint64_t v) {
    return std::to_string(v);
}

// A RequestContext or QPContext is a pointer to the consumer: shown in hex (spec::hex), as trace
// dumps and debuggers show it.
using spec::hex;

inline uint64_t total_length(const std::vector<Sge>& sgl) {
    uint64_t total = 0;
    for (const auto& sge : sgl)
        total += sge.length;
    return total;
}

template <typename T>
const T& as(const Call& call) {
    return std::get<T>(call);
}

// The byte buffers of landings already checked or placed, kept for the next request's bytes
// (rules_execute.cpp, where the pool is).
void recycle_bytes(std::vector<std::byte>&& bytes);
// gather() into `out`, taking a spare buffer when `out` has no storage of its own.
void gather_into(const HostMemoryView& memory, const Extent& extent, std::vector<std::byte>& out);

constexpr size_t kRememberedContexts = 64;

// FR-DEFER-02: the held request was handed over by an NdkFastRegister's inline refusal.
inline bool handed_over_by_fast_register(const QpState& q, Context request_context) {
    return std::find(q.handed_over_by_fast_register.begin(), q.handed_over_by_fast_register.end(),
                     request_context) != q.handed_over_by_fast_register.end();
}

inline void remember(std::deque<Context>& list, Context context) {
    list.push_back(context);
    if (list.size() > kRememberedContexts) list.pop_front();
}

inline void remember(std::vector<Context>& list, Context context) {
    list.push_back(context);
    if (list.size() > kRememberedContexts) list.erase(list.begin());
}

}  // namespace ndkct::model::qp_rules
