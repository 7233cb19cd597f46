// The property commands that close objects, and the calls made from inside a provider callback.
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

// ================= Close =================

void Composite::checkPreconditions(const World& w) const {
    World after = w;
    for (const auto& c : steps(int(w.slots.size()))) {
        c->checkPreconditions(after);
        c->apply(after);
    }
}

void Composite::apply(World& w) const {
    for (const auto& c : steps(int(w.slots.size())))
        c->apply(w);
}

void Composite::run(const World& w, Sut& sut) const {
    World after = w;  // each call runs in the World the ones before it left
    for (const auto& c : steps(int(w.slots.size()))) {
        c->run(after, sut);
        c->apply(after);
    }
}

void Composite::show(std::ostream& os) const {
    const char* sep = "";
    for (const auto& c : steps(made_at)) {
        os << sep;
        c->show(os);
        sep = ", then ";
    }
}

bool qps_use(const World& w, int cq) {
    return !w.open_of(Kind::qp, [&](const Slot& s) {
                 return s.receive_cq == cq || s.initiator_cq == cq;
             }).empty();
}

CloseObject::CloseObject(const World& w) {
    std::vector<int> open;
    for (size_t i = 0; i < w.slots.size(); ++i)
        if (w.slots[i].open && w.slots[i].kind != Kind::lam &&
            !(w.slots[i].kind == Kind::cq && qps_use(w, int(i))))
            open.push_back(int(i));
    RC_PRE(!open.empty());
    slot = *gen::elementOf(open);
    kind = w.slots[slot].kind;
}

void CloseObject::run(const World&, Sut& sut) const {
    if (!sut.object<void>(slot)) return skipped(sut, *this, "the object was never created");
    finish(sut, *this, call(sut));
}

std::string CloseObject::call(Sut& sut) const {
    void* o = sut.object<void>(slot);
    if (kind == Kind::cq && !Session::in_hook()) sut.await_notifications({o});
    NTSTATUS s = sut.session.close_async(o);
    if (s == STATUS_PENDING) sut.close_pending(o);
    sut.objects[slot] = nullptr;  // never touched again (the World closed it too)
    if (kind == Kind::mr || kind == Kind::mw) sut.mrs[slot].registered = false;
    return answer(s);
}

// ================= Calls from inside a provider callback =================

namespace {
constexpr std::chrono::milliseconds kCallbackLinger{10};
}  // namespace

CqWithAnEntry::CqWithAnEntry(const Composite& composite, const World& w, World& after) {
    // Each call is generated in the World the ones before it leave.
    auto c = std::make_shared<CreateCq>(w);
    c->apply(after);
    cq_ = composite.made_at;
    const int qp = composite.made_at + 1;
    auto q = std::make_shared<CreateQp>(after);
    q->place(after, cq_, cq_);
    q->apply(after);
    auto r = std::make_shared<Receive>(after);
    r->qp = qp;
    r->apply(after);
    auto f = std::make_shared<Flush>(after);
    f->qp = qp;
    f->apply(after);
    create_cq = std::move(c);
    create_qp = std::move(q);
    receive = std::move(r);
    flush = std::move(f);
}

std::vector<std::shared_ptr<const Command>> CqWithAnEntry::steps(const Composite& composite,
                                                                 int base) const {
    auto q = std::make_shared<CreateQp>(*create_qp);
    q->receive_cq = composite.moved(q->receive_cq, base);
    q->initiator_cq = composite.moved(q->initiator_cq, base);
    auto r = std::make_shared<Receive>(*receive);
    r->qp = composite.moved(r->qp, base);
    auto f = std::make_shared<Flush>(*flush);
    f->qp = composite.moved(f->qp, base);
    return {create_cq, q, r, f};
}

NotifiedCq::NotifiedCq(const World& w) : Composite(w) {
    World after = w;
    entry.emplace(*this, w, after);
    call = std::make_shared<CallFromNotification>(after, entry->cq());
}

std::vector<std::shared_ptr<const Command>> NotifiedCq::steps(int base) const {
    auto all = entry->steps(*this, base);
    auto n = std::make_shared<CallFromNotification>(*call);
    n->cq = moved(n->cq, base);
    for (auto& close : n->closes) {
        auto c = std::make_shared<CloseObject>(*close);
        c->slot = moved(c->slot, base);
        close = std::move(c);
    }
    all.push_back(std::move(n));
    return all;
}

CallFromNotification::CallFromNotification(const World& w, int only_cq) {
    type = *gen::weightedOneOf<uint32_t>({{4, gen::just<uint32_t>(NDK_CQ_NOTIFY_ANY)},
                                          {1, gen::just<uint32_t>(NDK_CQ_NOTIFY_ERRORS)},
                                          {1, gen::just<uint32_t>(NDK_CQ_NOTIFY_SOLICITED)}});
    // The calls: NdkRegisterMr (with an MR), or the close of a CQ that had QPs and of those still
    // open, none of them connected (a connected QP's close waits for its connector's, CLOSE-02,
    // and so would the CQ's).
    std::vector<int> closable;
    for (int c : w.open_of(Kind::cq)) {
        if (only_cq >= 0 && c != only_cq) continue;
        auto on_it = w.open_of(
            Kind::qp, [&](const Slot& s) { return s.receive_cq == c || s.initiator_cq == c; });
        if (w.slots[c].committed > 0 &&
            std::none_of(on_it.begin(), on_it.end(), [&](int q) { return w.slots[q].connected; }))
            closable.push_back(c);
    }
    const bool mr = !w.open_of(Kind::mr).empty();
    RC_PRE(mr || !closable.empty());
    if (mr && (closable.empty() || *gen::arbitrary<bool>())) {
        cq = only_cq >= 0 ? only_cq : w.pick(Kind::cq);
        // s10async: 1 in 3 an initialization instead (IFR-IRQL-01), of a fast-register MR.
        if (!w.open_of(Kind::mr, [](const Slot& s) { return s.fast; }).empty() && one_in(3))
            initialize = std::make_shared<InitializeFastRegisterMr>(w);
        else
            register_mr = std::make_shared<RegisterMr>(w);
        return;
    }
    cq = *gen::elementOf(closable);
    auto close = [&](int slot, Kind kind) {
        auto c = std::make_shared<CloseObject>(w);
        c->slot = slot;
        c->kind = kind;
        closes.push_back(std::move(c));
    };
    for (int q : w.open_of(
             Kind::qp, [&](const Slot& s) { return s.receive_cq == cq || s.initiator_cq == cq; }))
        close(q, Kind::qp);
    close(cq, Kind::cq);
}

void CallFromNotification::checkPreconditions(const World& w) const {
    RC_PRE(w.is(cq, Kind::cq));
    if (register_mr) register_mr->checkPreconditions(w);
    if (initialize) initialize->checkPreconditions(w);
    if (fast_register) fast_register->checkPreconditions(w);
    World after = w;  // each close in turn (the CQ's once its QPs are closed)
    for (const auto& c : closes) {
        c->checkPreconditions(after);
        c->apply(after);
    }
}

void CallFromNotification::apply(World& w) const {
    if (register_mr) register_mr->apply(w);
    if (initialize) initialize->apply(w);
    if (fast_register) fast_register->apply(w);
    for (const auto& c : closes)
        c->apply(w);
}

void CallFromNotification::show(std::ostream& os) const {
    os << "NdkArmCq(" << slot_name(Kind::cq, cq) << ", TriggerType=" << type
       << "), from its notification callback: ";
    if (register_mr) register_mr->show(os);
    if (initialize) initialize->show(os);
    if (fast_register) fast_register->show(os);
    for (size_t i = 0; i < closes.size(); ++i) {
        if (i) os << ", ";
        closes[i]->show(os);
    }
}

void CallFromNotification::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CQ>(cq);
    if (!c) return skipped(sut, *this, "the CQ was never created");
    if ((register_mr && !sut.object<NDK_MR>(register_mr->mr)) ||
        (initialize && !sut.object<NDK_MR>(initialize->mr)))
        return skipped(sut, *this, "the MR was never created");
    if (fast_register &&
        (!sut.object<NDK_QP>(fast_register->qp) || !sut.object<NDK_MR>(fast_register->mr) ||
         !sut.object<void>(fast_register->lam)))
        return skipped(sut, *this, "the fast registration's QP, MR or LAM was never created");
    auto make_call = [this, &sut] {
        if (register_mr) return register_mr->call(sut);
        if (initialize) return initialize->call(sut);
        if (fast_register) return fast_register->call(sut);
        std::string a;
        for (const auto& close : closes)  // a QP never created is not closed
            if (sut.object<void>(close->slot)) a += (a.empty() ? "" : ", ") + close->call(sut);
        return a;
    };
    // The callback makes the call only while this command waits for it (the consumer's thread
    // does nothing meanwhile); a notification after that makes none.
    struct Shared {
        std::mutex mutex;
        std::condition_variable called;
        bool waiting = true, ran = false;
        std::string answer;
    };
    auto shared = std::make_shared<Shared>();
    // CLOSE-07: when the CQ's close pended, the callback stays a moment longer, as a consumer's
    // may: a provider that does not wait for it completes the close meanwhile, not only by luck.
    const bool closes_cq = !closes.empty();
    sut.session.hook_events(c, [shared, make_call, closes_cq, c, &sut] {
        std::lock_guard lock(shared->mutex);
        if (!shared->waiting) return;
        shared->waiting = false;
        shared->answer = make_call();
        shared->ran = true;
        if (closes_cq && std::any_of(sut.closing.begin(), sut.closing.end(),
                                     [c](const Sut::Closing& x) { return x.object == c; }))
            std::this_thread::sleep_for(kCallbackLinger);
        shared->called.notify_all();
    });
    sut.session.arm_cq(c, type);
    const model::ObjectId id = sut.session.id(c);
    // CQ-NOT-02: entries that satisfy the arm came since the last notification and are still
    // in the CQ: it fires at once. (Otherwise it may never fire: no waiting.)
    const bool owed = sut.session.with_oracle([&](model::Model& m) {
        const auto* q = m.state_of<model::CqState>(id);
        return q && q->armed_with_entries && m.notification_owed(id);
    });
    bool ran;
    {
        std::unique_lock lock(shared->mutex);
        if (owed)
            shared->called.wait_for(lock, sut.options.drain_timeout, [&] { return shared->ran; });
        shared->waiting = false;
        ran = shared->ran;
    }
    sut.session.hook_events(c, nullptr);
    std::string a = ran ? shared->answer + " (in the callback)"
                        : make_call() + (owed ? " (no notification came: called after it)"
                                              : " (no notification owed: called after the arm)");
    for (const auto& d : sut.session.finish_deferred()) {  // what pended inside the callback
        a += ", " + d.name + " completed with " + spec::status_name(d.final_status);
        if (register_mr && d.name == "NdkRegisterMr" && NT_SUCCESS(d.final_status) &&
            d.final_status != STATUS_PENDING)
            register_mr->registered(sut);
        if (initialize && d.name == "NdkInitializeFastRegisterMr" && NT_SUCCESS(d.final_status) &&
            d.final_status != STATUS_PENDING)
            initialize->initialized(sut);
    }
    finish(sut, *this, a);
}

}  // namespace ndkct::properties
