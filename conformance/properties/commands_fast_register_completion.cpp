// commands_fast_register_completion.cpp: NdkFastRegister's completion contract
// (commands_fast_register_completion.hpp).
#include "commands_fast_register_completion.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;

FastRegisterFromNotification::FastRegisterFromNotification(const World& w, int on_qp) {
    type = *gen::weightedOneOf<uint32_t>({{4, gen::just<uint32_t>(NDK_CQ_NOTIFY_ANY)},
                                          {1, gen::just<uint32_t>(NDK_CQ_NOTIFY_ERRORS)}});
    auto registration = std::make_shared<FastRegister>(w);
    if (on_qp >= 0) registration->qp = on_qp;
    // The QP's initiator CQ: where its own completions (a fast registration's, FR-QP-01) make
    // the arm fire; any CQ where the QP has none recorded.
    const int initiator = w.slots[registration->qp].initiator_cq;
    cq = initiator >= 0 && w.is(initiator, Kind::cq) ? initiator : w.pick(Kind::cq);
    fast_register = std::move(registration);
}

FastRegisterAfterAnEntry::FastRegisterAfterAnEntry(const World& w) : Composite(w) {
    World after = w;
    auto wr = std::make_shared<Write>(w);
    wr->flags &= ~uint32_t(NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_DEFER);  // it makes an entry
    wr->apply(after);
    call = std::make_shared<FastRegisterFromNotification>(after, wr->qp);
    write = std::move(wr);
}

}  // namespace ndkct::properties
