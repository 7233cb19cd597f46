// NdkQueryAdapterInfo returns STATUS_BUFFER_TOO_SMALL without writing the required size to
// *pBufferSize (AI-05).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS query(NDK_ADAPTER* adapter, NDK_ADAPTER_INFO* info, ULONG* size) {
    ULONG given = size ? *size : 0;
    NTSTATUS status = base().adapter.NdkQueryAdapterInfo(adapter, info, size);
    if (status == STATUS_BUFFER_TOO_SMALL && size) *size = given;  // the fault
    return status;
}

void install(Tables& t) {
    t.adapter.NdkQueryAdapterInfo = query;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkQueryAdapterInfo gives no required size with STATUS_BUFFER_TOO_SMALL",
                   ndkct::faulty::install);
