// commands_first_registrations.cpp: a fast-register MR's first registration, its remote token read
// before it or not (commands_first_registrations.hpp).
#include "commands_first_registrations.hpp"

#include <sstream>

namespace ndkct::properties {

namespace gen = rc::gen;

void InitializeWithoutTokenReads::run(const World&, Sut& sut) const {
    auto* m = sut.object<NDK_MR>(mr);
    if (!m) return skipped(sut, *this, "the MR was never created");
    conformance::Done d =
        sut.session.initialize_fast_register_mr(m, adapter_page_count, remote_access);
    if (d.ok()) sut.mrs[mr].registered = false;  // its tokens are not read here
    finish(sut, *this, answer(d));
}

void ReadRemoteToken::run(const World&, Sut& sut) const {
    auto* m = sut.object<NDK_MR>(mr);
    if (!m) return skipped(sut, *this, "the MR was never created");
    std::ostringstream value;
    value << "0x" << std::hex << sut.session.remote_token(m);
    finish(sut, *this, value.str());
}

namespace {

// A valid first registration of `mr` over `lam` (initialized for `pages`).
std::shared_ptr<FastRegister> first_registration(World& after, int mr, int lam, uint32_t pages) {
    auto f = std::make_shared<FastRegister>(after);
    f->mr = mr;
    f->lam = lam;
    f->page_count = std::min(std::max<uint32_t>(after.slots[lam].pages, 1), pages);
    f->fbo_mode = FastRegister::Fbo::from_lam;
    f->length_delta = 0;
    f->misalignment = 0;
    f->flags = NDK_OP_FLAG_ALLOW_LOCAL_WRITE;
    f->apply(after);
    return f;
}

std::shared_ptr<InitializeWithoutTokenReads> initialization(World& after, int mr) {
    auto i = std::make_shared<InitializeWithoutTokenReads>(after);
    i->mr = mr;
    i->adapter_page_count = *gen::inRange<uint32_t>(1, 17);  // up to the guaranteed 16
    i->apply(after);
    return i;
}

}  // namespace

FirstRegistrations::FirstRegistrations(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto unread = std::make_shared<CreateMr>(w);
    unread->fast_register = true;
    unread->apply(after);
    auto read = std::make_shared<CreateMr>(after);
    read->fast_register = true;
    read->apply(after);
    auto i0 = initialization(after, made_at);
    auto i1 = initialization(after, made_at + 1);
    auto l = std::make_shared<BuildLam>(after);
    l->apply(after);
    register_unread = first_registration(after, made_at, made_at + 2, i0->adapter_page_count);
    register_read = first_registration(after, made_at + 1, made_at + 2, i1->adapter_page_count);
    create_unread = std::move(unread);
    create_read = std::move(read);
    initialize_unread = std::move(i0);
    initialize_read = std::move(i1);
    build_lam = std::move(l);
}

std::vector<std::shared_ptr<const Command>> FirstRegistrations::steps(int base) const {
    auto i0 = std::make_shared<InitializeWithoutTokenReads>(*initialize_unread);
    i0->mr = moved(i0->mr, base);
    auto i1 = std::make_shared<InitializeWithoutTokenReads>(*initialize_read);
    i1->mr = moved(i1->mr, base);
    auto f0 = std::make_shared<FastRegister>(*register_unread);
    f0->mr = moved(f0->mr, base);
    f0->lam = moved(f0->lam, base);
    auto f1 = std::make_shared<FastRegister>(*register_read);
    f1->mr = moved(f1->mr, base);
    f1->lam = moved(f1->lam, base);
    return {create_unread,
            create_read,
            i0,
            i1,
            build_lam,
            f0,
            std::make_shared<ReadRemoteToken>(i1->mr),
            f1};
}

}  // namespace ndkct::properties
