// NdkCreateQpWithSrq never checks MaxInitiatorRequestSge against the adapter's
// MaxInitiatorRequestSge: a larger one is capped to the maximum and the QP is created
// (CQP-SRQ-03: a value past the adapter's maximum must be refused with STATUS_INVALID_PARAMETER;
// CQP-SRQ-05: never clamped).
#include "srq_qp_limit_unchecked.hpp"

NDKCT_DEFINE_FAULT(
    "NdkCreateQpWithSrq caps MaxInitiatorRequestSge past the adapter's maximum instead of "
    "refusing it",
    ndkct::faulty::SrqQpLimitUnchecked<1>::install);
