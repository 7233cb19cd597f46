// commands_fast_register_page_runs.cpp: fast registrations over pages that are not one run
// (commands_fast_register_page_runs.hpp).
#include "commands_fast_register_page_runs.hpp"

#include <algorithm>
#include <optional>

namespace ndkct::properties {

namespace gen = rc::gen;

namespace {
constexpr int kPd = 0, kCq = 1, kRegistering = 2, kWriting = 3;  // initial_world()
constexpr size_t kMappedPages = 8;
constexpr uint64_t kBase = 0x0000'5B00'0000'0000ull;  // a label (FR-ALIGN-01), page-aligned

// Polls `cq` until an entry of each context came (the oracle judges every entry polled, others'
// too); false when one is missing after the drain's time.
bool wait_for(Session& s, NDK_CQ* cq, std::vector<const void*> contexts) {
    while (!contexts.empty()) {
        auto got = s.drain(cq, 1);
        if (got.empty()) return false;
        for (const auto& r : got)
            std::erase(contexts, static_cast<const void*>(r.RequestContext));
    }
    return true;
}
}  // namespace

PagesNotARunWrite::PagesNotARunWrite(const World&)
    : fbo(*gen::weightedOneOf<uint32_t>(
          {{1, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(0, PAGE_SIZE)}})),
      pick(*gen::inRange<uint32_t>(0, kMappedPages)) {}

void PagesNotARunWrite::checkPreconditions(const World& w) const {
    NDKCT_PRE(!w.two_nodes && w.is(kPd, Kind::pd) && w.is(kCq, Kind::cq) &&
              w.is(kRegistering, Kind::qp) && w.is(kWriting, Kind::qp));
}

void PagesNotARunWrite::run(const World&, Sut& sut) const {
    Session& s = sut.session;
    auto* pd = sut.object<NDK_PD>(kPd);
    auto* cq = sut.object<NDK_CQ>(kCq);
    auto* a = sut.object<NDK_QP>(kRegistering);
    auto* b = sut.object<NDK_QP>(kWriting);
    if (!pd || !cq || !a || !b) return skipped(sut, *this, "the setup pair is not there");
    platform::LockedBuffer memory;
    try {
        memory = s.buffer(kMappedPages * PAGE_SIZE, platform::Placement::contiguous);
    } catch (const std::bad_alloc&) {
        return skipped(sut, *this, "the arena has no eight contiguous free pages");
    }
    auto chain = platform::describe(memory, 0, memory.size());
    auto lam = s.build_lam(chain.head(), memory.size(),
                           ULONG(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(kMappedPages)));
    std::string a_answer = "NdkBuildLam " + answer(lam.done);
    if (!lam.done.ok()) return finish(sut, *this, a_answer);
    const auto pages = lam.pages();
    auto has = [&](LONG64 logical) {
        return std::any_of(pages.begin(), pages.end(),
                           [&](const NDK_LOGICAL_ADDRESS& p) { return p.QuadPart == logical; });
    };
    std::vector<NDK_LOGICAL_ADDRESS> array;
    for (const auto& first : pages) {
        const LONG64 next = first.QuadPart + LONG64(PAGE_SIZE), last = next + LONG64(PAGE_SIZE);
        if (!has(next) || !has(last)) continue;
        std::vector<NDK_LOGICAL_ADDRESS> others;
        for (const auto& p : pages)
            if (p.QuadPart != first.QuadPart && p.QuadPart != next && p.QuadPart != last)
                others.push_back(p);
        if (!others.empty()) {
            array = {first, others[pick % others.size()], first};
            array[2].QuadPart = last;
        }
        break;
    }
    std::string shown = a_answer;
    if (!array.empty()) {
        auto made = s.create_mr(pd, true);
        conformance::Done init =
            made.object ? s.initialize_fast_register_mr(made.object, 3, true) : conformance::Done{};
        if (made.object && init.ok()) {
            const SIZE_T length = 3 * PAGE_SIZE - fbo;
            static int registration, write;
            NTSTATUS posted = s.fast_register(a, &registration, made.object, array, fbo, length,
                                              kBase + fbo, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
            shown += "; NdkFastRegister " + answer(posted);
            if (posted == STATUS_SUCCESS && wait_for(s, cq, {&registration})) {
                UINT32 token = s.remote_token(made.object);
                auto source = s.register_buffer(pd, sut.buffers[0], 0, 0, length);
                if (source.status == STATUS_SUCCESS) {
                    NDK_SGE sge =
                        Session::sge(sut.buffers[0], 0, ULONG(length), source.local_token);
                    NTSTATUS wrote = s.write(b, &write, {&sge, 1}, kBase + fbo, token);
                    shown += "; NdkWrite " + answer(wrote);
                    if (wrote == STATUS_SUCCESS) wait_for(s, cq, {&write});
                }
                if (source.mr) s.close(source.mr);
            }
        }
        if (made.object) s.close(made.object);
    } else {
        shown += "; no run of three logical pages in the mapping: nothing registered";
    }
    s.release_lam(lam);
    finish(sut, *this, shown);
}

void PagesNotARunWrite::show(std::ostream& os) const {
    os << "PagesNotARunWrite(FBO=" << fbo << ", pick=" << pick
       << ") [NdkBuildLam of 8 contiguous pages, NdkFastRegister of 3 of them: ends two logical "
          "pages apart, the middle off their run; the peer's NdkWrite of the region]";
}

}  // namespace ndkct::properties
