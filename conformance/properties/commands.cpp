#include "commands.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace ndkct::properties {

using conformance::Done;
namespace gen = rc::gen;

std::string answer(NTSTATUS status) {
    return spec::status_name(status);
}

std::string answer(const Done& done) {
    std::string s = spec::status_name(done.status);
    if (done.pended()) s += " then " + spec::status_name(done.final_status);
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

rc::Gen<uint32_t> flags_from(std::vector<uint32_t> documented, std::vector<uint32_t> undocumented) {
    return gen::exec([documented, undocumented] {
        uint32_t flags = *gen::elementOf(documented);
        if (*gen::inRange(0, 10) == 0) flags |= *gen::elementOf(undocumented);
        return flags;
    });
}

rc::Gen<std::vector<SgePlan>> sge_list(const World& w) {
    auto mrs = w.open_of(Kind::mr);
    std::vector<uint32_t> lengths;  // by position in mrs (captured by value: shrinking re-runs)
    for (int mr : mrs)
        lengths.push_back(w.slots[mr].length);
    return gen::exec([mrs, lengths] {
        size_t count = *gen::weightedOneOf<size_t>({{6, gen::just<size_t>(1)},
                                                    {2, gen::just<size_t>(2)},
                                                    {1, gen::just<size_t>(3)},
                                                    {1, gen::just<size_t>(0)}});
        std::vector<SgePlan> sgl;
        for (size_t i = 0; i < count; ++i) {
            SgePlan s;
            const size_t which = mrs.empty() ? 0 : *gen::inRange<size_t>(0, mrs.size());
            s.mr = (mrs.empty() || *gen::inRange(0, 12) == 0) ? -1 : mrs[which];
            // Mostly inside what the MR's RegisterMr asked for (the data path then runs to the
            // end: bytes land, entries report them), else anywhere.
            const uint32_t room = s.mr >= 0 ? lengths[which] : 0;
            if (room > 0 && *gen::inRange(0, 4) != 0) {
                s.offset = *gen::weightedOneOf<uint32_t>(
                    {{3, gen::just<uint32_t>(0)}, {1, gen::inRange<uint32_t>(0, room)}});
                s.length = *gen::inRange<uint32_t>(1, std::min<uint32_t>(room - s.offset, 256) + 1);
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
    depth = *gen::weightedOneOf<uint32_t>({{8, gen::inRange<uint32_t>(1, 65)},
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
    shape.inline_size = *gen::weightedOneOf<uint32_t>(
        {{3, gen::just<uint32_t>(0)}, {1, gen::inRange<uint32_t>(0, info.MaxInlineDataSize + 1)}});
    // Now and then one value one past the adapter's limit (CQP-LIM-01), or zero.
    switch (*gen::inRange(0, 16)) {
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
    // The CQs: ones with room for the depths when the QP can be created (CQ-STATUS-04).
    const bool valid = within_limits(w);
    const bool shared = *gen::weightedOneOf<bool>({{3, gen::just(true)}, {1, gen::just(false)}});
    auto room = [](const Slot& s) { return s.depth >= s.committed ? s.depth - s.committed : 0u; };
    if (shared) {
        receive_cq = w.pick(Kind::cq, [&](const Slot& s) {
            return !valid || room(s) >= shape.receive_depth + shape.initiator_depth;
        });
        initiator_cq = receive_cq;
    } else {
        receive_cq = w.pick(
            Kind::cq, [&](const Slot& s) { return !valid || room(s) >= shape.receive_depth; });
        initiator_cq = w.pick(
            Kind::cq, [&](const Slot& s) { return !valid || room(s) >= shape.initiator_depth; });
    }
}

bool CreateQp::within_limits(const World& w) const {
    const NDK_ADAPTER_INFO& info = *w.info;
    return shape.receive_depth >= 1 && shape.receive_depth <= info.MaxReceiveQueueDepth &&
           shape.initiator_depth >= 1 && shape.initiator_depth <= info.MaxInitiatorQueueDepth &&
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

RegisterMr::RegisterMr(const World& w) : mr(w.pick(Kind::mr)) {
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
    auto* m = sut.object<NDK_MR>(mr);
    if (!m) return skipped(sut, *this, "the MR was never created");
    auto& chain = sut.chain(region);
    Done d = sut.session.register_mr(m, chain.head(), length, flags);
    if (d.ok()) {
        sut.mrs[mr].registered = true;
        sut.mrs[mr].base =
            reinterpret_cast<uint64_t>(sut.buffers[region.buffer].data()) + region.offset;
        learn_tokens(sut, mr);
    }
    finish(sut, *this, answer(d));
}

void DeregisterMr::run(const World&, Sut& sut) const {
    auto* m = sut.object<NDK_MR>(mr);
    if (!m) return skipped(sut, *this, "the MR was never created");
    Done d = sut.session.deregister_mr(m);
    if (d.ok()) sut.mrs[mr].registered = false;
    finish(sut, *this, answer(d));
}

InitializeFastRegisterMr::InitializeFastRegisterMr(const World& w) : mr(w.pick(Kind::mr)) {
    uint32_t frmr = std::max<uint32_t>(w.info->FRMRPageCount, 1);
    adapter_page_count = *gen::weightedOneOf<uint32_t>(
        {{6, gen::inRange<uint32_t>(1, 17)},  // IFR-APC-04: 16 are always accepted
         {2, gen::inRange<uint32_t>(1, frmr + 1)},
         {1, gen::just<uint32_t>(0)},
         {1, gen::inRange<uint32_t>(frmr + 1, frmr * 64 + 2)}});
    remote_access = *gen::arbitrary<bool>();
}

void InitializeFastRegisterMr::run(const World&, Sut& sut) const {
    auto* m = sut.object<NDK_MR>(mr);
    if (!m) return skipped(sut, *this, "the MR was never created");
    Done d = sut.session.initialize_fast_register_mr(m, adapter_page_count, remote_access);
    if (d.ok()) {
        sut.mrs[mr].registered = false;
        learn_tokens(sut, mr);
    }
    finish(sut, *this, answer(d));
}

// ================= QP requests =================

FastRegister::FastRegister(const World& w)
    : qp(w.pick(Kind::qp)), mr(w.pick(Kind::mr)), lam(w.pick(Kind::lam)) {
    uint32_t pages = std::max<uint32_t>(w.slots[lam].pages, 1);
    page_count = *gen::weightedOneOf<uint32_t>({{6, gen::just(pages)},
                                                {2, gen::inRange<uint32_t>(1, pages + 1)},
                                                {1, gen::inRange<uint32_t>(pages + 1, pages + 5)},
                                                {1, gen::just<uint32_t>(0)}});
    fbo_mode = *gen::weightedOneOf<Fbo>(
        {{5, gen::just(Fbo::from_lam)}, {2, gen::just(Fbo::zero)}, {1, gen::just(Fbo::other)}});
    fbo_other = *gen::inRange<uint32_t>(0, PAGE_SIZE);
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
                         NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_SILENT_SUCCESS},
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
       << ", BaseVirtualAddress=0x" << std::hex << fast_label(mr) + base_va_offset << "+FBO";
    if (misalignment) os << "+0x" << misalignment;
    os << ", Flags=0x" << flags << std::dec << ")";
}

void FastRegister::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    auto* m = sut.object<NDK_MR>(mr);
    if (!q || !m || !sut.object<void>(lam))
        return skipped(sut, *this, "its QP, MR or LAM was never created");
    std::vector<NDK_LOGICAL_ADDRESS> pages = sut.lams[lam]->pages();
    pages.resize(page_count, pages.empty() ? NDK_LOGICAL_ADDRESS{} : pages.back());
    uint32_t fbo = fbo_mode == Fbo::from_lam ? sut.lams[lam]->fbo
                   : fbo_mode == Fbo::zero   ? 0
                                             : fbo_other;
    int64_t len = int64_t(page_count) * PAGE_SIZE - fbo + length_delta;
    uint64_t length = uint64_t(std::max<int64_t>(len, 0));
    uint64_t base = fast_label(mr) + base_va_offset + fbo + misalignment;
    NTSTATUS s =
        sut.session.fast_register(q, sut.next_context(), m, pages, fbo, length, base, flags);
    if (s == STATUS_SUCCESS) {  // FR-TOK-01: in effect once posted
        sut.mrs[mr].registered = true;
        sut.mrs[mr].base = base;
    }
    finish(sut, *this,
           answer(s) + " (FBO=" + hex(fbo) + ", Length=" + hex(length) +
               ", BaseVirtualAddress=" + hex(base) + ")");
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

RemoteRequest::RemoteRequest(const World& w)
    : qp(w.pick(Kind::qp)), sgl(*sge_list(w)), remote(pick_remote(w)) {
    remote_kind = w.slots[remote].kind;
    remote_offset = remote_offset_gen();
}
void RemoteRequest::checkPreconditions(const World& w) const {
    RC_PRE(w.is(qp, Kind::qp) && sgl_valid(w, sgl) && w.is(remote, remote_kind));
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

Send::Send(const World& w) : qp(w.pick(Kind::qp)), sgl(*sge_list(w)) {
    flags = *flags_from({0, 0, NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT,
                         NDK_OP_FLAG_READ_FENCE, NDK_OP_FLAG_INLINE},
                        {NDK_OP_FLAG_ALLOW_REMOTE_READ, 0x400, 0x8000'0000});
}
void Send::checkPreconditions(const World& w) const {
    RC_PRE(w.is(qp, Kind::qp) && sgl_valid(w, sgl));
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

Receive::Receive(const World& w) : qp(w.pick(Kind::qp)), sgl(*sge_list(w)) {}
void Receive::checkPreconditions(const World& w) const {
    RC_PRE(w.is(qp, Kind::qp) && sgl_valid(w, sgl));
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

void Flush::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    sut.session.flush(q);
    finish(sut, *this, "");
}

// ================= Deferred chains =================

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
    for (const auto& r : requests)
        r->checkPreconditions(w);
}

void DeferredChain::run(const World& w, Sut& sut) const {
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

void GetCqResults::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CQ>(cq);
    if (!c) return skipped(sut, *this, "the CQ was never created");
    auto results = sut.session.poll(c, max_results);
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

Connect::Connect(const World& w) {
    auto free = w.open_of(Kind::qp, [](const Slot& s) { return !s.connected; });
    RC_PRE(free.size() >= 2);
    active_qp = *gen::elementOf(free);
    passive_qp = *gen::elementOf(free);
    RC_PRE(active_qp != passive_qp);
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
    auto listener = s.create_listener();
    sut.place(listener_slot, listener.object);
    steps = "NdkCreateListener " + answer(listener, Kind::listener, listener_slot);
    if (!listener.object) return done("");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(sut.next_port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    auto* sa = reinterpret_cast<const sockaddr*>(&address);
    Done listening = s.listen(listener.object, sa, sizeof address);
    steps += ", NdkListen " + answer(listening);
    if (!listening.ok()) return done("");
    auto active = s.create_connector();
    sut.place(listener_slot + 1, active.object);
    steps += ", NdkCreateConnector " + answer(active, Kind::connector, listener_slot + 1);
    if (!active.object) return done("");
    NTSTATUS c = s.connect_async(active.object, a, sa, sizeof address);
    steps += ", NdkConnect " + answer(c);
    if (c != STATUS_PENDING && c != STATUS_SUCCESS) return done("");
    NDK_CONNECTOR* passive = s.wait_connect_event(listener.object, sut.options.drain_timeout);
    sut.place(listener_slot + 2, passive);
    if (!passive) {
        Done connected = s.wait_connect(active.object);
        return done(", no connect event; NdkConnect completed with " +
                    spec::status_name(connected.final_status));
    }
    steps += ", connect event: " + slot_name(Kind::connector, listener_slot + 2);
    NTSTATUS accept = s.accept_async(passive, b);
    steps += ", NdkAccept " + answer(accept);
    Done connected = s.wait_connect(active.object);
    steps += ", NdkConnect completed with " + spec::status_name(connected.final_status);
    if (connected.ok())
        steps += ", NdkCompleteConnect " + answer(s.complete_connect(active.object));
    if (accept == STATUS_PENDING || accept == STATUS_SUCCESS) {
        Done accepted = s.wait_accept(passive);
        steps += ", NdkAccept completed with " + spec::status_name(accepted.final_status);
    }
    done("");
}

void Disconnect::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CONNECTOR>(connector);
    if (!c) return skipped(sut, *this, "the connector was never created");
    finish(sut, *this, answer(sut.session.disconnect(c)));
}

// ================= Close =================

CloseObject::CloseObject(const World& w) {
    std::vector<int> open;
    for (size_t i = 0; i < w.slots.size(); ++i)
        if (w.slots[i].open && w.slots[i].kind != Kind::lam) open.push_back(int(i));
    RC_PRE(!open.empty());
    slot = *gen::elementOf(open);
    kind = w.slots[slot].kind;
}

void CloseObject::run(const World&, Sut& sut) const {
    void* o = sut.object<void>(slot);
    if (!o) return skipped(sut, *this, "the object was never created");
    NTSTATUS s = sut.session.close_async(o);
    if (s == STATUS_PENDING) sut.closing.push_back(o);
    sut.objects[slot] = nullptr;  // never touched again (the World closed it too)
    if (kind == Kind::mr || kind == Kind::mw) sut.mrs[slot].registered = false;
    finish(sut, *this, answer(s));
}

}  // namespace ndkct::properties
