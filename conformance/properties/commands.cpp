#include "commands.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ndkct::properties {

using conformance::Done;
namespace gen = rc::gen;

std::string answer(NTSTATUS status) {
    return spec::status_name(status);
}

std::string answer(const Done& done) {
    std::string s = spec::status_name(done.status);
    // Still pending: the callback did not come, or the call was made inside a provider callback
    // (where nothing waits; Session::finish_deferred() finishes it).
    if (done.pended() && done.final_status != STATUS_PENDING)
        s += " then " + spec::status_name(done.final_status);
    return s;
}

void skipped(Sut& sut, const Command& command, const std::string& why) {
    std::ostringstream shown;
    command.show(shown);
    sut.log("-. " + shown.str() + ": not called, " + why);
}

namespace {

std::string hex(uint64_t value) {
    std::ostringstream os;
    os << "0x" << std::hex << value;
    return os.str();
}

// The label fast-registered regions live at: page-aligned, one 1 MiB window per MR slot, far
// from any pointer (FR-ALIGN-01: the address is an index).
constexpr uint64_t kFastBase = 0x0000'6B00'0000'0000ull;
uint64_t fast_label(int mr) {
    return kFastBase + uint64_t(mr) * 0x10'0000;
}

// Refreshes what the Sut knows of an MR's tokens (TOK-04: once its registration completed).
void learn_tokens(Sut& sut, int mr) {
    auto* m = sut.object<NDK_MR>(mr);
    sut.mrs[mr].local_token = sut.session.local_token(m);
    sut.mrs[mr].remote_token = sut.session.remote_token(m);
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

bool sgl_on(const World& w, const std::vector<SgePlan>& sgl, int node) {
    for (const auto& s : sgl)
        if (!w.usable_on(s.mr, node)) return false;
    return true;
}

bool one_in(size_t n) {
    return *gen::weightedElement<bool>({{n - 1, false}, {1, true}});
}

rc::Gen<uint32_t> flags_from(std::vector<uint32_t> documented, std::vector<uint32_t> undocumented) {
    return gen::exec([documented, undocumented] {
        uint32_t flags = *gen::elementOf(documented);
        if (one_in(10)) flags |= *gen::elementOf(undocumented);
        return flags;
    });
}

rc::Gen<std::vector<SgePlan>> sge_list(const World& w, bool receive) {
    auto mrs = w.open_of(Kind::mr);
    std::vector<uint32_t> lengths;  // by position in mrs (captured by value: shrinking re-runs)
    // Positions of MRs a RegisterMr was meant to register (for a receive: with local write).
    std::vector<size_t> registered;
    for (size_t i = 0; i < mrs.size(); ++i) {
        const Slot& m = w.slots[mrs[i]];
        lengths.push_back(m.length);
        if (m.length > 0 && !m.fast && (!receive || (m.flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE)))
            registered.push_back(i);
    }
    return gen::exec([mrs, lengths, registered, receive] {
        size_t count = *gen::weightedOneOf<size_t>({{6, gen::just<size_t>(1)},
                                                    {2, gen::just<size_t>(2)},
                                                    {1, gen::just<size_t>(3)},
                                                    {1, gen::just<size_t>(0)}});
        std::vector<SgePlan> sgl;
        for (size_t i = 0; i < count; ++i) {
            SgePlan s;
            // Mostly an MR a RegisterMr was meant for, else any (its token may be no good).
            const size_t which = mrs.empty() ? 0
                                 : !registered.empty() && !one_in(5)
                                     ? *gen::elementOf(registered)
                                     : *gen::inRange<size_t>(0, mrs.size());
            s.mr = (mrs.empty() || one_in(12)) ? -1 : mrs[which];
            // Mostly inside what the MR's RegisterMr asked for (the data path then runs to the
            // end: bytes land, entries report them), else anywhere. A receive's SGE often takes
            // the rest of the region: sends of any length fit (RCV-03).
            const uint32_t room = s.mr >= 0 ? lengths[which] : 0;
            if (room > 0 && !one_in(4)) {
                s.offset = *gen::weightedOneOf<uint32_t>(
                    {{3, gen::just<uint32_t>(0)}, {1, gen::inRange<uint32_t>(0, room)}});
                const uint32_t rest = room - s.offset;
                s.length = receive && *gen::arbitrary<bool>()
                               ? std::min<uint32_t>(rest, 2 * PAGE_SIZE)
                               : *gen::inRange<uint32_t>(1, std::min<uint32_t>(rest, 256) + 1);
                sgl.push_back(s);
                continue;
            }
            s.offset = *gen::weightedOneOf<uint32_t>(
                {{3, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(0, 2 * PAGE_SIZE)}});
            s.length = *gen::weightedOneOf<uint32_t>({{4, gen::inRange<uint32_t>(1, 257)},
                                                      {2, gen::inRange<uint32_t>(1, 2 * PAGE_SIZE)},
                                                      {1, gen::just<uint32_t>(0)}});
            sgl.push_back(s);
        }
        return sgl;
    });
}

// ================= Adapter =================

void QueryAdapterInfo::run(const World&, Sut& sut) const {
    NDK_ADAPTER_INFO info{};
    ULONG size = buffer_size;
    NTSTATUS s = sut.session.query_adapter_info(&info, &size);
    finish(sut, *this, answer(s) + ", *pBufferSize=" + std::to_string(size));
}

void CreatePd::run(const World& w, Sut& sut) const {
    int slot = int(w.slots.size());
    auto made = sut.session.create_pd();
    sut.place(slot, made.object);
    finish(sut, *this, answer(made, Kind::pd, slot));
}

CreateCq::CreateCq(const World& w) {
    uint32_t max = w.info->MaxCqDepth;
    uint32_t roomy = std::max<uint32_t>(std::min<uint32_t>(max, 512), 65);
    depth = *gen::weightedOneOf<uint32_t>({{8, gen::inRange<uint32_t>(1, 65)},
                                           // room for several QPs (CQ-STATUS-04)
                                           {3, gen::inRange<uint32_t>(65, roomy + 1)},
                                           {1, gen::just<uint32_t>(0)},
                                           {1, gen::just(max)},
                                           {1, gen::just(max + 1)}});
}

void CreateCq::run(const World& w, Sut& sut) const {
    int slot = int(w.slots.size());
    auto made = sut.session.create_cq(depth);
    sut.place(slot, made.object);
    finish(sut, *this, answer(made, Kind::cq, slot));
}

BuildLam::BuildLam(const World&) {
    region = *Region::any();
    length = *gen::weightedOneOf<uint64_t>(
        {{8, gen::just<uint64_t>(region.length)},
         {1, gen::just<uint64_t>(0)},
         {1, gen::just<uint64_t>(uint64_t(region.length) + PAGE_SIZE)}});
    uint32_t exact = uint32_t(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(region.pages()));
    buffer_size = *gen::weightedOneOf<uint32_t>(
        {{6, gen::just(exact)},
         {1, gen::just<uint32_t>(0)},
         {1, gen::inRange<uint32_t>(exact > 8 ? exact - 8 : 0, exact)},  // LAM-SIZE-01/04
         {1, gen::inRange<uint32_t>(exact, exact + 512)},
         {1, gen::inRange<uint32_t>(0, 4096)}});
}

void BuildLam::run(const World& w, Sut& sut) const {
    int slot = int(w.slots.size());
    auto& chain = sut.chain(region);
    auto lam = std::make_unique<conformance::LamResult>(
        sut.session.build_lam(chain.head(), length, buffer_size));
    std::string a = answer(lam->done) + ", *pLAMSize=" + hex(lam->size_out);
    sut.place(slot, nullptr);
    if (lam->done.ok()) {
        a += ", *pFBO=" + hex(lam->fbo) + ": " + slot_name(Kind::lam, slot) + " (" +
             std::to_string(lam->pages().size()) + " pages)";
        sut.objects[slot] = lam->mapping();
        sut.lams[slot] = std::move(lam);
    }
    finish(sut, *this, a);
}

void ReleaseLam::run(const World&, Sut& sut) const {
    if (!sut.object<void>(lam)) return skipped(sut, *this, "the LAM was never built");
    sut.session.release_lam(*sut.lams[lam]);
    sut.lams[lam].reset();
    sut.objects[lam] = nullptr;
    finish(sut, *this, "");
}

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
    sut.mrs[mr].initialized_token = sut.mrs[mr].local_token;  // IFR-TOK-01 (commands_s13tok)
}

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

// ================= CQ =================

GetCqResults::GetCqResults(const World& w)
    : cq(w.pick(Kind::cq)), max_results(*gen::inRange<uint32_t>(1, 17)) {
    ex = NDKCT_VERSION_AT_LEAST(w.info->Version, 1, 2) && *gen::arbitrary<bool>();  // VER-11
}

void GetCqResults::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CQ>(cq);
    if (!c) return skipped(sut, *this, "the CQ was never created");
    auto results = sut.session.poll(c, max_results, ex);
    std::ostringstream a;
    a << results.size() << " results";
    for (const auto& r : results)
        a << " {" << spec::status_name(r.Status) << ", RequestContext=" << r.RequestContext
          << ", Type=" << r.Type << ", Bytes=" << r.BytesTransferred << "}";
    finish(sut, *this, a.str());
}

ArmCq::ArmCq(const World& w) : cq(w.pick(Kind::cq)) {
    type = *gen::weightedOneOf<uint32_t>({{3, gen::just<uint32_t>(NDK_CQ_NOTIFY_ANY)},
                                          {2, gen::just<uint32_t>(NDK_CQ_NOTIFY_ERRORS)},
                                          {2, gen::just<uint32_t>(NDK_CQ_NOTIFY_SOLICITED)}});
}

void ArmCq::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CQ>(cq);
    if (!c) return skipped(sut, *this, "the CQ was never created");
    sut.session.arm_cq(c, type);
    finish(sut, *this, "");
}

// ================= Connections =================

HandshakeSide HandshakeSide::any(const NDK_ADAPTER_INFO& info, uint32_t max_private_data) {
    auto limit = [](uint32_t max) {
        return *gen::weightedOneOf<uint32_t>({{6, gen::inRange<uint32_t>(0, max + 1)},
                                              {1, gen::just(max + 1)},
                                              {1, gen::inRange<uint32_t>(max + 1, 100'001)}});
    };
    HandshakeSide side;
    side.inbound_read_limit = limit(info.MaxInboundReadLimit);
    side.outbound_read_limit = limit(info.MaxOutboundReadLimit);
    const uint32_t max = max_private_data;
    side.private_data = *gen::weightedOneOf<uint32_t>(
        {{2, gen::just<uint32_t>(0)},
         {6, gen::inRange<uint32_t>(std::min<uint32_t>(1, max), max + 1)},
         {1, gen::just(max)},
         {1, gen::just(max + 1)}});  // CONN-28: more than the adapter takes
    return side;
}

std::vector<uint8_t> HandshakeSide::bytes(uint8_t salt) const {
    std::vector<uint8_t> data(private_data);
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = uint8_t(i * 13 + salt);
    return data;
}

std::ostream& operator<<(std::ostream& os, const HandshakeSide& side) {
    return os << "InboundReadLimit=" << side.inbound_read_limit
              << ", OutboundReadLimit=" << side.outbound_read_limit
              << ", PrivateData=" << side.private_data << " bytes";
}

namespace {

constexpr uint8_t kConnectSalt = 0xC0, kAcceptSalt = 0xA0;  // whose private data it is

// What Connect and StartConnect begin with: NdkCreateListener, NdkListen on a fresh loopback
// port, NdkCreateConnector and NdkConnect, and then the listener's connect event. The objects go
// to the slots from listener_slot on (listener, active connector, passive connector); `steps`
// gets the log. Returns the passive connector (nullptr when a step failed or no event came);
// `connecting` says whether the connect was started.
NDK_CONNECTOR* start_handshake(Sut& sut, int listener_slot, NDK_QP* qp, const HandshakeSide& side,
                               std::string& steps, NDK_CONNECTOR*& active_out, bool& connecting) {
    Session& s = sut.session;
    connecting = false;
    active_out = nullptr;
    auto listener = s.create_listener();
    sut.place(listener_slot, listener.object);
    steps = "NdkCreateListener " + answer(listener, Kind::listener, listener_slot);
    if (!listener.object) return nullptr;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(sut.next_port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    auto* sa = reinterpret_cast<const sockaddr*>(&address);
    Done listening = s.listen(listener.object, sa, sizeof address);
    steps += ", NdkListen " + answer(listening);
    if (!listening.ok()) return nullptr;
    auto active = s.create_connector();
    sut.place(listener_slot + 1, active.object);
    steps += ", NdkCreateConnector " + answer(active, Kind::connector, listener_slot + 1);
    if (!active.object) return nullptr;
    active_out = active.object;
    const auto data = side.bytes(kConnectSalt);
    NTSTATUS c = s.connect_async(active.object, qp, sa, sizeof address, side.inbound_read_limit,
                                 side.outbound_read_limit, data);
    steps += ", NdkConnect " + answer(c);
    if (c != STATUS_PENDING && c != STATUS_SUCCESS) return nullptr;
    connecting = true;
    NDK_CONNECTOR* passive = s.wait_connect_event(listener.object, sut.options.drain_timeout);
    sut.place(listener_slot + 2, passive);
    if (passive) steps += ", connect event: " + slot_name(Kind::connector, listener_slot + 2);
    return passive;
}

}  // namespace

Connect::Connect(const World& w) {
    auto free = w.open_of(Kind::qp, [](const Slot& s) { return !s.connected; });
    RC_PRE(free.size() >= 2);
    active_qp = *gen::elementOf(free);
    passive_qp = *gen::elementOf(free);
    RC_PRE(active_qp != passive_qp);
    active_side = HandshakeSide::any(*w.info, w.info->MaxCallerData);
    passive_side = HandshakeSide::any(*w.info, w.info->MaxCalleeData);
}

void Connect::run(const World& w, Sut& sut) const {
    int listener_slot = int(w.slots.size());
    sut.place(listener_slot + 2, nullptr);
    auto* a = sut.object<NDK_QP>(active_qp);
    auto* b = sut.object<NDK_QP>(passive_qp);
    if (!a || !b) return skipped(sut, *this, "a QP was never created");
    Session& s = sut.session;
    std::string steps;
    auto done = [&](const std::string& last) { finish(sut, *this, steps + last); };
    NDK_CONNECTOR* active = nullptr;
    bool connecting = false;
    NDK_CONNECTOR* passive =
        start_handshake(sut, listener_slot, a, active_side, steps, active, connecting);
    if (!connecting) return done("");
    if (!passive) {
        Done connected = s.wait_connect(active);
        return done(", no connect event; NdkConnect completed with " +
                    spec::status_name(connected.final_status));
    }
    const auto data = passive_side.bytes(kAcceptSalt);
    NTSTATUS accept = s.accept_async(passive, b, passive_side.inbound_read_limit,
                                     passive_side.outbound_read_limit, data);
    steps += ", NdkAccept " + answer(accept);
    if (accept != STATUS_PENDING && accept != STATUS_SUCCESS) {
        // Refused (e.g. too much private data): the connect still waits for an answer, which
        // nobody gives; the active connector's close cancels it, and is awaited then.
        sut.handshakes.push_back({listener_slot + 1, active, false});
        return done("");
    }
    Done connected = s.wait_connect(active);
    steps += ", NdkConnect completed with " + spec::status_name(connected.final_status);
    if (connected.ok()) steps += ", NdkCompleteConnect " + answer(s.complete_connect(active));
    Done accepted = s.wait_accept(passive);
    steps += ", NdkAccept completed with " + spec::status_name(accepted.final_status);
    done("");
}

StartConnect::StartConnect(const World& w)
    : qp(w.pick(Kind::qp, [](const Slot& s) { return !s.connected; })),
      side(HandshakeSide::any(*w.info, w.info->MaxCallerData)) {}

void StartConnect::apply(World& w) const {
    w.slots[qp].connected = true;
    const int listener = w.add({Kind::listener});
    Slot active{Kind::connector};
    active.handshake = Handshake::connecting;
    active.peer = int16_t(listener + 2);
    w.add(active);
    Slot passive{Kind::connector};
    passive.handshake = Handshake::incoming;
    passive.peer = int16_t(listener + 1);
    passive.peer_data = side.private_data;
    w.add(passive);
}

void StartConnect::run(const World& w, Sut& sut) const {
    int listener_slot = int(w.slots.size());
    sut.place(listener_slot + 2, nullptr);
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    std::string steps;
    NDK_CONNECTOR* active = nullptr;
    bool connecting = false;
    NDK_CONNECTOR* passive =
        start_handshake(sut, listener_slot, q, side, steps, active, connecting);
    // The connect stays pending: Accept awaits it, or the active connector's close does.
    if (connecting) sut.handshakes.push_back({listener_slot + 1, active, false});
    if (connecting && !passive) steps += ", no connect event";
    finish(sut, *this, steps);
}

Accept::Accept(const World& w)
    : connector(w.pick(Kind::connector,
                       [](const Slot& s) { return s.handshake == Handshake::incoming; })),
      qp(w.pick(Kind::qp, [](const Slot& s) { return !s.connected; })),
      side(HandshakeSide::any(*w.info, w.info->MaxCalleeData)) {}

void Accept::apply(World& w) const {
    w.slots[qp].connected = true;
    if (w.two_nodes) w.slots[qp].node = 1;  // the accepting QP is made on node B
    w.slots[connector].handshake = Handshake::accepted;
    const int peer = w.slots[connector].peer;
    if (w.is(peer, Kind::connector) && w.slots[peer].handshake == Handshake::connecting) {
        w.slots[peer].handshake = Handshake::connected;
        w.slots[peer].peer_data = side.private_data;
    }
}

void Accept::run(const World& w, Sut& sut) const {
    auto* c = sut.object<NDK_CONNECTOR>(connector);
    auto* q = sut.object<NDK_QP>(qp);
    if (!c || !q) return skipped(sut, *this, "its connector or QP was never created");
    const auto data = side.bytes(kAcceptSalt);
    NTSTATUS s =
        sut.session.accept_async(c, q, side.inbound_read_limit, side.outbound_read_limit, data);
    std::string a = answer(s);
    if (s == STATUS_PENDING || s == STATUS_SUCCESS) {
        // The accept stays pending until the peer's NdkCompleteConnect; the peer's connect
        // completes now.
        sut.handshakes.push_back({connector, c, true});
        if (std::string peer = sut.await_handshake(w.slots[connector].peer); !peer.empty())
            a += ", " + peer;
    }
    finish(sut, *this, a);
}

CompleteConnect::CompleteConnect(const World& w)
    : connector(w.pick(Kind::connector,
                       [](const Slot& s) { return s.handshake == Handshake::connected; })) {}

void CompleteConnect::apply(World& w) const {
    w.slots[connector].handshake = Handshake::none;
    const int peer = w.slots[connector].peer;
    if (w.is(peer, Kind::connector) && w.slots[peer].handshake == Handshake::accepted)
        w.slots[peer].handshake = Handshake::none;
}

void CompleteConnect::run(const World& w, Sut& sut) const {
    auto* c = sut.object<NDK_CONNECTOR>(connector);
    if (!c) return skipped(sut, *this, "the connector was never created");
    Done d = sut.session.complete_connect(c);
    std::string a = answer(d);
    if (d.ok())  // the peer's accept completes now
        if (std::string peer = sut.await_handshake(w.slots[connector].peer); !peer.empty())
            a += ", " + peer;
    finish(sut, *this, a);
}

GetConnectionData::GetConnectionData(const World& w)
    : connector(w.pick(Kind::connector, [](const Slot& s) {
          return s.handshake == Handshake::incoming || s.handshake == Handshake::connected;
      })) {
    with_buffer = *gen::weightedOneOf<bool>({{3, gen::just(true)}, {1, gen::just(false)}});
    with_limits = *gen::weightedOneOf<bool>({{3, gen::just(true)}, {1, gen::just(false)}});
    const uint32_t sent = w.slots[connector].peer_data;
    buffer_length = 0;  // the probe: NULL buffer, *pPrivateDataLength 0 (CONN-PD-02)
    if (with_buffer)
        buffer_length = *gen::weightedOneOf<uint32_t>(
            {{3, gen::inRange<uint32_t>(0, std::max<uint32_t>(sent, 1))},  // short: CONN-PD-04
             {2, gen::just(sent)},
             {1, gen::inRange<uint32_t>(sent, sent + 65)}});
}

void GetConnectionData::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CONNECTOR>(connector);
    if (!c) return skipped(sut, *this, "the connector was never created");
    auto got = sut.session.get_connection_data(c, buffer_length, with_buffer, with_limits);
    std::string a = answer(got.status) + ", *pPrivateDataLength=" + std::to_string(got.length);
    if (with_limits)
        a += ", InboundReadLimit=" + std::to_string(got.inbound_read_limit) +
             ", OutboundReadLimit=" + std::to_string(got.outbound_read_limit);
    finish(sut, *this, a);
}

void Disconnect::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CONNECTOR>(connector);
    if (!c) return skipped(sut, *this, "the connector was never created");
    finish(sut, *this, answer(sut.session.disconnect(c)));
}

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

NotifiedCq::NotifiedCq(const World& w) : Composite(w) {
    World after = w;  // each call generated in the World the ones before it leave
    auto c = std::make_shared<CreateCq>(w);
    c->apply(after);
    const int cq = made_at, qp = made_at + 1;
    auto q = std::make_shared<CreateQp>(after);
    q->place(after, cq, cq);
    q->apply(after);
    auto r = std::make_shared<Receive>(after);
    r->qp = qp;
    r->apply(after);
    auto f = std::make_shared<Flush>(after);
    f->qp = qp;
    f->apply(after);
    call = std::make_shared<CallFromNotification>(after, cq);
    create_cq = std::move(c);
    create_qp = std::move(q);
    receive = std::move(r);
    flush = std::move(f);
}

std::vector<std::shared_ptr<const Command>> NotifiedCq::steps(int base) const {
    auto q = std::make_shared<CreateQp>(*create_qp);
    q->receive_cq = moved(q->receive_cq, base);
    q->initiator_cq = moved(q->initiator_cq, base);
    auto r = std::make_shared<Receive>(*receive);
    r->qp = moved(r->qp, base);
    auto f = std::make_shared<Flush>(*flush);
    f->qp = moved(f->qp, base);
    auto n = std::make_shared<CallFromNotification>(*call);
    n->cq = moved(n->cq, base);
    for (auto& close : n->closes) {
        auto c = std::make_shared<CloseObject>(*close);
        c->slot = moved(c->slot, base);
        close = std::move(c);
    }
    return {create_cq, q, r, f, n};
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
