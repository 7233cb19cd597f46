// commands_fast_register_completion.hpp: rc::state commands for NdkFastRegister's request, queue
// and completion contract (issue 13, group s11frq), in a property of their own
// (FastRegisterCompletion) so that the other properties' sequences, and the faults their bites pin,
// stay as they were.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// NdkArmCq on the initiator CQ of a QP, and an NdkFastRegister on that QP from inside the
// notification callback that follows (FR-IRQL-01: it may be called at DISPATCH_LEVEL, so it may
// not wait there; the harness times it). FastRegister's arguments; CallFromNotification's run.
struct FastRegisterFromNotification : CallFromNotification {
    // `on_qp` >= 0: the fast registration is posted on that QP.
    explicit FastRegisterFromNotification(const World& w, int on_qp = -1);
};

// An NdkWrite that makes an entry (neither silent nor deferred), then
// FastRegisterFromNotification on its QP: the write's entry waits in the initiator CQ, so the
// arm fires at once (CQ-NOT-02) and the fast registration is made inside the callback, not after
// it on the consumer's thread.
struct FastRegisterAfterAnEntry : Composite {
    std::shared_ptr<const Write> write;
    std::shared_ptr<const FastRegisterFromNotification> call;
    explicit FastRegisterAfterAnEntry(const World& w);
    std::vector<std::shared_ptr<const Command>> steps(int) const override {
        return {write, call};  // they make no objects: nothing to renumber
    }
};

}  // namespace ndkct::properties
