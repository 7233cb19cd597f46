// The provider's entry points as a table, for linking the provider into a process directly.
#include "ndkct/adapters/verbs_provider.hpp"

#include "verbs.hpp"

namespace ndkct::adapters::verbs {

namespace {

NTSTATUS open(const NDKCT_HOST_MEMORY* memory, const NDKCT_OPEN_OPTIONS* options,
              NDK_ADAPTER** adapter) {
    return open_adapter(memory, options, adapter);
}
void close(NDK_ADAPTER* adapter) {
    close_adapter(adapter);
}
const NDKCT_PROVIDER_IDENTITY* identity() {
    return provider_identity();
}

const NDKCT_PROVIDER_ENTRY_POINTS kEntryPoints = {open, close, identity};

}  // namespace

const NDKCT_PROVIDER_ENTRY_POINTS& entry_points() {
    return kEntryPoints;
}

}  // namespace ndkct::adapters::verbs
