// commands_qp_limits.hpp: commands that hold a QP to the sizes it was created with (the QP's
// shape, recorded in its Slot by CreateQp and by the setup pair): NdkCreateQp's promises that a
// QP accepts what its own ReceiveQueueDepth, InitiatorQueueDepth, MaxReceiveRequestSge,
// MaxInitiatorRequestSge and InlineDataSize cover (CQP-DEPTH-01/02, CQP-SGE-01/02, CQP-INL-01).
// Other commands draw their SGE counts and how many requests they post without regard to a QP's
// own sizes, so they rarely reach them; this one posts exactly at them.
#pragma once

#include "commands.hpp"

namespace ndkct::properties {

// One of: receives until ReceiveQueueDepth are outstanding (by the World's intent), a receive
// of MaxReceiveRequestSge SGEs, InitiatorQueueDepth NdkWrites at once (none polled in between),
// a send of MaxInitiatorRequestSge SGEs, an INLINE send of exactly InlineDataSize bytes.
// The SGEs are zero-length (no token is resolved for them: rules_access.cpp's resolve_local), and
// the writes move nothing (no remote token is checked for an empty transfer, TOK-03's reading),
// so each request is valid whatever MRs the World holds; only its count and size matter. Sends
// may wait for a receive on the peer (an RNR retry without end): teardown flushes them.
struct PostAtTheQpLimits : Command {
    enum class Limit : uint8_t {
        receive_depth,
        receive_sge,
        initiator_depth,
        initiator_sge,
        inline_size
    };
    int qp;
    Limit limit;
    uint32_t count = 0;  // requests posted (receive_depth, initiator_depth), else 1
    uint32_t size = 0;   // SGEs per request, or the inline bytes
    explicit PostAtTheQpLimits(const World& w);
    void checkPreconditions(const World& w) const override;
    void apply(World& w) const override;
    void run(const World& w, Sut& sut) const override;
    void show(std::ostream& os) const override;
};

}  // namespace ndkct::properties
