// NdkCreateCq refuses a CqDepth above MaxCqDepth with STATUS_INSUFFICIENT_RESOURCES instead of
// the STATUS_INVALID_PARAMETER the page names for it (CQ-CREATE-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS create_cq(NDK_ADAPTER* adapter, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK* notification,
                   PVOID notification_context, GROUP_AFFINITY* affinity,
                   NDK_FN_CREATE_COMPLETION* completion, PVOID context, NDK_CQ** out) {
    if (depth > adapter_info().MaxCqDepth) return STATUS_INSUFFICIENT_RESOURCES;  // the fault
    return base().adapter.NdkCreateCq(adapter, depth, notification, notification_context, affinity,
                                      completion, context, out);
}

void install(Tables& t) {
    t.adapter.NdkCreateCq = create_cq;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkCreateCq refuses CqDepth above MaxCqDepth with STATUS_INSUFFICIENT_RESOURCES",
    ndkct::faulty::install);
