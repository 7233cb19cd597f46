// The property commands of a PD and an MR: their creates, registration, deregistration and tokens.
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

// ================= PD =================

CreateQp::CreateQp(const World& w) : pd(w.pick(Kind::pd)) {
    const NDK_ADAPTER_INFO& info = *w.info;
    shape.receive_depth = *gen::inRange<uint32_t>(1, 33);
    shape.initiator_depth = *gen::inRange<uint32_t>(1, 33);
    shape.receive_sge =
        *gen::inRange<uint32_t>(1, std::min<uint32_t>(info.MaxReceiveRequestSge, 4) + 1);
    shape.initiator_sge =
        *gen::inRange<uint32_t>(1, std::min<uint32_t>(info.MaxInitiatorRequestSge, 4) + 1);
    // CQP-LIM-07: now and then the maximum itself, which is within the limit.
    shape.inline_size =
        *gen::weightedOneOf<uint32_t>({{3, gen::just<uint32_t>(0)},
                                       {1, gen::inRange<uint32_t>(0, info.MaxInlineDataSize + 1)},
                                       {1, gen::just<uint32_t>(uint32_t{info.MaxInlineDataSize})}});
    // Now and then one value one past the adapter's limit (CQP-LIM-01), or zero.
    switch (
        *gen::weightedElement<int>({{10, -1}, {1, 0}, {1, 1}, {1, 2}, {1, 3}, {1, 4}, {1, 5}})) {
        case 0:
            shape.receive_depth = info.MaxReceiveQueueDepth + 1;
            break;
        case 1:
            shape.initiator_depth = info.MaxInitiatorQueueDepth + 1;
            break;
        case 2:
            shape.receive_sge = info.MaxReceiveRequestSge + 1;
            break;
        case 3:
            shape.initiator_sge = info.MaxInitiatorRequestSge + 1;
            break;
        case 4:
            shape.inline_size = info.MaxInlineDataSize + 1;
            break;
        case 5:
            shape.initiator_depth = 0;
            break;
        default:
            break;
    }
    // The CQs: ones with room when the QP can be created (CQ-STATUS-04).
    const bool valid = within_limits(w);
    const bool shared = *gen::weightedOneOf<bool>({{3, gen::just(true)}, {1, gen::just(false)}});
    auto room = [&](const Slot& s) { return !valid || (s.depth >= s.committed + 1); };
    const int receive = w.pick(Kind::cq, room);
    place(w, receive, shared ? receive : w.pick(Kind::cq, room));
}

void CreateQp::place(const World& w, int receive, int initiator) {
    receive_cq = receive;
    initiator_cq = initiator;
    if (!within_limits(w)) return;  // refused: takes no room
    // The depths cut to the CQs' room (the consumer sizes its QPs for the CQs they go to).
    auto room = [&](int cq) {
        const Slot& s = w.slots[cq];
        return s.depth >= s.committed ? s.depth - s.committed : 0u;
    };
    const uint32_t receive_room = room(receive_cq);
    RC_PRE(receive_room >= 1);
    shape.receive_depth = std::min(shape.receive_depth, receive_room);
    if (initiator_cq == receive_cq) {  // one CQ for both queues
        RC_PRE(receive_room >= 2);
        shape.receive_depth = std::min(shape.receive_depth, receive_room - 1);
        shape.initiator_depth = std::min(shape.initiator_depth, receive_room - shape.receive_depth);
    } else {
        RC_PRE(room(initiator_cq) >= 1);
        shape.initiator_depth = std::min(shape.initiator_depth, room(initiator_cq));
    }
}

bool CreateQp::within_limits(const World& w) const {
    const NDK_ADAPTER_INFO& info = *w.info;
    // A depth of 0 is within them (the docs set no lower limit): such a QP is created, and its
    // other queue needs CQ room as any.
    return shape.receive_depth <= info.MaxReceiveQueueDepth &&
           shape.initiator_depth <= info.MaxInitiatorQueueDepth &&
           shape.receive_sge <= info.MaxReceiveRequestSge &&
           shape.initiator_sge <= info.MaxInitiatorRequestSge &&
           shape.inline_size <= info.MaxInlineDataSize;
}

bool CreateQp::fits(const World& w) const {
    if (!within_limits(w)) return true;
    auto room = [&](int cq) {
        const Slot& s = w.slots[cq];
        return s.depth >= s.committed ? s.depth - s.committed : 0u;
    };
    if (receive_cq == initiator_cq)
        return room(receive_cq) >= shape.receive_depth + shape.initiator_depth;
    return room(receive_cq) >= shape.receive_depth && room(initiator_cq) >= shape.initiator_depth;
}

void CreateQp::show(std::ostream& os) const {
    os << "NdkCreateQp(" << slot_name(Kind::pd, pd) << ", " << slot_name(Kind::cq, receive_cq)
       << ", " << slot_name(Kind::cq, initiator_cq) << ", ReceiveQueueDepth=" << shape.receive_depth
       << ", InitiatorQueueDepth=" << shape.initiator_depth
       << ", MaxReceiveRequestSge=" << shape.receive_sge
       << ", MaxInitiatorRequestSge=" << shape.initiator_sge
       << ", InlineDataSize=" << shape.inline_size << ")";
}

void CreateQp::run(const World& w, Sut& sut) const {
    int slot = int(w.slots.size());
    auto* p = sut.object<NDK_PD>(pd);
    auto* rcq = sut.object<NDK_CQ>(receive_cq);
    auto* icq = sut.object<NDK_CQ>(initiator_cq);
    if (!p || !rcq || !icq) {
        sut.place(slot, nullptr);
        return skipped(sut, *this, "its PD or a CQ was never created");
    }
    auto made =
        sut.session.create_qp(p, rcq, icq, reinterpret_cast<void*>(0xC0000 + 16 * slot), shape);
    sut.place(slot, made.object);
    finish(sut, *this, answer(made, Kind::qp, slot));
}

CreateMr::CreateMr(const World& w) : pd(w.pick(Kind::pd)) {
    const size_t fast = w.open_of(Kind::mr, [](const Slot& s) { return s.fast; }).size();
    const size_t plain = w.open_of(Kind::mr).size() - fast;
    fast_register = *gen::weightedElement<bool>({{plain + 1, true}, {fast + 1, false}});
}

void CreateMr::run(const World& w, Sut& sut) const {
    int slot = int(w.slots.size());
    auto* p = sut.object<NDK_PD>(pd);
    if (!p) {
        sut.place(slot, nullptr);
        return skipped(sut, *this, "its PD was never created");
    }
    auto made = sut.session.create_mr(p, fast_register);
    sut.place(slot, made.object);
    finish(sut, *this, answer(made, Kind::mr, slot));
}

void CreateMw::run(const World& w, Sut& sut) const {
    int slot = int(w.slots.size());
    auto* p = sut.object<NDK_PD>(pd);
    if (!p) {
        sut.place(slot, nullptr);
        return skipped(sut, *this, "its PD was never created");
    }
    auto made = sut.session.create_mw(p);
    sut.place(slot, made.object);
    finish(sut, *this, answer(made, Kind::mw, slot));
}

// ================= MR =================

RegisterMr::RegisterMr(const World& w) {
    // Mostly an MR made for it and not registered yet; else any (one registered already, or one
    // made for fast registration: AMB-16).
    auto fresh = w.open_of(Kind::mr, [](const Slot& s) { return !s.fast && s.length == 0; });
    mr = !fresh.empty() && !one_in(4) ? *gen::elementOf(fresh) : w.pick(Kind::mr);
    region = *Region::any();
    length = *gen::weightedOneOf<uint64_t>({{8, gen::just<uint64_t>(region.length)},
                                            {1, gen::just<uint64_t>(0)},
                                            {1, gen::just<uint64_t>(uint64_t(region.length) + 1)}});
    flags = *flags_from({NDK_MR_FLAG_ALLOW_LOCAL_READ, NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
                         NDK_MR_FLAG_ALLOW_REMOTE_READ, NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                         NDK_MR_FLAG_ALLOW_REMOTE_READ | NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                         NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK,
                         // every right, twice as likely: transfers through it succeed
                         NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                             NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK,
                         NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                             NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK},
                        {0x10, 0x100, 0x8000'0000});  // bits no NDK_MR_FLAG_* names
}

void RegisterMr::run(const World&, Sut& sut) const {
    if (!sut.object<NDK_MR>(mr)) return skipped(sut, *this, "the MR was never created");
    finish(sut, *this, call(sut));
}

std::string RegisterMr::call(Sut& sut) const {
    auto& chain = sut.chain(region);
    Done d = sut.session.register_mr(sut.object<NDK_MR>(mr), chain.head(), length, flags);
    if (d.ok()) registered(sut);
    return answer(d);
}

void RegisterMr::registered(Sut& sut) const {
    sut.mrs[mr].registered = true;
    sut.mrs[mr].base =
        reinterpret_cast<uint64_t>(sut.buffers[region.buffer].data()) + region.offset;
    sut.mrs[mr].length = length;
    learn_tokens(sut, mr);
}

void DeregisterMr::run(const World&, Sut& sut) const {
    auto* m = sut.object<NDK_MR>(mr);
    if (!m) return skipped(sut, *this, "the MR was never created");
    Done d = sut.session.deregister_mr(m);
    if (d.ok()) sut.mrs[mr].registered = false;
    finish(sut, *this, answer(d));
}

InitializeFastRegisterMr::InitializeFastRegisterMr(const World& w) {
    // Mostly an MR made for fast registration and not initialized yet; else any (AMB-16).
    auto fresh = w.open_of(Kind::mr, [](const Slot& s) { return s.fast && s.pages == 0; });
    mr = !fresh.empty() && !one_in(4) ? *gen::elementOf(fresh) : w.pick(Kind::mr);
    uint32_t frmr = std::max<uint32_t>(w.info->FRMRPageCount, 1);
    uint32_t guaranteed = std::max<uint32_t>(frmr, 16);
    // The limits themselves and one past (IFR-APC-01/02/04): FastRegister then often uses
    // exactly the pages initialized.
    adapter_page_count = *gen::weightedOneOf<uint32_t>(
        {{6, gen::inRange<uint32_t>(1, 17)},  // IFR-APC-04: 16 are always accepted
         {2, gen::inRange<uint32_t>(1, frmr + 1)},
         {1, gen::just<uint32_t>(0)},
         {1, gen::just(guaranteed)},
         {1, gen::just(guaranteed + 1)},
         {1, gen::just(guaranteed * 2)},
         {1, gen::inRange<uint32_t>(frmr + 1, frmr * 64 + 2)}});
    remote_access = *gen::arbitrary<bool>();
}

void InitializeFastRegisterMr::run(const World&, Sut& sut) const {
    auto* m = sut.object<NDK_MR>(mr);
    if (!m) return skipped(sut, *this, "the MR was never created");
    finish(sut, *this, call(sut));
}

std::string InitializeFastRegisterMr::call(Sut& sut) const {
    Done d = sut.session.initialize_fast_register_mr(sut.object<NDK_MR>(mr), adapter_page_count,
                                                     remote_access);
    if (d.ok()) initialized(sut);
    return answer(d);
}

void InitializeFastRegisterMr::initialized(Sut& sut) const {
    sut.mrs[mr].registered = false;
    learn_tokens(sut, mr);
    sut.mrs[mr].initialized_token =
        sut.mrs[mr].local_token;  // IFR-TOK-01 (commands_initialized_tokens)
}

}  // namespace ndkct::properties
