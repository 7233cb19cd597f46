// NdkQueryAdapterInfo reports FRMRPageCount = 8, below the 16 every provider must support (AI-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS query(NDK_ADAPTER* adapter, NDK_ADAPTER_INFO* info, ULONG* size) {
    NTSTATUS status = base().adapter.NdkQueryAdapterInfo(adapter, info, size);
    if (status == STATUS_SUCCESS && info) info->FRMRPageCount = 8;  // the fault
    return status;
}

void install(Tables& t) {
    t.adapter.NdkQueryAdapterInfo = query;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkQueryAdapterInfo reports FRMRPageCount 8", ndkct::faulty::install);
