// ndkct/conformance/provider_spec.hpp: which provider a run tests, and how to open it.
//
// A provider is named by a short spec string:
//   model[:seed=N][:profile=NAME|FILE]   the reference provider (built in)
//   lib:PATH[:seed=N][:profile=...]      any provider shared library (adapters/loader)
//   verbs[:device=NAME]                  the rdma-core provider (when built)
// Several specs are separated by commas (NDKCT_PROVIDERS, --provider).
#pragma once

#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ndkct/provider.h"

namespace ndkct::conformance {

class ProviderSpecError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct ProviderSpec {
    std::string text;                 // as written, for messages and test names
    std::string kind;                 // "model", "lib", "verbs"
    std::string path;                 // lib: the shared library
    std::string device;               // verbs: device name
    std::string profile = "default";  // built-in profile name or a file
    uint64_t seed = 1;

    std::string label() const;  // a gtest-safe name: "model_seed1", "lib_libvendor_so"
};

// For googletest's messages: the spec as written.
void PrintTo(const ProviderSpec& spec, std::ostream* out);

// Parses "model:seed=3,lib:/x/y.so". Throws ProviderSpecError naming the bad part.
std::vector<ProviderSpec> parse_provider_specs(const std::string& text);

// The providers a test run uses: NDKCT_PROVIDERS if set, else the reference provider under
// three seeds (different inline/pending choices).
std::vector<ProviderSpec> providers_from_environment();

// Entry points for a spec: built in, or loaded from the library (kept loaded for the process).
// Throws ProviderSpecError (unknown kind, missing library or symbol, verbs not built).
const NDKCT_PROVIDER_ENTRY_POINTS& entry_points_for(const ProviderSpec& spec);

// Registers a built-in provider kind ("verbs" registers itself when it is linked in).
void register_builtin_provider(const std::string& kind, const NDKCT_PROVIDER_ENTRY_POINTS* entry);

}  // namespace ndkct::conformance
