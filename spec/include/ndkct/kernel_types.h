/*
 * ndkct/kernel_types.h: user-space stand-ins for the Windows kernel types NDKPI uses.
 *
 * NDKPI is declared in terms of WDK types (ULONG, PVOID, MDL, PHYSICAL_ADDRESS, ...). ndkct runs
 * in Linux user space, so this header gives those names the widths they have on x64 Windows
 * (LLP64): ULONG and LONG are 32 bits even where C's `long` is 64. Layout-bearing types carry
 * static asserts so that a change of compiler or platform cannot shift the ABI silently.
 *
 * Compiles as C11 and as C++20. Depends on nothing but the C standard headers.
 */
#ifndef NDKCT_KERNEL_TYPES_H
#define NDKCT_KERNEL_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define NDKCT_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define NDKCT_EXTERN_C extern "C"
#define NDKCT_EXTERN_C_BEGIN extern "C" {
#define NDKCT_EXTERN_C_END }
#else
#define NDKCT_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define NDKCT_EXTERN_C
#define NDKCT_EXTERN_C_BEGIN
#define NDKCT_EXTERN_C_END
#endif

NDKCT_EXTERN_C_BEGIN

/* ---- Scalar types (LLP64 widths) ---- */
typedef void VOID;
typedef void* PVOID;
typedef uint8_t UCHAR;
typedef uint8_t BOOLEAN;
typedef int16_t CSHORT;
typedef uint16_t USHORT;
typedef int32_t LONG;
typedef uint32_t ULONG;
typedef uint32_t UINT32;
typedef int64_t LONG64;
typedef uint64_t ULONG64;
typedef uint64_t UINT64;
typedef uint64_t ULONGLONG;
typedef uintptr_t ULONG_PTR;
typedef size_t SIZE_T;
typedef ULONG* PULONG;
typedef USHORT* PUSHORT;
typedef ULONG_PTR KAFFINITY;

#define TRUE 1
#define FALSE 0
#ifndef MAXULONG
#define MAXULONG 0xFFFFFFFFu
#endif

/* NTSTATUS is a signed 32-bit value; the severity lives in the top two bits. */
typedef LONG NTSTATUS;
#define NT_SUCCESS(Status) (((NTSTATUS)(Status)) >= 0)
#define NT_INFORMATION(Status) ((((ULONG)(Status)) >> 30) == 1)
#define NT_WARNING(Status) ((((ULONG)(Status)) >> 30) == 2)
#define NT_ERROR(Status) ((((ULONG)(Status)) >> 30) == 3)

/* LARGE_INTEGER as a plain 64-bit union; PHYSICAL_ADDRESS is one. */
typedef union _LARGE_INTEGER {
    struct {
        ULONG LowPart;
        LONG HighPart;
    } u;
    LONG64 QuadPart;
} LARGE_INTEGER;
typedef LARGE_INTEGER PHYSICAL_ADDRESS;

typedef struct _GUID {
    ULONG Data1;
    USHORT Data2;
    USHORT Data3;
    UCHAR Data4[8];
} GUID;

/* Processor-group affinity, the optional CQ/SRQ placement hint. */
typedef struct _GROUP_AFFINITY {
    KAFFINITY Mask;
    USHORT Group;
    USHORT Reserved[3];
} GROUP_AFFINITY;
typedef GROUP_AFFINITY* PGROUP_AFFINITY;

/* Socket addresses are the platform's own (sockaddr_in / sockaddr_in6 carry the same fields). */
struct sockaddr;
typedef struct sockaddr SOCKADDR;
typedef SOCKADDR* PSOCKADDR;

/* ---- Pages and MDLs ---- */

/* NDKPI pages are PAGE_SIZE bytes; ndkct targets the x64/ARM64 value. */
#define PAGE_SHIFT 12
#define PAGE_SIZE 4096u
#define BYTE_OFFSET(Va) ((ULONG)((ULONG_PTR)(Va) & (PAGE_SIZE - 1)))
#define PAGE_ALIGN(Va) ((PVOID)((ULONG_PTR)(Va) & ~(ULONG_PTR)(PAGE_SIZE - 1)))
#define ADDRESS_AND_SIZE_TO_SPAN_PAGES(Va, Size) \
    ((ULONG)((((ULONG_PTR)(Size)) + BYTE_OFFSET(Va) + PAGE_SIZE - 1) >> PAGE_SHIFT))

/*
 * In ndkct a page frame number is the index of a page in the host-memory arena
 * (ndkct/host_memory.h): PFN n is the bytes at arena offset n * PAGE_SIZE.
 */
typedef ULONG_PTR PFN_NUMBER;
typedef PFN_NUMBER* PPFN_NUMBER;

/* MdlFlags bits that ndkct's builders set (values as in the WDK). */
#define MDL_PAGES_LOCKED 0x0002
#define MDL_SOURCE_IS_NONPAGED_POOL 0x0004

/*
 * A memory descriptor list: one virtually contiguous piece of a buffer (StartVa is the
 * page-aligned virtual address, ByteOffset the offset of the first byte in that page, ByteCount
 * the bytes described), followed in memory by its PFN array with one entry per spanned page.
 * Chains link through Next. Field order and widths are the x64 WDK layout.
 */
typedef struct _MDL {
    struct _MDL* Next;
    CSHORT Size; /* bytes of this MDL including its PFN array */
    CSHORT MdlFlags;
    PVOID Process;        /* unused in user space */
    PVOID MappedSystemVa; /* where the consumer sees the bytes (ndkct: == StartVa) */
    PVOID StartVa;
    ULONG ByteCount;
    ULONG ByteOffset;
} MDL, *PMDL;

NDKCT_STATIC_ASSERT(sizeof(MDL) == 48, "MDL header is 48 bytes on x64");
NDKCT_STATIC_ASSERT(offsetof(MDL, StartVa) == 32, "MDL.StartVa at offset 32 on x64");

/* The WDK accessors, with their documented meaning. */
static inline PVOID MmGetMdlVirtualAddress(const MDL* Mdl) {
    return (PVOID)((char*)Mdl->StartVa + Mdl->ByteOffset);
}
static inline ULONG MmGetMdlByteCount(const MDL* Mdl) {
    return Mdl->ByteCount;
}
static inline ULONG MmGetMdlByteOffset(const MDL* Mdl) {
    return Mdl->ByteOffset;
}
static inline PPFN_NUMBER MmGetMdlPfnArray(MDL* Mdl) {
    return (PPFN_NUMBER)(Mdl + 1);
}
static inline const PFN_NUMBER* MmGetMdlPfnArrayConst(const MDL* Mdl) {
    return (const PFN_NUMBER*)(Mdl + 1);
}
static inline ULONG MmGetMdlPageCount(const MDL* Mdl) {
    return ADDRESS_AND_SIZE_TO_SPAN_PAGES(MmGetMdlVirtualAddress(Mdl), Mdl->ByteCount);
}
static inline PVOID MmGetSystemAddressForMdl(const MDL* Mdl) {
    return (PVOID)((char*)Mdl->MappedSystemVa + Mdl->ByteOffset);
}
static inline SIZE_T MmSizeOfMdl(PVOID Base, SIZE_T Length) {
    return sizeof(MDL) + sizeof(PFN_NUMBER) * ADDRESS_AND_SIZE_TO_SPAN_PAGES(Base, Length);
}

NDKCT_EXTERN_C_END

#endif /* NDKCT_KERNEL_TYPES_H */
