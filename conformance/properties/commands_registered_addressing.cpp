// commands_registered_addressing.cpp: NdkRegisterMr's addressing and lifetime
// (commands_registered_addressing.hpp).
#include "commands_registered_addressing.hpp"

#include <algorithm>

namespace ndkct::properties {

namespace gen = rc::gen;

RegisteredBareOffsetWrite::RegisteredBareOffsetWrite(const World& w) : BareOffsetWrite(w) {
    auto plain = w.open_of(Kind::mr, [](const Slot& s) { return !s.fast && s.length > 0; });
    if (!plain.empty()) {
        remote = *gen::elementOf(plain);
        remote_kind = Kind::mr;
        // An offset inside the region, most of it left for the write (RMR-VA-02 is about an
        // address the region would answer if it took offsets).
        const uint32_t length = w.slots[remote].length;
        remote_offset = *gen::inRange<uint32_t>(0, std::min<uint32_t>(length, 257));
    }
    // Not silent: its failure is its own entry (a silent write the provider lets through leaves
    // none, and only the missing entry of a failure would show, WR-10).
    flags &= ~uint32_t(NDK_OP_FLAG_SILENT_SUCCESS);
}

void RegisteredBareOffsetWrite::show(std::ostream& os) const {
    show_call(os, "NdkWrite");
    os << " [RemoteAddress is the bare offset 0x" << std::hex << remote_offset << std::dec
       << ", not the registered region's virtual address plus it]";
}

RegisteredBareOffsetAccess::RegisteredBareOffsetAccess(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = false;
    c->apply(after);
    auto m = std::make_shared<RegisterMr>(after);
    m->mr = made_at;
    if (!one_in(4)) m->flags |= NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE;
    m->apply(after);
    auto b = std::make_shared<RegisteredBareOffsetWrite>(after);
    b->remote = made_at;
    b->remote_kind = Kind::mr;
    b->remote_offset = b->remote_offset % std::max<uint32_t>(uint32_t(m->length), 1);
    create_mr = c;
    register_mr = m;
    write = b;
}

std::vector<std::shared_ptr<const Command>> RegisteredBareOffsetAccess::steps(int base) const {
    auto m = std::make_shared<RegisterMr>(*register_mr);
    m->mr = moved(m->mr, base);
    auto b = std::make_shared<RegisteredBareOffsetWrite>(*write);
    b->remote = moved(b->remote, base);
    return {create_mr, m, b};
}

WriteAfterDeregister::WriteAfterDeregister(const World& w) : Write(w) {
    auto plain = w.open_of(Kind::mr, [](const Slot& s) { return !s.fast && s.length > 0; });
    if (!plain.empty()) {
        remote = *gen::elementOf(plain);
        remote_kind = Kind::mr;
        remote_offset = *gen::inRange<uint32_t>(0, std::min<uint32_t>(w.slots[remote].length, 257));
    }
    // Not silent either (RegisteredBareOffsetWrite): a failure it must have is its own entry.
    flags &= ~uint32_t(NDK_OP_FLAG_INLINE | NDK_OP_FLAG_SILENT_SUCCESS);
}

void WriteAfterDeregister::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    // Where the MR's last registration put the region (registered or not any more).
    const bool known = size_t(remote) < sut.mrs.size() && sut.mrs[remote].base != 0;
    uint64_t address =
        known ? sut.mrs[remote].base + remote_offset : sut.remote_address(remote, remote_offset);
    auto sges = sut.sges(sgl);
    NTSTATUS s =
        sut.session.write(q, sut.next_context(), sges, address, sut.remote_token(remote), flags);
    finish(sut, *this, answer(s));
}

void WriteAfterDeregister::show(std::ostream& os) const {
    show_call(os, "NdkWrite");
    os << " [through the MR's last registration's remote token and region, registered or not]";
}

DeregisteredRegionAccess::DeregisteredRegionAccess(const World& w) : Composite(w) {
    World after = w;
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = false;
    c->apply(after);
    auto m = std::make_shared<RegisterMr>(after);
    m->mr = made_at;
    if (!one_in(4)) m->flags |= NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE;
    m->apply(after);
    auto d = std::make_shared<DeregisterMr>(after);
    d->mr = made_at;
    auto b = std::make_shared<WriteAfterDeregister>(after);
    b->remote = made_at;
    b->remote_kind = Kind::mr;
    b->remote_offset = b->remote_offset % std::max<uint32_t>(uint32_t(m->length), 1);
    create_mr = c;
    register_mr = m;
    deregister_mr = d;
    write = b;
}

std::vector<std::shared_ptr<const Command>> DeregisteredRegionAccess::steps(int base) const {
    auto m = std::make_shared<RegisterMr>(*register_mr);
    m->mr = moved(m->mr, base);
    auto d = std::make_shared<DeregisterMr>(*deregister_mr);
    d->mr = m->mr;
    auto b = std::make_shared<WriteAfterDeregister>(*write);
    b->remote = moved(b->remote, base);
    return {create_mr, m, d, b};
}

RegisterTwice::RegisterTwice(const World& w) : Composite(w) {
    World after = w;
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = false;
    c->apply(after);
    auto a = std::make_shared<RegisterMr>(after);
    a->mr = made_at;
    if (!one_in(3)) {  // mostly a chain of several MDLs: its registration may lack resources
        a->region.shape = Region::Shape::split;
        a->region.length = std::max<uint32_t>(a->region.length, 2);
        a->length = a->region.length;
    }
    a->apply(after);
    auto b = std::make_shared<RegisterMr>(after);
    b->mr = made_at;
    create_mr = c;
    first = a;
    second = b;
}

std::vector<std::shared_ptr<const Command>> RegisterTwice::steps(int base) const {
    auto a = std::make_shared<RegisterMr>(*first);
    a->mr = moved(a->mr, base);
    auto b = std::make_shared<RegisterMr>(*second);
    b->mr = moved(b->mr, base);
    return {create_mr, a, b};
}

ReregisteredSourceWrite::ReregisteredSourceWrite(const World& w) : Composite(w) {
    World after = w;
    const int target = made_at, source = made_at + 1;
    auto ct = std::make_shared<CreateMr>(w);
    ct->fast_register = false;
    ct->apply(after);
    auto rt = std::make_shared<RegisterMr>(after);
    rt->mr = target;
    rt->flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_WRITE;
    rt->region.shape = Region::Shape::whole;
    rt->length = rt->region.length;
    rt->apply(after);
    auto cs = std::make_shared<CreateMr>(after);
    cs->fast_register = false;
    cs->pd = ct->pd;
    cs->apply(after);
    auto rs = std::make_shared<RegisterMr>(after);
    rs->mr = source;
    rs->apply(after);
    auto ds = std::make_shared<DeregisterMr>(after);
    ds->mr = source;
    auto again = std::make_shared<RegisterMr>(after);
    again->mr = source;
    again->flags = 0;  // RMR-FLG-02: a local source needs no right
    again->region.shape = Region::Shape::whole;
    again->length = again->region.length;
    again->apply(after);
    auto wr = std::make_shared<Write>(after);
    const uint32_t n =
        std::max<uint32_t>(1, std::min<uint32_t>({again->region.length, rt->region.length, 256}));
    wr->sgl = {SgePlan{source, 0, n}};
    wr->remote = target;
    wr->remote_kind = Kind::mr;
    wr->remote_offset = 0;
    wr->flags = 0;
    create_target = ct;
    register_target = rt;
    create_source = cs;
    register_source = rs;
    deregister_source = ds;
    register_again = again;
    write = wr;
}

std::vector<std::shared_ptr<const Command>> ReregisteredSourceWrite::steps(int base) const {
    auto rt = std::make_shared<RegisterMr>(*register_target);
    rt->mr = moved(rt->mr, base);
    auto cs = std::make_shared<CreateMr>(*create_source);
    auto rs = std::make_shared<RegisterMr>(*register_source);
    rs->mr = moved(rs->mr, base);
    auto ds = std::make_shared<DeregisterMr>(*deregister_source);
    ds->mr = moved(ds->mr, base);
    auto again = std::make_shared<RegisterMr>(*register_again);
    again->mr = moved(again->mr, base);
    auto wr = std::make_shared<Write>(*write);
    wr->remote = moved(wr->remote, base);
    for (auto& p : wr->sgl)
        p.mr = moved(p.mr, base);
    return {create_target, rt, cs, rs, ds, again, wr};
}

}  // namespace ndkct::properties
