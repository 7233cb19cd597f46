// commands_silent_failure.cpp: a silent fast registration that fails (commands_silent_failure.hpp).
#include "commands_silent_failure.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;

SilentFastRegisterOverValid::SilentFastRegisterOverValid(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto source = std::make_shared<CreateMr>(w);
    source->fast_register = false;
    source->apply(after);
    auto registration = std::make_shared<RegisterMr>(after);
    registration->mr = made_at;
    // A source that registers (RMR-LEN-01, RMR-MDL-01: its whole chain, its bytes): the write
    // can then fail only at the remote side, which is what shows the registration not in force.
    registration->region.shape = Region::Shape::whole;
    registration->length = registration->region.length;
    registration->flags = 0;  // local read needs no right
    registration->apply(after);
    auto fast = std::make_shared<CreateMr>(after);
    fast->fast_register = true;
    fast->apply(after);
    auto lam = std::make_shared<BuildLam>(after);
    lam->length = lam->region.length;  // a mapping that works: the region, the exact size
    lam->buffer_size = uint32_t(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(lam->region.pages()));
    auto init = std::make_shared<InitializeFastRegisterMr>(after);
    init->mr = made_at + 1;
    init->remote_access = true;  // FR-ACC-01: remote write needs it
    init->adapter_page_count = std::max(init->adapter_page_count, lam->region.pages());
    init->apply(after);
    lam->apply(after);
    // FR-FBO-*, FR-LEN-01, FR-ALIGN-01: every page of the LAM, its FBO, its Length, a base
    // congruent to the FBO; the first with remote write, and an entry.
    auto one = std::make_shared<FastRegister>(after);
    one->mr = made_at + 1;
    one->lam = made_at + 2;
    one->page_count = lam->region.pages();
    one->fbo_mode = FastRegister::Fbo::from_lam;
    one->length_delta = 0;
    one->misalignment = 0;
    one->base_va_offset = 0;
    one->flags = NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
    one->apply(after);
    // The second over it (AMB-30: not invalidated), past the first region's end, silent.
    auto two = std::make_shared<FastRegister>(*one);
    two->base_va_offset = uint64_t(lam->region.pages() + *gen::inRange<uint32_t>(0, 4)) * PAGE_SIZE;
    two->flags = NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS;
    // The peer writes from the source region into the second region's span.
    auto wr = std::make_shared<Write>(after);
    wr->qp = after.is(after.slots[one->qp].peer, Kind::qp) ? after.slots[one->qp].peer : wr->qp;
    wr->remote = made_at + 1;
    wr->remote_kind = Kind::mr;
    const uint32_t room = std::max<uint32_t>(lam->region.length, 1);
    const uint32_t n = std::min<uint32_t>({room, std::max<uint32_t>(after.slots[made_at].length, 1),
                                           *gen::elementOf(std::vector<uint32_t>{8, 64, 4096})});
    wr->sgl = {SgePlan{made_at, 0, n}};
    wr->remote_offset = *gen::inRange<uint32_t>(0, room - n + 1);
    wr->flags = 0;  // it makes an entry
    create_source = std::move(source);
    register_source = std::move(registration);
    create_fast = std::move(fast);
    initialize = std::move(init);
    build_lam = std::move(lam);
    first = std::move(one);
    second = std::move(two);
    write = std::move(wr);
}

std::vector<std::shared_ptr<const Command>> SilentFastRegisterOverValid::steps(int base) const {
    auto m = std::make_shared<RegisterMr>(*register_source);
    m->mr = moved(m->mr, base);
    auto i = std::make_shared<InitializeFastRegisterMr>(*initialize);
    i->mr = moved(i->mr, base);
    auto f1 = std::make_shared<FastRegister>(*first);
    f1->mr = moved(f1->mr, base);
    f1->lam = moved(f1->lam, base);
    auto f2 = std::make_shared<FastRegister>(*second);
    f2->mr = moved(f2->mr, base);
    f2->lam = moved(f2->lam, base);
    auto wr = std::make_shared<Write>(*write);
    wr->remote = moved(wr->remote, base);
    for (auto& e : wr->sgl)
        if (e.mr >= 0) e.mr = moved(e.mr, base);
    return {create_source, m, create_fast, i, build_lam, f1, f2, wr};
}

}  // namespace ndkct::properties
