// NdkCreateQp never checks ReceiveQueueDepth against MaxReceiveQueueDepth: a larger one is capped
// to the maximum and the QP is created (CQP-LIM-01: a value past the adapter's maximum must be
// refused with STATUS_INVALID_PARAMETER.)
#include "qp_limit_unchecked.hpp"

NDKCT_DEFINE_FAULT(
    "NdkCreateQp caps ReceiveQueueDepth past MaxReceiveQueueDepth instead of refusing it",
    ndkct::faulty::QpLimitUnchecked<0>::install);
