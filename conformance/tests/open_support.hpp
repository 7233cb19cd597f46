// conformance/tests/open_support.hpp: opening further adapter instances of the provider under
// test straight through its entry points (NdkctOpenAdapter stands in for OpenNdkAdapter), with a
// chosen NDK_VERSION, and judging each open with the session's oracle (VER-02/04/05,
// ADP-OPEN-*). Also: a second session whose adapter reports, or lacks, one adapter flag.
#pragma once

#include <string>

#include "ndkct/conformance/suite.hpp"
#include "ndkct/model/expectation.hpp"
#include "ndkct/spec/profile.hpp"
#include "seed_support.hpp"

namespace ndkct::conformance::open {

// One adapter instance opened directly; closed (CloseNdkAdapter) when destroyed.
class DirectAdapter {
  public:
    DirectAdapter(const ProviderSpec& spec, platform::Arena& arena, NDK_VERSION requested)
        : entry_(entry_points_for(spec)) {
        profile_ = spec::resolve_profile(spec.profile).json;
        char message[512] = {};
        NDKCT_OPEN_OPTIONS options{};
        options.Size = sizeof options;
        options.Version = requested;
        options.ProfileJson = profile_.c_str();
        options.Seed = spec.seed;
        options.DeviceName = spec.device.empty() ? nullptr : spec.device.c_str();
        options.ErrorMessage = message;
        options.ErrorMessageSize = sizeof message;
        status = entry_.OpenAdapter(&arena.host_memory(), &options, &adapter);
        this->message = message;
    }
    ~DirectAdapter() {
        if (status == STATUS_SUCCESS && adapter) entry_.CloseAdapter(adapter);  // ADP-CLOSE-01
    }
    DirectAdapter(const DirectAdapter&) = delete;
    DirectAdapter& operator=(const DirectAdapter&) = delete;

    const NDK_ADAPTER_DISPATCH& dispatch() const { return *adapter->Dispatch; }
    // NdkQueryAdapterInfo on this instance; {} with a failure when it fails.
    NDK_ADAPTER_INFO info() const {
        NDK_ADAPTER_INFO i{};
        ULONG size = sizeof i;
        NTSTATUS s = dispatch().NdkQueryAdapterInfo(adapter, &i, &size);
        EXPECT_STATUS(STATUS_SUCCESS, s) << "NdkQueryAdapterInfo on a second instance";
        return i;
    }

    NTSTATUS status = STATUS_PENDING;
    NDK_ADAPTER* adapter = nullptr;  // stays nullptr unless the open succeeds
    std::string message;

  private:
    const NDKCT_PROVIDER_ENTRY_POINTS& entry_;
    std::string profile_;
};

inline std::string version_text(NDK_VERSION v) {
    return std::to_string(v.Major) + "." + std::to_string(v.Minor);
}

// Judges an open's status with the session's oracle (its readings carry the negotiated
// version): the violations go into the session's verdict, so the test fails naming them.
inline void judge_open(Session& s, NDK_VERSION requested, NTSTATUS status) {
    auto expectation = s.with_oracle([&](model::Model& m) { return m.expect_open(requested); });
    s.report(model::judge_inline(expectation, status,
                                 "OpenNdkAdapter(" + version_text(requested) + ")"));
}

// Every member of an adapter dispatch table is set (ADP-OPEN-01, AI-04, EXT-03).
inline void expect_complete(const NDK_ADAPTER_DISPATCH& d) {
    EXPECT_TRUE(d.NdkQueryExtension) << "NdkQueryExtension";
    EXPECT_TRUE(d.NdkQueryAdapterInfo) << "NdkQueryAdapterInfo";
    EXPECT_TRUE(d.NdkCreateCq) << "NdkCreateCq";
    EXPECT_TRUE(d.NdkCreatePd) << "NdkCreatePd";
    EXPECT_TRUE(d.NdkCreateSharedEndpoint) << "NdkCreateSharedEndpoint";
    EXPECT_TRUE(d.NdkCreateConnector) << "NdkCreateConnector";
    EXPECT_TRUE(d.NdkCreateListener) << "NdkCreateListener";
    EXPECT_TRUE(d.NdkBuildLAM) << "NdkBuildLAM";
    EXPECT_TRUE(d.NdkReleaseLAM) << "NdkReleaseLAM";
}

// A session of the same provider whose adapter reports `flag` (want = true) or lacks it: the
// running session when it already does, else a second session whose profile is edited (the
// reference provider follows it; another provider reports its own flags). nullptr when neither
// matches: the caller reports not_supported.
inline Session* session_with_flag(Session& current, std::unique_ptr<Session>& holder,
                                  const ProviderSpec& spec, ULONG flag, const char* name,
                                  bool want) {
    if (current.has_flag(flag) == want) return &current;
    std::vector<std::pair<std::string, std::string>> edit;
    if (want)
        edit = {{"\"AdapterFlags\": \\[", std::string("\"AdapterFlags\": [\"") + name + "\", "}};
    else
        edit = {{std::string("\"") + name + "\",?\\s*", ""}};
    holder = seed::session_with(spec, edit);
    if (!holder || holder->has_flag(flag) != want) return nullptr;
    return holder.get();
}

}  // namespace ndkct::conformance::open
