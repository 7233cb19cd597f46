// commands_fast_register_labels.cpp: fast registrations at labels beyond every pointer
// (commands_fast_register_labels.hpp).
#include "commands_fast_register_labels.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;

HighLabelFastRegistration::HighLabelFastRegistration(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = true;
    c->apply(after);
    auto i = std::make_shared<InitializeFastRegisterMr>(after);
    i->mr = made_at;
    i->remote_access = true;
    i->apply(after);
    auto l = std::make_shared<BuildLam>(after);
    l->apply(after);
    auto f = std::make_shared<FastRegister>(after);
    f->mr = made_at;
    f->lam = made_at + 1;
    f->misalignment = 0;  // congruent to FBO: a valid start, however large (FR-ALIGN-01)
    f->flags = NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
    // Bit 47 (the first address no 48-bit x86-64 or arm64 user pointer has) or bit 63.
    f->label_bias = *gen::element(uint64_t{1} << 47, uint64_t{1} << 63);
    f->apply(after);
    auto wr = std::make_shared<Write>(after);
    wr->remote = made_at;
    wr->remote_kind = Kind::mr;
    wr->remote_offset = *gen::inRange<uint32_t>(0, std::max<uint32_t>(l->region.length, 1));
    create_mr = std::move(c);
    initialize = std::move(i);
    build_lam = std::move(l);
    fast_register = std::move(f);
    write = std::move(wr);
}

std::vector<std::shared_ptr<const Command>> HighLabelFastRegistration::steps(int base) const {
    auto i = std::make_shared<InitializeFastRegisterMr>(*initialize);
    i->mr = moved(i->mr, base);
    auto f = std::make_shared<FastRegister>(*fast_register);
    f->mr = moved(f->mr, base);
    f->lam = moved(f->lam, base);
    auto wr = std::make_shared<Write>(*write);
    wr->remote = moved(wr->remote, base);
    for (auto& e : wr->sgl)
        if (e.mr >= 0) e.mr = moved(e.mr, base);
    return {create_mr, i, build_lam, f, wr};
}

}  // namespace ndkct::properties
