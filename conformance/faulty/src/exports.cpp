// The three entry points of every faulty provider (ndkct/provider.h): the reference provider's,
// with the adapter wrapped and the fault's identity.
#include <string>

#include "faulty.hpp"
#include "ndkct/adapters/model_provider.hpp"
#include "ndkct/spec/profile.hpp"
#include "wrap.hpp"

#define NDKCT_EXPORT extern "C" __attribute__((visibility("default")))

using ndkct::adapters::model_provider;
using ndkct::faulty::kFault;

NDKCT_EXPORT NTSTATUS NdkctOpenAdapter(const NDKCT_HOST_MEMORY* memory,
                                       const NDKCT_OPEN_OPTIONS* options, NDK_ADAPTER** adapter) {
    NDKCT_OPEN_OPTIONS edited{};
    std::string profile;
    if (kFault.adapter_profile && options) {
        edited = *options;
        profile = kFault.adapter_profile(options->ProfileJson
                                             ? std::string(options->ProfileJson)
                                             : ndkct::spec::builtin_profile("default").json);
        edited.ProfileJson = profile.c_str();
        options = &edited;
    }
    NTSTATUS status = model_provider().OpenAdapter(memory, options, adapter);
    if (status == STATUS_SUCCESS && adapter && *adapter) ndkct::faulty::opened(*adapter);
    return status;
}

NDKCT_EXPORT VOID NdkctCloseAdapter(NDK_ADAPTER* adapter) {
    model_provider().CloseAdapter(adapter);
}

NDKCT_EXPORT const NDKCT_PROVIDER_IDENTITY* NdkctGetProviderIdentity(VOID) {
    static const std::string name = std::string("faulty-") + kFault.name;
    static const std::string description =
        std::string("ndkct reference provider with one fault: breaks ") + kFault.rule + ": " +
        kFault.description;
    static const NDKCT_PROVIDER_IDENTITY identity = {
        sizeof(NDKCT_PROVIDER_IDENTITY),
        NDKCT_PROVIDER_ABI_VERSION,
        name.c_str(),
        "0.1.0",
        model_provider().GetProviderIdentity()->NdkVersion,
        description.c_str()};
    return &identity;
}
