#include <gtest/gtest.h>

#include <cstring>

#include "ndkct/loader/provider_library.hpp"

namespace ndkct::loader {
namespace {

std::string refusal(const std::string& path) {
    try {
        ProviderLibrary::open(path);
    } catch (const ProviderLoadError& error) {
        return error.what();
    }
    return "(loaded)";
}

TEST(Loader, ResolvesEveryEntryPointAndTheIdentity) {
    ProviderLibrary library = ProviderLibrary::open(FIXTURE_COMPLETE);
    EXPECT_STREQ(library.identity().Name, "loader-fixture");
    EXPECT_EQ(library.identity().NdkVersion.Minor, 2);
    ASSERT_NE(library.entry_points().OpenAdapter, nullptr);
    ASSERT_NE(library.entry_points().CloseAdapter, nullptr);
    // Calls really reach the library: its open explains why it fails.
    char message[128] = {};
    NDKCT_OPEN_OPTIONS options{};
    options.Size = sizeof options;
    options.ErrorMessage = message;
    options.ErrorMessageSize = sizeof message;
    NDK_ADAPTER* adapter = nullptr;
    EXPECT_EQ(library.entry_points().OpenAdapter(nullptr, &options, &adapter),
              NDIS_STATUS_ADAPTER_NOT_READY);
    EXPECT_STREQ(message, "fixture: no adapter behind this library");
    EXPECT_EQ(adapter, nullptr);
}

TEST(Loader, NamesTheMissingEntryPoint) {
    auto message = refusal(FIXTURE_INCOMPLETE);
    // Only the missing one is listed before the explanation.
    EXPECT_NE(message.find("does not export NdkctCloseAdapter (a provider exports"),
              std::string::npos)
        << message;
}

TEST(Loader, NamesAPathThatDoesNotExist) {
    auto message = refusal("/nonexistent/libvendor_ndk.so");
    EXPECT_NE(message.find("cannot load provider library /nonexistent/libvendor_ndk.so"),
              std::string::npos)
        << message;
}

TEST(Loader, RefusesAFileThatIsNotALibrary) {
    auto message = refusal("/etc/hostname");
    EXPECT_NE(message.find("cannot load provider library /etc/hostname"), std::string::npos)
        << message;
}

TEST(Loader, ALibraryWithoutAnyEntryPointNamesAllThree) {
    auto message = refusal("libm.so.6");
    EXPECT_NE(message.find("NdkctOpenAdapter, NdkctCloseAdapter, NdkctGetProviderIdentity"),
              std::string::npos)
        << message;
}

}  // namespace
}  // namespace ndkct::loader
