/*
 * ndkct/ndkinfo.h: NDK_VERSION and NDK_ADAPTER_INFO, ndkct's own declaration.
 *
 * Written from the public documentation (sdk/ns-ndkinfo-ndk_version,
 * sdk/ns-ndkinfo-ndk_adapter_info); it is not the Windows SDK header. Field order and widths
 * follow the documented layout with LLP64 widths from ndkct/kernel_types.h; the asserts below
 * pin the x64 sizes so that a layout slip fails the build instead of a conformance run.
 */
#ifndef NDKCT_NDKINFO_H
#define NDKCT_NDKINFO_H

#include "ndkct/kernel_types.h"

NDKCT_EXTERN_C_BEGIN

/* ---- NDK_VERSION (sdk/ns-ndkinfo-ndk_version) ---- */

typedef struct _NDK_VERSION {
    USHORT Major;
    USHORT Minor;
} NDK_VERSION;

/*
 * The interface versions ndkct knows. 1.1 = Server 2012, 1.2 = Server 2012 R2 (both on the
 * NDK_VERSION page); 2.1 = Server 2022 (the *_EX pages say "NDKPI 2.1 and later").
 * NDK_VERSION_x_y is a brace initializer (NDK_VERSION v = NDK_VERSION_1_2;), valid in C and
 * C++ alike; use NDKCT_MAKE_VERSION where an expression is needed.
 */
#define NDK_VERSION_1_1_MAJOR 1
#define NDK_VERSION_1_1_MINOR 1
#define NDK_VERSION_1_2_MAJOR 1
#define NDK_VERSION_1_2_MINOR 2
#define NDK_VERSION_2_1_MAJOR 2
#define NDK_VERSION_2_1_MINOR 1
#define NDK_VERSION_1_1 \
    { NDK_VERSION_1_1_MAJOR, NDK_VERSION_1_1_MINOR }
#define NDK_VERSION_1_2 \
    { NDK_VERSION_1_2_MAJOR, NDK_VERSION_1_2_MINOR }
#define NDK_VERSION_2_1 \
    { NDK_VERSION_2_1_MAJOR, NDK_VERSION_2_1_MINOR }

static inline NDK_VERSION NDKCT_MAKE_VERSION(USHORT Major, USHORT Minor) {
    NDK_VERSION Version;
    Version.Major = Major;
    Version.Minor = Minor;
    return Version;
}

/* True if Version is Major.Minor or later (e.g. gate 1.2 features such as NDK_OP_FLAG_DEFER). */
static inline BOOLEAN NDKCT_VERSION_AT_LEAST(NDK_VERSION Version, USHORT Major, USHORT Minor) {
    return (BOOLEAN)(Version.Major > Major || (Version.Major == Major && Version.Minor >= Minor));
}

/*
 * ---- NDK_RDMA_TECHNOLOGY (NDK_ADAPTER_INFO.RdmaTechnology) ----
 * The SDK page lists the member without describing it; the values are the ones
 * concepts/inf-requirements-for-ndkpi fixes for *NetworkDirectTechnology (1..4), which it says
 * map to this enumeration.
 */
typedef enum _NDK_RDMA_TECHNOLOGY {
    NdkUndefined = 0,
    NdkiWarp = 1,
    NdkInfiniBand = 2,
    NdkRoCE = 3,
    NdkRoCEv2 = 4,
    NdkMaxTechnology = 5
} NDK_RDMA_TECHNOLOGY;

/* ---- NDK_ADAPTER_INFO.AdapterFlags (sdk/ns-ndkinfo-ndk_adapter_info) ---- */
#define NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED 0x00000001u
#define NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED 0x00000002u
#define NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED 0x00000004u
#define NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED 0x00000008u
/* NDKPI 1.2 and later; older headers (e.g. mingw-w64's ndkinfo.h) lack it (AMB-23). */
#define NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED 0x00000010u
#define NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED 0x00000100u
#define NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED 0x00010000u

/* ---- NDK_ADAPTER_INFO (sdk/ns-ndkinfo-ndk_adapter_info), returned by NdkQueryAdapterInfo ---- */
typedef struct _NDK_ADAPTER_INFO {
    NDK_VERSION Version;
    UINT32 VendorId; /* the vendor's OUI */
    UINT32 DeviceId;
    SIZE_T MaxRegistrationSize;
    SIZE_T MaxWindowSize;
    ULONG FRMRPageCount; /* preferred FRMR size in pages; at least 16 */
    ULONG MaxInitiatorRequestSge;
    ULONG MaxReceiveRequestSge;
    ULONG MaxReadRequestSge; /* overrides MaxInitiatorRequestSge for reads */
    ULONG MaxTransferLength;
    ULONG MaxInlineDataSize;
    ULONG MaxInboundReadLimit;
    ULONG MaxOutboundReadLimit;
    ULONG MaxReceiveQueueDepth;
    ULONG MaxInitiatorQueueDepth;
    ULONG MaxSrqDepth; /* 0 = no SRQ support */
    ULONG MaxCqDepth;
    ULONG LargeRequestThreshold;
    ULONG MaxCallerData;
    ULONG MaxCalleeData;
    ULONG AdapterFlags; /* NDK_ADAPTER_FLAG_* */
    NDK_RDMA_TECHNOLOGY RdmaTechnology;
} NDK_ADAPTER_INFO;

/*
 * Size of the older layout without RdmaTechnology (mingw-w64's ndkinfo.h still has it): a
 * consumer built against it passes a 96-byte buffer to NdkQueryAdapterInfo (AMB-23).
 */
#define NDK_ADAPTER_INFO_V1_SIZE 96u

NDKCT_STATIC_ASSERT(sizeof(NDK_VERSION) == 4, "NDK_VERSION is two USHORTs");
NDKCT_STATIC_ASSERT(sizeof(NDK_RDMA_TECHNOLOGY) == 4, "enums are 4 bytes as on MSVC");
NDKCT_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, MaxRegistrationSize) == 16,
                    "NDK_ADAPTER_INFO.MaxRegistrationSize at 16 on x64");
NDKCT_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, FRMRPageCount) == 32,
                    "NDK_ADAPTER_INFO.FRMRPageCount at 32 on x64");
NDKCT_STATIC_ASSERT(offsetof(NDK_ADAPTER_INFO, RdmaTechnology) == NDK_ADAPTER_INFO_V1_SIZE,
                    "the older layout ends where RdmaTechnology begins");
NDKCT_STATIC_ASSERT(sizeof(NDK_ADAPTER_INFO) == 104, "NDK_ADAPTER_INFO is 104 bytes on x64");

NDKCT_EXTERN_C_END

#endif /* NDKCT_NDKINFO_H */
