/*
 * ndkcap_wdm.h: the capture library hosted in a Windows kernel driver, ready to use.
 *
 * The capture library (ndkct/capture.h) asks its host for memory, a file, a clock, the current
 * thread and IRQL, and a way to read a physical page. This is that host for a WDM driver: pool
 * memory, a trace file written with ZwWriteFile, KeQueryPerformanceCounter, PsGetCurrentThreadId,
 * KeGetCurrentIrql, MmGetVirtualForPhysical, and a system thread that drains the ring. Compile
 * ndkcap_wdm.c and ../src/capture.c into the driver whose NDK adapter is to be captured, and
 * call the three functions below from its OpenNDKAdapterHandler and CloseNDKAdapterHandler
 * (capture/README.md, "In a Windows kernel driver"): every consumer of that adapter, SMB Direct
 * included, is then recorded.
 *
 * Include wdm.h, ntddk.h or ndis.h first (the platform's base types); the NDK types may come
 * from the WDK's ndkpi.h or from none: this header names the adapter as struct _NDK_ADAPTER.
 */
#ifndef NDKCAP_WDM_H
#define NDKCAP_WDM_H

#if !defined(_WDMDDK_) && !defined(_NTDDK_)
#error "include wdm.h, ntddk.h or ndis.h before ndkcap_wdm.h"
#endif

#include "ndkct/capture.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct _NDKCAP_WDM NDKCAP_WDM;

/*
 * PASSIVE_LEVEL: in OpenNDKAdapterHandler, once the provider has made the adapter and before it
 * is handed to NDIS. Creates (or replaces) the trace file TracePath (an NT path, such as
 * L"\\SystemRoot\\Temp\\vendor.ndktrace" or L"\\??\\C:\\traces\\vendor.ndktrace"), opens the
 * capture with Options (NULL: the defaults; TicksPerSecond, AfInet/AfInet6, Platform and a ring
 * of 64 blocks (16 MiB) are filled in where left 0), attaches it to the adapter and starts the
 * thread that drains it every millisecond or so. On failure nothing is attached, *Capture is
 * NULL, and the adapter works as before: the three calls below accept NULL. Options whose Size
 * is 0 are refused (STATUS_INVALID_PARAMETER) rather than taken for none.
 */
NTSTATUS NdkCapWdmStart(struct _NDK_ADAPTER* Adapter, const WCHAR* TracePath,
                        const NDKCAP_OPTIONS* Options, NDKCAP_WDM** Capture);

/* PASSIVE_LEVEL: in CloseNDKAdapterHandler, before the provider closes the adapter. */
VOID NdkCapWdmAdapterClosing(NDKCAP_WDM* Capture);

/*
 * PASSIVE_LEVEL: in CloseNDKAdapterHandler, after the provider closed the adapter. Stops the
 * drain thread, writes the rest of the trace (calls that never returned, the END record),
 * closes the file and frees everything. STATUS_SUCCESS when the whole trace was written; the
 * status of the failing write otherwise (the trace is then cut short, and says where).
 */
NTSTATUS NdkCapWdmAdapterClosed(NDKCAP_WDM* Capture);

/* Any IRQL: what the capture has kept, lost and written so far. */
VOID NdkCapWdmGetStats(const NDKCAP_WDM* Capture, NDKCAP_STATS* Stats);

#ifdef __cplusplus
}
#endif

#endif /* NDKCAP_WDM_H */
