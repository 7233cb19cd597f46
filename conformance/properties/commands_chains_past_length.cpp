// commands_chains_past_length.cpp: NdkRegisterMr over chains broken past Length
// (commands_chains_past_length.hpp).
#include "commands_chains_past_length.hpp"

#include <algorithm>

namespace ndkct::properties {

namespace gen = rc::gen;

RegisterMrBeforeABreak::RegisterMrBeforeABreak(const World& w) : RegisterMr(w) {
    // Whole pages, from a page's start or mid-page (RMR-MDL-04 is named first for whole pages;
    // a refusal of a partial page is as likely RMR-LEN-03's).
    const uint32_t pages = *gen::inRange<uint32_t>(1, 3);
    gap = *gen::elementOf(std::vector<uint32_t>{1, 8, PAGE_SIZE});
    after = *gen::inRange<uint32_t>(1, 513);
    const uint32_t room = kBufferBytes - pages * PAGE_SIZE - gap - after;
    region.offset = *gen::weightedOneOf<uint32_t>(
        {{1, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(0, room + 1)}});
    region.length = pages * PAGE_SIZE;
    region.shape = Region::Shape::whole;  // the region: what one MDL over it would register
    length = region.length;
}

void RegisterMrBeforeABreak::run(const World&, Sut& sut) const {
    auto* m = sut.object<NDK_MR>(mr);
    if (!m) return skipped(sut, *this, "the MR was never created");
    sut.chains.push_back(
        platform::with_hole(sut.buffers[region.buffer], region.offset, region.length, gap, after));
    conformance::Done d = sut.session.register_mr(m, sut.chains.back().head(), length, flags);
    if (d.ok()) registered(sut);
    finish(sut, *this, answer(d));
}

void RegisterMrBeforeABreak::show(std::ostream& os) const {
    os << "NdkRegisterMr(" << slot_name(Kind::mr, mr) << ", MDL{buf" << int(region.buffer) << "+0x"
       << std::hex << region.offset << ", 0x" << region.length << ", then 0x" << gap
       << " skipped then 0x" << after << "}, Length=0x" << length << ", Flags=0x" << flags
       << std::dec << ")";
}

RegisteredBeforeABreak::RegisteredBeforeABreak(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = false;
    c->apply(after);
    auto m = std::make_shared<RegisterMrBeforeABreak>(after);
    m->mr = made_at;
    if (!one_in(4)) m->flags |= NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE;
    m->apply(after);
    auto wr = std::make_shared<Write>(after);
    wr->remote = made_at;
    wr->remote_kind = Kind::mr;
    wr->remote_offset = *gen::inRange<uint32_t>(0, uint32_t(m->length));
    create_mr = c;
    register_mr = m;
    write = wr;
}

std::vector<std::shared_ptr<const Command>> RegisteredBeforeABreak::steps(int base) const {
    auto m = std::make_shared<RegisterMrBeforeABreak>(*register_mr);
    m->mr = moved(m->mr, base);
    auto wr = std::make_shared<Write>(*write);
    wr->remote = moved(wr->remote, base);
    for (auto& sge : wr->sgl)
        sge.mr = moved(sge.mr, base);
    return {create_mr, m, wr};
}

}  // namespace ndkct::properties
