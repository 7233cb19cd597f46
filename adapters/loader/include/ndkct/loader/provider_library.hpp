// ndkct/loader/provider_library.hpp: a provider loaded from a shared library.
//
// Any provider, ndkct's or a vendor's, plugs in through the three entry points of
// ndkct/provider.h. This opens the library, resolves them, checks the identity it reports, and
// says exactly what is wrong when something is: the path, the missing symbol, the ABI mismatch.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "ndkct/provider.h"

namespace ndkct::loader {

class ProviderLoadError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class ProviderLibrary {
  public:
    // Opens path (dlopen, RTLD_NOW | RTLD_LOCAL). Throws ProviderLoadError naming the path and
    // the problem: not found or not loadable (with the loader's message), each entry point that
    // is missing, or an identity that does not fit this ABI.
    static ProviderLibrary open(const std::string& path);

    const std::string& path() const { return path_; }
    const NDKCT_PROVIDER_ENTRY_POINTS& entry_points() const { return entry_; }
    const NDKCT_PROVIDER_IDENTITY& identity() const { return *identity_; }

  private:
    std::string path_;
    std::shared_ptr<void> handle_;  // dlclose when the last copy goes
    NDKCT_PROVIDER_ENTRY_POINTS entry_{};
    const NDKCT_PROVIDER_IDENTITY* identity_ = nullptr;
};

}  // namespace ndkct::loader
