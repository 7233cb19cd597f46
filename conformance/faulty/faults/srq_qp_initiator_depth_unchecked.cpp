// NdkCreateQpWithSrq never checks InitiatorQueueDepth against MaxInitiatorQueueDepth: a larger one
// is capped to the maximum and the QP is created (CQP-SRQ-02: a value past the adapter's maximum
// must be refused with STATUS_INVALID_PARAMETER; CQP-SRQ-05: never clamped).
#include "srq_qp_limit_unchecked.hpp"

NDKCT_DEFINE_FAULT(
    "NdkCreateQpWithSrq caps InitiatorQueueDepth past MaxInitiatorQueueDepth instead of refusing "
    "it",
    ndkct::faulty::SrqQpLimitUnchecked<0>::install);
