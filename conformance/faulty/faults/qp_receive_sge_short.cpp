// NdkCreateQp gives receive requests one SGE fewer than MaxReceiveRequestSge, so a receive with
// all M SGEs is refused: a QP created with MaxReceiveRequestSge M must accept receives with up
// to M SGEs (CQP-SGE-01).
#include "qp_shape_edit.hpp"

namespace ndkct::faulty {
namespace {

void edit([[maybe_unused]] ULONG& receive_depth, [[maybe_unused]] ULONG& initiator_depth,
          [[maybe_unused]] ULONG& receive_sge, [[maybe_unused]] ULONG& initiator_sge,
          [[maybe_unused]] ULONG& inline_size) {
    if (receive_sge > 1) --receive_sge;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp gives receive requests one SGE fewer than MaxReceiveRequestSge",
                   ndkct::faulty::QpShapeFault<ndkct::faulty::edit>::install);
