// Profiles: the shipped ones load; a bad one is refused with the field and line named.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ndkct/spec/profile.hpp"

namespace ndkct::spec {
namespace {

std::string refusal(const std::string& text) {
    try {
        load_profile(text, "test.json");
    } catch (const ProfileError& error) {
        return error.what();
    }
    return "(accepted)";
}

// The first string-valued policy knob of the default profile, to build bad values from.
std::string some_policy() {
    for (const auto& [path, value] : builtin_profile("default").settings)
        if (path.starts_with("policies.") && std::holds_alternative<std::string>(value))
            return path.substr(9);
    return {};
}

TEST(Profile, EveryShippedProfileLoads) {
    auto names = builtin_profile_names();
    EXPECT_GE(names.size(), 3u);
    for (const auto& name : names) {
        EXPECT_NO_THROW({
            auto profile = builtin_profile(name);
            EXPECT_EQ(profile.name, name);
            EXPECT_FALSE(profile.description.empty()) << name;
        }) << name;
    }
}

TEST(Profile, DefaultProfileDescribesAUsableAdapter) {
    auto profile = builtin_profile("default");
    const NDK_ADAPTER_INFO& info = profile.adapter_info;
    EXPECT_EQ(info.Version.Major, 2);
    EXPECT_EQ(info.Version.Minor, 1);
    EXPECT_GE(info.FRMRPageCount, 16u);  // AI-02: every provider supports at least 16
    EXPECT_GT(info.MaxCqDepth, 0u);
    EXPECT_GT(info.MaxInitiatorQueueDepth, 0u);
    EXPECT_GT(info.MaxReceiveQueueDepth, 0u);
    EXPECT_GT(info.MaxRegistrationSize, 0u);
    EXPECT_NE(info.AdapterFlags, 0u);
    EXPECT_FALSE(some_policy().empty());
}

TEST(Profile, OmittedFieldsTakeTheSchemaDefaults) {
    auto minimal = load_profile(R"({"name": "minimal"})", "minimal.json");
    auto full = builtin_profile("default");
    EXPECT_EQ(minimal.settings, full.settings);
    EXPECT_EQ(std::memcmp(&minimal.adapter_info, &full.adapter_info, sizeof(NDK_ADAPTER_INFO)), 0);
}

TEST(Profile, VersionFollowsNdkVersion) {
    auto profile = load_profile(R"({"name": "old", "ndk_version": "1.2"})", "old.json");
    EXPECT_EQ(profile.version.Major, 1);
    EXPECT_EQ(profile.version.Minor, 2);
    EXPECT_EQ(profile.adapter_info.Version.Minor, 2);
}

TEST(Profile, SyntaxErrorNamesTheLine) {
    auto message = refusal("{\n  \"name\": \"x\",\n  \"ndk_version\": 2.1.3\n}");
    EXPECT_NE(message.find("test.json:3"), std::string::npos) << message;
    EXPECT_NE(message.find("not valid JSON"), std::string::npos) << message;
}

TEST(Profile, UnknownFieldIsNamedWithItsLine) {
    auto message = refusal("{\n  \"name\": \"x\",\n  \"bogus\": 1\n}");
    EXPECT_NE(message.find("test.json:3: bogus: unknown field"), std::string::npos) << message;
}

TEST(Profile, WrongTypeIsNamed) {
    auto message = refusal(R"({"name": "x", "adapter_info": {"MaxCqDepth": "lots"}})");
    EXPECT_NE(message.find("adapter_info.MaxCqDepth: expected integer"), std::string::npos)
        << message;
}

TEST(Profile, FrmrPageCountBelowTheDocumentedMinimumIsRefused) {
    auto message =
        refusal("{\n \"name\": \"x\",\n \"adapter_info\": {\n  \"FRMRPageCount\": 8\n }\n}");
    EXPECT_NE(
        message.find("test.json:4: adapter_info.FRMRPageCount: value 8 is below the minimum 16"),
        std::string::npos)
        << message;
}

TEST(Profile, UnknownAdapterFlagIsRefused) {
    auto message = refusal(R"({"name": "x", "adapter_info": {"AdapterFlags": ["WARP_DRIVE"]}})");
    EXPECT_NE(message.find("adapter_info.AdapterFlags[0]"), std::string::npos) << message;
}

TEST(Profile, UnknownPolicyReadingIsRefused) {
    std::string knob = some_policy();
    ASSERT_FALSE(knob.empty());
    auto message = refusal(R"({"name": "x", "policies": {")" + knob + R"(": "no_such_reading"}})");
    EXPECT_NE(message.find("policies." + knob + ": \"no_such_reading\" is not one of"),
              std::string::npos)
        << message;
}

TEST(Profile, MissingNameIsRefused) {
    EXPECT_NE(refusal(R"({"ndk_version": "2.1"})").find("missing required field \"name\""),
              std::string::npos);
}

TEST(Profile, UnknownBuiltinNameListsTheKnownOnes) {
    try {
        builtin_profile("no-such-profile");
        FAIL() << "accepted";
    } catch (const ProfileError& error) {
        EXPECT_NE(std::string(error.what()).find("default"), std::string::npos) << error.what();
    }
}

TEST(Profile, TypedAccessNamesAMissingSetting) {
    auto profile = builtin_profile("default");
    try {
        profile.text("policies.no_such_knob");
        FAIL() << "accepted";
    } catch (const ProfileError& error) {
        EXPECT_NE(std::string(error.what()).find("policies.no_such_knob does not exist"),
                  std::string::npos)
            << error.what();
    }
}

}  // namespace
}  // namespace ndkct::spec
