// commands_lam_releases.cpp: a mapping used after another was released (commands_lam_releases.hpp).
#include "commands_lam_releases.hpp"

namespace ndkct::properties {

namespace {
constexpr int kSender = 2, kReceiver = 3;  // initial_world(): qp2 <-> qp3
}  // namespace

SendAfterARelease::SendAfterARelease(const World& w) : Composite(w) {
    RC_PRE(w.is(kSender, Kind::qp) && w.is(kReceiver, Kind::qp) && w.node_of(kSender) == 0);
    World after = w;                    // each call generated in the World the ones before it leave
    auto first = whole_mapping(after);  // slot made_at: released
    first->apply(after);
    auto second = whole_mapping(after);  // slot made_at + 1: used
    second->apply(after);
    sink = receive_sink(after, made_at + 2);  // slot made_at + 2: the sink
    auto l = std::make_shared<ReleaseLam>(after);
    l->lam = made_at;
    l->apply(after);
    auto s = std::make_shared<SendFromLam>(after);
    s->lam = made_at + 1;
    s->bytes = std::min<uint32_t>(s->bytes, sink.length());
    build_released = std::move(first);
    build_used = std::move(second);
    release = std::move(l);
    send = std::move(s);
}

std::vector<std::shared_ptr<const Command>> SendAfterARelease::steps(int base) const {
    std::vector<std::shared_ptr<const Command>> out{build_released, build_used};
    for (auto& step : sink.steps(*this, base))
        out.push_back(step);
    auto l = std::make_shared<ReleaseLam>(*release);
    l->lam = moved(l->lam, base);
    auto s = std::make_shared<SendFromLam>(*send);
    s->lam = moved(s->lam, base);
    out.push_back(std::move(l));
    out.push_back(std::move(s));
    return out;
}

}  // namespace ndkct::properties
