/*
 * ndkct/provider.h: the entry points every provider under test exports (C linkage).
 *
 * NDKPI itself begins at an open NDK_ADAPTER: on Windows, NDIS opens it through the miniport's
 * OPEN_NDK_ADAPTER_HANDLER and closes it through CLOSE_NDK_ADAPTER_HANDLER. ndkct stands in for
 * NDIS with three functions. A provider shared library exports exactly these names; ndkct's
 * loader (adapters/loader) resolves them with dlsym and names any that is missing. The full
 * contract, written for vendors, is spec/PROVIDER.md.
 *
 *   NTSTATUS NdkctOpenAdapter(const NDKCT_HOST_MEMORY*, const NDKCT_OPEN_OPTIONS*, NDK_ADAPTER**);
 *   VOID     NdkctCloseAdapter(NDK_ADAPTER*);
 *   const NDKCT_PROVIDER_IDENTITY* NdkctGetProviderIdentity(VOID);
 */
#ifndef NDKCT_PROVIDER_H
#define NDKCT_PROVIDER_H

#include "ndkct/host_memory.h"
#include "ndkct/ndkpi.h"

NDKCT_EXTERN_C_BEGIN

/* Bumped when a struct below changes incompatibly; Size fields allow compatible growth. */
#define NDKCT_PROVIDER_ABI_VERSION 1

typedef struct _NDKCT_OPEN_OPTIONS {
    ULONG Size; /* sizeof(NDKCT_OPEN_OPTIONS) */
    /* Version negotiation as for OpenNdkAdapter (VER-02): the major version and the lowest
     * minor version the consumer accepts. The provider answers with its highest minor of that
     * major (in NDK_ADAPTER_INFO.Version and every object header) or fails with
     * NDIS_STATUS_BAD_VERSION. */
    NDK_VERSION Version;
    /* The profile document (JSON text, spec/profiles/profile.schema.json), or NULL for the
     * provider's defaults. Providers that have no implementation-defined choices may ignore it;
     * the reference provider takes its adapter limits and readings from it. */
    const char* ProfileJson;
    /* Seed for every choice the provider makes at random (the reference provider picks inline
     * or pending outcomes by it); a run is reproducible from it. */
    ULONG64 Seed;
    /* Provider-specific device selector (e.g. "rxe0"); NULL or "" = the provider's default. */
    const char* DeviceName;
    /* Where the provider writes a NUL-terminated explanation when it fails to open (which field
     * of the profile is wrong, which device is missing). May be NULL. */
    char* ErrorMessage;
    ULONG ErrorMessageSize;
} NDKCT_OPEN_OPTIONS;

typedef struct _NDKCT_PROVIDER_IDENTITY {
    ULONG Size;              /* sizeof(NDKCT_PROVIDER_IDENTITY) */
    ULONG AbiVersion;        /* NDKCT_PROVIDER_ABI_VERSION the provider was built against */
    const char* Name;        /* short stable name, e.g. "ndkct-model"; waivers key on it */
    const char* Version;     /* the provider's own version string */
    NDK_VERSION NdkVersion;  /* highest NDKPI version implemented */
    const char* Description; /* one line for reports */
} NDKCT_PROVIDER_IDENTITY;

/*
 * Opens an adapter over Memory. STATUS_SUCCESS stores the adapter in *ppAdapter. Failures:
 * NDIS_STATUS_BAD_VERSION (version not supported, VER-02), NDIS_STATUS_ADAPTER_NOT_READY (no
 * device), STATUS_INSUFFICIENT_RESOURCES, STATUS_INVALID_PARAMETER (bad options or profile; the
 * reason goes to ErrorMessage). Never STATUS_PENDING. Memory stays valid until the adapter closes.
 */
typedef NTSTATUS NDKCT_FN_OPEN_ADAPTER(const NDKCT_HOST_MEMORY* Memory,
                                       const NDKCT_OPEN_OPTIONS* Options, NDK_ADAPTER** ppAdapter);

/*
 * Closes an adapter, blocking (CLOSE-ADP-01): when it returns, every callback on every object
 * of the adapter has returned and none will come. Never called from inside a callback.
 */
typedef VOID NDKCT_FN_CLOSE_ADAPTER(NDK_ADAPTER* pAdapter);

/* Identity of the provider; the pointer stays valid while the provider is loaded. */
typedef const NDKCT_PROVIDER_IDENTITY* NDKCT_FN_GET_PROVIDER_IDENTITY(VOID);

/* The three entry points as one table: what the loader fills and built-in providers expose. */
typedef struct _NDKCT_PROVIDER_ENTRY_POINTS {
    NDKCT_FN_OPEN_ADAPTER* OpenAdapter;
    NDKCT_FN_CLOSE_ADAPTER* CloseAdapter;
    NDKCT_FN_GET_PROVIDER_IDENTITY* GetProviderIdentity;
} NDKCT_PROVIDER_ENTRY_POINTS;

/* Exported symbol names, for loaders. */
#define NDKCT_SYMBOL_OPEN_ADAPTER "NdkctOpenAdapter"
#define NDKCT_SYMBOL_CLOSE_ADAPTER "NdkctCloseAdapter"
#define NDKCT_SYMBOL_GET_PROVIDER_IDENTITY "NdkctGetProviderIdentity"

NDKCT_EXTERN_C_END

#endif /* NDKCT_PROVIDER_H */
