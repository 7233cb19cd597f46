#include "machine.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "ndkct/spec/status.hpp"
#include "ndkct/twonode/split_provider.hpp"

namespace ndkct::properties {

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::pd:
            return "pd";
        case Kind::cq:
            return "cq";
        case Kind::qp:
            return "qp";
        case Kind::mr:
            return "mr";
        case Kind::mw:
            return "mw";
        case Kind::lam:
            return "lam";
        case Kind::listener:
            return "listener";
        case Kind::connector:
            return "connector";
    }
    return "object";
}

std::string slot_name(Kind kind, int slot) {
    if (slot < 0) return "NULL";
    return kind_name(kind) + std::to_string(slot);
}

int World::pick(Kind kind) const {
    return pick(kind, [](const Slot&) { return true; });
}

rc::Gen<Region> Region::any() {
    return rc::gen::exec([] {
        Region r;
        r.buffer = *rc::gen::inRange<uint8_t>(0, kBuffers);
        // Page-aligned starts most of the time, any byte offset otherwise (the FBO matters).
        r.offset = *rc::gen::weightedOneOf<uint32_t>(
            {{3, rc::gen::just<uint32_t>(0)},
             {2, rc::gen::map(rc::gen::inRange<uint32_t>(0, kBufferPages / 2),
                              [](uint32_t page) { return page * PAGE_SIZE; })},
             {2, rc::gen::inRange<uint32_t>(0, kBufferBytes / 2)}});
        uint32_t room = kBufferBytes - r.offset;
        r.length = *rc::gen::weightedOneOf<uint32_t>(
            {{2, rc::gen::inRange<uint32_t>(1, std::min<uint32_t>(room, 2 * PAGE_SIZE) + 1)},
             {1, rc::gen::inRange<uint32_t>(1, room + 1)},
             {1, rc::gen::just(std::min<uint32_t>(room, PAGE_SIZE))}});
        r.shape = *rc::gen::weightedOneOf<Shape>({{12, rc::gen::just(Shape::whole)},
                                                  {3, rc::gen::just(Shape::split)},
                                                  {1, rc::gen::just(Shape::hole)},
                                                  {1, rc::gen::just(Shape::misaligned_joint)}});
        return r;
    });
}

namespace {

// The pieces of a region's chain. Broken shapes need two pieces and bytes left in the buffer
// for the gap; where there is no room the region is described whole (and printed so).
struct Pieces {
    Region::Shape shape;
    uint32_t first = 0, gap = 0, second = 0;
};
Pieces pieces_of(const Region& r) {
    Pieces p{r.shape};
    uint32_t room = kBufferBytes - r.offset - r.length;
    switch (r.shape) {
        case Region::Shape::whole:
            break;
        case Region::Shape::split:
            if (r.length < 2) p.shape = Region::Shape::whole;
            p.first = r.length / 2;
            p.second = r.length - p.first;
            break;
        case Region::Shape::hole:  // RMR-MDL-01: 8 bytes of the buffer skipped
            if (r.length < 2 || room < 8) p.shape = Region::Shape::whole;
            p.first = r.length / 2;
            p.gap = 8;
            p.second = r.length - p.first;
            break;
        case Region::Shape::misaligned_joint: {
            // The first piece ends mid-page; the second starts at the next page boundary.
            uint32_t first_end = r.offset + std::max<uint32_t>(1, r.length / 2);
            if (first_end % PAGE_SIZE == 0) ++first_end;
            uint32_t next_page = (first_end / PAGE_SIZE + 1) * PAGE_SIZE;
            p.first = first_end - r.offset;
            p.second = r.length > p.first ? r.length - p.first : 1;
            if (r.length < 2 || next_page + p.second > kBufferBytes) p.shape = Region::Shape::whole;
            break;
        }
    }
    return p;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Region& r) {
    Pieces p = pieces_of(r);
    os << "MDL{buf" << int(r.buffer) << "+0x" << std::hex << r.offset << ", 0x" << r.length;
    switch (p.shape) {
        case Region::Shape::whole:
            break;
        case Region::Shape::split:
            os << ", split 0x" << p.first << "+0x" << p.second;
            break;
        case Region::Shape::hole:
            os << ", hole: 0x" << p.first << " then 0x" << p.gap << " skipped then 0x" << p.second;
            break;
        case Region::Shape::misaligned_joint:
            os << ", misaligned joint: 0x" << p.first << " then 0x" << p.second
               << " from the next page";
            break;
    }
    return os << std::dec << "}";
}

std::ostream& operator<<(std::ostream& os, const SgePlan& s) {
    os << "{";
    if (s.mr < 0)
        os << "stray token";
    else
        os << slot_name(Kind::mr, s.mr);
    return os << "+0x" << std::hex << s.offset << ", 0x" << s.length << std::dec << "}";
}

// ================= Sut =================

Sut::Sut(Session& s, SutOptions o, std::array<platform::LockedBuffer, kBuffers> reused)
    : session(s), options(o), buffers(std::move(reused)) {
    trap = std::make_unique<conformance::DispatchTrap>(session);
    trap->install(session.adapter());
    // A pattern per buffer, to see bytes move (made once: copying it is cheaper).
    static const auto patterns = [] {
        std::array<std::array<std::byte, kBufferBytes>, kBuffers> p;
        for (uint32_t i = 0; i < kBuffers; ++i)
            for (uint32_t b = 0; b < kBufferBytes; ++b)
                p[i][b] = std::byte(uint8_t(b * 7 + i * 61 + 1));
        return p;
    }();
    for (uint32_t i = 0; i < kBuffers; ++i) {
        if (buffers[i].empty()) buffers[i] = session.buffer(kBufferBytes);
        std::memcpy(buffers[i].data(), patterns[i].data(), kBufferBytes);
    }
}

Sut::~Sut() = default;

void Sut::place(int slot, void* object) {
    if (objects.size() <= size_t(slot)) {
        objects.resize(slot + 1, nullptr);
        mrs.resize(slot + 1);
        lams.resize(slot + 1);
    }
    objects[slot] = object;
    if (object) trap->install(object);  // GEN-CREATE-05: the consumer may overwrite Dispatch
}

std::string Sut::await_handshake(int slot) {
    auto it = std::find_if(handshakes.begin(), handshakes.end(),
                           [&](const PendingHandshake& h) { return h.slot == slot; });
    if (it == handshakes.end()) return "";
    PendingHandshake h = *it;
    handshakes.erase(it);
    auto* c = static_cast<NDK_CONNECTOR*>(h.connector);
    conformance::Done d = h.accept ? session.wait_accept(c) : session.wait_connect(c);
    return std::string(h.accept ? "NdkAccept(" : "NdkConnect(") + slot_name(Kind::connector, slot) +
           ") completed with " + spec::status_name(d.final_status);
}

void* Sut::next_context() {
    next_context_ += 0x10;
    return reinterpret_cast<void*>(next_context_);
}

uint16_t Sut::next_port() {
    // 40000..49151: apart from the Session's own (20000..39999) and below the ephemeral ports
    // providers pick (49152.., CONN-25), which a listen here would rightly be refused.
    if (port_ == 0)
        port_ = static_cast<uint16_t>(
            40000 + (getpid() * 97 + reinterpret_cast<uintptr_t>(this) / 64) % 9152);
    uint16_t port = port_;
    port_ = port_ == 49151 ? 40000 : static_cast<uint16_t>(port_ + 1);
    return port;
}

platform::MdlChain& Sut::chain(const Region& r) {
    const platform::LockedBuffer& b = buffers[r.buffer];
    Pieces p = pieces_of(r);
    switch (p.shape) {
        case Region::Shape::whole:
            chains.push_back(platform::describe(b, r.offset, r.length));
            break;
        case Region::Shape::split: {
            size_t lengths[] = {p.first, p.second};
            chains.push_back(platform::describe_split(b, r.offset, lengths));
            break;
        }
        case Region::Shape::hole:
            chains.push_back(platform::with_hole(b, r.offset, p.first, p.gap, p.second));
            break;
        case Region::Shape::misaligned_joint:
            chains.push_back(platform::with_misaligned_joint(b, r.offset, p.first, p.second));
            break;
    }
    return chains.back();
}

std::vector<NDK_SGE> Sut::sges(const std::vector<SgePlan>& plans, bool inline_data) {
    std::vector<NDK_SGE> out;
    for (const auto& p : plans) {
        NDK_SGE s{};
        const MrRecord* r = size_t(p.mr) < mrs.size() ? &mrs[p.mr] : nullptr;
        if (r && r->registered) {
            s.VirtualAddress = reinterpret_cast<PVOID>(r->base + p.offset);
            s.MemoryRegionToken = r->local_token;
        } else {  // no registration known: a buffer's address under a token nobody holds
            s.VirtualAddress = buffers[0].data() + p.offset % kBufferBytes;
            s.MemoryRegionToken = r ? r->local_token : 0x5EED0000u;
        }
        s.Length = p.length;
        if (inline_data) {
            auto* a = static_cast<std::byte*>(s.VirtualAddress);
            bool inside = false;
            for (const auto& b : buffers)
                inside |= a >= b.data() && a + p.length <= b.data() + kBufferBytes;
            if (!inside)
                s.VirtualAddress = buffers[0].data() + p.offset % (kBufferBytes - p.length + 1);
        }
        out.push_back(s);
    }
    return out;
}

uint64_t Sut::remote_address(int mr, uint32_t offset) const {
    if (size_t(mr) < mrs.size() && mrs[mr].registered) return mrs[mr].base + offset;
    return reinterpret_cast<uint64_t>(buffers[1].data()) + offset % kBufferBytes;
}

uint32_t Sut::remote_token(int mr) const {
    if (size_t(mr) < mrs.size()) return mrs[mr].remote_token;
    return 0x5EED0001u;
}

World initial_world(std::shared_ptr<const NDK_ADAPTER_INFO> info) {
    World w;
    w.info = std::move(info);
    const char* peer = std::getenv("NDKCT_PEER");  // as waivers.cpp: a split run
    w.two_nodes = peer && *peer;
    w.add({Kind::pd});
    Slot cq{Kind::cq};
    cq.depth = 256;  // Session::loopback_pair: CqDepth 256, two QPs of 64 + 64
    cq.committed = 256;
    w.add(cq);
    Slot qp{Kind::qp};
    qp.connected = true;
    qp.receive_cq = qp.initiator_cq = 1;
    qp.peer = 3;
    w.add(qp);
    qp.peer = 2;
    if (w.two_nodes) qp.node = 1;  // the accepting side (Session::loopback_pair)
    w.add(qp);
    w.add({Kind::listener});
    w.add({Kind::connector});
    w.add({Kind::connector});
    return w;
}

namespace {
std::atomic<size_t> across_nodes{0};
}  // namespace

size_t sequences_across_nodes() {
    return across_nodes.load();
}

void Sut::setup() {
    auto pair = session.loopback_pair();
    log("setup: NdkCreatePd: pd0, NdkCreateCq: cq1, NdkCreateQp(pd0, cq1, cq1): qp2, qp3, "
        "NdkCreateListener: listener4, NdkListen, NdkCreateConnector: connector5, "
        "NdkConnect(connector5, qp2), NdkAccept(connector6, qp3), NdkCompleteConnect(connector5)" +
        std::string(pair.connected ? "" : ": " + pair.problem));
    check("setup");
    if (!pair.connected)
        throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure,
                                     "setup: the loopback pair did not connect: " + pair.problem);
    if (twonode::crossed_nodes(session.adapter())) across_nodes.fetch_add(1);
    void* made[] = {pair.pd, pair.cq, pair.a, pair.b, pair.listener, pair.active, pair.passive};
    for (int i = 0; i < 7; ++i)
        place(i, made[i]);
}

namespace {

// Requests the oracle still expects a completion for on a QP (those whose outcome is open are
// not waited for). With `initiator_only`, receives are left out (they wait for sends).
size_t expected_completions(Session& s, void* qp, bool initiator_only) {
    return s.with_oracle([&](model::Model& m) -> size_t {
        const auto* q = m.state_of<model::QpState>(s.id(qp));
        if (!q) return 0;
        size_t n = 0;
        for (const auto& c : q->initiator_pending)
            n += c.outcome != model::Completion::Outcome::any;
        if (!initiator_only) {
            for (const auto& c : q->receive_pending)
                n += c.outcome != model::Completion::Outcome::any;
            n += q->receive.size();
        }
        return n;
    });
}

}  // namespace

void Sut::teardown(const World& w) {
    if (torn_down_) return;
    torn_down_ = true;
    Laps laps(options.times);
    // The QPs whose completions can still be seen: open, created, their CQs open and created.
    std::vector<void*> qps, cqs;
    for (size_t i = 0; i < w.slots.size(); ++i) {
        const Slot& s = w.slots[i];
        if (s.kind == Kind::cq && s.open && object<void>(int(i))) cqs.push_back(objects[i]);
        if (s.kind != Kind::qp || !s.open || !object<void>(int(i))) continue;
        if (!w.is(s.receive_cq, Kind::cq) || !w.is(s.initiator_cq, Kind::cq) ||
            !object<void>(s.receive_cq) || !object<void>(s.initiator_cq))
            continue;
        qps.push_back(objects[i]);
    }
    // Before the flush, requests may legitimately wait (a send for its receive, DEFER for its
    // doorbell): polling stops once nothing new came for a while. After it, everything must
    // complete (FLS-03): polling goes on until the drain timeout.
    auto drain = [&](bool initiator_only) {
        using Clock = std::chrono::steady_clock;
        auto quiet = initiator_only ? std::min(options.drain_timeout, std::chrono::milliseconds(20))
                                    : options.drain_timeout;
        auto deadline = Clock::now() + quiet;
        for (;;) {
            bool got = false;
            for (void* cq : cqs)
                got |= !session.poll(static_cast<NDK_CQ*>(cq), 64).empty();
            size_t expected = 0;
            for (void* qp : qps)
                expected += expected_completions(session, qp, initiator_only);
            if (expected == 0 && !got) return;
            if (got && initiator_only) deadline = Clock::now() + quiet;
            if (Clock::now() > deadline) return;
            if (!got) std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    };
    drain(true);
    // DEFER-04: what an inline refusal handed to the hardware completes without a doorbell; it
    // gets the drain timeout to do so before the flush would cancel it.
    auto stranded = [&] {
        return session.with_oracle([&](model::Model& m) {
            model::Verdict v;
            for (void* qp : qps)
                v.merge(m.expect_handed_over_completed(session.id(qp)));
            return v;
        });
    };
    for (const auto until = std::chrono::steady_clock::now() + options.drain_timeout;
         !stranded().ok() && std::chrono::steady_clock::now() < until;) {
        bool got = false;
        for (void* cq : cqs)
            got |= !session.poll(static_cast<NDK_CQ*>(cq), 64).empty();
        if (!got) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    session.report(stranded());
    check("teardown: polling every CQ");
    for (void* qp : qps)  // FLS-02: what is left completes as cancelled
        session.flush(static_cast<NDK_QP*>(qp));
    drain(false);
    for (void* qp : qps)  // WR-10, FLS-03: nothing is owed now (in the trace too)
        session.expect_drained(static_cast<NDK_QP*>(qp));
    check("teardown: NdkFlush of every QP and polling every CQ");
    laps.lap(&PhaseTimes::drain);
    await_notifications(cqs);  // before the closes (CQ-NOT-07, CLOSE-04)
    laps.lap(&PhaseTimes::notifications);
    // Successors are created after their antecedents: closing from the newest slot down lets
    // each close finish at once, and pended ones are awaited as soon as they can finish.
    for (size_t i = w.slots.size(); i-- > 0;) {
        void* o = w.slots[i].open && w.slots[i].kind != Kind::lam ? object<void>(int(i)) : nullptr;
        if (!o) continue;
        if (session.close_async(o) == STATUS_PENDING) close_pending(o);
        objects[i] = nullptr;
        reap_closes();
    }
    session.close_all();              // anything the slots do not know of
    for (const Closing& c : closing)  // what the oracle still counts open: awaited all the same
        session.wait_close(c.object);
    closing.clear();
    check("teardown: NdkCloseObject of every object");
    for (auto& lam : lams)
        if (lam && lam->done.ok()) session.release_lam(*lam);
    check("teardown: NdkReleaseLam of every LAM");
    laps.lap(&PhaseTimes::closes);
    // The quiescent point: nothing may call back once the adapter is closed, so whatever comes
    // now is a stray callback of this sequence; a short wait lets a late one arrive (a replayed
    // counterexample then fails again).
    trap.reset();  // restores what is still open (nothing), before the adapter goes
    session.close_adapter();
    laps.lap(&PhaseTimes::adapter_close);
    quiet_until_ = std::chrono::steady_clock::now() + options.quiet;
    if (options.quiet.count() > 0 && !options.defer_quiet)
        // A sleep, never a spin with yields: on a loaded machine a yield gives the core away for
        // a whole time slice anyway, and a late wake-up only lengthens the period.
        std::this_thread::sleep_until(quiet_until_);
    laps.lap(&PhaseTimes::quiet);
    check("teardown: CloseNdkAdapter");
}

void Sut::judge_quiet() {
    std::this_thread::sleep_until(quiet_until_);  // nothing to wait when judged late enough
    check("the quiet period after CloseNdkAdapter");
}

void Sut::await_notifications(const std::vector<void*>& cqs) {
    auto owed = [&] {
        session.verdict();  // hands the notifications that came to the oracle
        return session.with_oracle([&](model::Model& m) {
            return std::any_of(cqs.begin(), cqs.end(),
                               [&](void* cq) { return m.notification_owed(session.id(cq)); });
        });
    };
    const auto until = std::chrono::steady_clock::now() +
                       std::min(options.drain_timeout, std::chrono::milliseconds(20));
    // Woken by the notification's arrival, not by polling.
    while (owed() && std::chrono::steady_clock::now() < until)
        session.wait_for_event(until);
    if (!owed()) return;
    if (options.times) ++options.times->notifications_given_up;
    auto cq_name = [&](void* cq) {
        for (size_t i = 0; i < objects.size(); ++i)
            if (objects[i] == cq) return slot_name(Kind::cq, int(i));
        return std::string("a CQ");
    };
    // CQ-NOT-07: a satisfied arm is never dropped. After the drain timeout a notification still
    // owed is a failure, naming what satisfied the arm (a solicited send: SND-04, CQ-NOT-10).
    // Only a notification owed beyond doubt is waited for and judged; one that rests on an entry
    // that may have come before the arm is given up as before.
    auto certainly_owed = [&] {
        return session.with_oracle([&](model::Model& m) {
            return std::any_of(cqs.begin(), cqs.end(), [&](void* cq) {
                return m.notification_certainly_owed(session.id(cq));
            });
        });
    };
    const auto judged = std::chrono::steady_clock::now() + options.drain_timeout;
    while (certainly_owed() && std::chrono::steady_clock::now() < judged)
        session.wait_for_event(judged);
    // Each CQ that still waits for its notification is declared given up on (the session
    // reports what is missing and a captured trace records the word, so that it is judged the
    // same offline).
    for (void* cq : cqs)
        if (session.with_oracle(
                [&](model::Model& m) { return m.notification_certainly_owed(session.id(cq)); }))
            session.expect_notification_delivered(static_cast<NDK_CQ*>(cq), options.drain_timeout,
                                                  cq_name(cq));
    check("teardown: the notifications owed");
}

void Sut::reap_closes() {
    // A connect or accept pending on a connector the consumer closed: the close cancels it
    // (CLOSE-08), and its completion is what the close waits for (CLOSE-03).
    for (size_t i = handshakes.size(); i-- > 0;)
        if (!object<void>(handshakes[i].slot) ||
            session.handshake_came(static_cast<NDK_CONNECTOR*>(handshakes[i].connector),
                                   handshakes[i].accept))
            await_handshake(handshakes[i].slot);
    for (bool progress = true; progress && !closing.empty();) {
        progress = false;
        for (size_t i = 0; i < closing.size(); ++i) {
            bool can_finish = session.with_oracle([&](model::Model& m) {
                const model::Object* o = m.find(closing[i].id);
                return !o || (o->open_successors == 0 && o->pending_requests == 0);
            });
            if (!can_finish) continue;
            session.wait_close(closing[i].object);
            closing.erase(closing.begin() + long(i));
            progress = true;
            break;
        }
    }
}

namespace {
std::mutex failure_rules_lock;
std::map<std::string, std::vector<std::string>> failure_rules_by_description;
}  // namespace

void remember_failure_rules(const std::string& description, std::vector<std::string> rules) {
    std::lock_guard guard(failure_rules_lock);
    failure_rules_by_description[description] = std::move(rules);
}

std::vector<std::string> failure_rules(const std::string& description) {
    std::lock_guard guard(failure_rules_lock);
    auto it = failure_rules_by_description.find(description);
    return it == failure_rules_by_description.end() ? std::vector<std::string>{} : it->second;
}

void Sut::check(const char* after) {
    if (trap) trap->report();  // GEN-CREATE-05 findings become the oracle's verdict
    model::Verdict v = session.verdict();
    std::string failures;
    std::vector<std::string> rules;
    for (size_t i = violations_seen_; i < v.violations.size(); ++i) {
        if (v.violations[i].warning) continue;
        failures += "  oracle: " + v.violations[i].describe() + "\n";
        // The rule each violation judged (its first; the rest follow from it and stay in the
        // message): the property's failure names these as broken, like a directed test's.
        const auto& judged = v.violations[i].rules;
        if (!judged.empty() && std::find(rules.begin(), rules.end(), judged.front()) == rules.end())
            rules.push_back(judged.front());
    }
    violations_seen_ = v.violations.size();
    if (failures.empty()) return;
    // A known finding of this provider (a waiver covers every rule it names): the sequence is
    // discarded, not failed; RapidCheck generates another.
    if (options.waivers)
        for (size_t i = 0; i < options.waivers->size(); ++i)
            if ((*options.waivers)[i].covers(rules)) {
                if (options.waived) ++(*options.waived)[i];
                throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Discard,
                                             "waived: " + failures);
            }
    std::ostringstream out;
    out << "the oracle found a violation after " << after << "\n"
        << failures << "minimal sequence (" << commands_run_ << " calls after setup):\n";
    for (const auto& line : log_)
        out << "  " << line << "\n";
    remember_failure_rules(out.str(), std::move(rules));
    throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, out.str());
}

void finish(Sut& sut, const Command& command, const std::string& answer) {
    sut.count_command();
    sut.reap_closes();
    std::ostringstream shown;
    command.show(shown);
    sut.log(std::to_string(sut.commands_run()) + ". " + shown.str() +
            (answer.empty() ? "" : " -> " + answer));
    sut.check(shown.str().c_str());
}

}  // namespace ndkct::properties
