// NdkCreateQp never checks InlineDataSize against MaxInlineDataSize: a larger size is capped to the
// maximum and the QP is created (CQP-LIM-05: a value past the adapter's maximum must be refused
// with STATUS_INVALID_PARAMETER.)
#include "qp_limit_unchecked.hpp"

NDKCT_DEFINE_FAULT("NdkCreateQp caps InlineDataSize past MaxInlineDataSize instead of refusing it",
                   ndkct::faulty::QpLimitUnchecked<4>::install);
