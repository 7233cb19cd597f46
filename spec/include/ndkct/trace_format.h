/*
 * ndkct/trace_format.h: the numbers of the ndkct trace format (version 1.3).
 *
 * A trace records the NDK calls and callbacks at the consumer/provider boundary so that ndkct
 * can judge them offline. spec/TRACE.md describes the format for writers; spec/trace/
 * trace-format.json defines every record's fields (a test checks that the numbers here and the
 * definition agree). Writers are the capture library (capture/) and anything a vendor writes
 * from the page; readers are conformance/trace and the definition-driven decoder of the tests.
 *
 * Layout in short (all integers little-endian):
 *   file   = header frame*
 *   header = "NDKTRACE" u16 major u16 minor u32 header_bytes  TLV*  u32 crc32 u32 0
 *   TLV    = u16 tag u16 0 u32 length  value  (padded to 8 bytes)
 *   frame  = u32 NDKT_FRAME_MAGIC u32 payload_bytes u32 record_count u32 crc32(payload)  record*
 *   record = 40-byte NDKT_RECORD_HEADER  body  (size a multiple of 8)
 *   crc32  = CRC-32C (Castagnoli, reflected polynomial 0x82F63B78)
 *
 * C11 / C++20, freestanding: needs only <stdint.h>.
 */
#ifndef NDKCT_TRACE_FORMAT_H
#define NDKCT_TRACE_FORMAT_H

#include <stdint.h>

#define NDKT_MAGIC "NDKTRACE"
#define NDKT_VERSION_MAJOR 1 /* a reader refuses a file of another major version */
#define NDKT_VERSION_MINOR 5 /* minor versions only add: tags, record kinds, trailing fields */
#define NDKT_FRAME_MAGIC 0x464B444Eu /* "NDKF" as little-endian bytes */
#define NDKT_HEADER_FIXED_BYTES 16u
#define NDKT_FRAME_HEADER_BYTES 16u
#define NDKT_RECORD_HEADER_BYTES 40u
#define NDKT_ALIGN 8u

/* ---- Header TLV tags ---- */
enum {
    NDKT_TAG_NDK_VERSION = 1,          /* u16 major, u16 minor: the negotiated version */
    NDKT_TAG_PROVIDER_NAME = 2,        /* UTF-8 */
    NDKT_TAG_PROVIDER_VERSION = 3,     /* UTF-8 */
    NDKT_TAG_PROVIDER_DESCRIPTION = 4, /* UTF-8 */
    NDKT_TAG_ADAPTER_INFO = 5,     /* NDK_ADAPTER_INFO bytes as NdkQueryAdapterInfo wrote them */
    NDKT_TAG_PAGE_SIZE = 6,        /* u32 */
    NDKT_TAG_PFN_SPACE = 7,        /* u64: PFNs are below this (0: unknown) */
    NDKT_TAG_PROFILE = 8,          /* UTF-8: the ndkct profile the capture was made under */
    NDKT_TAG_TICKS_PER_SECOND = 9, /* u64: the unit of record times and durations */
    NDKT_TAG_CAPTURE_FLAGS = 10,   /* u32: NDKT_CAPTURE_* */
    NDKT_TAG_WRITER = 11,          /* UTF-8: the writer and its version */
    NDKT_TAG_ADAPTER = 12,         /* u64: the adapter's handle */
    NDKT_TAG_LABEL = 13,           /* UTF-8: the host's name for the trace (a test ID) */
    NDKT_TAG_ADDRESS_FAMILIES =
        14,                      /* u16 AF_INET, u16 AF_INET6 as the writer's platform has them */
    NDKT_TAG_PLATFORM = 15,      /* UTF-8: "linux-user", "windows-kernel", ... */
    NDKT_TAG_SEED = 16,          /* u64: the provider's seed, when it has one */
    NDKT_TAG_PROVIDER_SPEC = 17, /* UTF-8: how the host opened the provider */
    NDKT_TAG_PROFILE_JSON = 18,  /* UTF-8: the profile itself, when it is no shipped one */
    NDKT_TAG_DIGEST_LIMIT = 19,  /* u32 (1.3): DATA blocks over this many bytes get no digest */
    NDKT_TAG_COUNT = 20          /* one past the last */
};

/* ---- NDKT_TAG_CAPTURE_FLAGS ---- */
#define NDKT_CAPTURE_DIGESTS 0x01u      /* DATA blocks carry digests of the bytes moved */
#define NDKT_CAPTURE_SOURCE_BYTES 0x02u /* source DATA blocks carry the bytes themselves */
#define NDKT_CAPTURE_LANDED_BYTES 0x04u /* landing DATA blocks carry the bytes themselves */
#define NDKT_CAPTURE_IRQL 0x08u         /* records carry the IRQL */
#define NDKT_CAPTURE_TIMES 0x10u        /* records carry times and durations */
/* (1.1) With TIMES: the data-path calls (posts, NdkGetCqResults(Ex), NdkArmCq) carry time and
 * duration only when made inside a callback or nested; elsewhere both are 0 (not taken). */
#define NDKT_CAPTURE_DATA_PATH_UNTIMED 0x20u
/* The functions NDKT_CAPTURE_DATA_PATH_UNTIMED leaves untimed, as a mask of 1 << function. */
#define NDKT_DATA_PATH_FUNCTIONS                                                               \
    ((1ull << 12) | (1ull << 13) | (1ull << 15) | (1ull << 23) | (1ull << 25) | (1ull << 26) | \
     (1ull << 27) | (1ull << 28) | (1ull << 29) | (1ull << 30) | (1ull << 31) | (1ull << 32))

/* ---- Record kinds: meta (0x00xx), calls (0x0100 | function), callbacks (0x0200 | n) ---- */
enum {
    NDKT_META_LOSS = 0x0001,          /* records the capture could not keep (ring full) */
    NDKT_META_MARK = 0x0002,          /* the host's annotation */
    NDKT_META_ADAPTER_CLOSE = 0x0003, /* the host closes the adapter (outside the tables) */
    NDKT_META_RETURN = 0x0004,        /* the outcome of a call written before it returned */
    NDKT_META_END = 0x0005,           /* the trace was closed cleanly */
    NDKT_META_DRAINED = 0x0006,       /* 1.4: the consumer drained a QP: nothing is owed there */
    NDKT_META_OVERDUE = 0x0007,       /* 1.5: completions a consumer waited for did not come */
    NDKT_META_UNNOTIFIED = 0x0008,    /* 1.5: a notification a consumer waited for did not come */
};

#define NDKT_KIND_CALL 0x0100u
#define NDKT_KIND_CALLBACK 0x0200u
#define NDKT_KIND_CLASS(kind) ((kind)&0xFF00u)

/* NDK functions (record kind = NDKT_KIND_CALL | function). Close and QueryExtension stand for
 * every table's entry; GetLocalAddress for the connector's, listener's and endpoint's. */
enum {
    NDKT_FN_QUERY_EXTENSION = 1,
    NDKT_FN_QUERY_ADAPTER_INFO = 2,
    NDKT_FN_CREATE_CQ = 3,
    NDKT_FN_CREATE_PD = 4,
    NDKT_FN_CREATE_SHARED_ENDPOINT = 5,
    NDKT_FN_CREATE_CONNECTOR = 6,
    NDKT_FN_CREATE_LISTENER = 7,
    NDKT_FN_BUILD_LAM = 8,
    NDKT_FN_RELEASE_LAM = 9,
    NDKT_FN_CLOSE = 10,
    NDKT_FN_RESIZE_CQ = 11,
    NDKT_FN_ARM_CQ = 12,
    NDKT_FN_GET_CQ_RESULTS = 13,
    NDKT_FN_CONTROL_CQ_INTERRUPT_MODERATION = 14,
    NDKT_FN_GET_CQ_RESULTS_EX = 15,
    NDKT_FN_REGISTER_MR = 16,
    NDKT_FN_DEREGISTER_MR = 17,
    NDKT_FN_INITIALIZE_FAST_REGISTER_MR = 18,
    NDKT_FN_GET_REMOTE_TOKEN_FROM_MR = 19,
    NDKT_FN_GET_LOCAL_TOKEN_FROM_MR = 20,
    NDKT_FN_GET_REMOTE_TOKEN_FROM_MW = 21,
    NDKT_FN_MODIFY_SRQ = 22,
    NDKT_FN_SRQ_RECEIVE = 23,
    NDKT_FN_FLUSH = 24,
    NDKT_FN_SEND = 25,
    NDKT_FN_RECEIVE = 26,
    NDKT_FN_BIND = 27,
    NDKT_FN_FAST_REGISTER = 28,
    NDKT_FN_INVALIDATE = 29,
    NDKT_FN_READ = 30,
    NDKT_FN_WRITE = 31,
    NDKT_FN_SEND_AND_INVALIDATE = 32,
    NDKT_FN_CREATE_MR = 33,
    NDKT_FN_CREATE_MW = 34,
    NDKT_FN_CREATE_SRQ = 35,
    NDKT_FN_CREATE_QP = 36,
    NDKT_FN_CREATE_QP_WITH_SRQ = 37,
    NDKT_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN = 38,
    NDKT_FN_GET_LOCAL_ADDRESS = 39,
    NDKT_FN_CONNECT = 40,
    NDKT_FN_CONNECT_WITH_SHARED_ENDPOINT = 41,
    NDKT_FN_COMPLETE_CONNECT = 42,
    NDKT_FN_ACCEPT = 43,
    NDKT_FN_REJECT = 44,
    NDKT_FN_GET_CONNECTION_DATA = 45,
    NDKT_FN_GET_PEER_ADDRESS = 46,
    NDKT_FN_DISCONNECT = 47,
    NDKT_FN_COMPLETE_CONNECT_EX = 48,
    NDKT_FN_ACCEPT_EX = 49,
    NDKT_FN_LISTEN = 50,
    NDKT_FN_CONTROL_CONNECT_EVENTS = 51,
    NDKT_FN_COUNT = 52 /* one past the last */
};

/* Callbacks the provider makes (record kind = NDKT_KIND_CALLBACK | callback). */
enum {
    NDKT_CB_REQUEST_COMPLETION = 1,
    NDKT_CB_CREATE_COMPLETION = 2,
    NDKT_CB_CLOSE_COMPLETION = 3,
    NDKT_CB_CQ_NOTIFICATION = 4,
    NDKT_CB_SRQ_NOTIFICATION = 5,
    NDKT_CB_CONNECT_EVENT = 6,
    NDKT_CB_DISCONNECT_EVENT = 7,
    NDKT_CB_DISCONNECT_EVENT_EX = 8,
    NDKT_CB_STRAY = 9, /* a callback whose context the writer cannot attribute */
    NDKT_CB_COUNT = 10
};

/* ---- The record header's flags ---- */
#define NDKT_FLAG_IN_CALLBACK 0x01u  /* made on a thread inside a provider callback */
#define NDKT_FLAG_NESTED 0x02u       /* entered while the thread was inside another call */
#define NDKT_FLAG_CALL_PENDING 0x04u /* a callback that came before its call returned */
#define NDKT_FLAG_EXPIRED 0x08u      /* written before the call returned: see NDKT_META_RETURN */

#define NDKT_IRQL_UNKNOWN 0xFFu

/* ---- Values inside bodies ---- */
#define NDKT_DATA_SOURCE 1u   /* DATA.role: the bytes a request sends or reads, at post time */
#define NDKT_DATA_LANDING 2u  /* DATA.role: the bytes at its target when its entry is returned */
#define NDKT_DATA_BYTES 0x01u /* DATA.flags: the bytes follow the pieces */
#define NDKT_DATA_UNRESOLVED 0x02u /* DATA.flags: the writer could not find the bytes */
/* DATA.flags (1.3): longer than the writer's digest limit, so not read; always with UNRESOLVED,
 * which a 1.2 reader knows (it leaves the block unjudged too). */
#define NDKT_DATA_OVER_LIMIT 0x04u
#define NDKT_MDL_CHAIN_CUT 0x01u               /* MDLCHAIN.flags: longer than the writer walks */
#define NDKT_CREATE_OUTPUT_WHILE_PENDING 0x01u /* create outcome flags */
#define NDKT_NO_MEMBER 0xFFFFu                 /* OBJ.null_member: no NULL dispatch member */

/*
 * The data digest (NDKT64): over a byte string of n bytes, taken as little-endian 64-bit words
 * w (the last one zero-padded):
 *   h = n * K1;  for each w: h = (h ^ w) * K2; h ^= h >> 31;
 *   h ^= h >> 33; h *= K1; h ^= h >> 29.
 */
#define NDKT_DIGEST_K1 0x9E3779B97F4A7C15ull
#define NDKT_DIGEST_K2 0xBF58476D1CE4E5B9ull

#endif /* NDKCT_TRACE_FORMAT_H */
