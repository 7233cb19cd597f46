// commands_fast_register_invalidation.cpp: a fast registration ended by NdkInvalidate
// (commands_fast_register_invalidation.hpp).
#include "commands_fast_register_invalidation.hpp"

#include <algorithm>

namespace ndkct::properties {

namespace gen = rc::gen;

WriteAfterInvalidate::WriteAfterInvalidate(const World& w) : Write(w) {
    flags &= ~uint32_t(NDK_OP_FLAG_INLINE | NDK_OP_FLAG_SILENT_SUCCESS);
}

void WriteAfterInvalidate::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    // Where the MR's last fast registration put the region (invalidated or not).
    const bool known = size_t(remote) < sut.mrs.size() && sut.mrs[remote].base != 0;
    uint64_t address =
        known ? sut.mrs[remote].base + remote_offset : sut.remote_address(remote, remote_offset);
    auto sges = sut.sges(sgl);
    NTSTATUS s =
        sut.session.write(q, sut.next_context(), sges, address, sut.remote_token(remote), flags);
    finish(sut, *this, answer(s));
}

void WriteAfterInvalidate::show(std::ostream& os) const {
    show_call(os, "NdkWrite");
    os << " [through the MR's last fast registration's remote token and region, invalidated or "
          "not]";
}

FastRegisteredThenInvalidated::FastRegisteredThenInvalidated(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = true;
    c->apply(after);
    auto i = std::make_shared<InitializeFastRegisterMr>(after);
    i->mr = made_at;
    if (!one_in(4)) i->remote_access = true;  // mostly a region the peer may write
    auto l = std::make_shared<BuildLam>(after);
    // A whole region of at most four pages, mapped into a buffer of the exact size.
    l->region.shape = Region::Shape::whole;
    l->region.length = std::min<uint32_t>(l->region.length, 3 * PAGE_SIZE);
    l->length = l->region.length;
    l->buffer_size = uint32_t(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(l->region.pages()));
    const uint32_t pages = l->region.pages();
    // Initialized for the LAM's pages, or a few more (within the 16 always accepted, IFR-APC-04).
    i->adapter_page_count = pages + *gen::inRange<uint32_t>(0, 4);
    i->apply(after);
    l->apply(after);
    // The write's bytes and where they go in the region (decided first: the Length covers them).
    const uint32_t bytes =
        *gen::inRange<uint32_t>(1, std::min<uint32_t>(l->region.length, 256) + 1);
    const uint32_t offset =
        *gen::inRange<uint32_t>(0, std::min<uint32_t>(l->region.length - bytes, 256) + 1);
    auto f = std::make_shared<FastRegister>(after);
    f->mr = made_at;
    f->lam = made_at + 1;
    f->page_count = pages;
    f->fbo_mode = FastRegister::Fbo::from_lam;
    // Length within the LAM's pages (FR-LEN-01/02; pages * PAGE_SIZE - FBO is at least the
    // region's length) and past the write's last byte.
    f->length_delta = -int64_t(*gen::inRange<uint32_t>(0, l->region.length - offset - bytes + 1));
    f->misalignment = 0;  // FR-ALIGN-01
    // Rights the MR allows (FR-ACC-01), now and then silent (FR-SILENT-01).
    f->flags = i->remote_access
                   ? *gen::element<uint32_t>(
                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE, NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                         NDK_OP_FLAG_ALLOW_REMOTE_READ,
                         NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE)
                   : *gen::element<uint32_t>(0, NDK_OP_FLAG_ALLOW_LOCAL_WRITE);
    if (one_in(4)) f->flags |= NDK_OP_FLAG_SILENT_SUCCESS;
    f->apply(after);
    // The write's source: a plain region of its own, registered whole.
    auto s = std::make_shared<CreateMr>(after);
    s->fast_register = false;
    s->apply(after);
    auto r = std::make_shared<RegisterMr>(after);
    r->mr = made_at + 2;
    r->region.shape = Region::Shape::whole;
    r->region.offset = std::min<uint32_t>(r->region.offset, kBufferBytes - 256);
    r->region.length =
        std::clamp<uint32_t>(r->region.length, bytes, kBufferBytes - r->region.offset);
    r->length = r->region.length;
    r->flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
    r->apply(after);
    auto v = std::make_shared<Invalidate>(after);
    v->qp = f->qp;
    v->target = made_at;
    v->target_kind = Kind::mr;
    v->flags = one_in(4) ? NDK_OP_FLAG_SILENT_SUCCESS : 0;  // INV-04: only listed flags
    v->apply(after);
    auto b = std::make_shared<WriteAfterInvalidate>(after);
    b->sgl = {SgePlan{made_at + 2, 0, bytes}};
    b->remote = made_at;
    b->remote_kind = Kind::mr;
    b->remote_offset = offset;
    create_mr = std::move(c);
    initialize = std::move(i);
    build_lam = std::move(l);
    fast_register = std::move(f);
    create_source = std::move(s);
    register_source = std::move(r);
    invalidate = std::move(v);
    write = std::move(b);
}

std::vector<std::shared_ptr<const Command>> FastRegisteredThenInvalidated::steps(int base) const {
    auto i = std::make_shared<InitializeFastRegisterMr>(*initialize);
    i->mr = moved(i->mr, base);
    auto f = std::make_shared<FastRegister>(*fast_register);
    f->mr = moved(f->mr, base);
    f->lam = moved(f->lam, base);
    auto r = std::make_shared<RegisterMr>(*register_source);
    r->mr = moved(r->mr, base);
    auto v = std::make_shared<Invalidate>(*invalidate);
    v->target = moved(v->target, base);
    auto b = std::make_shared<WriteAfterInvalidate>(*write);
    b->remote = moved(b->remote, base);
    for (auto& e : b->sgl)
        if (e.mr >= 0) e.mr = moved(e.mr, base);
    return {create_mr, i, build_lam, f, create_source, r, v, b};
}

}  // namespace ndkct::properties
