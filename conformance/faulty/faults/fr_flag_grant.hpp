// Shared by the NdkFastRegister faults that grant a right the consumer did not ask for: the
// request goes to the reference with Extra added to its Flags; where that added right is refused
// (remote rights on an MR initialized without RemoteAccess: STATUS_ACCESS_VIOLATION), it is
// passed on again as the consumer made it, so that only the extra right is the fault.
#pragma once
#include "faulty.hpp"

namespace ndkct::faulty {

template <ULONG Extra>
NTSTATUS fast_register_granting(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                                const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length,
                                PVOID base_va, ULONG flags) {
    const ULONG granted = flags | Extra;  // the fault
    if (granted != flags) {
        NTSTATUS status =
            base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, granted);
        if (status != STATUS_ACCESS_VIOLATION) return status;
    }
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

}  // namespace ndkct::faulty
