// The three exports of libndkct_verbs_provider.so (spec/include/ndkct/provider.h).
#include "verbs.hpp"

#define NDKCT_EXPORT extern "C" __attribute__((visibility("default")))

NDKCT_EXPORT NTSTATUS NdkctOpenAdapter(const NDKCT_HOST_MEMORY* Memory,
                                       const NDKCT_OPEN_OPTIONS* Options, NDK_ADAPTER** ppAdapter) {
    return ndkct::adapters::verbs::open_adapter(Memory, Options, ppAdapter);
}

NDKCT_EXPORT VOID NdkctCloseAdapter(NDK_ADAPTER* pAdapter) {
    ndkct::adapters::verbs::close_adapter(pAdapter);
}

NDKCT_EXPORT const NDKCT_PROVIDER_IDENTITY* NdkctGetProviderIdentity(VOID) {
    return ndkct::adapters::verbs::provider_identity();
}
