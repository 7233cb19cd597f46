#include "commands_mappings_and_initializations.hpp"

#include <condition_variable>
#include <functional>
#include <mutex>

namespace ndkct::properties {

namespace gen = rc::gen;

namespace {

std::string hex(uint64_t v) {
    std::ostringstream os;
    os << "0x" << std::hex << v;
    return os.str();
}

// A build's answer as the counterexample prints it; a mapping made is kept in `slot`.
std::string keep_lam(Sut& sut, int slot, std::unique_ptr<conformance::LamResult> lam) {
    std::string a = answer(lam->done) + ", *pLAMSize=" + hex(lam->size_out);
    sut.place(slot, nullptr);
    if (lam->done.ok()) {
        a += ", *pFBO=" + hex(lam->fbo) + ": " + slot_name(Kind::lam, slot) + " (" +
             std::to_string(lam->pages().size()) + " pages)";
        sut.objects[slot] = lam->mapping();
    }
    // A build that pended inside a callback stays here until the teardown (which releases only
    // what was built inline): its buffer must outlive the provider's write.
    sut.lams[slot] = std::move(lam);
    return a;
}

// NdkArmCq (ANY) of `c`, and `make_call` from inside its notification callback, only while this
// waits for it (the consumer's thread does nothing meanwhile; a notification after that makes
// no call). Whether the call ran there, and whether a notification was owed at all.
struct Notified {
    bool ran = false, owed = false;
};
Notified in_notification(Sut& sut, NDK_CQ* c, std::function<void()> make_call) {
    struct Shared {
        std::mutex mutex;
        std::condition_variable called;
        bool waiting = true, ran = false;
    };
    auto shared = std::make_shared<Shared>();
    sut.session.hook_events(c, [shared, make_call] {
        std::lock_guard lock(shared->mutex);
        if (!shared->waiting) return;
        shared->waiting = false;
        make_call();
        shared->ran = true;
        shared->called.notify_all();
    });
    sut.session.arm_cq(c, NDK_CQ_NOTIFY_ANY);
    const model::ObjectId id = sut.session.id(c);
    Notified n;
    // CQ-NOT-02: entries that satisfy the arm came since the last notification and are still in
    // the CQ: it fires at once. (Otherwise it may never fire: no waiting.)
    n.owed = sut.session.with_oracle([&](model::Model& m) {
        const auto* q = m.state_of<model::CqState>(id);
        return q && q->armed_with_entries && m.notification_owed(id);
    });
    {
        std::unique_lock lock(shared->mutex);
        if (n.owed)
            shared->called.wait_for(lock, sut.options.drain_timeout, [&] { return shared->ran; });
        shared->waiting = false;
        n.ran = shared->ran;
    }
    sut.session.hook_events(c, nullptr);
    return n;
}

}  // namespace

// ================= BuildLamBeforeABreak (LAM-MDL-04) =================

BuildLamBeforeABreak::BuildLamBeforeABreak(const World&) {
    buffer = *gen::inRange<uint8_t>(0, kBuffers);
    offset = *gen::weightedOneOf<uint32_t>(
        {{1, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(0, kBufferBytes / 2)}});
    length = *gen::weightedOneOf<uint32_t>(
        {{2, gen::inRange<uint32_t>(1, 2 * PAGE_SIZE + 1)}, {1, gen::just<uint32_t>(PAGE_SIZE)}});
    gap = *gen::elementOf(std::vector<uint32_t>{1, 8, PAGE_SIZE});
    after = *gen::inRange<uint32_t>(1, 513);
    uint32_t exact = uint32_t(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages()));
    buffer_size = *gen::weightedOneOf<uint32_t>(
        {{5, gen::just(exact)}, {1, gen::inRange<uint32_t>(exact, exact + 64)}});
}

void BuildLamBeforeABreak::show(std::ostream& os) const {
    os << "NdkBuildLam(adapter, MDL{buf" << int(buffer) << "+0x" << std::hex << offset << ", 0x"
       << length << ", then 0x" << gap << " skipped then 0x" << after << "}, Length=0x" << length
       << ", *pLAMSize=0x" << buffer_size << std::dec << ")";
}

void BuildLamBeforeABreak::run(const World& w, Sut& sut) const {
    int slot = int(w.slots.size());
    sut.chains.push_back(platform::with_hole(sut.buffers[buffer], offset, length, gap, after));
    auto& chain = sut.chains.back();
    auto lam = std::make_unique<conformance::LamResult>(
        sut.session.build_lam(chain.head(), length, buffer_size));
    finish(sut, *this, keep_lam(sut, slot, std::move(lam)));
}

// ================= LamFromNotification (LAM-IRQL-01) =================

LamFromNotification::LamFromNotification(const World& w, int only_cq)
    : cq(only_cq >= 0 ? only_cq : w.pick(Kind::cq)), build_lam(std::make_shared<BuildLam>(w)) {}

void LamFromNotification::checkPreconditions(const World& w) const {
    RC_PRE(w.is(cq, Kind::cq));
    build_lam->checkPreconditions(w);
}

void LamFromNotification::show(std::ostream& os) const {
    os << "NdkArmCq(" << slot_name(Kind::cq, cq) << ", TriggerType=" << NDK_CQ_NOTIFY_ANY
       << "), from its notification callback: ";
    build_lam->show(os);
}

void LamFromNotification::run(const World& w, Sut& sut) const {
    auto* c = sut.object<NDK_CQ>(cq);
    if (!c) return skipped(sut, *this, "the CQ was never created");
    const int slot = int(w.slots.size());
    auto& chain = sut.chain(build_lam->region);
    auto lam = std::make_unique<conformance::LamResult>();
    auto* into = lam.get();
    const uint64_t length = build_lam->length;
    const uint32_t size = build_lam->buffer_size;
    auto make_call = [&sut, &chain, into, length, size] {
        *into = sut.session.build_lam(chain.head(), length, size);
    };
    const Notified n = in_notification(sut, c, make_call);
    if (!n.ran) make_call();
    std::string a = n.ran ? " (in the callback)"
                          : (n.owed ? " (no notification came: built after it)"
                                    : " (no notification owed: built after the arm)");
    for (const auto& d : sut.session.finish_deferred())  // what pended inside the callback
        a += ", " + d.name + " completed with " + spec::status_name(d.final_status);
    finish(sut, *this, keep_lam(sut, slot, std::move(lam)) + a);
}

// ================= NotifiedLam =================

NotifiedLam::NotifiedLam(const World& w) : Composite(w) {
    World after = w;
    entry.emplace(*this, w, after);
    call = std::make_shared<LamFromNotification>(after, entry->cq());
}

std::vector<std::shared_ptr<const Command>> NotifiedLam::steps(int base) const {
    auto all = entry->steps(*this, base);
    auto n = std::make_shared<LamFromNotification>(*call);
    n->cq = moved(n->cq, base);
    all.push_back(std::move(n));
    return all;
}

// ================= InitializationsFromNotification (IFR-CONC-01) =================

InitializationsFromNotification::InitializationsFromNotification(const World& w, int only_cq)
    : cq(only_cq >= 0 ? only_cq : w.pick(Kind::cq)) {
    auto fast = w.open_of(Kind::mr, [](const Slot& s) { return s.fast; });
    RC_PRE(fast.size() >= 2);
    auto a = std::make_shared<InitializeFastRegisterMr>(w);
    auto b = std::make_shared<InitializeFastRegisterMr>(w);
    a->mr = *gen::elementOf(fast);
    std::vector<int> others;
    for (int m : fast)
        if (m != a->mr) others.push_back(m);
    b->mr = *gen::elementOf(others);
    // Counts every adapter takes (IFR-APC-04), so that both are valid.
    a->adapter_page_count = *gen::inRange<uint32_t>(1, 17);
    b->adapter_page_count = *gen::inRange<uint32_t>(1, 17);
    first = std::move(a);
    second = std::move(b);
}

void InitializationsFromNotification::checkPreconditions(const World& w) const {
    RC_PRE(w.is(cq, Kind::cq) && first->mr != second->mr);
    first->checkPreconditions(w);
    second->checkPreconditions(w);
}

void InitializationsFromNotification::show(std::ostream& os) const {
    os << "NdkArmCq(" << slot_name(Kind::cq, cq) << ", TriggerType=" << NDK_CQ_NOTIFY_ANY
       << "), from its notification callback, back to back: ";
    first->show(os);
    os << ", ";
    second->show(os);
}

void InitializationsFromNotification::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CQ>(cq);
    if (!c) return skipped(sut, *this, "the CQ was never created");
    if (!sut.object<NDK_MR>(first->mr) || !sut.object<NDK_MR>(second->mr))
        return skipped(sut, *this, "an MR was never created");
    std::string answers[2];
    auto make_call = [&] {
        answers[0] = first->call(sut);
        answers[1] = second->call(sut);
    };
    const Notified n = in_notification(sut, c, make_call);
    if (!n.ran) make_call();
    std::string a = answers[0] + ", " + answers[1] +
                    (n.ran ? " (in the callback)"
                           : (n.owed ? " (no notification came: called after it)"
                                     : " (no notification owed: called after the arm)"));
    // What pended inside the callback finishes now, in the order it was issued.
    std::vector<const InitializeFastRegisterMr*> pended;
    for (int i = 0; i < 2; ++i)
        if (answers[i].rfind("STATUS_PENDING", 0) == 0) pended.push_back(i ? &*second : &*first);
    size_t next = 0;
    for (const auto& d : sut.session.finish_deferred()) {
        a += ", " + d.name + " completed with " + spec::status_name(d.final_status);
        if (d.name != "NdkInitializeFastRegisterMr" || next >= pended.size()) continue;
        const InitializeFastRegisterMr* which = pended[next++];
        if (NT_SUCCESS(d.final_status) && d.final_status != STATUS_PENDING) which->initialized(sut);
    }
    finish(sut, *this, a);
}

// ================= OverlappingInitializations =================

OverlappingInitializations::OverlappingInitializations(const World& w) : Composite(w) {
    World after = w;
    entry.emplace(*this, w, after);
    const int cq = entry->cq();
    auto m1 = std::make_shared<CreateMr>(after);
    m1->fast_register = true;
    m1->apply(after);
    auto m2 = std::make_shared<CreateMr>(after);
    m2->fast_register = true;
    m2->apply(after);
    auto n = std::make_shared<InitializationsFromNotification>(after, cq);
    auto a = std::make_shared<InitializeFastRegisterMr>(*n->first);
    auto b = std::make_shared<InitializeFastRegisterMr>(*n->second);
    a->mr = made_at + 2;  // the two MRs made here
    b->mr = made_at + 3;
    n->first = std::move(a);
    n->second = std::move(b);
    call = std::move(n);
    create_first = std::move(m1);
    create_second = std::move(m2);
}

std::vector<std::shared_ptr<const Command>> OverlappingInitializations::steps(int base) const {
    auto all = entry->steps(*this, base);
    auto n = std::make_shared<InitializationsFromNotification>(*call);
    n->cq = moved(n->cq, base);
    auto a = std::make_shared<InitializeFastRegisterMr>(*n->first);
    auto b = std::make_shared<InitializeFastRegisterMr>(*n->second);
    a->mr = moved(a->mr, base);
    b->mr = moved(b->mr, base);
    n->first = std::move(a);
    n->second = std::move(b);
    all.insert(all.end(), {create_first, create_second, std::move(n)});
    return all;
}

// ================= SendFromLam (LAM-USE-02) =================

namespace {
constexpr int kSetupPd = 0, kSender = 2, kReceiver = 3;  // initial_world(): pd0, qp2 <-> qp3
}

SendFromLam::SendFromLam(const World& w) : lam(w.pick(Kind::lam)) {
    bytes = *gen::weightedOneOf<uint32_t>(
        {{3, gen::inRange<uint32_t>(1, 257)}, {1, gen::just<uint32_t>(PAGE_SIZE)}});
}

void SendFromLam::checkPreconditions(const World& w) const {
    RC_PRE(w.is(lam, Kind::lam) && w.is(kSender, Kind::qp) && w.is(kSetupPd, Kind::pd));
    RC_PRE(w.node_of(kSender) == 0);  // the mapping is node A's
}

void SendFromLam::apply(World& w) const {
    const int peer = w.slots[kSender].peer;
    if (w.is(peer, Kind::qp) && w.slots[peer].receives > 0) --w.slots[peer].receives;
}

void SendFromLam::show(std::ostream& os) const {
    os << "NdkSend(" << slot_name(Kind::qp, kSender) << ", {first page of "
       << slot_name(Kind::lam, lam) << "+FBO, min(0x" << std::hex << bytes << std::dec
       << ", to the page's end), privileged token of " << slot_name(Kind::pd, kSetupPd)
       << "}, Flags=0x0)";
}

void SendFromLam::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(kSender);
    auto* pd = sut.object<NDK_PD>(kSetupPd);
    if (!q || !pd) return skipped(sut, *this, "the setup pair is not there");
    if (!sut.object<void>(lam) || !sut.lams[lam] || sut.lams[lam]->pages().empty())
        return skipped(sut, *this, "the LAM was never built");
    auto& mapping = *sut.lams[lam];
    const uint32_t fbo = mapping.fbo % PAGE_SIZE;
    NDK_SGE sge{};
    sge.LogicalAddress.QuadPart = mapping.pages()[0].QuadPart + fbo;
    sge.Length = std::min<uint32_t>(bytes, PAGE_SIZE - fbo);
    sge.MemoryRegionToken = sut.session.privileged_token(pd);
    NTSTATUS s = sut.session.send(q, sut.next_context(), {&sge, 1}, 0);
    finish(sut, *this, answer(s) + " (" + std::to_string(sge.Length) + " bytes)");
}

std::shared_ptr<BuildLam> whole_mapping(const World& w) {
    auto b = std::make_shared<BuildLam>(w);
    b->region.shape = Region::Shape::whole;
    b->length = b->region.length;
    b->buffer_size = uint32_t(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(b->region.pages()));
    return b;
}

ReceiveSink receive_sink(World& after, int mr) {
    auto c = std::make_shared<CreateMr>(after);
    c->pd = kSetupPd;
    c->fast_register = false;
    c->apply(after);
    auto m = std::make_shared<RegisterMr>(after);
    m->mr = mr;
    m->region.shape = Region::Shape::whole;
    m->length = m->region.length;
    m->flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
    m->apply(after);
    auto r = std::make_shared<Receive>(after);
    r->qp = kReceiver;
    r->sgl = {SgePlan{mr, 0, uint32_t(m->length)}};
    r->apply(after);
    return {std::move(c), std::move(m), std::move(r)};
}

std::vector<std::shared_ptr<const Command>> ReceiveSink::steps(const Composite& owner,
                                                               int base) const {
    auto m = std::make_shared<RegisterMr>(*register_mr);
    m->mr = owner.moved(m->mr, base);
    auto r = std::make_shared<Receive>(*receive);
    for (auto& p : r->sgl)
        p.mr = owner.moved(p.mr, base);
    return {create_mr, m, r};
}

SendFromMapping::SendFromMapping(const World& w) : Composite(w) {
    RC_PRE(w.is(kSender, Kind::qp) && w.is(kReceiver, Kind::qp) && w.node_of(kSender) == 0);
    World after = w;  // each call generated in the World the ones before it leave
    auto b = whole_mapping(w);
    b->apply(after);
    sink = receive_sink(after, made_at + 1);
    auto s = std::make_shared<SendFromLam>(after);
    s->lam = made_at;
    s->bytes = std::min<uint32_t>(s->bytes, sink.length());
    build_lam = std::move(b);
    send = std::move(s);
}

std::vector<std::shared_ptr<const Command>> SendFromMapping::steps(int base) const {
    std::vector<std::shared_ptr<const Command>> out{build_lam};
    for (auto& step : sink.steps(*this, base))
        out.push_back(step);
    auto s = std::make_shared<SendFromLam>(*send);
    s->lam = moved(s->lam, base);
    out.push_back(std::move(s));
    return out;
}

}  // namespace ndkct::properties
