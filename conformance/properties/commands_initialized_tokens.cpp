// commands_initialized_tokens.cpp: the local token a fast-register MR reports before its first fast
// registration (commands_initialized_tokens.hpp).
#include "commands_initialized_tokens.hpp"

#include "commands_mappings_and_initializations.hpp"

namespace ndkct::properties {

namespace {
constexpr int kSender = 2;  // initial_world(): qp2 <-> qp3
}  // namespace

void WriteThroughInitializedToken::run(const World& w, Sut& sut) const {
    if (size_t(source) >= sut.mrs.size()) return Write::run(w, sut);
    // The SGEs take the source's token from its MrRecord: the one read after initialization
    // stands in for the one read after the registration while the call is made.
    const uint32_t registered = sut.mrs[source].local_token;
    sut.mrs[source].local_token = sut.mrs[source].initialized_token;
    Write::run(w, sut);
    sut.mrs[source].local_token = registered;
}

void WriteThroughInitializedToken::show(std::ostream& os) const {
    show_call(os, "NdkWrite");
    os << " through the local token " << slot_name(Kind::mr, source)
       << " reported before its fast registration";
}

InitializedTokenSourceWrite::InitializedTokenSourceWrite(const World& w) : Composite(w) {
    RC_PRE(w.is(kSender, Kind::qp));
    World after = w;
    const int target = made_at, source = made_at + 1, lam = made_at + 2;
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
    cs->fast_register = true;
    cs->pd = ct->pd;
    cs->apply(after);
    auto b = whole_mapping(after);
    const uint32_t pages = std::max<uint32_t>(uint32_t(b->region.pages()), 1);
    auto i = std::make_shared<InitializeFastRegisterMr>(after);
    i->mr = source;
    i->adapter_page_count = pages;
    i->remote_access = false;
    i->apply(after);
    b->apply(after);
    auto f = std::make_shared<FastRegister>(after);
    f->qp = kSender;
    f->mr = source;
    f->lam = lam;
    f->page_count = pages;
    f->fbo_mode = FastRegister::Fbo::from_lam;
    f->length_delta = 0;
    f->base_va_offset = 0;
    f->misalignment = 0;
    f->flags = 0;  // FR-FLG-02: a local source needs no right
    f->apply(after);
    auto wr = std::make_shared<WriteThroughInitializedToken>(after);
    wr->qp = kSender;
    const uint32_t n = std::max<uint32_t>(
        1, std::min<uint32_t>({uint32_t(b->region.length), uint32_t(rt->region.length), 256}));
    wr->sgl = {SgePlan{source, 0, n}};
    wr->source = source;
    wr->remote = target;
    wr->remote_kind = Kind::mr;
    wr->remote_offset = 0;
    wr->flags = 0;
    create_target = ct;
    register_target = rt;
    create_source = cs;
    initialize = i;
    build_lam = b;
    fast_register = f;
    write = wr;
}

std::vector<std::shared_ptr<const Command>> InitializedTokenSourceWrite::steps(int base) const {
    auto rt = std::make_shared<RegisterMr>(*register_target);
    rt->mr = moved(rt->mr, base);
    auto i = std::make_shared<InitializeFastRegisterMr>(*initialize);
    i->mr = moved(i->mr, base);
    auto f = std::make_shared<FastRegister>(*fast_register);
    f->mr = moved(f->mr, base);
    f->lam = moved(f->lam, base);
    auto wr = std::make_shared<WriteThroughInitializedToken>(*write);
    wr->remote = moved(wr->remote, base);
    wr->source = moved(wr->source, base);
    for (auto& p : wr->sgl)
        p.mr = moved(p.mr, base);
    return {create_target, rt, create_source, i, build_lam, f, wr};
}

}  // namespace ndkct::properties
