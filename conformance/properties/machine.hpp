// machine.hpp: the state machine the property tests drive (RapidCheck rc::state).
//
// Two halves, as rc::state wants them:
// - World: the consumer's intent, pure and cheap to copy. Objects are slots numbered in creation
//   order ("qp3", "mr7"); a slot says what the consumer created and whether it closed it, never
//   whether the provider succeeded. Commands pick slots from it, and after shrinking a command
//   is still valid when its slots exist, are open and are of the right kind.
// - Sut: the provider under test behind a conformance Session, whose check-mode oracle judges
//   every answer. Each slot maps to the real object (nullptr when the provider refused to create
//   it: a command on such a slot is skipped, and the log says so).
//
// A command's run() makes its NDK call(s) through the Session and then asks the oracle for new
// violations: the first one fails the property (RC_FAIL) with the log of the calls so far.
#pragma once

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <array>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "ndkct/conformance/dispatch_trap.hpp"
#include "ndkct/conformance/session.hpp"
#include "waivers.hpp"

// A precondition whose later operands are valid only when the earlier ones hold
// (`w.is(i, Kind::qp) && !w.slots[i].connected`). RC_PRE decomposes `a && b` to print each
// operand, so it evaluates all of them: slots[i] was read with i out of range (-1 from an empty
// pick, or a slot shrinking removed), found by AddressSanitizer. Here the condition is one bool,
// evaluated with C++'s short circuit first.
#define NDKCT_PRE(condition) RC_PRE(static_cast<bool>(condition))

namespace ndkct::properties {

using conformance::Session;

enum class Kind : uint8_t { pd, cq, qp, mr, mw, lam, listener, connector };
const char* kind_name(Kind kind);

// Where a connector's handshake stands (intent): which step comes next, and whether
// NdkGetConnectionData has something to report (CONN-PD-08).
enum class Handshake : uint8_t {
    none,        // none begun, or done (Connect, CompleteConnect)
    connecting,  // active: NdkConnect pending, the peer not accepted yet (StartConnect)
    incoming,    // passive: the connect event delivered it, not accepted yet (StartConnect)
    accepted,    // passive: NdkAccept pending until the peer's NdkCompleteConnect (Accept)
    connected,   // active: NdkConnect completed, NdkCompleteConnect not called yet (Accept)
};

struct Slot {
    Kind kind;
    bool open = true;
    bool fast = false;                      // mr: created for fast registration
    bool connected = false;                 // qp: a connect command took it (intent, not outcome)
    Handshake handshake = Handshake::none;  // connector
    // connector: the other end of its handshake; qp: the QP a Connect paired it with
    int16_t peer = -1;
    uint32_t peer_data = 0;  // connector: bytes of private data its peer sent
    uint32_t receives = 0;   // qp: receives posted that no send was meant for yet
    uint32_t pages = 0;      // lam: pages its region spans; mr: its last IFR's page count
    uint32_t length = 0;     // mr: bytes its last RegisterMr asked for (intent: 0 = unknown)
    uint32_t flags = 0;      // mr: the flags its last RegisterMr asked for
    int8_t buffer = -1;      // mr: the host buffer its last RegisterMr described,
    uint32_t offset = 0;     // and where in it the region starts
    int16_t receive_cq = -1, initiator_cq = -1;  // qp: its CQ slots
    // qp: the sizes it was created with (depths, SGE counts, InlineDataSize; the setup pair's are
    // Session::loopback_pair's, QpShape's defaults), which PostAtTheQpLimits posts up to
    // (CQP-DEPTH-01/02, CQP-SGE-01/02, CQP-INL-01).
    conformance::QpShape shape{};
    // cq: its CqDepth, and the completions its QPs can have outstanding at once (the sum of
    // their queue depths). CQ-STATUS-04 is the consumer's duty: CQs are sized for every
    // outstanding request, so a generated QP only goes to CQs with room for its depths.
    uint32_t depth = 0, committed = 0;
    // Two nodes (World::two_nodes): a QP's node, 1 once it took the passive side of a connection
    // (the split provider makes the accepting QP on node B); a fast-register MR's or an MW's, the
    // node of the QP that first fast-registered or bound it (-1: none yet). A registration exists
    // on its node only (conformance/twonode README, "What two nodes cannot be").
    int8_t node = -1;
};

// Host memory every run has: kBuffers locked buffers of kBufferPages pages.
constexpr uint32_t kBuffers = 4;
constexpr uint32_t kBufferPages = 8;
constexpr uint32_t kBufferBytes = kBufferPages * PAGE_SIZE;

// The consumer's view of the world: the slots, and the adapter's limits (read once, shared).
struct World {
    std::vector<Slot> slots;
    std::shared_ptr<const NDK_ADAPTER_INFO> info;
    // The run is split across two nodes (NDKCT_PEER, conformance/twonode): an MR or MW a QP
    // registered or bound is used through QPs of that node locally and through the other node's
    // QPs remotely (by its tokens). On one node every check below holds and nothing is settled,
    // so generation and shrinking are as they were.
    bool two_nodes = false;
    int node_of(int qp) const {  // 0: node A, 1: node B
        return two_nodes && size_t(qp) < slots.size() && slots[qp].node == 1 ? 1 : 0;
    }
    // The node a QP's RDMA reaches: its peer's (an unpaired QP's requests cross the link too).
    int far_node(int qp) const {
        if (!two_nodes || size_t(qp) >= slots.size()) return 0;
        const int peer = slots[qp].peer;
        return peer >= 0 && size_t(peer) < slots.size() && slots[peer].kind == Kind::qp
                   ? node_of(peer)
                   : 1 - node_of(qp);
    }
    // Whether an MR or MW slot can be used on `node` (not yet settled: on either).
    bool usable_on(int slot, int node) const {
        if (!two_nodes || slot < 0 || size_t(slot) >= slots.size()) return true;
        return slots[slot].node < 0 || slots[slot].node == node;
    }
    // A fast registration or bind through `qp` settles its MR or MW on the QP's node.
    void settle(int slot, int qp) {
        if (!two_nodes || slot < 0 || size_t(slot) >= slots.size() || slots[slot].node >= 0) return;
        const Slot& s = slots[slot];
        if (s.kind == Kind::mw || (s.kind == Kind::mr && s.fast))
            slots[slot].node = int8_t(node_of(qp));
    }

    bool is(int slot, Kind kind) const {
        return slot >= 0 && size_t(slot) < slots.size() && slots[slot].open &&
               slots[slot].kind == kind;
    }
    // The open slots of a kind (optionally also passing `accept`).
    template <typename Accept>
    std::vector<int> open_of(Kind kind, Accept accept) const {
        std::vector<int> out;
        for (size_t i = 0; i < slots.size(); ++i)
            if (slots[i].open && slots[i].kind == kind && accept(slots[i])) out.push_back(int(i));
        return out;
    }
    std::vector<int> open_of(Kind kind) const {
        return open_of(kind, [](const Slot&) { return true; });
    }
    // Picks an open slot of a kind, or discards the command being generated (RC_PRE).
    int pick(Kind kind) const;
    template <typename Accept>
    int pick(Kind kind, Accept accept) const {
        auto candidates = open_of(kind, accept);
        RC_PRE(!candidates.empty());
        return *rc::gen::elementOf(candidates);
    }
    int add(Slot slot) {
        slots.push_back(slot);
        return int(slots.size()) - 1;
    }
};

// A slot's name as the counterexample prints it: "qp3".
std::string slot_name(Kind kind, int slot);

// A piece of host memory as a consumer describes it with an MDL chain: a range of one of the
// buffers, and the shape of the chain (whole, split into pieces, or deliberately broken).
struct Region {
    enum class Shape : uint8_t { whole, split, hole, misaligned_joint };
    uint8_t buffer = 0;
    uint32_t offset = 0;
    uint32_t length = 1;
    Shape shape = Shape::whole;

    uint32_t pages() const {  // pages the range spans
        return (offset % PAGE_SIZE + length + PAGE_SIZE - 1) / PAGE_SIZE;
    }
    static rc::Gen<Region> any();
};
std::ostream& operator<<(std::ostream& os, const Region& region);

// One scatter/gather entry as the consumer means it: `length` bytes at `offset` into what an MR
// slot registered (its token and its address), or a stray token (mr < 0).
struct SgePlan {
    int mr = -1;
    uint32_t offset = 0;
    uint32_t length = 0;
};
std::ostream& operator<<(std::ostream& os, const SgePlan& sge);

// What the Sut learned of an MR: the address its registration starts at and its tokens (the
// last successful RegisterMr or FastRegister).
struct MrRecord {
    bool registered = false;
    uint64_t base = 0;
    uint64_t length = 0;  // the Length it asked for (AccessAcrossTheEnd reaches past it)
    uint32_t local_token = 0;
    uint32_t remote_token = 0;
    // IFR-TOK-01: the local token a fast-register MR reported once its initialization completed
    // (before any fast registration since).
    uint32_t initialized_token = 0;
};

// Where a sequence's wall time goes, in seconds, summed over sequences (the benchmark's
// breakdown; nullptr elsewhere).
struct PhaseTimes {
    double session = 0;                 // Session: arena, NdkctOpenAdapter, the oracle
    double buffers = 0;                 // the Sut's host buffers (scattered pages, each mapped)
    double setup = 0;                   // the connected loopback pair
    double commands = 0;                // the generated commands
    double drain = 0;                   // teardown: polling, NdkFlush, polling to the end
    double notifications = 0;           // teardown: the notifications owed
    double closes = 0;                  // teardown: NdkCloseObject of everything, NdkReleaseLam
    double adapter_close = 0;           // teardown: CloseNdkAdapter
    double quiet = 0;                   // teardown: the quiet wait
    double destroy = 0;                 // the Sut's and the Session's destructors
    size_t notifications_given_up = 0;  // teardowns that waited the notifications' whole time
};

// Adds the time since the previous lap to a field of PhaseTimes (nothing when times is null).
class Laps {
  public:
    explicit Laps(PhaseTimes* times) : times_(times) {
        if (times_) last_ = std::chrono::steady_clock::now();
    }
    void lap(double PhaseTimes::*field) {
        if (!times_) return;
        auto now = std::chrono::steady_clock::now();
        times_->*field += std::chrono::duration<double>(now - last_).count();
        last_ = now;
    }

  private:
    PhaseTimes* times_;
    std::chrono::steady_clock::time_point last_;
};

struct SutOptions {
    std::chrono::milliseconds drain_timeout{1000};  // how long teardown waits for completions
    // After the adapter closed (CLOSE-ADP-01: no callback after that), how long teardown waits
    // for a stray callback still on its way (GEN-ASYNC-03, GEN-CB-03) before the last check.
    std::chrono::microseconds quiet{1000};
    // The quiet period judged later (QuietPeriods, property.hpp): teardown checks right after
    // CloseNdkAdapter and does not wait; judge_quiet() checks again once the period is over,
    // while other sequences run meanwhile.
    bool defer_quiet = false;
    PhaseTimes* times = nullptr;
    // The provider's known findings: a failure that names only rules one of them covers
    // discards the sequence and counts it in waived[i] (the index of the waiver).
    const std::vector<Waiver>* waivers = nullptr;
    std::vector<size_t>* waived = nullptr;
};

// The system under test: a Session on the provider, and the slots' real objects.
// The rules a failing sequence broke, keyed by the failure's description (RapidCheck carries
// only the text of a failure; the rules travel beside it as data, never parsed from it).
void remember_failure_rules(const std::string& description, std::vector<std::string> rules);
std::vector<std::string> failure_rules(const std::string& description);

class Sut {
  public:
    // `reused`: the host buffers of an earlier Sut on the same (rewound) arena instead of new
    // ones (HostPool, property.hpp); either way they get their patterns here.
    Sut(Session& session, SutOptions options = {},
        std::array<platform::LockedBuffer, kBuffers> reused = {});
    ~Sut();
    // The host buffers, for the next Sut on the same arena (the Sut is done with them).
    std::array<platform::LockedBuffer, kBuffers> take_buffers() { return std::move(buffers); }

    Session& session;
    SutOptions options;
    std::vector<void*> objects;  // by slot; nullptr when its creation failed
    std::vector<MrRecord> mrs;   // by slot
    std::vector<std::unique_ptr<conformance::LamResult>> lams;  // by slot
    std::array<platform::LockedBuffer, kBuffers> buffers;
    std::vector<platform::MdlChain> chains;  // every chain handed to the provider stays alive
    // Closes that returned STATUS_PENDING, with the oracle's ID of the object: once its close
    // has come the provider may give its address to a new object before the close is reaped.
    struct Closing {
        void* object;
        model::ObjectId id;
    };
    std::vector<Closing> closing;
    void close_pending(void* object) { closing.push_back({object, session.id(object)}); }
    // A connect or accept a handshake command left pending (StartConnect, Accept). The step that
    // answers it awaits it (Accept the connect, CompleteConnect the accept); otherwise it is
    // awaited once its connector is closed, since the close cancels it (CLOSE-08), or as soon as
    // its callback has come: the oracle must see it before any completion that came after it (a
    // refused connect releases its QP, whose close may then complete: CLOSE-02).
    struct PendingHandshake {
        int slot;
        void* connector;
        bool accept;  // NdkAccept, else NdkConnect
    };
    std::vector<PendingHandshake> handshakes;
    // Awaits the connect or accept pending on the connector slot (if any) and returns how it
    // completed, for the log ("" when none was pending).
    std::string await_handshake(int slot);
    // GEN-CREATE-05: every object's Dispatch points at the harness's trap tables from handout
    // on (place()); the consumer's calls go through them, and a provider that reads Dispatch
    // again is reported. Gone before the adapter closes.
    std::unique_ptr<conformance::DispatchTrap> trap;

    template <typename T>
    T* object(int slot) const {
        return size_t(slot) < objects.size() ? static_cast<T*>(objects[slot]) : nullptr;
    }
    void place(int slot, void* object);  // the real object of a new slot
    // Closes that pended (CLOSE-02) are awaited once the oracle says they can finish: their
    // successors closed and their requests completed. Until then the oracle would count them
    // open, so this runs after every command.
    void reap_closes();
    void* next_context();  // a RequestContext no other request had
    uint16_t next_port();
    platform::MdlChain& chain(const Region& region);  // builds (and keeps) the chain
    // With `inline_data` (NDK_OP_FLAG_INLINE) the provider copies from the SGEs' addresses during
    // the call, so every address is kept inside a host buffer (a fast-registered MR's address is
    // a label, not memory: such an SGE points into buffer 0 instead, under the MR's token).
    std::vector<NDK_SGE> sges(const std::vector<SgePlan>& plans, bool inline_data = false);
    uint64_t remote_address(int mr, uint32_t offset) const;
    uint32_t remote_token(int mr) const;

    // The log of what ran: one line per command, the call and what the provider answered.
    void log(const std::string& line) { log_.push_back(line); }
    const std::vector<std::string>& lines() const { return log_; }
    size_t commands_run() const { return commands_run_; }
    void count_command() { ++commands_run_; }

    // CQ-NOT-07: a satisfied arm is never dropped. Before a CQ's close, the notifications the
    // oracle says are owed are awaited (briefly: it may count one owed that the provider need not
    // send yet), so that one still on its way is not judged against a closed CQ (CLOSE-04) by
    // timing alone.
    void await_notifications(const std::vector<void*>& cqs);
    // Makes the objects of initial_world(): a PD, a CQ and two QPs connected to each other.
    void setup();
    // After the commands: completions drained, QPs flushed, everything closed; the oracle's
    // judgement of that included.
    void teardown(const World& world);
    // With SutOptions::defer_quiet, after teardown: when the quiet period after CloseNdkAdapter
    // is over, fails (as check() does) if a stray callback came meanwhile.
    std::chrono::steady_clock::time_point quiet_until() const { return quiet_until_; }
    void judge_quiet();
    // New violations since the last check fail the property, naming their rules.
    void check(const char* after);

  private:
    std::vector<std::string> log_;
    size_t commands_run_ = 0;
    size_t violations_seen_ = 0;
    uintptr_t next_context_ = 0x1000;
    uint16_t port_ = 0;
    bool torn_down_ = false;
    std::chrono::steady_clock::time_point quiet_until_{};
};

// Two nodes (NDKCT_PEER): how many sequences' setup pair crossed to node B (the report's `nodes`).
size_t sequences_across_nodes();

// The world every sequence starts from (slots 0..6: pd0 cq1 qp2 qp3 listener4 connector5
// connector6, the two QPs connected), for an adapter with these limits. On two nodes (NDKCT_PEER
// set: two_nodes) qp3, which accepts, is on node B.
World initial_world(std::shared_ptr<const NDK_ADAPTER_INFO> info);

using Command = rc::state::Command<World, Sut>;

// Runs one NDK command: counts it, logs `shown` with the answer, then checks the oracle.
void finish(Sut& sut, const Command& command, const std::string& answer);

}  // namespace ndkct::properties
