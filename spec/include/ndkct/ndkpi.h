/*
 * ndkct/ndkpi.h: ndkct's own declaration of the NDKPI interface, versions 1.1, 1.2 and 2.1.
 *
 * What this is. The types, constants, callbacks, provider functions and dispatch tables of
 * NDKPI, declared from the public documentation (ddi/ns-ndkpi-*, nc-ndkpi-*, ne-ndkpi-* and
 * the syntax blocks of those pages) in ndkct's own words. It is not the WDK ndkpi.h, which is
 * not redistributable. Names, member order and parameter order are the documented ones, so
 * code written against the documentation reads the same here; the ABI is the x64 one.
 *
 * Function-type style. Every NDK_FN_X names a function *type*, not a pointer type:
 *     typedef NTSTATUS NDK_FN_FAST_REGISTER(NDK_QP* pNdkQp, ...);
 * Dispatch tables hold pointers (NDK_FN_FAST_REGISTER* NdkFastRegister;) and callback
 * parameters are pointers (NDK_FN_REQUEST_COMPLETION* RequestCompletion). A provider can
 * declare its functions with the type, so the compiler checks each definition against the
 * documented signature:
 *     static NDK_FN_FAST_REGISTER MyFastRegister;
 * The WDK spells the same ABI with pointer typedefs (the docs' dispatch-table syntax shows
 * members as "NDK_FN_CLOSE_OBJECT NdkCloseCq;"). Code ported from the WDK that keeps a
 * callback in a variable or field writes NDK_FN_X* here instead of NDK_FN_X.
 *
 * Dropped on purpose: IRQL and SAL annotations (_IRQL_requires_max_, _In_opt_, ...). Where a
 * parameter is optional or in/out, a short comment says so. Where the documentation itself
 * writes "const PSOCKADDR" or "const PVOID", that is kept: it makes the pointer const, not
 * the data, exactly as in the documented signature.
 *
 * Layout. ndkct runs on 64-bit Linux with the LLP64 widths of ndkct/kernel_types.h, so every
 * structure has its x64 Windows layout. The asserts at the end of this file pin the x64 sizes
 * (spec/tests/abi_layout_* check every documented offset and dispatch slot as well).
 *
 * Left out: NDK_FN_QUERY_ADAPTER_INFO_EX and NDK_FN_DISCONNECT_EX. Public header copies
 * typedef them, but no dispatch table holds them and no documentation page describes them
 * (AMB-21), so no provider can be asked for them.
 *
 * Compiles as C11 and C++20.
 */
#ifndef NDKCT_NDKPI_H
#define NDKCT_NDKPI_H

#include "ndkct/kernel_types.h"
#include "ndkct/ndkinfo.h"
#include "ndkct/ntstatus.h"

NDKCT_EXTERN_C_BEGIN

NDKCT_STATIC_ASSERT(sizeof(PVOID) == 8, "ndkct declares the x64 (64-bit pointer) NDKPI ABI");

/* ================================ Enumerations and constants ================================ */

/*
 * Object types, as stored in NDK_OBJECT_HEADER.ObjectType (ddi/ne-ndkpi-_ndk_object_type gives
 * the names in this order; numbering is the header's). NdkObjectTypeMax may grow.
 */
typedef enum _NDK_OBJECT_TYPE {
    NdkObjectTypeUndefined = 0,
    NdkObjectTypeAdapter = 1,
    NdkObjectTypeQp = 2,
    NdkObjectTypeCq = 3,
    NdkObjectTypeMr = 4,
    NdkObjectTypeMw = 5,
    NdkObjectTypePd = 6,
    NdkObjectTypeSharedEndpoint = 7,
    NdkObjectTypeConnector = 8,
    NdkObjectTypeListener = 9,
    NdkObjectTypeSrq = 10,
    NdkObjectTypeMax = 11
} NDK_OBJECT_TYPE;

/*
 * What a completion in NDK_RESULT_EX.Type completes (ddi/ne-ndkpi-_ndk_operation_type names
 * them without values; the values are the header's one-bit codes). ReceiveAndInvalidate is
 * the receive side of a peer's NdkSendAndInvalidate (the page words it as the send itself):
 * Receive with bit 15 set, and TypeSpecificCompletionOutput carries the invalidated token.
 */
typedef enum _NDK_OPERATION_TYPE {
    NdkOperationTypeReceive = 1,
    NdkOperationTypeReceiveAndInvalidate = 32769, /* 0x8001 */
    NdkOperationTypeSend = 2,
    NdkOperationTypeFastRegister = 4,
    NdkOperationTypeBind = 8,
    NdkOperationTypeInvalidate = 16,
    NdkOperationTypeRead = 32,
    NdkOperationTypeWrite = 64
} NDK_OPERATION_TYPE;

/*
 * NdkArmCq Type values. ddi/nc-ndkpi-ndk_fn_arm_cq names them but gives no numbers; these are
 * the header's.
 */
#define NDK_CQ_NOTIFY_ERRORS 0u
#define NDK_CQ_NOTIFY_ANY 1u
#define NDK_CQ_NOTIFY_SOLICITED 2u

/*
 * NdkRegisterMr Flags (values from the Flags table of ddi/nc-ndkpi-ndk_fn_register_mr).
 * LOCAL_READ is zero: local read is always granted and cannot be tested as a bit. REMOTE_WRITE
 * (0x5) carries LOCAL_WRITE (0x1), so "Flags & NDK_MR_FLAG_ALLOW_REMOTE_WRITE" is also true
 * for local-write-only registrations; test the remote-write bit alone with
 * NDKCT_MR_FLAG_REMOTE_WRITE_BIT (AMB-03).
 */
#define NDK_MR_FLAG_ALLOW_LOCAL_READ 0x00000000u
#define NDK_MR_FLAG_ALLOW_LOCAL_WRITE 0x00000001u
#define NDK_MR_FLAG_ALLOW_REMOTE_READ 0x00000002u
#define NDK_MR_FLAG_ALLOW_REMOTE_WRITE 0x00000005u
#define NDK_MR_FLAG_RDMA_READ_SINK 0x00000008u

/* ndkct helpers, not NDKPI names: the bit that only remote write sets, and every documented bit
 * (anything outside the mask is an undocumented flag, AMB-04). */
#define NDKCT_MR_FLAG_REMOTE_WRITE_BIT 0x00000004u
#define NDKCT_MR_FLAGS_DOCUMENTED 0x0000000Fu

/*
 * Work-request Flags (NDK_OP_FLAG_*). Each initiator page documents the subset its call takes,
 * with values: nc-ndkpi-ndk_fn_send / _send_and_invalidate (SILENT_SUCCESS, READ_FENCE,
 * SEND_AND_SOLICIT_EVENT, INLINE, DEFER), _fast_register and _bind (ALLOW_* rights), _read,
 * _write, _invalidate. DEFER and RDMA_READ_LOCAL_INVALIDATE are NDKPI 1.2 and later.
 */
#define NDK_OP_FLAG_SILENT_SUCCESS 0x00000001u
#define NDK_OP_FLAG_READ_FENCE 0x00000002u
#define NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT 0x00000004u
#define NDK_OP_FLAG_ALLOW_REMOTE_READ 0x00000008u
#define NDK_OP_FLAG_ALLOW_LOCAL_WRITE 0x00000010u
/* 0x20 | ALLOW_LOCAL_WRITE, like the MR flag (AMB-03); NDKCT_OP_FLAG_REMOTE_WRITE_BIT is 0x20. */
#define NDK_OP_FLAG_ALLOW_REMOTE_WRITE 0x00000030u
#define NDK_OP_FLAG_INLINE 0x00000040u
/* Named by the FastRegister remarks and by NDK_ADAPTER_INFO, but in no Flags table; the value
 * is the header's (AMB-01). */
#define NDK_OP_FLAG_RDMA_READ_SINK 0x00000080u
/*
 * The NdkRead page lists 0x00000200 here, the value it also gives NDK_OP_FLAG_DEFER on the same
 * page. Two flags cannot share a bit, and the header has 0x100, so 0x100 it is; the page's
 * value is an erratum (AMB-02). A test must never set 0x200 expecting an invalidation.
 */
#define NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE 0x00000100u
#define NDK_OP_FLAG_DEFER 0x00000200u

/* ndkct helpers, not NDKPI names (see the MR helpers above). */
#define NDKCT_OP_FLAG_REMOTE_WRITE_BIT 0x00000020u
#define NDKCT_OP_FLAGS_DOCUMENTED 0x000003FFu

/* ================================ Common structures ================================ */

/* ddi/ns-ndkpi-_ndk_object_header_reserved_block: not the provider's. It zeroes the block when
 * it creates the object and must not touch it again until the object is closed. */
typedef struct _NDK_OBJECT_HEADER_RESERVED_BLOCK {
    PVOID rf[4];
} NDK_OBJECT_HEADER_RESERVED_BLOCK;

/* ddi/ns-ndkpi-_ndk_object_header: the first member (Header) of every NDK object. */
typedef struct _NDK_OBJECT_HEADER {
    NDK_VERSION Version;        /* the provider's negotiated version (1.1, 1.2, ...) */
    NDK_OBJECT_TYPE ObjectType; /* never NdkObjectTypeUndefined */
    NDK_OBJECT_HEADER_RESERVED_BLOCK NdkReserved;
} NDK_OBJECT_HEADER;

/* ddi/ns-ndkpi-_ndk_result: one completion, as NdkGetCqResults returns it. */
typedef struct _NDK_RESULT {
    NTSTATUS Status;
    ULONG BytesTransferred; /* defined for receive completions only */
    PVOID QPContext;
    PVOID RequestContext;
} NDK_RESULT;

/*
 * ddi/ns-ndkpi-_ndk_result_ex: NDK_RESULT plus the operation type (NdkGetCqResultsEx, 1.2+).
 * ProviderErrorCode is 2.1: it occupies what was padding after Type on 64-bit, so the 1.2
 * layout is unchanged there (on 32-bit the two layouts differ; ndkct is 64-bit only). It must
 * be zero when Status is STATUS_SUCCESS.
 */
typedef struct _NDK_RESULT_EX {
    NTSTATUS Status;
    ULONG BytesTransferred;
    PVOID QPContext;
    PVOID RequestContext;
    NDK_OPERATION_TYPE Type;
    ULONG ProviderErrorCode;
    ULONG_PTR TypeSpecificCompletionOutput; /* ReceiveAndInvalidate: the invalidated token */
} NDK_RESULT_EX;

/* An adapter (bus) logical address; ddi/ns-ndkpi-_ndk_logical_address_mapping defines it so. */
typedef PHYSICAL_ADDRESS NDK_LOGICAL_ADDRESS;

/*
 * ddi/ns-ndkpi-_ndk_logical_address_mapping: the result of NdkBuildLAM. AdapterPageArray
 * really has AdapterPageCount entries (one per PAGE_SIZE page); size buffers with
 * NDK_LOGICAL_ADDRESS_MAPPING_SIZE, which is how the header annotates the structure's size.
 */
typedef struct _NDK_LOGICAL_ADDRESS_MAPPING {
    PVOID AdapterContext; /* the provider's; the consumer must not change it */
    ULONG AdapterPageCount;
    NDK_LOGICAL_ADDRESS AdapterPageArray[1];
} NDK_LOGICAL_ADDRESS_MAPPING;

/* Bytes of an NDK_LOGICAL_ADDRESS_MAPPING holding PageCount pages (a SIZE_T expression). */
#define NDK_LOGICAL_ADDRESS_MAPPING_SIZE(PageCount)            \
    (offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) + \
     (SIZE_T)(PageCount) * sizeof(NDK_LOGICAL_ADDRESS))

/*
 * ddi/ns-ndkpi-_ndk_sge: one local buffer of a work request. The address is a logical address
 * when MemoryRegionToken is the PD's privileged token, else a virtual address inside a
 * registered region; with NDK_OP_FLAG_INLINE the token may be invalid and is ignored.
 */
typedef struct _NDK_SGE {
    union {
        PVOID VirtualAddress;
        NDK_LOGICAL_ADDRESS LogicalAddress;
    };
    ULONG Length;
    UINT32 MemoryRegionToken;
} NDK_SGE;

/* ddi/ns-ndkpi-_ndk_extension_interface: what NdkQueryExtension returns (no standard ones). */
typedef struct _NDK_EXTENSION_INTERFACE {
    const VOID* Dispatch;
} NDK_EXTENSION_INTERFACE;

/* The objects, defined with their dispatch tables at the end of this file. */
typedef struct _NDK_ADAPTER NDK_ADAPTER;
typedef struct _NDK_PD NDK_PD;
typedef struct _NDK_CQ NDK_CQ;
typedef struct _NDK_MR NDK_MR;
typedef struct _NDK_MW NDK_MW;
typedef struct _NDK_QP NDK_QP;
typedef struct _NDK_SRQ NDK_SRQ;
typedef struct _NDK_CONNECTOR NDK_CONNECTOR;
typedef struct _NDK_LISTENER NDK_LISTENER;
typedef struct _NDK_SHARED_ENDPOINT NDK_SHARED_ENDPOINT;

/* ============================ Callbacks the consumer implements ============================ */
/* Each from its ddi/nc-ndkpi-ndk_fn_* page; all may run at DISPATCH_LEVEL. */

/* Completes an asynchronous (STATUS_PENDING) request. */
typedef VOID NDK_FN_REQUEST_COMPLETION(PVOID Context /* opt */, NTSTATUS Status);

/* Completes an asynchronous create; pNdkObject is the new object's header. */
typedef VOID NDK_FN_CREATE_COMPLETION(PVOID Context /* opt */, NTSTATUS Status,
                                      NDK_OBJECT_HEADER* pNdkObject);

/* Completes an asynchronous close. A close never fails, so there is no status. */
typedef VOID NDK_FN_CLOSE_COMPLETION(PVOID Context /* opt */);

/* An armed CQ has something to report (CqStatus: success, or overrun / fatal error). */
typedef VOID NDK_FN_CQ_NOTIFICATION_CALLBACK(PVOID CqNotificationContext /* opt */,
                                             NTSTATUS CqStatus);

/* Fewer receives than NotifyThreshold remain queued on the SRQ, or it failed (SrqStatus). */
typedef VOID NDK_FN_SRQ_NOTIFICATION_CALLBACK(PVOID SrqNotificationContext /* opt */,
                                              NTSTATUS SrqStatus);

/* A listener received a connection request, represented by the new pNdkConnector. */
typedef VOID NDK_FN_CONNECT_EVENT_CALLBACK(PVOID ConnectEventContext /* opt */,
                                           NDK_CONNECTOR* pNdkConnector);

/* The peer disconnected (1.x; given to NdkAccept / NdkCompleteConnect). */
typedef VOID NDK_FN_DISCONNECT_EVENT_CALLBACK(PVOID DisconnectEventContext /* opt */);

/* The peer disconnected (2.1; given to the *Ex calls). Reason 0 = none given. */
typedef VOID NDK_FN_DISCONNECT_EVENT_CALLBACK_EX(PVOID DisconnectEventContext /* opt */,
                                                 ULONG ProviderDisconnectReason);

/* ============================ Functions the provider implements ============================ */
/* Each from its ddi/nc-ndkpi-ndk_fn_* page, grouped by the dispatch table that holds it. */

/* ---- Every object ---- */

/* Every table's Close entry (NdkCloseCq, NdkCloseQp, ...): SUCCESS or PENDING, never fails. */
typedef NTSTATUS NDK_FN_CLOSE_OBJECT(NDK_OBJECT_HEADER* pNdkObject,
                                     NDK_FN_CLOSE_COMPLETION* CloseCompletion,
                                     PVOID RequestContext /* opt */);

/* Every table's NdkQueryExtension entry. */
typedef NTSTATUS NDK_FN_QUERY_EXTENSION_INTERFACE(NDK_OBJECT_HEADER* pNdkObject,
                                                  GUID* ExtensionInterfaceID,
                                                  NDK_VERSION ExtensionInterfaceVersion,
                                                  NDK_EXTENSION_INTERFACE* pExtensionInterface);

/* ---- NDK_ADAPTER_DISPATCH ---- */

/* PASSIVE_LEVEL, blocking. *pBufferSize: buffer size in, bytes written (or needed) out. */
typedef NTSTATUS NDK_FN_QUERY_ADAPTER_INFO(NDK_ADAPTER* pNdkAdapter, NDK_ADAPTER_INFO* pInfo,
                                           ULONG* pBufferSize);

typedef NTSTATUS NDK_FN_CREATE_CQ(NDK_ADAPTER* pNdkAdapter, ULONG CqDepth,
                                  NDK_FN_CQ_NOTIFICATION_CALLBACK* CqNotification,
                                  PVOID CqNotificationContext /* opt */,
                                  GROUP_AFFINITY* Affinity /* opt */,
                                  NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                  PVOID RequestContext /* opt */, NDK_CQ** ppNdkCq);

typedef NTSTATUS NDK_FN_CREATE_PD(NDK_ADAPTER* pNdkAdapter,
                                  NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                  PVOID RequestContext /* opt */, NDK_PD** ppNdkPd);

typedef NTSTATUS NDK_FN_CREATE_SHARED_ENDPOINT(NDK_ADAPTER* pNdkAdapter, const PSOCKADDR pAddress,
                                               ULONG AddressLength,
                                               NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                               PVOID RequestContext /* opt */,
                                               NDK_SHARED_ENDPOINT** ppNdkSharedEndpoint);

typedef NTSTATUS NDK_FN_CREATE_CONNECTOR(NDK_ADAPTER* pNdkAdapter,
                                         NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                         PVOID RequestContext /* opt */,
                                         NDK_CONNECTOR** ppNdkConnector);

typedef NTSTATUS NDK_FN_CREATE_LISTENER(NDK_ADAPTER* pNdkAdapter,
                                        NDK_FN_CONNECT_EVENT_CALLBACK* ConnectEvent,
                                        PVOID ConnectEventContext /* opt */,
                                        NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                        PVOID RequestContext /* opt */,
                                        NDK_LISTENER** ppNdkListener);

/*
 * *pLAMSize: size of the pNdkLAM buffer in, bytes written (or needed) out. RequestCompletion is
 * [in] on the page and optional in the header (AMB-06).
 */
typedef NTSTATUS NDK_FN_BUILD_LAM(NDK_ADAPTER* pNdkAdapter, MDL* Mdl, SIZE_T Length,
                                  NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                                  PVOID RequestContext /* opt */,
                                  NDK_LOGICAL_ADDRESS_MAPPING* pNdkLAM, ULONG* pLAMSize,
                                  ULONG* pFBO /* out */);

typedef VOID NDK_FN_RELEASE_LAM(NDK_ADAPTER* pNdkAdapter, NDK_LOGICAL_ADDRESS_MAPPING* pNdkLAM);

/* ---- NDK_CQ_DISPATCH ---- */

typedef NTSTATUS NDK_FN_RESIZE_CQ(NDK_CQ* pNdkCq, ULONG CqDepth,
                                  NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                                  PVOID RequestContext /* opt */);

/* Type is one of NDK_CQ_NOTIFY_*. */
typedef VOID NDK_FN_ARM_CQ(NDK_CQ* pNdkCq, ULONG Type);

/* Returns the number of results removed (0 = the CQ was empty). */
typedef ULONG NDK_FN_GET_CQ_RESULTS(NDK_CQ* pNdkCq, NDK_RESULT Results[], ULONG nResults);

typedef NTSTATUS NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION(NDK_CQ* pNdkCq, ULONG ModerationInterval,
                                                        ULONG ModerationCount);

/* 1.2 and later. */
typedef ULONG NDK_FN_GET_CQ_RESULTS_EX(NDK_CQ* pNdkCq, NDK_RESULT_EX Results[], ULONG nResults);

/* ---- NDK_MR_DISPATCH ---- */

/* Flags: NDK_MR_FLAG_*. */
typedef NTSTATUS NDK_FN_REGISTER_MR(NDK_MR* pNdkMr, MDL* Mdl, SIZE_T Length, ULONG Flags,
                                    NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                                    PVOID RequestContext /* opt */);

typedef NTSTATUS NDK_FN_DEREGISTER_MR(NDK_MR* pNdkMr, NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                                      PVOID RequestContext /* opt */);

typedef NTSTATUS NDK_FN_INITIALIZE_FAST_REGISTER_MR(NDK_MR* pNdkMr, ULONG AdapterPageCount,
                                                    BOOLEAN RemoteAccess,
                                                    NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                                                    PVOID RequestContext /* opt */);

typedef UINT32 NDK_FN_GET_REMOTE_TOKEN_FROM_MR(NDK_MR* pNdkMr);

typedef UINT32 NDK_FN_GET_LOCAL_TOKEN_FROM_MR(NDK_MR* pNdkMr);

/* ---- NDK_MW_DISPATCH ---- */

typedef UINT32 NDK_FN_GET_REMOTE_TOKEN_FROM_MW(NDK_MW* pNdkMw);

/* ---- NDK_SRQ_DISPATCH ---- */

typedef NTSTATUS NDK_FN_MODIFY_SRQ(NDK_SRQ* pNdkSrq, ULONG SrqDepth, ULONG NotifyThreshold,
                                   NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                                   PVOID RequestContext /* opt */);

typedef NTSTATUS NDK_FN_SRQ_RECEIVE(NDK_SRQ* pNdkSrq, PVOID RequestContext /* opt */,
                                    const NDK_SGE* pSgl, ULONG nSge);

/* ---- NDK_QP_DISPATCH ---- */
/* Work requests: RequestContext comes back in the completion; Flags are NDK_OP_FLAG_*. */

typedef VOID NDK_FN_FLUSH(NDK_QP* pNdkQp);

typedef NTSTATUS NDK_FN_SEND(NDK_QP* pNdkQp, PVOID RequestContext /* opt */, const NDK_SGE* pSgl,
                             ULONG nSge, ULONG Flags);

typedef NTSTATUS NDK_FN_RECEIVE(NDK_QP* pNdkQp, PVOID RequestContext /* opt */, const NDK_SGE* pSgl,
                                ULONG nSge);

typedef NTSTATUS NDK_FN_BIND(NDK_QP* pNdkQp, PVOID RequestContext /* opt */, NDK_MR* pMr,
                             NDK_MW* pMw, PVOID VirtualAddress, SIZE_T Length, ULONG Flags);

typedef NTSTATUS NDK_FN_FAST_REGISTER(NDK_QP* pNdkQp, PVOID RequestContext /* opt */, NDK_MR* pMr,
                                      ULONG AdapterPageCount,
                                      const NDK_LOGICAL_ADDRESS* AdapterPageArray, ULONG FBO,
                                      SIZE_T Length, PVOID BaseVirtualAddress, ULONG Flags);

/* pNdkMrOrMw: the header of a fast-register NDK_MR or of an NDK_MW. */
typedef NTSTATUS NDK_FN_INVALIDATE(NDK_QP* pNdkQp, PVOID RequestContext /* opt */,
                                   NDK_OBJECT_HEADER* pNdkMrOrMw, ULONG Flags);

typedef NTSTATUS NDK_FN_READ(NDK_QP* pNdkQp, PVOID RequestContext /* opt */, const NDK_SGE* pSgl,
                             ULONG nSge, UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags);

typedef NTSTATUS NDK_FN_WRITE(NDK_QP* pNdkQp, PVOID RequestContext /* opt */, const NDK_SGE* pSgl,
                              ULONG nSge, UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags);

/* 1.2 and later (NDIS 6.40). Note Flags comes before RemoteToken here. */
typedef NTSTATUS NDK_FN_SEND_AND_INVALIDATE(NDK_QP* pNdkQp, PVOID RequestContext /* opt */,
                                            const NDK_SGE* pSgl, ULONG nSge, ULONG Flags,
                                            UINT32 RemoteToken);

/* ---- NDK_PD_DISPATCH ---- */

/* FastRegister: TRUE for an MR used with NdkInitializeFastRegisterMr / NdkFastRegister. */
typedef NTSTATUS NDK_FN_CREATE_MR(NDK_PD* pNdkPd, BOOLEAN FastRegister,
                                  NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                  PVOID RequestContext /* opt */, NDK_MR** ppNdkMr);

typedef NTSTATUS NDK_FN_CREATE_MW(NDK_PD* pNdkPd, NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                  PVOID RequestContext /* opt */, NDK_MW** ppNdkMw);

typedef NTSTATUS NDK_FN_CREATE_SRQ(NDK_PD* pNdkPd, ULONG SrqDepth, ULONG MaxReceiveRequestSge,
                                   ULONG NotifyThreshold,
                                   NDK_FN_SRQ_NOTIFICATION_CALLBACK* SrqNotification /* opt */,
                                   PVOID SrqNotificationContext /* opt */,
                                   GROUP_AFFINITY* Affinity /* opt */,
                                   NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                   PVOID RequestContext /* opt */, NDK_SRQ** ppNdkSrq);

typedef NTSTATUS NDK_FN_CREATE_QP(NDK_PD* pNdkPd, NDK_CQ* pReceiveCq, NDK_CQ* pInitiatorCq,
                                  PVOID QPContext /* opt */, ULONG ReceiveQueueDepth,
                                  ULONG InitiatorQueueDepth, ULONG MaxReceiveRequestSge,
                                  ULONG MaxInitiatorRequestSge, ULONG InlineDataSize,
                                  NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                  PVOID RequestContext /* opt */, NDK_QP** ppNdkQp);

typedef NTSTATUS NDK_FN_CREATE_QP_WITH_SRQ(NDK_PD* pNdkPd, NDK_CQ* pReceiveCq, NDK_CQ* pInitiatorCq,
                                           NDK_SRQ* pSrq, PVOID QPContext /* opt */,
                                           ULONG InitiatorQueueDepth, ULONG MaxInitiatorRequestSge,
                                           ULONG InlineDataSize,
                                           NDK_FN_CREATE_COMPLETION* CreateCompletion,
                                           PVOID RequestContext /* opt */, NDK_QP** ppNdkQp);

typedef VOID NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN(NDK_PD* pNdkPd, UINT32* pToken /* out */);

/* ---- NDK_SHARED_ENDPOINT_DISPATCH ---- */

/* *pAddressLength: buffer size in, address size out (also for the two connector getters). */
typedef NTSTATUS NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS(NDK_SHARED_ENDPOINT* pNdkSharedEndpoint,
                                                          PSOCKADDR pAddress,
                                                          ULONG* pAddressLength);

/* ---- NDK_CONNECTOR_DISPATCH ---- */

typedef NTSTATUS NDK_FN_CONNECT(NDK_CONNECTOR* pNdkConnector, NDK_QP* pNdkQp,
                                const PSOCKADDR pSrcAddress, ULONG SrcAddressLength,
                                const PSOCKADDR pDestAddress, ULONG DestAddressLength,
                                ULONG InboundReadLimit, ULONG OutboundReadLimit,
                                const PVOID pPrivateData /* opt */, ULONG PrivateDataLength,
                                NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                                PVOID RequestContext /* opt */);

typedef NTSTATUS NDK_FN_CONNECT_WITH_SHARED_ENDPOINT(
    NDK_CONNECTOR* pNdkConnector, NDK_QP* pNdkQp, NDK_SHARED_ENDPOINT* pNdkSharedEndpoint,
    const PSOCKADDR pDestAddress, ULONG DestAddressLength, ULONG InboundReadLimit,
    ULONG OutboundReadLimit, const PVOID pPrivateData /* opt */, ULONG PrivateDataLength,
    NDK_FN_REQUEST_COMPLETION* RequestCompletion, PVOID RequestContext /* opt */);

typedef NTSTATUS NDK_FN_COMPLETE_CONNECT(
    NDK_CONNECTOR* pNdkConnector, NDK_FN_DISCONNECT_EVENT_CALLBACK* DisconnectEvent /* opt */,
    PVOID DisconnectEventContext /* opt */, NDK_FN_REQUEST_COMPLETION* RequestCompletion,
    PVOID RequestContext /* opt */);

typedef NTSTATUS NDK_FN_ACCEPT(NDK_CONNECTOR* pNdkConnector, NDK_QP* pNdkQp, ULONG InboundReadLimit,
                               ULONG OutboundReadLimit, const PVOID pPrivateData /* opt */,
                               ULONG PrivateDataLength,
                               NDK_FN_DISCONNECT_EVENT_CALLBACK* DisconnectEvent /* opt */,
                               PVOID DisconnectEventContext /* opt */,
                               NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                               PVOID RequestContext /* opt */);

/* Synchronous: no completion callback. */
typedef NTSTATUS NDK_FN_REJECT(NDK_CONNECTOR* pNdkConnector, const PVOID pPrivateData /* opt */,
                               ULONG PrivateDataLength);

/* *pPrivateDataLength: buffer size in, required size out (NULL buffer + 0 = size query). */
typedef NTSTATUS NDK_FN_GET_CONNECTION_DATA(NDK_CONNECTOR* pNdkConnector,
                                            ULONG* pInboundReadLimit /* opt, out */,
                                            ULONG* pOutboundReadLimit /* opt, out */,
                                            PVOID pPrivateData, ULONG* pPrivateDataLength);

typedef NTSTATUS NDK_FN_GET_LOCAL_ADDRESS(NDK_CONNECTOR* pNdkConnector, PSOCKADDR pAddress,
                                          ULONG* pAddressLength);

typedef NTSTATUS NDK_FN_GET_PEER_ADDRESS(NDK_CONNECTOR* pNdkConnector, PSOCKADDR pAddress,
                                         ULONG* pAddressLength);

typedef NTSTATUS NDK_FN_DISCONNECT(NDK_CONNECTOR* pNdkConnector,
                                   NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                                   PVOID RequestContext /* opt */);

/* 2.1: as NdkCompleteConnect, with the disconnect callback that receives a reason. */
typedef NTSTATUS NDK_FN_COMPLETE_CONNECT_EX(
    NDK_CONNECTOR* pNdkConnector, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* DisconnectEvent /* opt */,
    PVOID DisconnectEventContext /* opt */, NDK_FN_REQUEST_COMPLETION* RequestCompletion,
    PVOID RequestContext /* opt */);

/* 2.1: as NdkAccept, with the disconnect callback that receives a reason. */
typedef NTSTATUS NDK_FN_ACCEPT_EX(NDK_CONNECTOR* pNdkConnector, NDK_QP* pNdkQp,
                                  ULONG InboundReadLimit, ULONG OutboundReadLimit,
                                  const PVOID pPrivateData /* opt */, ULONG PrivateDataLength,
                                  NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* DisconnectEvent /* opt */,
                                  PVOID DisconnectEventContext /* opt */,
                                  NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                                  PVOID RequestContext /* opt */);

/* ---- NDK_LISTENER_DISPATCH ---- */

typedef NTSTATUS NDK_FN_LISTEN(NDK_LISTENER* pNdkListener, const PSOCKADDR pAddress,
                               ULONG AddressLength, NDK_FN_REQUEST_COMPLETION* RequestCompletion,
                               PVOID RequestContext /* opt */);

typedef NTSTATUS NDK_FN_GET_LISTENER_LOCAL_ADDRESS(NDK_LISTENER* pNdkListener, PSOCKADDR pAddress,
                                                   ULONG* pAddressLength);

/* Pause TRUE holds back connect events; FALSE resumes them. */
typedef VOID NDK_FN_CONTROL_CONNECT_EVENTS(NDK_LISTENER* pNdkListener, BOOLEAN Pause);

/* ============================ Dispatch tables and objects ============================ */
/*
 * Member order is ABI: each table follows its ddi/ns-ndkpi-_ndk_*_dispatch page. Every object
 * is its NDK_OBJECT_HEADER followed by a pointer to its provider's table (ddi/ns-ndkpi-_ndk_*).
 */

/* No close entry: the adapter is closed through CLOSE_NDK_ADAPTER_HANDLER (AMB-19). */
typedef struct _NDK_ADAPTER_DISPATCH {
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_QUERY_ADAPTER_INFO* NdkQueryAdapterInfo;
    NDK_FN_CREATE_CQ* NdkCreateCq;
    NDK_FN_CREATE_PD* NdkCreatePd;
    NDK_FN_CREATE_SHARED_ENDPOINT* NdkCreateSharedEndpoint;
    NDK_FN_CREATE_CONNECTOR* NdkCreateConnector;
    NDK_FN_CREATE_LISTENER* NdkCreateListener;
    NDK_FN_BUILD_LAM* NdkBuildLAM;
    NDK_FN_RELEASE_LAM* NdkReleaseLAM;
} NDK_ADAPTER_DISPATCH;

struct _NDK_ADAPTER {
    NDK_OBJECT_HEADER Header;
    const NDK_ADAPTER_DISPATCH* Dispatch;
};

typedef struct _NDK_PD_DISPATCH {
    NDK_FN_CLOSE_OBJECT* NdkClosePd;
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_CREATE_MR* NdkCreateMr;
    NDK_FN_CREATE_MW* NdkCreateMw;
    NDK_FN_CREATE_SRQ* NdkCreateSrq;
    NDK_FN_CREATE_QP* NdkCreateQp;
    NDK_FN_CREATE_QP_WITH_SRQ* NdkCreateQpWithSrq;
    NDK_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN* NdkGetPrivilegedMemoryRegionToken;
} NDK_PD_DISPATCH;

struct _NDK_PD {
    NDK_OBJECT_HEADER Header;
    const NDK_PD_DISPATCH* Dispatch;
};

typedef struct _NDK_CQ_DISPATCH {
    NDK_FN_CLOSE_OBJECT* NdkCloseCq;
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_RESIZE_CQ* NdkResizeCq;
    NDK_FN_ARM_CQ* NdkArmCq;
    NDK_FN_GET_CQ_RESULTS* NdkGetCqResults;
    NDK_FN_CONTROL_CQ_INTERRUPT_MODERATION* NdkControlCqInterruptModeration;
    NDK_FN_GET_CQ_RESULTS_EX* NdkGetCqResultsEx; /* 1.2+ */
} NDK_CQ_DISPATCH;

struct _NDK_CQ {
    NDK_OBJECT_HEADER Header;
    const NDK_CQ_DISPATCH* Dispatch;
};

typedef struct _NDK_MR_DISPATCH {
    NDK_FN_CLOSE_OBJECT* NdkCloseMr;
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_REGISTER_MR* NdkRegisterMr;
    NDK_FN_DEREGISTER_MR* NdkDeregisterMr;
    NDK_FN_INITIALIZE_FAST_REGISTER_MR* NdkInitializeFastRegisterMr;
    NDK_FN_GET_REMOTE_TOKEN_FROM_MR* NdkGetRemoteTokenFromMr;
    NDK_FN_GET_LOCAL_TOKEN_FROM_MR* NdkGetLocalTokenFromMr;
} NDK_MR_DISPATCH;

struct _NDK_MR {
    NDK_OBJECT_HEADER Header;
    const NDK_MR_DISPATCH* Dispatch;
};

typedef struct _NDK_MW_DISPATCH {
    NDK_FN_CLOSE_OBJECT* NdkCloseMw;
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_GET_REMOTE_TOKEN_FROM_MW* NdkGetRemoteTokenFromMw;
} NDK_MW_DISPATCH;

struct _NDK_MW {
    NDK_OBJECT_HEADER Header;
    const NDK_MW_DISPATCH* Dispatch;
};

typedef struct _NDK_QP_DISPATCH {
    NDK_FN_CLOSE_OBJECT* NdkCloseQp;
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_FLUSH* NdkFlush;
    NDK_FN_SEND* NdkSend;
    NDK_FN_RECEIVE* NdkReceive;
    NDK_FN_BIND* NdkBind;
    NDK_FN_FAST_REGISTER* NdkFastRegister;
    NDK_FN_INVALIDATE* NdkInvalidate;
    NDK_FN_READ* NdkRead;
    NDK_FN_WRITE* NdkWrite;
    NDK_FN_SEND_AND_INVALIDATE* NdkSendAndInvalidate; /* 1.2+ */
} NDK_QP_DISPATCH;

struct _NDK_QP {
    NDK_OBJECT_HEADER Header;
    const NDK_QP_DISPATCH* Dispatch;
};

typedef struct _NDK_SRQ_DISPATCH {
    NDK_FN_CLOSE_OBJECT* NdkCloseSrq;
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_MODIFY_SRQ* NdkModifySrq;
    NDK_FN_SRQ_RECEIVE* NdkSrqReceive;
} NDK_SRQ_DISPATCH;

struct _NDK_SRQ {
    NDK_OBJECT_HEADER Header;
    const NDK_SRQ_DISPATCH* Dispatch;
};

typedef struct _NDK_CONNECTOR_DISPATCH {
    NDK_FN_CLOSE_OBJECT* NdkCloseConnector;
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_CONNECT* NdkConnect;
    NDK_FN_CONNECT_WITH_SHARED_ENDPOINT* NdkConnectWithSharedEndpoint;
    NDK_FN_COMPLETE_CONNECT* NdkCompleteConnect;
    NDK_FN_ACCEPT* NdkAccept;
    NDK_FN_REJECT* NdkReject;
    NDK_FN_GET_CONNECTION_DATA* NdkGetConnectionData;
    NDK_FN_GET_LOCAL_ADDRESS* NdkGetLocalAddress;
    NDK_FN_GET_PEER_ADDRESS* NdkGetPeerAddress;
    NDK_FN_DISCONNECT* NdkDisconnect;
    /* 2.1: appended, so 1.x consumers see the table they know. */
    NDK_FN_COMPLETE_CONNECT_EX* NdkCompleteConnectEx;
    NDK_FN_ACCEPT_EX* NdkAcceptEx;
} NDK_CONNECTOR_DISPATCH;

struct _NDK_CONNECTOR {
    NDK_OBJECT_HEADER Header;
    const NDK_CONNECTOR_DISPATCH* Dispatch;
};

typedef struct _NDK_LISTENER_DISPATCH {
    NDK_FN_CLOSE_OBJECT* NdkCloseListener;
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_LISTEN* NdkListen;
    NDK_FN_GET_LISTENER_LOCAL_ADDRESS* NdkGetLocalAddress;
    NDK_FN_CONTROL_CONNECT_EVENTS* NdkControlConnectEvents;
} NDK_LISTENER_DISPATCH;

struct _NDK_LISTENER {
    NDK_OBJECT_HEADER Header;
    const NDK_LISTENER_DISPATCH* Dispatch;
};

typedef struct _NDK_SHARED_ENDPOINT_DISPATCH {
    NDK_FN_CLOSE_OBJECT* NdkCloseSharedEndpoint;
    NDK_FN_QUERY_EXTENSION_INTERFACE* NdkQueryExtension;
    NDK_FN_GET_SHARED_ENDPOINT_LOCAL_ADDRESS* NdkGetLocalAddress;
} NDK_SHARED_ENDPOINT_DISPATCH;

struct _NDK_SHARED_ENDPOINT {
    NDK_OBJECT_HEADER Header;
    const NDK_SHARED_ENDPOINT_DISPATCH* Dispatch;
};

/* ================================ x64 layout pins ================================ */
/* Sizes the digest computed from the documented field lists; a table's size is 8 bytes per
 * documented member, so a missing or extra entry fails here. */

NDKCT_STATIC_ASSERT(sizeof(NDK_OBJECT_TYPE) == 4 && sizeof(NDK_OPERATION_TYPE) == 4,
                    "NDK enums are 4 bytes, as on MSVC");
NDKCT_STATIC_ASSERT(sizeof(NDK_OBJECT_HEADER) == 40, "NDK_OBJECT_HEADER is 40 bytes on x64");
NDKCT_STATIC_ASSERT(sizeof(NDK_RESULT) == 24, "NDK_RESULT is 24 bytes on x64");
NDKCT_STATIC_ASSERT(sizeof(NDK_RESULT_EX) == 40, "NDK_RESULT_EX is 40 bytes on x64");
NDKCT_STATIC_ASSERT(offsetof(NDK_RESULT_EX, TypeSpecificCompletionOutput) == 32,
                    "ProviderErrorCode must not move TypeSpecificCompletionOutput");
NDKCT_STATIC_ASSERT(sizeof(NDK_SGE) == 16, "NDK_SGE is 16 bytes on x64");
NDKCT_STATIC_ASSERT(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray) == 16,
                    "the LAM page array starts at offset 16 on x64");

#define NDKCT_ASSERT_OBJECT(T) \
    NDKCT_STATIC_ASSERT(sizeof(T) == 48 && offsetof(T, Dispatch) == 40, #T " is 48 bytes on x64")
NDKCT_ASSERT_OBJECT(NDK_ADAPTER);
NDKCT_ASSERT_OBJECT(NDK_PD);
NDKCT_ASSERT_OBJECT(NDK_CQ);
NDKCT_ASSERT_OBJECT(NDK_MR);
NDKCT_ASSERT_OBJECT(NDK_MW);
NDKCT_ASSERT_OBJECT(NDK_QP);
NDKCT_ASSERT_OBJECT(NDK_SRQ);
NDKCT_ASSERT_OBJECT(NDK_CONNECTOR);
NDKCT_ASSERT_OBJECT(NDK_LISTENER);
NDKCT_ASSERT_OBJECT(NDK_SHARED_ENDPOINT);
#undef NDKCT_ASSERT_OBJECT

#define NDKCT_ASSERT_TABLE(T, Entries) \
    NDKCT_STATIC_ASSERT(sizeof(T) == (Entries)*8, #T " has " #Entries " documented entries")
NDKCT_ASSERT_TABLE(NDK_ADAPTER_DISPATCH, 9);
NDKCT_ASSERT_TABLE(NDK_PD_DISPATCH, 8);
NDKCT_ASSERT_TABLE(NDK_CQ_DISPATCH, 7);
NDKCT_ASSERT_TABLE(NDK_MR_DISPATCH, 7);
NDKCT_ASSERT_TABLE(NDK_MW_DISPATCH, 3);
NDKCT_ASSERT_TABLE(NDK_QP_DISPATCH, 11);
NDKCT_ASSERT_TABLE(NDK_SRQ_DISPATCH, 4);
NDKCT_ASSERT_TABLE(NDK_CONNECTOR_DISPATCH, 13);
NDKCT_ASSERT_TABLE(NDK_LISTENER_DISPATCH, 5);
NDKCT_ASSERT_TABLE(NDK_SHARED_ENDPOINT_DISPATCH, 3);
#undef NDKCT_ASSERT_TABLE

NDKCT_EXTERN_C_END

#endif /* NDKCT_NDKPI_H */
