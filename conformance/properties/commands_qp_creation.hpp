// commands_qp_creation.hpp: NdkCreateQp's page beyond a QP's sizes (issue 13, group s11qp): QPs
// made on an SRQ with an initiator size at or one past the adapter's maximum (CQP-SRQ-02..05), a
// QP's antecedents closed before it (CQP-LIFE-01, CQP-SRQ-06), and NdkCreateQp called from inside a
// CQ notification callback (CQP-IRQL-01), and each of a QP's queues completing on its own CQ
// (CQP-OBJ-02). Each command makes the objects it needs and closes
// them again, so it stands alone after shrinking and leaves the World as it found it.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkCreatePd, NdkCreateCq, NdkCreateSrq (when the QP is made on one), then NdkCreateQp or
// NdkCreateQpWithSrq, the latter with one initiator size at its maximum or one past it; then
// the closes, one antecedent (the SRQ, the CQ or the PD) first now and then: its close must pend
// until the QP's (CQP-LIFE-01, CQP-SRQ-06). An over-limit QP must be refused (CQP-SRQ-05).
struct QpWithItsAntecedents : Command {
    enum class Limit : uint8_t { none, initiator_depth, initiator_sge, inline_size };
    enum class First : uint8_t { qp, srq, cq, pd };  // the object closed first
    bool with_srq = true;
    Limit limit = Limit::none;
    bool past = false;  // one past the maximum, else at it
    First first = First::qp;
    explicit QpWithItsAntecedents(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// NdkCreatePd, NdkCreateCq (with a notification callback), NdkCreateQp on it, NdkReceive and
// NdkFlush there (the cancelled receive is the entry the arm fires for), NdkArmCq, and from
// inside the notification callback NdkCreateQp on the same PD and CQ: it may not block there
// (CQP-IRQL-01, GEN-IRQL-01); then the closes.
struct CreateQpFromNotification : Command {
    uint32_t type;                 // the arm's TriggerType
    conformance::QpShape shape{};  // of the QP created inside the callback
    explicit CreateQpFromNotification(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

// NdkCreatePd, four CQs, two QPs each with a receive CQ and an initiator CQ of its own,
// connected (connect_pair); NdkReceive on b and NdkSend from a (no SGEs); then all four CQs polled
// until both entries came: the send's must be on a's initiator CQ, the receive's on b's receive
// CQ (CQP-OBJ-02; CQP-SRQ-01 when b receives from an SRQ). The World's QPs mostly share one CQ for
// both queues, which hides a swap.
struct QueuesOnTheirOwnCqs : Command {
    bool with_srq = false;  // b made with an SRQ (NdkCreateQpWithSrq), the receive posted there
    explicit QueuesOnTheirOwnCqs(const World& w);
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

}  // namespace ndkct::properties
