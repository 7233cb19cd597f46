#include "commands_qp_limits.hpp"

namespace ndkct::properties {

namespace gen = rc::gen;
using Limit = PostAtTheQpLimits::Limit;

namespace {

// Whether the QP's shape gives the limit something to post (a depth or size of at least 1; for
// receive_depth, room left by the receives the World knows of). Initiator requests need a
// connected QP (CQP-STATE-01: on an unconnected one they are refused, rightly).
bool postable(const Slot& s, Limit l) {
    const conformance::QpShape& q = s.shape;
    switch (l) {
        case Limit::receive_depth:
            return q.receive_depth > s.receives;
        case Limit::receive_sge:
            return q.receive_sge >= 1 && q.receive_depth > s.receives;
        case Limit::initiator_depth:
            return s.connected && q.initiator_depth >= 1;
        case Limit::initiator_sge:
            return s.connected && q.initiator_sge >= 1 && q.initiator_depth >= 1;
        case Limit::inline_size:
            return s.connected && q.inline_size >= 1 && q.initiator_depth >= 1;
    }
    return false;
}

const char* limit_name(Limit l) {
    switch (l) {
        case Limit::receive_depth:
            return "ReceiveQueueDepth";
        case Limit::receive_sge:
            return "MaxReceiveRequestSge";
        case Limit::initiator_depth:
            return "InitiatorQueueDepth";
        case Limit::initiator_sge:
            return "MaxInitiatorRequestSge";
        case Limit::inline_size:
            return "InlineDataSize";
    }
    return "?";
}

}  // namespace

PostAtTheQpLimits::PostAtTheQpLimits(const World& w) {
    limit = *gen::element(Limit::receive_depth, Limit::receive_sge, Limit::initiator_depth,
                          Limit::initiator_sge, Limit::inline_size);
    qp = w.pick(Kind::qp, [&](const Slot& s) { return postable(s, limit); });
    const Slot& s = w.slots[qp];
    switch (limit) {
        case Limit::receive_depth:
            count = s.shape.receive_depth - s.receives;
            break;
        case Limit::receive_sge:
            count = 1, size = s.shape.receive_sge;
            break;
        case Limit::initiator_depth:
            count = s.shape.initiator_depth;
            break;
        case Limit::initiator_sge:
            count = 1, size = s.shape.initiator_sge;
            break;
        case Limit::inline_size:
            count = 1, size = s.shape.inline_size;
            break;
    }
}

void PostAtTheQpLimits::checkPreconditions(const World& w) const {
    NDKCT_PRE(w.is(qp, Kind::qp) && postable(w.slots[qp], limit));
    // After shrinking the QP's receives may stand elsewhere: post no more than its depth.
    if (limit == Limit::receive_depth)
        RC_PRE(w.slots[qp].receives + count <= w.slots[qp].shape.receive_depth);
}

void PostAtTheQpLimits::apply(World& w) const {
    if (limit == Limit::receive_depth || limit == Limit::receive_sge) w.slots[qp].receives += count;
}

void PostAtTheQpLimits::show(std::ostream& os) const {
    os << "at " << slot_name(Kind::qp, qp) << "'s " << limit_name(limit) << ": ";
    switch (limit) {
        case Limit::receive_depth:
            os << count << " x NdkReceive(" << slot_name(Kind::qp, qp) << ", nSge=0)";
            break;
        case Limit::receive_sge:
            os << "NdkReceive(" << slot_name(Kind::qp, qp) << ", nSge=" << size
               << " zero-length SGEs)";
            break;
        case Limit::initiator_depth:
            os << count << " x NdkWrite(" << slot_name(Kind::qp, qp)
               << ", nSge=0) outstanding at once";
            break;
        case Limit::initiator_sge:
            os << "NdkSend(" << slot_name(Kind::qp, qp) << ", nSge=" << size
               << " zero-length SGEs)";
            break;
        case Limit::inline_size:
            os << "NdkSend(" << slot_name(Kind::qp, qp) << ", one SGE of " << size
               << " bytes, Flags=NDK_OP_FLAG_INLINE)";
            break;
    }
}

void PostAtTheQpLimits::run(const World&, Sut& sut) const {
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    std::vector<SgePlan> plans;
    bool inline_data = false;
    if (limit == Limit::receive_sge || limit == Limit::initiator_sge)
        for (uint32_t k = 0; k < size; ++k)
            plans.push_back({-1, 64 * k, 0});
    if (limit == Limit::inline_size) {
        plans.push_back({-1, 0, size});
        inline_data = true;
    }
    const auto sges = sut.sges(plans, inline_data);
    uint32_t accepted = 0;
    NTSTATUS s = STATUS_SUCCESS;
    for (uint32_t k = 0; k < count && s == STATUS_SUCCESS; ++k) {
        switch (limit) {
            case Limit::receive_depth:
            case Limit::receive_sge:
                s = sut.session.receive(q, sut.next_context(), sges);
                break;
            case Limit::initiator_depth:
                s = sut.session.write(q, sut.next_context(), sges, sut.remote_address(-1, 0),
                                      sut.remote_token(-1));
                break;
            case Limit::initiator_sge:
                s = sut.session.send(q, sut.next_context(), sges);
                break;
            case Limit::inline_size:
                s = sut.session.send(q, sut.next_context(), sges, NDK_OP_FLAG_INLINE);
                break;
        }
        if (s == STATUS_SUCCESS) ++accepted;
    }
    finish(sut, *this,
           s == STATUS_SUCCESS ? std::to_string(accepted) + " x STATUS_SUCCESS"
                               : std::to_string(accepted) + " x STATUS_SUCCESS, then " + answer(s));
}

}  // namespace ndkct::properties
