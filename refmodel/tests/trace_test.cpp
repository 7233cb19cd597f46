// The model agrees with itself: a mixed workload run in simulate mode (the model as provider),
// recorded as calls and outcomes, replays through a fresh check-mode model without a single
// violation or warning, and leaves nothing outstanding. This exercises expect/apply/complete,
// pending paths, the connection flow, tokens, fast registration and invalidation, and
// observe_completion with real landings, on thousands of calls.
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "ndkct/spec/profile.hpp"
#include "trace.hpp"

namespace ndkct::model::test {
namespace {

class Trace : public ::testing::TestWithParam<std::string> {};

TEST_P(Trace, SimulatedRunReplaysCleanInCheckMode) {
    Readings readings = read_profile(spec::builtin_profile(GetParam()));
    platform::Arena arena(256, 5);
    trace::Recorder recorder(arena, readings, 42);
    trace::Trace t = recorder.record(3000);
    EXPECT_GT(t.calls, 3000u);
    EXPECT_GT(t.completions, 1000u);

    Model check(
        readings,
        {static_cast<std::byte*>(arena.host_memory().PhysicalBase), arena.host_memory().PageCount},
        Mode::check);
    check.open_adapter();
    trace::Replayed r = trace::replay(t, check);
    EXPECT_EQ(r.steps, t.steps.size());
    EXPECT_TRUE(r.verdict.clean()) << r.verdict.describe().substr(0, 4000);
    for (ObjectId qp : t.qps) {
        Verdict rest = check.expect_nothing_outstanding(qp);
        EXPECT_TRUE(rest.clean()) << rest.describe().substr(0, 2000);
    }
}

INSTANTIATE_TEST_SUITE_P(Profiles, Trace, ::testing::ValuesIn(spec::builtin_profile_names()),
                         [](const auto& param_info) {
                             std::string name = param_info.param;
                             for (char& c : name)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return name;
                         });

// A provider that moved one transfer's bytes wrongly is caught in the replay.
TEST(TraceCorruption, ACorruptedLandingIsCaught) {
    Readings readings = read_profile(spec::builtin_profile("default"));
    platform::Arena arena(256, 5);
    trace::Recorder recorder(arena, readings, 7);
    trace::Trace t = recorder.record(200);
    // Scribble over the last byte of every odd page: sources and targets sit on scattered pages,
    // so some target no longer holds what its source (and its completion) says.
    Model check(
        readings,
        {static_cast<std::byte*>(arena.host_memory().PhysicalBase), arena.host_memory().PageCount},
        Mode::check);
    check.open_adapter();
    for (PFN_NUMBER pfn = 1; pfn < arena.page_count(); pfn += 2)
        arena.physical_page(pfn)[PAGE_SIZE - 1] ^= std::byte{0x5A};
    trace::Replayed r = trace::replay(t, check);
    EXPECT_FALSE(r.verdict.ok());
}

}  // namespace
}  // namespace ndkct::model::test
