// commands_s12lamrel.cpp: a mapping used after another was released (commands_s12lamrel.hpp).
#include "commands_s12lamrel.hpp"

namespace ndkct::properties {

namespace {
constexpr int kSetupPd = 0, kSender = 2, kReceiver = 3;  // initial_world(): pd0, qp2 <-> qp3

std::shared_ptr<BuildLam> whole_mapping(const World& w) {
    auto b = std::make_shared<BuildLam>(w);
    b->region.shape = Region::Shape::whole;
    b->length = b->region.length;
    b->buffer_size = uint32_t(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(b->region.pages()));
    return b;
}
}  // namespace

SendAfterARelease::SendAfterARelease(const World& w) : Composite(w) {
    RC_PRE(w.is(kSender, Kind::qp) && w.is(kReceiver, Kind::qp) && w.node_of(kSender) == 0);
    World after = w;                    // each call generated in the World the ones before it leave
    auto first = whole_mapping(after);  // slot made_at: released
    first->apply(after);
    auto second = whole_mapping(after);  // slot made_at + 1: used
    second->apply(after);
    auto c = std::make_shared<CreateMr>(after);  // slot made_at + 2: the sink
    c->pd = kSetupPd;
    c->fast_register = false;
    c->apply(after);
    auto m = std::make_shared<RegisterMr>(after);
    m->mr = made_at + 2;
    m->region.shape = Region::Shape::whole;
    m->length = m->region.length;
    m->flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
    m->apply(after);
    auto r = std::make_shared<Receive>(after);
    r->qp = kReceiver;
    r->sgl = {SgePlan{made_at + 2, 0, uint32_t(m->length)}};
    r->apply(after);
    auto l = std::make_shared<ReleaseLam>(after);
    l->lam = made_at;
    l->apply(after);
    auto s = std::make_shared<SendFromLam>(after);
    s->lam = made_at + 1;
    s->bytes = std::min<uint32_t>(s->bytes, uint32_t(m->length));
    build_released = std::move(first);
    build_used = std::move(second);
    create_mr = std::move(c);
    register_mr = std::move(m);
    receive = std::move(r);
    release = std::move(l);
    send = std::move(s);
}

std::vector<std::shared_ptr<const Command>> SendAfterARelease::steps(int base) const {
    auto m = std::make_shared<RegisterMr>(*register_mr);
    m->mr = moved(m->mr, base);
    auto r = std::make_shared<Receive>(*receive);
    for (auto& p : r->sgl)
        p.mr = moved(p.mr, base);
    auto l = std::make_shared<ReleaseLam>(*release);
    l->lam = moved(l->lam, base);
    auto s = std::make_shared<SendFromLam>(*send);
    s->lam = moved(s->lam, base);
    return {build_released, build_used, create_mr, m, r, l, s};
}

}  // namespace ndkct::properties
