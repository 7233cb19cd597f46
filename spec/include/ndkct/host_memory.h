/*
 * ndkct/host_memory.h: the host-memory arena as providers see it.
 *
 * NDKPI speaks of physical pages. In ndkct, "physical memory" is an arena: one memfd-backed
 * region owned by the consumer side and handed to the provider when the adapter opens. Page
 * frame number n (the PFNs in an MDL) is the PAGE_SIZE bytes at arena offset n * PAGE_SIZE.
 *
 * A provider reaches page n at PhysicalBase + n * PAGE_SIZE (a read-write mapping of the whole
 * arena that stays valid while the adapter is open), or maps MemFd itself, e.g. to build a
 * virtually contiguous alias of scattered pages for a NIC. Consumer buffers live at other
 * virtual addresses that alias the same memfd pages (see ndkct/platform/arena.hpp), so bytes a
 * provider writes through a PFN are the bytes the consumer reads through its MDL's VA.
 */
#ifndef NDKCT_HOST_MEMORY_H
#define NDKCT_HOST_MEMORY_H

#include "ndkct/kernel_types.h"

NDKCT_EXTERN_C_BEGIN

typedef struct _NDKCT_HOST_MEMORY {
    ULONG Size;         /* sizeof(NDKCT_HOST_MEMORY), for forward compatibility */
    LONG MemFd;         /* the memfd backing the arena; providers may mmap it MAP_SHARED */
    PVOID PhysicalBase; /* the whole arena mapped linearly, read-write */
    ULONG64 PageCount;  /* arena size in pages; valid PFNs are 0 .. PageCount-1 */
} NDKCT_HOST_MEMORY;

/* Where PFN n lives in the linear mapping. */
static inline PVOID NdkctPfnToAddress(const NDKCT_HOST_MEMORY* Memory, PFN_NUMBER Pfn) {
    return (PVOID)((char*)Memory->PhysicalBase + ((SIZE_T)Pfn << PAGE_SHIFT));
}

NDKCT_EXTERN_C_END

#endif /* NDKCT_HOST_MEMORY_H */
