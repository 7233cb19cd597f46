// NDKPI numbers with their ndkpi.h names (ndkct/spec/names.hpp).
#include "ndkct/spec/names.hpp"

#include <utility>

#include "ndkct/ndkpi.h"
#include "ndkct/spec/hex.hpp"

namespace ndkct::spec {

namespace {

struct Bits {
    uint32_t mask;
    const char* name;
};

// The named bits of `flags` in table order (a wider mask first, so that ALLOW_REMOTE_WRITE
// takes the ALLOW_LOCAL_WRITE bit it includes), then whatever no name covers.
template <size_t N>
std::string bits_text(uint32_t flags, const Bits (&table)[N]) {
    std::string names;
    uint32_t left = flags;
    for (const auto& b : table)
        if (b.mask && (left & b.mask) == b.mask) {
            names += (names.empty() ? "" : " | ") + std::string(b.name);
            left &= ~b.mask;
        }
    if (left && !names.empty()) names += " | " + hex(left);
    return names.empty() ? hex(flags) : hex(flags) + " (" + names + ")";
}

}  // namespace

std::string operation_type_text(uint32_t type) {
    static constexpr std::pair<uint32_t, const char*> kNames[] = {
        {NdkOperationTypeReceive, "Receive"},
        {NdkOperationTypeReceiveAndInvalidate, "ReceiveAndInvalidate"},
        {NdkOperationTypeSend, "Send"},
        {NdkOperationTypeFastRegister, "FastRegister"},
        {NdkOperationTypeBind, "Bind"},
        {NdkOperationTypeInvalidate, "Invalidate"},
        {NdkOperationTypeRead, "Read"},
        {NdkOperationTypeWrite, "Write"}};
    for (const auto& [value, name] : kNames)
        if (value == type) return std::to_string(type) + " (NdkOperationType" + name + ")";
    return std::to_string(type);
}

std::string op_flags_text(uint32_t flags) {
    static constexpr Bits kOp[] = {
        {NDK_OP_FLAG_SILENT_SUCCESS, "SILENT_SUCCESS"},
        {NDK_OP_FLAG_READ_FENCE, "READ_FENCE"},
        {NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT, "SEND_AND_SOLICIT_EVENT"},
        {NDK_OP_FLAG_ALLOW_REMOTE_READ, "ALLOW_REMOTE_READ"},
        {NDK_OP_FLAG_ALLOW_REMOTE_WRITE, "ALLOW_REMOTE_WRITE"},
        {NDK_OP_FLAG_ALLOW_LOCAL_WRITE, "ALLOW_LOCAL_WRITE"},
        {NDK_OP_FLAG_INLINE, "INLINE"},
        {NDK_OP_FLAG_RDMA_READ_SINK, "RDMA_READ_SINK"},
        {NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE, "RDMA_READ_LOCAL_INVALIDATE"},
        {NDK_OP_FLAG_DEFER, "DEFER"}};
    return bits_text(flags, kOp);
}

std::string mr_flags_text(uint32_t flags) {
    // NDK_MR_FLAG_ALLOW_LOCAL_READ is 0: the absence of every other right.
    if (flags == NDK_MR_FLAG_ALLOW_LOCAL_READ) return hex(flags) + " (ALLOW_LOCAL_READ)";
    static constexpr Bits kMr[] = {{NDK_MR_FLAG_ALLOW_REMOTE_WRITE, "ALLOW_REMOTE_WRITE"},
                                   {NDK_MR_FLAG_ALLOW_LOCAL_WRITE, "ALLOW_LOCAL_WRITE"},
                                   {NDK_MR_FLAG_ALLOW_REMOTE_READ, "ALLOW_REMOTE_READ"},
                                   {NDK_MR_FLAG_RDMA_READ_SINK, "RDMA_READ_SINK"}};
    return bits_text(flags, kMr);
}

std::string notify_type_text(uint32_t type) {
    switch (type) {
        case NDK_CQ_NOTIFY_ERRORS:
            return "0 (NDK_CQ_NOTIFY_ERRORS)";
        case NDK_CQ_NOTIFY_ANY:
            return "1 (NDK_CQ_NOTIFY_ANY)";
        case NDK_CQ_NOTIFY_SOLICITED:
            return "2 (NDK_CQ_NOTIFY_SOLICITED)";
        default:
            return std::to_string(type);
    }
}

}  // namespace ndkct::spec
