// NdkCreateQp makes the receive queue one entry shorter than ReceiveQueueDepth (an off-by-one
// in the ring size), so the Nth outstanding receive is refused: a QP created with
// ReceiveQueueDepth N must accept N receives outstanding (CQP-DEPTH-01).
#include "qp_shape_edit.hpp"

namespace ndkct::faulty {
namespace {

void edit([[maybe_unused]] ULONG& receive_depth, [[maybe_unused]] ULONG& initiator_depth,
          [[maybe_unused]] ULONG& receive_sge, [[maybe_unused]] ULONG& initiator_sge,
          [[maybe_unused]] ULONG& inline_size) {
    if (receive_depth > 1) --receive_depth;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp makes the receive queue one entry shorter than ReceiveQueueDepth",
                   ndkct::faulty::QpShapeFault<ndkct::faulty::edit>::install);
