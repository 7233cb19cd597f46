// commands_access_flags.cpp: the AccessFlags property's own commands (commands_access_flags.hpp).
#include "commands_access_flags.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ndkct/platform/mdl.hpp"

namespace ndkct::properties {

ZeroBaseFastRegister::ZeroBaseFastRegister(const World& w) : FastRegister(w) {
    fbo_mode = Fbo::zero;  // FR-ALIGN-02: 0 is valid only with FBO 0
    base_va_offset = 0;
    misalignment = 0;
}

void ZeroBaseFastRegister::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    auto* m = sut.object<NDK_MR>(mr);
    if (!q || !m || !sut.object<void>(lam))
        return skipped(sut, *this, "its QP, MR or LAM was never created");
    std::vector<NDK_LOGICAL_ADDRESS> pages = sut.lams[lam]->pages();
    pages.resize(page_count, pages.empty() ? NDK_LOGICAL_ADDRESS{} : pages.back());
    int64_t len = int64_t(page_count) * PAGE_SIZE + length_delta;
    uint64_t length = uint64_t(std::max<int64_t>(len, 0));
    NTSTATUS s = sut.session.fast_register(q, sut.next_context(), m, pages, 0, length, 0, flags);
    if (s == STATUS_SUCCESS) {  // FR-TOK-01: in effect once posted, its tokens readable
        sut.mrs[mr].registered = true;
        sut.mrs[mr].base = 0;
        sut.mrs[mr].length = length;
        sut.mrs[mr].local_token = sut.session.local_token(m);
        sut.mrs[mr].remote_token = sut.session.remote_token(m);
    }
    finish(
        sut, *this, answer(s) + " (Length=0x" + [&] {
            std::ostringstream os;
            os << std::hex << length;
            return os.str();
        }() + ")");
}

void ZeroBaseFastRegister::show(std::ostream& os) const {
    os << "NdkFastRegister(" << slot_name(Kind::qp, qp) << ", " << slot_name(Kind::mr, mr)
       << ", AdapterPageCount=" << page_count << " pages of " << slot_name(Kind::lam, lam)
       << ", FBO=0, Length=pages*4096" << (length_delta >= 0 ? "+" : "") << length_delta
       << ", BaseVirtualAddress=0, Flags=0x" << std::hex << flags << std::dec << ")";
}

namespace {
namespace gen = rc::gen;
constexpr uint64_t kProbeBase = 0x0000'6C00'0000'0000ull;  // a fast region's label
constexpr int kPd = 0, kCq = 1, kQpA = 2, kQpB = 3;        // the setup's (initial_world)
}  // namespace

LocalAccessProbe::LocalAccessProbe(const World&) {
    fast = *gen::inRange(0, 2) == 1;
    flags = fast ? *gen::elementOf(std::vector<uint32_t>{
                       0, 0, NDK_OP_FLAG_ALLOW_LOCAL_WRITE, NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                       NDK_OP_FLAG_ALLOW_REMOTE_READ,
                       NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK,
                       NDK_OP_FLAG_RDMA_READ_SINK})
                 : *gen::elementOf(std::vector<uint32_t>{
                       0, 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NDK_MR_FLAG_ALLOW_REMOTE_READ,
                       NDK_MR_FLAG_ALLOW_REMOTE_WRITE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
                       NDK_MR_FLAG_RDMA_READ_SINK, 0x3, 0x7, 0x9, 0xD, 0xF});
    as_target = *gen::inRange(0, 2) == 1;
    zero_base = fast && *gen::inRange(0, 3) == 0;
    offset = *gen::inRange<uint32_t>(0, PAGE_SIZE);
    length = *gen::inRange<uint32_t>(1, PAGE_SIZE + 1);
}

void LocalAccessProbe::checkPreconditions(const World& w) const {
    RC_PRE(!w.two_nodes);  // the pair's QPs on one node
    RC_PRE(w.is(kPd, Kind::pd) && w.is(kCq, Kind::cq) && w.is(kQpA, Kind::qp) &&
           w.is(kQpB, Kind::qp));
}

void LocalAccessProbe::show(std::ostream& os) const {
    os << "[a region " << (fast ? "fast-registered" : "registered") << " with Flags=0x" << std::hex
       << flags << std::dec << (zero_base ? " at BaseVirtualAddress 0" : "") << ", the "
       << (as_target ? "target of an NdkReceive on qp2" : "source of an NdkSend from qp2")
       << ", bytes [" << offset << ", +" << length << "); the other side a scratch region]";
}

void LocalAccessProbe::run(const World&, Sut& sut) const {
    auto* pd = sut.object<NDK_PD>(kPd);
    auto* cq = sut.object<NDK_CQ>(kCq);
    auto* a = sut.object<NDK_QP>(kQpA);
    auto* b = sut.object<NDK_QP>(kQpB);
    if (!pd || !cq || !a || !b) return skipped(sut, *this, "the setup pair is gone");
    Session& s = sut.session;
    auto region = s.buffer(2 * PAGE_SIZE);
    auto scratch = s.buffer(2 * PAGE_SIZE);
    std::string said;
    // The other side: local and remote rights, so only the region's flags are at stake.
    auto other = s.register_buffer(pd, scratch,
                                   NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ);
    NDK_MR* mr = nullptr;
    uint64_t address = 0;
    UINT32 token = 0;
    std::unique_ptr<conformance::LamResult> lam;
    auto chain = platform::describe(region, 0, region.size());
    bool ready = other.status == STATUS_SUCCESS;
    if (ready && !fast) {
        mr = s.create_mr(pd, false).object;
        ready = mr && s.register_mr(mr, chain.head(), region.size(), flags).ok();
        if (ready) {
            token = s.local_token(mr);
            address = reinterpret_cast<uint64_t>(region.data());
        }
    } else if (ready) {
        mr = s.create_mr(pd, true).object;
        ready = mr && s.initialize_fast_register_mr(mr, 2, true).ok();
        if (ready) {
            lam = std::make_unique<conformance::LamResult>(
                s.build_lam(chain.head(), region.size(), 64));
            ready = lam->done.ok() && lam->pages().size() == 2;
        }
        if (ready) {
            const ULONG fbo = lam->fbo;
            const uint64_t base = zero_base && fbo == 0 ? 0 : kProbeBase + fbo;
            int context;
            NTSTATUS posted = s.fast_register(a, &context, mr, lam->pages(), fbo,
                                              2 * PAGE_SIZE - fbo, base, flags);
            ready = posted == STATUS_SUCCESS && s.drain(cq, 1).size() == 1;
            token = s.local_token(mr);
            address = base;
        }
    }
    if (ready) {
        NDK_SGE mine{};
        mine.VirtualAddress = reinterpret_cast<PVOID>(address + offset);
        mine.Length = length;
        mine.MemoryRegionToken = token;
        NDK_SGE theirs = Session::sge(scratch, 0, length, other.local_token);
        int receive_context, send_context;
        NTSTATUS r =
            s.receive(as_target ? a : b, &receive_context, {as_target ? &mine : &theirs, 1});
        NTSTATUS t = s.send(as_target ? b : a, &send_context, {as_target ? &theirs : &mine, 1});
        size_t expected = (r == STATUS_SUCCESS) + (t == STATUS_SUCCESS);
        said = "NdkReceive " + answer(r) + ", NdkSend " + answer(t) + ", " +
               std::to_string(s.drain(cq, expected, std::chrono::milliseconds(300)).size()) +
               " of " + std::to_string(expected) + " entries";
    } else {
        said = "the region was not registered";
    }
    // Teardown of the probe's own objects (the pair's QPs may be in error now: a flush is what
    // the teardown does anyway).
    if (lam) s.release_lam(*lam);
    if (mr) s.close(mr);
    if (other.mr) s.close(other.mr);
    finish(sut, *this, said);
}

}  // namespace ndkct::properties
