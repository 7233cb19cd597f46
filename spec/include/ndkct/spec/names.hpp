// ndkct/spec/names.hpp: NDKPI numbers as messages, trace dumps and replays show them, the
// number first and then the ndkpi.h names it stands for: "64 (NdkOperationTypeWrite)",
// "0x31 (SILENT_SUCCESS | ALLOW_REMOTE_WRITE)". A value without a name shows only the number.
#pragma once

#include <cstdint>
#include <string>

namespace ndkct::spec {

// An NDK_RESULT_EX.Type (NDK_OPERATION_TYPE).
std::string operation_type_text(uint32_t type);

// A work request's Flags (NDK_OP_FLAG_*); bits with no name are shown as their hex remainder.
std::string op_flags_text(uint32_t flags);

// NdkRegisterMr's and NdkInitializeFastRegisterMr's Flags (NDK_MR_FLAG_*).
std::string mr_flags_text(uint32_t flags);

// NdkArmCq's Type (NDK_CQ_NOTIFY_*).
std::string notify_type_text(uint32_t type);

}  // namespace ndkct::spec
