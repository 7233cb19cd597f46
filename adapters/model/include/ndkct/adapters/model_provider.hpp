// ndkct/adapters/model_provider.hpp: the reference provider, built on the reference model.
//
// Every NDKPI dispatch table, implemented by asking the model for the allowed outcomes and
// picking one by seed: inline or pending, an injected resource failure now and then (as the
// profile says), simulated DMA on the arena, loopback connections between its own adapters.
// Reproducible from its seed. The main job's default provider.
#pragma once

#include "ndkct/provider.h"

namespace ndkct::adapters {

// The reference provider's entry points (also exported as C symbols by
// libndkct_model_provider.so, for the loader).
const NDKCT_PROVIDER_ENTRY_POINTS& model_provider();

}  // namespace ndkct::adapters
