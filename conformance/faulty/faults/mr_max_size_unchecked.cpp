// NdkRegisterMr never checks Length against the MaxRegistrationSize the adapter reports. The
// vendor's NdkQueryAdapterInfo reports what one first-level translation table addresses, 8 KiB,
// while NdkRegisterMr quietly chains a second level for larger regions: a Length above the
// reported maximum registers successfully, which RMR-LEN-02 rules out (the consumer sizes its
// registrations by the reported maximum; whatever the adapter could do beyond it, a Length past
// it must not register).
#include <algorithm>
#include <cstddef>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

constexpr SIZE_T kReportedMaxRegistrationSize = 8 * 1024;

NTSTATUS query(NDK_ADAPTER* adapter, NDK_ADAPTER_INFO* info, ULONG* size) {
    NTSTATUS status = base().adapter.NdkQueryAdapterInfo(adapter, info, size);
    // The reported maximum is legitimate on its own; the fault is that NdkRegisterMr (the
    // reference's, with its own much larger limit) is left unchecked against it.
    if (status == STATUS_SUCCESS && info && size &&
        *size >= offsetof(NDK_ADAPTER_INFO, MaxRegistrationSize) + sizeof(SIZE_T))
        info->MaxRegistrationSize =
            std::min(info->MaxRegistrationSize, kReportedMaxRegistrationSize);
    return status;
}

void install(Tables& t) {
    t.adapter.NdkQueryAdapterInfo = query;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkRegisterMr registers a Length above the 8 KiB MaxRegistrationSize the adapter reports",
    ndkct::faulty::install);
