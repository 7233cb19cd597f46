#include <gtest/gtest.h>

#include "ndkct/ndkpi.h"
#include "ndkct/spec/names.hpp"

namespace ndkct::spec {
namespace {

TEST(Names, OperationTypesCarryTheirNdkNames) {
    EXPECT_EQ(operation_type_text(NdkOperationTypeWrite), "64 (NdkOperationTypeWrite)");
    EXPECT_EQ(operation_type_text(NdkOperationTypeReceiveAndInvalidate),
              "32769 (NdkOperationTypeReceiveAndInvalidate)");
    EXPECT_EQ(operation_type_text(3), "3");  // no such type: the number alone
}

// ALLOW_REMOTE_WRITE includes the ALLOW_LOCAL_WRITE bit (AMB-03): it takes it, and a bit no
// name covers is shown as what is left.
TEST(Names, OpFlagsNameEachBitOnce) {
    EXPECT_EQ(op_flags_text(0), "0x0");
    EXPECT_EQ(op_flags_text(NDK_OP_FLAG_ALLOW_REMOTE_WRITE), "0x30 (ALLOW_REMOTE_WRITE)");
    EXPECT_EQ(op_flags_text(NDK_OP_FLAG_ALLOW_LOCAL_WRITE), "0x10 (ALLOW_LOCAL_WRITE)");
    EXPECT_EQ(op_flags_text(NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_INLINE | 0x4000),
              "0x4041 (SILENT_SUCCESS | INLINE | 0x4000)");
    EXPECT_EQ(op_flags_text(0x4000), "0x4000");
}

TEST(Names, MrFlagsAndNotificationTypes) {
    EXPECT_EQ(mr_flags_text(0), "0x0 (ALLOW_LOCAL_READ)");
    EXPECT_EQ(mr_flags_text(NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ),
              "0x7 (ALLOW_REMOTE_WRITE | ALLOW_REMOTE_READ)");
    EXPECT_EQ(mr_flags_text(NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK),
              "0x9 (ALLOW_LOCAL_WRITE | RDMA_READ_SINK)");
    EXPECT_EQ(notify_type_text(NDK_CQ_NOTIFY_SOLICITED), "2 (NDK_CQ_NOTIFY_SOLICITED)");
    EXPECT_EQ(notify_type_text(7), "7");
}

}  // namespace
}  // namespace ndkct::spec
