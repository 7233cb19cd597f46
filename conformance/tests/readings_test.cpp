// The readings the pages leave open (AMB-37, AMB-38, AMB-39, MODEL-RMR-LEN-02, AMB-09), each
// under both values of its profile knob (DESIGN section 5): whichever reading the profile picks,
// the oracle takes the provider's outcome without a failure (the reading not chosen is a
// warning), and the reference provider, which follows its profile, takes the reading chosen.
// A provider other than the reference one keeps its own behaviour under either knob value; these
// tests then show only that the oracle does not fail it.
#include <algorithm>
#include <cstring>
#include <regex>

#include "seed_support.hpp"

namespace ndkct::conformance {
namespace {

using seed::address_of;
using seed::fill;
using seed::kFarBase;
using Edits = std::vector<std::pair<std::string, std::string>>;

NDKCT_SUITE(Readings);

// The profile edit that sets policies.<name> to value (none when the profile has it already).
Edits knob(const ProviderSpec& spec, const std::string& name, const std::string& value) {
    std::string json = spec::resolve_profile(spec.profile).json;
    if (std::regex_search(json, std::regex("\"" + name + "\":\\s*\"" + value + "\""))) return {};
    return {{"\"" + name + "\":\\s*\"[a-z_]+\"", "\"" + name + "\": \"" + value + "\""}};
}

bool is_reference(const ProviderSpec& spec) {
    return spec.kind == "model";
}

// The warnings of a session that name rule.
size_t warnings_naming(Session& s, const std::string& rule) {
    auto verdict = s.verdict();
    return std::count_if(verdict.violations.begin(), verdict.violations.end(), [&](const auto& v) {
        return v.warning && std::find(v.rules.begin(), v.rules.end(), rule) != v.rules.end();
    });
}

// AMB-37: a read lands in a region registered with NDK_MR_FLAG_RDMA_READ_SINK and no local
// write, on an adapter that needs the sink right. local_write_and_sink (the default, as on
// verbs devices): the read fails; sink_flag_suffices: it lands.
NDKCT_TEST(Readings, ReadSinkRightsEitherReading, "ndk.readings.read_sink_rights", "AMB-37",
           "RMR-SINK-03", "RMR-ACC-02") {
    for (const char* value : {"local_write_and_sink", "sink_flag_suffices"}) {
        SCOPED_TRACE(value);
        Edits edits = knob(GetParam(), "read_sink_rights", value);
        if (session().has_flag(NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED)) {
            // Only the reference provider takes its adapter flags from the profile; another
            // adapter that does not need the sink right has no reading to test here.
            NDKCT_REQUIRE(is_reference(GetParam()), "an adapter that needs the read-sink right");
            edits.push_back({"\"RDMA_READ_SINK_NOT_REQUIRED\",?\\s*", ""});
        }
        auto s = seed::session_with(GetParam(), edits);
        ASSERT_TRUE(s);
        NDKCT_REQUIRE(!s->has_flag(NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED),
                      "an adapter that needs the read-sink right");
        {
            auto pair = s->loopback_pair();
            ASSERT_TRUE(pair.connected) << pair.problem;
            auto remote = s->buffer(PAGE_SIZE);
            auto sink = s->buffer(PAGE_SIZE);
            fill(remote, 4);
            auto r = s->register_buffer(pair.pd, remote, NDK_MR_FLAG_ALLOW_REMOTE_READ);
            auto k = s->register_buffer(pair.pd, sink, NDK_MR_FLAG_RDMA_READ_SINK);
            ASSERT_STATUS(STATUS_SUCCESS, r.status);
            ASSERT_STATUS(STATUS_SUCCESS, k.status);
            NDK_SGE into = Session::sge(sink, 0, 256, k.local_token);
            int read;
            ASSERT_STATUS(STATUS_SUCCESS, s->read(pair.a, &read, {&into, 1}, address_of(remote, 16),
                                                  r.remote_token, NDK_OP_FLAG_RDMA_READ_SINK));
            auto results = seed::settle(*s, pair.cq, 1);
            ASSERT_EQ(results.size(), 1u);
            if (is_reference(GetParam())) {
                NDKCT_RULE("AMB-37");
                bool lands = std::string(value) == "sink_flag_suffices";
                EXPECT_EQ(NT_SUCCESS(results[0].Status), lands)
                    << spec::status_name(results[0].Status);
                EXPECT_EQ(std::memcmp(sink.data(), remote.data() + 16, 256) == 0, lands);
                EXPECT_EQ(warnings_naming(*s, "AMB-37"), 0u);
            }
        }
        seed::finish(*s);
    }
}

// AMB-38: an initialization that fails after an earlier one succeeded. keep_previous (the
// default, as a device refuses a request without touching the MR): the earlier one stays in
// force and a fast registration within it works; unusable: the MR needs a new initialization
// (using it before is the consumer's error, so only the reference provider is asked that).
NDKCT_TEST(Readings, FailedInitializationEitherReading, "ndk.readings.fr_failed_initialization",
           "AMB-38", "IFR-ST-04", "IFR-APC-01") {
    for (const char* value : {"keep_previous", "unusable"}) {
        SCOPED_TRACE(value);
        auto s =
            seed::session_with(GetParam(), knob(GetParam(), "fr_failed_initialization", value));
        ASSERT_TRUE(s);
        bool keep = std::string(value) == "keep_previous";
        if (!keep && !is_reference(GetParam())) continue;  // the consumer's error: not asked
        {
            seed::Mappings maps(*s);
            auto pair = s->loopback_pair();
            ASSERT_TRUE(pair.connected) << pair.problem;
            auto memory = s->buffer(4 * PAGE_SIZE);
            auto& m = maps.add(memory);
            ASSERT_TRUE(m.ok());
            auto made = s->create_mr(pair.pd, true);
            ASSERT_TRUE(made.object);
            NDK_MR* mr = made.object;
            ASSERT_TRUE(s->initialize_fast_register_mr(mr, 4, true).ok());
            Done huge = s->initialize_fast_register_mr(mr, 0xFFFFFFFF, true);
            NDKCT_REQUIRE(!huge.ok(), "a refused initialization (0xFFFFFFFF pages was accepted)");
            int context;
            NTSTATUS got = s->fast_register(pair.a, &context, mr, m.pages, 0, 4 * PAGE_SIZE,
                                            kFarBase, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);
            if (got == STATUS_SUCCESS) {
                auto results = seed::settle(*s, pair.cq, 1);
                got = results.size() == 1 ? results[0].Status : STATUS_PENDING;
            }
            if (is_reference(GetParam())) {
                NDKCT_RULE("AMB-38", "IFR-APC-01");
                EXPECT_EQ(got == STATUS_SUCCESS, keep) << spec::status_name(got);
                EXPECT_EQ(warnings_naming(*s, "AMB-38"), 0u);
            }
        }
        seed::finish(*s);
    }
}

// AMB-39: a receive posted on a QP that was never connected. accept (the default: verbs QPs
// take receives from INIT, and SMB Direct posts its receives before connecting) or reject
// (STATUS_CONNECTION_INVALID inline).
NDKCT_TEST(Readings, ReceiveBeforeConnectEitherReading, "ndk.readings.receive_before_connect",
           "AMB-39", "CQP-STATE-02") {
    for (const char* value : {"accept", "reject"}) {
        SCOPED_TRACE(value);
        auto s = seed::session_with(GetParam(), knob(GetParam(), "receive_before_connect", value));
        ASSERT_TRUE(s);
        {
            auto pd = s->create_pd();
            auto cq = s->create_cq(16);
            ASSERT_TRUE(pd.object && cq.object);
            auto qp = s->create_qp(pd.object, cq.object, cq.object, nullptr, QpShape{});
            ASSERT_TRUE(qp.object);
            auto buffer = s->buffer(PAGE_SIZE);
            auto b = s->register_buffer(pd.object, buffer, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
            ASSERT_STATUS(STATUS_SUCCESS, b.status);
            NDK_SGE into = Session::sge(buffer, 0, 64, b.local_token);
            int context;
            NTSTATUS posted = s->receive(qp.object, &context, {&into, 1});
            if (is_reference(GetParam())) {
                NDKCT_RULE("AMB-39");
                EXPECT_STATUS(
                    std::string(value) == "accept" ? STATUS_SUCCESS : STATUS_CONNECTION_INVALID,
                    posted);
                EXPECT_EQ(warnings_naming(*s, "AMB-39") + warnings_naming(*s, "CQP-STATE-02"), 0u);
            }
        }
        seed::finish(*s);
    }
}

// MODEL-RMR-LEN-02: NdkRegisterMr with Length 0. reject (the default: verbs devices refuse an
// empty registration on some transports) or accept (an empty region).
NDKCT_TEST(Readings, ZeroLengthRegistrationEitherReading, "ndk.readings.zero_length_mapping",
           "MODEL-RMR-LEN-02") {
    for (const char* value : {"reject", "accept"}) {
        SCOPED_TRACE(value);
        auto s = seed::session_with(GetParam(), knob(GetParam(), "zero_length_mapping", value));
        ASSERT_TRUE(s);
        {
            auto pd = s->create_pd();
            ASSERT_TRUE(pd.object);
            auto mr = s->create_mr(pd.object, false);
            ASSERT_TRUE(mr.object);
            auto buffer = s->buffer(PAGE_SIZE);
            auto chain = platform::describe(buffer, 0, PAGE_SIZE);
            Done d = s->register_mr(mr.object, chain.head(), 0, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
            if (is_reference(GetParam())) {
                NDKCT_RULE("MODEL-RMR-LEN-02");
                EXPECT_EQ(d.ok(), std::string(value) == "accept")
                    << spec::status_name(d.final_status);
                EXPECT_EQ(warnings_naming(*s, "MODEL-RMR-LEN-02"), 0u);
            }
        }
        seed::finish(*s);
    }
}

// AMB-09: NdkInitializeFastRegisterMr with AdapterPageCount 0. reject (the default:
// STATUS_INVALID_PARAMETER) or accept (only 0-page fast registrations are then supported).
NDKCT_TEST(Readings, ZeroAdapterPageCountEitherReading, "ndk.readings.zero_adapter_page_count",
           "AMB-09", "IFR-APC-03") {
    for (const char* value : {"reject", "accept"}) {
        SCOPED_TRACE(value);
        auto s = seed::session_with(GetParam(), knob(GetParam(), "zero_adapter_page_count", value));
        ASSERT_TRUE(s);
        {
            auto pd = s->create_pd();
            ASSERT_TRUE(pd.object);
            auto mr = s->create_mr(pd.object, true);
            ASSERT_TRUE(mr.object);
            Done d = s->initialize_fast_register_mr(mr.object, 0, true);
            if (is_reference(GetParam())) {
                NDKCT_RULE("AMB-09");
                EXPECT_EQ(d.ok(), std::string(value) == "accept")
                    << spec::status_name(d.final_status);
                EXPECT_EQ(warnings_naming(*s, "AMB-09"), 0u);
            }
        }
        seed::finish(*s);
    }
}

}  // namespace
}  // namespace ndkct::conformance
