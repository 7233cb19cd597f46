// The C symbols of libndkct_model_provider.so, so the reference provider also loads like any
// vendor's provider (adapters/loader).
#include "ndkct/adapters/model_provider.hpp"

#define NDKCT_EXPORT extern "C" __attribute__((visibility("default")))

NDKCT_EXPORT NTSTATUS NdkctOpenAdapter(const NDKCT_HOST_MEMORY* memory,
                                       const NDKCT_OPEN_OPTIONS* options, NDK_ADAPTER** adapter) {
    return ndkct::adapters::model_provider().OpenAdapter(memory, options, adapter);
}

NDKCT_EXPORT VOID NdkctCloseAdapter(NDK_ADAPTER* adapter) {
    ndkct::adapters::model_provider().CloseAdapter(adapter);
}

NDKCT_EXPORT const NDKCT_PROVIDER_IDENTITY* NdkctGetProviderIdentity(VOID) {
    return ndkct::adapters::model_provider().GetProviderIdentity();
}
