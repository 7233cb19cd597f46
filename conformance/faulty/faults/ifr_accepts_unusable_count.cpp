// NdkInitializeFastRegisterMr accepts page counts beyond what the device's fast-register page
// lists hold (FRMRPageCount entries), and a fast registration that then uses the pages the
// initialization accepted is refused: the initialized count is not supported (IFR-APC-01).
#include <algorithm>
#include "fr_remote_access.hpp"

namespace ndkct::faulty {
namespace {

using namespace fr_remote_access;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    // The rights are checked first, as the reference does (FR-ACC-01 keeps its status): the
    // fault is the page list alone, refused where the request is otherwise valid.
    const bool refused_for_rights = rights_refused(mr, flags);
    ULONG page_list = std::max<ULONG>(16, adapter_info().FRMRPageCount);
    if (!refused_for_rights && count > page_list)
        return STATUS_INVALID_PARAMETER;  // the fault: too long a page list
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister refuses more pages than FRMRPageCount although the MR was initialized for "
    "them",
    ndkct::faulty::install, ndkct::faulty::fr_remote_access::forget_reused);
