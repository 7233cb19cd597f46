// commands_mapping_failures.cpp: failing NdkBuildLam requests between builds of one mapping
// (commands_mapping_failures.hpp).
#include "commands_mapping_failures.hpp"

#include <new>

namespace ndkct::properties {

namespace gen = rc::gen;

namespace {

Region whole_region() {
    Region r = *Region::any();
    r.shape = Region::Shape::whole;
    return r;
}

uint32_t exact_size(const Region& r) {
    return uint32_t(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(r.pages()));
}

// NdkBuildLam of the region with the exact size, then NdkReleaseLam of what was built; the
// answer, for the log.
std::string build_and_release(Sut& sut, const Region& r) {
    MDL* head = sut.chain(r).head();  // (heap-held: stays put as Sut::chains grows)
    conformance::LamResult lam = sut.session.build_lam(head, r.length, exact_size(r));
    std::string a = answer(lam.done);
    if (lam.done.ok()) sut.session.release_lam(lam);
    return a;
}

}  // namespace

// ================= ProbeBuildAndRelease (LAM-ERR-01) =================

ProbeBuildAndRelease::ProbeBuildAndRelease(const World&) : region(whole_region()) {
    uint32_t exact = exact_size(region);
    probe_size = *gen::weightedOneOf<uint32_t>(
        {{1, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(0, exact)}});
    rounds = *gen::inRange<int>(64, 97);  // enough to fill any table a 1-page leak reaches
}

void ProbeBuildAndRelease::show(std::ostream& os) const {
    os << rounds << " x {NdkBuildLam(adapter, " << region << ", Length=0x" << std::hex
       << region.length << ", *pLAMSize=0x" << probe_size << "), the same with *pLAMSize=0x"
       << exact_size(region) << std::dec << ", NdkReleaseLam}";
}

void ProbeBuildAndRelease::run(const World&, Sut& sut) const {
    MDL* head = sut.chain(region).head();
    std::string a;
    for (int round = 0; round < rounds; ++round) {
        conformance::LamResult probe = sut.session.build_lam(head, region.length, probe_size);
        a = "round " + std::to_string(round) + ": " + answer(probe.done) + ", then " +
            build_and_release(sut, region);
        if (!sut.session.verdict().ok()) break;  // judged: finish() reports it
    }
    finish(sut, *this, a);
}

// ================= ShortageBetweenBuilds (LAM-ST-03) =================

ShortageBetweenBuilds::ShortageBetweenBuilds(const World&) : region(whole_region()) {
    // Larger than any region the other commands map (a buffer, 8 pages), within what the
    // sequence's arena has free besides its buffers.
    large_pages = *gen::inRange<uint32_t>(2 * kBufferPages, 3 * kBufferPages + 1);
}

void ShortageBetweenBuilds::show(std::ostream& os) const {
    os << "NdkBuildLam(adapter, " << region << ") and NdkReleaseLam, NdkBuildLam of " << large_pages
       << " pages (released if built), then the first again";
}

void ShortageBetweenBuilds::run(const World&, Sut& sut) const {
    std::string a = build_and_release(sut, region);
    const size_t large_bytes = size_t{large_pages} * PAGE_SIZE;
    platform::LockedBuffer large;
    try {
        large = sut.session.buffer(large_bytes);
    } catch (const std::bad_alloc&) {
        return skipped(sut, *this, "the arena has no room for the large request's buffer");
    }
    auto large_chain = platform::describe(large, 0, large_bytes);
    conformance::LamResult big = sut.session.build_lam(
        large_chain.head(), large_bytes, uint32_t(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(large_pages)));
    a += "; the large one: " + answer(big.done);
    if (big.done.ok()) sut.session.release_lam(big);
    a += "; again: " + build_and_release(sut, region);
    finish(sut, *this, a);
}

}  // namespace ndkct::properties
