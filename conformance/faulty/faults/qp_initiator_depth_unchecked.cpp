// NdkCreateQp never checks InitiatorQueueDepth against MaxInitiatorQueueDepth: a larger one is
// capped to the maximum and the QP is created (CQP-LIM-02: a value past the adapter's maximum must
// be refused with STATUS_INVALID_PARAMETER.)
#include "qp_limit_unchecked.hpp"

NDKCT_DEFINE_FAULT(
    "NdkCreateQp caps InitiatorQueueDepth past MaxInitiatorQueueDepth instead of refusing it",
    ndkct::faulty::QpLimitUnchecked<1>::install);
