// The dispatch tables: one designated-initializer table per NDK object type, each entry the
// verbs_* function named after its NDK call (GEN-MAND-01: none is NULL; GEN-DISP-01: the
// documented member order). An entry that is not written yet points at the one shared fallback
// below, which answers STATUS_NOT_IMPLEMENTED, never a fake success.
#include "verbs.hpp"

namespace ndkct::adapters::verbs {

namespace {

// The shared fallback (spec/PROVIDER.md explains the cast). Every entry is implemented today;
// keep it for bring-up of future entries.
[[maybe_unused]] NTSTATUS not_implemented() {
    return STATUS_NOT_IMPLEMENTED;
}
#define NDKCT_VERBS_TODO(FnType) \
    (reinterpret_cast<FnType*>(reinterpret_cast<void (*)()>(not_implemented)))

}  // namespace

const NDK_ADAPTER_DISPATCH kAdapterDispatch = {
    .NdkQueryExtension = verbs_query_extension,
    .NdkQueryAdapterInfo = verbs_query_adapter_info,
    .NdkCreateCq = verbs_create_cq,
    .NdkCreatePd = verbs_create_pd,
    .NdkCreateSharedEndpoint = verbs_create_shared_endpoint,
    .NdkCreateConnector = verbs_create_connector,
    .NdkCreateListener = verbs_create_listener,
    .NdkBuildLAM = verbs_build_lam,
    .NdkReleaseLAM = verbs_release_lam,
};

const NDK_PD_DISPATCH kPdDispatch = {
    .NdkClosePd = verbs_close_object,
    .NdkQueryExtension = verbs_query_extension,
    .NdkCreateMr = verbs_create_mr,
    .NdkCreateMw = verbs_create_mw,
    .NdkCreateSrq = verbs_create_srq,
    .NdkCreateQp = verbs_create_qp,
    .NdkCreateQpWithSrq = verbs_create_qp_with_srq,
    .NdkGetPrivilegedMemoryRegionToken = verbs_get_privileged_memory_region_token,
};

const NDK_CQ_DISPATCH kCqDispatch = {
    .NdkCloseCq = verbs_close_object,
    .NdkQueryExtension = verbs_query_extension,
    .NdkResizeCq = verbs_resize_cq,
    .NdkArmCq = verbs_arm_cq,
    .NdkGetCqResults = verbs_get_cq_results,
    .NdkControlCqInterruptModeration = verbs_control_cq_interrupt_moderation,
    .NdkGetCqResultsEx = verbs_get_cq_results_ex,
};

const NDK_MR_DISPATCH kMrDispatch = {
    .NdkCloseMr = verbs_close_object,
    .NdkQueryExtension = verbs_query_extension,
    .NdkRegisterMr = verbs_register_mr,
    .NdkDeregisterMr = verbs_deregister_mr,
    .NdkInitializeFastRegisterMr = verbs_initialize_fast_register_mr,
    .NdkGetRemoteTokenFromMr = verbs_get_remote_token_from_mr,
    .NdkGetLocalTokenFromMr = verbs_get_local_token_from_mr,
};

const NDK_MW_DISPATCH kMwDispatch = {
    .NdkCloseMw = verbs_close_object,
    .NdkQueryExtension = verbs_query_extension,
    .NdkGetRemoteTokenFromMw = verbs_get_remote_token_from_mw,
};

const NDK_QP_DISPATCH kQpDispatch = {
    .NdkCloseQp = verbs_close_object,
    .NdkQueryExtension = verbs_query_extension,
    .NdkFlush = verbs_flush,
    .NdkSend = verbs_send,
    .NdkReceive = verbs_receive,
    .NdkBind = verbs_bind,
    .NdkFastRegister = verbs_fast_register,
    .NdkInvalidate = verbs_invalidate,
    .NdkRead = verbs_read,
    .NdkWrite = verbs_write,
    .NdkSendAndInvalidate = verbs_send_and_invalidate,
};

const NDK_SRQ_DISPATCH kSrqDispatch = {
    .NdkCloseSrq = verbs_close_object,
    .NdkQueryExtension = verbs_query_extension,
    .NdkModifySrq = verbs_modify_srq,
    .NdkSrqReceive = verbs_srq_receive,
};

const NDK_CONNECTOR_DISPATCH kConnectorDispatch = {
    .NdkCloseConnector = verbs_close_object,
    .NdkQueryExtension = verbs_query_extension,
    .NdkConnect = verbs_connect,
    .NdkConnectWithSharedEndpoint = verbs_connect_with_shared_endpoint,
    .NdkCompleteConnect = verbs_complete_connect,
    .NdkAccept = verbs_accept,
    .NdkReject = verbs_reject,
    .NdkGetConnectionData = verbs_get_connection_data,
    .NdkGetLocalAddress = verbs_get_local_address,
    .NdkGetPeerAddress = verbs_get_peer_address,
    .NdkDisconnect = verbs_disconnect,
    .NdkCompleteConnectEx = verbs_complete_connect_ex,
    .NdkAcceptEx = verbs_accept_ex,
};

const NDK_LISTENER_DISPATCH kListenerDispatch = {
    .NdkCloseListener = verbs_close_object,
    .NdkQueryExtension = verbs_query_extension,
    .NdkListen = verbs_listen,
    .NdkGetLocalAddress = verbs_get_listener_local_address,
    .NdkControlConnectEvents = verbs_control_connect_events,
};

const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch = {
    .NdkCloseSharedEndpoint = verbs_close_object,
    .NdkQueryExtension = verbs_query_extension,
    .NdkGetLocalAddress = verbs_get_shared_endpoint_local_address,
};

}  // namespace ndkct::adapters::verbs
