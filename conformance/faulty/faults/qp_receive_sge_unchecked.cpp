// NdkCreateQp never checks MaxReceiveRequestSge against the adapter's: a larger count is capped to
// the maximum and the QP is created (CQP-LIM-03: a value past the adapter's maximum must be refused
// with STATUS_INVALID_PARAMETER.)
#include "qp_limit_unchecked.hpp"

NDKCT_DEFINE_FAULT(
    "NdkCreateQp caps MaxReceiveRequestSge past the adapter's instead of refusing it",
    ndkct::faulty::QpLimitUnchecked<2>::install);
