/*
 * A Linux stand-in for the few WDK declarations capture/windows/ndkcap_wdm.c uses, so that the
 * host's own logic (file, drain thread, attach and close order, failed writes) runs here
 * against a real provider (trace.WdmHost.*). It is not the WDK: the widths are x64 Windows'
 * (ULONG 32 bits, WCHAR 16), the calls are implemented in stand_in.c with POSIX (files,
 * threads, CLOCK_MONOTONIC), and MmGetVirtualForPhysical maps an ndkct arena's PFNs.
 */
#ifndef NDKCT_WDM_STAND_IN_NTIFS_H
#define NDKCT_WDM_STAND_IN_NTIFS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define _NTDDK_ 1 /* what ndkct/capture.h looks for: the platform's base types are these */

typedef void VOID;
typedef void* PVOID;
typedef uint8_t UCHAR;
typedef uint8_t BOOLEAN;
typedef uint16_t USHORT;
typedef uint16_t WCHAR;
typedef int32_t LONG;
typedef uint32_t ULONG;
typedef int64_t LONG64;
typedef int64_t LONGLONG;
typedef uint64_t ULONG64;
typedef uintptr_t ULONG_PTR;
typedef size_t SIZE_T;
typedef ULONG_PTR PFN_NUMBER;
typedef LONG NTSTATUS;
typedef PVOID HANDLE;
typedef UCHAR KIRQL;
typedef ULONG ACCESS_MASK;

#define TRUE 1
#define FALSE 0
#define NT_SUCCESS(s) ((NTSTATUS)(s) >= 0)
#define STATUS_SUCCESS ((NTSTATUS)0x00000000)
#define STATUS_TIMEOUT ((NTSTATUS)0x00000102)
#define STATUS_UNSUCCESSFUL ((NTSTATUS)0xC0000001)
#define STATUS_INVALID_PARAMETER ((NTSTATUS)0xC000000D)
#define STATUS_INSUFFICIENT_RESOURCES ((NTSTATUS)0xC000009A)
#define STATUS_OBJECT_PATH_NOT_FOUND ((NTSTATUS)0xC000003A)
#define STATUS_DISK_FULL ((NTSTATUS)0xC000007F)
#define STATUS_INVALID_DEVICE_STATE ((NTSTATUS)0xC0000184)

#define PAGE_SHIFT 12
#define PASSIVE_LEVEL 0

typedef union _LARGE_INTEGER {
    struct {
        ULONG LowPart;
        LONG HighPart;
    } u;
    LONGLONG QuadPart;
} LARGE_INTEGER, *PLARGE_INTEGER;
typedef LARGE_INTEGER PHYSICAL_ADDRESS;

typedef struct _UNICODE_STRING {
    USHORT Length, MaximumLength;
    WCHAR* Buffer;
} UNICODE_STRING, *PUNICODE_STRING;

typedef struct _OBJECT_ATTRIBUTES {
    ULONG Length;
    HANDLE RootDirectory;
    PUNICODE_STRING ObjectName;
    ULONG Attributes;
    PVOID SecurityDescriptor, SecurityQualityOfService;
} OBJECT_ATTRIBUTES;
#define OBJ_CASE_INSENSITIVE 0x40u
#define OBJ_KERNEL_HANDLE 0x200u
#define InitializeObjectAttributes(p, n, a, r, s)                                              \
    ((p)->Length = sizeof(OBJECT_ATTRIBUTES), (p)->RootDirectory = (r), (p)->ObjectName = (n), \
     (p)->Attributes = (a), (p)->SecurityDescriptor = (s), (p)->SecurityQualityOfService = NULL)

typedef struct _IO_STATUS_BLOCK {
    NTSTATUS Status;
    ULONG_PTR Information;
} IO_STATUS_BLOCK;

/* A notification event: set stays set. */
typedef struct _KEVENT {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int set;
} KEVENT;
typedef enum { NotificationEvent, SynchronizationEvent } EVENT_TYPE;
typedef enum { Executive } KWAIT_REASON;
typedef enum { KernelMode } KPROCESSOR_MODE;
#define IO_NO_INCREMENT 0

typedef enum { NonPagedPoolNx = 512 } POOL_TYPE;
#define GENERIC_WRITE 0x40000000u
#define SYNCHRONIZE 0x00100000u
#define THREAD_ALL_ACCESS 0x001FFFFFu
#define FILE_ATTRIBUTE_NORMAL 0x80u
#define FILE_SHARE_READ 1u
#define FILE_OVERWRITE_IF 5u
#define FILE_SYNCHRONOUS_IO_NONALERT 0x20u
#define FILE_NON_DIRECTORY_FILE 0x40u

typedef VOID KSTART_ROUTINE(PVOID StartContext);

#ifdef __cplusplus
extern "C" {
#endif

PVOID ExAllocatePoolWithTag(POOL_TYPE PoolType, SIZE_T NumberOfBytes, ULONG Tag);
VOID ExFreePoolWithTag(PVOID P, ULONG Tag);
#define RtlZeroMemory(d, n) memset((d), 0, (n))
#define RtlCopyMemory(d, s, n) memcpy((d), (s), (n))
VOID RtlInitUnicodeString(PUNICODE_STRING Destination, const WCHAR* Source);
NTSTATUS ZwCreateFile(HANDLE* FileHandle, ACCESS_MASK DesiredAccess, OBJECT_ATTRIBUTES* Attributes,
                      IO_STATUS_BLOCK* IoStatusBlock, PLARGE_INTEGER AllocationSize,
                      ULONG FileAttributes, ULONG ShareAccess, ULONG CreateDisposition,
                      ULONG CreateOptions, PVOID EaBuffer, ULONG EaLength);
NTSTATUS ZwWriteFile(HANDLE FileHandle, HANDLE Event, PVOID ApcRoutine, PVOID ApcContext,
                     IO_STATUS_BLOCK* IoStatusBlock, PVOID Buffer, ULONG Length,
                     PLARGE_INTEGER ByteOffset, ULONG* Key);
NTSTATUS ZwClose(HANDLE Handle);
NTSTATUS ZwWaitForSingleObject(HANDLE Handle, BOOLEAN Alertable, PLARGE_INTEGER Timeout);
LARGE_INTEGER KeQueryPerformanceCounter(PLARGE_INTEGER PerformanceFrequency);
HANDLE PsGetCurrentThreadId(VOID);
KIRQL KeGetCurrentIrql(VOID);
PVOID MmGetVirtualForPhysical(PHYSICAL_ADDRESS PhysicalAddress);
BOOLEAN MmIsAddressValid(PVOID VirtualAddress);
PHYSICAL_ADDRESS MmGetPhysicalAddress(PVOID BaseAddress);
VOID KeInitializeEvent(KEVENT* Event, EVENT_TYPE Type, BOOLEAN State);
LONG KeSetEvent(KEVENT* Event, LONG Increment, BOOLEAN Wait);
NTSTATUS KeWaitForSingleObject(PVOID Object, KWAIT_REASON WaitReason, KPROCESSOR_MODE WaitMode,
                               BOOLEAN Alertable, PLARGE_INTEGER Timeout);
NTSTATUS PsCreateSystemThread(HANDLE* ThreadHandle, ULONG DesiredAccess,
                              OBJECT_ATTRIBUTES* ObjectAttributes, HANDLE ProcessHandle,
                              PVOID ClientId, KSTART_ROUTINE* StartRoutine, PVOID StartContext);
NTSTATUS PsTerminateSystemThread(NTSTATUS ExitStatus);

#ifdef __cplusplus
}
#endif

#endif /* NDKCT_WDM_STAND_IN_NTIFS_H */
