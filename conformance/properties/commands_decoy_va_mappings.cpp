// commands_decoy_va_mappings.cpp: NdkBuildLam over decoy-VA MDLs (commands_decoy_va_mappings.hpp).
#include "commands_decoy_va_mappings.hpp"

#include <sstream>

namespace ndkct::properties {

namespace {
constexpr int kSender = 2, kReceiver = 3;  // initial_world(): qp2 <-> qp3

std::string hex(uint64_t v) {
    std::ostringstream os;
    os << "0x" << std::hex << v;
    return os.str();
}
}  // namespace

BuildLamWithDecoyVa::BuildLamWithDecoyVa(const World& w) : BuildLam(*whole_mapping(w)) {
    decoy = uint8_t((region.buffer + 1) % kBuffers);
}

void BuildLamWithDecoyVa::run(const World& w, Sut& sut) const {
    int slot = int(w.slots.size());
    sut.chains.push_back(platform::with_decoy_va(sut.buffers[region.buffer], sut.buffers[decoy],
                                                 region.offset, region.length));
    auto lam = std::make_unique<conformance::LamResult>(
        sut.session.build_lam(sut.chains.back().head(), length, buffer_size));
    std::string a = answer(lam->done) + ", *pLAMSize=" + hex(lam->size_out);
    sut.place(slot, nullptr);
    if (lam->done.ok()) {
        a += ", *pFBO=" + hex(lam->fbo) + ": " + slot_name(Kind::lam, slot) + " (" +
             std::to_string(lam->pages().size()) + " pages)";
        sut.objects[slot] = lam->mapping();
        sut.lams[slot] = std::move(lam);
    }
    finish(sut, *this, a);
}

void BuildLamWithDecoyVa::show(std::ostream& os) const {
    os << "NdkBuildLam(adapter, MDL{pages of " << region << ", VA of buf" << int(decoy)
       << "}, Length=0x" << std::hex << length << ", *pLAMSize=0x" << buffer_size << std::dec
       << ")";
}

SendFromDecoyVaMapping::SendFromDecoyVaMapping(const World& w) : Composite(w) {
    RC_PRE(w.is(kSender, Kind::qp) && w.is(kReceiver, Kind::qp) && w.node_of(kSender) == 0);
    World after = w;  // each call generated in the World the ones before it leave
    auto b = std::make_shared<BuildLamWithDecoyVa>(w);
    b->apply(after);
    sink = receive_sink(after, made_at + 1);
    auto s = std::make_shared<SendFromLam>(after);
    s->lam = made_at;
    s->bytes = std::min<uint32_t>(s->bytes, sink.length());
    build_lam = std::move(b);
    send = std::move(s);
}

std::vector<std::shared_ptr<const Command>> SendFromDecoyVaMapping::steps(int base) const {
    std::vector<std::shared_ptr<const Command>> out{build_lam};
    for (auto& step : sink.steps(*this, base))
        out.push_back(step);
    auto s = std::make_shared<SendFromLam>(*send);
    s->lam = moved(s->lam, base);
    out.push_back(std::move(s));
    return out;
}

}  // namespace ndkct::properties
