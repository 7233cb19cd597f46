// NdkFastRegister refuses an FBO of 2048 or more with STATUS_INVALID_PARAMETER (the vendor's
// fast-register work-queue entry holds the first byte offset in an 11-bit field), though the
// FBO is a byte offset within the first page and every value 0..PAGE_SIZE-1 must be accepted
// (FR-FBO-01).
#include "fr_remote_access.hpp"

namespace ndkct::faulty {
namespace {

using namespace fr_remote_access;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    // The rights are checked first, as the reference does (FR-ACC-01 keeps its status): the
    // fault is the FBO alone, refused where the request is otherwise valid.
    const bool refused_for_rights = rights_refused(mr, flags);
    if (!refused_for_rights && fbo >= 2048 && fbo < PAGE_SIZE)
        return STATUS_INVALID_PARAMETER;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister refuses an FBO of 2048 or more inside the page",
                   ndkct::faulty::install, ndkct::faulty::fr_remote_access::forget_reused);
