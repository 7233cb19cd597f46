// NdkCreateQp gives initiator requests one SGE fewer than MaxInitiatorRequestSge, so a send or
// write with all M SGEs is refused: a QP created with MaxInitiatorRequestSge M must accept them
// (CQP-SGE-02).
#include "qp_shape_edit.hpp"

namespace ndkct::faulty {
namespace {

void edit([[maybe_unused]] ULONG& receive_depth, [[maybe_unused]] ULONG& initiator_depth,
          [[maybe_unused]] ULONG& receive_sge, [[maybe_unused]] ULONG& initiator_sge,
          [[maybe_unused]] ULONG& inline_size) {
    if (initiator_sge > 1) --initiator_sge;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp gives initiator requests one SGE fewer than MaxInitiatorRequestSge",
                   ndkct::faulty::QpShapeFault<ndkct::faulty::edit>::install);
