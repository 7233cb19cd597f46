// MDL chains: built with the Windows field meanings, read back as a driver would.
#include <gtest/gtest.h>

#include "ndkct/platform/mdl.hpp"

namespace ndkct::platform {
namespace {

class Mdl : public ::testing::Test {
  protected:
    Arena arena{256, 3};
    LockedBuffer buffer = arena.allocate(8 * PAGE_SIZE);
};

TEST_F(Mdl, OneMdlHasTheWindowsFieldMeanings) {
    MdlChain chain = describe(buffer, 100, 2 * PAGE_SIZE);
    MDL* mdl = chain.head();
    EXPECT_EQ(mdl->Next, nullptr);
    EXPECT_EQ(mdl->StartVa, buffer.data());
    EXPECT_EQ(mdl->ByteOffset, 100u);
    EXPECT_EQ(mdl->ByteCount, 2 * PAGE_SIZE);
    EXPECT_EQ(MmGetMdlVirtualAddress(mdl), buffer.data() + 100);
    EXPECT_EQ(MmGetMdlPageCount(mdl), 3u);
    EXPECT_EQ(static_cast<size_t>(mdl->Size), sizeof(MDL) + 3 * sizeof(PFN_NUMBER));
    EXPECT_TRUE(mdl->MdlFlags & MDL_PAGES_LOCKED);
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(MmGetMdlPfnArray(mdl)[i], buffer.pfns()[i]);
}

// RMR-VA-03, LAM-VA-01: a decoy-VA MDL's address is the decoy's while its PFNs are the real
// buffer's; the arena says which pages the address itself maps.
TEST_F(Mdl, DecoyVaMdlLabelsOnePagesWithAnothersAddress) {
    LockedBuffer decoy = arena.allocate(8 * PAGE_SIZE);
    MdlChain chain = with_decoy_va(buffer, decoy, 100, 2 * PAGE_SIZE);
    ChainPages pages = chain_pages(chain.head(), 2 * PAGE_SIZE);
    ASSERT_TRUE(pages.contiguous) << pages.problem;
    EXPECT_EQ(pages.virtual_address, decoy.data() + 100);
    EXPECT_EQ(pages.first_byte_offset, 100u);
    ASSERT_EQ(pages.pfns.size(), 3u);
    for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(pages.pfns[i], buffer.pfns()[i]);
    auto behind = Arena::pages_mapped_at(pages.virtual_address, 2 * PAGE_SIZE);
    ASSERT_TRUE(behind.has_value());
    ASSERT_EQ(behind->size(), 3u);
    for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ((*behind)[i], decoy.pfns()[i]);
    int not_arena = 0;
    EXPECT_FALSE(Arena::pages_mapped_at(&not_arena, sizeof not_arena).has_value());
}

TEST_F(Mdl, ContiguousSplitChainReadsBackAsItsPages) {
    const size_t pieces[] = {PAGE_SIZE - 200 + 50, 3000, 2 * PAGE_SIZE};  // joints mid-page
    MdlChain chain = describe_split(buffer, 200, pieces);
    ASSERT_EQ(chain.mdl_count(), 3u);
    size_t length = chain.byte_count();
    ChainPages pages = chain_pages(chain.head(), length);
    ASSERT_TRUE(pages.contiguous) << pages.problem;
    EXPECT_EQ(pages.first_byte_offset, 200u);
    EXPECT_EQ(pages.virtual_address, buffer.data() + 200);
    size_t spanned = (200 + length + PAGE_SIZE - 1) / PAGE_SIZE;
    ASSERT_EQ(pages.pfns.size(), spanned);
    for (size_t i = 0; i < spanned; ++i)
        EXPECT_EQ(pages.pfns[i], buffer.pfns()[i]);
}

TEST_F(Mdl, PageAlignedJointsAlsoReadBack) {
    const size_t pieces[] = {PAGE_SIZE, PAGE_SIZE, PAGE_SIZE};
    MdlChain chain = describe_split(buffer, 0, pieces);
    ChainPages pages = chain_pages(chain.head(), 3 * PAGE_SIZE);
    ASSERT_TRUE(pages.contiguous) << pages.problem;
    EXPECT_EQ(pages.pfns.size(), 3u);
}

TEST_F(Mdl, AHoleIsNotVirtuallyContiguous) {
    MdlChain chain = with_hole(buffer, 0, PAGE_SIZE, PAGE_SIZE, PAGE_SIZE);
    ChainPages pages = chain_pages(chain.head(), 2 * PAGE_SIZE);
    EXPECT_FALSE(pages.contiguous);
    EXPECT_NE(pages.problem.find("not virtually contiguous"), std::string::npos) << pages.problem;
    // Only the part before the hole is contiguous.
    EXPECT_TRUE(chain_pages(chain.head(), PAGE_SIZE).contiguous);
}

TEST_F(Mdl, AMisalignedJointIsNotVirtuallyContiguous) {
    MdlChain chain = with_misaligned_joint(buffer, 0, PAGE_SIZE + 10, PAGE_SIZE);
    EXPECT_EQ(chain.mdl(1)->ByteOffset, 0u);
    EXPECT_EQ(MmGetMdlVirtualAddress(chain.mdl(1)), buffer.data() + 2 * PAGE_SIZE);
    EXPECT_FALSE(chain_pages(chain.head(), PAGE_SIZE + 20).contiguous);
}

TEST_F(Mdl, AChainShorterThanLengthIsReported) {
    MdlChain chain = describe(buffer, 0, PAGE_SIZE);
    ChainPages pages = chain_pages(chain.head(), PAGE_SIZE + 1);
    EXPECT_FALSE(pages.contiguous);
    EXPECT_NE(pages.problem.find("fewer than"), std::string::npos) << pages.problem;
}

TEST_F(Mdl, PiecesOutsideTheBufferAreRefused) {
    EXPECT_THROW(describe(buffer, 7 * PAGE_SIZE, 2 * PAGE_SIZE), std::out_of_range);
    EXPECT_THROW(with_misaligned_joint(buffer, 0, PAGE_SIZE, 10), std::invalid_argument);
}

}  // namespace
}  // namespace ndkct::platform
