// NdkFastRegister refuses a request that uses every page the MR was initialized for, when that
// is more than one (an off-by-one in the page-list bound: >= instead of >, unseen by a vendor
// whose own tests register one page at a time), with STATUS_INVALID_PARAMETER; a request with
// AdapterPageCount up to the initialized count must not fail because of its page count
// (FR-APC-03).
#include "fr_remote_access.hpp"

namespace ndkct::faulty {
namespace {

using namespace fr_remote_access;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    const ULONG pages_initialized = initialized(mr).pages;
    // The rights are checked first, as the reference does (FR-ACC-01 keeps its status): the
    // fault is the page count alone, refused where the request is otherwise valid.
    if (!rights_refused(mr, flags) && pages_initialized > 1 && count >= pages_initialized)
        return STATUS_INVALID_PARAMETER;  // the fault: the last page of the list is refused
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister refuses AdapterPageCount equal to the MR's initialized count (above one)",
    ndkct::faulty::install, ndkct::faulty::fr_remote_access::forget_reused);
