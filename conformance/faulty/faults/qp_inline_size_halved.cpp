// NdkCreateQp keeps half the InlineDataSize asked for (it sizes the inline buffer in 2-byte
// units), so an inline send of more than half of it is refused: a QP created with InlineDataSize
// D must accept INLINE sends of up to D bytes (CQP-INL-01).
#include "qp_shape_edit.hpp"

namespace ndkct::faulty {
namespace {

void edit([[maybe_unused]] ULONG& receive_depth, [[maybe_unused]] ULONG& initiator_depth,
          [[maybe_unused]] ULONG& receive_sge, [[maybe_unused]] ULONG& initiator_sge,
          [[maybe_unused]] ULONG& inline_size) {
    inline_size /= 2;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp keeps half the InlineDataSize asked for",
                   ndkct::faulty::QpShapeFault<ndkct::faulty::edit>::install);
