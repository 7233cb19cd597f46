// NdkInitializeFastRegisterMr refuses RemoteAccess = TRUE with STATUS_NOT_SUPPORTED, though both
// values must be accepted (IFR-RA-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                    NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (remote_access) return STATUS_NOT_SUPPORTED;  // the fault
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote_access, completion, context);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkInitializeFastRegisterMr refuses RemoteAccess = TRUE",
                   ndkct::faulty::install);
