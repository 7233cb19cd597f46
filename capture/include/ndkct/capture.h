/*
 * ndkct/capture.h: record every NDK call and callback of one adapter into an ndkct trace.
 *
 * The capture library sits between an NDK consumer and a provider. NdkCaptureAttach() points
 * the adapter's Dispatch, and that of every object later created from it, at the capture's own
 * entries (the consumer may overwrite Dispatch once an object is handed out: GEN-CREATE-05);
 * each entry records the call and forwards it, untouched, to the provider's table. The
 * consumer's callbacks are wrapped the same way. The trace format is spec/TRACE.md.
 *
 * On the NDK call path the library never allocates, never takes a lock that can block, and
 * makes no system call: records go into a ring of blocks allocated at NdkCaptureOpen; when the
 * ring is full the records that do not fit are counted and the count is written into the trace
 * (a LOSS record) where the loss happened. The host empties the ring with NdkCaptureDrain() from
 * a context that may block (a worker thread, PASSIVE_LEVEL), which hands filled frames to its
 * Write callback.
 *
 * Depends on the NDKPI ABI header and the trace format header alone; C11, freestanding (it
 * compiles for a Windows kernel driver with -ffreestanding as well as for Linux user space).
 */
#ifndef NDKCT_CAPTURE_H
#define NDKCT_CAPTURE_H

/* In a translation unit of a Windows kernel driver (the WDK's, or mingw-w64's, wdm.h or ntddk.h
 * included first) the base types are the platform's, and NDK_ADAPTER is whichever ndkpi.h that
 * driver uses: the two declare the same x64 layout, so the library (built with ndkct's types)
 * and the driver link as they are. Elsewhere, ndkct's ABI header. */
#if defined(_WDMDDK_) || defined(_NTDDK_)
struct _NDK_ADAPTER;
#else
#include "ndkct/ndkpi.h"
#endif
#include "ndkct/trace_format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _NDKCAP NDKCAP;

/*
 * What the host supplies. Allocate, Free and Write are called only from NdkCaptureOpen,
 * NdkCaptureDrain and NdkCaptureClose; the others run on the NDK call path, at any IRQL up to
 * DISPATCH_LEVEL, and must neither block, nor allocate, nor make a system call.
 */
typedef struct _NDKCAP_HOST {
    ULONG Size; /* sizeof(NDKCAP_HOST) */
    PVOID Context;
    PVOID (*Allocate)(PVOID Context, SIZE_T Bytes); /* NULL on failure */
    VOID (*Free)(PVOID Context, PVOID Memory, SIZE_T Bytes);
    /* Appends Length bytes to the trace; returns 0 when written, anything else on failure. */
    LONG (*Write)(PVOID Context, const VOID* Bytes, SIZE_T Length);
    /* A monotonic time in ticks of NDKCAP_OPTIONS.TicksPerSecond; NULL: records carry no times.
     * ndkct's timing rules count in hundreds of milliseconds and the judge compares times with
     * the live harness's limits, so the clock must resolve well under a millisecond (a clock
     * that moves in interrupt ticks reads a callback that came just after a limit as just
     * before it): Windows KeQueryInterruptTimePrecise or KeQueryPerformanceCounter, Linux
     * CLOCK_MONOTONIC (not _COARSE). It runs twice per NDK call. */
    ULONG64 (*Timestamp)(PVOID Context);
    /* A small non-zero number naming the calling thread, stable while the thread lives. */
    ULONG (*CurrentThread)(PVOID Context);
    /* The current IRQL; NULL: unknown (records say NDKT_IRQL_UNKNOWN). */
    UCHAR (*CurrentIrql)(PVOID Context);
    /* Where physical page Pfn can be read now (PAGE_SIZE bytes), or NULL. NULL callback: the
     * trace carries no data digests, and ndkct does not judge where bytes landed. */
    const VOID* (*MapPage)(PVOID Context, PFN_NUMBER Pfn);
} NDKCAP_HOST;

/* NDKCAP_OPTIONS.Flags */
#define NDKCAP_SOURCE_BYTES                                                                      \
    0x01u                         /* source DATA blocks carry the bytes (replay restores memory) \
                                   */
#define NDKCAP_LANDED_BYTES 0x02u /* landing DATA blocks carry the bytes */
#define NDKCAP_NO_DIGESTS 0x04u   /* no DATA blocks at all (smallest, fastest trace) */
/* Time every call. By default the data-path calls (posts, NdkGetCqResults(Ex), NdkArmCq) made
 * outside callbacks take no timestamps (trace flag NDKT_CAPTURE_DATA_PATH_UNTIMED): no rule
 * judges their times, and two clock reads a call were the larger part of the capture's cost. */
#define NDKCAP_ALL_TIMES 0x08u
/* Digest every DATA block during the call. By default a block of up to NDKCAP_DEFER_BYTES is
 * copied into the ring during the call and digested by NdkCaptureDrain (the same digest of the
 * same bytes, taken at the same moment: the copy is); when 3/8 of the ring waits for the drain the
 * call digests it itself, so that deferring never costs records. */
#define NDKCAP_DIGEST_IN_CALL 0x10u
#define NDKCAP_DEFER_BYTES 4096u /* (or a 64th of BlockBytes, if less) */
/* ... and of at least this many: a smaller block's digest costs the call less than its copy, its
 * link and the drain's work (which, on a machine whose cores are all busy, the call waits for
 * too: rxe's 64-byte writes in the guest, +17 % deferred against +10 % digested in the call). */
#define NDKCAP_DEFER_MIN_BYTES 256u
/* Resolve and write every DATA block the general way: a block within one page normally takes a
 * shorter path that writes the same bytes (kept for the test that holds the two to each other,
 * and for diagnosis). */
#define NDKCAP_GENERAL_PATH 0x20u

/* Sizes (0: the default) and what goes into the trace header. Strings may be NULL. */
typedef struct _NDKCAP_OPTIONS {
    ULONG Size; /* sizeof(NDKCAP_OPTIONS) */
    ULONG Flags;
    ULONG RingBlocks;     /* default 16; rounded up to a power of two */
    ULONG BlockBytes;     /* default 256 KiB; the largest record must fit in one block, and
                           * a DATA block carries bytes up to a quarter of it */
    ULONG MaxObjects;     /* NDK objects tracked at once; default 4096 */
    ULONG MaxRequests;    /* asynchronous requests in flight; default 16384 */
    ULONG MaxLamPages;    /* logical pages of live LAMs; default 65536 */
    ULONG PfnPoolEntries; /* PFNs of registered regions; default 262144 */
    ULONG QueueEntries;   /* posted requests whose landing is tracked, all QPs; default 65536 */
    ULONG64 TicksPerSecond;
    ULONG64 PfnSpace; /* PFNs are below this; 0 unknown */
    ULONG64 Seed;     /* the provider's seed, when it has one */
    USHORT AfInet, AfInet6;
    const char* ProviderName;
    const char* ProviderVersion;
    const char* ProviderDescription;
    const char* ProviderSpec;
    const char* Profile;
    const char* ProfileJson; /* the profile's JSON, when Profile names no shipped one */
    const char* Label;
    const char* Platform;
    /* Since capture 1.3 (an older caller's smaller Size leaves it 0): a DATA block of more bytes
     * than this is not read at all; it is written with its length and flagged over the limit,
     * and ndkct leaves where those bytes landed unjudged (and says so). Bounds the capture's
     * cost per byte on large transfers (a 1 MiB write's two digests are ~130 us of the calling
     * thread's time); 0: every block is digested. */
    ULONG DigestLimit;
} NDKCAP_OPTIONS;

typedef struct _NDKCAP_STATS {
    ULONG64 Records;     /* drained: copied from the ring into frames for Write */
    ULONG64 LostRecords; /* that did not fit */
    ULONG64 LostBytes;
    ULONG64 BytesWritten; /* handed to Write, header and frames included */
    ULONG64 Untracked;    /* objects, regions or requests the tables had no room for */
    ULONG64 WriteErrors;
} NDKCAP_STATS;

/* PASSIVE_LEVEL. Allocates everything the capture will ever use. */
NTSTATUS NdkCaptureOpen(const NDKCAP_HOST* Host, const NDKCAP_OPTIONS* Options, NDKCAP** ppCapture);

/* PASSIVE_LEVEL, once, before the consumer uses the adapter: queries NDK_ADAPTER_INFO, writes
 * the trace header and interposes on the adapter's Dispatch. */
NTSTATUS NdkCaptureAttach(NDKCAP* Capture, struct _NDK_ADAPTER* Adapter);

/* The adapter closes outside the dispatch tables: the host says when it starts and when the
 * close returned (ndkct judges CLOSE-ADP-01 from these). */
VOID NdkCaptureAdapterClosing(NDKCAP* Capture);
VOID NdkCaptureAdapterClosed(NDKCAP* Capture);

/* An annotation record (UTF-8 text, at most 1024 bytes kept). */
VOID NdkCaptureMark(NDKCAP* Capture, const char* Text);

/* The consumer's word that it has drained the QP `Qp` (the NDK_QP* it holds): it flushed it and
 * polled its CQs for every request posted before the flush (FLS-01), or waited as long as it
 * will. Whatever completion is still owed there is missing (WR-10, FLS-03, DEFER-04), and the
 * judge says so at this point, as a live run's oracle does after its drain: without this word a
 * trace shows that an entry never came, not that one was owed by then. A DRAINED record
 * (trace 1.4), from any thread, at any IRQL the host callbacks allow. */
VOID NdkCaptureDrained(NDKCAP* Capture, const VOID* Qp);

/* The consumer's word that it polled the CQ `Cq` (the NDK_CQ* it holds) for `Expected`
 * completions it was owed, for `WaitedMs` milliseconds, and gives up with `Arrived` of them
 * (every one it polled is in the trace before this record). The judge finds the rest missing at
 * this point (WR-10, or the fast registration's page rule where every entry still owed there is
 * one: FR-ST-01, FR-DEFER-01/02, FR-SILENT-02), as a live run's harness does when its wait
 * runs out. Write it after the polls and only for completions really owed: a wait that probes
 * that nothing more comes is no such word. An OVERDUE record (trace 1.5), from any thread. */
VOID NdkCaptureOverdue(NDKCAP* Capture, const VOID* Cq, ULONG Expected, ULONG Arrived,
                       ULONG WaitedMs);

/* The consumer's word that it waited `WaitedMs` milliseconds for a notification of the CQ `Cq`
 * (its NdkArmCq's callback) and none came. A notification the arm owes beyond doubt by then is
 * missing (CQ-NOT-07, with the rule of what satisfied the arm: SND-04 and CQ-NOT-10 for a
 * solicited send's receive), and the judge says so at this point, as a live run's oracle does
 * after the same wait. An UNNOTIFIED record (trace 1.5), from any thread. */
VOID NdkCaptureUnnotified(NDKCAP* Capture, const VOID* Cq, ULONG WaitedMs);

/* PASSIVE_LEVEL, from one thread at a time: hands every complete record to Host->Write (in
 * frames). Returns the bytes written, or -1 when Write failed. */
LONG64 NdkCaptureDrain(NDKCAP* Capture);

/* After the adapter's close returned: writes what is left (calls that never returned as such),
 * the END record, restores nothing, frees everything. */
NTSTATUS NdkCaptureClose(NDKCAP* Capture);

VOID NdkCaptureGetStats(const NDKCAP* Capture, NDKCAP_STATS* Stats);

/* The digest of spec/TRACE.md over one buffer (a helper for hosts and tests). */
ULONG64 NdkCaptureDigest(const VOID* Bytes, SIZE_T Length);

#ifdef __cplusplus
}
#endif

#endif /* NDKCT_CAPTURE_H */
