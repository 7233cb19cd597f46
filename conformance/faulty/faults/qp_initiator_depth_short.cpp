// NdkCreateQp makes the initiator queue one entry shorter than InitiatorQueueDepth (an off-by-one
// in the ring size), so the Nth outstanding initiator request is refused: a QP created with
// InitiatorQueueDepth N must accept N initiator requests outstanding (CQP-DEPTH-02).
#include "qp_shape_edit.hpp"

namespace ndkct::faulty {
namespace {

void edit([[maybe_unused]] ULONG& receive_depth, [[maybe_unused]] ULONG& initiator_depth,
          [[maybe_unused]] ULONG& receive_sge, [[maybe_unused]] ULONG& initiator_sge,
          [[maybe_unused]] ULONG& inline_size) {
    if (initiator_depth > 1) --initiator_depth;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkCreateQp makes the initiator queue one entry shorter than InitiatorQueueDepth",
    ndkct::faulty::QpShapeFault<ndkct::faulty::edit>::install);
