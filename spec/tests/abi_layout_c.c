/*
 * spec/tests/abi_layout_c.c: checks ndkct/ndkpi.h against the x64 layout the digest gives.
 *
 * Build: C11, -Wall -Wextra -Wpedantic -Werror. Every row of ABI_LAYOUT_CHECKS is a static
 * assert (the build fails on a layout slip) and is evaluated again at run time, so the run
 * reports how many were checked. The dispatch rows pin each documented member to its slot:
 * a renamed, missing or reordered entry fails by name.
 *
 * The file is written in the common subset of C11 and C++20: abi_layout_cpp.cpp includes it
 * with ABI_LAYOUT_SHARED_ONLY defined, so both languages check the very same list.
 */
#include <stdio.h>
#include <string.h>

#include "ndkct/ndkpi.h"

/* X(actual, expected): every x64 size and offset ndkct relies on. */
#define ABI_LAYOUT_CHECKS(X)                                                      \
    /* ndkinfo.h (sdk/ns-ndkinfo-ndk_version, sdk/ns-ndkinfo-ndk_adapter_info) */ \
    X(sizeof(NDK_VERSION), 4)                                                     \
    X(offsetof(NDK_VERSION, Minor), 2)                                            \
    X(sizeof(NDK_RDMA_TECHNOLOGY), 4)                                             \
    X(sizeof(NDK_ADAPTER_INFO), 104)                                              \
    X(offsetof(NDK_ADAPTER_INFO, VendorId), 4)                                    \
    X(offsetof(NDK_ADAPTER_INFO, DeviceId), 8)                                    \
    X(offsetof(NDK_ADAPTER_INFO, MaxRegistrationSize), 16)                        \
    X(offsetof(NDK_ADAPTER_INFO, MaxWindowSize), 24)                              \
    X(offsetof(NDK_ADAPTER_INFO, FRMRPageCount), 32)                              \
    X(offsetof(NDK_ADAPTER_INFO, MaxCqDepth), 76)                                 \
    X(offsetof(NDK_ADAPTER_INFO, AdapterFlags), 92)                               \
    X(offsetof(NDK_ADAPTER_INFO, RdmaTechnology), 96)                             \
    X(NDK_ADAPTER_INFO_V1_SIZE, 96)                                               \
    /* Common structures */                                                       \
    X(sizeof(NDK_OBJECT_TYPE), 4)                                                 \
    X(sizeof(NDK_OPERATION_TYPE), 4)                                              \
    X(sizeof(NDK_OBJECT_HEADER_RESERVED_BLOCK), 32)                               \
    X(sizeof(NDK_OBJECT_HEADER), 40)                                              \
    X(offsetof(NDK_OBJECT_HEADER, ObjectType), 4)                                 \
    X(offsetof(NDK_OBJECT_HEADER, NdkReserved), 8)                                \
    X(sizeof(NDK_RESULT), 24)                                                     \
    X(offsetof(NDK_RESULT, BytesTransferred), 4)                                  \
    X(offsetof(NDK_RESULT, QPContext), 8)                                         \
    X(offsetof(NDK_RESULT, RequestContext), 16)                                   \
    X(sizeof(NDK_RESULT_EX), 40)                                                  \
    X(offsetof(NDK_RESULT_EX, RequestContext), 16)                                \
    X(offsetof(NDK_RESULT_EX, Type), 24)                                          \
    X(offsetof(NDK_RESULT_EX, ProviderErrorCode), 28)                             \
    X(offsetof(NDK_RESULT_EX, TypeSpecificCompletionOutput), 32)                  \
    X(sizeof(NDK_LOGICAL_ADDRESS), 8)                                             \
    X(sizeof(NDK_SGE), 16)                                                        \
    X(offsetof(NDK_SGE, VirtualAddress), 0)                                       \
    X(offsetof(NDK_SGE, LogicalAddress), 0)                                       \
    X(offsetof(NDK_SGE, Length), 8)                                               \
    X(offsetof(NDK_SGE, MemoryRegionToken), 12)                                   \
    X(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageCount), 8)                 \
    X(offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray), 16)                \
    X(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(0), 16)                                    \
    X(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(1), 24)                                    \
    X(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(16), 144)                                  \
    X(sizeof(NDK_EXTENSION_INTERFACE), 8)                                         \
    /* Objects: header, then the dispatch pointer */                              \
    X(sizeof(NDK_ADAPTER), 48)                                                    \
    X(sizeof(NDK_PD), 48)                                                         \
    X(sizeof(NDK_CQ), 48)                                                         \
    X(sizeof(NDK_MR), 48)                                                         \
    X(sizeof(NDK_MW), 48)                                                         \
    X(sizeof(NDK_QP), 48)                                                         \
    X(sizeof(NDK_SRQ), 48)                                                        \
    X(sizeof(NDK_CONNECTOR), 48)                                                  \
    X(sizeof(NDK_LISTENER), 48)                                                   \
    X(sizeof(NDK_SHARED_ENDPOINT), 48)                                            \
    X(offsetof(NDK_QP, Dispatch), 40)                                             \
    /* NDK_ADAPTER_DISPATCH (ddi/ns-ndkpi-_ndk_adapter_dispatch) */               \
    X(sizeof(NDK_ADAPTER_DISPATCH), 9 * 8)                                        \
    X(offsetof(NDK_ADAPTER_DISPATCH, NdkQueryExtension), 0 * 8)                   \
    X(offsetof(NDK_ADAPTER_DISPATCH, NdkQueryAdapterInfo), 1 * 8)                 \
    X(offsetof(NDK_ADAPTER_DISPATCH, NdkCreateCq), 2 * 8)                         \
    X(offsetof(NDK_ADAPTER_DISPATCH, NdkCreatePd), 3 * 8)                         \
    X(offsetof(NDK_ADAPTER_DISPATCH, NdkCreateSharedEndpoint), 4 * 8)             \
    X(offsetof(NDK_ADAPTER_DISPATCH, NdkCreateConnector), 5 * 8)                  \
    X(offsetof(NDK_ADAPTER_DISPATCH, NdkCreateListener), 6 * 8)                   \
    X(offsetof(NDK_ADAPTER_DISPATCH, NdkBuildLAM), 7 * 8)                         \
    X(offsetof(NDK_ADAPTER_DISPATCH, NdkReleaseLAM), 8 * 8)                       \
    /* NDK_PD_DISPATCH */                                                         \
    X(sizeof(NDK_PD_DISPATCH), 8 * 8)                                             \
    X(offsetof(NDK_PD_DISPATCH, NdkClosePd), 0 * 8)                               \
    X(offsetof(NDK_PD_DISPATCH, NdkQueryExtension), 1 * 8)                        \
    X(offsetof(NDK_PD_DISPATCH, NdkCreateMr), 2 * 8)                              \
    X(offsetof(NDK_PD_DISPATCH, NdkCreateMw), 3 * 8)                              \
    X(offsetof(NDK_PD_DISPATCH, NdkCreateSrq), 4 * 8)                             \
    X(offsetof(NDK_PD_DISPATCH, NdkCreateQp), 5 * 8)                              \
    X(offsetof(NDK_PD_DISPATCH, NdkCreateQpWithSrq), 6 * 8)                       \
    X(offsetof(NDK_PD_DISPATCH, NdkGetPrivilegedMemoryRegionToken), 7 * 8)        \
    /* NDK_CQ_DISPATCH */                                                         \
    X(sizeof(NDK_CQ_DISPATCH), 7 * 8)                                             \
    X(offsetof(NDK_CQ_DISPATCH, NdkCloseCq), 0 * 8)                               \
    X(offsetof(NDK_CQ_DISPATCH, NdkQueryExtension), 1 * 8)                        \
    X(offsetof(NDK_CQ_DISPATCH, NdkResizeCq), 2 * 8)                              \
    X(offsetof(NDK_CQ_DISPATCH, NdkArmCq), 3 * 8)                                 \
    X(offsetof(NDK_CQ_DISPATCH, NdkGetCqResults), 4 * 8)                          \
    X(offsetof(NDK_CQ_DISPATCH, NdkControlCqInterruptModeration), 5 * 8)          \
    X(offsetof(NDK_CQ_DISPATCH, NdkGetCqResultsEx), 6 * 8)                        \
    /* NDK_MR_DISPATCH */                                                         \
    X(sizeof(NDK_MR_DISPATCH), 7 * 8)                                             \
    X(offsetof(NDK_MR_DISPATCH, NdkCloseMr), 0 * 8)                               \
    X(offsetof(NDK_MR_DISPATCH, NdkQueryExtension), 1 * 8)                        \
    X(offsetof(NDK_MR_DISPATCH, NdkRegisterMr), 2 * 8)                            \
    X(offsetof(NDK_MR_DISPATCH, NdkDeregisterMr), 3 * 8)                          \
    X(offsetof(NDK_MR_DISPATCH, NdkInitializeFastRegisterMr), 4 * 8)              \
    X(offsetof(NDK_MR_DISPATCH, NdkGetRemoteTokenFromMr), 5 * 8)                  \
    X(offsetof(NDK_MR_DISPATCH, NdkGetLocalTokenFromMr), 6 * 8)                   \
    /* NDK_MW_DISPATCH */                                                         \
    X(sizeof(NDK_MW_DISPATCH), 3 * 8)                                             \
    X(offsetof(NDK_MW_DISPATCH, NdkCloseMw), 0 * 8)                               \
    X(offsetof(NDK_MW_DISPATCH, NdkQueryExtension), 1 * 8)                        \
    X(offsetof(NDK_MW_DISPATCH, NdkGetRemoteTokenFromMw), 2 * 8)                  \
    /* NDK_QP_DISPATCH */                                                         \
    X(sizeof(NDK_QP_DISPATCH), 11 * 8)                                            \
    X(offsetof(NDK_QP_DISPATCH, NdkCloseQp), 0 * 8)                               \
    X(offsetof(NDK_QP_DISPATCH, NdkQueryExtension), 1 * 8)                        \
    X(offsetof(NDK_QP_DISPATCH, NdkFlush), 2 * 8)                                 \
    X(offsetof(NDK_QP_DISPATCH, NdkSend), 3 * 8)                                  \
    X(offsetof(NDK_QP_DISPATCH, NdkReceive), 4 * 8)                               \
    X(offsetof(NDK_QP_DISPATCH, NdkBind), 5 * 8)                                  \
    X(offsetof(NDK_QP_DISPATCH, NdkFastRegister), 6 * 8)                          \
    X(offsetof(NDK_QP_DISPATCH, NdkInvalidate), 7 * 8)                            \
    X(offsetof(NDK_QP_DISPATCH, NdkRead), 8 * 8)                                  \
    X(offsetof(NDK_QP_DISPATCH, NdkWrite), 9 * 8)                                 \
    X(offsetof(NDK_QP_DISPATCH, NdkSendAndInvalidate), 10 * 8)                    \
    /* NDK_SRQ_DISPATCH */                                                        \
    X(sizeof(NDK_SRQ_DISPATCH), 4 * 8)                                            \
    X(offsetof(NDK_SRQ_DISPATCH, NdkCloseSrq), 0 * 8)                             \
    X(offsetof(NDK_SRQ_DISPATCH, NdkQueryExtension), 1 * 8)                       \
    X(offsetof(NDK_SRQ_DISPATCH, NdkModifySrq), 2 * 8)                            \
    X(offsetof(NDK_SRQ_DISPATCH, NdkSrqReceive), 3 * 8)                           \
    /* NDK_CONNECTOR_DISPATCH (the two 2.1 entries last) */                       \
    X(sizeof(NDK_CONNECTOR_DISPATCH), 13 * 8)                                     \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkCloseConnector), 0 * 8)                 \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkQueryExtension), 1 * 8)                 \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkConnect), 2 * 8)                        \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkConnectWithSharedEndpoint), 3 * 8)      \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkCompleteConnect), 4 * 8)                \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkAccept), 5 * 8)                         \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkReject), 6 * 8)                         \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkGetConnectionData), 7 * 8)              \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkGetLocalAddress), 8 * 8)                \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkGetPeerAddress), 9 * 8)                 \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkDisconnect), 10 * 8)                    \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkCompleteConnectEx), 11 * 8)             \
    X(offsetof(NDK_CONNECTOR_DISPATCH, NdkAcceptEx), 12 * 8)                      \
    /* NDK_LISTENER_DISPATCH */                                                   \
    X(sizeof(NDK_LISTENER_DISPATCH), 5 * 8)                                       \
    X(offsetof(NDK_LISTENER_DISPATCH, NdkCloseListener), 0 * 8)                   \
    X(offsetof(NDK_LISTENER_DISPATCH, NdkQueryExtension), 1 * 8)                  \
    X(offsetof(NDK_LISTENER_DISPATCH, NdkListen), 2 * 8)                          \
    X(offsetof(NDK_LISTENER_DISPATCH, NdkGetLocalAddress), 3 * 8)                 \
    X(offsetof(NDK_LISTENER_DISPATCH, NdkControlConnectEvents), 4 * 8)            \
    /* NDK_SHARED_ENDPOINT_DISPATCH */                                            \
    X(sizeof(NDK_SHARED_ENDPOINT_DISPATCH), 3 * 8)                                \
    X(offsetof(NDK_SHARED_ENDPOINT_DISPATCH, NdkCloseSharedEndpoint), 0 * 8)      \
    X(offsetof(NDK_SHARED_ENDPOINT_DISPATCH, NdkQueryExtension), 1 * 8)           \
    X(offsetof(NDK_SHARED_ENDPOINT_DISPATCH, NdkGetLocalAddress), 2 * 8)

#define ABI_STATIC_CHECK(actual, expected) \
    NDKCT_STATIC_ASSERT((actual) == (expected), #actual " == " #expected);
ABI_LAYOUT_CHECKS(ABI_STATIC_CHECK)
#undef ABI_STATIC_CHECK

typedef struct AbiLayoutRow {
    const char* Actual;
    const char* Expected;
    size_t ActualValue;
    size_t ExpectedValue;
} AbiLayoutRow;

#define ABI_ROW(actual, expected) {#actual, #expected, (size_t)(actual), (size_t)(expected)},
static const AbiLayoutRow abi_layout_rows[] = {ABI_LAYOUT_CHECKS(ABI_ROW)};
#undef ABI_ROW

/* ---- Run-time checks: counted, reported by line, never abort ---- */

static unsigned abi_passed;
static unsigned abi_failed;

static void abi_expect(int ok, const char* what, int line) {
    if (ok) {
        ++abi_passed;
    } else {
        ++abi_failed;
        fprintf(stderr, "abi_layout:%d: FAILED: %s\n", line, what);
    }
}
#define ABI_EXPECT(cond) abi_expect((cond) ? 1 : 0, #cond, __LINE__)

/* ---- A provider-style QP dispatch table built from stubs ----
 * Each stub is declared through its NDK_FN_* function type, so the compiler checks the
 * definition against the documented signature; the table is filled by member name. */

enum {
    QP_CALL_CLOSE = 1 << 0,
    QP_CALL_QUERY_EXTENSION = 1 << 1,
    QP_CALL_FLUSH = 1 << 2,
    QP_CALL_SEND = 1 << 3,
    QP_CALL_RECEIVE = 1 << 4,
    QP_CALL_BIND = 1 << 5,
    QP_CALL_FAST_REGISTER = 1 << 6,
    QP_CALL_INVALIDATE = 1 << 7,
    QP_CALL_READ = 1 << 8,
    QP_CALL_WRITE = 1 << 9,
    QP_CALL_SEND_AND_INVALIDATE = 1 << 10,
    QP_CALL_ALL = (1 << 11) - 1
};

static unsigned qp_calls;
static NDK_FN_CLOSE_COMPLETION* qp_close_completion_seen;

/* What the FastRegister stub received, to prove the parameter order end to end. */
static struct {
    NDK_QP* pNdkQp;
    PVOID RequestContext;
    NDK_MR* pMr;
    ULONG AdapterPageCount;
    const NDK_LOGICAL_ADDRESS* AdapterPageArray;
    ULONG FBO;
    SIZE_T Length;
    PVOID BaseVirtualAddress;
    ULONG Flags;
} fast_register_seen;

static NDK_FN_CLOSE_OBJECT stub_close_qp;
static NDK_FN_QUERY_EXTENSION_INTERFACE stub_query_extension;
static NDK_FN_FLUSH stub_flush;
static NDK_FN_SEND stub_send;
static NDK_FN_RECEIVE stub_receive;
static NDK_FN_BIND stub_bind;
static NDK_FN_FAST_REGISTER stub_fast_register;
static NDK_FN_INVALIDATE stub_invalidate;
static NDK_FN_READ stub_read;
static NDK_FN_WRITE stub_write;
static NDK_FN_SEND_AND_INVALIDATE stub_send_and_invalidate;
static NDK_FN_CLOSE_COMPLETION on_close_done;

static NTSTATUS stub_close_qp(NDK_OBJECT_HEADER* pNdkObject,
                              NDK_FN_CLOSE_COMPLETION* CloseCompletion, PVOID RequestContext) {
    (void)pNdkObject;
    (void)RequestContext;
    qp_close_completion_seen = CloseCompletion;
    qp_calls |= QP_CALL_CLOSE;
    return STATUS_SUCCESS;
}

static NTSTATUS stub_query_extension(NDK_OBJECT_HEADER* pNdkObject, GUID* ExtensionInterfaceID,
                                     NDK_VERSION ExtensionInterfaceVersion,
                                     NDK_EXTENSION_INTERFACE* pExtensionInterface) {
    (void)pNdkObject;
    (void)ExtensionInterfaceID;
    (void)ExtensionInterfaceVersion;
    (void)pExtensionInterface;
    qp_calls |= QP_CALL_QUERY_EXTENSION;
    return STATUS_NOT_SUPPORTED;
}

static VOID stub_flush(NDK_QP* pNdkQp) {
    (void)pNdkQp;
    qp_calls |= QP_CALL_FLUSH;
}

static NTSTATUS stub_send(NDK_QP* pNdkQp, PVOID RequestContext, const NDK_SGE* pSgl, ULONG nSge,
                          ULONG Flags) {
    (void)pNdkQp;
    (void)RequestContext;
    (void)pSgl;
    (void)nSge;
    (void)Flags;
    qp_calls |= QP_CALL_SEND;
    return STATUS_SUCCESS;
}

static NTSTATUS stub_receive(NDK_QP* pNdkQp, PVOID RequestContext, const NDK_SGE* pSgl,
                             ULONG nSge) {
    (void)pNdkQp;
    (void)RequestContext;
    (void)pSgl;
    (void)nSge;
    qp_calls |= QP_CALL_RECEIVE;
    return STATUS_SUCCESS;
}

static NTSTATUS stub_bind(NDK_QP* pNdkQp, PVOID RequestContext, NDK_MR* pMr, NDK_MW* pMw,
                          PVOID VirtualAddress, SIZE_T Length, ULONG Flags) {
    (void)pNdkQp;
    (void)RequestContext;
    (void)pMr;
    (void)pMw;
    (void)VirtualAddress;
    (void)Length;
    (void)Flags;
    qp_calls |= QP_CALL_BIND;
    return STATUS_SUCCESS;
}

static NTSTATUS stub_fast_register(NDK_QP* pNdkQp, PVOID RequestContext, NDK_MR* pMr,
                                   ULONG AdapterPageCount,
                                   const NDK_LOGICAL_ADDRESS* AdapterPageArray, ULONG FBO,
                                   SIZE_T Length, PVOID BaseVirtualAddress, ULONG Flags) {
    fast_register_seen.pNdkQp = pNdkQp;
    fast_register_seen.RequestContext = RequestContext;
    fast_register_seen.pMr = pMr;
    fast_register_seen.AdapterPageCount = AdapterPageCount;
    fast_register_seen.AdapterPageArray = AdapterPageArray;
    fast_register_seen.FBO = FBO;
    fast_register_seen.Length = Length;
    fast_register_seen.BaseVirtualAddress = BaseVirtualAddress;
    fast_register_seen.Flags = Flags;
    qp_calls |= QP_CALL_FAST_REGISTER;
    return STATUS_SUCCESS;
}

static NTSTATUS stub_invalidate(NDK_QP* pNdkQp, PVOID RequestContext, NDK_OBJECT_HEADER* pNdkMrOrMw,
                                ULONG Flags) {
    (void)pNdkQp;
    (void)RequestContext;
    (void)pNdkMrOrMw;
    (void)Flags;
    qp_calls |= QP_CALL_INVALIDATE;
    return STATUS_SUCCESS;
}

static NTSTATUS stub_read(NDK_QP* pNdkQp, PVOID RequestContext, const NDK_SGE* pSgl, ULONG nSge,
                          UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags) {
    (void)pNdkQp;
    (void)RequestContext;
    (void)pSgl;
    (void)nSge;
    (void)RemoteAddress;
    (void)RemoteToken;
    (void)Flags;
    qp_calls |= QP_CALL_READ;
    return STATUS_SUCCESS;
}

static NTSTATUS stub_write(NDK_QP* pNdkQp, PVOID RequestContext, const NDK_SGE* pSgl, ULONG nSge,
                           UINT64 RemoteAddress, UINT32 RemoteToken, ULONG Flags) {
    (void)pNdkQp;
    (void)RequestContext;
    (void)pSgl;
    (void)nSge;
    (void)RemoteAddress;
    (void)RemoteToken;
    (void)Flags;
    qp_calls |= QP_CALL_WRITE;
    return STATUS_SUCCESS;
}

static NTSTATUS stub_send_and_invalidate(NDK_QP* pNdkQp, PVOID RequestContext, const NDK_SGE* pSgl,
                                         ULONG nSge, ULONG Flags, UINT32 RemoteToken) {
    (void)pNdkQp;
    (void)RequestContext;
    (void)pSgl;
    (void)nSge;
    (void)Flags;
    (void)RemoteToken;
    qp_calls |= QP_CALL_SEND_AND_INVALIDATE;
    return STATUS_SUCCESS;
}

static VOID on_close_done(PVOID Context) {
    (void)Context;
}

/* Designated initializers, in documented order (C++20 requires the order; C does not). */
static const NDK_QP_DISPATCH stub_qp_dispatch = {
    .NdkCloseQp = stub_close_qp,
    .NdkQueryExtension = stub_query_extension,
    .NdkFlush = stub_flush,
    .NdkSend = stub_send,
    .NdkReceive = stub_receive,
    .NdkBind = stub_bind,
    .NdkFastRegister = stub_fast_register,
    .NdkInvalidate = stub_invalidate,
    .NdkRead = stub_read,
    .NdkWrite = stub_write,
    .NdkSendAndInvalidate = stub_send_and_invalidate,
};

/* Calls every entry of the table through a QP object, as a consumer would. */
static void check_qp_dispatch(void) {
    NDK_QP qp;
    NDK_MR mr;
    NDK_MW mw;
    NDK_SGE sge;
    NDK_EXTENSION_INTERFACE extension;
    GUID guid;
    NDK_LOGICAL_ADDRESS pages[2];
    int request_context = 0;
    char buffer[64];

    memset(&qp, 0, sizeof qp);
    memset(&mr, 0, sizeof mr);
    memset(&mw, 0, sizeof mw);
    memset(&sge, 0, sizeof sge);
    memset(&extension, 0, sizeof extension);
    memset(&guid, 0, sizeof guid);
    memset(pages, 0, sizeof pages);
    qp.Header.Version = NDKCT_MAKE_VERSION(NDK_VERSION_1_2_MAJOR, NDK_VERSION_1_2_MINOR);
    qp.Header.ObjectType = NdkObjectTypeQp;
    qp.Dispatch = &stub_qp_dispatch;
    mr.Header.ObjectType = NdkObjectTypeMr;
    pages[0].QuadPart = 0x10000;
    pages[1].QuadPart = 0x7000;
    sge.VirtualAddress = buffer;
    sge.Length = sizeof buffer;

    qp_calls = 0;
    ABI_EXPECT(qp.Dispatch->NdkFastRegister(&qp, &request_context, &mr, 2, pages, 0x123, 5000,
                                            (PVOID)(ULONG_PTR)0x40123,
                                            NDK_OP_FLAG_ALLOW_REMOTE_WRITE) == STATUS_SUCCESS);
    ABI_EXPECT(fast_register_seen.pNdkQp == &qp);
    ABI_EXPECT(fast_register_seen.RequestContext == &request_context);
    ABI_EXPECT(fast_register_seen.pMr == &mr);
    ABI_EXPECT(fast_register_seen.AdapterPageCount == 2);
    ABI_EXPECT(fast_register_seen.AdapterPageArray == pages);
    ABI_EXPECT(fast_register_seen.FBO == 0x123);
    ABI_EXPECT(fast_register_seen.Length == 5000);
    ABI_EXPECT(fast_register_seen.BaseVirtualAddress == (PVOID)(ULONG_PTR)0x40123);
    ABI_EXPECT(fast_register_seen.Flags == NDK_OP_FLAG_ALLOW_REMOTE_WRITE);

    ABI_EXPECT(qp.Dispatch->NdkQueryExtension(&qp.Header, &guid, NDKCT_MAKE_VERSION(1, 0),
                                              &extension) == STATUS_NOT_SUPPORTED);
    qp.Dispatch->NdkFlush(&qp);
    ABI_EXPECT(qp.Dispatch->NdkSend(&qp, NULL, &sge, 1, NDK_OP_FLAG_INLINE) == STATUS_SUCCESS);
    ABI_EXPECT(qp.Dispatch->NdkReceive(&qp, NULL, &sge, 1) == STATUS_SUCCESS);
    ABI_EXPECT(qp.Dispatch->NdkBind(&qp, NULL, &mr, &mw, buffer, sizeof buffer,
                                    NDK_OP_FLAG_ALLOW_REMOTE_READ) == STATUS_SUCCESS);
    ABI_EXPECT(qp.Dispatch->NdkInvalidate(&qp, NULL, &mr.Header, 0) == STATUS_SUCCESS);
    ABI_EXPECT(qp.Dispatch->NdkRead(&qp, NULL, &sge, 1, 0x1000, 7, NDK_OP_FLAG_READ_FENCE) ==
               STATUS_SUCCESS);
    ABI_EXPECT(qp.Dispatch->NdkWrite(&qp, NULL, &sge, 1, 0x1000, 7, 0) == STATUS_SUCCESS);
    ABI_EXPECT(qp.Dispatch->NdkSendAndInvalidate(&qp, NULL, &sge, 1, 0, 7) == STATUS_SUCCESS);
    ABI_EXPECT(qp.Dispatch->NdkCloseQp(&qp.Header, on_close_done, NULL) == STATUS_SUCCESS);
    ABI_EXPECT(qp_close_completion_seen == on_close_done);
    /* Every entry reached its own stub: no slot is NULL or shared. */
    ABI_EXPECT(qp_calls == QP_CALL_ALL);
}

/* ---- Flag values: the relations the documentation implies (section 2 of the digest) ---- */

static int is_single_bit(ULONG Value) {
    return Value != 0 && (Value & (Value - 1)) == 0;
}

static void check_flags(void) {
    static const ULONG op_single_bits[] = {
        NDK_OP_FLAG_SILENT_SUCCESS,
        NDK_OP_FLAG_READ_FENCE,
        NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT,
        NDK_OP_FLAG_ALLOW_REMOTE_READ,
        NDK_OP_FLAG_ALLOW_LOCAL_WRITE,
        NDK_OP_FLAG_INLINE,
        NDK_OP_FLAG_RDMA_READ_SINK,
        NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE,
        NDK_OP_FLAG_DEFER,
    };
    static const ULONG adapter_flags[] = {
        NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED,
        NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED,
        NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED,
        NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED,
        NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED,
        NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED,
        NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED,
    };
    ULONG seen = 0;
    int disjoint = 1;
    size_t i;

    /* Remote write always carries local write (AMB-03). */
    ABI_EXPECT((NDK_MR_FLAG_ALLOW_REMOTE_WRITE & NDK_MR_FLAG_ALLOW_LOCAL_WRITE) != 0);
    ABI_EXPECT((NDK_MR_FLAG_ALLOW_REMOTE_WRITE & ~NDK_MR_FLAG_ALLOW_LOCAL_WRITE) ==
               NDKCT_MR_FLAG_REMOTE_WRITE_BIT);
    ABI_EXPECT((NDK_OP_FLAG_ALLOW_REMOTE_WRITE & NDK_OP_FLAG_ALLOW_LOCAL_WRITE) != 0);
    ABI_EXPECT((NDK_OP_FLAG_ALLOW_REMOTE_WRITE & ~NDK_OP_FLAG_ALLOW_LOCAL_WRITE) ==
               NDKCT_OP_FLAG_REMOTE_WRITE_BIT);
    ABI_EXPECT(NDK_MR_FLAG_ALLOW_LOCAL_READ == 0);
    ABI_EXPECT((NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK) ==
               NDKCT_MR_FLAGS_DOCUMENTED);

    /* The NdkRead page's 0x200 for RDMA_READ_LOCAL_INVALIDATE would collide with DEFER (AMB-02). */
    ABI_EXPECT(NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE != NDK_OP_FLAG_DEFER);
    for (i = 0; i < sizeof op_single_bits / sizeof op_single_bits[0]; ++i) {
        if (!is_single_bit(op_single_bits[i]) || (seen & op_single_bits[i]) != 0) disjoint = 0;
        seen |= op_single_bits[i];
    }
    ABI_EXPECT(disjoint);
    ABI_EXPECT((seen | NDK_OP_FLAG_ALLOW_REMOTE_WRITE) == NDKCT_OP_FLAGS_DOCUMENTED);

    seen = 0;
    disjoint = 1;
    for (i = 0; i < sizeof adapter_flags / sizeof adapter_flags[0]; ++i) {
        if (!is_single_bit(adapter_flags[i]) || (seen & adapter_flags[i]) != 0) disjoint = 0;
        seen |= adapter_flags[i];
    }
    ABI_EXPECT(disjoint);

    ABI_EXPECT(NDK_CQ_NOTIFY_ERRORS == 0 && NDK_CQ_NOTIFY_ANY == 1 && NDK_CQ_NOTIFY_SOLICITED == 2);
    ABI_EXPECT(NdkOperationTypeReceiveAndInvalidate == (NdkOperationTypeReceive | 0x8000));
    ABI_EXPECT(NdkObjectTypeSrq + 1 == NdkObjectTypeMax);
}

/* ---- Structures used the way providers and consumers use them ---- */

static void check_structures(void) {
    union {
        NDK_LOGICAL_ADDRESS_MAPPING Lam;
        unsigned char Bytes[64];
    } lam_buffer;
    NDK_RESULT_EX result;
    NDK_SGE sge;
    NDK_VERSION v1_1 = NDK_VERSION_1_1;
    NDK_VERSION v1_2 = NDK_VERSION_1_2;
    NDK_VERSION v2_1 = NDK_VERSION_2_1;

    /* A LAM of N pages occupies NDK_LOGICAL_ADDRESS_MAPPING_SIZE(N) bytes, entry by entry. */
    memset(&lam_buffer, 0, sizeof lam_buffer);
    lam_buffer.Lam.AdapterPageCount = 6;
    ABI_EXPECT(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(6) == sizeof lam_buffer.Bytes);
    ABI_EXPECT((unsigned char*)&lam_buffer.Lam.AdapterPageArray[5] + sizeof(NDK_LOGICAL_ADDRESS) ==
               lam_buffer.Bytes + NDK_LOGICAL_ADDRESS_MAPPING_SIZE(6));

    /* ProviderErrorCode (2.1) lives in 1.2's padding: writing it leaves the neighbours alone. */
    memset(&result, 0, sizeof result);
    result.Type = NdkOperationTypeReceiveAndInvalidate;
    result.ProviderErrorCode = 0xFFFFFFFFu;
    ABI_EXPECT(result.TypeSpecificCompletionOutput == 0);
    ABI_EXPECT(result.Type == NdkOperationTypeReceiveAndInvalidate);

    /* The SGE address is one field seen two ways. */
    ABI_EXPECT((void*)&sge.VirtualAddress == (void*)&sge.LogicalAddress);

    ABI_EXPECT(v1_1.Major == 1 && v1_1.Minor == 1);
    ABI_EXPECT(v2_1.Major == 2 && v2_1.Minor == 1);
    ABI_EXPECT(NDKCT_VERSION_AT_LEAST(v1_2, 1, 2));
    ABI_EXPECT(!NDKCT_VERSION_AT_LEAST(v1_1, 1, 2));
    ABI_EXPECT(NDKCT_VERSION_AT_LEAST(v2_1, 1, 2));
    ABI_EXPECT(!NDKCT_VERSION_AT_LEAST(v1_2, 2, 1));

    /* The statuses NDKPI completions use classify as the docs say. */
    ABI_EXPECT(NT_SUCCESS(STATUS_PENDING));
    ABI_EXPECT(NT_WARNING(STATUS_BUFFER_OVERFLOW) && !NT_SUCCESS(STATUS_BUFFER_OVERFLOW));
    ABI_EXPECT(NT_ERROR(STATUS_CANCELLED));
}

/* Runs everything; prints one summary line; 0 when all passed. */
static int abi_layout_run(const char* language) {
    size_t i;
    size_t layout_count = sizeof abi_layout_rows / sizeof abi_layout_rows[0];
    unsigned layout_failed = 0;

    for (i = 0; i < layout_count; ++i) {
        if (abi_layout_rows[i].ActualValue != abi_layout_rows[i].ExpectedValue) {
            ++layout_failed;
            fprintf(stderr, "abi_layout: FAILED: %s is %zu, expected %s\n",
                    abi_layout_rows[i].Actual, abi_layout_rows[i].ActualValue,
                    abi_layout_rows[i].Expected);
        }
    }
    check_qp_dispatch();
    check_flags();
    check_structures();

    if (layout_failed != 0 || abi_failed != 0) {
        printf("abi (%s): %u of %zu layout checks and %u of %u run-time checks FAILED\n", language,
               layout_failed, layout_count, abi_failed, abi_passed + abi_failed);
        return 1;
    }
    printf("abi (%s): %zu layout checks passed, %u run-time checks passed\n", language,
           layout_count, abi_passed);
    return 0;
}

#ifndef ABI_LAYOUT_SHARED_ONLY
int main(void) {
    return abi_layout_run("C11");
}
#endif
