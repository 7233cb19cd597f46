// NdkInitializeFastRegisterMr refuses page counts it cannot support with
// STATUS_INSUFFICIENT_RESOURCES instead of the STATUS_IMPLEMENTATION_LIMIT the page names for
// exactly that case (IFR-APC-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

constexpr ULONG kDeviceLimit = 1024;  // the pages its FRMRs can hold, in this fault

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                    NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (pages > kDeviceLimit && pages > adapter_info().FRMRPageCount)
        return STATUS_INSUFFICIENT_RESOURCES;  // the fault: the wrong refusal
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote_access, completion, context);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkInitializeFastRegisterMr refuses an unsupported page count with "
    "STATUS_INSUFFICIENT_RESOURCES",
    ndkct::faulty::install);
