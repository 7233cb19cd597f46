// The arena: buffers alias arena pages for real, so provider-side and consumer-side views agree.
#include <gtest/gtest.h>
#include <algorithm>

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

// Reuse as if fresh (the property tests' HostPool): an arena used and rewound to a mark is the
// arena a fresh one of the same seed is after the same allocations: the same PFNs in use, every
// byte 0, and the next allocations get the same PFNs.
TEST(Arena, ARewoundArenaIsAFreshOneAfterTheSameAllocations) {
    Arena used(64, 7), fresh(64, 7);
    std::vector<LockedBuffer> kept, fresh_kept;
    for (int i = 0; i < 4; ++i) {
        kept.push_back(used.allocate(8 * PAGE_SIZE));
        fresh_kept.push_back(fresh.allocate(8 * PAGE_SIZE));
        ASSERT_TRUE(std::ranges::equal(kept.back().pfns(), fresh_kept.back().pfns()));
    }
    const Arena::Mark mark = used.mark();
    {  // a sequence: other buffers come and go, and every page is written
        LockedBuffer a = used.allocate(5 * PAGE_SIZE), b = used.allocate(3 * PAGE_SIZE);
        for (PFN_NUMBER pfn = 0; pfn < used.page_count(); ++pfn)
            std::memset(used.physical_page(pfn), 0xA5, PAGE_SIZE);
        EXPECT_FALSE(used.rewind(mark));  // refused while a buffer made since lives
        EXPECT_EQ(used.physical_page(0)[0], std::byte{0xA5});  // and nothing changed
    }
    ASSERT_TRUE(used.rewind(mark));
    for (PFN_NUMBER pfn = 0; pfn < used.page_count(); ++pfn)
        for (size_t i = 0; i < PAGE_SIZE; i += 61)
            ASSERT_EQ(used.physical_page(pfn)[i], std::byte{0}) << "PFN " << pfn;
    EXPECT_EQ(used.free_page_count(), fresh.free_page_count());
    for (size_t pages : {5u, 3u, 1u}) {
        LockedBuffer next = used.allocate(pages * PAGE_SIZE),
                     fresh_next = fresh.allocate(pages * PAGE_SIZE);
        EXPECT_TRUE(std::ranges::equal(next.pfns(), fresh_next.pfns()));
    }
    kept.pop_back();  // one of the mark's buffers gone: refused
    EXPECT_FALSE(used.rewind(mark));
}

}  // namespace
}  // namespace ndkct::platform
