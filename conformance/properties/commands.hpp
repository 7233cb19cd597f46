// commands.hpp: one rc::state command per NDK call (and one for connect, which is a handshake).
//
// Each command generates its arguments in its constructor from the World (valid and invalid
// alike: bad and undocumented flags, misaligned addresses, oversized counts and lengths, MRs of
// the wrong kind, short LAM buffers, broken MDL chains, calls on unconnected QPs), checks that
// its slots still exist (checkPreconditions: after shrinking), applies its intent to the World
// (apply: pure), makes the call through the Session (run), and prints itself as the NDK call
// (show). Whether the provider's answer is right is never decided here: the oracle judges it.
#pragma once

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

// Generators shared by the commands.
rc::Gen<uint32_t> flags_from(std::vector<uint32_t> documented, std::vector<uint32_t> undocumented);
rc::Gen<std::vector<SgePlan>> sge_list(const World& w);

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
    // Whether the shape is within the adapter's limits (else the create fails and needs no CQ
    // room), and whether the CQs have room for its depths (CQ-STATUS-04, the consumer's duty).
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
        w.add(s);
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

struct CreateMr : Command {
    int pd;
    bool fast_register;
    explicit CreateMr(const World& w)
        : pd(w.pick(Kind::pd)), fast_register(*rc::gen::arbitrary<bool>()) {}
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
    void apply(World& w) const override { w.slots[mr].length = uint32_t(length); }
    void run(const World& w, Sut& sut) const override;
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
    void run(const World& w, Sut& sut) const override;
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
    explicit FastRegister(const World& w);
    void checkPreconditions(const World& w) const override {
        RC_PRE(w.is(qp, Kind::qp) && w.is(mr, Kind::mr) && w.is(lam, Kind::lam));
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

struct Invalidate : Command {
    int qp, target;
    Kind target_kind;
    uint32_t flags;
    explicit Invalidate(const World& w);
    void checkPreconditions(const World& w) const override {
        RC_PRE(w.is(qp, Kind::qp) && w.is(target, target_kind));
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
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkBind(" << slot_name(Kind::qp, qp) << ", " << slot_name(Kind::mr, mr) << ", "
           << slot_name(Kind::mw, mw) << ", VirtualAddress=" << slot_name(Kind::mr, mr) << "+0x"
           << std::hex << offset << ", Length=0x" << length << ", Flags=0x" << flags << std::dec
           << ")";
    }
};

// Read and Write: local SGEs, and a remote range in an MR or MW (by its token and address).
// What the two share; each stays its own command (its flags, its call, its show()).
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

struct Send : Command {
    int qp;
    std::vector<SgePlan> sgl;
    uint32_t flags;
    explicit Send(const World& w);
    void checkPreconditions(const World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

struct Receive : Command {
    int qp;
    std::vector<SgePlan> sgl;
    explicit Receive(const World& w);
    void checkPreconditions(const World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

struct Flush : Command {
    int qp;
    explicit Flush(const World& w) : qp(w.pick(Kind::qp)) {}
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(qp, Kind::qp)); }
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
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// ---- CQ ----

struct GetCqResults : Command {
    int cq;
    uint32_t max_results;
    explicit GetCqResults(const World& w)
        : cq(w.pick(Kind::cq)), max_results(*rc::gen::inRange<uint32_t>(1, 17)) {}
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(cq, Kind::cq)); }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkGetCqResults(" << slot_name(Kind::cq, cq) << ", nResults=" << max_results << ")";
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

// Connects two QPs through a new listener and two new connectors: NdkCreateListener, NdkListen,
// NdkCreateConnector, NdkConnect, (connect event), NdkAccept, NdkCompleteConnect. Either QP may
// already be connected, closed-over or otherwise unfit: the oracle judges.
struct Connect : Command {
    int active_qp, passive_qp;
    explicit Connect(const World& w);
    void checkPreconditions(const World& w) const override {
        RC_PRE(w.is(active_qp, Kind::qp) && w.is(passive_qp, Kind::qp) && active_qp != passive_qp &&
               !w.slots[active_qp].connected && !w.slots[passive_qp].connected);
    }
    void apply(World& w) const override {
        w.slots[active_qp].connected = w.slots[passive_qp].connected = true;
        w.add({Kind::listener});
        w.add({Kind::connector});
        w.add({Kind::connector});
    }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "connect " << slot_name(Kind::qp, active_qp) << " to "
           << slot_name(Kind::qp, passive_qp)
           << " (NdkCreateListener, NdkListen, NdkCreateConnector, NdkConnect, NdkAccept, "
              "NdkCompleteConnect)";
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

// NdkCloseObject of any open object, in any order: an antecedent closed before its successors
// pends until they are closed (CLOSE-02); the Sut awaits such completions at teardown.
struct CloseObject : Command {
    int slot;
    Kind kind;
    explicit CloseObject(const World& w);
    void checkPreconditions(const World& w) const override { RC_PRE(w.is(slot, kind)); }
    void apply(World& w) const override { w.slots[slot].open = false; }
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override {
        os << "NdkCloseObject(" << slot_name(kind, slot) << ")";
    }
};

}  // namespace ndkct::properties
