// The arena: buffers alias arena pages for real, so provider-side and consumer-side views agree.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "ndkct/platform/arena.hpp"

namespace ndkct::platform {
namespace {

TEST(Arena, HostMemoryDescribesTheLinearView) {
    Arena arena(64);
    const NDKCT_HOST_MEMORY& memory = arena.host_memory();
    EXPECT_EQ(memory.Size, sizeof(NDKCT_HOST_MEMORY));
    EXPECT_EQ(memory.PageCount, 64u);
    EXPECT_GE(memory.MemFd, 0);
    EXPECT_EQ(NdkctPfnToAddress(&memory, 5), arena.physical_page(5));
    EXPECT_EQ(arena.physical_page(64), nullptr);
}

TEST(Arena, BytesWrittenThroughABufferAreInItsPages) {
    Arena arena(64, 7);
    LockedBuffer buffer = arena.allocate(3 * PAGE_SIZE + 10);
    ASSERT_EQ(buffer.pfns().size(), 4u);
    for (size_t i = 0; i < buffer.size(); ++i)
        buffer.data()[i] = std::byte(i * 7 + 3);
    for (size_t page = 0; page < 4; ++page) {
        std::byte* physical = arena.physical_page(buffer.pfns()[page]);
        for (size_t i = 0; i < PAGE_SIZE; i += 511)
            ASSERT_EQ(physical[i], std::byte((page * PAGE_SIZE + i) * 7 + 3)) << page << "/" << i;
    }
    // And the other way: what a "DMA" writes through the PFN shows at the buffer's VA.
    std::memset(arena.physical_page(buffer.pfns()[2]) + 100, 0xAB, 4);
    EXPECT_EQ(buffer.data()[2 * PAGE_SIZE + 101], std::byte{0xAB});
}

TEST(Arena, ScatteredBuffersAreUsuallyNotPhysicallyContiguous) {
    Arena arena(1024, 42);
    LockedBuffer buffer = arena.allocate(16 * PAGE_SIZE, Placement::scattered);
    size_t consecutive = 0;
    for (size_t i = 1; i < 16; ++i)
        consecutive += buffer.pfns()[i] == buffer.pfns()[i - 1] + 1;
    EXPECT_LT(consecutive, 15u);
    std::set<PFN_NUMBER> distinct(buffer.pfns().begin(), buffer.pfns().end());
    EXPECT_EQ(distinct.size(), 16u);
}

TEST(Arena, ContiguousPlacementGivesConsecutivePages) {
    Arena arena(64);
    LockedBuffer buffer = arena.allocate(8 * PAGE_SIZE, Placement::contiguous);
    for (size_t i = 1; i < 8; ++i)
        EXPECT_EQ(buffer.pfns()[i], buffer.pfns()[0] + i);
}

TEST(Arena, PagesComeBackWhenABufferDies) {
    Arena arena(32);
    {
        LockedBuffer a = arena.allocate(10 * PAGE_SIZE);
        LockedBuffer b = std::move(a);
        EXPECT_EQ(arena.free_page_count(), 22u);
    }
    EXPECT_EQ(arena.free_page_count(), 32u);
}

TEST(Arena, ExhaustionThrowsBadAlloc) {
    Arena arena(8);
    LockedBuffer a = arena.allocate(6 * PAGE_SIZE);
    EXPECT_THROW(arena.allocate(3 * PAGE_SIZE), std::bad_alloc);
    EXPECT_NO_THROW(arena.allocate(2 * PAGE_SIZE));
}

TEST(Arena, NewBuffersAreZeroed) {
    Arena arena(8);
    {
        LockedBuffer dirty = arena.allocate(8 * PAGE_SIZE);
        std::memset(dirty.data(), 0xFF, dirty.size());
    }
    LockedBuffer clean = arena.allocate(8 * PAGE_SIZE);
    for (size_t i = 0; i < clean.size(); i += 97)
        ASSERT_EQ(clean.data()[i], std::byte{0});
}

TEST(Arena, AnAliasSeesTheSameBytesInItsOwnOrder) {
    Arena arena(64);
    LockedBuffer owner = arena.allocate(4 * PAGE_SIZE);
    std::vector<PFN_NUMBER> reversed(owner.pfns().rbegin(), owner.pfns().rend());
    LockedBuffer view = arena.alias(reversed);
    owner.data()[3 * PAGE_SIZE + 9] = std::byte{0x5A};
    EXPECT_EQ(view.data()[9], std::byte{0x5A});
    size_t free_before = arena.free_page_count();
    { LockedBuffer gone = std::move(view); }
    EXPECT_EQ(arena.free_page_count(), free_before);  // an alias owns no pages
}

}  // namespace
}  // namespace ndkct::platform
