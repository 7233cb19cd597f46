// Shared by the faults whose NdkCloseObject of one of a QP's antecedents (its CQ, its SRQ) does
// not count the QPs made on it: the vendor's close tears the object's own state down and returns
// STATUS_SUCCESS at once although a QP still uses it; the reference's close, which waits for the
// QP, finishes later and its completion is swallowed. NdkCreateQp's page makes the PD, both CQs
// and the SRQ what a QP holds open (CQP-LIFE-01, CQP-SRQ-06; CLOSE-02 is the generic rule).
// The other objects' closes are the reference's.
#pragma once
#include "faulty.hpp"

namespace ndkct::faulty::close_ignores_qps {

inline void swallow(void*) {}

inline NTSTATUS close(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION*, PVOID) {
    NTSTATUS status = base_close(object)(object, swallow, nullptr);
    return status == STATUS_PENDING ? STATUS_SUCCESS : status;  // the fault
}

}  // namespace ndkct::faulty::close_ignores_qps
