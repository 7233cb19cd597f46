// The property commands of a QP's requests (sends, receives, reads, writes, fast registration,
// bind, invalidate, flush) and of deferred chains.
#include "commands.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "ndkct/spec/hex.hpp"

namespace ndkct::properties {

using conformance::Done;
using spec::hex;
namespace gen = rc::gen;

namespace {

// The label fast-registered regions live at: page-aligned, one 1 MiB window per MR slot, far
// from any pointer (FR-ALIGN-01: the address is an index).
constexpr uint64_t kFastBase = 0x0000'6B00'0000'0000ull;
uint64_t fast_label(int mr) {
    return kFastBase + uint64_t(mr) * 0x10'0000;
}

std::string sgl_text(const std::vector<SgePlan>& sgl) {
    std::ostringstream os;
    os << "{";
    for (size_t i = 0; i < sgl.size(); ++i)
        os << (i ? ", " : "") << sgl[i];
    os << "}";
    return os.str();
}

bool sgl_valid(const World& w, const std::vector<SgePlan>& sgl) {
    for (const auto& s : sgl)
        if (s.mr >= 0 && !w.is(s.mr, Kind::mr)) return false;
    return true;
}

// The remote end of a Read or Write: an MR or an MW slot.
int pick_remote(const World& w) {
    auto targets = w.open_of(Kind::mr);
    auto mws = w.open_of(Kind::mw);
    targets.insert(targets.end(), mws.begin(), mws.end());
    RC_PRE(!targets.empty());
    return *gen::elementOf(targets);
}

}  // namespace

// ================= QP requests =================

FastRegister::FastRegister(const World& w) : qp(w.pick(Kind::qp)) {
    // Mostly an MR initialized for it, and a LAM of no more pages than it was initialized for;
    // else any of either.
    auto ready = w.open_of(Kind::mr, [](const Slot& s) { return s.fast && s.pages > 0; });
    mr = !ready.empty() && !one_in(4) ? *gen::elementOf(ready) : w.pick(Kind::mr);
    const uint32_t room = w.slots[mr].pages;
    auto fitting = w.open_of(Kind::lam, [&](const Slot& s) { return s.pages <= room; });
    lam = !fitting.empty() && !one_in(4) ? *gen::elementOf(fitting) : w.pick(Kind::lam);
    uint32_t pages = std::max<uint32_t>(w.slots[lam].pages, 1);
    // Or exactly the pages the MR was initialized for, and one more (IFR-APC-01, FR-APC-03):
    // past the LAM's pages the last one is repeated.
    const uint32_t initialized = std::max<uint32_t>(room, 1);
    page_count = *gen::weightedOneOf<uint32_t>({{6, gen::just(pages)},
                                                {2, gen::inRange<uint32_t>(1, pages + 1)},
                                                {1, gen::inRange<uint32_t>(pages + 1, pages + 5)},
                                                {2, gen::just(initialized)},
                                                {1, gen::just(initialized + 1)},
                                                {1, gen::just<uint32_t>(0)}});
    fbo_mode = *gen::weightedOneOf<Fbo>(
        {{5, gen::just(Fbo::from_lam)}, {2, gen::just(Fbo::zero)}, {1, gen::just(Fbo::other)}});
    // Any offset in the page, or one that is not (FR-FBO-02: PAGE_SIZE or more never registers).
    fbo_other =
        *gen::weightedOneOf<uint32_t>({{3, gen::inRange<uint32_t>(0, PAGE_SIZE)},
                                       {1, gen::inRange<uint32_t>(PAGE_SIZE, 2 * PAGE_SIZE)}});
    length_delta = *gen::weightedOneOf<int64_t>({{6, gen::just<int64_t>(0)},
                                                 {2, gen::inRange<int64_t>(-4096, 0)},
                                                 {1, gen::inRange<int64_t>(1, 4097)}});
    base_va_offset = uint64_t(*gen::inRange<uint32_t>(0, 16)) * PAGE_SIZE;
    misalignment = *gen::weightedOneOf<uint32_t>(
        {{6, gen::just<uint32_t>(0)}, {1, gen::inRange<uint32_t>(1, PAGE_SIZE)}});
    flags = *flags_from({0, NDK_OP_FLAG_ALLOW_LOCAL_WRITE, NDK_OP_FLAG_ALLOW_REMOTE_READ,
                         NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                         NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_LOCAL_WRITE,
                         NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                         NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_SILENT_SUCCESS,
                         NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK},  // FR-SINK-*
                        {NDK_OP_FLAG_INLINE, 0x400, 0x8000'0000});
}

void FastRegister::show(std::ostream& os) const {
    os << "NdkFastRegister(" << slot_name(Kind::qp, qp) << ", " << slot_name(Kind::mr, mr)
       << ", AdapterPageCount=" << page_count << " pages of " << slot_name(Kind::lam, lam)
       << ", FBO=";
    switch (fbo_mode) {
        case Fbo::from_lam:
            os << "the LAM's";
            break;
        case Fbo::zero:
            os << "0";
            break;
        case Fbo::other:
            os << "0x" << std::hex << fbo_other << std::dec;
            break;
    }
    os << ", Length=pages*4096-FBO" << (length_delta >= 0 ? "+" : "") << length_delta
       << ", BaseVirtualAddress=0x" << std::hex << label_bias + fast_label(mr) + base_va_offset
       << "+FBO";
    if (misalignment) os << "+0x" << misalignment;
    os << ", Flags=0x" << flags << std::dec << ")";
}

void FastRegister::run(const World&, Sut& sut) const {
    if (!sut.object<NDK_QP>(qp) || !sut.object<NDK_MR>(mr) || !sut.object<void>(lam))
        return skipped(sut, *this, "its QP, MR or LAM was never created");
    finish(sut, *this, call(sut));
}

std::string FastRegister::call(Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    auto* m = sut.object<NDK_MR>(mr);
    std::vector<NDK_LOGICAL_ADDRESS> pages = sut.lams[lam]->pages();
    pages.resize(page_count, pages.empty() ? NDK_LOGICAL_ADDRESS{} : pages.back());
    uint32_t fbo = fbo_mode == Fbo::from_lam ? sut.lams[lam]->fbo
                   : fbo_mode == Fbo::zero   ? 0
                                             : fbo_other;
    int64_t len = int64_t(page_count) * PAGE_SIZE - fbo + length_delta;
    uint64_t length = uint64_t(std::max<int64_t>(len, 0));
    uint64_t base = label_bias + fast_label(mr) + base_va_offset + fbo + misalignment;
    NTSTATUS s =
        sut.session.fast_register(q, sut.next_context(), m, pages, fbo, length, base, flags);
    if (s == STATUS_SUCCESS) {  // FR-TOK-01: in effect once posted, its tokens readable
        sut.mrs[mr].registered = true;
        sut.mrs[mr].base = base;
        sut.mrs[mr].length = length;
        learn_tokens(sut, mr);
    }
    return answer(s) + " (FBO=" + hex(fbo) + ", Length=" + hex(length) +
           ", BaseVirtualAddress=" + hex(base) + ")";
}

FastRegistration::FastRegistration(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = true;
    c->apply(after);
    auto i = std::make_shared<InitializeFastRegisterMr>(after);
    i->mr = made_at;
    i->apply(after);
    auto l = std::make_shared<BuildLam>(after);
    l->apply(after);
    auto f = std::make_shared<FastRegister>(after);
    f->mr = made_at;
    f->lam = made_at + 1;
    if (one_in(3)) {  // remotely writable, and written into at once
        i->remote_access = true;
        f->flags = NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
        f->apply(after);
        auto wr = std::make_shared<Write>(after);
        wr->remote = made_at;
        wr->remote_kind = Kind::mr;
        wr->remote_offset = *gen::weightedOneOf<uint32_t>(
            {{1, gen::just<uint32_t>(0)},
             {2, gen::inRange<uint32_t>(0, std::max<uint32_t>(l->region.length, 1))}});
        write = std::move(wr);
    }
    create_mr = std::move(c);
    initialize = std::move(i);
    build_lam = std::move(l);
    fast_register = std::move(f);
}

std::vector<std::shared_ptr<const Command>> FastRegistration::steps(int base) const {
    auto i = std::make_shared<InitializeFastRegisterMr>(*initialize);
    i->mr = moved(i->mr, base);
    auto f = std::make_shared<FastRegister>(*fast_register);
    f->mr = moved(f->mr, base);
    f->lam = moved(f->lam, base);
    if (!write) return {create_mr, i, build_lam, f};
    auto wr = std::make_shared<Write>(*write);
    wr->remote = moved(wr->remote, base);
    for (auto& e : wr->sgl)
        if (e.mr >= 0) e.mr = moved(e.mr, base);
    return {create_mr, i, build_lam, f, wr};
}

Invalidate::Invalidate(const World& w) : qp(w.pick(Kind::qp)) {
    target = pick_remote(w);
    target_kind = w.slots[target].kind;
    flags = *flags_from({0, 0, NDK_OP_FLAG_SILENT_SUCCESS},
                        {NDK_OP_FLAG_ALLOW_REMOTE_READ, 0x400, 0x8000'0000});
}

void Invalidate::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    void* t = sut.object<void>(target);
    if (!q || !t) return skipped(sut, *this, "its QP or target was never created");
    NTSTATUS s = sut.session.invalidate(q, sut.next_context(), t, flags);
    if (s == STATUS_SUCCESS) sut.mrs[target].registered = false;  // MW-02, FR-TOK-01
    finish(sut, *this, answer(s));
}

Bind::Bind(const World& w) : qp(w.pick(Kind::qp)), mr(w.pick(Kind::mr)), mw(w.pick(Kind::mw)) {
    offset = *gen::weightedOneOf<uint32_t>(
        {{3, gen::just<uint32_t>(0)}, {1, gen::inRange<uint32_t>(0, 2 * PAGE_SIZE)}});
    length = *gen::weightedOneOf<uint64_t>({{3, gen::inRange<uint64_t>(1, PAGE_SIZE + 1)},
                                            {1, gen::inRange<uint64_t>(1, kBufferBytes * 2)},
                                            {1, gen::just<uint64_t>(0)}});
    flags = *flags_from({0, NDK_OP_FLAG_ALLOW_REMOTE_READ, NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                         NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                         NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_SILENT_SUCCESS},
                        {NDK_OP_FLAG_INLINE, 0x400, 0x8000'0000});
}

void Bind::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    auto* m = sut.object<NDK_MR>(mr);
    auto* window = sut.object<NDK_MW>(mw);
    if (!q || !m || !window) return skipped(sut, *this, "its QP, MR or MW was never created");
    uint64_t va = sut.remote_address(mr, offset);
    NTSTATUS s = sut.session.bind(q, sut.next_context(), m, window, va, length, flags);
    if (s == STATUS_SUCCESS) {
        sut.mrs[mw].registered = true;
        sut.mrs[mw].base = va;
        sut.mrs[mw].remote_token = sut.session.remote_token(window);
    }
    finish(sut, *this, answer(s));
}

namespace {

uint32_t remote_offset_gen() {
    return *gen::weightedOneOf<uint32_t>(
        {{3, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(0, 2 * PAGE_SIZE)}});
}

}  // namespace

namespace {

// Where an SGE's bytes are in host memory, by the region its MR's RegisterMr described (an
// MW's, a fast-registered MR's or a stray token's are not known: false).
bool bytes_of(const World& w, const SgePlan& s, int& buffer, uint64_t& lo, uint64_t& hi) {
    if (s.mr < 0 || s.length == 0) return false;
    const Slot& m = w.slots[s.mr];
    if (m.fast || m.buffer < 0) return false;
    buffer = m.buffer;
    lo = uint64_t(m.offset) + s.offset;
    hi = lo + s.length;
    return true;
}

}  // namespace

bool sources_meet(const World& w, const std::vector<SgePlan>& a, const std::vector<SgePlan>& b) {
    for (const auto& x : a)
        for (const auto& y : b) {
            int bx, by;
            uint64_t lx, hx, ly, hy;
            if (bytes_of(w, x, bx, lx, hx) && bytes_of(w, y, by, ly, hy) && bx == by && lx < hy &&
                ly < hx)
                return true;
        }
    return false;
}

namespace {

// Whether a Read's or Write's remote range shares host bytes with one of its local SGEs, by the
// regions the MRs' RegisterMr described (an MW's or a fast-registered MR's are not known).
bool source_meets_target(const World& w, const std::vector<SgePlan>& sgl, int remote,
                         uint32_t remote_offset) {
    const Slot& r = w.slots[remote];
    if (r.kind != Kind::mr || r.fast || r.buffer < 0) return false;
    uint64_t total = 0;
    for (const auto& s : sgl)
        total += s.length;
    const uint64_t lo = uint64_t(r.offset) + remote_offset, hi = lo + total;
    for (const auto& s : sgl) {
        if (s.mr < 0 || s.length == 0) continue;
        const Slot& m = w.slots[s.mr];
        if (m.fast || m.buffer != r.buffer) continue;
        const uint64_t a = uint64_t(m.offset) + s.offset, b = a + s.length;
        if (a < hi && lo < b) return true;
    }
    return false;
}

}  // namespace

RemoteRequest::RemoteRequest(const World& w)
    : qp(w.pick(Kind::qp)), sgl(*sge_list(w)), remote(pick_remote(w)) {
    remote_kind = w.slots[remote].kind;
    // Mostly inside what the remote MR's RegisterMr asked for (as SGEs are), else anywhere.
    uint64_t total = 0;
    for (const auto& s : sgl)
        total += s.length;
    const uint32_t room = remote_kind == Kind::mr ? w.slots[remote].length : 0;
    if (total <= room && !one_in(4))
        remote_offset = *gen::weightedOneOf<uint32_t>(
            {{3, gen::just<uint32_t>(0)},
             {2, gen::inRange<uint32_t>(0, uint32_t(room - total) + 1)}});
    else
        remote_offset = remote_offset_gen();
    if (source_meets_target(w, sgl, remote, remote_offset)) {
        // Moved past the local SGEs (in the remote region's buffer): shrinking the offset then
        // keeps the two apart.
        const Slot& r = w.slots[remote];
        uint64_t end = 0;
        for (const auto& s : sgl)
            if (s.mr >= 0 && w.slots[s.mr].buffer == r.buffer)
                end = std::max<uint64_t>(end, uint64_t(w.slots[s.mr].offset) + s.offset + s.length);
        remote_offset = uint32_t(end - r.offset);
    }
    RC_PRE(!source_meets_target(w, sgl, remote, remote_offset));
}
void RemoteRequest::checkPreconditions(const World& w) const {
    RC_PRE(w.is(qp, Kind::qp) && sgl_valid(w, sgl) && w.is(remote, remote_kind));
    RC_PRE(!source_meets_target(w, sgl, remote, remote_offset));
    // Two nodes: local SGEs on the QP's node, the remote range on its peer's (by the tokens).
    RC_PRE(sgl_on(w, sgl, w.node_of(qp)) && w.usable_on(remote, w.far_node(qp)));
}
void RemoteRequest::show_call(std::ostream& os, const char* call) const {
    os << call << "(" << slot_name(Kind::qp, qp) << ", " << sgl_text(sgl)
       << ", RemoteAddress=" << slot_name(remote_kind, remote) << "+0x" << std::hex << remote_offset
       << ", RemoteToken=of " << slot_name(remote_kind, remote) << ", Flags=0x" << flags << std::dec
       << ")";
}

Read::Read(const World& w) : RemoteRequest(w) {
    flags = *flags_from({0, 0, NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_READ_FENCE,
                         NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE},
                        {NDK_OP_FLAG_INLINE, 0x400, 0x8000'0000});
}
void Read::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    auto sges = sut.sges(sgl);
    uint64_t address = sut.remote_address(remote, remote_offset);
    NTSTATUS s =
        sut.session.read(q, sut.next_context(), sges, address, sut.remote_token(remote), flags);
    finish(sut, *this, answer(s));
}

Write::Write(const World& w) : RemoteRequest(w) {
    flags =
        *flags_from({0, 0, NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_READ_FENCE, NDK_OP_FLAG_INLINE},
                    {NDK_OP_FLAG_ALLOW_LOCAL_WRITE, 0x400, 0x8000'0000});
}
void Write::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    auto sges = sut.sges(sgl, flags & NDK_OP_FLAG_INLINE);
    uint64_t address = sut.remote_address(remote, remote_offset);
    NTSTATUS s =
        sut.session.write(q, sut.next_context(), sges, address, sut.remote_token(remote), flags);
    finish(sut, *this, answer(s));
}

Send::Send(const World& w) {
    auto awaited = w.open_of(Kind::qp, [&](const Slot& s) {
        return w.is(s.peer, Kind::qp) && w.slots[s.peer].receives > 0;
    });
    qp = !awaited.empty() && !one_in(4) ? *gen::elementOf(awaited) : w.pick(Kind::qp);
    sgl = *sge_list(w);
    flags = *flags_from({0, 0, NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT,
                         NDK_OP_FLAG_READ_FENCE, NDK_OP_FLAG_INLINE},
                        {NDK_OP_FLAG_ALLOW_REMOTE_READ, 0x400, 0x8000'0000});
}
void Send::checkPreconditions(const World& w) const {
    RC_PRE(w.is(qp, Kind::qp) && sgl_valid(w, sgl));
    RC_PRE(sgl_on(w, sgl, w.node_of(qp)));
}
void Send::show(std::ostream& os) const {
    os << "NdkSend(" << slot_name(Kind::qp, qp) << ", " << sgl_text(sgl) << ", Flags=0x" << std::hex
       << flags << std::dec << ")";
}
void Send::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    auto sges = sut.sges(sgl, flags & NDK_OP_FLAG_INLINE);
    NTSTATUS s = sut.session.send(q, sut.next_context(), sges, flags);
    finish(sut, *this, answer(s));
}

Receive::Receive(const World& w) : qp(w.pick(Kind::qp)), sgl(*sge_list(w, true)) {}
void Receive::checkPreconditions(const World& w) const {
    RC_PRE(w.is(qp, Kind::qp) && sgl_valid(w, sgl));
    RC_PRE(sgl_on(w, sgl, w.node_of(qp)));
}
void Receive::show(std::ostream& os) const {
    os << "NdkReceive(" << slot_name(Kind::qp, qp) << ", " << sgl_text(sgl) << ")";
}
void Receive::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    auto sges = sut.sges(sgl);
    NTSTATUS s = sut.session.receive(q, sut.next_context(), sges);
    finish(sut, *this, answer(s));
}

SendToReceive::SendToReceive(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto c = std::make_shared<CreateMr>(w);
    c->fast_register = false;
    c->apply(after);
    auto m = std::make_shared<RegisterMr>(after);
    m->mr = made_at;
    m->apply(after);
    auto r = std::make_shared<Receive>(after);
    // Mostly on a QP with no receive waiting before it (receives are taken in order, RCV-03).
    auto paired = [&](const Slot& s) { return w.is(s.peer, Kind::qp); };
    auto first = w.open_of(Kind::qp, [&](const Slot& s) { return paired(s) && s.receives == 0; });
    r->qp = !first.empty() && !one_in(4) ? *gen::elementOf(first) : w.pick(Kind::qp, paired);
    auto s = std::make_shared<Send>(after);
    s->qp = w.slots[r->qp].peer;
    // Mostly the receive in the first half of the region just registered and the send from the
    // second (the command then stands on its own when shrinking takes others away); else the
    // SGEs as Receive and Send draw them.
    const uint32_t room = uint32_t(m->length);
    if (room >= 2 && !one_in(4)) {
        const uint32_t half = room / 2;
        r->sgl = {SgePlan{made_at, 0, half}};
        s->sgl = {SgePlan{made_at, half, *gen::inRange<uint32_t>(1, room - half + 1)}};
    }
    r->apply(after);
    RC_PRE(!sources_meet(after, s->sgl, r->sgl));
    if (const int cq = after.slots[r->qp].receive_cq; cq >= 0 && one_in(3)) {
        auto a = std::make_shared<ArmCq>(after);
        a->cq = cq;
        a->type = NDK_CQ_NOTIFY_SOLICITED;
        s->flags |= NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT;
        arm = std::move(a);
    }
    create_mr = std::move(c);
    register_mr = std::move(m);
    receive = std::move(r);
    send = std::move(s);
}

std::vector<std::shared_ptr<const Command>> SendToReceive::steps(int base) const {
    auto m = std::make_shared<RegisterMr>(*register_mr);
    m->mr = moved(m->mr, base);
    auto r = std::make_shared<Receive>(*receive);
    for (auto& e : r->sgl)
        if (e.mr >= 0) e.mr = moved(e.mr, base);
    auto s = std::make_shared<Send>(*send);
    for (auto& e : s->sgl)
        if (e.mr >= 0) e.mr = moved(e.mr, base);
    if (arm) return {create_mr, m, r, arm, s};
    return {create_mr, m, r, s};
}

void SendToReceive::checkPreconditions(const World& w) const {
    Composite::checkPreconditions(w);
    auto now = steps(int(w.slots.size()));
    const auto& r = static_cast<const Receive&>(*now[2]);
    const auto& s = static_cast<const Send&>(*now.back());
    World after = w;
    for (const auto& c : now)
        c->apply(after);
    RC_PRE(w.slots[r.qp].peer == s.qp && !sources_meet(after, s.sgl, r.sgl));
}

void Flush::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    sut.session.flush(q);
    finish(sut, *this, "");
}

// ================= Deferred chains =================

namespace {

// What a chain's request settles (FastRegister and Bind: World::settle); nothing on one node.
void settle_nodes(const Command& request, World& w) {
    if (!w.two_nodes) return;
    if (const auto* fr = dynamic_cast<const FastRegister*>(&request)) fr->apply(w);
    if (const auto* b = dynamic_cast<const Bind*>(&request)) b->apply(w);
}

}  // namespace

DeferredChain::DeferredChain(const World& w) : qp(w.pick(Kind::qp)) {
    const bool remote = !w.open_of(Kind::mr).empty() || !w.open_of(Kind::mw).empty();
    const bool mr = !w.open_of(Kind::mr).empty();
    const bool mw = !w.open_of(Kind::mw).empty();
    const bool lam = !w.open_of(Kind::lam).empty();
    enum Request { send, write, read, invalidate, fast_register, bind };
    std::vector<Request> feasible{send};
    if (remote) feasible.insert(feasible.end(), {write, read, invalidate});
    if (mr && lam) feasible.push_back(fast_register);
    if (mr && mw) feasible.push_back(bind);
    const size_t count = *gen::inRange<size_t>(2, 5);  // 1..3 deferred, then the doorbell
    for (size_t i = 0; i < count; ++i) {
        // DEFER-01: on every initiator call but NdkReceive; the last request carries none
        // (DEFER-05, DEFER-07: it takes the deferred ones to the hardware).
        const uint32_t defer = i + 1 < count ? NDK_OP_FLAG_DEFER : 0;
        auto with = [&](auto made) {
            made->qp = qp;
            made->flags = (made->flags & ~NDK_OP_FLAG_DEFER) | defer;
            requests.push_back(std::move(made));
        };
        // Now and then the chain ends in a fast registration asking remote rights: refused
        // inline on an MR initialized without RemoteAccess (FR-ACC-01), which must then hand the
        // deferred requests before it to the hardware (DEFER-04, DEFER-06).
        const bool refusal_end = i + 1 == count && mr && lam && one_in(3);
        if (refusal_end) {
            auto made = std::make_shared<FastRegister>(w);
            made->flags = NDK_OP_FLAG_ALLOW_REMOTE_WRITE;
            with(std::move(made));
            continue;
        }
        switch (*gen::elementOf(feasible)) {
            case send:
                with(std::make_shared<Send>(w));
                break;
            case write:
                with(std::make_shared<Write>(w));
                break;
            case read:
                with(std::make_shared<Read>(w));
                break;
            case invalidate:
                with(std::make_shared<Invalidate>(w));
                break;
            case fast_register:
                with(std::make_shared<FastRegister>(w));
                break;
            case bind:
                with(std::make_shared<Bind>(w));
                break;
        }
    }
}

void DeferredChain::checkPreconditions(const World& w) const {
    RC_PRE(!requests.empty());
    if (!w.two_nodes) {
        for (const auto& r : requests)
            r->checkPreconditions(w);
        return;
    }
    // Two nodes: a request after a fast registration or bind of the chain sees its MR or MW
    // settled on the chain's node.
    World after = w;
    for (const auto& r : requests) {
        r->checkPreconditions(after);
        settle_nodes(*r, after);
    }
}

void DeferredChain::apply(World& w) const {
    for (const auto& r : requests)
        settle_nodes(*r, w);
}

// DEFER-05 is the consumer's duty: a request of the chain skipped because the provider never
// made one of its objects (a failed NdkBuildLam, say) would leave the deferred ones before it
// without their doorbell. So the chain runs whole or not at all.
void DeferredChain::run(const World& w, Sut& sut) const {
    for (const auto& r : requests) {
        bool made = true;
        if (const auto* fr = dynamic_cast<const FastRegister*>(r.get()))
            made = sut.object<void>(fr->mr) && sut.object<void>(fr->lam);
        else if (const auto* inv = dynamic_cast<const Invalidate*>(r.get()))
            made = sut.object<void>(inv->target);
        else if (const auto* b = dynamic_cast<const Bind*>(r.get()))
            made = sut.object<void>(b->mr) && sut.object<void>(b->mw);
        if (!made || !sut.object<void>(qp))
            return skipped(sut, *this, "an object of one of its requests was never created");
    }
    for (const auto& r : requests)
        r->run(w, sut);
}

void DeferredChain::show(std::ostream& os) const {
    os << "deferred chain on " << slot_name(Kind::qp, qp) << ":";
    for (const auto& r : requests) {
        os << " ";
        r->show(os);
    }
}

}  // namespace ndkct::properties
