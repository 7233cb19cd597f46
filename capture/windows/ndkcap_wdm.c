/*
 * The capture library's host in a Windows kernel driver (ndkcap_wdm.h). Built against the WDK's
 * headers, or mingw-w64's (capture.wdm_driver links it into a test driver in CI).
 *
 * What runs where: the callbacks the capture calls on the NDK call path (Timestamp,
 * CurrentThread, CurrentIrql, MapPage) run at the caller's IRQL, up to DISPATCH_LEVEL, and only
 * read state; Allocate, Free and Write run at PASSIVE_LEVEL (NdkCapWdmStart, the drain thread,
 * NdkCapWdmAdapterClosed).
 */
#include <ntifs.h> /* ntddk.h, and ZwWaitForSingleObject */

#include "ndkcap_wdm.h"

/* Pool tag "NKcp" as it reads in a pool dump (little-endian). */
#define NDKCAP_WDM_TAG ((ULONG)'N' | (ULONG)'K' << 8 | (ULONG)'c' << 16 | (ULONG)'p' << 24)

/* The drain's period, in 100 ns units (relative: negative). Windows rounds a wait up to its
 * timer resolution (15.6 ms unless something raised it): the default ring of 64 blocks holds
 * about 100,000 calls, enough for that. */
#define NDKCAP_WDM_DRAIN_PERIOD (-10000LL)
#define NDKCAP_WDM_RING_BLOCKS 64u
/* ZwWriteFile takes a ULONG length: a Write of more goes in pieces of this. */
#define NDKCAP_WDM_WRITE_PIECE 0x10000000u

struct _NDKCAP_WDM {
    NDKCAP* capture;
    HANDLE file;
    HANDLE drain_thread; /* a kernel handle: waited for at the end */
    KEVENT stop;
    NTSTATUS write_status; /* the first failed write's, else STATUS_SUCCESS */
};

/* Zeroed nonpaged memory. ExAllocatePool2 where the WDK has it (Windows 10 2004 and later: it
 * zeroes, and the WDK marks ExAllocatePoolWithTag deprecated, an error under /WX); else
 * ExAllocatePoolWithTag, zeroed here. */
static PVOID wdm_allocate(PVOID context, SIZE_T bytes) {
    (void)context;
#ifdef POOL_FLAG_NON_PAGED
    return ExAllocatePool2(POOL_FLAG_NON_PAGED, bytes, NDKCAP_WDM_TAG);
#else
    PVOID memory = ExAllocatePoolWithTag(NonPagedPoolNx, bytes, NDKCAP_WDM_TAG);
    if (memory) RtlZeroMemory(memory, bytes);
    return memory;
#endif
}

static VOID wdm_free(PVOID context, PVOID memory, SIZE_T bytes) {
    (void)context;
    (void)bytes;
    ExFreePoolWithTag(memory, NDKCAP_WDM_TAG);
}

/* Appends to the trace file (synchronous I/O: the file position moves on by itself). */
static LONG wdm_write(PVOID context, const VOID* bytes, SIZE_T length) {
    NDKCAP_WDM* w = (NDKCAP_WDM*)context;
    const UCHAR* at = (const UCHAR*)bytes;
    while (length) {
        ULONG piece = length > NDKCAP_WDM_WRITE_PIECE ? NDKCAP_WDM_WRITE_PIECE : (ULONG)length;
        IO_STATUS_BLOCK io;
        NTSTATUS status = ZwWriteFile(w->file, NULL, NULL, NULL, &io, (PVOID)at, piece, NULL, NULL);
        if (NT_SUCCESS(status) && io.Information != piece) status = STATUS_DISK_FULL;
        if (!NT_SUCCESS(status)) {
            if (NT_SUCCESS(w->write_status)) w->write_status = status;
            return -1;
        }
        at += piece;
        length -= piece;
    }
    return 0;
}

static ULONG64 wdm_timestamp(PVOID context) {
    (void)context;
    return (ULONG64)KeQueryPerformanceCounter(NULL).QuadPart;
}

/* Thread IDs are non-zero and stable while the thread lives (the capture hashes them). */
static ULONG wdm_current_thread(PVOID context) {
    (void)context;
    return (ULONG)(ULONG_PTR)PsGetCurrentThreadId();
}

static UCHAR wdm_current_irql(PVOID context) {
    (void)context;
    return (UCHAR)KeGetCurrentIrql();
}

/* A page the system address space maps (nonpaged pool, locked and mapped MDLs: what NDK
 * buffers are), checked both ways so that a PFN with no mapping, or with a stale one, reads as
 * NULL (its DATA block is then "unresolved") rather than as someone else's memory. */
static const VOID* wdm_map_page(PVOID context, PFN_NUMBER pfn) {
    (void)context;
    PHYSICAL_ADDRESS physical;
    physical.QuadPart = (LONGLONG)pfn << PAGE_SHIFT;
    PVOID va = MmGetVirtualForPhysical(physical);
    if (!va || !MmIsAddressValid(va)) return NULL;
    if (MmGetPhysicalAddress(va).QuadPart != physical.QuadPart) return NULL;
    return va;
}

static VOID wdm_drain_main(PVOID context) {
    NDKCAP_WDM* w = (NDKCAP_WDM*)context;
    LARGE_INTEGER period;
    period.QuadPart = NDKCAP_WDM_DRAIN_PERIOD;
    for (;;) {
        NTSTATUS woke = KeWaitForSingleObject(&w->stop, Executive, KernelMode, FALSE, &period);
        NdkCaptureDrain(w->capture);       /* a failed write is kept in write_status */
        if (woke == STATUS_SUCCESS) break; /* stop: NdkCapWdmAdapterClosed drains the rest */
    }
    PsTerminateSystemThread(STATUS_SUCCESS);
}

static VOID wdm_stop_drain(NDKCAP_WDM* w) {
    KeSetEvent(&w->stop, IO_NO_INCREMENT, FALSE);
    ZwWaitForSingleObject(w->drain_thread, FALSE, NULL);
    ZwClose(w->drain_thread);
    w->drain_thread = NULL;
}

static VOID wdm_release(NDKCAP_WDM* w) {
    if (w->file) ZwClose(w->file);
    wdm_free(NULL, w, sizeof *w);
}

NTSTATUS NdkCapWdmStart(struct _NDK_ADAPTER* adapter, const WCHAR* trace_path,
                        const NDKCAP_OPTIONS* options, NDKCAP_WDM** out) {
    if (!out) return STATUS_INVALID_PARAMETER;
    *out = NULL;
    /* Options without their Size would be taken for none: said, not silently ignored. */
    if (!adapter || !trace_path || (options && !options->Size)) return STATUS_INVALID_PARAMETER;
    if (KeGetCurrentIrql() != PASSIVE_LEVEL) return STATUS_INVALID_DEVICE_STATE;
    NDKCAP_WDM* w = (NDKCAP_WDM*)wdm_allocate(NULL, sizeof *w);
    if (!w) return STATUS_INSUFFICIENT_RESOURCES;
    w->write_status = STATUS_SUCCESS;
    KeInitializeEvent(&w->stop, NotificationEvent, FALSE);

    UNICODE_STRING name;
    RtlInitUnicodeString(&name, trace_path);
    OBJECT_ATTRIBUTES attributes;
    /* A kernel handle: the drain thread and the close run in other processes' contexts. */
    InitializeObjectAttributes(&attributes, &name, OBJ_KERNEL_HANDLE | OBJ_CASE_INSENSITIVE, NULL,
                               NULL);
    IO_STATUS_BLOCK io;
    NTSTATUS status = ZwCreateFile(&w->file, GENERIC_WRITE | SYNCHRONIZE, &attributes, &io, NULL,
                                   FILE_ATTRIBUTE_NORMAL, FILE_SHARE_READ, FILE_OVERWRITE_IF,
                                   FILE_SYNCHRONOUS_IO_NONALERT | FILE_NON_DIRECTORY_FILE, NULL, 0);
    if (!NT_SUCCESS(status)) {
        w->file = NULL;
        wdm_release(w);
        return status;
    }

    NDKCAP_HOST host;
    RtlZeroMemory(&host, sizeof host);
    host.Size = sizeof host;
    host.Context = w;
    host.Allocate = wdm_allocate;
    host.Free = wdm_free;
    host.Write = wdm_write;
    host.Timestamp = wdm_timestamp;
    host.CurrentThread = wdm_current_thread;
    host.CurrentIrql = wdm_current_irql;
    host.MapPage = wdm_map_page;

    NDKCAP_OPTIONS o;
    RtlZeroMemory(&o, sizeof o);
    if (options) RtlCopyMemory(&o, options, options->Size < sizeof o ? options->Size : sizeof o);
    o.Size = sizeof o;
    if (!o.TicksPerSecond) {
        LARGE_INTEGER frequency;
        KeQueryPerformanceCounter(&frequency);
        o.TicksPerSecond = (ULONG64)frequency.QuadPart;
    }
    if (!o.AfInet) o.AfInet = 2;    /* AF_INET on Windows */
    if (!o.AfInet6) o.AfInet6 = 23; /* AF_INET6 on Windows */
    if (!o.RingBlocks) o.RingBlocks = NDKCAP_WDM_RING_BLOCKS;
    if (!o.Platform) o.Platform = "windows-kernel";

    status = NdkCaptureOpen(&host, &o, &w->capture);
    if (!NT_SUCCESS(status)) {
        wdm_release(w);
        return status;
    }
    /* The drain thread first (draining before the header is written does nothing): once
     * attached, the adapter's tables are the capture's until the adapter closes, so nothing
     * after the attach may fail. A kernel handle, waited for from any process's context. */
    OBJECT_ATTRIBUTES thread_attributes;
    InitializeObjectAttributes(&thread_attributes, NULL, OBJ_KERNEL_HANDLE, NULL, NULL);
    status = PsCreateSystemThread(&w->drain_thread, THREAD_ALL_ACCESS, &thread_attributes, NULL,
                                  NULL, wdm_drain_main, w);
    if (!NT_SUCCESS(status)) {
        w->drain_thread = NULL;
        NdkCaptureClose(w->capture);
        wdm_release(w);
        return status;
    }
    /* Attach writes the trace header (on this thread, at PASSIVE_LEVEL). */
    status = NdkCaptureAttach(w->capture, adapter);
    if (!NT_SUCCESS(status)) {
        wdm_stop_drain(w);
        NdkCaptureClose(w->capture);
        wdm_release(w);
        return status;
    }
    *out = w;
    return STATUS_SUCCESS;
}

VOID NdkCapWdmAdapterClosing(NDKCAP_WDM* w) {
    if (w) NdkCaptureAdapterClosing(w->capture);
}

NTSTATUS NdkCapWdmAdapterClosed(NDKCAP_WDM* w) {
    if (!w) return STATUS_SUCCESS;
    NdkCaptureAdapterClosed(w->capture);
    wdm_stop_drain(w);
    NTSTATUS status = NdkCaptureClose(w->capture);              /* the rest, then END */
    if (!NT_SUCCESS(w->write_status)) status = w->write_status; /* why it is cut short */
    wdm_release(w);
    return status;
}

VOID NdkCapWdmGetStats(const NDKCAP_WDM* w, NDKCAP_STATS* stats) {
    if (!stats) return;
    if (!w) {
        RtlZeroMemory(stats, sizeof *stats);
        return;
    }
    NdkCaptureGetStats(w->capture, stats);
}
