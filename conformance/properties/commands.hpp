// commands.hpp: one rc::state command per NDK call (and one for connect, which is a handshake;
// a few made of others, for paths that need several calls in a row: DeferredChain,
// SendToReceive, FastRegistration, NotifiedCq).
//
// Each command generates its arguments in its constructor from the World (valid and invalid
// alike: bad and undocumented flags, misaligned addresses, oversized counts and lengths, MRs of
// the wrong kind, short LAM buffers, broken MDL chains, calls on unconnected QPs), checks that
// its slots still exist (checkPreconditions: after shrinking), applies its intent to the World
// (apply: pure), makes the call through the Session (run), and prints itself as the NDK call
// (show). Whether the provider's answer is right is never decided here: the oracle judges it.
#pragma once

#include <optional>
#include <sstream>

#include "machine.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::properties {

// "STATUS_SUCCESS", or "STATUS_PENDING then STATUS_SUCCESS".
std::string answer(const conformance::Done& done);
std::string answer(NTSTATUS status);
template <typename T>
std::string answer(const conformance::Made<T>& made, Kind kind, int slot) {
    std::string s = spec::status_name(made.status);
    if (made.pended()) s += " then " + spec::status_name(made.final_status);
    if (made.object) s += ": " + slot_name(kind, slot);
    return s;
}
// A command whose objects the provider never created is not run; the log says so.
void skipped(Sut& sut, const Command& command, const std::string& why);
// Refreshes what the Sut knows of an MR's tokens (TOK-04: once its registration completed).
void learn_tokens(Sut& sut, int mr);

// Generators shared by the commands. (Choices are drawn with weights, never with inRange:
// RapidCheck scales inRange to the size, so small sequences would take the first case mostly.)
bool one_in(size_t n);  // true now and then: once in n draws
rc::Gen<uint32_t> flags_from(std::vector<uint32_t> documented, std::vector<uint32_t> undocumented);
rc::Gen<std::vector<SgePlan>> sge_list(const World& w, bool receive = false);
// Whether two SGE lists share host bytes (by the regions their MRs' RegisterMr described). A
// transfer whose source and target overlap leaves bytes that depend on the order the device
// copies in, which no page fixes; the oracle does not settle it, so transfers never do (README).
// Two nodes: every MR of the SGEs can be used on `node` (World::usable_on).
bool sgl_on(const World& w, const std::vector<SgePlan>& sgl, int node);
bool sources_meet(const World& w, const std::vector<SgePlan>& a, const std::vector<SgePlan>& b);

// ---- Adapter ----

// NdkQueryAdapterInfo with a buffer of any size (*pBufferSize too small included, AI-05).
struct QueryAdapterInfo : Command {
    uint32_t buffer_size;
    explicit QueryAdapterInfo(const World&)
        : buffer_size(*rc::gen::elementOf(
              std::vector<uint32_t>{0, 4, NDK_ADAPTER_INFO_V1_SIZE - 1, NDK_ADAPTER_INFO_V1_SIZE,
                                    sizeof(NDK_ADAPTER_INFO) - 1, sizeof(NDK_ADAPTER_INFO)})) {}
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkQueryAdapterInfo(adapter, *pBufferSize=" << buffer_size << ")";
    }
};

struct CreatePd : Command {
    explicit CreatePd(const World&) {}
    void apply(World& w) const override { w.add({Kind::pd}); }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override { os << "NdkCreatePd(adapter)"; }
};

struct CreateCq : Command {
    uint32_t depth;
    explicit CreateCq(const World& w);
    void apply(World& w) const override {
        Slot s{Kind::cq};
        s.depth = depth;
        w.add(s);
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkCreateCq(adapter, CqDepth=" << depth << ")";
    }
};

struct BuildLam : Command {
    Region region;
    uint64_t length;       // SIZE_T Length (the region's, or not)
    uint32_t buffer_size;  // *pLAMSize: any size, the exact one most often
    explicit BuildLam(const World& w);
    void apply(World& w) const override {
        Slot s{Kind::lam};
        s.pages = region.pages();
        w.add(s);
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkBuildLam(adapter, " << region << ", Length=0x" << std::hex << length
           << ", *pLAMSize=0x" << buffer_size << std::dec << ")";
    }
};

struct ReleaseLam : Command {
    int lam;
    explicit ReleaseLam(const World& w) : lam(w.pick(Kind::lam)) {}
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(lam, Kind::lam)); }
    void apply(World& w) const override { w.slots[lam].open = false; }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkReleaseLam(adapter, " << slot_name(Kind::lam, lam) << ")";
    }
};

// ---- PD ----

struct CreateQp : Command {
    int pd, receive_cq, initiator_cq;
    conformance::QpShape shape;
    explicit CreateQp(const World& w);
    void checkPreconditions(const World& w) const override {
        RC_PRE(w.is(pd, Kind::pd) && w.is(receive_cq, Kind::cq) && w.is(initiator_cq, Kind::cq));
        RC_PRE(fits(w));
    }
    // Puts the QP on these CQs, its depths cut to their room (CQ-STATUS-04, the consumer's duty:
    // CQs are sized for what their QPs can have outstanding).
    void place(const World& w, int receive, int initiator);
    // Whether the shape is within the adapter's limits (else the create fails and needs no CQ
    // room), and whether the CQs have room for its depths.
    bool within_limits(const World& w) const;
    bool fits(const World& w) const;
    void apply(World& w) const override {
        if (within_limits(w)) {
            w.slots[receive_cq].committed += shape.receive_depth;
            w.slots[initiator_cq].committed += shape.initiator_depth;
        }
        Slot s{Kind::qp};
        s.receive_cq = int16_t(receive_cq);
        s.initiator_cq = int16_t(initiator_cq);
        s.shape = shape;
        w.add(s);
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// Either kind, the kind there are fewer of more likely: both are soon at hand (RegisterMr wants
// one, FastRegister the other).
struct CreateMr : Command {
    int pd;
    bool fast_register;
    explicit CreateMr(const World& w);
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(pd, Kind::pd)); }
    void apply(World& w) const override {
        Slot s{Kind::mr};
        s.fast = fast_register;
        w.add(s);
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkCreateMr(" << slot_name(Kind::pd, pd)
           << ", FastRegister=" << (fast_register ? "TRUE" : "FALSE") << ")";
    }
};

struct CreateMw : Command {
    int pd;
    explicit CreateMw(const World& w) : pd(w.pick(Kind::pd)) {}
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(pd, Kind::pd)); }
    void apply(World& w) const override { w.add({Kind::mw}); }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkCreateMw(" << slot_name(Kind::pd, pd) << ")";
    }
};

// ---- MR ----

struct RegisterMr : Command {
    int mr;  // either kind: a fast-register MR here is the wrong kind (AMB-16)
    Region region;
    uint64_t length;
    uint32_t flags;
    explicit RegisterMr(const World& w);
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(mr, Kind::mr)); }
    // What later SGEs aim at (most of them inside it, so that transfers also succeed).
    void apply(World& w) const override {
        w.slots[mr].length = uint32_t(length);
        w.slots[mr].flags = flags;
        w.slots[mr].buffer = int8_t(region.buffer);
        w.slots[mr].offset = region.offset;
    }
    void run(const World& w, Sut& sut) const override;
    // The call itself (on a created MR), from run() or from inside a provider callback
    // (CallFromNotification); returns the answer.
    std::string call(Sut& sut) const;
    void registered(Sut& sut) const;  // what the Sut learns of a registration that completed
    void show(std::ostream& os) const override {
        os << "NdkRegisterMr(" << slot_name(Kind::mr, mr) << ", " << region << ", Length=0x"
           << std::hex << length << ", Flags=0x" << flags << std::dec << ")";
    }
};

struct DeregisterMr : Command {
    int mr;
    explicit DeregisterMr(const World& w) : mr(w.pick(Kind::mr)) {}
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(mr, Kind::mr)); }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkDeregisterMr(" << slot_name(Kind::mr, mr) << ")";
    }
};

struct InitializeFastRegisterMr : Command {
    int mr;
    uint32_t adapter_page_count;
    bool remote_access;
    explicit InitializeFastRegisterMr(const World& w);
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(mr, Kind::mr)); }
    void apply(World& w) const override { w.slots[mr].pages = adapter_page_count; }
    void run(const World& w, Sut& sut) const override;
    // The call itself (on a created MR), from run() or from inside a provider callback
    // (CallFromNotification); returns the answer.
    std::string call(Sut& sut) const;
    void initialized(Sut& sut) const;  // what the Sut learns of an initialization that completed
    void show(std::ostream& os) const override {
        os << "NdkInitializeFastRegisterMr(" << slot_name(Kind::mr, mr)
           << ", AdapterPageCount=" << adapter_page_count
           << ", RemoteAccess=" << (remote_access ? "TRUE" : "FALSE") << ")";
    }
};

// ---- QP: initiator and receive requests ----

struct FastRegister : Command {
    enum class Fbo : uint8_t { from_lam, zero, other };
    int qp, mr, lam;
    uint32_t page_count;  // may exceed the LAM's pages (the last is repeated)
    Fbo fbo_mode;
    uint32_t fbo_other;
    int64_t length_delta;     // Length = page_count * PAGE_SIZE - FBO + length_delta
    uint64_t base_va_offset;  // BaseVirtualAddress = label + FBO (+ misalignment)
    uint32_t misalignment;    // 0: congruent to FBO (FR-ALIGN-01)
    uint32_t flags;
    uint64_t label_bias = 0;  // added to the label: past every pointer (FastRegisterLabels)
    explicit FastRegister(const World& w);
    void checkPreconditions(const World& w) const override {
        RC_PRE(w.is(qp, Kind::qp) && w.is(mr, Kind::mr) && w.is(lam, Kind::lam));
        RC_PRE(w.usable_on(mr, w.node_of(qp)));  // two nodes: the MR's registration is there
    }
    void apply(World& w) const override { w.settle(mr, qp); }
    void run(const World& w, Sut& sut) const override;
    // The call itself, from run() or from inside a provider callback (FastRegisterFromNotification,
    // commands_fast_register_completion.hpp); returns the answer.
    std::string call(Sut& sut) const;
    void show(std::ostream& os) const override;
};

// A command made of others, so that a path that needs several calls in a row is common. Each
// call is the command of its own, generated as usual, and counts as one call of a
// counterexample; steps(base) gives them with the objects this command makes numbered from slot
// `base` on (an earlier create shrunk away moves them). Each step is checked, applied and run in
// the World the ones before it leave.
struct Composite : Command {
    int made_at;  // the slot its first object took when generated
    explicit Composite(const World& w) : made_at(int(w.slots.size())) {}
    virtual std::vector<std::shared_ptr<const Command>> steps(int base) const = 0;
    // A slot of one of the steps as generated, renumbered for objects made from `base` on.
    int moved(int slot, int base) const { return slot >= made_at ? slot - made_at + base : slot; }
    void checkPreconditions(const World& w) const override;
    void apply(World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

struct Write;

// A fast registration from scratch: NdkCreateMr (FastRegister), NdkInitializeFastRegisterMr,
// NdkBuildLam and NdkFastRegister of that MR over that LAM. Each call is the command of its own
// (any page counts, FBO, length, address and flags, all generated as usual); together, a fast
// registration mostly has what it needs, so that what it gets wrong shows (FR-*).
struct FastRegistration : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const InitializeFastRegisterMr> initialize;
    std::shared_ptr<const BuildLam> build_lam;
    std::shared_ptr<const FastRegister> fast_register;
    // Now and then the region is made remotely writable and written at once (NdkWrite), so
    // that bytes landing on the wrong page show (FR-PAGE-02, FR-MAP-01). Null otherwise.
    std::shared_ptr<const Write> write;
    explicit FastRegistration(const World& w);
    // The four calls (five with the write), with the MR and the LAM it makes at slots `base`
    // and `base + 1`.
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

struct Invalidate : Command {
    int qp, target;
    Kind target_kind;
    uint32_t flags;
    explicit Invalidate(const World& w);
    void checkPreconditions(const World& w) const override {
        RC_PRE(w.is(qp, Kind::qp) && w.is(target, target_kind));
        RC_PRE(w.usable_on(target, w.node_of(qp)));
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkInvalidate(" << slot_name(Kind::qp, qp) << ", " << slot_name(target_kind, target)
           << ", Flags=0x" << std::hex << flags << std::dec << ")";
    }
};

struct Bind : Command {
    int qp, mr, mw;
    uint32_t offset;
    uint64_t length;
    uint32_t flags;
    explicit Bind(const World& w);
    void checkPreconditions(const World& w) const override {
        RC_PRE(w.is(qp, Kind::qp) && w.is(mr, Kind::mr) && w.is(mw, Kind::mw));
        RC_PRE(w.usable_on(mr, w.node_of(qp)) && w.usable_on(mw, w.node_of(qp)));
    }
    void apply(World& w) const override { w.settle(mw, qp); }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkBind(" << slot_name(Kind::qp, qp) << ", " << slot_name(Kind::mr, mr) << ", "
           << slot_name(Kind::mw, mw) << ", VirtualAddress=" << slot_name(Kind::mr, mr) << "+0x"
           << std::hex << offset << ", Length=0x" << length << ", Flags=0x" << flags << std::dec
           << ")";
    }
};

// Read and Write: local SGEs, and a remote range in an MR or MW (by its token and address).
// What the two share; each stays its own command (its flags, its call, its show()). The remote
// range never overlaps the local SGEs in host memory (as far as the World knows the regions):
// which bytes a transfer onto its own source leaves is up to the order the device copies in,
// which no page fixes, and the oracle does not settle it (README).
struct RemoteRequest : Command {
    int qp;
    std::vector<SgePlan> sgl;
    int remote;
    Kind remote_kind;  // an MR or an MW
    uint32_t remote_offset;
    uint32_t flags = 0;
    explicit RemoteRequest(const World& w);  // the derived command draws the flags next
    void checkPreconditions(const World& w) const override;
    void show_call(std::ostream& os, const char* call) const;
};

struct Read : RemoteRequest {
    explicit Read(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override { show_call(os, "NdkRead"); }
};

struct Write : RemoteRequest {
    explicit Write(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override { show_call(os, "NdkWrite"); }
};

// Mostly from a QP whose peer has a receive posted (RCV-03: the send lands there).
struct Send : Command {
    int qp;
    std::vector<SgePlan> sgl;
    uint32_t flags;
    explicit Send(const World& w);
    void checkPreconditions(const World& w) const override;
    void apply(World& w) const override {
        const int peer = w.slots[qp].peer;
        if (w.is(peer, Kind::qp) && w.slots[peer].receives > 0) --w.slots[peer].receives;
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

struct Receive : Command {
    int qp;
    std::vector<SgePlan> sgl;
    explicit Receive(const World& w);
    void checkPreconditions(const World& w) const override;
    void apply(World& w) const override { ++w.slots[qp].receives; }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// A receive buffer made, registered and posted on one QP of a connected pair, and a send from
// its peer: NdkCreateMr, NdkRegisterMr, NdkReceive, NdkSend. The send lands in that receive
// (RCV-03) and the receive's entry reports the bytes (CQ-RES-01). Each call is the command of
// its own (any region, flags, SGEs, all generated as usual); together, a send mostly meets a
// receive that can take it.
struct SendToReceive : Composite {
    std::shared_ptr<const CreateMr> create_mr;
    std::shared_ptr<const RegisterMr> register_mr;
    std::shared_ptr<const Receive> receive;
    // Now and then an NdkArmCq (SOLICITED) of the receiving CQ before a solicited send: its
    // receive's entry must notify (SND-04, CQ-NOT-10). Null otherwise.
    std::shared_ptr<const Command> arm;
    std::shared_ptr<const Send> send;  // from the receiving QP's peer
    explicit SendToReceive(const World& w);
    // The four calls (five with the arm), with the MR it makes at slot `base`.
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
    void checkPreconditions(const World& w) const override;
};

struct Flush : Command {
    int qp;
    explicit Flush(const World& w) : qp(w.pick(Kind::qp)) {}
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(qp, Kind::qp)); }
    void apply(World& w) const override { w.slots[qp].receives = 0; }  // FLS-02: cancelled
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkFlush(" << slot_name(Kind::qp, qp) << ")";
    }
};

// A chain of DEFER-flagged initiator requests on one QP (Send, Write, Read, Invalidate,
// FastRegister, Bind), closed by one without DEFER. DEFER-05 is the consumer's duty: a provider
// may hold a deferred request until the chain's last request rings the doorbell, so an open
// chain would leave completions that never come (even after NdkFlush). The single-request
// commands therefore never carry DEFER; this one is where it is exercised (DEFER-02..04, 07).
struct DeferredChain : Command {
    int qp;
    std::vector<std::shared_ptr<const Command>> requests;  // all on qp; the last without DEFER
    explicit DeferredChain(const World& w);
    void checkPreconditions(const World& w) const override;
    // Two nodes: the fast registrations and binds of the chain settle their MRs and MWs.
    void apply(World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// ---- CQ ----

// NdkGetCqResults or, from NDKPI 1.2 on, NdkGetCqResultsEx (each reports what the other does,
// CQ-RES-01..05; a fault may be in one of them only).
struct GetCqResults : Command {
    int cq;
    uint32_t max_results;
    bool ex;
    explicit GetCqResults(const World& w);
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(cq, Kind::cq)); }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << (ex ? "NdkGetCqResultsEx(" : "NdkGetCqResults(") << slot_name(Kind::cq, cq)
           << ", nResults=" << max_results << ")";
    }
};

struct ArmCq : Command {
    int cq;
    uint32_t type;
    explicit ArmCq(const World& w);
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(cq, Kind::cq)); }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkArmCq(" << slot_name(Kind::cq, cq) << ", TriggerType=" << type << ")";
    }
};

// ---- Connections ----

// What one side of a handshake asks for in NdkConnect or NdkAccept: its read limits (either way
// on its own, now and then above the adapter's maxima, which cap them: CONN-RL-01; the peer's
// lower them: CONN-RL-02) and private data (now and then more than MaxCallerData or
// MaxCalleeData allows, CONN-28).
struct HandshakeSide {
    uint32_t inbound_read_limit = 4, outbound_read_limit = 4;
    uint32_t private_data = 0;  // bytes
    static HandshakeSide any(const NDK_ADAPTER_INFO& info, uint32_t max_private_data);
    std::vector<uint8_t> bytes(uint8_t salt) const;  // a pattern the salt tells apart
};
std::ostream& operator<<(std::ostream& os, const HandshakeSide& side);

// Connects two QPs through a new listener and two new connectors: NdkCreateListener, NdkListen,
// NdkCreateConnector, NdkConnect, (connect event), NdkAccept, NdkCompleteConnect, each side
// with its read limits and private data. Either QP may already be connected, closed-over or
// otherwise unfit: the oracle judges.
struct Connect : Command {
    int active_qp, passive_qp;
    HandshakeSide active_side, passive_side;
    explicit Connect(const World& w);
    void checkPreconditions(const World& w) const override {
        NDKCT_PRE(w.is(active_qp, Kind::qp) && w.is(passive_qp, Kind::qp) &&
                  active_qp != passive_qp && !w.slots[active_qp].connected &&
                  !w.slots[passive_qp].connected);
    }
    void apply(World& w) const override {
        w.slots[active_qp].connected = w.slots[passive_qp].connected = true;
        if (w.two_nodes) w.slots[passive_qp].node = 1;  // the accepting QP is made on node B
        w.slots[active_qp].peer = int16_t(passive_qp);
        w.slots[passive_qp].peer = int16_t(active_qp);
        w.add({Kind::listener});
        w.add({Kind::connector});
        w.add({Kind::connector});
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "connect " << slot_name(Kind::qp, active_qp) << " to "
           << slot_name(Kind::qp, passive_qp)
           << " (NdkCreateListener, NdkListen, NdkCreateConnector, NdkConnect(" << active_side
           << "), NdkAccept(" << passive_side << "), NdkCompleteConnect)";
    }
};

// The first half of a handshake: NdkCreateListener, NdkListen, NdkCreateConnector, NdkConnect
// (read limits, private data) and the listener's connect event, and nobody accepts: the
// connect stays pending. Then the passive connector's connection data can be read
// (GetConnectionData), Accept answers it, and a close of the active connector must cancel the
// connect rather than wait for it (CLOSE-08).
struct StartConnect : Command {
    int qp;
    HandshakeSide side;
    explicit StartConnect(const World& w);
    void checkPreconditions(const World& w) const override {
        NDKCT_PRE(w.is(qp, Kind::qp) && !w.slots[qp].connected);
    }
    void apply(World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "start connecting " << slot_name(Kind::qp, qp)
           << " (NdkCreateListener, NdkListen, NdkCreateConnector, NdkConnect(" << side
           << "), connect event; not accepted)";
    }
};

// NdkAccept of a connection StartConnect left incoming, on a QP of its own, with its read
// limits and private data; the active side's NdkConnect completes then. The accept stays
// pending until the peer's NdkCompleteConnect (CompleteConnect).
struct Accept : Command {
    int connector, qp;
    HandshakeSide side;
    explicit Accept(const World& w);
    void checkPreconditions(const World& w) const override {
        NDKCT_PRE(w.is(connector, Kind::connector) &&
                  w.slots[connector].handshake == Handshake::incoming && w.is(qp, Kind::qp) &&
                  !w.slots[qp].connected);
    }
    void apply(World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkAccept(" << slot_name(Kind::connector, connector) << ", "
           << slot_name(Kind::qp, qp) << ", " << side << ")";
    }
};

// NdkCompleteConnect of an active connector whose connect an Accept answered; the passive
// side's NdkAccept completes then.
struct CompleteConnect : Command {
    int connector;
    explicit CompleteConnect(const World& w);
    void checkPreconditions(const World& w) const override {
        NDKCT_PRE(w.is(connector, Kind::connector) &&
                  w.slots[connector].handshake == Handshake::connected);
    }
    void apply(World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkCompleteConnect(" << slot_name(Kind::connector, connector) << ")";
    }
};

// NdkGetConnectionData while a handshake offers it (CONN-PD-08: a passive connector before its
// NdkAccept, an active one between its connect's completion and NdkCompleteConnect): the probe
// with no buffer, buffers shorter than the peer's private data (CONN-PD-04), as long and
// longer, with the read-limit pointers or NULL (CONN-RL-03). The oracle judges RDS and the
// limits (CONN-PD-05, CONN-RL-01..03), the harness the bytes copied and past the buffer
// (CONN-PD-03).
struct GetConnectionData : Command {
    int connector;
    bool with_buffer, with_limits;
    uint32_t buffer_length;  // *pPrivateDataLength (0 with no buffer: the probe)
    explicit GetConnectionData(const World& w);
    void checkPreconditions(const World& w) const override {
        NDKCT_PRE(w.is(connector, Kind::connector) &&
                  (w.slots[connector].handshake == Handshake::incoming ||
                   w.slots[connector].handshake == Handshake::connected));
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkGetConnectionData(" << slot_name(Kind::connector, connector)
           << (with_limits ? ", &InboundReadLimit, &OutboundReadLimit, " : ", NULL, NULL, ")
           << (with_buffer ? "buffer" : "NULL") << ", *pPrivateDataLength=" << buffer_length << ")";
    }
};

struct Disconnect : Command {
    int connector;
    explicit Disconnect(const World& w) : connector(w.pick(Kind::connector)) {}
    void checkPreconditions(const World& w) const override {
        RC_PRE(w.is(connector, Kind::connector));
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkDisconnect(" << slot_name(Kind::connector, connector) << ")";
    }
};

// ---- Every object ----

// Whether an open QP slot reports to the CQ slot.
bool qps_use(const World& w, int cq);

// NdkCloseObject of any open object, in any order: an antecedent closed before its successors
// pends until they are closed (CLOSE-02); the Sut awaits such completions at teardown. A CQ,
// though, only once its QPs are closed, and after the notifications it is owed: a CQ's close
// completing while a notification is on its way is a race whose outcome is timing alone
// (CLOSE-04 or CLOSE-07 for a provider that does not track its callbacks), not reproducible.
struct CloseObject : Command {
    int slot;
    Kind kind;
    explicit CloseObject(const World& w);
    void checkPreconditions(const World& w) const override {
        RC_PRE(w.is(slot, kind) && !(kind == Kind::cq && qps_use(w, slot)));
    }
    void apply(World& w) const override { w.slots[slot].open = false; }
    void run(const World& w, Sut& sut) const override;
    // The call itself (on a created object), from run() or from inside a provider callback
    // (CallFromNotification); returns the answer.
    std::string call(Sut& sut) const;
    void show(std::ostream& os) const override {
        os << "NdkCloseObject(" << slot_name(kind, slot) << ")";
    }
};

// ---- Calls from inside a provider callback ----

// NdkArmCq, and NDK calls made from inside the notification callback that follows: NdkRegisterMr,
// NdkInitializeFastRegisterMr, or the close of the CQ (after its QPs'). A kernel consumer runs
// there at DISPATCH_LEVEL and may call the provider again: no call may block there (GEN-IRQL-01;
// the harness times them), and a CQ closed from there completes only after the callback has
// returned (CLOSE-07). The command waits for the notification while the oracle says the arm fires
// at once (entries that satisfy it wait in the CQ, CQ-NOT-02); when none came, the calls are made
// after it on the consumer's thread, so that their intent holds either way.
struct CallFromNotification : Command {
    int cq;
    uint32_t type;
    std::shared_ptr<const RegisterMr> register_mr;               // the call: this one,
    std::shared_ptr<const InitializeFastRegisterMr> initialize;  // or this one (IFR-IRQL-01),
    std::vector<std::shared_ptr<const CloseObject>> closes;      // or these (the QPs, then cq)
    std::shared_ptr<const FastRegister> fast_register;           // or this one (FR-IRQL-01, s11frq)
    explicit CallFromNotification(const World& w, int only_cq = -1);
    void checkPreconditions(const World& w) const override;
    void apply(World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;

  protected:
    CallFromNotification() = default;  // a subclass draws the call itself
};

// The first steps of a composite that calls from inside a CQ's notification callback: a CQ of
// its own with an entry to notify for. NdkCreateCq, NdkCreateQp on it, NdkReceive and NdkFlush
// there (the cancelled receive is the entry the arm fires for); the CQ at the composite's first
// slot, the QP at the next.
struct CqWithAnEntry {
    std::shared_ptr<const CreateCq> create_cq;
    std::shared_ptr<const CreateQp> create_qp;
    std::shared_ptr<const Receive> receive;
    std::shared_ptr<const Flush> flush;
    // Generated for `composite` in `w`; `after` is left as the four calls leave it.
    CqWithAnEntry(const Composite& composite, const World& w, World& after);
    int cq() const { return cq_; }
    // The four calls, their objects renumbered from `base` on (Composite::steps).
    std::vector<std::shared_ptr<const Command>> steps(const Composite& composite, int base) const;

  private:
    int cq_;
};

// A CQ of its own for the calls from inside its notification callback (CqWithAnEntry), then
// CallFromNotification on that CQ (the QP's and the CQ's close, or NdkRegisterMr).
struct NotifiedCq : Composite {
    std::optional<CqWithAnEntry> entry;
    std::shared_ptr<const CallFromNotification> call;
    explicit NotifiedCq(const World& w);
    // The five calls, with the CQ and QP it makes at slots `base` and `base + 1`.
    std::vector<std::shared_ptr<const Command>> steps(int base) const override;
};

}  // namespace ndkct::properties
