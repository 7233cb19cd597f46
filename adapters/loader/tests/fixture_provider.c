/*
 * A fixture for the loader tests: a library with the provider entry points and no adapter
 * behind them (open fails with NDIS_STATUS_ADAPTER_NOT_READY). Built twice, once without
 * NdkctCloseAdapter, to check that the loader names a missing symbol.
 */
#include <string.h>

#include "ndkct/provider.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT NTSTATUS NdkctOpenAdapter(const NDKCT_HOST_MEMORY* Memory, const NDKCT_OPEN_OPTIONS* Options,
                                 NDK_ADAPTER** ppAdapter) {
    (void)Memory;
    (void)ppAdapter;
    if (Options && Options->ErrorMessage && Options->ErrorMessageSize > 0) {
        strncpy(Options->ErrorMessage, "fixture: no adapter behind this library",
                Options->ErrorMessageSize - 1);
        Options->ErrorMessage[Options->ErrorMessageSize - 1] = '\0';
    }
    return NDIS_STATUS_ADAPTER_NOT_READY;
}

#ifndef FIXTURE_WITHOUT_CLOSE
EXPORT VOID NdkctCloseAdapter(NDK_ADAPTER* pAdapter) {
    (void)pAdapter;
}
#endif

EXPORT const NDKCT_PROVIDER_IDENTITY* NdkctGetProviderIdentity(VOID) {
    static const NDKCT_PROVIDER_IDENTITY identity = {sizeof(NDKCT_PROVIDER_IDENTITY),
                                                     NDKCT_PROVIDER_ABI_VERSION,
                                                     "loader-fixture",
                                                     "0",
                                                     {1, 2},
                                                     "loader test fixture"};
    return &identity;
}
