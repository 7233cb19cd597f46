// commands_read_fence.cpp: NdkFastRegister's READ_FENCE (commands_read_fence.hpp).
#include "commands_read_fence.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;

ReadThenFencedFastRegister::ReadThenFencedFastRegister(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto region = std::make_shared<CreateMr>(w);
    region->fast_register = false;
    region->apply(after);
    auto registration = std::make_shared<RegisterMr>(after);
    registration->mr = made_at;
    // RD-01: the read's source is remotely readable and its sink locally writable (and a read
    // sink, for adapters that need one: RMR-SINK-01).
    registration->flags |=
        NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ | NDK_MR_FLAG_RDMA_READ_SINK;
    registration->apply(after);
    auto fast = std::make_shared<CreateMr>(after);
    fast->fast_register = true;
    fast->apply(after);
    auto init = std::make_shared<InitializeFastRegisterMr>(after);
    init->mr = made_at + 1;
    init->apply(after);
    auto lam = std::make_shared<BuildLam>(after);
    lam->apply(after);
    auto rd = std::make_shared<Read>(after);
    // The region's second half into its first: apart, so the bytes the read leaves are fixed.
    const uint32_t half = std::max<uint32_t>(after.slots[made_at].length / 2, 1);
    const uint32_t n =
        std::min<uint32_t>(half, *gen::elementOf(std::vector<uint32_t>{8, 64, 4096}));
    rd->sgl = {SgePlan{made_at, 0, n}};
    rd->remote = made_at;
    rd->remote_kind = Kind::mr;
    rd->remote_offset = half;
    rd->flags = 0;  // it makes an entry (neither silent nor deferred)
    auto fr = std::make_shared<FencedFastRegister>(after);
    fr->qp = rd->qp;
    fr->mr = made_at + 1;
    fr->lam = made_at + 2;
    fr->flags &= ~uint32_t(NDK_OP_FLAG_SILENT_SUCCESS);  // it makes an entry
    create_region = std::move(region);
    register_region = std::move(registration);
    create_fast = std::move(fast);
    initialize = std::move(init);
    build_lam = std::move(lam);
    read = std::move(rd);
    fast_register = std::move(fr);
}

std::vector<std::shared_ptr<const Command>> ReadThenFencedFastRegister::steps(int base) const {
    auto m = std::make_shared<RegisterMr>(*register_region);
    m->mr = moved(m->mr, base);
    auto i = std::make_shared<InitializeFastRegisterMr>(*initialize);
    i->mr = moved(i->mr, base);
    auto rd = std::make_shared<Read>(*read);
    rd->remote = moved(rd->remote, base);
    for (auto& e : rd->sgl)
        if (e.mr >= 0) e.mr = moved(e.mr, base);
    auto f = std::make_shared<FencedFastRegister>(*fast_register);
    f->mr = moved(f->mr, base);
    f->lam = moved(f->lam, base);
    return {create_region, m, create_fast, i, build_lam, rd, f};
}

}  // namespace ndkct::properties
