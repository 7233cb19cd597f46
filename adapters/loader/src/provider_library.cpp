#include "ndkct/loader/provider_library.hpp"

#include <dlfcn.h>

#include <vector>

namespace ndkct::loader {

ProviderLibrary ProviderLibrary::open(const std::string& path) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        throw ProviderLoadError("cannot load provider library " + path + ": " +
                                (why ? why : "unknown reason"));
    }
    ProviderLibrary library;
    library.path_ = path;
    library.handle_ = std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });

    std::vector<std::string> missing;
    auto resolve = [&](const char* name) {
        void* symbol = dlsym(handle, name);
        if (!symbol) missing.emplace_back(name);
        return symbol;
    };
    library.entry_.OpenAdapter =
        reinterpret_cast<NDKCT_FN_OPEN_ADAPTER*>(resolve(NDKCT_SYMBOL_OPEN_ADAPTER));
    library.entry_.CloseAdapter =
        reinterpret_cast<NDKCT_FN_CLOSE_ADAPTER*>(resolve(NDKCT_SYMBOL_CLOSE_ADAPTER));
    library.entry_.GetProviderIdentity = reinterpret_cast<NDKCT_FN_GET_PROVIDER_IDENTITY*>(
        resolve(NDKCT_SYMBOL_GET_PROVIDER_IDENTITY));
    if (!missing.empty()) {
        std::string names;
        for (const auto& name : missing)
            names += (names.empty() ? "" : ", ") + name;
        throw ProviderLoadError("provider library " + path + " does not export " + names +
                                " (a provider exports NdkctOpenAdapter, NdkctCloseAdapter and "
                                "NdkctGetProviderIdentity with C linkage; see spec/PROVIDER.md)");
    }

    library.identity_ = library.entry_.GetProviderIdentity();
    const NDKCT_PROVIDER_IDENTITY* id = library.identity_;
    if (!id) throw ProviderLoadError(path + ": NdkctGetProviderIdentity returned NULL");
    if (id->Size < sizeof(NDKCT_PROVIDER_IDENTITY))
        throw ProviderLoadError(path + ": NDKCT_PROVIDER_IDENTITY.Size is " +
                                std::to_string(id->Size) + ", expected at least " +
                                std::to_string(sizeof(NDKCT_PROVIDER_IDENTITY)));
    if (id->AbiVersion != NDKCT_PROVIDER_ABI_VERSION)
        throw ProviderLoadError(path + ": built for provider ABI " +
                                std::to_string(id->AbiVersion) + ", this ndkct speaks " +
                                std::to_string(NDKCT_PROVIDER_ABI_VERSION));
    if (!id->Name || !*id->Name)
        throw ProviderLoadError(path + ": the provider identity has no Name");
    return library;
}

}  // namespace ndkct::loader
