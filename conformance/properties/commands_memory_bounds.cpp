#include "commands_memory_bounds.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;

AccessAcrossTheEnd::AccessAcrossTheEnd(const World& w) {
    qp = w.pick(Kind::qp);
    mr = w.pick(Kind::mr);
    other = w.pick(Kind::mr);
    remote_side = *gen::arbitrary<bool>();
    write = *gen::weightedElement<bool>({{2, true}, {1, false}});
    // Mostly a few bytes on each side of the end (an access starting at the end now and then):
    // a page-rounding provider lets such an access through when the region ends inside a page.
    inside = *gen::weightedOneOf<uint32_t>(
        {{4, gen::elementOf(std::vector<uint32_t>{1, 2, 4, 8})}, {1, gen::just<uint32_t>(0)}});
    past = *gen::elementOf(std::vector<uint32_t>{1, 3, 8, 16});
}

void AccessAcrossTheEnd::checkPreconditions(const World& w) const {
    NDKCT_PRE(w.is(qp, Kind::qp) && w.is(mr, Kind::mr) && w.is(other, Kind::mr));
    // Two nodes: the local side on the QP's node, the remote side on its peer's.
    const int local = remote_side ? other : mr, remote = remote_side ? mr : other;
    NDKCT_PRE(w.usable_on(local, w.node_of(qp)) && w.usable_on(remote, w.far_node(qp)));
}

// How far before the end the access starts, as show() prints it (no more than the Length).
std::string AccessAcrossTheEnd::before() const {
    std::ostringstream os;
    os << "min(0x" << std::hex << inside << ", Length)";
    return inside == 0 ? "0x0" : os.str();
}

void AccessAcrossTheEnd::show(std::ostream& os) const {
    const uint32_t n = inside + past;
    os << (write ? "NdkWrite(" : "NdkRead(") << slot_name(Kind::qp, qp) << ", {";
    if (remote_side)
        os << slot_name(Kind::mr, other) << "+0x0, 0x" << std::hex << n << std::dec;
    else
        os << slot_name(Kind::mr, mr) << "+Length-" << before() << ", 0x" << std::hex << n
           << std::dec;
    os << "}, RemoteAddress=";
    if (remote_side)
        os << slot_name(Kind::mr, mr) << "+Length-" << before();
    else
        os << slot_name(Kind::mr, other) << "+0x0";
    os << ", RemoteToken=of " << slot_name(Kind::mr, remote_side ? mr : other) << ", Flags=0x0)";
}

void AccessAcrossTheEnd::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    const MrRecord& r = sut.mrs[mr];
    if (!r.registered || r.length == 0)
        return skipped(sut, *this, "no registration of the MR is known");
    // The access straddles [base, base + Length)'s end: Length - inside .. Length + past.
    const uint32_t in = uint32_t(std::min<uint64_t>(inside, r.length));
    const uint32_t start = uint32_t(r.length - in), n = in + past;
    std::vector<SgePlan> sgl{remote_side ? SgePlan{other, 0, n} : SgePlan{mr, start, n}};
    const int remote = remote_side ? mr : other;
    const uint64_t address = sut.remote_address(remote, remote_side ? start : 0);
    auto sges = sut.sges(sgl);
    NTSTATUS s =
        write ? sut.session.write(q, sut.next_context(), sges, address, sut.remote_token(remote), 0)
              : sut.session.read(q, sut.next_context(), sges, address, sut.remote_token(remote), 0);
    finish(sut, *this, answer(s));
}

RegionEndAccess::RegionEndAccess(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = false;
    c->apply(after);
    auto m = std::make_shared<RegisterMr>(after);
    m->mr = made_at;
    if (!one_in(4)) m->flags |= NDK_MR_FLAG_ALLOW_REMOTE_READ | NDK_MR_FLAG_ALLOW_REMOTE_WRITE;
    m->apply(after);
    auto a = std::make_shared<AccessAcrossTheEnd>(after);
    a->mr = a->other = made_at;
    create_mr = c;
    register_mr = m;
    access = a;
}

std::vector<std::shared_ptr<const Command>> RegionEndAccess::steps(int base) const {
    auto m = std::make_shared<RegisterMr>(*register_mr);
    m->mr = moved(m->mr, base);
    auto a = std::make_shared<AccessAcrossTheEnd>(*access);
    a->mr = moved(a->mr, base);
    a->other = moved(a->other, base);
    return {create_mr, m, a};
}

FastRegionEndAccess::FastRegionEndAccess(const World& w) : Composite(w) {
    auto r = std::make_shared<FastRegistration>(w);
    r->write = nullptr;
    if (!one_in(4)) {
        auto i = std::make_shared<InitializeFastRegisterMr>(*r->initialize);
        i->remote_access = true;
        r->initialize = i;
        auto f = std::make_shared<FastRegister>(*r->fast_register);
        f->flags = NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ |
                   NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
        f->misalignment = 0;
        if (f->length_delta >= 0)
            f->length_delta = -int64_t(*gen::elementOf(std::vector<uint32_t>{1, 3, 100, 2049}));
        r->fast_register = f;
    }
    World after = w;
    for (const auto& c : r->steps(made_at))
        c->apply(after);
    auto a = std::make_shared<AccessAcrossTheEnd>(after);
    a->mr = a->other = made_at;
    a->qp = r->fast_register->qp;  // after the registration in that QP's queue
    registration = r;
    access = a;
}

std::vector<std::shared_ptr<const Command>> FastRegionEndAccess::steps(int base) const {
    auto s = registration->steps(base);
    auto a = std::make_shared<AccessAcrossTheEnd>(*access);
    a->mr = moved(a->mr, base);
    a->other = moved(a->other, base);
    s.push_back(a);
    return s;
}

}  // namespace ndkct::properties
