// commands_fast_register.cpp: NdkFastRegister commands beyond commands_qp.cpp's FastRegister.
#include "commands_fast_register.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;

FencedFastRegister::FencedFastRegister(const World& w) : FastRegister(w) {
    // FR-FLG-01: READ_FENCE with whatever rights FastRegister chose, and 1 in 3 silent too.
    flags |= NDK_OP_FLAG_READ_FENCE;
    if (*gen::inRange(0, 3) == 0) flags |= NDK_OP_FLAG_SILENT_SUCCESS;
}

}  // namespace ndkct::properties

namespace ndkct::properties {

BareOffsetWrite::BareOffsetWrite(const World& w) : Write(w) {
    auto fast = w.open_of(Kind::mr, [](const Slot& s) { return s.fast && s.pages > 0; });
    if (!fast.empty()) {
        remote = *gen::elementOf(fast);
        remote_kind = Kind::mr;
    }
    remote_offset = *gen::inRange<uint32_t>(0, 256);
    flags &= ~uint32_t(NDK_OP_FLAG_INLINE);
}
void BareOffsetWrite::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    auto sges = sut.sges(sgl);
    // The bare offset where the MR is registered (else Write's address: nothing to name).
    const bool registered = size_t(remote) < sut.mrs.size() && sut.mrs[remote].registered;
    uint64_t address = registered ? remote_offset : sut.remote_address(remote, remote_offset);
    NTSTATUS s =
        sut.session.write(q, sut.next_context(), sges, address, sut.remote_token(remote), flags);
    finish(sut, *this, answer(s));
}
void BareOffsetWrite::show(std::ostream& os) const {
    show_call(os, "NdkWrite");
    os << " [RemoteAddress is the bare offset 0x" << std::hex << remote_offset << std::dec
       << ", not the region's BaseVirtualAddress plus it]";
}

}  // namespace ndkct::properties
