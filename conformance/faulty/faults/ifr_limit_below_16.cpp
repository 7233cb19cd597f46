// NdkInitializeFastRegisterMr refuses more than 8 pages with STATUS_IMPLEMENTATION_LIMIT, though
// every count up to max(16, FRMRPageCount) must be accepted (IFR-APC-04, AI-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                    NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (pages > 8) return STATUS_IMPLEMENTATION_LIMIT;  // the fault
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote_access, completion, context);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkInitializeFastRegisterMr refuses more than 8 pages", ndkct::faulty::install);
