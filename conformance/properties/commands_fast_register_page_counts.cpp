// commands_fast_register_page_counts.cpp: the last page of a fast registration reached after its
// first (commands_fast_register_page_counts.hpp).
#include "commands_fast_register_page_counts.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;

namespace {
constexpr int kPd = 0, kCq = 1, kRegistering = 2, kAccessing = 3;  // initial_world()
constexpr uint64_t kBase = 0x0000'5C00'0000'0000ull;  // a label (FR-ALIGN-01), page-aligned

// Polls `cq` until the entry of `context` came (the oracle judges every entry polled): whether
// it came with STATUS_SUCCESS (false too when it is missing after the drain's time). The next
// step follows only a success: a request flushed or failed leaves its QP, or its peer, in error
// (a write to a peer in error ends only when the transport gives up, which on a real device
// may be longer than the drain waits).
bool succeeded(Session& s, NDK_CQ* cq, const void* context) {
    for (;;) {
        auto got = s.drain(cq, 1);
        if (got.empty()) return false;
        for (const auto& r : got)
            if (r.RequestContext == context) return r.Status == STATUS_SUCCESS;
    }
}
}  // namespace

// FBO and the access stay inside the first page together (at most 2047 + 1024 bytes), so that
// the first request reaches the region's first page only.
LastPageAfterFirst::LastPageAfterFirst(const World&)
    : pages(*gen::weightedOneOf<uint32_t>(
          {{2, gen::just<uint32_t>(2)}, {1, gen::just<uint32_t>(3)}, {1, gen::just<uint32_t>(4)}})),
      fbo(*gen::weightedOneOf<uint32_t>(
          {{1, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(0, PAGE_SIZE / 2)}})),
      short_of_end(*gen::weightedOneOf<uint32_t>(
          {{1, gen::just<uint32_t>(0)}, {2, gen::inRange<uint32_t>(1, PAGE_SIZE / 4)}})),
      bytes(*gen::inRange<uint32_t>(1, 1025)),
      into_last(*gen::inRange<uint32_t>(0, PAGE_SIZE / 2)),
      read(*gen::arbitrary<bool>()) {}

void LastPageAfterFirst::checkPreconditions(const World& w) const {
    NDKCT_PRE(!w.two_nodes && w.is(kPd, Kind::pd) && w.is(kCq, Kind::cq) &&
              w.is(kRegistering, Kind::qp) && w.is(kAccessing, Kind::qp));
}

void LastPageAfterFirst::run(const World&, Sut& sut) const {
    Session& s = sut.session;
    auto* pd = sut.object<NDK_PD>(kPd);
    auto* cq = sut.object<NDK_CQ>(kCq);
    auto* a = sut.object<NDK_QP>(kRegistering);
    auto* b = sut.object<NDK_QP>(kAccessing);
    if (!pd || !cq || !a || !b) return skipped(sut, *this, "the setup pair is not there");
    platform::LockedBuffer memory;
    try {
        memory = s.buffer(pages * PAGE_SIZE);
    } catch (const std::bad_alloc&) {
        return skipped(sut, *this, "the arena has no free pages");
    }
    auto chain = platform::describe(memory, 0, memory.size());
    auto lam =
        s.build_lam(chain.head(), memory.size(), ULONG(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages)));
    std::string shown = "NdkBuildLam " + answer(lam.done);
    if (!lam.done.ok()) return finish(sut, *this, shown);
    const auto array = lam.pages();
    auto made = s.create_mr(pd, true);
    conformance::Done init =
        made.object ? s.initialize_fast_register_mr(made.object, pages, true) : conformance::Done{};
    if (made.object && init.ok() && array.size() == pages) {
        const SIZE_T length = SIZE_T(pages) * PAGE_SIZE - fbo - short_of_end;
        // In the last page: from its first region byte on, inside the region.
        const uint64_t last_start = uint64_t(pages - 1) * PAGE_SIZE - fbo;
        const uint64_t room = length - last_start;  // the region's bytes in its last page
        const uint32_t n = uint32_t(std::min<uint64_t>(bytes, room));
        const uint64_t at = last_start + std::min<uint64_t>(into_last, room - n);
        static int registration, first, again;
        NTSTATUS posted =
            s.fast_register(a, &registration, made.object, array, fbo, length, kBase + fbo,
                            read ? NDK_OP_FLAG_ALLOW_REMOTE_READ : NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
        shown += "; NdkFastRegister " + answer(posted);
        if (posted == STATUS_SUCCESS && succeeded(s, cq, &registration)) {
            UINT32 token = s.remote_token(made.object);
            auto local =
                read ? s.register_buffer(pd, sut.buffers[1],
                                         NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK,
                                         0, PAGE_SIZE)
                     : s.register_buffer(pd, sut.buffers[0], 0, 0, PAGE_SIZE);
            if (local.status == STATUS_SUCCESS) {
                NDK_SGE sge = Session::sge(sut.buffers[read ? 1 : 0], 0, n, local.local_token);
                auto access = [&](void* context, uint64_t offset) {
                    return read ? s.read(b, context, {&sge, 1}, kBase + fbo + offset, token)
                                : s.write(b, context, {&sge, 1}, kBase + fbo + offset, token);
                };
                NTSTATUS at_start = access(&first, 0);
                shown += std::string("; ") + (read ? "NdkRead" : "NdkWrite") + " at the start " +
                         answer(at_start);
                if (at_start == STATUS_SUCCESS && succeeded(s, cq, &first)) {
                    NTSTATUS in_last = access(&again, at);
                    shown += "; again in the last page " + answer(in_last);
                    if (in_last == STATUS_SUCCESS) succeeded(s, cq, &again);
                }
            }
            if (local.mr) s.close(local.mr);
        }
    }
    if (made.object) s.close(made.object);
    s.release_lam(lam);
    finish(sut, *this, shown);
}

void LastPageAfterFirst::show(std::ostream& os) const {
    os << "LastPageAfterFirst(pages=" << pages << ", FBO=" << fbo
       << ", short_of_end=" << short_of_end << ", bytes=" << bytes << ", into_last=" << into_last
       << ", " << (read ? "read" : "write")
       << ") [NdkBuildLam and NdkFastRegister of that many pages; the peer's request at the "
          "region's start, then the same in its last page]";
}

}  // namespace ndkct::properties
