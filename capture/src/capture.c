/*
 * The ndkct capture library: see ndkct/capture.h for what it does and spec/TRACE.md for what it
 * writes. The parts, in order:
 *   portability (atomics, memory), the capture's state, set-up;
 *   the ring (reserve a record, publish it, drain complete records into frames);
 *   tables (objects, request slots, threads, tokens, logical pages, PFNs, posted requests);
 *   where bytes live (resolving SGEs and remote addresses to pages; digests; DATA blocks);
 *   record writing; the consumer's callbacks; one entry per dispatch member.
 *
 * Rules of the NDK call path (every dispatch entry and callback below): no allocation, no
 * blocking lock (tables use atomics; the two free lists use a try-lock and fall back to
 * "untracked" when it is taken), no system call (the host's callbacks promise the same).
 */
#include "ndkct/capture.h"

#include <stddef.h> /* offsetof: freestanding */

/* NDKCAP_OPTIONS as capture 1.2 had it (everything before DigestLimit): the smallest Size. */
#define CAP_OPTIONS_1_2_BYTES offsetof(NDKCAP_OPTIONS, DigestLimit)

/* ================================ Portability ================================ */

/* MSVC's intrinsics (a WDK build); clang, clang-cl too, takes the __atomic builtins. The
 * ctest capture.msvc_branch compiles this branch with clang in MSVC mode
 * (NDKCAP_CHECK_MSVC_BRANCH), since no MSVC runs here. */
#if defined(_MSC_VER) && (!defined(__clang__) || defined(NDKCAP_CHECK_MSVC_BRANCH))
#define CAP_MSVC 1
#else
#define CAP_MSVC 0
#endif

#if CAP_MSVC
#if !defined(_M_X64)
/* ld32/st32 below rely on x64's volatile accesses being acquire loads and release stores. */
#error "capture.c: with MSVC, x64 only"
#endif
#include <intrin.h>
#pragma intrinsic(_InterlockedCompareExchange, _InterlockedCompareExchange64, \
                  _InterlockedExchangeAdd, _InterlockedExchangeAdd64)
/* x64 MSVC: volatile accesses are acquire loads and release stores (/volatile:ms). */
static __inline uint32_t ld32(volatile uint32_t* p) {
    return *p;
}
static __inline uint64_t ld64(volatile uint64_t* p) {
    return *p;
}
static __inline void st32(volatile uint32_t* p, uint32_t v) {
    *p = v;
}
static __inline void st64(volatile uint64_t* p, uint64_t v) {
    *p = v;
}
static __inline int cas32(volatile uint32_t* p, uint32_t expect, uint32_t want) {
    return (uint32_t)_InterlockedCompareExchange((volatile long*)p, (long)want, (long)expect) ==
           expect;
}
static __inline int cas64(volatile uint64_t* p, uint64_t expect, uint64_t want) {
    return (uint64_t)_InterlockedCompareExchange64((volatile __int64*)p, (__int64)want,
                                                   (__int64)expect) == expect;
}
static __inline uint32_t add32(volatile uint32_t* p, uint32_t v) {
    return (uint32_t)_InterlockedExchangeAdd((volatile long*)p, (long)v);
}
static __inline uint64_t add64(volatile uint64_t* p, uint64_t v) {
    return (uint64_t)_InterlockedExchangeAdd64((volatile __int64*)p, (__int64)v);
}
static __inline uint64_t xchg64(volatile uint64_t* p, uint64_t v) {
    return (uint64_t)_InterlockedExchange64((volatile __int64*)p, (__int64)v);
}
static __inline void or64(volatile uint64_t* p, uint64_t v) {
    _InterlockedOr64((volatile __int64*)p, (__int64)v);
}
static __inline void and64(volatile uint64_t* p, uint64_t v) {
    _InterlockedAnd64((volatile __int64*)p, (__int64)v);
}
static __inline uint32_t lowest_bit(uint64_t v) { /* v != 0 */
    unsigned long i;
    _BitScanForward64(&i, v);
    return (uint32_t)i;
}
void* memcpy(void* d, const void* s, size_t n);
void* memset(void* d, int c, size_t n);
#if !defined(__clang__)
#pragma intrinsic(memcpy, memset)
#endif
#define cap_copy memcpy
#define cap_fill memset
#define CAP_INLINE static __inline
#define CAP_ALWAYS_INLINE static __forceinline
#else
#define ld32(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ld64(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define st32(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define st64(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define CAP_INLINE static inline
#define CAP_ALWAYS_INLINE static inline __attribute__((always_inline))
CAP_INLINE int cas32(volatile uint32_t* p, uint32_t expect, uint32_t want) {
    return __atomic_compare_exchange_n(p, &expect, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
CAP_INLINE int cas64(volatile uint64_t* p, uint64_t expect, uint64_t want) {
    return __atomic_compare_exchange_n(p, &expect, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
#define add32(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define add64(p, v) __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define cap_copy __builtin_memcpy
#define cap_fill __builtin_memset
#define xchg64(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define or64(p, v) ((void)__atomic_fetch_or((p), (v), __ATOMIC_ACQ_REL))
#define and64(p, v) ((void)__atomic_fetch_and((p), (v), __ATOMIC_ACQ_REL))
#define lowest_bit(v) ((uint32_t)__builtin_ctzll(v)) /* v != 0 */
#endif

/* Two statuses ntstatus.h does not list (no NDKPI page uses them). */
#define CAP_STATUS_UNSUCCESSFUL ((NTSTATUS)0xC0000001L)
#define CAP_STATUS_INVALID_HANDLE ((NTSTATUS)0xC0000008L)

#define CAP_ALIGN8(n) (((n) + 7u) & ~(uint64_t)7u)
#define CAP_MIN(a, b) ((a) < (b) ? (a) : (b))

/* ================================ Sizes ================================ */

#define CAP_MAX_CAPTURES 16 /* captures open at once in one process or driver */
#define CAP_THREADS 64      /* threads whose nesting is followed */
#define CAP_DEPTH 16        /* calls and callbacks nested on one thread */
#define CAP_TABLE_SLOTS 16  /* the longest dispatch table (the connector's has 13) */
#define CAP_QUEUE_SGES 4    /* SGEs of a posted request kept for its landing */
#define CAP_PLAN 16 /* landings one NdkGetCqResults call digests (a kernel stack is small) */
#define CAP_MAX_PIECES 4096 /* pages one DATA block lists */
#define CAP_SILENT_SCAN 64  /* entries before a completion searched for its request */
#define CAP_MDL_LIMIT 4096  /* MDLs of one chain recorded */
#define CAP_RING_PREFIX 16u /* ring-only words before each record: commit, size, deferred */
/* DATA.flags, in the ring only: the digest is deferred to the drain. The block's bytes follow
 * its pieces (its length, padded to 8), and its digest field holds the offset from the record
 * header of the next deferred block of the record (0: the last); the ring prefix's third word
 * holds the first's (0: none). The drain digests the bytes, writes the digest and leaves the
 * bytes out: the file has the block as if digested in the call. */
#define CAP_DATA_DEFERRED 0x80u

/* A ring record's commit word: (seq << 8) | state. */
enum { RING_EMPTY = 0, RING_ENTERED = 1, RING_COMPLETE = 2, RING_EXPIRED = 3, RING_PAD = 4 };
/* RING_PAD: space the drain skips (a LOSS slot whose count was taken by another record). */

enum { OBJ_FREE = 0, OBJ_CREATING = 1, OBJ_OPEN = 2, OBJ_CLOSED = 3 };
enum { MR_NONE = 0, MR_REGISTERED = 1, MR_FAST_REGISTERED = 2 };
/* A registration in flight: none, its region staged, or a region the capture could not walk. */
enum { STAGED_NONE = 0, STAGED_REGION = 1, STAGED_UNKNOWN = 2 };
enum { REQ_REQUEST = 1, REQ_CREATE = 2, REQ_CLOSE = 3 };

/* ================================ State ================================ */

struct cap_piece {
    uint64_t pfn;
    uint32_t offset, size;
};

/* A posted request whose landing the capture digests when its entry is returned. */
struct cap_posted {
    uint64_t request_context;
    volatile uint32_t state; /* 0 free, 1 posted, 2 retired */
    uint16_t function;
    uint8_t silent;
    uint8_t sge_count; /* 0xFF: the target is remote (remote_address, remote_token, length) */
    uint64_t remote_address;
    uint32_t remote_token, length;
    uint32_t untracked; /* its landing cannot be digested */
    uint32_t reserved;
    NDK_SGE sges[CAP_QUEUE_SGES];
};

struct cap_queue {
    uint32_t base, mask, tracked;
    volatile uint32_t head, tail;
};

union cap_event {
    NDK_FN_CQ_NOTIFICATION_CALLBACK* cq;
    NDK_FN_SRQ_NOTIFICATION_CALLBACK* srq;
    NDK_FN_CONNECT_EVENT_CALLBACK* connect;
    NDK_FN_DISCONNECT_EVENT_CALLBACK* disconnect;
    NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* disconnect_ex;
};

union cap_completion {
    NDK_FN_REQUEST_COMPLETION* request;
    NDK_FN_CREATE_COMPLETION* create;
    NDK_FN_CLOSE_COMPLETION* close;
};

union cap_table {
    NDK_ADAPTER_DISPATCH adapter;
    NDK_PD_DISPATCH pd;
    NDK_CQ_DISPATCH cq;
    NDK_MR_DISPATCH mr;
    NDK_MW_DISPATCH mw;
    NDK_QP_DISPATCH qp;
    NDK_SRQ_DISPATCH srq;
    NDK_CONNECTOR_DISPATCH connector;
    NDK_LISTENER_DISPATCH listener;
    NDK_SHARED_ENDPOINT_DISPATCH shared_endpoint;
};

struct cap_object {
    const void* volatile handle; /* the provider's object */
    const void* original;        /* its Dispatch as handed out */
    union cap_table table;
    volatile uint32_t state;
    uint32_t index, gen;
    uint16_t type, null_member;
    union cap_event event_fn; /* CQ/SRQ notification, connect event, disconnect */
    PVOID event_ctx;
    uint32_t disconnect_ex;
    struct cap_object* pd; /* QP, SRQ, MR, MW: the PD */
    uint32_t privileged_token, has_privileged;
    /* QP and SRQ */
    uint64_t qp_context;
    struct cap_object* srq;
    struct cap_queue initiator, receive;
    /* MR */
    volatile uint32_t mr_kind;
    uint32_t fbo, pfn_at, pfn_count, pfn_capacity;
    uint64_t va, length;
    uint32_t local_token, remote_token, local_known, remote_known;
    /* MR: NdkRegisterMr's region, walked when the call is made and taken into the fields above
     * only once it succeeds (inline or in its callback): a refused or failed registration (an
     * MR registered twice is refused) leaves the one in force. */
    volatile uint32_t staged; /* STAGED_* */
    uint32_t staged_at, staged_capacity, staged_count, staged_fbo;
    uint64_t staged_va, staged_length;
    /* MW */
    struct cap_object* window_mr;
    uint64_t window_va, window_length;
    uint32_t window_bound;
    /* CQ: the QP entry (index + 1) its last completion of each side came from, tried first */
    volatile uint32_t last_qp[2];
};

struct cap_request {
    volatile uint64_t id;
    volatile uint32_t busy;     /* its call has not returned, or it awaits its callback */
    volatile uint32_t returned; /* its call returned */
    volatile uint32_t callbacks;
    uint16_t function, kind;
    union cap_completion consumer_fn;
    PVOID consumer_ctx;
    struct cap_object* object; /* the call's object; for a create, the new object's entry */
    NDK_LOGICAL_ADDRESS_MAPPING* lam;
    ULONG* lam_size;
    ULONG* fbo;
    ULONG lam_size_in;
    const MDL* mdl;
    uint64_t length;
};

struct cap_thread {
    volatile uint32_t id;
    uint32_t depth;
    uint16_t kind[CAP_DEPTH];
    uint8_t callback[CAP_DEPTH];
};

struct cap_lam_slot {
    volatile uint64_t key; /* logical page | 1; 0 empty; 2 deleted; 3 being written */
    uint64_t pfn;
};

struct _NDKCAP {
    NDKCAP_HOST host;
    uint32_t flags;             /* NDKT_CAPTURE_* */
    uint64_t untimed_functions; /* 1 << function: no timestamps outside callbacks */
    uint32_t options;           /* NDKCAP_* */
    uint32_t digest_limit;      /* DATA blocks of more bytes are not read (0: none) */
    PVOID memory;               /* everything, one allocation */
    SIZE_T memory_bytes;
    uint32_t registry_index;
    /* the ring */
    uint8_t* ring;
    uint32_t blocks, block_bytes;
    uint32_t block_mask; /* blocks is a power of two: a block's index is seq & block_mask */
    uint32_t
        max_bytes; /* bytes one DATA block carries (NDKCAP_SOURCE/LANDED_BYTES): a quarter block */
    volatile uint64_t* reserved; /* per block: (block seq << 32) | sealed << 31 | offset */
    uint32_t defer_blocks;       /* digests are deferred while fewer blocks wait for the drain */
    uint32_t defer_bytes;        /* ... for DATA blocks of at most this many bytes */
    uint8_t* header;
    uint32_t header_bytes, header_written;
    /* written only when records are lost or untracked; read by every call */
    volatile uint64_t lost_records, lost_bytes, pending_lost_records, pending_lost_bytes;
    volatile uint64_t untracked;
    /* Written by the calls (every call) and by the drain (every record), each group on cache
     * lines of its own: sharing a line with the drain's counters made every call fetch it back
     * from the drain's core. */
    uint8_t calls_apart[64];
    volatile uint64_t current; /* the block seq producers fill */
    uint8_t drain_apart[64];
    volatile uint64_t drain_seq; /* written by the drain; read by producers (deferral) */
    uint32_t drain_offset;
    uint8_t* staging; /* one frame being built */
    uint32_t staging_used, staging_records;
    volatile uint64_t records, bytes_written, write_errors;
    uint8_t tables_apart[64];
    /* tables */
    struct cap_object* objects;
    uint32_t max_objects;
    volatile uint64_t* open_qps; /* a bit per object entry: an open QP (completions find them) */
    volatile uint32_t object_cursor;
    volatile uint32_t* object_slots; /* hash: object pointer -> index + 1 */
    uint32_t object_mask;
    volatile uint64_t* local_tokens; /* hash: (token << 32) | index + 1 */
    volatile uint64_t* remote_tokens;
    uint32_t token_mask;
    struct cap_lam_slot* lam;
    uint32_t lam_mask;
    uint64_t* pfns; /* PFNs of registered regions */
    uint32_t pfn_entries;
    volatile uint32_t pfn_bump, pfn_lock;
    uint32_t pfn_free[32];
    struct cap_posted* posted;
    uint32_t posted_entries;
    volatile uint32_t posted_bump, posted_lock;
    uint32_t posted_free[32];
    struct cap_request* requests;
    uint32_t max_requests;
    volatile uint64_t request_cursor;
    struct cap_thread threads[CAP_THREADS];
    volatile uint32_t thread_hint; /* the slot the last call's thread found */
    uint32_t crc_table[8][256];    /* slicing by 8 (the drain's CRC of every frame) */
    int crc_instruction;           /* the CPU computes CRC-32C itself */
    NDK_ADAPTER* adapter;
    struct cap_object* adapter_entry;
    /* Where callbacks with contexts the capture never gave go (GEN-CB-03): the consumer's latest.
     */
    union cap_completion last_request_fn, last_create_fn, last_close_fn;
    /* Per type, the provider's latest table: for an object the capture does not know. */
    const void* fallback[NdkObjectTypeMax];
};

static NDKCAP* volatile g_captures[CAP_MAX_CAPTURES];
/* One past the highest registry slot ever taken: lookups scan no further (one capture: one). */
static volatile uint32_t g_capture_limit;

/* ================================ Small helpers ================================ */

CAP_INLINE uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    return x;
}

static uint32_t text_length(const char* s, uint32_t limit) {
    uint32_t n = 0;
    if (!s) return 0;
    while (n < limit && s[n])
        ++n;
    return n;
}

CAP_INLINE uint64_t now(NDKCAP* c) {
    return c->host.Timestamp ? c->host.Timestamp(c->host.Context) : 0;
}

/* ---- The digest (NDKT64), streamed over pieces ----
 * Four lanes (word i goes to lane i % 4), so that the multiplies of consecutive words overlap
 * instead of waiting on each other: about 2.7 times the serial rate. */
struct cap_digest {
    uint64_t h[4];
    uint64_t carry;
    uint64_t words;   /* words mixed so far: the next one's lane is words % 4 */
    uint32_t carried; /* bytes in carry */
};

CAP_INLINE void digest_begin(struct cap_digest* d, uint64_t length) {
    for (uint32_t j = 0; j < 4; ++j)
        d->h[j] = (length + j) * NDKT_DIGEST_K1;
    d->carry = 0;
    d->words = 0;
    d->carried = 0;
}

CAP_INLINE uint64_t digest_mix(uint64_t h, uint64_t w) {
    h = (h ^ w) * NDKT_DIGEST_K2;
    return h ^ (h >> 31);
}

CAP_INLINE void digest_word(struct cap_digest* d, uint64_t w) {
    uint32_t j = (uint32_t)(d->words++ & 3u);
    d->h[j] = digest_mix(d->h[j], w);
}

static void digest_bytes(struct cap_digest* d, const uint8_t* p, SIZE_T n) {
    while (n && d->carried) {
        d->carry |= (uint64_t)*p++ << (8 * d->carried);
        --n;
        if (++d->carried == 8) {
            digest_word(d, d->carry);
            d->carry = 0;
            d->carried = 0;
        }
    }
    while (n >= 8 && (d->words & 3u)) {
        uint64_t w;
        cap_copy(&w, p, 8); /* little-endian hosts */
        digest_word(d, w);
        p += 8;
        n -= 8;
    }
    if (n >= 32) {
        uint64_t h0 = d->h[0], h1 = d->h[1], h2 = d->h[2], h3 = d->h[3];
        SIZE_T blocks = n / 32;
        for (SIZE_T b = 0; b < blocks; ++b, p += 32) {
            uint64_t w0, w1, w2, w3;
            cap_copy(&w0, p, 8);
            cap_copy(&w1, p + 8, 8);
            cap_copy(&w2, p + 16, 8);
            cap_copy(&w3, p + 24, 8);
            h0 = digest_mix(h0, w0);
            h1 = digest_mix(h1, w1);
            h2 = digest_mix(h2, w2);
            h3 = digest_mix(h3, w3);
        }
        d->h[0] = h0;
        d->h[1] = h1;
        d->h[2] = h2;
        d->h[3] = h3;
        d->words += (uint64_t)blocks * 4u;
        n -= blocks * 32;
    }
    while (n >= 8) {
        uint64_t w;
        cap_copy(&w, p, 8);
        digest_word(d, w);
        p += 8;
        n -= 8;
    }
    while (n--)
        d->carry |= (uint64_t)*p++ << (8 * d->carried++);
}

CAP_INLINE uint64_t digest_end(struct cap_digest* d) {
    if (d->carried) digest_word(d, d->carry);
    uint64_t h = d->h[0];
    for (uint32_t j = 1; j < 4; ++j)
        h = digest_mix(h, d->h[j]);
    h ^= h >> 33;
    h *= NDKT_DIGEST_K1;
    h ^= h >> 29;
    return h;
}

ULONG64 NdkCaptureDigest(const VOID* Bytes, SIZE_T Length) {
    struct cap_digest d;
    digest_begin(&d, Length);
    digest_bytes(&d, (const uint8_t*)Bytes, Length);
    return digest_end(&d);
}

/* x86-64's SSE4.2 crc32 instruction computes CRC-32C, 8 bytes a step: the drain's CRC of every
 * frame at a fraction of the tables' cost. Detected once, at NdkCaptureOpen (cpuid, no library). */
#if CAP_MSVC
#include <nmmintrin.h>
#define CAP_HAVE_CRC_INSTRUCTION 1
static int cpu_has_crc32c(void) {
    int r[4];
    __cpuid(r, 1);
    return (r[2] >> 20) & 1;
}
static uint32_t crc32_instruction(uint32_t crc, const uint8_t* p, SIZE_T n) {
    uint64_t c = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        cap_copy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
    }
    uint32_t c32 = (uint32_t)c;
    for (; n; ++p, --n)
        c32 = _mm_crc32_u8(c32, *p);
    return ~c32;
}
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define CAP_HAVE_CRC_INSTRUCTION 1
static int cpu_has_crc32c(void) {
    uint32_t a, b, c, d;
    __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1u), "c"(0u));
    (void)a;
    (void)b;
    (void)d;
    return (int)((c >> 20) & 1u);
}
__attribute__((target("sse4.2"))) static uint32_t crc32_instruction(uint32_t crc, const uint8_t* p,
                                                                    SIZE_T n) {
    uint64_t c = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        cap_copy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
    }
    uint32_t c32 = (uint32_t)c;
    for (; n; ++p, --n)
        c32 = __builtin_ia32_crc32qi(c32, *p);
    return ~c32;
}
#else
#define CAP_HAVE_CRC_INSTRUCTION 0
static int cpu_has_crc32c(void) {
    return 0;
}
static uint32_t crc32_instruction(uint32_t crc, const uint8_t* p, SIZE_T n) {
    (void)p;
    (void)n;
    return crc;
}
#endif

static uint32_t crc32_update(uint32_t (*t)[256], int instruction, uint32_t crc, const uint8_t* p,
                             SIZE_T n) {
    if (instruction) return crc32_instruction(crc, p, n);
    crc = ~crc;
    for (; n >= 8; p += 8, n -= 8) {
        uint32_t lo, hi;
        cap_copy(&lo, p, 4); /* little-endian hosts */
        cap_copy(&hi, p + 4, 4);
        lo ^= crc;
        crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
              t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    }
    while (n--)
        crc = t[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

/* ---- A byte writer over a reserved record ---- */
struct cap_out {
    uint8_t* p;
};
CAP_INLINE void put8(struct cap_out* o, uint8_t v) {
    *o->p++ = v;
}
CAP_INLINE void put16(struct cap_out* o, uint16_t v) {
    cap_copy(o->p, &v, 2);
    o->p += 2;
}
CAP_INLINE void put32(struct cap_out* o, uint32_t v) {
    cap_copy(o->p, &v, 4);
    o->p += 4;
}
CAP_INLINE void put64(struct cap_out* o, uint64_t v) {
    cap_copy(o->p, &v, 8);
    o->p += 8;
}
CAP_INLINE void putptr(struct cap_out* o, const void* v) {
    put64(o, (uint64_t)(ULONG_PTR)v);
}
static void putbytes(struct cap_out* o, const void* bytes, uint32_t n) {
    if (n) cap_copy(o->p, bytes, n);
    o->p += n;
    uint32_t pad = (uint32_t)(CAP_ALIGN8(n) - n);
    if (pad) cap_fill(o->p, 0, pad);
    o->p += pad;
}
/* BLOB: u32 length, u32 present, bytes */
static void putblob(struct cap_out* o, const void* bytes, uint32_t n, int present) {
    put32(o, present ? n : 0);
    put32(o, present ? 1u : 0u);
    putbytes(o, bytes, present ? n : 0);
}
CAP_INLINE uint32_t blob_size(uint32_t n) {
    return 8u + (uint32_t)CAP_ALIGN8(n);
}

/* ================================ Set-up ================================ */

static void* carve(uint8_t** at, SIZE_T bytes) {
    void* p = *at;
    *at += CAP_ALIGN8(bytes);
    return p;
}

static uint32_t pow2_at_least(uint64_t n) {
    uint32_t p = 1;
    while (p < n && p < 0x80000000u)
        p <<= 1;
    return p;
}

static void tlv(struct cap_out* o, uint16_t tag, const void* value, uint32_t n) {
    put16(o, tag);
    put16(o, 0);
    put32(o, n);
    putbytes(o, value, n);
}

static void tlv_text(struct cap_out* o, uint16_t tag, const char* s) {
    if (s) tlv(o, tag, s, text_length(s, 1u << 20));
}

NTSTATUS NdkCaptureOpen(const NDKCAP_HOST* Host, const NDKCAP_OPTIONS* Options,
                        NDKCAP** ppCapture) {
    if (!Host || Host->Size < sizeof(NDKCAP_HOST) || !Host->Allocate || !Host->Free ||
        !Host->Write || !Host->CurrentThread || !ppCapture)
        return STATUS_INVALID_PARAMETER;
    NDKCAP_OPTIONS o;
    cap_fill(&o, 0, sizeof o);
    if (Options) {
        /* A caller built against an older capture.h passes a smaller Size: the fields it does
         * not know stay 0 (their defaults). */
        if (Options->Size < CAP_OPTIONS_1_2_BYTES) return STATUS_INVALID_PARAMETER;
        cap_copy(&o, Options, CAP_MIN((SIZE_T)Options->Size, sizeof o));
        o.Size = sizeof o;
    }
    uint32_t blocks = o.RingBlocks ? o.RingBlocks : 16;
    uint32_t block_bytes = o.BlockBytes ? o.BlockBytes : 256u * 1024u;
    uint32_t max_objects = o.MaxObjects ? o.MaxObjects : 4096;
    uint32_t max_requests = o.MaxRequests ? o.MaxRequests : 16384;
    uint32_t lam_pages = o.MaxLamPages ? o.MaxLamPages : 65536;
    uint32_t pfn_entries = o.PfnPoolEntries ? o.PfnPoolEntries : 262144;
    uint32_t posted_entries = o.QueueEntries ? o.QueueEntries : 16384;
    if (blocks < 2 || blocks > 65536 || block_bytes < 4096 || block_bytes > 0x40000000u ||
        (block_bytes & 7) || max_requests > 65535 || max_objects > 65535)
        return STATUS_INVALID_PARAMETER;
    blocks = pow2_at_least(blocks); /* a block's index is a mask of its sequence number */
    uint32_t object_slots = pow2_at_least((uint64_t)max_objects * 2);
    uint32_t token_slots = pow2_at_least((uint64_t)max_objects * 2);
    uint32_t lam_slots = pow2_at_least((uint64_t)lam_pages * 2);

    /* The header: fixed part, TLVs, CRC. Strings are copied now. */
    uint32_t header_room = 1024;
    const char* texts[] = {o.ProviderName, o.ProviderVersion, o.ProviderDescription, o.Profile,
                           o.Label,        o.Platform,        o.ProviderSpec,        o.ProfileJson};
    for (unsigned i = 0; i < sizeof texts / sizeof texts[0]; ++i)
        header_room += 16 + (uint32_t)CAP_ALIGN8(text_length(texts[i], 1u << 20));
    header_room += 16 + (uint32_t)CAP_ALIGN8(sizeof(NDK_ADAPTER_INFO));

    SIZE_T total = 0;
    total += CAP_ALIGN8(sizeof(NDKCAP));
    total += CAP_ALIGN8((SIZE_T)blocks * block_bytes);
    total += CAP_ALIGN8((SIZE_T)blocks * sizeof(uint64_t));
    total += CAP_ALIGN8((SIZE_T)block_bytes + NDKT_FRAME_HEADER_BYTES);
    total += CAP_ALIGN8(header_room);
    total += CAP_ALIGN8((SIZE_T)max_objects * sizeof(struct cap_object));
    total += CAP_ALIGN8((SIZE_T)object_slots * sizeof(uint32_t));
    total += CAP_ALIGN8(((SIZE_T)max_objects + 63) / 64 * sizeof(uint64_t));
    total += 2 * CAP_ALIGN8((SIZE_T)token_slots * sizeof(uint64_t));
    total += CAP_ALIGN8((SIZE_T)lam_slots * sizeof(struct cap_lam_slot));
    total += CAP_ALIGN8((SIZE_T)pfn_entries * sizeof(uint64_t));
    total += CAP_ALIGN8((SIZE_T)posted_entries * sizeof(struct cap_posted));
    total += CAP_ALIGN8((SIZE_T)max_requests * sizeof(struct cap_request));
    uint8_t* memory = (uint8_t*)Host->Allocate(Host->Context, total);
    if (!memory) return STATUS_INSUFFICIENT_RESOURCES;
    uint8_t* at = memory;
    NDKCAP* c = (NDKCAP*)carve(&at, sizeof(NDKCAP));
    cap_fill(c, 0, sizeof *c);
    c->memory = memory;
    c->memory_bytes = total;
    c->host = *Host;
    c->options = o.Flags;
    c->ring = (uint8_t*)carve(&at, (SIZE_T)blocks * block_bytes);
    c->blocks = blocks;
    c->block_mask = blocks - 1;
    c->block_bytes = block_bytes;
    c->max_bytes = block_bytes / 4;
    /* A record of NdkGetCqResults carries up to CAP_PLAN landings: deferred ones add at most a
     * quarter block to it. */
    c->defer_bytes = CAP_MIN(NDKCAP_DEFER_BYTES, block_bytes / 64u);
    /* Below the drain's pressure mark (half the ring: calls in flight expire) with room to spare.
     */
    c->defer_blocks =
        (o.Flags & NDKCAP_DIGEST_IN_CALL) ? 0u : (blocks * 3 / 8 ? blocks * 3 / 8 : 1u);
    c->reserved = (volatile uint64_t*)carve(&at, (SIZE_T)blocks * sizeof(uint64_t));
    c->staging = (uint8_t*)carve(&at, (SIZE_T)block_bytes + NDKT_FRAME_HEADER_BYTES);
    c->header = (uint8_t*)carve(&at, header_room);
    c->objects = (struct cap_object*)carve(&at, (SIZE_T)max_objects * sizeof(struct cap_object));
    c->max_objects = max_objects;
    c->object_slots = (volatile uint32_t*)carve(&at, (SIZE_T)object_slots * sizeof(uint32_t));
    c->object_mask = object_slots - 1;
    c->open_qps =
        (volatile uint64_t*)carve(&at, ((SIZE_T)max_objects + 63) / 64 * sizeof(uint64_t));
    c->local_tokens = (volatile uint64_t*)carve(&at, (SIZE_T)token_slots * sizeof(uint64_t));
    c->remote_tokens = (volatile uint64_t*)carve(&at, (SIZE_T)token_slots * sizeof(uint64_t));
    c->token_mask = token_slots - 1;
    c->lam = (struct cap_lam_slot*)carve(&at, (SIZE_T)lam_slots * sizeof(struct cap_lam_slot));
    c->lam_mask = lam_slots - 1;
    c->pfns = (uint64_t*)carve(&at, (SIZE_T)pfn_entries * sizeof(uint64_t));
    c->pfn_entries = pfn_entries;
    c->posted = (struct cap_posted*)carve(&at, (SIZE_T)posted_entries * sizeof(struct cap_posted));
    c->posted_entries = posted_entries;
    c->requests =
        (struct cap_request*)carve(&at, (SIZE_T)max_requests * sizeof(struct cap_request));
    c->max_requests = max_requests;
    /* The host's memory is zeroed (the contract); the ring's commit words must be. */
    for (uint32_t b = 0; b < blocks; ++b)
        c->reserved[b] = (uint64_t)b << 32;
    for (uint32_t i = 0; i < 32; ++i)
        c->pfn_free[i] = c->posted_free[i] = 0xFFFFFFFFu;
    for (uint32_t i = 0; i < max_objects; ++i)
        c->objects[i].index = i;
    c->crc_instruction = CAP_HAVE_CRC_INSTRUCTION && cpu_has_crc32c();
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t r = i;
        for (int k = 0; k < 8; ++k)
            r = (r >> 1) ^ (0x82F63B78u & (0u - (r & 1u))); /* CRC-32C */
        c->crc_table[0][i] = r;
    }
    for (uint32_t i = 0; i < 256; ++i)
        for (int t = 1; t < 8; ++t)
            c->crc_table[t][i] =
                (c->crc_table[t - 1][i] >> 8) ^ c->crc_table[0][c->crc_table[t - 1][i] & 0xFF];
    c->flags =
        (Host->Timestamp ? NDKT_CAPTURE_TIMES : 0u) | (Host->CurrentIrql ? NDKT_CAPTURE_IRQL : 0u);
    if (Host->Timestamp && !(o.Flags & NDKCAP_ALL_TIMES)) {
        c->flags |= NDKT_CAPTURE_DATA_PATH_UNTIMED;
        c->untimed_functions = NDKT_DATA_PATH_FUNCTIONS;
    }
    if (Host->MapPage && !(o.Flags & NDKCAP_NO_DIGESTS)) {
        c->flags |= NDKT_CAPTURE_DIGESTS;
        if (o.Flags & NDKCAP_SOURCE_BYTES) c->flags |= NDKT_CAPTURE_SOURCE_BYTES;
        if (o.Flags & NDKCAP_LANDED_BYTES) c->flags |= NDKT_CAPTURE_LANDED_BYTES;
        c->digest_limit = o.DigestLimit;
    }

    /* Header TLVs that do not need the adapter; NdkCaptureAttach adds the rest and the CRC. */
    struct cap_out out = {c->header};
    cap_copy(out.p, NDKT_MAGIC, 8);
    out.p += 8;
    put16(&out, NDKT_VERSION_MAJOR);
    put16(&out, NDKT_VERSION_MINOR);
    put32(&out, 0); /* header_bytes, at attach */
    tlv_text(&out, NDKT_TAG_WRITER, "ndkct-capture 1.5");
    tlv_text(&out, NDKT_TAG_PROVIDER_NAME, o.ProviderName);
    tlv_text(&out, NDKT_TAG_PROVIDER_VERSION, o.ProviderVersion);
    tlv_text(&out, NDKT_TAG_PROVIDER_DESCRIPTION, o.ProviderDescription);
    tlv_text(&out, NDKT_TAG_PROVIDER_SPEC, o.ProviderSpec);
    tlv_text(&out, NDKT_TAG_PROFILE, o.Profile);
    tlv_text(&out, NDKT_TAG_PROFILE_JSON, o.ProfileJson);
    tlv_text(&out, NDKT_TAG_LABEL, o.Label);
    tlv_text(&out, NDKT_TAG_PLATFORM, o.Platform);
    uint32_t page_size = PAGE_SIZE;
    tlv(&out, NDKT_TAG_PAGE_SIZE, &page_size, 4);
    tlv(&out, NDKT_TAG_PFN_SPACE, &o.PfnSpace, 8);
    if (c->digest_limit) tlv(&out, NDKT_TAG_DIGEST_LIMIT, &c->digest_limit, 4);
    tlv(&out, NDKT_TAG_SEED, &o.Seed, 8);
    uint64_t ticks = Host->Timestamp ? o.TicksPerSecond : 0;
    tlv(&out, NDKT_TAG_TICKS_PER_SECOND, &ticks, 8);
    tlv(&out, NDKT_TAG_CAPTURE_FLAGS, &c->flags, 4);
    uint16_t families[2] = {o.AfInet ? o.AfInet : 2, o.AfInet6 ? o.AfInet6 : 10};
    tlv(&out, NDKT_TAG_ADDRESS_FAMILIES, families, 4);
    c->header_bytes = (uint32_t)(out.p - c->header);

    /* One registry slot: dispatch entries find their capture through it. */
    for (uint32_t i = 0; i < CAP_MAX_CAPTURES; ++i) {
        if (cas64((volatile uint64_t*)&g_captures[i], 0, (uint64_t)(ULONG_PTR)c)) {
            c->registry_index = i;
            for (uint32_t limit = ld32(&g_capture_limit); limit <= i;
                 limit = ld32(&g_capture_limit))
                if (cas32(&g_capture_limit, limit, i + 1)) break;
            *ppCapture = c;
            return STATUS_SUCCESS;
        }
    }
    Host->Free(Host->Context, memory, total);
    return STATUS_INSUFFICIENT_RESOURCES;
}

VOID NdkCaptureGetStats(const NDKCAP* c, NDKCAP_STATS* s) {
    NDKCAP* m = (NDKCAP*)c;
    s->Records = ld64(&m->records);
    s->LostRecords = ld64(&m->lost_records);
    s->LostBytes = ld64(&m->lost_bytes);
    s->BytesWritten = ld64(&m->bytes_written);
    s->Untracked = ld64(&m->untracked);
    s->WriteErrors = ld64(&m->write_errors);
}

/* ================================ The ring ================================ */

#define RES_SEALED 0x80000000ull
#define RES_OFFSET(r) ((uint32_t)((r)&0x7FFFFFFFull))
#define RES_GEN(r) ((uint32_t)((r) >> 32))

/* Room for `size` bytes (prefix included) in the current block, or NULL when the ring is full
 * (the caller counts the loss); *position: where it starts among every byte ever reserved. */
CAP_ALWAYS_INLINE uint8_t* ring_reserve(NDKCAP* c, uint32_t size, uint64_t* position) {
    for (int attempt = 0; attempt < 64; ++attempt) {
        uint64_t s = ld64(&c->current);
        volatile uint64_t* res = &c->reserved[s & c->block_mask];
        uint64_t r = ld64(res);
        if (RES_GEN(r) == (uint32_t)s && !(r & RES_SEALED)) {
            uint32_t off = RES_OFFSET(r);
            if (off + size <= c->block_bytes) {
                if (cas64(res, r, r + size)) {
                    *position = s * c->block_bytes + off;
                    return c->ring + (SIZE_T)(s & c->block_mask) * c->block_bytes + off;
                }
                continue;
            }
            if (!cas64(res, r, r | RES_SEALED)) continue;
        } else if (RES_GEN(r) != (uint32_t)s) {
            /* Another producer moved on meanwhile (look again), or the drain has already
             * emptied this sealed block and handed it back for its next round: then `current`
             * is behind and must move on like after a seal. */
            if (ld64(&c->current) != s || RES_GEN(r) != (uint32_t)(s + c->blocks)) continue;
        }
        /* Sealed: move to the next block if the drain has freed it. */
        uint64_t next = s + 1;
        if (RES_GEN(ld64(&c->reserved[next & c->block_mask])) != (uint32_t)next) return 0;
        cas64(&c->current, s, next);
    }
    return 0;
}

CAP_INLINE void ring_commit(uint8_t* ring_record, uint64_t seq, uint32_t state) {
    st64((volatile uint64_t*)ring_record, (seq << 8) | state);
}

/* Where the next reservation will start: after every byte reserved so far. */
CAP_INLINE uint64_t ring_free_position(NDKCAP* c) {
    for (;;) {
        uint64_t s = ld64(&c->current);
        uint64_t r = ld64(&c->reserved[s & c->block_mask]);
        if (RES_GEN(r) == (uint32_t)s) return s * c->block_bytes + RES_OFFSET(r);
        /* Sealed, drained and handed back while `current` still names it: the next
         * reservation goes to the next block (ring_reserve). */
        if (ld64(&c->current) == s) return (s + 1) * c->block_bytes;
    }
}

/* ---- The event count ----
 * The ring counts events (spec/TRACE.md: counts only order, with gaps, since 1.2): a record's
 * count is 8 * (the byte position of its ring record) + 64, so the one atomic operation that
 * reserves an entry-recorded call's, a callback's or a meta record's room also orders it. The
 * counts between two records name moments that reserve nothing: a return that nothing came
 * before takes its entry's count + 1 (its record is still the last one: a plain load tells),
 * and the entry of a return-recorded call takes 8 * (the free position) + its thread's slot
 * (below any record reserved after it, above every one before, apart from another thread's
 * entry at the same position). Any other return reserves an empty slot for its count
 * (count_now). */
#define CAP_COUNT(position) ((position)*8u + 64u)

CAP_INLINE uint64_t count_between(NDKCAP* c, const struct cap_thread* t) {
    uint64_t slot = t ? (uint64_t)(t - c->threads) : CAP_THREADS - 1u;
    return ring_free_position(c) * 8u + slot;
}

/* A count of its own for this moment: an empty ring slot the drain skips (RING_PAD). */
static uint64_t count_now(NDKCAP* c, const struct cap_thread* t) {
    uint64_t position;
    uint8_t* pad = ring_reserve(c, CAP_RING_PREFIX, &position);
    if (!pad) return count_between(c, t); /* the ring is full: the next best order */
    *(uint32_t*)(pad + 8) = CAP_RING_PREFIX;
    *(uint32_t*)(pad + 12) = 0;
    ring_commit(pad, 0, RING_PAD);
    return CAP_COUNT(position);
}

static void count_loss(NDKCAP* c, uint32_t bytes) {
    add64(&c->lost_records, 1);
    add64(&c->lost_bytes, bytes);
    add64(&c->pending_lost_records, 1);
    add64(&c->pending_lost_bytes, bytes);
}

/* A record being written: where its header and body are. */
struct cap_record {
    uint8_t* ring; /* the ring record (prefix), or NULL when lost */
    uint8_t* head; /* the 40-byte header */
    uint8_t* body;
    uint32_t size; /* header + body */
    uint64_t seq, time;
    uint64_t end;        /* the byte position after its ring record */
    uint8_t* defer_link; /* where the next deferred DATA block's offset goes */
};

/* Reserves a record of `body` bytes (a multiple of 8); writes a LOSS record first when records
 * were lost since the last one kept. */
CAP_ALWAYS_INLINE int record_reserve(NDKCAP* c, struct cap_record* r, uint32_t body) {
    uint32_t size = NDKT_RECORD_HEADER_BYTES + body;
    uint32_t need = CAP_RING_PREFIX + size;
    uint64_t lost = ld64(&c->pending_lost_records);
    uint32_t loss_size = CAP_RING_PREFIX + NDKT_RECORD_HEADER_BYTES + 16;
    uint64_t position;
    uint8_t* at = ring_reserve(c, lost ? need + loss_size : need, &position);
    if (!at) {
        count_loss(c, size);
        r->ring = 0;
        return 0;
    }
    if (lost) {
        uint64_t n = xchg64(&c->pending_lost_records, 0);
        uint64_t b = xchg64(&c->pending_lost_bytes, 0);
        uint8_t* h = at + CAP_RING_PREFIX;
        cap_fill(h, 0, NDKT_RECORD_HEADER_BYTES);
        struct cap_out o = {h};
        put16(&o, NDKT_META_LOSS);
        put8(&o, 0);
        put8(&o, 0);
        put32(&o, NDKT_RECORD_HEADER_BYTES + 16);
        o.p = h + NDKT_RECORD_HEADER_BYTES;
        put64(&o, n);
        put64(&o, b);
        *(uint32_t*)(at + 8) = loss_size;
        *(uint32_t*)(at + 12) = 0;
        ring_commit(at, 0, n ? RING_COMPLETE : RING_PAD);
        at += loss_size;
        position += loss_size;
    }
    r->end = position + need;
    *(uint32_t*)(at + 8) = need;
    *(uint32_t*)(at + 12) = 0;
    r->ring = at;
    r->defer_link = at + 12;
    r->head = at + CAP_RING_PREFIX;
    r->body = r->head + NDKT_RECORD_HEADER_BYTES;
    r->size = size;
    return 1;
}

/* The count a reserved record's place in the ring gives it. */
CAP_INLINE uint64_t record_count(const struct cap_record* r) {
    return CAP_COUNT(r->end - CAP_RING_PREFIX - r->size);
}

/* ---- Threads: nesting and callbacks ---- */

static struct cap_thread* thread_lookup(NDKCAP* c, uint32_t id) {
    uint32_t h = (uint32_t)mix64(id) & (CAP_THREADS - 1);
    for (uint32_t i = 0; i < CAP_THREADS; ++i) {
        struct cap_thread* t = &c->threads[(h + i) & (CAP_THREADS - 1)];
        uint32_t seen = ld32(&t->id);
        if (seen == id) return t;
        if (seen == 0 && cas32(&t->id, 0, id)) return t;
        if (ld32(&t->id) == id) return t;
    }
    return 0;
}

/* The thread's slot: the one the last call used first (a consumer mostly calls from one thread
 * at a time), written only when it changes, so that calls of one thread share no line. */
CAP_INLINE struct cap_thread* thread_of(NDKCAP* c, uint32_t id) {
    uint32_t hint = ld32(&c->thread_hint);
    if (hint < CAP_THREADS && ld32(&c->threads[hint].id) == id) return &c->threads[hint];
    struct cap_thread* t = thread_lookup(c, id);
    if (t) st32(&c->thread_hint, (uint32_t)(t - c->threads));
    return t;
}

/* Where a call or callback runs: its thread, and what it is nested in. */
struct cap_frame {
    struct cap_thread* thread;
    uint32_t thread_id;
    uint8_t flags, irql;
    uint16_t parent;
};

CAP_INLINE void frame_enter(NDKCAP* c, struct cap_frame* f, uint16_t kind, int callback) {
    f->thread_id = c->host.CurrentThread(c->host.Context);
    f->irql = c->host.CurrentIrql ? c->host.CurrentIrql(c->host.Context) : NDKT_IRQL_UNKNOWN;
    f->thread = thread_of(c, f->thread_id);
    f->flags = 0;
    f->parent = 0;
    struct cap_thread* t = f->thread;
    if (!t) return;
    if (t->depth == 0) { /* the consumer's own call: most of them */
        t->kind[0] = kind;
        t->callback[0] = (uint8_t)(callback ? 1 : 0);
        t->depth = 1;
        return;
    }
    if (t->depth <= CAP_DEPTH) {
        uint32_t top = t->depth - 1;
        f->parent = t->kind[top];
        f->flags = t->callback[top] ? NDKT_FLAG_IN_CALLBACK : NDKT_FLAG_NESTED;
        /* A call inside a callback inside ...: in a callback all the same. */
        for (uint32_t i = 0; i < t->depth; ++i)
            if (t->callback[i]) f->flags |= NDKT_FLAG_IN_CALLBACK;
        if (t->callback[top]) f->flags &= (uint8_t)~NDKT_FLAG_NESTED;
    }
    if (t->depth < CAP_DEPTH) {
        t->kind[t->depth] = kind;
        t->callback[t->depth] = (uint8_t)(callback ? 1 : 0);
    }
    ++t->depth;
}

CAP_INLINE void frame_leave(struct cap_frame* f) {
    if (f->thread && f->thread->depth) --f->thread->depth;
}

/* Fills the header of a reserved record. */
static void record_header(struct cap_record* r, uint16_t kind, const struct cap_frame* f) {
    /* Five words (little-endian): kind, flags, 0, size | thread, irql, 0, parent | seq | time |
     * return_delta, duration (0 until the call returns). */
    uint64_t w0 = (uint64_t)kind | (uint64_t)(f ? f->flags : 0u) << 16 | (uint64_t)r->size << 32;
    uint64_t w1 = f ? (uint64_t)f->thread_id | (uint64_t)f->irql << 32 | (uint64_t)f->parent << 48
                    : (uint64_t)NDKT_IRQL_UNKNOWN << 32;
    uint64_t w[5] = {w0, w1, r->seq, r->time, 0};
    cap_copy(r->head, w, sizeof w);
}

CAP_INLINE void record_returned(NDKCAP* c, struct cap_record* r, uint64_t seq_back,
                                uint64_t time_back) {
    uint32_t delta = (uint32_t)CAP_MIN(seq_back - r->seq, 0xFFFFFFFFull);
    uint64_t d = time_back > r->time ? time_back - r->time : 0;
    cap_copy(r->head + 32, &delta, 4);
    uint32_t duration = (uint32_t)CAP_MIN(d, 0xFFFFFFFFull);
    cap_copy(r->head + 36, &duration, 4);
    (void)c;
}

/* ---- Drain ---- */

static int flush_staging(NDKCAP* c) {
    if (!c->staging_records) return 0;
    uint32_t payload = c->staging_used - NDKT_FRAME_HEADER_BYTES;
    struct cap_out o = {c->staging};
    put32(&o, NDKT_FRAME_MAGIC);
    put32(&o, payload);
    put32(&o, c->staging_records);
    put32(&o, crc32_update(c->crc_table, c->crc_instruction, 0,
                           c->staging + NDKT_FRAME_HEADER_BYTES, payload));
    int failed = c->host.Write(c->host.Context, c->staging, c->staging_used) != 0;
    if (failed)
        add64(&c->write_errors, 1);
    else
        add64(&c->bytes_written, c->staging_used);
    c->staging_used = NDKT_FRAME_HEADER_BYTES;
    c->staging_records = 0;
    return failed ? -1 : 0;
}

/* Copies a record into the frame; `deferred`: the offset of its first deferred DATA block (see
 * CAP_DATA_DEFERRED), whose digests are taken here and whose bytes stay behind. */
static int stage(NDKCAP* c, const uint8_t* record, uint32_t size, uint8_t extra_flags,
                 uint32_t deferred) {
    if (c->staging_used + size > c->block_bytes + NDKT_FRAME_HEADER_BYTES)
        if (flush_staging(c) < 0) return -1;
    uint8_t* to = c->staging + c->staging_used;
    if (!deferred) {
        cap_copy(to, record, size);
    } else {
        uint32_t from = 0, put = 0;
        while (deferred) {
            const uint8_t* data = record + deferred;
            uint16_t pieces;
            uint32_t length, next;
            cap_copy(&pieces, data + 2, 2);
            cap_copy(&length, data + 4, 4);
            cap_copy(&next, data + 8, 4);
            uint32_t head = 16u + (uint32_t)pieces * 16u;
            /* Written by write_data within the record, after the last one: never otherwise. */
            if (deferred < from || deferred + head + CAP_ALIGN8(length) > size) break;
            cap_copy(to + put, record + from, deferred + head - from);
            put += deferred + head - from;
            uint64_t digest = NdkCaptureDigest(data + head, length);
            uint8_t* block = to + put - head;
            block[1] = (uint8_t)(block[1] & ~CAP_DATA_DEFERRED);
            cap_copy(block + 8, &digest, 8);
            from = deferred + head + (uint32_t)CAP_ALIGN8(length);
            deferred = next;
        }
        cap_copy(to + put, record + from, size - from);
        size = put + size - from;
        cap_copy(to + 4, &size, 4);
    }
    to[2] |= extra_flags;
    c->staging_used += size;
    ++c->staging_records;
    /* Counted here, by the one thread that drains, rather than by every producer: one atomic
     * less on the NDK call path. */
    st64(&c->records, ld64(&c->records) + 1);
    return 0;
}

/* Emits complete records in ring order. `force`: calls still in flight are written as they are
 * (NDKT_FLAG_EXPIRED; their outcome follows in a RETURN record if they ever return). */
static LONG64 drain(NDKCAP* c, int force) {
    uint64_t before = ld64(&c->bytes_written);
    if (!c->staging_used) c->staging_used = NDKT_FRAME_HEADER_BYTES;
    for (;;) {
        uint64_t s = ld64(&c->drain_seq);
        uint32_t b = (uint32_t)(s & c->block_mask);
        uint64_t r = ld64(&c->reserved[b]);
        if (RES_GEN(r) != (uint32_t)s) break;
        /* Under pressure (half the ring waiting) calls in flight are written as they are. */
        int expire = force || (ld64(&c->current) - s) * 2 >= c->blocks;
        uint8_t* block = c->ring + (SIZE_T)b * c->block_bytes;
        uint32_t end = RES_OFFSET(r);
        int stopped = 0;
        while (c->drain_offset < end) {
            uint8_t* rec = block + c->drain_offset;
            uint64_t commit = ld64((volatile uint64_t*)rec);
            uint32_t state = (uint32_t)(commit & 0xFF);
            if (state == RING_EMPTY) {
                stopped = 1;
                break;
            }
            /* Read once published: the producer writes it after reserving, before its commit. */
            uint32_t ring_size = *(volatile uint32_t*)(rec + 8);
            uint8_t extra = 0;
            if (state == RING_ENTERED) {
                if (!expire ||
                    !cas64((volatile uint64_t*)rec, commit, (commit & ~0xFFull) | RING_EXPIRED)) {
                    stopped = 1;
                    break;
                }
                extra = NDKT_FLAG_EXPIRED;
            }
            if (state == RING_EXPIRED) extra = NDKT_FLAG_EXPIRED;
            if (state != RING_PAD)
                if (stage(c, rec + CAP_RING_PREFIX, ring_size - CAP_RING_PREFIX, extra,
                          *(volatile uint32_t*)(rec + 12)) < 0) {
                    stopped = 1;
                    break;
                }
            c->drain_offset += ring_size;
        }
        if (stopped || !(ld64(&c->reserved[b]) & RES_SEALED) ||
            c->drain_offset < RES_OFFSET(ld64(&c->reserved[b])))
            break;
        /* The block is done: zero its commit words' page of use and hand it back. */
        cap_fill(block, 0, c->drain_offset);
        c->drain_offset = 0;
        st64(&c->reserved[b], (s + c->blocks) << 32);
        st64(&c->drain_seq, s + 1);
    }
    if (flush_staging(c) < 0) return -1;
    return (LONG64)(ld64(&c->bytes_written) - before);
}

LONG64 NdkCaptureDrain(NDKCAP* c) {
    if (!c) return -1;
    if (!ld32((volatile uint32_t*)&c->header_written))
        return 0; /* Attach may still be writing it */
    return drain(c, 0);
}

/* ================================ Tables ================================ */

/* ---- Objects ---- */

CAP_INLINE uint32_t object_hash(const void* p) {
    return (uint32_t)mix64((uint64_t)(ULONG_PTR)p);
}

static struct cap_object* object_find_in(NDKCAP* c, const void* handle) {
    uint32_t h = object_hash(handle) & c->object_mask;
    for (uint32_t i = 0; i <= c->object_mask; ++i) {
        uint32_t v = ld32(&c->object_slots[(h + i) & c->object_mask]);
        if (v == 0) return 0;
        if (v == 0xFFFFFFFFu) continue;
        struct cap_object* o = &c->objects[v - 1];
        if (o->handle == handle) return o;
    }
    return 0;
}

static void object_unhash(NDKCAP* c, struct cap_object* o) {
    if (!o->handle) return;
    uint32_t h = object_hash(o->handle) & c->object_mask;
    for (uint32_t i = 0; i <= c->object_mask; ++i) {
        volatile uint32_t* slot = &c->object_slots[(h + i) & c->object_mask];
        uint32_t v = ld32(slot);
        if (v == 0) return;
        if (v == o->index + 1) {
            st32(slot, 0xFFFFFFFFu);
            return;
        }
    }
}

static int object_hash_insert(NDKCAP* c, struct cap_object* o) {
    uint32_t h = object_hash(o->handle) & c->object_mask;
    for (uint32_t i = 0; i <= c->object_mask; ++i) {
        volatile uint32_t* slot = &c->object_slots[(h + i) & c->object_mask];
        uint32_t v = ld32(slot);
        if (v == 0 || v == 0xFFFFFFFFu) {
            if (cas32(slot, v, o->index + 1)) return 1;
            --i;
            continue;
        }
        /* An older entry for the same pointer (closed, memory reused by the provider). */
        struct cap_object* old = &c->objects[v - 1];
        if (old != o && old->handle == o->handle && ld32(&old->state) != OBJ_OPEN)
            if (cas32(slot, v, o->index + 1)) return 1;
    }
    return 0;
}

/* A free entry (never one still open or being created), or NULL. Closed entries are reused
 * oldest-first, so a late call on a closed object still finds its table for a long while. */
static struct cap_object* object_new(NDKCAP* c, uint16_t type) {
    for (uint32_t attempt = 0; attempt < c->max_objects; ++attempt) {
        uint32_t i = add32(&c->object_cursor, 1) % c->max_objects;
        struct cap_object* o = &c->objects[i];
        uint32_t s = ld32(&o->state);
        if (s != OBJ_FREE && s != OBJ_CLOSED) continue;
        if (!cas32(&o->state, s, OBJ_CREATING)) continue;
        if (s == OBJ_CLOSED) object_unhash(c, o);
        uint32_t index = o->index, gen = o->gen + 1;
        cap_fill(o, 0, sizeof *o);
        o->index = index;
        o->gen = gen;
        o->type = type;
        o->null_member = NDKT_NO_MEMBER;
        st32(&o->state, OBJ_CREATING);
        return o;
    }
    add64(&c->untracked, 1);
    return 0;
}

/* An object's entry from its pointer, in whichever capture knows it. The object's Dispatch
 * names the entry itself (object_attach points it at the entry's table), unless the consumer
 * replaced it (GEN-CREATE-05): a table inside a capture's entries whose object is this one is
 * the entry, found without hashing; anything else is looked up. */
static struct cap_object* object_of(const void* handle, NDKCAP** capture) {
    uint32_t limit = ld32(&g_capture_limit);
    if (handle) {
        uintptr_t table = (uintptr_t)((const NDK_PD*)handle)->Dispatch;
        for (uint32_t i = 0; i < limit; ++i) {
            NDKCAP* c = (NDKCAP*)ld64((volatile uint64_t*)&g_captures[i]);
            if (!c) continue;
            /* Only object_attach points a Dispatch into the entries, at an entry's table. */
            uintptr_t at = table - (uintptr_t)&c->objects[0].table;
            if (at < (uintptr_t)c->max_objects * sizeof(struct cap_object)) {
                struct cap_object* o = (struct cap_object*)(void*)((uint8_t*)c->objects + at);
                if (o->handle == handle) {
                    *capture = c;
                    return o;
                }
            }
        }
    }
    for (uint32_t i = 0; i < limit; ++i) {
        NDKCAP* c = (NDKCAP*)ld64((volatile uint64_t*)&g_captures[i]);
        if (!c) continue;
        struct cap_object* o = object_find_in(c, handle);
        if (o) {
            *capture = c;
            return o;
        }
    }
    return 0;
}

/* The context the capture gives the provider for an object's events. */
CAP_INLINE PVOID object_context(NDKCAP* c, const struct cap_object* o) {
    return (PVOID)(ULONG_PTR)(((uint64_t)o->gen << 24) | ((uint64_t)c->registry_index << 20) |
                              ((uint64_t)o->index << 4) | 0x9);
}

static struct cap_object* object_from_context(PVOID ctx, NDKCAP** capture) {
    uint64_t v = (uint64_t)(ULONG_PTR)ctx;
    if ((v & 0xF) != 0x9) return 0;
    uint32_t reg = (uint32_t)((v >> 20) & 0xF);
    NDKCAP* c = (NDKCAP*)ld64((volatile uint64_t*)&g_captures[reg]);
    if (!c) return 0;
    uint32_t index = (uint32_t)((v >> 4) & 0xFFFF);
    if (index >= c->max_objects) return 0;
    struct cap_object* o = &c->objects[index];
    if (o->gen != (uint32_t)(v >> 24)) return 0;
    *capture = c;
    return o;
}

/* ---- Request slots: the context of every completion the capture asks for ---- */

static struct cap_request* request_new(NDKCAP* c, uint16_t kind, uint16_t function,
                                       struct cap_object* object, union cap_completion fn,
                                       PVOID ctx) {
    for (uint32_t attempt = 0; attempt < c->max_requests; ++attempt) {
        uint64_t n = add64(&c->request_cursor, 1);
        struct cap_request* q = &c->requests[n % c->max_requests];
        if (ld32(&q->busy)) continue;
        if (!cas32(&q->busy, 0, 1)) continue;
        uint64_t gen = n / c->max_requests + 1;
        q->kind = kind;
        q->function = function;
        q->object = object;
        q->consumer_fn = fn;
        q->consumer_ctx = ctx;
        q->lam = 0;
        q->mdl = 0;
        q->length = 0;
        st32(&q->returned, 0);
        st32(&q->callbacks, 0);
        st64(&q->id, (gen << 24) | ((uint64_t)c->registry_index << 20) |
                         ((uint64_t)(n % c->max_requests) << 4) | 0x5);
        return q;
    }
    add64(&c->untracked, 1);
    return 0;
}

static struct cap_request* request_from_context(PVOID ctx, NDKCAP** capture) {
    uint64_t v = (uint64_t)(ULONG_PTR)ctx;
    if ((v & 0xF) != 0x5) return 0;
    NDKCAP* c = (NDKCAP*)ld64((volatile uint64_t*)&g_captures[(v >> 20) & 0xF]);
    if (!c) return 0;
    uint32_t index = (uint32_t)((v >> 4) & 0xFFFF);
    if (index >= c->max_requests) return 0;
    struct cap_request* q = &c->requests[index];
    if (ld64(&q->id) != v) return 0;
    *capture = c;
    return q;
}

/* ---- Tokens ---- */

static void token_set(NDKCAP* c, volatile uint64_t* table, uint32_t token, struct cap_object* o) {
    uint64_t want = ((uint64_t)token << 32) | (o->index + 1);
    uint32_t h = (uint32_t)mix64(token) & c->token_mask;
    for (uint32_t i = 0; i <= c->token_mask; ++i) {
        volatile uint64_t* slot = &table[(h + i) & c->token_mask];
        uint64_t v = ld64(slot);
        if (v == 0 || (uint32_t)(v >> 32) == token) {
            if (cas64(slot, v, want)) return;
            --i;
        }
    }
    add64(&c->untracked, 1);
}

static struct cap_object* token_get(NDKCAP* c, volatile uint64_t* table, uint32_t token) {
    uint32_t h = (uint32_t)mix64(token) & c->token_mask;
    for (uint32_t i = 0; i <= c->token_mask; ++i) {
        uint64_t v = ld64(&table[(h + i) & c->token_mask]);
        if (v == 0) return 0;
        if ((uint32_t)(v >> 32) == token) {
            uint32_t index = (uint32_t)v - 1;
            return index < c->max_objects ? &c->objects[index] : 0;
        }
    }
    return 0;
}

/* ---- Logical pages (NdkBuildLam) ---- */

static void lam_insert(NDKCAP* c, uint64_t logical, uint64_t pfn) {
    uint64_t key = (logical & ~(uint64_t)(PAGE_SIZE - 1)) | 1;
    uint32_t h = (uint32_t)mix64(key) & c->lam_mask;
    for (uint32_t i = 0; i <= c->lam_mask; ++i) {
        struct cap_lam_slot* s = &c->lam[(h + i) & c->lam_mask];
        uint64_t v = ld64(&s->key);
        if (v == key) {
            s->pfn = pfn;
            return;
        }
        if ((v == 0 || v == 2) && cas64(&s->key, v, 3)) {
            s->pfn = pfn;
            st64(&s->key, key);
            return;
        }
    }
    add64(&c->untracked, 1);
}

static void lam_remove(NDKCAP* c, uint64_t logical) {
    uint64_t key = (logical & ~(uint64_t)(PAGE_SIZE - 1)) | 1;
    uint32_t h = (uint32_t)mix64(key) & c->lam_mask;
    for (uint32_t i = 0; i <= c->lam_mask; ++i) {
        struct cap_lam_slot* s = &c->lam[(h + i) & c->lam_mask];
        uint64_t v = ld64(&s->key);
        if (v == 0) return;
        if (v == key) {
            cas64(&s->key, key, 2);
            return;
        }
    }
}

static int lam_lookup(NDKCAP* c, uint64_t logical, uint64_t* pfn) {
    uint64_t key = (logical & ~(uint64_t)(PAGE_SIZE - 1)) | 1;
    uint32_t h = (uint32_t)mix64(key) & c->lam_mask;
    for (uint32_t i = 0; i <= c->lam_mask; ++i) {
        struct cap_lam_slot* s = &c->lam[(h + i) & c->lam_mask];
        uint64_t v = ld64(&s->key);
        if (v == 0) return 0;
        if (v == key) {
            *pfn = s->pfn;
            return 1;
        }
    }
    return 0;
}

/* ---- Two pools with size classes (PFN lists, posted-request rings) ----
 * Allocation and release take a try-lock: if another thread holds it, the caller goes without
 * (the object is untracked for digests) rather than wait. */

static uint32_t pool_class(uint32_t n) {
    uint32_t k = 0;
    while ((1u << k) < n && k < 31)
        ++k;
    return k;
}

static uint32_t pool_take(volatile uint32_t* lock, uint32_t* free_heads, volatile uint32_t* bump,
                          uint32_t capacity, uint32_t n, uint32_t* link_of_index,
                          uint32_t link_stride, uint8_t* base) {
    uint32_t k = pool_class(n), size = 1u << k;
    if (!cas32(lock, 0, 1)) return 0xFFFFFFFFu;
    uint32_t at = free_heads[k];
    if (at != 0xFFFFFFFFu) {
        free_heads[k] = *(uint32_t*)(base + (SIZE_T)at * link_stride);
    } else if (*bump + size <= capacity) {
        at = *bump;
        *bump += size;
    }
    st32(lock, 0);
    (void)link_of_index;
    return at;
}

static void pool_give(volatile uint32_t* lock, uint32_t* free_heads, uint32_t at, uint32_t n,
                      uint32_t link_stride, uint8_t* base) {
    if (at == 0xFFFFFFFFu) return;
    uint32_t k = pool_class(n);
    if (!cas32(lock, 0, 1)) return; /* leaked until close: counted nowhere, harmless */
    *(uint32_t*)(base + (SIZE_T)at * link_stride) = free_heads[k];
    free_heads[k] = at;
    st32(lock, 0);
}

static uint32_t pfns_take(NDKCAP* c, uint32_t n) {
    if (!n) n = 1;
    return pool_take(&c->pfn_lock, c->pfn_free, &c->pfn_bump, c->pfn_entries, n, 0,
                     sizeof(uint64_t), (uint8_t*)c->pfns);
}

static void pfns_give(NDKCAP* c, uint32_t at, uint32_t n) {
    pool_give(&c->pfn_lock, c->pfn_free, at, n ? n : 1, sizeof(uint64_t), (uint8_t*)c->pfns);
}

static void queue_make(NDKCAP* c, struct cap_queue* q, uint32_t depth) {
    uint32_t n = pow2_at_least((uint64_t)depth + 16);
    if (n > 4096) n = 4096;
    uint32_t at = pool_take(&c->posted_lock, c->posted_free, &c->posted_bump, c->posted_entries, n,
                            0, sizeof(struct cap_posted), (uint8_t*)c->posted);
    if (at == 0xFFFFFFFFu) {
        q->tracked = 0;
        add64(&c->untracked, 1);
        return;
    }
    cap_fill(&c->posted[at], 0, (SIZE_T)n * sizeof(struct cap_posted));
    q->base = at;
    q->mask = n - 1;
    q->head = q->tail = 0;
    q->tracked = 1;
}

static void queue_free(NDKCAP* c, struct cap_queue* q) {
    if (!q->tracked) return;
    q->tracked = 0;
    pool_give(&c->posted_lock, c->posted_free, q->base, q->mask + 1, sizeof(struct cap_posted),
              (uint8_t*)c->posted);
}

CAP_INLINE struct cap_posted* queue_at(NDKCAP* c, struct cap_queue* q, uint32_t i) {
    return &c->posted[q->base + (i & q->mask)];
}

/* ================================ Where bytes live ================================ */

/* Pieces of a byte range (a page each at most), and its length. With `at` NULL the pieces are
 * only counted (the first pass sizes a record; the second writes into it). */
struct cap_pieces {
    struct cap_piece* at; /* where the first `store` pieces go (NULL: counted only) */
    uint32_t store;
    uint32_t count, max;
    uint64_t length;
    uint64_t last_pfn;
    uint32_t last_end, has_last;
};

static int pieces_add(struct cap_pieces* p, uint64_t pfn, uint32_t offset, uint32_t size) {
    if (!size) return 1;
    p->length += size;
    if (p->has_last && p->last_pfn == pfn && p->last_end == offset) {
        p->last_end += size; /* contiguous within one page */
        if (p->count <= p->store) p->at[p->count - 1].size += size;
        return 1;
    }
    if (p->count >= p->max) return 0;
    if (p->count < p->store) {
        p->at[p->count].pfn = pfn;
        p->at[p->count].offset = offset;
        p->at[p->count].size = size;
    }
    ++p->count;
    p->last_pfn = pfn;
    p->last_end = offset + size;
    p->has_last = 1;
    return 1;
}

/* [offset, offset + bytes) of a region when it lies within one of its pages (bytes > 0). */
CAP_INLINE int region_one_piece(NDKCAP* c, struct cap_object* mr, uint64_t offset, uint64_t bytes,
                                struct cap_piece* out) {
    if (ld32(&mr->mr_kind) == MR_NONE || !mr->pfn_capacity) return 0;
    if (offset > mr->length || bytes > mr->length - offset) return 0;
    uint64_t at = (uint64_t)mr->fbo + offset;
    uint64_t first = at & (PAGE_SIZE - 1), page = at >> PAGE_SHIFT;
    if (first + bytes > PAGE_SIZE || page >= mr->pfn_count) return 0;
    out->pfn = c->pfns[mr->pfn_at + page];
    out->offset = (uint32_t)first;
    out->size = (uint32_t)bytes;
    return 1;
}

/* [offset, offset + bytes) of a registered or fast-registered MR. */
static int region_pieces(NDKCAP* c, struct cap_object* mr, uint64_t offset, uint64_t bytes,
                         struct cap_pieces* out) {
    struct cap_piece one;
    if (bytes && region_one_piece(c, mr, offset, bytes, &one)) /* most requests */
        return pieces_add(out, one.pfn, one.offset, one.size);
    if (ld32(&mr->mr_kind) == MR_NONE || !mr->pfn_capacity) return 0;
    if (offset > mr->length || bytes > mr->length - offset) return 0;
    uint64_t at = (uint64_t)mr->fbo + offset;
    while (bytes) {
        uint64_t page = at >> PAGE_SHIFT;
        if (page >= mr->pfn_count) return 0;
        uint32_t in = (uint32_t)(at & (PAGE_SIZE - 1));
        uint32_t take = (uint32_t)CAP_MIN(bytes, (uint64_t)(PAGE_SIZE - in));
        if (!pieces_add(out, c->pfns[mr->pfn_at + page], in, take)) return 0;
        at += take;
        bytes -= take;
    }
    return 1;
}

/* What a DATA block describes: local SGEs of a PD (the first `limit` bytes), or a remote range. */
struct cap_span {
    int remote;
    struct cap_object* pd;
    const NDK_SGE* sgl;
    ULONG n;
    uint64_t limit;
    uint32_t token;
    uint64_t address, length;
};

/* The registered or fast-registered MR a local token names, when the address is at or after its
 * start, or NULL. */
static struct cap_object* local_region(NDKCAP* c, uint32_t token, uint64_t address) {
    struct cap_object* mr = token_get(c, c->local_tokens, token);
    return mr && mr->local_token == token && mr->local_known && address >= mr->va ? mr : 0;
}

static int local_pieces(NDKCAP* c, const struct cap_span* s, struct cap_pieces* out) {
    uint64_t limit = s->limit;
    for (ULONG i = 0; i < s->n && limit; ++i) {
        uint64_t len = CAP_MIN((uint64_t)s->sgl[i].Length, limit);
        limit -= len;
        uint64_t address = (uint64_t)s->sgl[i].LogicalAddress.QuadPart;
        uint32_t token = s->sgl[i].MemoryRegionToken;
        if (s->pd && s->pd->has_privileged && token == s->pd->privileged_token) {
            /* SGE-01: a logical address, through the LAMs built on this adapter. */
            while (len) {
                uint64_t pfn;
                uint32_t in = (uint32_t)(address & (PAGE_SIZE - 1));
                uint32_t take = (uint32_t)CAP_MIN(len, (uint64_t)(PAGE_SIZE - in));
                if (!lam_lookup(c, address, &pfn) || !pieces_add(out, pfn, in, take)) return 0;
                address += take;
                len -= take;
            }
            continue;
        }
        struct cap_object* mr = local_region(c, token, address);
        if (!mr || !region_pieces(c, mr, address - mr->va, len, out)) return 0;
    }
    return 1;
}

/* The region a remote range names, when its MR or MW is one this capture knows (a window's MR,
 * the range inside the window), or NULL; the range starts at or after the region's address. */
static struct cap_object* remote_region(NDKCAP* c, const struct cap_span* s) {
    struct cap_object* o = token_get(c, c->remote_tokens, s->token);
    if (!o || o->remote_token != s->token || !o->remote_known) return 0;
    if (o->type == NdkObjectTypeMw) {
        if (!o->window_bound || !o->window_mr) return 0;
        if (s->address < o->window_va || s->length > o->window_length ||
            s->address - o->window_va > o->window_length - s->length)
            return 0;
        o = o->window_mr;
    }
    return s->address >= o->va ? o : 0;
}

/* A remote address and token, when the MR or MW is one this capture knows. */
static int remote_pieces(NDKCAP* c, const struct cap_span* s, struct cap_pieces* out) {
    if (!s->length) return 1;
    struct cap_object* o = remote_region(c, s);
    return o && region_pieces(c, o, s->address - o->va, s->length, out);
}

static int span_resolve(NDKCAP* c, const struct cap_span* s, struct cap_pieces* p) {
    return s->remote ? remote_pieces(c, s, p) : local_pieces(c, s, p);
}

/* Most requests: one SGE (or a remote range) within one page. Its piece, as span_resolve would
 * give it, or 0 (span_resolve then decides, the same way as before). */
static int span_one_piece(NDKCAP* c, const struct cap_span* s, struct cap_piece* out) {
    if (s->remote) {
        struct cap_object* o = s->length ? remote_region(c, s) : 0;
        return o && region_one_piece(c, o, s->address - o->va, s->length, out);
    }
    if (s->n != 1) return 0;
    uint64_t len = CAP_MIN((uint64_t)s->sgl[0].Length, s->limit);
    if (!len) return 0;
    uint64_t address = (uint64_t)s->sgl[0].LogicalAddress.QuadPart;
    uint32_t token = s->sgl[0].MemoryRegionToken;
    if (s->pd && s->pd->has_privileged && token == s->pd->privileged_token) {
        uint64_t first = address & (PAGE_SIZE - 1);
        if (first + len > PAGE_SIZE || !lam_lookup(c, address, &out->pfn)) return 0;
        out->offset = (uint32_t)first;
        out->size = (uint32_t)len;
        return 1;
    }
    struct cap_object* mr = local_region(c, token, address);
    return mr && region_one_piece(c, mr, address - mr->va, len, out);
}

/* A DATA block planned (sized) before its record is reserved. Its first piece is kept, so that
 * a block within one page (most requests) is not resolved a second time when it is written;
 * one only: NdkGetCqResults keeps CAP_PLAN plans on a kernel stack. */
#define CAP_PLAN_PIECES 1
struct cap_plan {
    struct cap_span span;
    uint8_t ok, with_bytes, deferred;
    uint8_t over_limit; /* longer than the digest limit: not read, only its length written */
    uint32_t count;     /* (small fields: NdkGetCqResults keeps CAP_PLAN plans on its stack) */
    uint64_t length;
    struct cap_piece pieces[CAP_PLAN_PIECES];
};

/* The bytes a span names, without resolving them. */
static uint64_t span_length(const struct cap_span* s) {
    if (s->remote) return s->length;
    uint64_t n = 0, limit = s->limit;
    for (ULONG i = 0; i < s->n && limit; ++i) {
        uint64_t len = CAP_MIN((uint64_t)s->sgl[i].Length, limit);
        n += len;
        limit -= len;
    }
    return n;
}

static uint32_t plan_data(NDKCAP* c, struct cap_plan* pl, int with_bytes) {
    pl->over_limit = 0;
    if (!(c->flags & NDKT_CAPTURE_DIGESTS)) {
        pl->ok = 0;
        return 16;
    }
    /* NDKCAP_OPTIONS.DigestLimit: a longer block is neither resolved nor read. */
    if (c->digest_limit) {
        uint64_t length = span_length(&pl->span);
        if (length > c->digest_limit) {
            pl->ok = 0;
            pl->over_limit = 1;
            pl->length = CAP_MIN(length, 0xFFFFFFFFull);
            return 16;
        }
    }
    if (!(c->options & NDKCAP_GENERAL_PATH) && span_one_piece(c, &pl->span, &pl->pieces[0])) {
        pl->ok = 1;
        pl->count = 1;
        pl->length = pl->pieces[0].size;
    } else {
        struct cap_pieces p = {pl->pieces, CAP_PLAN_PIECES, 0, CAP_MAX_PIECES, 0, 0, 0, 0};
        pl->ok = span_resolve(c, &pl->span, &p) != 0;
        pl->count = p.count;
        pl->length = p.length;
    }
    pl->with_bytes = pl->ok && with_bytes && pl->length <= c->max_bytes;
    /* A small block is copied now and digested by the drain, unless the ring is filling. */
    pl->deferred = pl->ok && !pl->with_bytes && pl->length >= NDKCAP_DEFER_MIN_BYTES &&
                   pl->length <= c->defer_bytes &&
                   ld64(&c->current) - ld64(&c->drain_seq) < c->defer_blocks;
    if (!pl->ok) return 16;
    return 16u + pl->count * 16u +
           (uint32_t)(pl->with_bytes || pl->deferred ? CAP_ALIGN8(pl->length) : 0);
}

/* A DATA block's 16-byte head, stored directly (no byte writer: its stores through a uint8_t
 * pointer make the compiler reload the writer's position after each one). */
CAP_INLINE void data_head(uint8_t* at, uint8_t role, uint8_t flags, uint16_t pieces,
                          uint32_t length, uint64_t digest) {
    at[0] = role;
    at[1] = flags;
    cap_copy(at + 2, &pieces, 2);
    cap_copy(at + 4, &length, 4);
    cap_copy(at + 8, &digest, 8);
}

/* Writes the planned DATA block (exactly the size plan_data gave) into record r. */
static void write_data(NDKCAP* c, struct cap_out* o, uint8_t role, const struct cap_plan* pl,
                       struct cap_record* r) {
    uint8_t* start = o->p;
    if (!pl->ok) {
        /* Over the digest limit: its length, and UNRESOLVED too (a 1.2 reader's "ignore"). */
        if (pl->over_limit)
            data_head(start, role, NDKT_DATA_UNRESOLVED | NDKT_DATA_OVER_LIMIT, 0,
                      (uint32_t)pl->length, 0);
        else
            data_head(start, role, NDKT_DATA_UNRESOLVED, 0, 0, 0);
        o->p = start + 16;
        return;
    }
    int copied = pl->with_bytes || pl->deferred;
    uint32_t count = pl->count;
    uint32_t length = (uint32_t)pl->length;
    uint32_t room = 16u + count * 16u + (uint32_t)(copied ? CAP_ALIGN8(length) : 0);
    if (count == 1 && !(c->options & NDKCAP_GENERAL_PATH)) { /* most blocks: one piece */
        struct cap_piece* piece = (struct cap_piece*)(void*)(start + 16);
        *piece = pl->pieces[0];
        const uint8_t* page = (const uint8_t*)c->host.MapPage(c->host.Context, piece->pfn);
        if (page) {
            const uint8_t* bytes = page + piece->offset;
            uint64_t digest = 0;
            uint8_t flags = pl->with_bytes ? NDKT_DATA_BYTES : 0u;
            if (copied) {
                uint8_t* copy = start + 32;
                cap_copy(copy, bytes, length);
                if (room > 32u + length) cap_fill(copy + length, 0, room - 32u - length);
            }
            if (pl->deferred) {
                /* Linked for the drain: the previous deferred block (or the ring prefix) names
                 * this one; the drain digests the copy. */
                uint32_t offset = (uint32_t)(start - r->head);
                cap_copy(r->defer_link, &offset, 4);
                r->defer_link = start + 8;
                flags |= CAP_DATA_DEFERRED;
            } else {
                digest = NdkCaptureDigest(bytes, length);
            }
            data_head(start, role, flags, 1, length, digest);
            o->p = start + room;
            return;
        }
    }
    struct cap_piece* at = (struct cap_piece*)(void*)(start + 16);
    int ok = 1;
    if (count <= CAP_PLAN_PIECES) {
        cap_copy(at, pl->pieces, count * sizeof(struct cap_piece));
    } else {
        struct cap_pieces p = {at, count, 0, count, 0, 0, 0, 0};
        ok = span_resolve(c, &pl->span, &p) && p.count == count && p.length == pl->length;
    }
    /* Deferred: the bytes are copied now and digested by the drain (no digest state here). */
    int digesting = ok && !pl->deferred;
    struct cap_digest d;
    if (digesting) digest_begin(&d, length);
    uint8_t* copy = start + 16 + (SIZE_T)count * 16;
    for (uint32_t i = 0; ok && i < count; ++i) {
        const uint8_t* page = (const uint8_t*)c->host.MapPage(c->host.Context, at[i].pfn);
        if (!page) {
            ok = 0;
            break;
        }
        if (digesting) digest_bytes(&d, page + at[i].offset, at[i].size);
        if (copied) {
            cap_copy(copy, page + at[i].offset, at[i].size);
            copy += at[i].size;
        }
    }
    data_head(start, role,
              (uint8_t)((pl->with_bytes ? NDKT_DATA_BYTES : 0u) | (ok ? 0u : NDKT_DATA_UNRESOLVED) |
                        (ok && pl->deferred ? CAP_DATA_DEFERRED : 0u)),
              (uint16_t)count, length, ok && digesting ? digest_end(&d) : 0);
    if (ok && pl->deferred) {
        /* Linked for the drain: the previous deferred block (or the ring prefix) names this one. */
        uint32_t offset = (uint32_t)(start - r->head);
        cap_copy(r->defer_link, &offset, 4);
        r->defer_link = start + 8;
    }
    if (!ok)
        cap_fill(start + 16, 0, room - 16);
    else if (copied && room > 16u + count * 16u + length)
        cap_fill(copy, 0, room - 16u - count * 16u - length);
    o->p = start + room;
}

/* DATAOPT: u32 count, u32 0, DATA[count]. */
CAP_INLINE uint32_t dataopt_size(int present, uint32_t data_room) {
    return 8u + (present ? data_room : 0u);
}

/* ================================ Records for objects ================================ */

/* OBJ: what a consumer sees of a handed-out object (GEN-CREATE-06/07, VER-03, GEN-MAND-01). */
static void put_obj(struct cap_out* o, const void* handle, uint16_t null_member,
                    uint8_t dispatch_null) {
    const NDK_OBJECT_HEADER* h = (const NDK_OBJECT_HEADER*)handle;
    putptr(o, handle);
    if (!h) {
        put64(o, 0);
        put64(o, 0);
        return;
    }
    put16(o, h->Version.Major);
    put16(o, h->Version.Minor);
    put32(o, (uint32_t)h->ObjectType);
    put16(o, null_member);
    uint8_t nonzero = 0;
    const uint8_t* r = (const uint8_t*)&h->NdkReserved;
    for (unsigned i = 0; i < sizeof h->NdkReserved; ++i)
        nonzero |= r[i];
    put8(o, nonzero ? 1 : 0);
    put8(o, dispatch_null);
    put32(o, 0);
}

static void object_attach(NDKCAP* c, struct cap_object* o, void* handle); /* below */
static void region_unstage(NDKCAP* c, struct cap_object* mr);             /* below */

/* Where the closed object's resources go. */
static void object_closed(NDKCAP* c, struct cap_object* o) {
    if (o->type == NdkObjectTypeQp)
        and64(&c->open_qps[o->index / 64], ~((uint64_t)1 << (o->index % 64)));
    if (o->type == NdkObjectTypeQp || o->type == NdkObjectTypeSrq) {
        queue_free(c, &o->initiator);
        queue_free(c, &o->receive);
    }
    if (o->type == NdkObjectTypeMr) region_unstage(c, o);
    if (o->type == NdkObjectTypeMr && o->pfn_capacity) {
        st32(&o->mr_kind, MR_NONE);
        pfns_give(c, o->pfn_at, o->pfn_capacity);
        o->pfn_capacity = 0;
        o->pfn_at = 0xFFFFFFFFu;
    }
    st32(&o->state, OBJ_CLOSED);
}

/* ================================ MDL chains ================================ */

/* Bytes of the MDLCHAIN block, and how many MDLs it lists. */
static uint32_t mdl_chain_size(const MDL* mdl) {
    uint32_t size = 8, n = 0;
    for (; mdl && n < CAP_MDL_LIMIT; mdl = mdl->Next, ++n) {
        size += 32;
        ULONG pages = MmGetMdlPageCount(mdl);
        const PFN_NUMBER* pfn = MmGetMdlPfnArrayConst(mdl);
        for (ULONG i = 0; i < pages; ++i)
            if (i == 0 || pfn[i] != pfn[i - 1] + 1) size += 16;
    }
    return size;
}

static void put_mdl_chain(struct cap_out* o, const MDL* mdl) {
    uint8_t* count_at = o->p;
    put32(o, 0);
    put32(o, 0);
    uint32_t n = 0;
    for (; mdl && n < CAP_MDL_LIMIT; mdl = mdl->Next, ++n) {
        putptr(o, mdl->StartVa);
        putptr(o, mdl->MappedSystemVa);
        put32(o, mdl->ByteCount);
        put32(o, mdl->ByteOffset);
        put16(o, (uint16_t)mdl->MdlFlags);
        put16(o, (uint16_t)mdl->Size);
        uint8_t* runs_at = o->p;
        put32(o, 0);
        ULONG pages = MmGetMdlPageCount(mdl);
        const PFN_NUMBER* pfn = MmGetMdlPfnArrayConst(mdl);
        uint32_t runs = 0;
        for (ULONG i = 0; i < pages;) {
            ULONG j = i + 1;
            while (j < pages && pfn[j] == pfn[j - 1] + 1)
                ++j;
            put64(o, pfn[i]);
            put64(o, j - i);
            ++runs;
            i = j;
        }
        cap_copy(runs_at, &runs, 4);
    }
    cap_copy(count_at, &n, 4);
    uint32_t flags = mdl ? NDKT_MDL_CHAIN_CUT : 0;
    cap_copy(count_at + 4, &flags, 4);
}

/* A checksum of a chain's MDLs and PFN arrays (LAM-REL-02: NdkBuildLam may not change it). */
static uint64_t mdl_chain_digest(const MDL* mdl) {
    struct cap_digest d;
    digest_begin(&d, 0);
    for (uint32_t n = 0; mdl && n < CAP_MDL_LIMIT; mdl = mdl->Next, ++n) {
        digest_bytes(&d, (const uint8_t*)mdl, sizeof(MDL));
        digest_bytes(&d, (const uint8_t*)MmGetMdlPfnArrayConst(mdl),
                     (SIZE_T)MmGetMdlPageCount(mdl) * sizeof(PFN_NUMBER));
    }
    return digest_end(&d);
}

/* Visits the pages under the first `length` bytes of a virtually contiguous chain, as a driver
 * reads them (a page a joint falls in is visited once). Returns the count, or -1 when the chain
 * is not contiguous or too short. */
static int64_t mdl_walk(const MDL* chain, uint64_t length,
                        void (*visit)(void* ctx, uint64_t index, uint64_t pfn), void* ctx) {
    if (!chain) return -1;
    uint64_t expected = (uint64_t)(ULONG_PTR)MmGetMdlVirtualAddress(chain);
    uint64_t last_page = ~0ull, count = 0, remaining = length;
    for (uint32_t n = 0; chain && remaining && n < CAP_MDL_LIMIT; chain = chain->Next, ++n) {
        uint64_t va = (uint64_t)(ULONG_PTR)MmGetMdlVirtualAddress(chain);
        if (va != expected) return -1;
        uint64_t take = CAP_MIN((uint64_t)chain->ByteCount, remaining);
        uint64_t pages =
            take ? ADDRESS_AND_SIZE_TO_SPAN_PAGES((PVOID)(ULONG_PTR)va, (SIZE_T)take) : 0;
        const PFN_NUMBER* pfn = MmGetMdlPfnArrayConst(chain);
        for (uint64_t p = 0; p < pages; ++p) {
            uint64_t page = (uint64_t)(ULONG_PTR)chain->StartVa + p * PAGE_SIZE;
            if (page == last_page) continue;
            if (visit) visit(ctx, count, pfn[p]);
            ++count;
            last_page = page;
        }
        expected = va + take;
        remaining -= take;
    }
    return remaining ? -1 : (int64_t)count;
}

/* ================================ Calls ================================ */

/* One call being recorded. */
struct cap_call {
    NDKCAP* c;
    struct cap_object* o;
    struct cap_frame f;
    struct cap_record r;
    uint16_t kind;
    uint32_t outcome_at; /* entry-recorded: where the outcome goes in the body */
    uint32_t outcome_bytes;
    int has_back; /* the return was counted (call_back) */
    int timed;    /* takes timestamps (NDKT_CAPTURE_DATA_PATH_UNTIMED) */
    uint64_t back, back_time;
};

/* The moment the provider's function returned: counted before anything else sees the return,
 * so that a callback that sees it has a later count (ndkct orders by the count). An
 * entry-recorded call whose record is still the ring's last takes the count after its own. */
static void call_back(struct cap_call* k) {
    if (k->has_back) return;
    if (k->r.ring && ring_free_position(k->c) == k->r.end)
        k->back = k->r.seq + 1u;
    else
        k->back = count_now(k->c, k->f.thread);
    k->back_time = k->timed ? now(k->c) : 0;
    k->has_back = 1;
}

/* The call returned: a final status frees the slot unless a callback came anyway. */
static void request_returned(struct cap_call* k, struct cap_request* q, NTSTATUS status) {
    call_back(k);
    st32(&q->returned, 1);
    if (status != STATUS_PENDING) st32(&q->busy, 0);
}

/* The functions recorded at entry (spec/TRACE.md, "order: entry"), as 1 << function: they
 * take their record's count, the others a count at their entry without an atomic operation. */
#define CAP_ENTRY_RECORDED                                                                  \
    ((1ull << NDKT_FN_CLOSE) | (1ull << NDKT_FN_ARM_CQ) | (1ull << NDKT_FN_MODIFY_SRQ) |    \
     (1ull << NDKT_FN_SRQ_RECEIVE) | (1ull << NDKT_FN_FLUSH) | (1ull << NDKT_FN_SEND) |     \
     (1ull << NDKT_FN_RECEIVE) | (1ull << NDKT_FN_BIND) | (1ull << NDKT_FN_FAST_REGISTER) | \
     (1ull << NDKT_FN_INVALIDATE) | (1ull << NDKT_FN_READ) | (1ull << NDKT_FN_WRITE) |      \
     (1ull << NDKT_FN_SEND_AND_INVALIDATE) | (1ull << NDKT_FN_CONNECT) |                    \
     (1ull << NDKT_FN_CONNECT_WITH_SHARED_ENDPOINT) | (1ull << NDKT_FN_COMPLETE_CONNECT) |  \
     (1ull << NDKT_FN_ACCEPT) | (1ull << NDKT_FN_REJECT) | (1ull << NDKT_FN_DISCONNECT) |   \
     (1ull << NDKT_FN_COMPLETE_CONNECT_EX) | (1ull << NDKT_FN_ACCEPT_EX) |                  \
     (1ull << NDKT_FN_LISTEN) | (1ull << NDKT_FN_CONTROL_CONNECT_EVENTS))

/* The object's entry and capture; NULL when no capture knows the object (the provider copied
 * a table pointer to an object it never handed out through a create). */
static int call_begin(struct cap_call* k, const void* handle, uint16_t function) {
    k->o = object_of(handle, &k->c);
    k->r.ring = 0;
    if (!k->o) return 0;
    k->kind = (uint16_t)(NDKT_KIND_CALL | function);
    k->has_back = 0;
    frame_enter(k->c, &k->f, k->kind, 0);
    /* A data-path call outside callbacks goes untimed (NDKCAP_ALL_TIMES: every call timed). */
    k->timed = !((k->c->untimed_functions >> function) & 1u) || k->f.flags != 0;
    /* A return-recorded call's entry; an entry-recorded one takes its record's count. */
    k->r.seq = ((CAP_ENTRY_RECORDED >> function) & 1u) ? 0 : count_between(k->c, k->f.thread);
    k->r.time = k->timed ? now(k->c) : 0;
    return 1;
}

/* Entry-recorded calls: reserve args + outcome now, publish the args. */
static struct cap_out call_reserve_entry(struct cap_call* k, uint32_t args, uint32_t outcome) {
    struct cap_out o = {0};
    k->outcome_at = args;
    k->outcome_bytes = outcome;
    if (!record_reserve(k->c, &k->r, args + outcome)) return o;
    k->r.seq = record_count(&k->r);
    record_header(&k->r, k->kind, &k->f);
    o.p = k->r.body;
    return o;
}

CAP_INLINE void call_publish(struct cap_call* k) {
    if (k->r.ring) ring_commit(k->r.ring, k->r.seq, RING_ENTERED);
}

/* An entry-recorded call's outcome when the drain wrote its record before it returned (expired). */
static void late_return(NDKCAP* c, const struct cap_record* call, uint16_t kind,
                        const struct cap_frame* f, uint64_t back, uint64_t t, const void* outcome,
                        uint32_t outcome_bytes) {
    struct cap_record late;
    late.seq = back;
    late.time = t;
    if (!record_reserve(c, &late, 16 + (uint32_t)CAP_ALIGN8(outcome_bytes))) return;
    record_header(&late, NDKT_META_RETURN, f);
    struct cap_out o = {late.body};
    put64(&o, call->seq);
    put32(&o, kind & 0xFFu);
    put32(&o, 0);
    if (outcome) putbytes(&o, outcome, outcome_bytes);
    ring_commit(late.ring, late.seq, RING_COMPLETE);
}

/* The call returned: its outcome (`outcome_bytes` at `outcome`) completes the record, or, when
 * the drain already wrote it (expired), goes into a RETURN record. */
static void call_finish(struct cap_call* k, const void* outcome) {
    NDKCAP* c = k->c;
    call_back(k);
    uint64_t back = k->back;
    uint64_t t = k->back_time;
    frame_leave(&k->f);
    if (!k->r.ring) return;
    /* Most outcomes are a status and a reserved word: copied without a call to memcpy. */
    if (k->outcome_bytes == 8)
        cap_copy(k->r.body + k->outcome_at, outcome, 8);
    else if (k->outcome_bytes && outcome)
        cap_copy(k->r.body + k->outcome_at, outcome, k->outcome_bytes);
    record_returned(c, &k->r, back, t);
    uint64_t entered = (k->r.seq << 8) | RING_ENTERED;
    if (cas64((volatile uint64_t*)k->r.ring, entered, (k->r.seq << 8) | RING_COMPLETE)) return;
    late_return(c, &k->r, k->kind, &k->f, back, t, outcome, k->outcome_bytes);
}

/* Return-recorded calls: everything is known; reserve, write, commit. A call whose return
 * nothing can see before its record (NdkGetCqResults(Ex): no callback follows from it) takes
 * its return's count from its record; the others counted it when they returned (call_back). */
static struct cap_out call_reserve_return(struct cap_call* k, uint32_t body, uint64_t* back) {
    struct cap_out o = {0};
    int poll = k->kind == (NDKT_KIND_CALL | NDKT_FN_GET_CQ_RESULTS) ||
               k->kind == (NDKT_KIND_CALL | NDKT_FN_GET_CQ_RESULTS_EX);
    if (!poll) call_back(k);
    uint64_t t = k->has_back ? k->back_time : (k->timed ? now(k->c) : 0);
    frame_leave(&k->f);
    if (!record_reserve(k->c, &k->r, body)) {
        if (!k->has_back) call_back(k);
        *back = k->back;
        return o;
    }
    if (!k->has_back) {
        k->back = record_count(&k->r);
        k->back_time = t;
        k->has_back = 1;
    }
    *back = k->back;
    record_header(&k->r, k->kind, &k->f);
    record_returned(k->c, &k->r, *back, t);
    o.p = k->r.body;
    return o;
}

CAP_INLINE void call_commit(struct cap_call* k) {
    if (k->r.ring) ring_commit(k->r.ring, k->r.seq, RING_COMPLETE);
}

/* ---- Creates: one shape for all ten ---- */

struct cap_create {
    struct cap_object* made; /* the entry the new object will have */
    struct cap_request* q;
    const void* out_before;
};

static NDK_FN_CREATE_COMPLETION cap_create_completion;

static void create_prepare(struct cap_call* k, struct cap_create* cr, uint16_t type,
                           uint16_t function, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx, void** pp) {
    cr->made = object_new(k->c, type);
    if (cr->made) cr->made->pd = k->o->type == NdkObjectTypePd ? k->o : 0;
    union cap_completion done;
    done.create = fn;
    cr->q = fn ? request_new(k->c, REQ_CREATE, function, cr->made, done, ctx) : 0;
    if (fn) k->c->last_create_fn = done;
    cr->out_before = pp ? *pp : 0;
}

CAP_INLINE PVOID create_context(struct cap_create* cr, PVOID ctx) {
    return cr->q ? (PVOID)(ULONG_PTR)cr->q->id : ctx;
}

CAP_INLINE NDK_FN_CREATE_COMPLETION* create_routine(struct cap_create* cr,
                                                    NDK_FN_CREATE_COMPLETION* fn) {
    return cr->q ? cap_create_completion : fn;
}

/* After the provider's create returned: interpose on an inline success, write the outcome. */
static void create_done(struct cap_call* k, struct cap_create* cr, NTSTATUS status, void** pp,
                        uint32_t args, void (*put_args)(struct cap_out*, const void*),
                        const void* args_of) {
    const void* out_after = pp ? *pp : 0;
    if (cr->q) request_returned(k, cr->q, status);
    if (cr->made) {
        if (status == STATUS_SUCCESS && out_after) {
            if (ld32(&cr->made->state) == OBJ_CREATING)
                object_attach(k->c, cr->made, (void*)out_after);
        } else if (status != STATUS_PENDING && ld32(&cr->made->state) == OBJ_CREATING) {
            object_closed(k->c, cr->made);
        }
    }
    uint64_t back;
    struct cap_out o = call_reserve_return(k, args + 32, &back);
    if (!o.p) return;
    put_args(&o, args_of);
    put32(&o, (uint32_t)status);
    put32(&o, status == STATUS_PENDING && out_after != cr->out_before
                  ? NDKT_CREATE_OUTPUT_WHILE_PENDING
                  : 0u);
    if (status == STATUS_SUCCESS && out_after)
        put_obj(&o, out_after, cr->made ? cr->made->null_member : NDKT_NO_MEMBER,
                cr->made && !cr->made->original ? 1 : 0);
    else
        put_obj(&o, 0, NDKT_NO_MEMBER, 0);
    call_commit(k);
}

/* The provider's table of the object (the entry the capture replaced). */
#define ORIGINAL(k, T) ((const T*)(k).o->original)

/* An object no capture knows: forward to the provider's latest table of the type. */
static const void* fallback_table(uint16_t type) {
    for (uint32_t i = 0; i < CAP_MAX_CAPTURES; ++i) {
        NDKCAP* c = (NDKCAP*)ld64((volatile uint64_t*)&g_captures[i]);
        if (c && type < NdkObjectTypeMax && c->fallback[type]) return c->fallback[type];
    }
    return 0;
}

#define UNKNOWN_OBJECT(T, type, call, failure)        \
    do {                                              \
        const T* t_ = (const T*)fallback_table(type); \
        if (t_) return call;                          \
        return failure;                               \
    } while (0)

/* ---- Every table: NdkCloseObject, NdkQueryExtension ---- */

static NDK_FN_CLOSE_COMPLETION cap_close_completion;

static NTSTATUS cap_close(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, object, NDKT_FN_CLOSE)) {
        NDK_FN_CLOSE_OBJECT* const* t =
            (NDK_FN_CLOSE_OBJECT* const*)fallback_table((uint16_t)object->ObjectType);
        return t ? (*t)(object, fn, ctx) : CAP_STATUS_INVALID_HANDLE;
    }
    union cap_completion done;
    done.close = fn;
    struct cap_request* q = fn ? request_new(k.c, REQ_CLOSE, NDKT_FN_CLOSE, k.o, done, ctx) : 0;
    if (fn) k.c->last_close_fn = done;
    struct cap_out o = call_reserve_entry(&k, 24, 8);
    if (o.p) {
        putptr(&o, object);
        put64(&o, q ? q->id : 0);
        uint8_t nonzero = 0; /* GEN-CREATE-07: NdkReserved untouched while the object is open */
        const uint8_t* r = (const uint8_t*)&object->NdkReserved;
        for (unsigned i = 0; i < sizeof object->NdkReserved; ++i)
            nonzero |= r[i];
        put32(&o, nonzero ? 1u : 0u);
        put32(&o, 0);
        call_publish(&k);
    }
    /* Every table's first entry is its close (CLOSE-API-01). */
    NDK_FN_CLOSE_OBJECT* close = *(NDK_FN_CLOSE_OBJECT* const*)k.o->original;
    NTSTATUS status =
        close(object, q ? cap_close_completion : fn, q ? (PVOID)(ULONG_PTR)q->id : ctx);
    if (q) request_returned(&k, q, status);
    if (status == STATUS_SUCCESS) object_closed(k.c, k.o);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static NTSTATUS cap_query_extension(NDK_OBJECT_HEADER* object, GUID* id, NDK_VERSION version,
                                    NDK_EXTENSION_INTERFACE* out) {
    struct cap_call k;
    if (!call_begin(&k, object, NDKT_FN_QUERY_EXTENSION)) return CAP_STATUS_INVALID_HANDLE;
    const VOID* before = out ? out->Dispatch : 0;
    NDK_FN_QUERY_EXTENSION_INTERFACE* const* slots =
        (NDK_FN_QUERY_EXTENSION_INTERFACE* const*)k.o->original;
    /* Slot 0 of the adapter's table, slot 1 (after the close) of every other (GEN-DISP-01). */
    NDK_FN_QUERY_EXTENSION_INTERFACE* query =
        k.o->type == NdkObjectTypeAdapter ? slots[0] : slots[1];
    NTSTATUS status = query(object, id, version, out);
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 8 + 16 + 8 + 8, &back);
    if (o.p) {
        putptr(&o, object);
        if (id)
            putbytes(&o, id, 16);
        else
            putbytes(&o, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
        put16(&o, version.Major);
        put16(&o, version.Minor);
        put32(&o, out ? 1u : 0u);
        put32(&o, (uint32_t)status);
        put32(&o, out && out->Dispatch != before ? 1u : 0u);
        call_commit(&k);
    }
    return status;
}

/* ---- NDK_ADAPTER_DISPATCH ---- */

static NTSTATUS cap_query_adapter_info(NDK_ADAPTER* adapter, NDK_ADAPTER_INFO* info, ULONG* size) {
    struct cap_call k;
    if (!call_begin(&k, adapter, NDKT_FN_QUERY_ADAPTER_INFO))
        UNKNOWN_OBJECT(NDK_ADAPTER_DISPATCH, NdkObjectTypeAdapter,
                       t_->NdkQueryAdapterInfo(adapter, info, size), CAP_STATUS_INVALID_HANDLE);
    ULONG size_in = size ? *size : 0;
    NTSTATUS status = ORIGINAL(k, NDK_ADAPTER_DISPATCH)->NdkQueryAdapterInfo(adapter, info, size);
    uint32_t copied = info ? CAP_MIN(size_in, (ULONG)sizeof(NDK_ADAPTER_INFO)) : 0;
    if (status != STATUS_SUCCESS) copied = 0;
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 16 + 8 + blob_size(copied), &back);
    if (o.p) {
        putptr(&o, adapter);
        put32(&o, size_in);
        put16(&o, info ? 1 : 0);
        put16(&o, size ? 1 : 0);
        put32(&o, (uint32_t)status);
        put32(&o, size ? *size : 0);
        putblob(&o, info, copied, info != 0 && status == STATUS_SUCCESS);
        call_commit(&k);
    }
    return status;
}

struct create_cq_args {
    NDK_ADAPTER* adapter;
    ULONG depth;
    int notify, affinity;
    uint64_t request;
};
static void put_create_cq(struct cap_out* o, const void* p) {
    const struct create_cq_args* a = (const struct create_cq_args*)p;
    putptr(o, a->adapter);
    put32(o, a->depth);
    put16(o, (uint16_t)a->notify);
    put16(o, (uint16_t)a->affinity);
    put64(o, a->request);
}

static NDK_FN_CQ_NOTIFICATION_CALLBACK cap_cq_notification;
static NDK_FN_SRQ_NOTIFICATION_CALLBACK cap_srq_notification;
static NDK_FN_CONNECT_EVENT_CALLBACK cap_connect_event;
static NDK_FN_DISCONNECT_EVENT_CALLBACK cap_disconnect_event;
static NDK_FN_DISCONNECT_EVENT_CALLBACK_EX cap_disconnect_event_ex;

static NTSTATUS cap_create_cq(NDK_ADAPTER* adapter, ULONG depth,
                              NDK_FN_CQ_NOTIFICATION_CALLBACK* notify, PVOID notify_ctx,
                              GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx,
                              NDK_CQ** pp) {
    struct cap_call k;
    if (!call_begin(&k, adapter, NDKT_FN_CREATE_CQ))
        UNKNOWN_OBJECT(NDK_ADAPTER_DISPATCH, NdkObjectTypeAdapter,
                       t_->NdkCreateCq(adapter, depth, notify, notify_ctx, affinity, fn, ctx, pp),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypeCq, NDKT_FN_CREATE_CQ, fn, ctx, (void**)pp);
    if (cr.made) {
        cr.made->event_fn.cq = notify;
        cr.made->event_ctx = notify_ctx;
    }
    NTSTATUS status =
        ORIGINAL(k, NDK_ADAPTER_DISPATCH)
            ->NdkCreateCq(adapter, depth, notify && cr.made ? cap_cq_notification : notify,
                          notify && cr.made ? object_context(k.c, cr.made) : notify_ctx, affinity,
                          create_routine(&cr, fn), create_context(&cr, ctx), pp);
    struct create_cq_args a = {adapter, depth, notify != 0, affinity != 0, cr.q ? cr.q->id : 0};
    create_done(&k, &cr, status, (void**)pp, 24, put_create_cq, &a);
    return status;
}

struct create_plain_args {
    const void* parent;
    uint64_t request;
};
static void put_create_plain(struct cap_out* o, const void* p) {
    const struct create_plain_args* a = (const struct create_plain_args*)p;
    putptr(o, a->parent);
    put64(o, a->request);
}

static NTSTATUS cap_create_pd(NDK_ADAPTER* adapter, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx,
                              NDK_PD** pp) {
    struct cap_call k;
    if (!call_begin(&k, adapter, NDKT_FN_CREATE_PD))
        UNKNOWN_OBJECT(NDK_ADAPTER_DISPATCH, NdkObjectTypeAdapter,
                       t_->NdkCreatePd(adapter, fn, ctx, pp), CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypePd, NDKT_FN_CREATE_PD, fn, ctx, (void**)pp);
    NTSTATUS status =
        ORIGINAL(k, NDK_ADAPTER_DISPATCH)
            ->NdkCreatePd(adapter, create_routine(&cr, fn), create_context(&cr, ctx), pp);
    struct create_plain_args a = {adapter, cr.q ? cr.q->id : 0};
    create_done(&k, &cr, status, (void**)pp, 16, put_create_plain, &a);
    return status;
}

/* ADDRESS: u32 length, u16 present, u16 captured, bytes. */
CAP_INLINE uint32_t address_captured(const void* address, ULONG length) {
    return address ? CAP_MIN(length, 128u) : 0;
}
CAP_INLINE uint32_t address_size(const void* address, ULONG length) {
    return 8u + (uint32_t)CAP_ALIGN8(address_captured(address, length));
}
static void put_address(struct cap_out* o, const void* address, ULONG length) {
    uint32_t n = address_captured(address, length);
    put32(o, length);
    put16(o, address ? 1 : 0);
    put16(o, (uint16_t)n);
    putbytes(o, address, n);
}

struct create_se_args {
    NDK_ADAPTER* adapter;
    uint64_t request;
    const void* address;
    ULONG length;
};
static void put_create_se(struct cap_out* o, const void* p) {
    const struct create_se_args* a = (const struct create_se_args*)p;
    putptr(o, a->adapter);
    put64(o, a->request);
    put_address(o, a->address, a->length);
}

static NTSTATUS cap_create_shared_endpoint(NDK_ADAPTER* adapter, const PSOCKADDR address,
                                           ULONG length, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx,
                                           NDK_SHARED_ENDPOINT** pp) {
    struct cap_call k;
    if (!call_begin(&k, adapter, NDKT_FN_CREATE_SHARED_ENDPOINT))
        UNKNOWN_OBJECT(NDK_ADAPTER_DISPATCH, NdkObjectTypeAdapter,
                       t_->NdkCreateSharedEndpoint(adapter, address, length, fn, ctx, pp),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypeSharedEndpoint, NDKT_FN_CREATE_SHARED_ENDPOINT, fn, ctx,
                   (void**)pp);
    NTSTATUS status =
        ORIGINAL(k, NDK_ADAPTER_DISPATCH)
            ->NdkCreateSharedEndpoint(adapter, address, length, create_routine(&cr, fn),
                                      create_context(&cr, ctx), pp);
    struct create_se_args a = {adapter, cr.q ? cr.q->id : 0, address, length};
    create_done(&k, &cr, status, (void**)pp, 16 + address_size(address, length), put_create_se, &a);
    return status;
}

static NTSTATUS cap_create_connector(NDK_ADAPTER* adapter, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx,
                                     NDK_CONNECTOR** pp) {
    struct cap_call k;
    if (!call_begin(&k, adapter, NDKT_FN_CREATE_CONNECTOR))
        UNKNOWN_OBJECT(NDK_ADAPTER_DISPATCH, NdkObjectTypeAdapter,
                       t_->NdkCreateConnector(adapter, fn, ctx, pp), CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypeConnector, NDKT_FN_CREATE_CONNECTOR, fn, ctx, (void**)pp);
    NTSTATUS status =
        ORIGINAL(k, NDK_ADAPTER_DISPATCH)
            ->NdkCreateConnector(adapter, create_routine(&cr, fn), create_context(&cr, ctx), pp);
    struct create_plain_args a = {adapter, cr.q ? cr.q->id : 0};
    create_done(&k, &cr, status, (void**)pp, 16, put_create_plain, &a);
    return status;
}

struct create_listener_args {
    NDK_ADAPTER* adapter;
    int has_event;
    uint64_t request;
};
static void put_create_listener(struct cap_out* o, const void* p) {
    const struct create_listener_args* a = (const struct create_listener_args*)p;
    putptr(o, a->adapter);
    put32(o, (uint32_t)a->has_event);
    put32(o, 0);
    put64(o, a->request);
}

static NTSTATUS cap_create_listener(NDK_ADAPTER* adapter, NDK_FN_CONNECT_EVENT_CALLBACK* event,
                                    PVOID event_ctx, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx,
                                    NDK_LISTENER** pp) {
    struct cap_call k;
    if (!call_begin(&k, adapter, NDKT_FN_CREATE_LISTENER))
        UNKNOWN_OBJECT(NDK_ADAPTER_DISPATCH, NdkObjectTypeAdapter,
                       t_->NdkCreateListener(adapter, event, event_ctx, fn, ctx, pp),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypeListener, NDKT_FN_CREATE_LISTENER, fn, ctx, (void**)pp);
    if (cr.made) {
        cr.made->event_fn.connect = event;
        cr.made->event_ctx = event_ctx;
    }
    NTSTATUS status =
        ORIGINAL(k, NDK_ADAPTER_DISPATCH)
            ->NdkCreateListener(adapter, event && cr.made ? cap_connect_event : event,
                                event && cr.made ? object_context(k.c, cr.made) : event_ctx,
                                create_routine(&cr, fn), create_context(&cr, ctx), pp);
    struct create_listener_args a = {adapter, event != 0, cr.q ? cr.q->id : 0};
    create_done(&k, &cr, status, (void**)pp, 24, put_create_listener, &a);
    return status;
}

/* LAMOUT: the outputs of NdkBuildLam as the call (or its completion) left them. */
static uint32_t lam_pages_of(const NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG size_in,
                             NTSTATUS status) {
    if (!lam || status != STATUS_SUCCESS) return 0;
    uint64_t room =
        size_in > NDK_LOGICAL_ADDRESS_MAPPING_SIZE(0)
            ? (size_in - NDK_LOGICAL_ADDRESS_MAPPING_SIZE(0)) / sizeof(NDK_LOGICAL_ADDRESS)
            : 0;
    return (uint32_t)CAP_MIN((uint64_t)lam->AdapterPageCount, room);
}

static void put_lamout(struct cap_out* o, const NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size,
                       ULONG* fbo, uint32_t pages, uint32_t changed) {
    put32(o, size ? *size : 0);
    put32(o, fbo ? *fbo : 0xFFFFFFFFu);
    put32(o, changed);
    put32(o, pages);
    for (uint32_t i = 0; i < pages; ++i)
        put64(o, (uint64_t)lam->AdapterPageArray[i].QuadPart);
}

/* The logical pages of a built LAM, to the PFNs of its chain (SGE-01, FastRegister). */
struct lam_learning {
    NDKCAP* c;
    const NDK_LOGICAL_ADDRESS_MAPPING* lam;
    uint32_t pages;
};
static void lam_learn_page(void* ctx, uint64_t index, uint64_t pfn) {
    struct lam_learning* l = (struct lam_learning*)ctx;
    if (index < l->pages) lam_insert(l->c, (uint64_t)l->lam->AdapterPageArray[index].QuadPart, pfn);
}
static void lam_learn(NDKCAP* c, const NDK_LOGICAL_ADDRESS_MAPPING* lam, uint32_t pages,
                      const MDL* mdl, uint64_t length) {
    struct lam_learning l = {c, lam, pages};
    mdl_walk(mdl, length, lam_learn_page, &l);
}

static NDK_FN_REQUEST_COMPLETION cap_request_completion;

static NTSTATUS cap_build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                              NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx,
                              NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* lam_size, ULONG* fbo) {
    struct cap_call k;
    if (!call_begin(&k, adapter, NDKT_FN_BUILD_LAM))
        UNKNOWN_OBJECT(NDK_ADAPTER_DISPATCH, NdkObjectTypeAdapter,
                       t_->NdkBuildLAM(adapter, mdl, length, fn, ctx, lam, lam_size, fbo),
                       CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q =
        fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_BUILD_LAM, k.o, done, ctx) : 0;
    if (fn) k.c->last_request_fn = done;
    ULONG size_in = lam_size ? *lam_size : 0;
    ULONG fbo_in = fbo ? *fbo : 0xFFFFFFFFu;
    if (q) {
        q->lam = lam;
        q->lam_size = lam_size;
        q->fbo = fbo;
        q->lam_size_in = size_in;
        q->mdl = mdl;
        q->length = length;
    }
    uint64_t chain_before = mdl_chain_digest(mdl);
    uint32_t chain_bytes = mdl_chain_size(mdl);
    NTSTATUS status = ORIGINAL(k, NDK_ADAPTER_DISPATCH)
                          ->NdkBuildLAM(adapter, mdl, length, q ? cap_request_completion : fn,
                                        q ? (PVOID)(ULONG_PTR)q->id : ctx, lam, lam_size, fbo);
    if (q) request_returned(&k, q, status);
    uint32_t pages = lam_pages_of(lam, size_in, status);
    if (status == STATUS_SUCCESS && (k.c->flags & NDKT_CAPTURE_DIGESTS))
        lam_learn(k.c, lam, pages, mdl, length);
    uint32_t changed = status == STATUS_SUCCESS && mdl_chain_digest(mdl) != chain_before;
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 48 + chain_bytes + 8 + 16 + pages * 8u, &back);
    if (o.p) {
        putptr(&o, adapter);
        putptr(&o, lam);
        put64(&o, length);
        put64(&o, q ? q->id : 0);
        put32(&o, size_in);
        put16(&o, lam ? 1 : 0);
        put16(&o, lam_size ? 1 : 0);
        put32(&o, fbo_in);
        put32(&o, 0);
        put_mdl_chain(&o, mdl);
        put32(&o, (uint32_t)status);
        put32(&o, 0);
        if (status == STATUS_PENDING)
            put_lamout(&o, lam, lam_size, fbo, 0, 0);
        else
            put_lamout(&o, lam, lam_size, fbo, pages, changed);
        call_commit(&k);
    }
    return status;
}

static VOID cap_release_lam(NDK_ADAPTER* adapter, NDK_LOGICAL_ADDRESS_MAPPING* lam) {
    struct cap_call k;
    if (!call_begin(&k, adapter, NDKT_FN_RELEASE_LAM)) {
        const NDK_ADAPTER_DISPATCH* t =
            (const NDK_ADAPTER_DISPATCH*)fallback_table(NdkObjectTypeAdapter);
        if (t) t->NdkReleaseLAM(adapter, lam);
        return;
    }
    if (lam && (k.c->flags & NDKT_CAPTURE_DIGESTS))
        for (ULONG i = 0; i < lam->AdapterPageCount && i < 1u << 20; ++i)
            lam_remove(k.c, (uint64_t)lam->AdapterPageArray[i].QuadPart);
    ORIGINAL(k, NDK_ADAPTER_DISPATCH)->NdkReleaseLAM(adapter, lam);
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 16, &back);
    if (o.p) {
        putptr(&o, adapter);
        putptr(&o, lam);
        call_commit(&k);
    }
}

/* ---- Posted requests: their landings are digested when their entries are returned ---- */

static void track_post(NDKCAP* c, struct cap_queue* q, uint16_t function, PVOID ctx, ULONG flags,
                       const NDK_SGE* sgl, ULONG n, int remote, uint64_t address, uint32_t token,
                       uint64_t length) {
    if (!q->tracked) return;
    uint32_t tail = q->tail, head = ld32(&q->head);
    if (tail - head > q->mask) {
        add64(&c->untracked, 1);
        return;
    }
    struct cap_posted* e = queue_at(c, q, tail);
    e->request_context = (uint64_t)(ULONG_PTR)ctx;
    e->function = function;
    e->silent = (flags & NDK_OP_FLAG_SILENT_SUCCESS) ? 1 : 0;
    e->untracked = 0;
    if (remote) {
        e->sge_count = 0xFF;
        e->remote_address = address;
        e->remote_token = token;
        e->length = (uint32_t)length;
    } else if (sgl && n <= CAP_QUEUE_SGES) {
        e->sge_count = (uint8_t)n;
        for (ULONG i = 0; i < n; ++i)
            e->sges[i] = sgl[i];
    } else {
        e->sge_count = 0;
        e->untracked = sgl && n > 0;
    }
    st32(&e->state, 1);
    st32(&q->tail, tail + 1);
}

static void queue_retire(NDKCAP* c, struct cap_queue* q, struct cap_posted* e) {
    (void)e;
    for (;;) {
        uint32_t h = ld32(&q->head);
        if (h == ld32(&q->tail)) return;
        struct cap_posted* x = queue_at(c, q, h);
        if (ld32(&x->state) != 2) return;
        st32(&x->state, 0);
        cas32(&q->head, h, h + 1);
    }
}

/* The posted entry of a completion: searched from the queue's oldest entry. */
static struct cap_posted* queue_find(NDKCAP* c, struct cap_queue* q, uint64_t ctx,
                                     uint32_t* position) {
    if (!q->tracked) return 0;
    uint32_t h = ld32(&q->head), t = ld32(&q->tail);
    for (uint32_t i = h, n = 0; i != t && n < CAP_SILENT_SCAN; ++i, ++n) {
        struct cap_posted* e = queue_at(c, q, i);
        if (ld32(&e->state) == 1 && e->request_context == ctx) {
            *position = i;
            return e;
        }
    }
    return 0;
}

/* What a landing of a posted request covers. */
static int posted_span(const struct cap_posted* e, struct cap_object* qp, uint64_t transferred,
                       struct cap_span* s) {
    if (e->untracked) return 0;
    s->pd = qp ? qp->pd : 0;
    if (e->sge_count == 0xFF) {
        if (e->function != NDKT_FN_WRITE) return 0;
        s->remote = 1;
        s->token = e->remote_token;
        s->address = e->remote_address;
        s->length = e->length;
        return 1;
    }
    if (e->function != NDKT_FN_RECEIVE && e->function != NDKT_FN_SRQ_RECEIVE &&
        e->function != NDKT_FN_READ)
        return 0;
    s->remote = 0;
    s->sgl = e->sges;
    s->n = e->sge_count;
    /* A read fills its whole SGE list; a receive the bytes the completion reports. */
    s->limit = e->function == NDKT_FN_READ ? ~0ull : transferred;
    return 1;
}

/* ---- The QPs with a given QPContext (completions name their QP by it) ---- */

/* The QP of a completion (by its QPContext) whose queue holds the posted request: the CQ's last
 * QP of that side first, then every open QP (a bit per object entry, so that a completion does
 * not walk the whole object table). */
static int qp_holds(NDKCAP* c, struct cap_object* o, uint64_t qp_context, int receive,
                    uint64_t request, struct cap_queue** queue, struct cap_posted** found,
                    uint32_t* position) {
    if (o->type != NdkObjectTypeQp || ld32(&o->state) != OBJ_OPEN || o->qp_context != qp_context)
        return 0;
    struct cap_queue* q = receive ? (o->srq ? &o->srq->receive : &o->receive) : &o->initiator;
    struct cap_posted* e = queue_find(c, q, request, position);
    if (!e) return 0;
    *queue = q;
    *found = e;
    return 1;
}

static struct cap_object* qp_by_context(NDKCAP* c, struct cap_object* cq, uint64_t qp_context,
                                        int receive, uint64_t request, struct cap_queue** queue,
                                        struct cap_posted** found, uint32_t* position) {
    uint32_t hint = ld32(&cq->last_qp[receive ? 1 : 0]);
    if (hint && hint <= c->max_objects &&
        qp_holds(c, &c->objects[hint - 1], qp_context, receive, request, queue, found, position))
        return &c->objects[hint - 1];
    for (uint32_t w = 0; w < (c->max_objects + 63) / 64; ++w) {
        for (uint64_t bits = ld64(&c->open_qps[w]); bits; bits &= bits - 1) {
            uint32_t i = w * 64 + lowest_bit(bits);
            if (i >= c->max_objects || i + 1 == hint) continue;
            struct cap_object* o = &c->objects[i];
            if (qp_holds(c, o, qp_context, receive, request, queue, found, position)) {
                st32(&cq->last_qp[receive ? 1 : 0], i + 1);
                return o;
            }
        }
    }
    return 0;
}

/* ---- NDK_CQ_DISPATCH ---- */

static NTSTATUS cap_resize_cq(NDK_CQ* cq, ULONG depth, NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, cq, NDKT_FN_RESIZE_CQ))
        UNKNOWN_OBJECT(NDK_CQ_DISPATCH, NdkObjectTypeCq, t_->NdkResizeCq(cq, depth, fn, ctx),
                       CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q =
        fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_RESIZE_CQ, k.o, done, ctx) : 0;
    if (fn) k.c->last_request_fn = done;
    NTSTATUS status = ORIGINAL(k, NDK_CQ_DISPATCH)
                          ->NdkResizeCq(cq, depth, q ? cap_request_completion : fn,
                                        q ? (PVOID)(ULONG_PTR)q->id : ctx);
    if (q) request_returned(&k, q, status);
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 32, &back);
    if (o.p) {
        putptr(&o, cq);
        put32(&o, depth);
        put32(&o, 0);
        put64(&o, q ? q->id : 0);
        put32(&o, (uint32_t)status);
        put32(&o, 0);
        call_commit(&k);
    }
    return status;
}

static VOID cap_arm_cq(NDK_CQ* cq, ULONG type) {
    struct cap_call k;
    if (!call_begin(&k, cq, NDKT_FN_ARM_CQ)) {
        const NDK_CQ_DISPATCH* t = (const NDK_CQ_DISPATCH*)fallback_table(NdkObjectTypeCq);
        if (t) t->NdkArmCq(cq, type);
        return;
    }
    struct cap_out o = call_reserve_entry(&k, 16, 0);
    if (o.p) {
        putptr(&o, cq);
        put32(&o, type);
        put32(&o, 0);
        call_publish(&k);
    }
    ORIGINAL(k, NDK_CQ_DISPATCH)->NdkArmCq(cq, type);
    call_finish(&k, 0);
}

/* One landing to digest with the results. */
struct cap_landing {
    uint32_t result;
    struct cap_plan plan;
    struct cap_posted* entry;
    struct cap_queue* queue;
    uint32_t room;
};

/* Both NdkGetCqResults and NdkGetCqResultsEx. */
static ULONG get_results(NDK_CQ* cq, void* results, ULONG n, int ex) {
    struct cap_call k;
    uint16_t fn = ex ? NDKT_FN_GET_CQ_RESULTS_EX : NDKT_FN_GET_CQ_RESULTS;
    if (!call_begin(&k, cq, fn)) {
        const NDK_CQ_DISPATCH* t = (const NDK_CQ_DISPATCH*)fallback_table(NdkObjectTypeCq);
        if (!t) return 0;
        return ex ? t->NdkGetCqResultsEx(cq, (NDK_RESULT_EX*)results, n)
                  : t->NdkGetCqResults(cq, (NDK_RESULT*)results, n);
    }
    NDKCAP* c = k.c;
    ULONG count =
        ex ? ORIGINAL(k, NDK_CQ_DISPATCH)->NdkGetCqResultsEx(cq, (NDK_RESULT_EX*)results, n)
           : ORIGINAL(k, NDK_CQ_DISPATCH)->NdkGetCqResults(cq, (NDK_RESULT*)results, n);
    uint32_t kept = results ? (uint32_t)CAP_MIN(count, n) : 0;
    struct cap_landing plan[CAP_PLAN];
    uint32_t planned = 0;
    uint32_t landings_room = 0;
    int with_bytes = (c->flags & NDKT_CAPTURE_LANDED_BYTES) != 0;
    /* Without digests no queue is tracked: no landing to find. */
    for (uint32_t i = 0; (c->flags & NDKT_CAPTURE_DIGESTS) && i < kept; ++i) {
        NTSTATUS status;
        uint64_t qp_context, request;
        uint32_t transferred;
        int receive = -1;
        if (ex) {
            const NDK_RESULT_EX* r = &((const NDK_RESULT_EX*)results)[i];
            status = r->Status;
            qp_context = (uint64_t)(ULONG_PTR)r->QPContext;
            request = (uint64_t)(ULONG_PTR)r->RequestContext;
            transferred = r->BytesTransferred;
            if (r->Type == NdkOperationTypeReceive ||
                r->Type == NdkOperationTypeReceiveAndInvalidate)
                receive = 1;
            else if (r->Type)
                receive = 0;
        } else {
            const NDK_RESULT* r = &((const NDK_RESULT*)results)[i];
            status = r->Status;
            qp_context = (uint64_t)(ULONG_PTR)r->QPContext;
            request = (uint64_t)(ULONG_PTR)r->RequestContext;
            transferred = r->BytesTransferred;
        }
        struct cap_queue* q = 0;
        struct cap_posted* e = 0;
        uint32_t position = 0;
        struct cap_object* qp = 0;
        for (int side = 0; side < 2 && !qp; ++side) {
            int want = side == 0 ? (receive == 1) : (receive != 1);
            if (receive != -1 && side == 1) break;
            qp = qp_by_context(c, k.o, qp_context, want, request, &q, &e, &position);
        }
        if (!qp) continue;
        /* Earlier silent requests of the queue were done before this one: their bytes too. */
        uint32_t h = ld32(&q->head);
        for (uint32_t at = h; at != position && planned < CAP_PLAN; ++at) {
            struct cap_posted* s = queue_at(c, q, at);
            if (ld32(&s->state) != 1 || !s->silent) continue;
            if (!cas32(&s->state, 1, 2)) continue;
            struct cap_landing* l = &plan[planned];
            if (posted_span(s, qp, s->length, &l->plan.span)) {
                l->result = i;
                l->entry = s;
                l->queue = q;
                l->room = plan_data(c, &l->plan, with_bytes);
                landings_room += 8 + l->room;
                ++planned;
            }
        }
        if (!cas32(&e->state, 1, 2)) continue;
        if (planned < CAP_PLAN && status == STATUS_SUCCESS) {
            struct cap_landing* l = &plan[planned];
            if (posted_span(e, qp, transferred, &l->plan.span)) {
                l->result = i;
                l->entry = e;
                l->queue = q;
                l->room = plan_data(c, &l->plan, with_bytes);
                landings_room += 8 + l->room;
                ++planned;
            }
        }
        queue_retire(c, q, e);
    }
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 16 + 16 + kept * 40u + landings_room, &back);
    if (o.p) {
        putptr(&o, cq);
        put32(&o, n);
        put32(&o, 0);
        put32(&o, count);
        put32(&o, kept);
        put32(&o, planned);
        put32(&o, 0);
        for (uint32_t i = 0; i < kept; ++i) {
            if (ex) {
                const NDK_RESULT_EX* r = &((const NDK_RESULT_EX*)results)[i];
                put32(&o, (uint32_t)r->Status);
                put32(&o, r->BytesTransferred);
                putptr(&o, r->QPContext);
                putptr(&o, r->RequestContext);
                put32(&o, (uint32_t)r->Type);
                put32(&o, r->ProviderErrorCode);
                put64(&o, (uint64_t)r->TypeSpecificCompletionOutput);
            } else {
                const NDK_RESULT* r = &((const NDK_RESULT*)results)[i];
                put32(&o, (uint32_t)r->Status);
                put32(&o, r->BytesTransferred);
                putptr(&o, r->QPContext);
                putptr(&o, r->RequestContext);
                put32(&o, 0);
                put32(&o, 0);
                put64(&o, 0);
            }
        }
        for (uint32_t i = 0; i < planned; ++i) {
            put32(&o, plan[i].result);
            put32(&o, 0);
            write_data(c, &o, NDKT_DATA_LANDING, &plan[i].plan, &k.r);
        }
        call_commit(&k);
    }
    for (uint32_t i = 0; i < planned; ++i)
        queue_retire(c, plan[i].queue, plan[i].entry);
    return count;
}

static ULONG cap_get_cq_results(NDK_CQ* cq, NDK_RESULT results[], ULONG n) {
    return get_results(cq, results, n, 0);
}

static ULONG cap_get_cq_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG n) {
    return get_results(cq, results, n, 1);
}

static NTSTATUS cap_control_cq_interrupt_moderation(NDK_CQ* cq, ULONG interval, ULONG count) {
    struct cap_call k;
    if (!call_begin(&k, cq, NDKT_FN_CONTROL_CQ_INTERRUPT_MODERATION))
        UNKNOWN_OBJECT(NDK_CQ_DISPATCH, NdkObjectTypeCq,
                       t_->NdkControlCqInterruptModeration(cq, interval, count),
                       CAP_STATUS_INVALID_HANDLE);
    NTSTATUS status =
        ORIGINAL(k, NDK_CQ_DISPATCH)->NdkControlCqInterruptModeration(cq, interval, count);
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 24, &back);
    if (o.p) {
        putptr(&o, cq);
        put32(&o, interval);
        put32(&o, count);
        put32(&o, (uint32_t)status);
        put32(&o, 0);
        call_commit(&k);
    }
    return status;
}

/* ---- NDK_MR_DISPATCH ---- */

struct region_fill {
    NDKCAP* c;
    uint32_t at, capacity;
};
static void region_page(void* ctx, uint64_t index, uint64_t pfn) {
    struct region_fill* f = (struct region_fill*)ctx;
    if (index < f->capacity) f->c->pfns[f->at + index] = pfn;
}

/* A staged registration that will not be taken: its pages back to the pool. */
static void region_unstage(NDKCAP* c, struct cap_object* mr) {
    uint32_t was = ld32(&mr->staged);
    if (was == STAGED_NONE || !cas32(&mr->staged, was, STAGED_NONE)) return;
    if (mr->staged_capacity) pfns_give(c, mr->staged_at, mr->staged_capacity);
    mr->staged_capacity = 0;
}

/* NdkRegisterMr's region, staged until the registration succeeds (region_take). */
static void region_stage(NDKCAP* c, struct cap_object* mr, const MDL* mdl, uint64_t length) {
    /* One staged registration an MR: a second NdkRegisterMr while one pends takes its place,
     * and should the first then succeed, its pages are unknown (unresolved, never wrong). */
    region_unstage(c, mr);
    if (!(c->flags & NDKT_CAPTURE_DIGESTS)) return;
    int64_t pages = mdl ? mdl_walk(mdl, length, 0, 0) : -1;
    uint32_t at = pages < 0 ? 0xFFFFFFFFu : pfns_take(c, (uint32_t)pages);
    if (at == 0xFFFFFFFFu) {
        if (pages >= 0) add64(&c->untracked, 1);
        st32(&mr->staged, STAGED_UNKNOWN); /* registered, its pages unknown: unresolved */
        return;
    }
    mr->staged_at = at;
    mr->staged_capacity = 1u << pool_class(pages ? (uint32_t)pages : 1);
    struct region_fill f = {c, at, mr->staged_capacity};
    mdl_walk(mdl, length, region_page, &f);
    mr->staged_count = (uint32_t)pages;
    mr->staged_va = (uint64_t)(ULONG_PTR)MmGetMdlVirtualAddress(mdl);
    mr->staged_fbo = BYTE_OFFSET(MmGetMdlVirtualAddress(mdl));
    mr->staged_length = length;
    st32(&mr->staged, STAGED_REGION);
}

/* The registration succeeded: its staged region is the MR's (once: a second success, from a
 * provider that also calls back after succeeding inline, changes nothing). */
static void region_take(NDKCAP* c, struct cap_object* mr) {
    uint32_t was = ld32(&mr->staged);
    if (was == STAGED_NONE || !cas32(&mr->staged, was, STAGED_NONE)) return;
    st32(&mr->mr_kind, MR_NONE);
    if (mr->pfn_capacity) pfns_give(c, mr->pfn_at, mr->pfn_capacity);
    mr->pfn_capacity = 0;
    if (was != STAGED_REGION) return;
    mr->pfn_at = mr->staged_at;
    mr->pfn_capacity = mr->staged_capacity;
    mr->staged_capacity = 0;
    mr->pfn_count = mr->staged_count;
    mr->va = mr->staged_va;
    mr->fbo = mr->staged_fbo;
    mr->length = mr->staged_length;
    if (mr->pfn_count) st32(&mr->mr_kind, MR_REGISTERED);
}

/* Room for the pages a fast registration will name (NdkFastRegister fills it), once
 * NdkInitializeFastRegisterMr succeeded: a refused one (the MR registered) leaves its region. */
static void region_make_room(NDKCAP* c, struct cap_object* mr, uint64_t pages) {
    if (!(c->flags & NDKT_CAPTURE_DIGESTS) || !pages || pages > (1u << 24) ||
        mr->pfn_capacity >= pages)
        return;
    st32(&mr->mr_kind, MR_NONE);
    if (mr->pfn_capacity) pfns_give(c, mr->pfn_at, mr->pfn_capacity);
    mr->pfn_capacity = 0;
    uint32_t at = pfns_take(c, (uint32_t)pages);
    if (at == 0xFFFFFFFFu) {
        add64(&c->untracked, 1);
        return;
    }
    mr->pfn_at = at;
    mr->pfn_capacity = 1u << pool_class((uint32_t)pages);
}

/* Effects of MR requests, applied when they succeed (inline or through the callback);
 * `pages`: NdkInitializeFastRegisterMr's AdapterPageCount. */
static void mr_request_succeeded(NDKCAP* c, uint16_t function, struct cap_object* mr,
                                 uint64_t pages) {
    if (!mr) return;
    if (function == NDKT_FN_REGISTER_MR) region_take(c, mr);
    if (function == NDKT_FN_DEREGISTER_MR) st32(&mr->mr_kind, MR_NONE);
    if (function == NDKT_FN_INITIALIZE_FAST_REGISTER_MR) region_make_room(c, mr, pages);
}

/* ... and when they fail: a registration's staged region is dropped. */
static void mr_request_failed(NDKCAP* c, uint16_t function, struct cap_object* mr) {
    if (mr && function == NDKT_FN_REGISTER_MR) region_unstage(c, mr);
}

static NTSTATUS cap_register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                                NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, mr, NDKT_FN_REGISTER_MR))
        UNKNOWN_OBJECT(NDK_MR_DISPATCH, NdkObjectTypeMr,
                       t_->NdkRegisterMr(mr, mdl, length, flags, fn, ctx),
                       CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q =
        fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_REGISTER_MR, k.o, done, ctx) : 0;
    if (fn) k.c->last_request_fn = done;
    region_stage(k.c, k.o, mdl, length);
    uint32_t chain_bytes = mdl_chain_size(mdl);
    NTSTATUS status = ORIGINAL(k, NDK_MR_DISPATCH)
                          ->NdkRegisterMr(mr, mdl, length, flags, q ? cap_request_completion : fn,
                                          q ? (PVOID)(ULONG_PTR)q->id : ctx);
    if (status == STATUS_SUCCESS)
        mr_request_succeeded(k.c, NDKT_FN_REGISTER_MR, k.o, 0);
    else if (status != STATUS_PENDING)
        mr_request_failed(k.c, NDKT_FN_REGISTER_MR, k.o);
    if (q) request_returned(&k, q, status);
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 32 + chain_bytes + 8, &back);
    if (o.p) {
        putptr(&o, mr);
        put64(&o, length);
        put32(&o, flags);
        put32(&o, 0);
        put64(&o, q ? q->id : 0);
        put_mdl_chain(&o, mdl);
        put32(&o, (uint32_t)status);
        put32(&o, 0);
        call_commit(&k);
    }
    return status;
}

/* Requests with a completion and no argument but the object: NdkDeregisterMr (recorded when it
 * returns), NdkDisconnect (recorded when entered). */
static struct cap_request* simple_begin(struct cap_call* k, const void* handle, uint16_t function,
                                        NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx, int entry) {
    union cap_completion done;
    done.request = fn;
    struct cap_request* q = fn ? request_new(k->c, REQ_REQUEST, function, k->o, done, ctx) : 0;
    if (fn) k->c->last_request_fn = done;
    if (entry) {
        struct cap_out o = call_reserve_entry(k, 16, 8);
        if (o.p) {
            putptr(&o, handle);
            put64(&o, q ? q->id : 0);
            call_publish(k);
        }
    }
    return q;
}

static void simple_end(struct cap_call* k, struct cap_request* q, const void* handle,
                       uint16_t function, NTSTATUS status, int entry) {
    if (status == STATUS_SUCCESS) mr_request_succeeded(k->c, function, k->o, 0);
    if (q) request_returned(k, q, status);
    if (entry) {
        int32_t out[2] = {status, 0};
        call_finish(k, out);
        return;
    }
    uint64_t back;
    struct cap_out o = call_reserve_return(k, 24, &back);
    if (o.p) {
        putptr(&o, handle);
        put64(&o, q ? q->id : 0);
        put32(&o, (uint32_t)status);
        put32(&o, 0);
        call_commit(k);
    }
}

#define REQUEST_ROUTINE(q, fn) ((q) ? cap_request_completion : (fn))
#define REQUEST_CONTEXT(q, ctx) ((q) ? (PVOID)(ULONG_PTR)(q)->id : (ctx))

static NTSTATUS cap_deregister_mr(NDK_MR* mr, NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, mr, NDKT_FN_DEREGISTER_MR))
        UNKNOWN_OBJECT(NDK_MR_DISPATCH, NdkObjectTypeMr, t_->NdkDeregisterMr(mr, fn, ctx),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_request* q = simple_begin(&k, mr, NDKT_FN_DEREGISTER_MR, fn, ctx, 0);
    NTSTATUS status = ORIGINAL(k, NDK_MR_DISPATCH)
                          ->NdkDeregisterMr(mr, REQUEST_ROUTINE(q, fn), REQUEST_CONTEXT(q, ctx));
    simple_end(&k, q, mr, NDKT_FN_DEREGISTER_MR, status, 0);
    return status;
}

static NTSTATUS cap_initialize_fast_register_mr(NDK_MR* mr, ULONG pages, BOOLEAN remote,
                                                NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, mr, NDKT_FN_INITIALIZE_FAST_REGISTER_MR))
        UNKNOWN_OBJECT(NDK_MR_DISPATCH, NdkObjectTypeMr,
                       t_->NdkInitializeFastRegisterMr(mr, pages, remote, fn, ctx),
                       CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q =
        fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_INITIALIZE_FAST_REGISTER_MR, k.o, done, ctx) : 0;
    if (fn) k.c->last_request_fn = done;
    if (q) q->length = pages; /* its callback makes the room (mr_request_succeeded) */
    NTSTATUS status = ORIGINAL(k, NDK_MR_DISPATCH)
                          ->NdkInitializeFastRegisterMr(mr, pages, remote, REQUEST_ROUTINE(q, fn),
                                                        REQUEST_CONTEXT(q, ctx));
    if (status == STATUS_SUCCESS)
        mr_request_succeeded(k.c, NDKT_FN_INITIALIZE_FAST_REGISTER_MR, k.o, pages);
    if (q) request_returned(&k, q, status);
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 32, &back);
    if (o.p) {
        putptr(&o, mr);
        put32(&o, pages);
        put32(&o, remote ? 1u : 0u);
        put64(&o, q ? q->id : 0);
        put32(&o, (uint32_t)status);
        put32(&o, 0);
        call_commit(&k);
    }
    return status;
}

/* The three token getters. */
static UINT32 token_call(const void* handle, uint16_t function, uint16_t type, int remote) {
    struct cap_call k;
    if (!call_begin(&k, handle, function)) {
        const void* t = fallback_table(type);
        if (!t) return 0;
        if (type == NdkObjectTypeMw)
            return ((const NDK_MW_DISPATCH*)t)->NdkGetRemoteTokenFromMw((NDK_MW*)handle);
        return remote ? ((const NDK_MR_DISPATCH*)t)->NdkGetRemoteTokenFromMr((NDK_MR*)handle)
                      : ((const NDK_MR_DISPATCH*)t)->NdkGetLocalTokenFromMr((NDK_MR*)handle);
    }
    UINT32 token;
    if (type == NdkObjectTypeMw)
        token = ORIGINAL(k, NDK_MW_DISPATCH)->NdkGetRemoteTokenFromMw((NDK_MW*)handle);
    else if (remote)
        token = ORIGINAL(k, NDK_MR_DISPATCH)->NdkGetRemoteTokenFromMr((NDK_MR*)handle);
    else
        token = ORIGINAL(k, NDK_MR_DISPATCH)->NdkGetLocalTokenFromMr((NDK_MR*)handle);
    if (remote) {
        k.o->remote_token = token;
        k.o->remote_known = 1;
        token_set(k.c, k.c->remote_tokens, token, k.o);
    } else {
        k.o->local_token = token;
        k.o->local_known = 1;
        token_set(k.c, k.c->local_tokens, token, k.o);
    }
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 16, &back);
    if (o.p) {
        putptr(&o, handle);
        put32(&o, token);
        put32(&o, 0);
        call_commit(&k);
    }
    return token;
}

static UINT32 cap_get_remote_token_from_mr(NDK_MR* mr) {
    return token_call(mr, NDKT_FN_GET_REMOTE_TOKEN_FROM_MR, NdkObjectTypeMr, 1);
}
static UINT32 cap_get_local_token_from_mr(NDK_MR* mr) {
    return token_call(mr, NDKT_FN_GET_LOCAL_TOKEN_FROM_MR, NdkObjectTypeMr, 0);
}
static UINT32 cap_get_remote_token_from_mw(NDK_MW* mw) {
    return token_call(mw, NDKT_FN_GET_REMOTE_TOKEN_FROM_MW, NdkObjectTypeMw, 1);
}

/* ---- SGE lists, inline payloads ---- */

#define CAP_MAX_SGES 1024u    /* SGEs of one request recorded */
#define CAP_MAX_INLINE 65536u /* inline bytes of one request recorded */

CAP_INLINE ULONG sge_count(const NDK_SGE* sgl, ULONG n) {
    return sgl ? CAP_MIN(n, CAP_MAX_SGES) : 0;
}

static void put_sgl(struct cap_out* o, const NDK_SGE* sgl, ULONG n) {
    for (ULONG i = 0; i < n; ++i) {
        put64(o, (uint64_t)sgl[i].LogicalAddress.QuadPart);
        put32(o, sgl[i].Length);
        put32(o, sgl[i].MemoryRegionToken);
    }
}

/* NDK_OP_FLAG_INLINE: the bytes are read through the SGEs' VirtualAddress during the call
 * (SGE-06), as the provider does. */
static uint32_t inline_length(const NDK_SGE* sgl, ULONG n, ULONG flags) {
    if (!(flags & NDK_OP_FLAG_INLINE) || !sgl) return 0;
    uint64_t total = 0;
    for (ULONG i = 0; i < n; ++i)
        if (sgl[i].VirtualAddress) total += sgl[i].Length;
    return (uint32_t)CAP_MIN(total, (uint64_t)CAP_MAX_INLINE);
}

static void put_inline(struct cap_out* o, const NDK_SGE* sgl, ULONG n, ULONG flags,
                       uint32_t length) {
    int present = (flags & NDK_OP_FLAG_INLINE) && sgl;
    put32(o, length);
    put32(o, present ? 1u : 0u);
    uint32_t left = length;
    for (ULONG i = 0; present && i < n && left; ++i) {
        if (!sgl[i].VirtualAddress) continue;
        uint32_t take = CAP_MIN(sgl[i].Length, left);
        cap_copy(o->p, sgl[i].VirtualAddress, take);
        o->p += take;
        left -= take;
    }
    uint32_t pad = (uint32_t)(CAP_ALIGN8(length) - length);
    if (pad) cap_fill(o->p, 0, pad);
    o->p += pad;
}

CAP_INLINE uint64_t sgl_bytes(const NDK_SGE* sgl, ULONG n) {
    uint64_t total = 0;
    for (ULONG i = 0; sgl && i < n; ++i)
        total += sgl[i].Length;
    return total;
}

/* ---- NDK_SRQ_DISPATCH ---- */

static NTSTATUS cap_modify_srq(NDK_SRQ* srq, ULONG depth, ULONG threshold,
                               NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, srq, NDKT_FN_MODIFY_SRQ))
        UNKNOWN_OBJECT(NDK_SRQ_DISPATCH, NdkObjectTypeSrq,
                       t_->NdkModifySrq(srq, depth, threshold, fn, ctx), CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q =
        fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_MODIFY_SRQ, k.o, done, ctx) : 0;
    if (fn) k.c->last_request_fn = done;
    struct cap_out o = call_reserve_entry(&k, 24, 8);
    if (o.p) {
        putptr(&o, srq);
        put32(&o, depth);
        put32(&o, threshold);
        put64(&o, q ? q->id : 0);
        call_publish(&k);
    }
    NTSTATUS status =
        ORIGINAL(k, NDK_SRQ_DISPATCH)
            ->NdkModifySrq(srq, depth, threshold, REQUEST_ROUTINE(q, fn), REQUEST_CONTEXT(q, ctx));
    if (q) request_returned(&k, q, status);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

/* NdkReceive and NdkSrqReceive. */
static NTSTATUS receive_like(struct cap_call* k, const void* handle, PVOID ctx, const NDK_SGE* sgl,
                             ULONG n, int srq) {
    ULONG kept = sge_count(sgl, n);
    struct cap_out o = call_reserve_entry(k, 24 + kept * 16u, 8);
    if (o.p) {
        putptr(&o, handle);
        putptr(&o, ctx);
        put32(&o, kept);
        put32(&o, 0);
        put_sgl(&o, sgl, kept);
        call_publish(k);
    }
    NTSTATUS status =
        srq ? ORIGINAL(*k, NDK_SRQ_DISPATCH)->NdkSrqReceive((NDK_SRQ*)handle, ctx, sgl, n)
            : ORIGINAL(*k, NDK_QP_DISPATCH)->NdkReceive((NDK_QP*)handle, ctx, sgl, n);
    if (status == STATUS_SUCCESS)
        track_post(k->c, &k->o->receive, srq ? NDKT_FN_SRQ_RECEIVE : NDKT_FN_RECEIVE, ctx, 0, sgl,
                   n, 0, 0, 0, 0);
    int32_t out[2] = {status, 0};
    call_finish(k, out);
    return status;
}

static NTSTATUS cap_srq_receive(NDK_SRQ* srq, PVOID ctx, const NDK_SGE* sgl, ULONG n) {
    struct cap_call k;
    if (!call_begin(&k, srq, NDKT_FN_SRQ_RECEIVE))
        UNKNOWN_OBJECT(NDK_SRQ_DISPATCH, NdkObjectTypeSrq, t_->NdkSrqReceive(srq, ctx, sgl, n),
                       CAP_STATUS_INVALID_HANDLE);
    return receive_like(&k, srq, ctx, sgl, n, 1);
}

/* ---- NDK_QP_DISPATCH ---- */

static VOID cap_flush(NDK_QP* qp) {
    struct cap_call k;
    if (!call_begin(&k, qp, NDKT_FN_FLUSH)) {
        const NDK_QP_DISPATCH* t = (const NDK_QP_DISPATCH*)fallback_table(NdkObjectTypeQp);
        if (t) t->NdkFlush(qp);
        return;
    }
    struct cap_out o = call_reserve_entry(&k, 8, 0);
    if (o.p) {
        putptr(&o, qp);
        call_publish(&k);
    }
    ORIGINAL(k, NDK_QP_DISPATCH)->NdkFlush(qp);
    call_finish(&k, 0);
}

static NTSTATUS cap_receive(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n) {
    struct cap_call k;
    if (!call_begin(&k, qp, NDKT_FN_RECEIVE))
        UNKNOWN_OBJECT(NDK_QP_DISPATCH, NdkObjectTypeQp, t_->NdkReceive(qp, ctx, sgl, n),
                       CAP_STATUS_INVALID_HANDLE);
    return receive_like(&k, qp, ctx, sgl, n, 0);
}

/* NdkSend, NdkSendAndInvalidate, NdkWrite: an SGE list sent (inline or from memory). */
struct send_shape {
    uint16_t function;
    uint64_t remote_address;
    uint32_t remote_token;
};

static NTSTATUS send_like(struct cap_call* k, NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n,
                          ULONG flags, const struct send_shape* shape) {
    NDKCAP* c = k->c;
    ULONG kept = sge_count(sgl, n);
    uint32_t inline_bytes = inline_length(sgl, n, flags);
    struct cap_plan source;
    int with_source = !(flags & NDK_OP_FLAG_INLINE) && (c->flags & NDKT_CAPTURE_DIGESTS);
    uint32_t source_room = 0;
    if (with_source) {
        source.span.remote = 0;
        source.span.pd = k->o->pd;
        source.span.sgl = sgl;
        source.span.n = kept;
        source.span.limit = ~0ull;
        source_room = plan_data(c, &source, (c->flags & NDKT_CAPTURE_SOURCE_BYTES) != 0);
    }
    uint32_t fixed = shape->function == NDKT_FN_SEND ? 24u : 40u;
    if (shape->function == NDKT_FN_SEND_AND_INVALIDATE) fixed = 32u;
    struct cap_out o = call_reserve_entry(
        k, fixed + kept * 16u + blob_size(inline_bytes) + dataopt_size(with_source, source_room),
        8);
    if (o.p) {
        putptr(&o, qp);
        putptr(&o, ctx);
        if (shape->function == NDKT_FN_WRITE) {
            put64(&o, shape->remote_address);
            put32(&o, shape->remote_token);
            put32(&o, flags);
            put32(&o, kept);
            put32(&o, 0);
        } else if (shape->function == NDKT_FN_SEND_AND_INVALIDATE) {
            put32(&o, flags);
            put32(&o, shape->remote_token);
            put32(&o, kept);
            put32(&o, 0);
        } else {
            put32(&o, kept);
            put32(&o, flags);
        }
        put_sgl(&o, sgl, kept);
        put_inline(&o, sgl, n, flags, inline_bytes);
        put32(&o, with_source ? 1u : 0u);
        put32(&o, 0);
        if (with_source) write_data(c, &o, NDKT_DATA_SOURCE, &source, &k->r);
        call_publish(k);
    }
    NTSTATUS status;
    if (shape->function == NDKT_FN_WRITE)
        status = ORIGINAL(*k, NDK_QP_DISPATCH)
                     ->NdkWrite(qp, ctx, sgl, n, shape->remote_address, shape->remote_token, flags);
    else if (shape->function == NDKT_FN_SEND_AND_INVALIDATE)
        status = ORIGINAL(*k, NDK_QP_DISPATCH)
                     ->NdkSendAndInvalidate(qp, ctx, sgl, n, flags, shape->remote_token);
    else
        status = ORIGINAL(*k, NDK_QP_DISPATCH)->NdkSend(qp, ctx, sgl, n, flags);
    if (status == STATUS_SUCCESS)
        track_post(c, &k->o->initiator, shape->function, ctx, flags, 0, 0,
                   shape->function == NDKT_FN_WRITE, shape->remote_address, shape->remote_token,
                   sgl_bytes(sgl, kept));
    int32_t out[2] = {status, 0};
    call_finish(k, out);
    return status;
}

static NTSTATUS cap_send(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n, ULONG flags) {
    struct cap_call k;
    if (!call_begin(&k, qp, NDKT_FN_SEND))
        UNKNOWN_OBJECT(NDK_QP_DISPATCH, NdkObjectTypeQp, t_->NdkSend(qp, ctx, sgl, n, flags),
                       CAP_STATUS_INVALID_HANDLE);
    struct send_shape shape = {NDKT_FN_SEND, 0, 0};
    return send_like(&k, qp, ctx, sgl, n, flags, &shape);
}

static NTSTATUS cap_write(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n, UINT64 address,
                          UINT32 token, ULONG flags) {
    struct cap_call k;
    if (!call_begin(&k, qp, NDKT_FN_WRITE))
        UNKNOWN_OBJECT(NDK_QP_DISPATCH, NdkObjectTypeQp,
                       t_->NdkWrite(qp, ctx, sgl, n, address, token, flags),
                       CAP_STATUS_INVALID_HANDLE);
    struct send_shape shape = {NDKT_FN_WRITE, address, token};
    return send_like(&k, qp, ctx, sgl, n, flags, &shape);
}

static NTSTATUS cap_send_and_invalidate(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n,
                                        ULONG flags, UINT32 token) {
    struct cap_call k;
    if (!call_begin(&k, qp, NDKT_FN_SEND_AND_INVALIDATE))
        UNKNOWN_OBJECT(NDK_QP_DISPATCH, NdkObjectTypeQp,
                       t_->NdkSendAndInvalidate(qp, ctx, sgl, n, flags, token),
                       CAP_STATUS_INVALID_HANDLE);
    struct send_shape shape = {NDKT_FN_SEND_AND_INVALIDATE, 0, token};
    return send_like(&k, qp, ctx, sgl, n, flags, &shape);
}

static NTSTATUS cap_read(NDK_QP* qp, PVOID ctx, const NDK_SGE* sgl, ULONG n, UINT64 address,
                         UINT32 token, ULONG flags) {
    struct cap_call k;
    if (!call_begin(&k, qp, NDKT_FN_READ))
        UNKNOWN_OBJECT(NDK_QP_DISPATCH, NdkObjectTypeQp,
                       t_->NdkRead(qp, ctx, sgl, n, address, token, flags),
                       CAP_STATUS_INVALID_HANDLE);
    NDKCAP* c = k.c;
    ULONG kept = sge_count(sgl, n);
    struct cap_plan source;
    int with_source = (c->flags & NDKT_CAPTURE_DIGESTS) != 0;
    uint32_t source_room = 0;
    if (with_source) {
        source.span.remote = 1;
        source.span.token = token;
        source.span.address = address;
        source.span.length = sgl_bytes(sgl, kept);
        source_room = plan_data(c, &source, (c->flags & NDKT_CAPTURE_SOURCE_BYTES) != 0);
    }
    struct cap_out o =
        call_reserve_entry(&k, 40 + kept * 16u + dataopt_size(with_source, source_room), 8);
    if (o.p) {
        putptr(&o, qp);
        putptr(&o, ctx);
        put64(&o, address);
        put32(&o, token);
        put32(&o, flags);
        put32(&o, kept);
        put32(&o, 0);
        put_sgl(&o, sgl, kept);
        put32(&o, with_source ? 1u : 0u);
        put32(&o, 0);
        if (with_source) write_data(c, &o, NDKT_DATA_SOURCE, &source, &k.r);
        call_publish(&k);
    }
    NTSTATUS status = ORIGINAL(k, NDK_QP_DISPATCH)->NdkRead(qp, ctx, sgl, n, address, token, flags);
    if (status == STATUS_SUCCESS)
        track_post(c, &k.o->initiator, NDKT_FN_READ, ctx, flags, sgl, kept, 0, 0, 0, 0);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static NTSTATUS cap_bind(NDK_QP* qp, PVOID ctx, NDK_MR* mr, NDK_MW* mw, PVOID va, SIZE_T length,
                         ULONG flags) {
    struct cap_call k;
    if (!call_begin(&k, qp, NDKT_FN_BIND))
        UNKNOWN_OBJECT(NDK_QP_DISPATCH, NdkObjectTypeQp,
                       t_->NdkBind(qp, ctx, mr, mw, va, length, flags), CAP_STATUS_INVALID_HANDLE);
    struct cap_out o = call_reserve_entry(&k, 56, 8);
    if (o.p) {
        putptr(&o, qp);
        putptr(&o, ctx);
        putptr(&o, mr);
        putptr(&o, mw);
        putptr(&o, va);
        put64(&o, length);
        put32(&o, flags);
        put32(&o, 0);
        call_publish(&k);
    }
    /* MW-02: the window takes effect when posted. */
    struct cap_object* window = object_find_in(k.c, mw);
    if (window) {
        window->window_mr = object_find_in(k.c, mr);
        window->window_va = (uint64_t)(ULONG_PTR)va;
        window->window_length = length;
        window->window_bound = 1;
    }
    NTSTATUS status = ORIGINAL(k, NDK_QP_DISPATCH)->NdkBind(qp, ctx, mr, mw, va, length, flags);
    if (status == STATUS_SUCCESS)
        track_post(k.c, &k.o->initiator, NDKT_FN_BIND, ctx, flags, 0, 0, 0, 0, 0, 0);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

#define CAP_MAX_FR_PAGES (1u << 20)

static NTSTATUS cap_fast_register(NDK_QP* qp, PVOID ctx, NDK_MR* mr, ULONG count,
                                  const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length,
                                  PVOID base, ULONG flags) {
    struct cap_call k;
    if (!call_begin(&k, qp, NDKT_FN_FAST_REGISTER))
        UNKNOWN_OBJECT(NDK_QP_DISPATCH, NdkObjectTypeQp,
                       t_->NdkFastRegister(qp, ctx, mr, count, pages, fbo, length, base, flags),
                       CAP_STATUS_INVALID_HANDLE);
    uint32_t kept = pages ? (uint32_t)CAP_MIN(count, CAP_MAX_FR_PAGES) : 0;
    struct cap_out o = call_reserve_entry(&k, 56 + kept * 8u, 8);
    if (o.p) {
        putptr(&o, qp);
        putptr(&o, ctx);
        putptr(&o, mr);
        put32(&o, kept);
        put32(&o, fbo);
        put64(&o, length);
        putptr(&o, base);
        put32(&o, flags);
        put32(&o, 0);
        for (uint32_t i = 0; i < kept; ++i)
            put64(&o, (uint64_t)pages[i].QuadPart);
        call_publish(&k);
    }
    NTSTATUS status = ORIGINAL(k, NDK_QP_DISPATCH)
                          ->NdkFastRegister(qp, ctx, mr, count, pages, fbo, length, base, flags);
    /* FR-TOK-01: the registration takes effect when posted (a refused post changes nothing);
     * its pages through the LAMs. */
    struct cap_object* region = status == STATUS_SUCCESS ? object_find_in(k.c, mr) : 0;
    if (region && (k.c->flags & NDKT_CAPTURE_DIGESTS)) {
        st32(&region->mr_kind, MR_NONE);
        int ok = region->pfn_capacity >= kept && kept > 0;
        for (uint32_t i = 0; ok && i < kept; ++i) {
            uint64_t pfn;
            if (!lam_lookup(k.c, (uint64_t)pages[i].QuadPart, &pfn))
                ok = 0;
            else
                k.c->pfns[region->pfn_at + i] = pfn;
        }
        if (ok) {
            region->pfn_count = kept;
            region->va = (uint64_t)(ULONG_PTR)base;
            region->fbo = fbo;
            region->length = length;
            st32(&region->mr_kind, MR_FAST_REGISTERED);
        }
    }
    if (status == STATUS_SUCCESS)
        track_post(k.c, &k.o->initiator, NDKT_FN_FAST_REGISTER, ctx, flags, 0, 0, 0, 0, 0, 0);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static NTSTATUS cap_invalidate(NDK_QP* qp, PVOID ctx, NDK_OBJECT_HEADER* target, ULONG flags) {
    struct cap_call k;
    if (!call_begin(&k, qp, NDKT_FN_INVALIDATE))
        UNKNOWN_OBJECT(NDK_QP_DISPATCH, NdkObjectTypeQp, t_->NdkInvalidate(qp, ctx, target, flags),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_out o = call_reserve_entry(&k, 32, 8);
    if (o.p) {
        putptr(&o, qp);
        putptr(&o, ctx);
        putptr(&o, target);
        put32(&o, flags);
        put32(&o, 0);
        call_publish(&k);
    }
    NTSTATUS status = ORIGINAL(k, NDK_QP_DISPATCH)->NdkInvalidate(qp, ctx, target, flags);
    if (status == STATUS_SUCCESS) {
        struct cap_object* t = object_find_in(k.c, target);
        if (t && t->type == NdkObjectTypeMw) t->window_bound = 0;
        track_post(k.c, &k.o->initiator, NDKT_FN_INVALIDATE, ctx, flags, 0, 0, 0, 0, 0, 0);
    }
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

/* ---- NDK_PD_DISPATCH ---- */

struct create_mr_args {
    NDK_PD* pd;
    uint32_t value;
    uint64_t request;
};
static void put_create_mr(struct cap_out* o, const void* p) {
    const struct create_mr_args* a = (const struct create_mr_args*)p;
    putptr(o, a->pd);
    put32(o, a->value);
    put32(o, 0);
    put64(o, a->request);
}

static NTSTATUS cap_create_mr(NDK_PD* pd, BOOLEAN fast, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx,
                              NDK_MR** pp) {
    struct cap_call k;
    if (!call_begin(&k, pd, NDKT_FN_CREATE_MR))
        UNKNOWN_OBJECT(NDK_PD_DISPATCH, NdkObjectTypePd, t_->NdkCreateMr(pd, fast, fn, ctx, pp),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypeMr, NDKT_FN_CREATE_MR, fn, ctx, (void**)pp);
    if (cr.made) cr.made->pfn_at = 0xFFFFFFFFu;
    NTSTATUS status =
        ORIGINAL(k, NDK_PD_DISPATCH)
            ->NdkCreateMr(pd, fast, create_routine(&cr, fn), create_context(&cr, ctx), pp);
    struct create_mr_args a = {pd, fast ? 1u : 0u, cr.q ? cr.q->id : 0};
    create_done(&k, &cr, status, (void**)pp, 24, put_create_mr, &a);
    return status;
}

static NTSTATUS cap_create_mw(NDK_PD* pd, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx, NDK_MW** pp) {
    struct cap_call k;
    if (!call_begin(&k, pd, NDKT_FN_CREATE_MW))
        UNKNOWN_OBJECT(NDK_PD_DISPATCH, NdkObjectTypePd, t_->NdkCreateMw(pd, fn, ctx, pp),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypeMw, NDKT_FN_CREATE_MW, fn, ctx, (void**)pp);
    NTSTATUS status = ORIGINAL(k, NDK_PD_DISPATCH)
                          ->NdkCreateMw(pd, create_routine(&cr, fn), create_context(&cr, ctx), pp);
    struct create_plain_args a = {pd, cr.q ? cr.q->id : 0};
    create_done(&k, &cr, status, (void**)pp, 16, put_create_plain, &a);
    return status;
}

struct create_srq_args {
    NDK_PD* pd;
    ULONG depth, max_sge, threshold;
    int notify, affinity;
    uint64_t request;
};
static void put_create_srq(struct cap_out* o, const void* p) {
    const struct create_srq_args* a = (const struct create_srq_args*)p;
    putptr(o, a->pd);
    put32(o, a->depth);
    put32(o, a->max_sge);
    put32(o, a->threshold);
    put16(o, (uint16_t)a->notify);
    put16(o, (uint16_t)a->affinity);
    put64(o, a->request);
}

static NTSTATUS cap_create_srq(NDK_PD* pd, ULONG depth, ULONG max_sge, ULONG threshold,
                               NDK_FN_SRQ_NOTIFICATION_CALLBACK* notify, PVOID notify_ctx,
                               GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx,
                               NDK_SRQ** pp) {
    struct cap_call k;
    if (!call_begin(&k, pd, NDKT_FN_CREATE_SRQ))
        UNKNOWN_OBJECT(NDK_PD_DISPATCH, NdkObjectTypePd,
                       t_->NdkCreateSrq(pd, depth, max_sge, threshold, notify, notify_ctx, affinity,
                                        fn, ctx, pp),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypeSrq, NDKT_FN_CREATE_SRQ, fn, ctx, (void**)pp);
    if (cr.made) {
        cr.made->event_fn.srq = notify;
        cr.made->event_ctx = notify_ctx;
        if (k.c->flags & NDKT_CAPTURE_DIGESTS) queue_make(k.c, &cr.made->receive, depth);
    }
    NTSTATUS status =
        ORIGINAL(k, NDK_PD_DISPATCH)
            ->NdkCreateSrq(pd, depth, max_sge, threshold,
                           notify && cr.made ? cap_srq_notification : notify,
                           notify && cr.made ? object_context(k.c, cr.made) : notify_ctx, affinity,
                           create_routine(&cr, fn), create_context(&cr, ctx), pp);
    struct create_srq_args a = {
        pd, depth, max_sge, threshold, notify != 0, affinity != 0, cr.q ? cr.q->id : 0};
    create_done(&k, &cr, status, (void**)pp, 32, put_create_srq, &a);
    return status;
}

struct create_qp_args {
    NDK_PD* pd;
    NDK_CQ *receive_cq, *initiator_cq;
    NDK_SRQ* srq;
    PVOID qp_context;
    ULONG receive_depth, initiator_depth, receive_sge, initiator_sge, inline_size;
    uint64_t request;
};
static void put_create_qp(struct cap_out* o, const void* p) {
    const struct create_qp_args* a = (const struct create_qp_args*)p;
    putptr(o, a->pd);
    putptr(o, a->receive_cq);
    putptr(o, a->initiator_cq);
    putptr(o, a->qp_context);
    put32(o, a->receive_depth);
    put32(o, a->initiator_depth);
    put32(o, a->receive_sge);
    put32(o, a->initiator_sge);
    put32(o, a->inline_size);
    put32(o, 0);
    put64(o, a->request);
}
static void put_create_qp_srq(struct cap_out* o, const void* p) {
    const struct create_qp_args* a = (const struct create_qp_args*)p;
    putptr(o, a->pd);
    putptr(o, a->receive_cq);
    putptr(o, a->initiator_cq);
    putptr(o, a->srq);
    putptr(o, a->qp_context);
    put32(o, a->initiator_depth);
    put32(o, a->initiator_sge);
    put32(o, a->inline_size);
    put32(o, 0);
    put64(o, a->request);
}

static NTSTATUS cap_create_qp(NDK_PD* pd, NDK_CQ* rcq, NDK_CQ* icq, PVOID qp_context,
                              ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                              ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* fn,
                              PVOID ctx, NDK_QP** pp) {
    struct cap_call k;
    if (!call_begin(&k, pd, NDKT_FN_CREATE_QP))
        UNKNOWN_OBJECT(NDK_PD_DISPATCH, NdkObjectTypePd,
                       t_->NdkCreateQp(pd, rcq, icq, qp_context, receive_depth, initiator_depth,
                                       receive_sge, initiator_sge, inline_size, fn, ctx, pp),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypeQp, NDKT_FN_CREATE_QP, fn, ctx, (void**)pp);
    if (cr.made) {
        cr.made->qp_context = (uint64_t)(ULONG_PTR)qp_context;
        if (k.c->flags & NDKT_CAPTURE_DIGESTS) {
            queue_make(k.c, &cr.made->initiator, initiator_depth);
            queue_make(k.c, &cr.made->receive, receive_depth);
        }
    }
    NTSTATUS status = ORIGINAL(k, NDK_PD_DISPATCH)
                          ->NdkCreateQp(pd, rcq, icq, qp_context, receive_depth, initiator_depth,
                                        receive_sge, initiator_sge, inline_size,
                                        create_routine(&cr, fn), create_context(&cr, ctx), pp);
    struct create_qp_args a = {pd,
                               rcq,
                               icq,
                               0,
                               qp_context,
                               receive_depth,
                               initiator_depth,
                               receive_sge,
                               initiator_sge,
                               inline_size,
                               cr.q ? cr.q->id : 0};
    create_done(&k, &cr, status, (void**)pp, 64, put_create_qp, &a);
    return status;
}

static NTSTATUS cap_create_qp_with_srq(NDK_PD* pd, NDK_CQ* rcq, NDK_CQ* icq, NDK_SRQ* srq,
                                       PVOID qp_context, ULONG initiator_depth, ULONG initiator_sge,
                                       ULONG inline_size, NDK_FN_CREATE_COMPLETION* fn, PVOID ctx,
                                       NDK_QP** pp) {
    struct cap_call k;
    if (!call_begin(&k, pd, NDKT_FN_CREATE_QP_WITH_SRQ))
        UNKNOWN_OBJECT(NDK_PD_DISPATCH, NdkObjectTypePd,
                       t_->NdkCreateQpWithSrq(pd, rcq, icq, srq, qp_context, initiator_depth,
                                              initiator_sge, inline_size, fn, ctx, pp),
                       CAP_STATUS_INVALID_HANDLE);
    struct cap_create cr;
    create_prepare(&k, &cr, NdkObjectTypeQp, NDKT_FN_CREATE_QP_WITH_SRQ, fn, ctx, (void**)pp);
    if (cr.made) {
        cr.made->qp_context = (uint64_t)(ULONG_PTR)qp_context;
        cr.made->srq = object_find_in(k.c, srq);
        if (k.c->flags & NDKT_CAPTURE_DIGESTS)
            queue_make(k.c, &cr.made->initiator, initiator_depth);
    }
    NTSTATUS status = ORIGINAL(k, NDK_PD_DISPATCH)
                          ->NdkCreateQpWithSrq(pd, rcq, icq, srq, qp_context, initiator_depth,
                                               initiator_sge, inline_size, create_routine(&cr, fn),
                                               create_context(&cr, ctx), pp);
    struct create_qp_args a = {pd,
                               rcq,
                               icq,
                               srq,
                               qp_context,
                               0,
                               initiator_depth,
                               0,
                               initiator_sge,
                               inline_size,
                               cr.q ? cr.q->id : 0};
    create_done(&k, &cr, status, (void**)pp, 64, put_create_qp_srq, &a);
    return status;
}

static VOID cap_get_privileged_token(NDK_PD* pd, UINT32* token) {
    struct cap_call k;
    if (!call_begin(&k, pd, NDKT_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN)) {
        const NDK_PD_DISPATCH* t = (const NDK_PD_DISPATCH*)fallback_table(NdkObjectTypePd);
        if (t) t->NdkGetPrivilegedMemoryRegionToken(pd, token);
        return;
    }
    UINT32 before = token ? *token : 0;
    ORIGINAL(k, NDK_PD_DISPATCH)->NdkGetPrivilegedMemoryRegionToken(pd, token);
    if (token) {
        k.o->privileged_token = *token;
        k.o->has_privileged = 1;
    }
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 24, &back);
    if (o.p) {
        putptr(&o, pd);
        put32(&o, token ? 1u : 0u);
        put32(&o, 0);
        put32(&o, token ? *token : 0);
        put32(&o, token && *token != before ? 1u : 0u);
        call_commit(&k);
    }
}

/* ---- Addresses: the connector's, listener's and endpoint's getters, NdkGetPeerAddress ---- */

static NTSTATUS address_call(struct cap_call* k, const void* handle, PSOCKADDR address,
                             ULONG* length, NTSTATUS status, ULONG length_in) {
    uint32_t shown =
        status == STATUS_SUCCESS && address && length ? CAP_MIN(*length, length_in) : 0;
    uint64_t back;
    struct cap_out o = call_reserve_return(k, 24 + address_size(address, shown), &back);
    if (o.p) {
        putptr(&o, handle);
        put32(&o, length_in);
        put32(&o, address ? 1u : 0u);
        put32(&o, (uint32_t)status);
        put32(&o, length ? *length : 0);
        put_address(&o, shown ? address : 0, shown);
        call_commit(k);
    }
    return status;
}

static NTSTATUS cap_connector_local_address(NDK_CONNECTOR* conn, PSOCKADDR address, ULONG* length) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_GET_LOCAL_ADDRESS))
        UNKNOWN_OBJECT(NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
                       t_->NdkGetLocalAddress(conn, address, length), CAP_STATUS_INVALID_HANDLE);
    ULONG in = length ? *length : 0;
    NTSTATUS status =
        ORIGINAL(k, NDK_CONNECTOR_DISPATCH)->NdkGetLocalAddress(conn, address, length);
    return address_call(&k, conn, address, length, status, in);
}

static NTSTATUS cap_listener_local_address(NDK_LISTENER* listener, PSOCKADDR address,
                                           ULONG* length) {
    struct cap_call k;
    if (!call_begin(&k, listener, NDKT_FN_GET_LOCAL_ADDRESS))
        UNKNOWN_OBJECT(NDK_LISTENER_DISPATCH, NdkObjectTypeListener,
                       t_->NdkGetLocalAddress(listener, address, length),
                       CAP_STATUS_INVALID_HANDLE);
    ULONG in = length ? *length : 0;
    NTSTATUS status =
        ORIGINAL(k, NDK_LISTENER_DISPATCH)->NdkGetLocalAddress(listener, address, length);
    return address_call(&k, listener, address, length, status, in);
}

static NTSTATUS cap_endpoint_local_address(NDK_SHARED_ENDPOINT* endpoint, PSOCKADDR address,
                                           ULONG* length) {
    struct cap_call k;
    if (!call_begin(&k, endpoint, NDKT_FN_GET_LOCAL_ADDRESS))
        UNKNOWN_OBJECT(NDK_SHARED_ENDPOINT_DISPATCH, NdkObjectTypeSharedEndpoint,
                       t_->NdkGetLocalAddress(endpoint, address, length),
                       CAP_STATUS_INVALID_HANDLE);
    ULONG in = length ? *length : 0;
    NTSTATUS status =
        ORIGINAL(k, NDK_SHARED_ENDPOINT_DISPATCH)->NdkGetLocalAddress(endpoint, address, length);
    return address_call(&k, endpoint, address, length, status, in);
}

static NTSTATUS cap_peer_address(NDK_CONNECTOR* conn, PSOCKADDR address, ULONG* length) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_GET_PEER_ADDRESS))
        UNKNOWN_OBJECT(NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
                       t_->NdkGetPeerAddress(conn, address, length), CAP_STATUS_INVALID_HANDLE);
    ULONG in = length ? *length : 0;
    NTSTATUS status = ORIGINAL(k, NDK_CONNECTOR_DISPATCH)->NdkGetPeerAddress(conn, address, length);
    return address_call(&k, conn, address, length, status, in);
}

/* ---- NDK_CONNECTOR_DISPATCH ---- */

#define CAP_MAX_PRIVATE 4096u

CAP_INLINE uint32_t private_length(const void* data, ULONG length) {
    return data ? CAP_MIN(length, CAP_MAX_PRIVATE) : 0;
}

static NTSTATUS cap_connect(NDK_CONNECTOR* conn, NDK_QP* qp, const PSOCKADDR source,
                            ULONG source_length, const PSOCKADDR destination,
                            ULONG destination_length, ULONG ird, ULONG ord, const PVOID data,
                            ULONG data_length, NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_CONNECT))
        UNKNOWN_OBJECT(NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
                       t_->NdkConnect(conn, qp, source, source_length, destination,
                                      destination_length, ird, ord, data, data_length, fn, ctx),
                       CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q = fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_CONNECT, k.o, done, ctx) : 0;
    if (fn) k.c->last_request_fn = done;
    uint32_t pd = private_length(data, data_length);
    struct cap_out o =
        call_reserve_entry(&k,
                           32 + address_size(source, source_length) +
                               address_size(destination, destination_length) + blob_size(pd),
                           8);
    if (o.p) {
        putptr(&o, conn);
        putptr(&o, qp);
        put32(&o, ird);
        put32(&o, ord);
        put64(&o, q ? q->id : 0);
        put_address(&o, source, source_length);
        put_address(&o, destination, destination_length);
        putblob(&o, data, pd, data != 0);
        call_publish(&k);
    }
    NTSTATUS status =
        ORIGINAL(k, NDK_CONNECTOR_DISPATCH)
            ->NdkConnect(conn, qp, source, source_length, destination, destination_length, ird, ord,
                         data, data_length, REQUEST_ROUTINE(q, fn), REQUEST_CONTEXT(q, ctx));
    if (q) request_returned(&k, q, status);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static NTSTATUS cap_connect_with_shared_endpoint(NDK_CONNECTOR* conn, NDK_QP* qp,
                                                 NDK_SHARED_ENDPOINT* endpoint,
                                                 const PSOCKADDR destination, ULONG length,
                                                 ULONG ird, ULONG ord, const PVOID data,
                                                 ULONG data_length, NDK_FN_REQUEST_COMPLETION* fn,
                                                 PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_CONNECT_WITH_SHARED_ENDPOINT))
        UNKNOWN_OBJECT(NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
                       t_->NdkConnectWithSharedEndpoint(conn, qp, endpoint, destination, length,
                                                        ird, ord, data, data_length, fn, ctx),
                       CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q =
        fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_CONNECT_WITH_SHARED_ENDPOINT, k.o, done, ctx)
           : 0;
    if (fn) k.c->last_request_fn = done;
    uint32_t pd = private_length(data, data_length);
    struct cap_out o =
        call_reserve_entry(&k, 40 + address_size(destination, length) + blob_size(pd), 8);
    if (o.p) {
        putptr(&o, conn);
        putptr(&o, qp);
        putptr(&o, endpoint);
        put32(&o, ird);
        put32(&o, ord);
        put64(&o, q ? q->id : 0);
        put_address(&o, destination, length);
        putblob(&o, data, pd, data != 0);
        call_publish(&k);
    }
    NTSTATUS status = ORIGINAL(k, NDK_CONNECTOR_DISPATCH)
                          ->NdkConnectWithSharedEndpoint(
                              conn, qp, endpoint, destination, length, ird, ord, data, data_length,
                              REQUEST_ROUTINE(q, fn), REQUEST_CONTEXT(q, ctx));
    if (q) request_returned(&k, q, status);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

/* NdkCompleteConnect(Ex), NdkAccept(Ex): the disconnect callback goes through the capture. */
static NTSTATUS cap_complete_connect(NDK_CONNECTOR* conn, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                                     PVOID event_ctx, NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_COMPLETE_CONNECT))
        UNKNOWN_OBJECT(NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
                       t_->NdkCompleteConnect(conn, event, event_ctx, fn, ctx),
                       CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q =
        fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_COMPLETE_CONNECT, k.o, done, ctx) : 0;
    if (fn) k.c->last_request_fn = done;
    k.o->event_fn.disconnect = event;
    k.o->event_ctx = event_ctx;
    k.o->disconnect_ex = 0;
    struct cap_out o = call_reserve_entry(&k, 24, 8);
    if (o.p) {
        putptr(&o, conn);
        put32(&o, event ? 1u : 0u);
        put32(&o, 0);
        put64(&o, q ? q->id : 0);
        call_publish(&k);
    }
    NTSTATUS status = ORIGINAL(k, NDK_CONNECTOR_DISPATCH)
                          ->NdkCompleteConnect(conn, event ? cap_disconnect_event : event,
                                               event ? object_context(k.c, k.o) : event_ctx,
                                               REQUEST_ROUTINE(q, fn), REQUEST_CONTEXT(q, ctx));
    if (q) request_returned(&k, q, status);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static NTSTATUS cap_complete_connect_ex(NDK_CONNECTOR* conn,
                                        NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event, PVOID event_ctx,
                                        NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_COMPLETE_CONNECT_EX))
        UNKNOWN_OBJECT(NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
                       t_->NdkCompleteConnectEx(conn, event, event_ctx, fn, ctx),
                       CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q =
        fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_COMPLETE_CONNECT_EX, k.o, done, ctx) : 0;
    if (fn) k.c->last_request_fn = done;
    k.o->event_fn.disconnect_ex = event;
    k.o->event_ctx = event_ctx;
    k.o->disconnect_ex = 1;
    struct cap_out o = call_reserve_entry(&k, 24, 8);
    if (o.p) {
        putptr(&o, conn);
        put32(&o, event ? 1u : 0u);
        put32(&o, 0);
        put64(&o, q ? q->id : 0);
        call_publish(&k);
    }
    NTSTATUS status = ORIGINAL(k, NDK_CONNECTOR_DISPATCH)
                          ->NdkCompleteConnectEx(conn, event ? cap_disconnect_event_ex : event,
                                                 event ? object_context(k.c, k.o) : event_ctx,
                                                 REQUEST_ROUTINE(q, fn), REQUEST_CONTEXT(q, ctx));
    if (q) request_returned(&k, q, status);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static NTSTATUS accept_like(struct cap_call* k, NDK_CONNECTOR* conn, NDK_QP* qp, ULONG ird,
                            ULONG ord, const PVOID data, ULONG data_length, int has_event,
                            NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx, struct cap_request** out_q) {
    union cap_completion done;
    done.request = fn;
    struct cap_request* q =
        fn ? request_new(k->c, REQ_REQUEST, (uint16_t)(k->kind & 0xFF), k->o, done, ctx) : 0;
    if (fn) k->c->last_request_fn = done;
    uint32_t pd = private_length(data, data_length);
    struct cap_out o = call_reserve_entry(k, 40 + blob_size(pd), 8);
    if (o.p) {
        putptr(&o, conn);
        putptr(&o, qp);
        put32(&o, ird);
        put32(&o, ord);
        put32(&o, has_event ? 1u : 0u);
        put32(&o, 0);
        put64(&o, q ? q->id : 0);
        putblob(&o, data, pd, data != 0);
        call_publish(k);
    }
    *out_q = q;
    return STATUS_SUCCESS;
}

static NTSTATUS cap_accept(NDK_CONNECTOR* conn, NDK_QP* qp, ULONG ird, ULONG ord, const PVOID data,
                           ULONG data_length, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                           PVOID event_ctx, NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_ACCEPT))
        UNKNOWN_OBJECT(
            NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
            t_->NdkAccept(conn, qp, ird, ord, data, data_length, event, event_ctx, fn, ctx),
            CAP_STATUS_INVALID_HANDLE);
    struct cap_request* q;
    accept_like(&k, conn, qp, ird, ord, data, data_length, event != 0, fn, ctx, &q);
    k.o->event_fn.disconnect = event;
    k.o->event_ctx = event_ctx;
    k.o->disconnect_ex = 0;
    NTSTATUS status =
        ORIGINAL(k, NDK_CONNECTOR_DISPATCH)
            ->NdkAccept(conn, qp, ird, ord, data, data_length, event ? cap_disconnect_event : event,
                        event ? object_context(k.c, k.o) : event_ctx, REQUEST_ROUTINE(q, fn),
                        REQUEST_CONTEXT(q, ctx));
    if (q) request_returned(&k, q, status);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static NTSTATUS cap_accept_ex(NDK_CONNECTOR* conn, NDK_QP* qp, ULONG ird, ULONG ord,
                              const PVOID data, ULONG data_length,
                              NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event, PVOID event_ctx,
                              NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_ACCEPT_EX))
        UNKNOWN_OBJECT(
            NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
            t_->NdkAcceptEx(conn, qp, ird, ord, data, data_length, event, event_ctx, fn, ctx),
            CAP_STATUS_INVALID_HANDLE);
    struct cap_request* q;
    accept_like(&k, conn, qp, ird, ord, data, data_length, event != 0, fn, ctx, &q);
    k.o->event_fn.disconnect_ex = event;
    k.o->event_ctx = event_ctx;
    k.o->disconnect_ex = 1;
    NTSTATUS status = ORIGINAL(k, NDK_CONNECTOR_DISPATCH)
                          ->NdkAcceptEx(conn, qp, ird, ord, data, data_length,
                                        event ? cap_disconnect_event_ex : event,
                                        event ? object_context(k.c, k.o) : event_ctx,
                                        REQUEST_ROUTINE(q, fn), REQUEST_CONTEXT(q, ctx));
    if (q) request_returned(&k, q, status);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static NTSTATUS cap_reject(NDK_CONNECTOR* conn, const PVOID data, ULONG data_length) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_REJECT))
        UNKNOWN_OBJECT(NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
                       t_->NdkReject(conn, data, data_length), CAP_STATUS_INVALID_HANDLE);
    uint32_t pd = private_length(data, data_length);
    struct cap_out o = call_reserve_entry(&k, 8 + blob_size(pd), 8);
    if (o.p) {
        putptr(&o, conn);
        putblob(&o, data, pd, data != 0);
        call_publish(&k);
    }
    NTSTATUS status = ORIGINAL(k, NDK_CONNECTOR_DISPATCH)->NdkReject(conn, data, data_length);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static NTSTATUS cap_get_connection_data(NDK_CONNECTOR* conn, ULONG* ird, ULONG* ord, PVOID data,
                                        ULONG* length) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_GET_CONNECTION_DATA))
        UNKNOWN_OBJECT(NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
                       t_->NdkGetConnectionData(conn, ird, ord, data, length),
                       CAP_STATUS_INVALID_HANDLE);
    ULONG in = length ? *length : 0;
    NTSTATUS status =
        ORIGINAL(k, NDK_CONNECTOR_DISPATCH)->NdkGetConnectionData(conn, ird, ord, data, length);
    uint32_t shown =
        data && length && (status == STATUS_SUCCESS || status == STATUS_BUFFER_TOO_SMALL)
            ? CAP_MIN(CAP_MIN(in, *length), CAP_MAX_PRIVATE)
            : 0;
    uint64_t back;
    struct cap_out o = call_reserve_return(&k, 16 + 16 + blob_size(shown), &back);
    if (o.p) {
        putptr(&o, conn);
        put32(&o, in);
        put16(&o, data ? 1 : 0);
        put16(&o, (uint16_t)((ird ? 1 : 0) | (ord ? 2 : 0)));
        put32(&o, (uint32_t)status);
        put32(&o, length ? *length : 0);
        put32(&o, ird ? *ird : 0);
        put32(&o, ord ? *ord : 0);
        putblob(&o, data, shown, data != 0);
        call_commit(&k);
    }
    return status;
}

static NTSTATUS cap_disconnect(NDK_CONNECTOR* conn, NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, conn, NDKT_FN_DISCONNECT))
        UNKNOWN_OBJECT(NDK_CONNECTOR_DISPATCH, NdkObjectTypeConnector,
                       t_->NdkDisconnect(conn, fn, ctx), CAP_STATUS_INVALID_HANDLE);
    struct cap_request* q = simple_begin(&k, conn, NDKT_FN_DISCONNECT, fn, ctx, 1);
    NTSTATUS status = ORIGINAL(k, NDK_CONNECTOR_DISPATCH)
                          ->NdkDisconnect(conn, REQUEST_ROUTINE(q, fn), REQUEST_CONTEXT(q, ctx));
    simple_end(&k, q, conn, NDKT_FN_DISCONNECT, status, 1);
    return status;
}

/* ---- NDK_LISTENER_DISPATCH ---- */

static NTSTATUS cap_listen(NDK_LISTENER* listener, const PSOCKADDR address, ULONG length,
                           NDK_FN_REQUEST_COMPLETION* fn, PVOID ctx) {
    struct cap_call k;
    if (!call_begin(&k, listener, NDKT_FN_LISTEN))
        UNKNOWN_OBJECT(NDK_LISTENER_DISPATCH, NdkObjectTypeListener,
                       t_->NdkListen(listener, address, length, fn, ctx),
                       CAP_STATUS_INVALID_HANDLE);
    union cap_completion done;
    done.request = fn;
    struct cap_request* q = fn ? request_new(k.c, REQ_REQUEST, NDKT_FN_LISTEN, k.o, done, ctx) : 0;
    if (fn) k.c->last_request_fn = done;
    struct cap_out o = call_reserve_entry(&k, 16 + address_size(address, length), 8);
    if (o.p) {
        putptr(&o, listener);
        put64(&o, q ? q->id : 0);
        put_address(&o, address, length);
        call_publish(&k);
    }
    NTSTATUS status =
        ORIGINAL(k, NDK_LISTENER_DISPATCH)
            ->NdkListen(listener, address, length, REQUEST_ROUTINE(q, fn), REQUEST_CONTEXT(q, ctx));
    if (q) request_returned(&k, q, status);
    int32_t out[2] = {status, 0};
    call_finish(&k, out);
    return status;
}

static VOID cap_control_connect_events(NDK_LISTENER* listener, BOOLEAN pause) {
    struct cap_call k;
    if (!call_begin(&k, listener, NDKT_FN_CONTROL_CONNECT_EVENTS)) {
        const NDK_LISTENER_DISPATCH* t =
            (const NDK_LISTENER_DISPATCH*)fallback_table(NdkObjectTypeListener);
        if (t) t->NdkControlConnectEvents(listener, pause);
        return;
    }
    struct cap_out o = call_reserve_entry(&k, 16, 0);
    if (o.p) {
        putptr(&o, listener);
        put32(&o, pause ? 1u : 0u);
        put32(&o, 0);
        call_publish(&k);
    }
    ORIGINAL(k, NDK_LISTENER_DISPATCH)->NdkControlConnectEvents(listener, pause);
    call_finish(&k, 0);
}

/* ================================ The provider's callbacks ================================ */

/* A callback record is written when the callback starts (its place in the order) and completed
 * when it returns (its duration). */
static int callback_begin(NDKCAP* c, struct cap_call* k, uint16_t callback, uint32_t body) {
    k->c = c;
    k->o = 0;
    k->kind = (uint16_t)(NDKT_KIND_CALLBACK | callback);
    k->has_back = 0;
    k->timed = 1;
    frame_enter(c, &k->f, k->kind, 1);
    k->r.time = now(c);
    k->outcome_at = body;
    k->outcome_bytes = 0;
    if (!record_reserve(c, &k->r, body)) {
        k->r.seq = count_now(c, k->f.thread);
        return 0;
    }
    k->r.seq = record_count(&k->r);
    record_header(&k->r, k->kind, &k->f);
    return 1;
}

/* A callback whose context the capture never gave (GEN-CB-03): recorded in the capture the
 * context names if any, else the first one open; forwarded to the consumer's latest routine. */
static NDKCAP* stray_capture(PVOID ctx) {
    uint64_t v = (uint64_t)(ULONG_PTR)ctx;
    NDKCAP* c = 0;
    if ((v & 0xF) == 0x5 || (v & 0xF) == 0x9)
        c = (NDKCAP*)ld64((volatile uint64_t*)&g_captures[(v >> 20) & 0xF]);
    for (uint32_t i = 0; !c && i < CAP_MAX_CAPTURES; ++i)
        c = (NDKCAP*)ld64((volatile uint64_t*)&g_captures[i]);
    return c;
}

static void record_stray(NDKCAP* c, struct cap_call* k, uint32_t callback, NTSTATUS status,
                         PVOID ctx) {
    if (!callback_begin(c, k, NDKT_CB_STRAY, 16)) return;
    struct cap_out o = {k->r.body};
    put32(&o, callback);
    put32(&o, (uint32_t)status);
    putptr(&o, ctx);
    call_publish(k);
}

/* After the consumer's routine returned. */
CAP_INLINE void callback_end(struct cap_call* k) {
    call_finish(k, 0);
}

CAP_INLINE void fence(void) {
#if CAP_MSVC
    /* What winnt.h's MemoryBarrier is on x64; the intrinsic needs no Windows header (capture.c
     * includes none: MemoryBarrier was undeclared there). */
    __faststorefence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* The callback came: the slot is free once its call returned too. */
static void request_called_back(struct cap_request* q) {
    add32(&q->callbacks, 1);
    fence();
    if (ld32(&q->returned)) st32(&q->busy, 0);
}

static VOID cap_request_completion(PVOID ctx, NTSTATUS status) {
    NDKCAP* c = 0;
    struct cap_call k;
    struct cap_request* q = request_from_context(ctx, &c);
    if (!q) {
        c = stray_capture(ctx);
        if (!c) return;
        record_stray(c, &k, NDKT_CB_REQUEST_COMPLETION, status, ctx);
        if (c->last_request_fn.request) c->last_request_fn.request(ctx, status);
        callback_end(&k);
        return;
    }
    union cap_completion fn = q->consumer_fn;
    PVOID consumer_ctx = q->consumer_ctx;
    int early = !ld32(&q->returned);
    uint16_t function = q->function;
    uint32_t pages = 0;
    int lam = function == NDKT_FN_BUILD_LAM;
    if (lam) pages = lam_pages_of(q->lam, q->lam_size_in, status);
    if (status == STATUS_SUCCESS) {
        mr_request_succeeded(c, function, q->object, q->length);
        if (lam && (c->flags & NDKT_CAPTURE_DIGESTS))
            lam_learn(c, q->lam, pages, q->mdl, q->length);
    } else {
        mr_request_failed(c, function, q->object);
    }
    if (callback_begin(c, &k, NDKT_CB_REQUEST_COMPLETION, 16 + (lam ? 16u + pages * 8u : 0u))) {
        if (early) k.r.head[2] |= NDKT_FLAG_CALL_PENDING;
        struct cap_out o = {k.r.body};
        put64(&o, q->id);
        put32(&o, (uint32_t)status);
        put32(&o, lam ? 1u : 0u);
        if (lam) put_lamout(&o, q->lam, q->lam_size, q->fbo, pages, 0);
        call_publish(&k);
    }
    request_called_back(q);
    if (fn.request) fn.request(consumer_ctx, status);
    callback_end(&k);
}

static VOID cap_create_completion(PVOID ctx, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    NDKCAP* c = 0;
    struct cap_call k;
    struct cap_request* q = request_from_context(ctx, &c);
    if (!q) {
        c = stray_capture(ctx);
        if (!c) return;
        record_stray(c, &k, NDKT_CB_CREATE_COMPLETION, status, ctx);
        if (c->last_create_fn.create) c->last_create_fn.create(ctx, status, object);
        callback_end(&k);
        return;
    }
    union cap_completion fn = q->consumer_fn;
    PVOID consumer_ctx = q->consumer_ctx;
    int early = !ld32(&q->returned);
    struct cap_object* made = q->object;
    if (made && ld32(&made->state) == OBJ_CREATING) {
        if (status == STATUS_SUCCESS && object)
            object_attach(c, made, object);
        else if (status != STATUS_SUCCESS)
            object_closed(c, made);
    }
    if (callback_begin(c, &k, NDKT_CB_CREATE_COMPLETION, 40)) {
        if (early) k.r.head[2] |= NDKT_FLAG_CALL_PENDING;
        struct cap_out o = {k.r.body};
        put64(&o, q->id);
        put32(&o, (uint32_t)status);
        put32(&o, 0);
        put_obj(&o, status == STATUS_SUCCESS ? object : 0,
                made ? made->null_member : NDKT_NO_MEMBER, made && !made->original ? 1 : 0);
        call_publish(&k);
    }
    request_called_back(q);
    if (fn.create) fn.create(consumer_ctx, status, object);
    callback_end(&k);
}

static VOID cap_close_completion(PVOID ctx) {
    NDKCAP* c = 0;
    struct cap_call k;
    struct cap_request* q = request_from_context(ctx, &c);
    if (!q) {
        c = stray_capture(ctx);
        if (!c) return;
        record_stray(c, &k, NDKT_CB_CLOSE_COMPLETION, STATUS_SUCCESS, ctx);
        if (c->last_close_fn.close) c->last_close_fn.close(ctx);
        callback_end(&k);
        return;
    }
    union cap_completion fn = q->consumer_fn;
    PVOID consumer_ctx = q->consumer_ctx;
    int early = !ld32(&q->returned);
    if (callback_begin(c, &k, NDKT_CB_CLOSE_COMPLETION, 8)) {
        if (early) k.r.head[2] |= NDKT_FLAG_CALL_PENDING;
        struct cap_out o = {k.r.body};
        put64(&o, q->id);
        call_publish(&k);
    }
    /* Closed before the consumer hears of it: a late call on the object still finds its table
     * (the entry is reused last), and nothing waits for it. */
    if (q->object && ld32(&q->object->state) == OBJ_OPEN) object_closed(c, q->object);
    request_called_back(q);
    if (fn.close) fn.close(consumer_ctx);
    callback_end(&k);
}

/* Event callbacks: CQ and SRQ notifications, connect events, disconnects. */
static VOID cap_cq_notification(PVOID ctx, NTSTATUS status) {
    NDKCAP* c = 0;
    struct cap_call k;
    struct cap_object* o = object_from_context(ctx, &c);
    if (!o) {
        if ((c = stray_capture(ctx)) != 0) {
            record_stray(c, &k, NDKT_CB_CQ_NOTIFICATION, status, ctx);
            callback_end(&k);
        }
        return;
    }
    if (callback_begin(c, &k, NDKT_CB_CQ_NOTIFICATION, 16)) {
        struct cap_out out = {k.r.body};
        putptr(&out, o->handle);
        put32(&out, (uint32_t)status);
        put32(&out, 0);
        call_publish(&k);
    }
    if (o->event_fn.cq) o->event_fn.cq(o->event_ctx, status);
    callback_end(&k);
}

static VOID cap_srq_notification(PVOID ctx, NTSTATUS status) {
    NDKCAP* c = 0;
    struct cap_call k;
    struct cap_object* o = object_from_context(ctx, &c);
    if (!o) {
        if ((c = stray_capture(ctx)) != 0) {
            record_stray(c, &k, NDKT_CB_SRQ_NOTIFICATION, status, ctx);
            callback_end(&k);
        }
        return;
    }
    if (callback_begin(c, &k, NDKT_CB_SRQ_NOTIFICATION, 16)) {
        struct cap_out out = {k.r.body};
        putptr(&out, o->handle);
        put32(&out, (uint32_t)status);
        put32(&out, 0);
        call_publish(&k);
    }
    if (o->event_fn.srq) o->event_fn.srq(o->event_ctx, status);
    callback_end(&k);
}

static VOID cap_connect_event(PVOID ctx, NDK_CONNECTOR* connector) {
    NDKCAP* c = 0;
    struct cap_call k;
    struct cap_object* listener = object_from_context(ctx, &c);
    if (!listener) {
        if ((c = stray_capture(ctx)) != 0) {
            record_stray(c, &k, NDKT_CB_CONNECT_EVENT, STATUS_SUCCESS, ctx);
            callback_end(&k);
        }
        return;
    }
    /* The passive connector is handed out here: interpose before the consumer sees it. */
    struct cap_object* made = connector ? object_new(c, NdkObjectTypeConnector) : 0;
    if (made) object_attach(c, made, connector);
    if (callback_begin(c, &k, NDKT_CB_CONNECT_EVENT, 32)) {
        struct cap_out out = {k.r.body};
        putptr(&out, listener->handle);
        put_obj(&out, connector, made ? made->null_member : NDKT_NO_MEMBER,
                made && !made->original ? 1 : 0);
        call_publish(&k);
    }
    if (listener->event_fn.connect) listener->event_fn.connect(listener->event_ctx, connector);
    callback_end(&k);
}

static VOID cap_disconnect_event(PVOID ctx) {
    NDKCAP* c = 0;
    struct cap_call k;
    struct cap_object* o = object_from_context(ctx, &c);
    if (!o) {
        if ((c = stray_capture(ctx)) != 0) {
            record_stray(c, &k, NDKT_CB_DISCONNECT_EVENT, STATUS_SUCCESS, ctx);
            callback_end(&k);
        }
        return;
    }
    if (callback_begin(c, &k, NDKT_CB_DISCONNECT_EVENT, 8)) {
        struct cap_out out = {k.r.body};
        putptr(&out, o->handle);
        call_publish(&k);
    }
    if (o->event_fn.disconnect) o->event_fn.disconnect(o->event_ctx);
    callback_end(&k);
}

static VOID cap_disconnect_event_ex(PVOID ctx, ULONG reason) {
    NDKCAP* c = 0;
    struct cap_call k;
    struct cap_object* o = object_from_context(ctx, &c);
    if (!o) {
        if ((c = stray_capture(ctx)) != 0) {
            record_stray(c, &k, NDKT_CB_DISCONNECT_EVENT_EX, STATUS_SUCCESS, ctx);
            callback_end(&k);
        }
        return;
    }
    if (callback_begin(c, &k, NDKT_CB_DISCONNECT_EVENT_EX, 16)) {
        struct cap_out out = {k.r.body};
        putptr(&out, o->handle);
        put32(&out, reason);
        put32(&out, 0);
        call_publish(&k);
    }
    if (o->event_fn.disconnect_ex) o->event_fn.disconnect_ex(o->event_ctx, reason);
    callback_end(&k);
}

/* ================================ Tables of entries ================================ */

/* Copies the capture's entry where the provider's table has one (a NULL member stays NULL, so
 * the consumer sees what it would have seen: GEN-MAND-01). */
#define PICK(tbl, member, entry)                                                     \
    do {                                                                             \
        o->table.tbl.member = theirs->member ? entry : 0;                            \
        if (!theirs->member && o->null_member == NDKT_NO_MEMBER) o->null_member = i; \
        ++i;                                                                         \
    } while (0)

static NTSTATUS cap_close_pd(NDK_OBJECT_HEADER* h, NDK_FN_CLOSE_COMPLETION* f, PVOID x) {
    return cap_close(h, f, x);
}

static void fill_table(struct cap_object* o) {
    uint16_t i = 0;
    switch (o->type) {
        case NdkObjectTypeAdapter: {
            const NDK_ADAPTER_DISPATCH* theirs = (const NDK_ADAPTER_DISPATCH*)o->original;
            PICK(adapter, NdkQueryExtension, cap_query_extension);
            PICK(adapter, NdkQueryAdapterInfo, cap_query_adapter_info);
            PICK(adapter, NdkCreateCq, cap_create_cq);
            PICK(adapter, NdkCreatePd, cap_create_pd);
            PICK(adapter, NdkCreateSharedEndpoint, cap_create_shared_endpoint);
            PICK(adapter, NdkCreateConnector, cap_create_connector);
            PICK(adapter, NdkCreateListener, cap_create_listener);
            PICK(adapter, NdkBuildLAM, cap_build_lam);
            PICK(adapter, NdkReleaseLAM, cap_release_lam);
            break;
        }
        case NdkObjectTypePd: {
            const NDK_PD_DISPATCH* theirs = (const NDK_PD_DISPATCH*)o->original;
            PICK(pd, NdkClosePd, cap_close_pd);
            PICK(pd, NdkQueryExtension, cap_query_extension);
            PICK(pd, NdkCreateMr, cap_create_mr);
            PICK(pd, NdkCreateMw, cap_create_mw);
            PICK(pd, NdkCreateSrq, cap_create_srq);
            PICK(pd, NdkCreateQp, cap_create_qp);
            PICK(pd, NdkCreateQpWithSrq, cap_create_qp_with_srq);
            PICK(pd, NdkGetPrivilegedMemoryRegionToken, cap_get_privileged_token);
            break;
        }
        case NdkObjectTypeCq: {
            const NDK_CQ_DISPATCH* theirs = (const NDK_CQ_DISPATCH*)o->original;
            PICK(cq, NdkCloseCq, cap_close);
            PICK(cq, NdkQueryExtension, cap_query_extension);
            PICK(cq, NdkResizeCq, cap_resize_cq);
            PICK(cq, NdkArmCq, cap_arm_cq);
            PICK(cq, NdkGetCqResults, cap_get_cq_results);
            PICK(cq, NdkControlCqInterruptModeration, cap_control_cq_interrupt_moderation);
            PICK(cq, NdkGetCqResultsEx, cap_get_cq_results_ex);
            break;
        }
        case NdkObjectTypeMr: {
            const NDK_MR_DISPATCH* theirs = (const NDK_MR_DISPATCH*)o->original;
            PICK(mr, NdkCloseMr, cap_close);
            PICK(mr, NdkQueryExtension, cap_query_extension);
            PICK(mr, NdkRegisterMr, cap_register_mr);
            PICK(mr, NdkDeregisterMr, cap_deregister_mr);
            PICK(mr, NdkInitializeFastRegisterMr, cap_initialize_fast_register_mr);
            PICK(mr, NdkGetRemoteTokenFromMr, cap_get_remote_token_from_mr);
            PICK(mr, NdkGetLocalTokenFromMr, cap_get_local_token_from_mr);
            break;
        }
        case NdkObjectTypeMw: {
            const NDK_MW_DISPATCH* theirs = (const NDK_MW_DISPATCH*)o->original;
            PICK(mw, NdkCloseMw, cap_close);
            PICK(mw, NdkQueryExtension, cap_query_extension);
            PICK(mw, NdkGetRemoteTokenFromMw, cap_get_remote_token_from_mw);
            break;
        }
        case NdkObjectTypeQp: {
            const NDK_QP_DISPATCH* theirs = (const NDK_QP_DISPATCH*)o->original;
            PICK(qp, NdkCloseQp, cap_close);
            PICK(qp, NdkQueryExtension, cap_query_extension);
            PICK(qp, NdkFlush, cap_flush);
            PICK(qp, NdkSend, cap_send);
            PICK(qp, NdkReceive, cap_receive);
            PICK(qp, NdkBind, cap_bind);
            PICK(qp, NdkFastRegister, cap_fast_register);
            PICK(qp, NdkInvalidate, cap_invalidate);
            PICK(qp, NdkRead, cap_read);
            PICK(qp, NdkWrite, cap_write);
            PICK(qp, NdkSendAndInvalidate, cap_send_and_invalidate);
            break;
        }
        case NdkObjectTypeSrq: {
            const NDK_SRQ_DISPATCH* theirs = (const NDK_SRQ_DISPATCH*)o->original;
            PICK(srq, NdkCloseSrq, cap_close);
            PICK(srq, NdkQueryExtension, cap_query_extension);
            PICK(srq, NdkModifySrq, cap_modify_srq);
            PICK(srq, NdkSrqReceive, cap_srq_receive);
            break;
        }
        case NdkObjectTypeConnector: {
            const NDK_CONNECTOR_DISPATCH* theirs = (const NDK_CONNECTOR_DISPATCH*)o->original;
            PICK(connector, NdkCloseConnector, cap_close);
            PICK(connector, NdkQueryExtension, cap_query_extension);
            PICK(connector, NdkConnect, cap_connect);
            PICK(connector, NdkConnectWithSharedEndpoint, cap_connect_with_shared_endpoint);
            PICK(connector, NdkCompleteConnect, cap_complete_connect);
            PICK(connector, NdkAccept, cap_accept);
            PICK(connector, NdkReject, cap_reject);
            PICK(connector, NdkGetConnectionData, cap_get_connection_data);
            PICK(connector, NdkGetLocalAddress, cap_connector_local_address);
            PICK(connector, NdkGetPeerAddress, cap_peer_address);
            PICK(connector, NdkDisconnect, cap_disconnect);
            PICK(connector, NdkCompleteConnectEx, cap_complete_connect_ex);
            PICK(connector, NdkAcceptEx, cap_accept_ex);
            break;
        }
        case NdkObjectTypeListener: {
            const NDK_LISTENER_DISPATCH* theirs = (const NDK_LISTENER_DISPATCH*)o->original;
            PICK(listener, NdkCloseListener, cap_close);
            PICK(listener, NdkQueryExtension, cap_query_extension);
            PICK(listener, NdkListen, cap_listen);
            PICK(listener, NdkGetLocalAddress, cap_listener_local_address);
            PICK(listener, NdkControlConnectEvents, cap_control_connect_events);
            break;
        }
        case NdkObjectTypeSharedEndpoint: {
            const NDK_SHARED_ENDPOINT_DISPATCH* theirs =
                (const NDK_SHARED_ENDPOINT_DISPATCH*)o->original;
            PICK(shared_endpoint, NdkCloseSharedEndpoint, cap_close);
            PICK(shared_endpoint, NdkQueryExtension, cap_query_extension);
            PICK(shared_endpoint, NdkGetLocalAddress, cap_endpoint_local_address);
            break;
        }
        default:
            break;
    }
}
#undef PICK

/* Interposes on a handed-out object: notes what the consumer would see (NULL members) and
 * points its Dispatch at the entry's copy. The entry's type is what the object was created as
 * (an object of another Header.ObjectType is still interposed as that). */
static void object_attach(NDKCAP* c, struct cap_object* o, void* handle) {
    NDK_PD* any = (NDK_PD*)handle; /* every object: header, then Dispatch (GEN-LAYOUT-01) */
    o->handle = handle;
    o->original = any->Dispatch;
    if (o->original) {
        fill_table(o);
        if (o->type < NdkObjectTypeMax) c->fallback[o->type] = o->original;
    }
    if (!object_hash_insert(c, o)) add64(&c->untracked, 1);
    st32(&o->state, OBJ_OPEN);
    if (o->type == NdkObjectTypeQp)
        or64(&c->open_qps[o->index / 64], (uint64_t)1 << (o->index % 64));
    if (o->original) any->Dispatch = &o->table.pd;
}

/* ================================ The host's calls ================================ */

NTSTATUS NdkCaptureAttach(NDKCAP* c, NDK_ADAPTER* adapter) {
    if (!c || !adapter || !adapter->Dispatch || c->adapter) return STATUS_INVALID_PARAMETER;
    struct cap_object* o = object_new(c, NdkObjectTypeAdapter);
    if (!o) return STATUS_INSUFFICIENT_RESOURCES;
    NDK_ADAPTER_INFO info;
    cap_fill(&info, 0, sizeof info);
    ULONG size = sizeof info;
    NTSTATUS status = adapter->Dispatch->NdkQueryAdapterInfo
                          ? adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size)
                          : STATUS_NOT_IMPLEMENTED;
    struct cap_out out = {c->header + c->header_bytes};
    uint16_t version[2] = {adapter->Header.Version.Major, adapter->Header.Version.Minor};
    if (status == STATUS_SUCCESS) {
        version[0] = info.Version.Major;
        version[1] = info.Version.Minor;
        tlv(&out, NDKT_TAG_ADAPTER_INFO, &info, CAP_MIN(size, (ULONG)sizeof info));
    }
    tlv(&out, NDKT_TAG_NDK_VERSION, version, 4);
    uint64_t handle = (uint64_t)(ULONG_PTR)adapter;
    tlv(&out, NDKT_TAG_ADAPTER, &handle, 8);
    uint32_t total = (uint32_t)(out.p - c->header) + 8;
    cap_copy(c->header + 12, &total, 4);
    uint32_t crc = crc32_update(c->crc_table, c->crc_instruction, 0, c->header, total - 8);
    put32(&out, crc);
    put32(&out, 0);
    c->header_bytes = total;
    if (c->host.Write(c->host.Context, c->header, total) != 0) {
        add64(&c->write_errors, 1);
        st32(&o->state, OBJ_FREE);
        return CAP_STATUS_UNSUCCESSFUL;
    }
    add64(&c->bytes_written, total);
    st32((volatile uint32_t*)&c->header_written, 1); /* a drain already running may go on */
    c->adapter = adapter;
    c->adapter_entry = o;
    object_attach(c, o, adapter);
    return STATUS_SUCCESS;
}

static void meta_record(NDKCAP* c, uint16_t kind, const void* body, uint32_t bytes) {
    struct cap_record r;
    r.time = now(c);
    if (!record_reserve(c, &r, (uint32_t)CAP_ALIGN8(bytes))) return;
    r.seq = record_count(&r);
    struct cap_frame f;
    f.thread_id = c->host.CurrentThread(c->host.Context);
    f.irql = c->host.CurrentIrql ? c->host.CurrentIrql(c->host.Context) : NDKT_IRQL_UNKNOWN;
    f.flags = 0;
    f.parent = 0;
    f.thread = 0;
    record_header(&r, kind, &f);
    struct cap_out o = {r.body};
    putbytes(&o, body, bytes);
    ring_commit(r.ring, r.seq, RING_COMPLETE);
}

static void adapter_close_record(NDKCAP* c, uint32_t phase) {
    uint8_t body[16];
    struct cap_out o = {body};
    putptr(&o, c->adapter);
    put32(&o, phase);
    put32(&o, 0);
    meta_record(c, NDKT_META_ADAPTER_CLOSE, body, 16);
}

VOID NdkCaptureAdapterClosing(NDKCAP* c) {
    if (c && c->adapter) adapter_close_record(c, 0);
}

VOID NdkCaptureAdapterClosed(NDKCAP* c) {
    if (c && c->adapter) adapter_close_record(c, 1);
}

VOID NdkCaptureMark(NDKCAP* c, const char* text) {
    if (!c || !c->header_written) return;
    uint8_t body[8 + 1024];
    uint32_t n = text_length(text, 1024);
    struct cap_out o = {body};
    putblob(&o, text, n, 1);
    meta_record(c, NDKT_META_MARK, body, (uint32_t)(o.p - body));
}

VOID NdkCaptureDrained(NDKCAP* c, const VOID* qp) {
    if (!c || !c->header_written) return;
    uint8_t body[8];
    struct cap_out o = {body};
    putptr(&o, qp);
    meta_record(c, NDKT_META_DRAINED, body, 8);
}

VOID NdkCaptureOverdue(NDKCAP* c, const VOID* cq, ULONG expected, ULONG arrived, ULONG waited_ms) {
    if (!c || !c->header_written) return;
    uint8_t body[24];
    struct cap_out o = {body};
    putptr(&o, cq);
    put32(&o, expected);
    put32(&o, arrived);
    put32(&o, waited_ms);
    put32(&o, 0);
    meta_record(c, NDKT_META_OVERDUE, body, 24);
}

VOID NdkCaptureUnnotified(NDKCAP* c, const VOID* cq, ULONG waited_ms) {
    if (!c || !c->header_written) return;
    uint8_t body[16];
    struct cap_out o = {body};
    putptr(&o, cq);
    put32(&o, waited_ms);
    put32(&o, 0);
    meta_record(c, NDKT_META_UNNOTIFIED, body, 16);
}

NTSTATUS NdkCaptureClose(NDKCAP* c) {
    if (!c) return STATUS_INVALID_PARAMETER;
    NTSTATUS status = STATUS_SUCCESS;
    if (c->header_written) {
        /* Seal what is being filled so the drain reaches its end. */
        uint64_t s = ld64(&c->current);
        volatile uint64_t* res = &c->reserved[s & c->block_mask];
        for (;;) {
            uint64_t r = ld64(res);
            if (RES_GEN(r) != (uint32_t)s || (r & RES_SEALED) || cas64(res, r, r | RES_SEALED))
                break;
        }
        if (drain(c, 1) < 0) status = CAP_STATUS_UNSUCCESSFUL;
        /* END (and a last LOSS) go straight into the last frame. */
        uint8_t end[NDKT_RECORD_HEADER_BYTES + 32];
        uint64_t lost = ld64(&c->pending_lost_records);
        if (lost) {
            uint8_t loss[NDKT_RECORD_HEADER_BYTES + 16];
            cap_fill(loss, 0, sizeof loss);
            struct cap_out o = {loss};
            put16(&o, NDKT_META_LOSS);
            put16(&o, 0);
            put32(&o, sizeof loss);
            o.p = loss + NDKT_RECORD_HEADER_BYTES;
            put64(&o, lost);
            put64(&o, ld64(&c->pending_lost_bytes));
            stage(c, loss, sizeof loss, 0, 0);
        }
        cap_fill(end, 0, sizeof end);
        struct cap_out o = {end};
        put16(&o, NDKT_META_END);
        put16(&o, 0);
        put32(&o, sizeof end);
        o.p = end + 16;
        put64(&o, CAP_COUNT(ring_free_position(c))); /* after every record */
        put64(&o, now(c));
        o.p = end + NDKT_RECORD_HEADER_BYTES;
        put64(&o, ld64(&c->records));
        put64(&o, ld64(&c->lost_records));
        put64(&o, ld64(&c->lost_bytes));
        put64(&o, ld64(&c->untracked));
        if (!c->staging_used) c->staging_used = NDKT_FRAME_HEADER_BYTES;
        if (stage(c, end, sizeof end, 0, 0) < 0 || flush_staging(c) < 0)
            status = CAP_STATUS_UNSUCCESSFUL;
    }
    cas64((volatile uint64_t*)&g_captures[c->registry_index], (uint64_t)(ULONG_PTR)c, 0);
    NDKCAP_HOST host = c->host;
    host.Free(host.Context, c->memory, c->memory_bytes);
    return status;
}
