// NdkFastRegister refuses NDK_OP_FLAG_READ_FENCE with STATUS_INVALID_PARAMETER (the vendor's
// fast-register work-queue entry has no fence bit, and its flag check lists only the access
// rights, SILENT_SUCCESS and DEFER), though any OR of the page's documented flags is a valid
// Flags value (FR-FLG-01).
#include "fr_remote_access.hpp"

namespace ndkct::faulty {
namespace {

using namespace fr_remote_access;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    // The rights are checked first, as the reference does (FR-ACC-01 keeps its status): the
    // fault is the fence flag alone, refused where the request is otherwise valid.
    const bool refused_for_rights = rights_refused(mr, flags);
    if (!refused_for_rights && (flags & NDK_OP_FLAG_READ_FENCE))
        return STATUS_INVALID_PARAMETER;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister refuses NDK_OP_FLAG_READ_FENCE", ndkct::faulty::install,
                   ndkct::faulty::fr_remote_access::forget_reused);
