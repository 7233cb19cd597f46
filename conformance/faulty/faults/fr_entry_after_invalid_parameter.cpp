// NdkFastRegister writes the work request into the initiator queue before it validates FBO and
// Length against the pages: a request it then refuses with STATUS_INVALID_PARAMETER is in the
// queue already, clamped into the pages (FBO modulo PAGE_SIZE, Length cut to what the pages
// hold), and runs: a CQ entry appears for a request that failed inline (FR-ST-04, WR-05).
#include <algorithm>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    NTSTATUS status =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (status == STATUS_INVALID_PARAMETER && count > 0) {  // the fault: it was queued already
        const ULONG in_page = fbo % PAGE_SIZE;
        const SIZE_T room = SIZE_T(count) * PAGE_SIZE - in_page;
        base().qp.NdkFastRegister(qp, context, mr, count, pages, in_page,
                                  std::clamp<SIZE_T>(length, 1, room), base_va, flags);
    }
    return status;
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister makes a CQ entry for a request it refused with STATUS_INVALID_PARAMETER",
    ndkct::faulty::install);
