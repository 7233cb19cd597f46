/*
 * Where the capture goes in an NDK provider's miniport driver, as a driver that builds: CI links
 * it with ndkcap_wdm.c and the capture library into a .sys and checks that the image imports
 * nothing but ntoskrnl.exe (capture.wdm_driver). It opens no adapter itself.
 *
 * In a real miniport the two functions below are a few lines of its OpenNDKAdapterHandler and
 * CloseNDKAdapterHandler, and the capture lives in the NDK adapter's own context (one capture
 * per adapter); here a global holds it.
 */
#include <ntddk.h>

#include "ndkcap_wdm.h"

static NDKCAP_WDM* g_capture;

/* The end of OpenNDKAdapterHandler: the provider has made `adapter` and is about to return it. A
 * capture that cannot start leaves the adapter as it was. */
VOID SampleNdkAdapterOpened(struct _NDK_ADAPTER* adapter) {
    NDKCAP_OPTIONS options;
    RtlZeroMemory(&options, sizeof options);
    options.Size = sizeof options;
    options.ProviderName = "sample-nic"; /* what waivers and reports key on */
    options.ProviderVersion = "0.1";
    options.Profile = "default";
    NTSTATUS status =
        NdkCapWdmStart(adapter, L"\\SystemRoot\\Temp\\sample-nic.ndktrace", &options, &g_capture);
    if (!NT_SUCCESS(status))
        DbgPrint("sample-nic: no NDK capture (status 0x%08X); the adapter works without it\n",
                 (unsigned)status);
}

/* CloseNDKAdapterHandler: the provider's own close of the adapter, between the two calls. */
VOID SampleNdkAdapterClose(struct _NDK_ADAPTER* adapter,
                           VOID (*provider_close)(struct _NDK_ADAPTER* adapter)) {
    NdkCapWdmAdapterClosing(g_capture);
    provider_close(adapter);
    NDKCAP_STATS stats;
    NdkCapWdmGetStats(g_capture, &stats);
    NTSTATUS status = NdkCapWdmAdapterClosed(g_capture);
    g_capture = NULL;
    DbgPrint("sample-nic: NDK trace written (status 0x%08X): %llu records, %llu lost\n",
             (unsigned)status, (unsigned long long)stats.Records,
             (unsigned long long)stats.LostRecords);
}

static VOID SampleUnload(PDRIVER_OBJECT driver) {
    (void)driver;
}

NTSTATUS DriverEntry(PDRIVER_OBJECT driver, PUNICODE_STRING registry_path) {
    (void)registry_path;
    driver->DriverUnload = SampleUnload;
    return STATUS_SUCCESS;
}
