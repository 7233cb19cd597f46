/* The stand-in's calls (ntifs.h here): POSIX files and threads behind the WDK's names. */
#define _GNU_SOURCE
#include "stand_in.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ntifs.h"

static uint8_t* g_base;
static uint64_t g_pages;
static _Atomic uint64_t g_fail_after = ~0ull;
static _Atomic uint64_t g_written;
static _Atomic int64_t g_allocations, g_threads;

void wdm_stand_in_map(void* base, uint64_t pages) {
    g_base = (uint8_t*)base;
    g_pages = pages;
}
void wdm_stand_in_fail_writes_after(uint64_t bytes) {
    g_fail_after = bytes;
    g_written = 0;
}
int64_t wdm_stand_in_live_allocations(void) {
    return g_allocations;
}
int64_t wdm_stand_in_live_threads(void) {
    return g_threads;
}

/* Handles: a file or a thread. */
struct handle {
    int thread;
    int fd;
    pthread_t id;
    KSTART_ROUTINE* routine;
    PVOID context;
};

PVOID ExAllocatePoolWithTag(POOL_TYPE type, SIZE_T bytes, ULONG tag) {
    (void)type;
    (void)tag;
    PVOID p = malloc(bytes ? bytes : 1);
    if (p) ++g_allocations;
    return p;
}
VOID ExFreePoolWithTag(PVOID p, ULONG tag) {
    (void)tag;
    if (p) --g_allocations;
    free(p);
}

VOID RtlInitUnicodeString(PUNICODE_STRING d, const WCHAR* s) {
    USHORT n = 0;
    while (s && s[n])
        ++n;
    d->Buffer = (WCHAR*)s;
    d->Length = (USHORT)(n * 2);
    d->MaximumLength = (USHORT)(n * 2 + 2);
}

NTSTATUS ZwCreateFile(HANDLE* out, ACCESS_MASK access, OBJECT_ATTRIBUTES* a, IO_STATUS_BLOCK* io,
                      PLARGE_INTEGER size, ULONG attributes, ULONG share, ULONG disposition,
                      ULONG options, PVOID ea, ULONG ea_length) {
    (void)access, (void)size, (void)attributes, (void)share, (void)options, (void)ea,
        (void)ea_length;
    char path[1024];
    size_t n = a->ObjectName->Length / 2;
    if (n >= sizeof path || disposition != FILE_OVERWRITE_IF) return STATUS_INVALID_PARAMETER;
    for (size_t i = 0; i < n; ++i)
        path[i] = (char)a->ObjectName->Buffer[i]; /* the tests' paths are ASCII */
    path[n] = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return STATUS_OBJECT_PATH_NOT_FOUND;
    struct handle* h = (struct handle*)calloc(1, sizeof *h);
    h->fd = fd;
    *out = h;
    io->Status = STATUS_SUCCESS;
    io->Information = 0;
    return STATUS_SUCCESS;
}

NTSTATUS ZwWriteFile(HANDLE file, HANDLE event, PVOID apc, PVOID apc_context, IO_STATUS_BLOCK* io,
                     PVOID buffer, ULONG length, PLARGE_INTEGER offset, ULONG* key) {
    (void)event, (void)apc, (void)apc_context, (void)offset, (void)key;
    struct handle* h = (struct handle*)file;
    uint64_t room = g_fail_after > g_written ? g_fail_after - g_written : 0;
    ULONG n = length < room ? length : (ULONG)room;
    ssize_t done = n ? write(h->fd, buffer, n) : 0;
    if (done < 0) done = 0;
    g_written += (uint64_t)done;
    io->Information = (ULONG_PTR)done;
    io->Status = (ULONG)done == length ? STATUS_SUCCESS : STATUS_DISK_FULL;
    return io->Status;
}

NTSTATUS ZwClose(HANDLE handle) {
    struct handle* h = (struct handle*)handle;
    if (!h) return STATUS_INVALID_PARAMETER;
    if (!h->thread) close(h->fd);
    free(h);
    return STATUS_SUCCESS;
}

NTSTATUS ZwWaitForSingleObject(HANDLE handle, BOOLEAN alertable, PLARGE_INTEGER timeout) {
    (void)alertable;
    (void)timeout;
    struct handle* h = (struct handle*)handle;
    if (!h || !h->thread) return STATUS_INVALID_PARAMETER;
    pthread_join(h->id, NULL);
    --g_threads;
    return STATUS_SUCCESS;
}

LARGE_INTEGER KeQueryPerformanceCounter(PLARGE_INTEGER frequency) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (frequency) frequency->QuadPart = 1000000000;
    LARGE_INTEGER now;
    now.QuadPart = (LONGLONG)t.tv_sec * 1000000000 + t.tv_nsec;
    return now;
}

HANDLE PsGetCurrentThreadId(VOID) {
    static _Atomic uintptr_t next = 1;
    static _Thread_local uintptr_t id;
    if (!id) id = next++ * 4; /* as Windows: non-zero multiples of 4 */
    return (HANDLE)id;
}

KIRQL KeGetCurrentIrql(VOID) {
    return PASSIVE_LEVEL;
}

PVOID MmGetVirtualForPhysical(PHYSICAL_ADDRESS pa) {
    uint64_t pfn = (uint64_t)pa.QuadPart >> PAGE_SHIFT;
    return g_base && pfn < g_pages ? g_base + (pfn << PAGE_SHIFT) : NULL;
}
BOOLEAN MmIsAddressValid(PVOID va) {
    uint8_t* p = (uint8_t*)va;
    return g_base && p >= g_base && p < g_base + (g_pages << PAGE_SHIFT);
}
PHYSICAL_ADDRESS MmGetPhysicalAddress(PVOID va) {
    PHYSICAL_ADDRESS pa;
    pa.QuadPart = MmIsAddressValid(va) ? (LONGLONG)((uint8_t*)va - g_base) : 0;
    return pa;
}

VOID KeInitializeEvent(KEVENT* e, EVENT_TYPE type, BOOLEAN state) {
    (void)type;
    pthread_mutex_init(&e->mutex, NULL);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cond, &a);
    pthread_condattr_destroy(&a);
    e->set = state;
}

LONG KeSetEvent(KEVENT* e, LONG increment, BOOLEAN wait) {
    (void)increment;
    (void)wait;
    pthread_mutex_lock(&e->mutex);
    LONG was = e->set;
    e->set = 1;
    pthread_cond_broadcast(&e->cond);
    pthread_mutex_unlock(&e->mutex);
    return was;
}

/* Only events; a relative timeout (negative, 100 ns units) or none. */
NTSTATUS KeWaitForSingleObject(PVOID object, KWAIT_REASON reason, KPROCESSOR_MODE mode,
                               BOOLEAN alertable, PLARGE_INTEGER timeout) {
    (void)reason, (void)mode, (void)alertable;
    KEVENT* e = (KEVENT*)object;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (timeout) {
        int64_t ns = -timeout->QuadPart * 100;
        until.tv_sec += ns / 1000000000;
        until.tv_nsec += ns % 1000000000;
        if (until.tv_nsec >= 1000000000) {
            ++until.tv_sec;
            until.tv_nsec -= 1000000000;
        }
    }
    pthread_mutex_lock(&e->mutex);
    int waited = 0;
    while (!e->set && waited != ETIMEDOUT)
        waited = timeout ? pthread_cond_timedwait(&e->cond, &e->mutex, &until)
                         : pthread_cond_wait(&e->cond, &e->mutex);
    NTSTATUS s = e->set ? STATUS_SUCCESS : STATUS_TIMEOUT;
    pthread_mutex_unlock(&e->mutex);
    return s;
}

static void* thread_main(void* p) {
    struct handle* h = (struct handle*)p;
    h->routine(h->context);
    return NULL;
}

NTSTATUS PsCreateSystemThread(HANDLE* out, ULONG access, OBJECT_ATTRIBUTES* attributes,
                              HANDLE process, PVOID client, KSTART_ROUTINE* routine,
                              PVOID context) {
    (void)access, (void)process, (void)client;
    if (!attributes || !(attributes->Attributes & OBJ_KERNEL_HANDLE))
        return STATUS_INVALID_PARAMETER; /* the host must ask for a kernel handle */
    struct handle* h = (struct handle*)calloc(1, sizeof *h);
    h->thread = 1;
    h->routine = routine;
    h->context = context;
    if (pthread_create(&h->id, NULL, thread_main, h) != 0) {
        free(h);
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    ++g_threads;
    *out = h;
    return STATUS_SUCCESS;
}

NTSTATUS PsTerminateSystemThread(NTSTATUS status) {
    (void)status;
    pthread_exit(NULL);
}
