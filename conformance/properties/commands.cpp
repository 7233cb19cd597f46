// The property commands' shared helpers (answers, generators of flags and SGE lists) and the
// adapter's commands. The other NDK object families' commands: commands_memory.cpp (PD, MR),
// commands_qp.cpp (QP requests, deferred chains), commands_cq.cpp, commands_connection.cpp,
// commands_close.cpp (closes, calls from inside a provider callback).
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

// Refreshes what the Sut knows of an MR's tokens (TOK-04: once its registration completed).
void learn_tokens(Sut& sut, int mr) {
    auto* m = sut.object<NDK_MR>(mr);
    sut.mrs[mr].local_token = sut.session.local_token(m);
    sut.mrs[mr].remote_token = sut.session.remote_token(m);
}

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

}  // namespace ndkct::properties
