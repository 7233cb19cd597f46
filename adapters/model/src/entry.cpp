// The reference provider's three entry points (ndkct/provider.h).
#include "ndkct/adapters/model_provider.hpp"
#include "provider.hpp"

namespace ndkct::adapters {

namespace {

NTSTATUS open_adapter(const NDKCT_HOST_MEMORY* memory, const NDKCT_OPEN_OPTIONS* options,
                      NDK_ADAPTER** adapter) {
    try {
        return reference::Provider::open(memory, options, adapter);
    } catch (const std::bad_alloc&) {
        return STATUS_INSUFFICIENT_RESOURCES;
    }
}

VOID close_adapter(NDK_ADAPTER* adapter) {
    if (adapter) reinterpret_cast<reference::Provider*>(adapter)->close();
}

const NDKCT_PROVIDER_IDENTITY* identity() {
    static const NDKCT_PROVIDER_IDENTITY id = {
        sizeof(NDKCT_PROVIDER_IDENTITY),
        NDKCT_PROVIDER_ABI_VERSION,
        "ndkct-model",
        "0.1.0",
        {2, 1},
        "ndkct reference provider: the reference model made executable (simulated DMA)"};
    return &id;
}

}  // namespace

const NDKCT_PROVIDER_ENTRY_POINTS& model_provider() {
    static const NDKCT_PROVIDER_ENTRY_POINTS entry = {open_adapter, close_adapter, identity};
    return entry;
}

}  // namespace ndkct::adapters
