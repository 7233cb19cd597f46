// commands_decoy_virtual_addresses.cpp: NdkRegisterMr over decoy-VA MDLs
// (commands_decoy_virtual_addresses.hpp).
#include "commands_decoy_virtual_addresses.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;

RegisterMrWithDecoyVa::RegisterMrWithDecoyVa(const World& w) : RegisterMr(w) {
    // One MDL over a range of at least a byte, registered whole: a valid call, so that the
    // transfers through it run (RMR-VA-03 is about where their bytes go).
    region.shape = Region::Shape::whole;
    length = region.length;
    decoy = uint8_t((region.buffer + 1) % kBuffers);
}

void RegisterMrWithDecoyVa::run(const World&, Sut& sut) const {
    auto* m = sut.object<NDK_MR>(mr);
    if (!m) return skipped(sut, *this, "the MR was never created");
    const auto& decoy_buffer = sut.buffers[decoy];
    sut.chains.push_back(platform::with_decoy_va(sut.buffers[region.buffer], decoy_buffer,
                                                 region.offset, region.length));
    conformance::Done d = sut.session.register_mr(m, sut.chains.back().head(), length, flags);
    if (d.ok()) {
        registered(sut);
        // RMR-VA-01: the region is addressed from its MDL's VA, the decoy's address.
        sut.mrs[mr].base = reinterpret_cast<uint64_t>(decoy_buffer.data()) + region.offset;
    }
    finish(sut, *this, answer(d));
}

void RegisterMrWithDecoyVa::show(std::ostream& os) const {
    os << "NdkRegisterMr(" << slot_name(Kind::mr, mr) << ", MDL{pages of " << region
       << ", VA of buf" << int(decoy) << "}, Length=0x" << std::hex << length << ", Flags=0x"
       << flags << std::dec << ")";
}

RegisteredWithDecoyVa::RegisteredWithDecoyVa(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = false;
    c->apply(after);
    auto m = std::make_shared<RegisterMrWithDecoyVa>(after);
    m->mr = made_at;
    if (!one_in(4))
        m->flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                   NDK_MR_FLAG_ALLOW_REMOTE_WRITE;
    m->apply(after);
    create_mr = c;
    register_mr = m;
    if (one_in(2)) {
        auto wr = std::make_shared<Write>(after);
        wr->remote = made_at;
        wr->remote_kind = Kind::mr;
        wr->remote_offset = *gen::inRange<uint32_t>(0, uint32_t(m->length));
        write = wr;
    } else {
        auto rd = std::make_shared<Read>(after);
        rd->remote = made_at;
        rd->remote_kind = Kind::mr;
        rd->remote_offset = *gen::inRange<uint32_t>(0, uint32_t(m->length));
        read = rd;
    }
}

std::vector<std::shared_ptr<const Command>> RegisteredWithDecoyVa::steps(int base) const {
    auto m = std::make_shared<RegisterMrWithDecoyVa>(*register_mr);
    m->mr = moved(m->mr, base);
    auto renumbered = [&](auto request) {
        request->remote = moved(request->remote, base);
        for (auto& sge : request->sgl)
            sge.mr = moved(sge.mr, base);
        return request;
    };
    if (write) return {create_mr, m, renumbered(std::make_shared<Write>(*write))};
    return {create_mr, m, renumbered(std::make_shared<Read>(*read))};
}

}  // namespace ndkct::properties
