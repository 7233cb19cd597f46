// ndkct/adapters/verbs_provider.hpp: the verbs provider (NDKPI on rdma-core), linked in directly.
//
// The same provider is built as libndkct_verbs_provider.so, which exports NdkctOpenAdapter,
// NdkctCloseAdapter and NdkctGetProviderIdentity like any vendor's provider. Identity name:
// "ndkct-verbs". NDKCT_OPEN_OPTIONS.DeviceName picks the RDMA device (default: the first).
#pragma once

#include "ndkct/provider.h"

namespace ndkct::adapters::verbs {

const NDKCT_PROVIDER_ENTRY_POINTS& entry_points();

}  // namespace ndkct::adapters::verbs
