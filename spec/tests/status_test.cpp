#include <gtest/gtest.h>

#include "ndkct/spec/status.hpp"

namespace ndkct::spec {
namespace {

TEST(Status, NamesRoundTrip) {
    EXPECT_EQ(status_name(STATUS_PENDING), "STATUS_PENDING");
    EXPECT_EQ(status_name(STATUS_IMPLEMENTATION_LIMIT), "STATUS_IMPLEMENTATION_LIMIT");
    EXPECT_EQ(status_from_name("STATUS_BUFFER_TOO_SMALL"), STATUS_BUFFER_TOO_SMALL);
    EXPECT_EQ(status_from_name("NDIS_STATUS_RESOURCES"), STATUS_INSUFFICIENT_RESOURCES);
    EXPECT_EQ(status_from_name("STATUS_MADE_UP"), std::nullopt);
    EXPECT_EQ(status_name(static_cast<NTSTATUS>(0xC0001234u)), "0xC0001234");
}

TEST(Status, ValuesAreTheWindowsOnes) {
    EXPECT_EQ(static_cast<uint32_t>(STATUS_ACCESS_VIOLATION), 0xC0000005u);
    EXPECT_EQ(static_cast<uint32_t>(STATUS_INVALID_PARAMETER), 0xC000000Du);
    EXPECT_EQ(static_cast<uint32_t>(STATUS_CANCELLED), 0xC0000120u);
    EXPECT_EQ(static_cast<uint32_t>(STATUS_BUFFER_OVERFLOW), 0x80000005u);
    EXPECT_TRUE(NT_WARNING(STATUS_BUFFER_OVERFLOW));
    EXPECT_TRUE(NT_ERROR(STATUS_CONNECTION_INVALID));
    EXPECT_TRUE(NT_SUCCESS(STATUS_PENDING));
    EXPECT_FALSE(NT_SUCCESS(STATUS_IMPLEMENTATION_LIMIT));
}

}  // namespace
}  // namespace ndkct::spec
