// NdkRegisterMr (RMR-*): contiguity, lengths, flags, status forms, and what a registration
// grants once it is in force (checked by moving real bytes in simulate mode).
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

class RegisterMr : public ::testing::Test {
  protected:
    Harness h;
    ObjectId pd = h.pd();
    ObjectId mr = h.mr(pd, false);
    LockedBuffer buffer = h.arena.allocate(8 * PAGE_SIZE);

    calls::RegisterMr call(const MdlChain& chain, uint64_t length, uint32_t flags = 0) {
        return calls::RegisterMr{mr, view_mdl(chain.head(), length), length, flags};
    }
    const MrState& state(ObjectId id) { return *h.model.state_of<MrState>(id); }
};

// RMR-ST-01, RMR-LEN-03, RMR-VA-01: a contiguous single MDL registers [VA, VA + Length).
TEST_F(RegisterMr, ContiguousMdlSucceedsInlineAndRegistersTheVaRange) {
    MdlChain chain = platform::describe(buffer, 100, 3 * PAGE_SIZE);
    calls::RegisterMr c = call(chain, 3 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    Expectation e = h.model.expect(c);
    EXPECT_FALSE(e.must_fail()) << describe(e);
    EXPECT_TRUE(e.may_pend);
    EXPECT_TRUE(e.may_lack_resources);
    h.accept(c);
    const MrState& s = state(mr);
    EXPECT_EQ(s.phase, MrState::Phase::registered);
    EXPECT_EQ(s.region.base, reinterpret_cast<uintptr_t>(buffer.data() + 100));
    EXPECT_EQ(s.region.length, 3 * PAGE_SIZE);
    EXPECT_EQ(s.region.first_byte_offset, 100u);
    EXPECT_EQ(s.region.pages.size(), 4u);  // 100 + 3 pages spans four
}

// RMR-MDL-05: one MDL and a chain of several describing the same range give the same region.
TEST_F(RegisterMr, SplitChainGivesTheSameRegionAsOneMdl) {
    MdlChain one = platform::describe(buffer, 300, 2 * PAGE_SIZE + 50);
    const size_t pieces[] = {PAGE_SIZE - 300 + 10, 1000,
                             2 * PAGE_SIZE + 50 - (PAGE_SIZE - 300 + 10) - 1000};
    MdlChain split = platform::describe_split(buffer, 300, pieces);
    ObjectId other = h.mr(pd, false);
    h.accept(call(one, 2 * PAGE_SIZE + 50));
    h.accept(calls::RegisterMr{other, view_mdl(split.head(), 2 * PAGE_SIZE + 50),
                               2 * PAGE_SIZE + 50, 0});
    EXPECT_EQ(state(mr).region.base, state(other).region.base);
    EXPECT_EQ(state(mr).region.pages, state(other).region.pages);
    EXPECT_EQ(state(mr).region.first_byte_offset, state(other).region.first_byte_offset);
}

// RMR-MDL-01: a hole in the chain within Length must be refused with STATUS_INVALID_PARAMETER
// (documented: success, or another error, is a violation).
TEST_F(RegisterMr, ChainWithAHoleIsRefusedWithInvalidParameter) {
    MdlChain chain = platform::with_hole(buffer, 0, PAGE_SIZE, PAGE_SIZE, PAGE_SIZE);
    calls::RegisterMr c = call(chain, 2 * PAGE_SIZE);
    Expectation e = h.model.expect(c);
    ASSERT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "RMR-MDL-01")) << describe(e);
    EXPECT_EQ(e.failures[0].strength, Strength::documented);
    Verdict accepted = judge_inline(e, STATUS_SUCCESS, "NdkRegisterMr");
    EXPECT_TRUE(violation_names(accepted, "RMR-MDL-01")) << accepted.describe();
    Verdict other = judge_inline(e, STATUS_NOT_SUPPORTED, "NdkRegisterMr");
    EXPECT_TRUE(violation_names(other, "RMR-MDL-01")) << other.describe();
    // The refusal may come through the callback (RMR-MDL-01 lists STATUS_PENDING).
    Applied a = h.accept(c, pending());
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_INVALID_PARAMETER).verdict.clean());
    EXPECT_EQ(state(mr).phase, MrState::Phase::unregistered);
    // Apply the inline refusal: the MR stays unregistered (RMR-ST-04).
    h.accept(c, status(STATUS_INVALID_PARAMETER));
    EXPECT_EQ(state(mr).phase, MrState::Phase::unregistered);
}

// RMR-MDL-01: a joint that does not line up is not contiguous either.
TEST_F(RegisterMr, MisalignedJointIsRefused) {
    MdlChain chain = platform::with_misaligned_joint(buffer, 0, PAGE_SIZE / 2, PAGE_SIZE);
    Expectation e = h.model.expect(call(chain, chain.byte_count()));
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "RMR-MDL-01")) << describe(e);
}

// RMR-MDL-04: contiguity matters only for the first Length bytes.
TEST_F(RegisterMr, ChainContiguousForLengthIsAcceptedDespiteALaterHole) {
    MdlChain chain = platform::with_hole(buffer, 0, 2 * PAGE_SIZE, PAGE_SIZE, PAGE_SIZE);
    Expectation e = h.model.expect(call(chain, 2 * PAGE_SIZE));
    EXPECT_FALSE(e.must_fail()) << describe(e);
    // A provider that checks the whole chain and refuses it breaks RMR-MDL-04, named first for
    // whole pages (ahead of RMR-MDL-05: the chain has two MDLs).
    Verdict refused = judge_inline(e, STATUS_INVALID_PARAMETER, "NdkRegisterMr");
    ASSERT_FALSE(refused.violations.empty());
    EXPECT_EQ(refused.violations.front().rules.front(), "RMR-MDL-04") << refused.describe();
    // A partial page: RMR-LEN-03 stays first (a refusal of it is as likely the partial page's),
    // RMR-MDL-04 right after.
    Verdict partial = judge_inline(h.model.expect(call(chain, PAGE_SIZE + 100)),
                                   STATUS_INVALID_PARAMETER, "NdkRegisterMr");
    ASSERT_FALSE(partial.violations.empty());
    const auto& rules = partial.violations.front().rules;
    ASSERT_GE(rules.size(), 2u) << partial.describe();
    EXPECT_EQ(rules[0], "RMR-LEN-03") << partial.describe();
    EXPECT_EQ(rules[1], "RMR-MDL-04") << partial.describe();
    // A chain contiguous to its end: a refusal does not name RMR-MDL-04.
    MdlChain whole = platform::describe(buffer, 0, 3 * PAGE_SIZE);
    Verdict plain = judge_inline(h.model.expect(call(whole, 2 * PAGE_SIZE)),
                                 STATUS_INVALID_PARAMETER, "NdkRegisterMr");
    ASSERT_FALSE(plain.violations.empty());
    EXPECT_FALSE(violation_names(plain, "RMR-MDL-04")) << plain.describe();
}

// RMR-LEN-01, AMB-26: a Length beyond the chain (a short chain) is the caller's error: the
// reference refuses it with STATUS_INVALID_PARAMETER; another error passes (advisory), and under
// invalid_parameter_required every other outcome is a warning, never a failure.
TEST_F(RegisterMr, LengthBeyondTheChainFails) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    Expectation at = h.model.expect(call(chain, PAGE_SIZE));
    EXPECT_FALSE(at.must_fail()) << describe(at);
    Expectation over = h.model.expect(call(chain, PAGE_SIZE + 1));
    EXPECT_TRUE(fails_with(over, STATUS_INVALID_PARAMETER, "RMR-LEN-01")) << describe(over);
    Verdict v = judge_inline(over, STATUS_INVALID_BUFFER_SIZE, "NdkRegisterMr");
    EXPECT_TRUE(v.clean()) << v.describe();
    EXPECT_TRUE(over.consumer_error);
    Harness strict(Mode::simulate,
                   readings_with("limit_violation_status", "invalid_parameter_required"));
    ObjectId m = strict.mr(strict.pd(), false);
    LockedBuffer b = strict.arena.allocate(PAGE_SIZE);
    MdlChain c2 = platform::describe(b, 0, PAGE_SIZE);
    Expectation e2 = strict.model.expect(
        calls::RegisterMr{m, view_mdl(c2.head(), PAGE_SIZE + 1), PAGE_SIZE + 1, 0});
    Verdict other = judge_inline(e2, STATUS_INVALID_BUFFER_SIZE, "NdkRegisterMr");
    EXPECT_TRUE(other.ok());
    EXPECT_TRUE(warning_names(other, "AMB-26"));
    Verdict accepted = judge_inline(e2, STATUS_SUCCESS, "NdkRegisterMr");
    EXPECT_TRUE(accepted.ok());
    EXPECT_TRUE(warning_names(accepted, "RMR-LEN-01"));
}

// RMR-LEN-02, RMR-LEN-03, MODEL-RMR-LEN-01: MaxRegistrationSize itself is accepted, one byte more
// is refused with the profile's status.
TEST_F(RegisterMr, LengthAtAndOnePastMaxRegistrationSize) {
    Readings r = default_readings();
    r.adapter_info.MaxRegistrationSize = 2 * PAGE_SIZE;
    Harness small(Mode::simulate, r);
    ObjectId m = small.mr(small.pd(), false);
    LockedBuffer b = small.arena.allocate(4 * PAGE_SIZE);
    MdlChain chain = platform::describe(b, 0, 4 * PAGE_SIZE);
    auto at = [&](uint64_t length) {
        return small.model.expect(calls::RegisterMr{m, view_mdl(chain.head(), length), length, 0});
    };
    EXPECT_FALSE(at(2 * PAGE_SIZE).must_fail()) << describe(at(2 * PAGE_SIZE));
    Expectation over = at(2 * PAGE_SIZE + 1);
    EXPECT_TRUE(fails_with(over, STATUS_INVALID_PARAMETER, "RMR-LEN-02")) << describe(over);
    EXPECT_TRUE(failure_names(over, "MODEL-RMR-LEN-01"));
    EXPECT_TRUE(violation_names(judge_inline(over, STATUS_SUCCESS, "x"), "RMR-LEN-02"));

    Readings r2 = readings_with("over_max_registration_status", "insufficient_resources");
    r2.adapter_info.MaxRegistrationSize = 2 * PAGE_SIZE;
    Harness res(Mode::simulate, r2);
    ObjectId m2 = res.mr(res.pd(), false);
    LockedBuffer b2 = res.arena.allocate(4 * PAGE_SIZE);
    MdlChain c2 = platform::describe(b2, 0, 4 * PAGE_SIZE);
    Expectation e2 = res.model.expect(
        calls::RegisterMr{m2, view_mdl(c2.head(), 3 * PAGE_SIZE), 3 * PAGE_SIZE, 0});
    EXPECT_TRUE(fails_with(e2, STATUS_INSUFFICIENT_RESOURCES, "RMR-LEN-02")) << describe(e2);
}

// MODEL-RMR-LEN-02: Length 0 is refused by default, accepted with the knob.
TEST_F(RegisterMr, ZeroLengthFollowsTheProfile) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    EXPECT_TRUE(
        fails_with(h.model.expect(call(chain, 0)), STATUS_INVALID_PARAMETER, "MODEL-RMR-LEN-02"));
    Harness lax(Mode::simulate, readings_with("zero_length_mapping", "accept"));
    ObjectId m = lax.mr(lax.pd(), false);
    LockedBuffer b = lax.arena.allocate(PAGE_SIZE);
    MdlChain c = platform::describe(b, 0, PAGE_SIZE);
    EXPECT_FALSE(lax.model.expect(calls::RegisterMr{m, view_mdl(c.head(), 0), 0, 0}).must_fail());
}

// RMR-FLG-01, RMR-FLG-03, RMR-FLG-04, RMR-SINK-02/03: every documented combination is valid; 0x5
// carries local write; 0x1 does not grant remote write.
TEST_F(RegisterMr, DocumentedFlagCombinationsAreValidAndMapToRights) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    for (uint32_t flags = 0; flags <= 0xF; ++flags)
        EXPECT_FALSE(h.model.expect(call(chain, PAGE_SIZE, flags)).must_fail()) << flags;
    struct Case {
        uint32_t flags;
        uint32_t access;
    } cases[] = {
        {0x0, 0},
        {NDK_MR_FLAG_ALLOW_LOCAL_WRITE, kLocalWrite},
        {NDK_MR_FLAG_ALLOW_REMOTE_READ, kRemoteRead},
        {NDK_MR_FLAG_ALLOW_REMOTE_WRITE, kLocalWrite | kRemoteWrite},  // 0x5 carries 0x1
        {NDK_MR_FLAG_RDMA_READ_SINK | NDK_MR_FLAG_ALLOW_LOCAL_WRITE, kLocalWrite | kReadSink},
        {0xF, kLocalWrite | kRemoteRead | kRemoteWrite | kReadSink},
    };
    for (const Case& c : cases) {
        ObjectId m = h.mr(pd, false);
        h.accept(calls::RegisterMr{m, view_mdl(chain.head(), PAGE_SIZE), PAGE_SIZE, c.flags});
        EXPECT_EQ(state(m).region.access, c.access) << "Flags " << c.flags;
    }
}

// AMB-03: the lone remote-write bit 0x4 reads as 0x5 by default, and is refused with the knob.
TEST_F(RegisterMr, LoneRemoteWriteBitFollowsTheProfile) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    calls::RegisterMr c = call(chain, PAGE_SIZE, NDKCT_MR_FLAG_REMOTE_WRITE_BIT);
    EXPECT_FALSE(h.model.expect(c).must_fail());
    h.accept(c);
    EXPECT_EQ(state(mr).region.access, static_cast<uint32_t>(kLocalWrite | kRemoteWrite));
    Harness strict(Mode::simulate, readings_with("lone_remote_write_bit", "reject"));
    ObjectId m = strict.mr(strict.pd(), false);
    LockedBuffer b = strict.arena.allocate(PAGE_SIZE);
    MdlChain c2 = platform::describe(b, 0, PAGE_SIZE);
    Expectation e =
        strict.model.expect(calls::RegisterMr{m, view_mdl(c2.head(), PAGE_SIZE), PAGE_SIZE, 0x4});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "AMB-03")) << describe(e);
}

// AMB-04: undocumented flag bits are ignored by default and refused with the knob.
TEST_F(RegisterMr, UnknownFlagBitsFollowTheProfile) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    EXPECT_FALSE(h.model.expect(call(chain, PAGE_SIZE, 0x10)).must_fail());
    Harness strict(Mode::simulate, readings_with("unknown_flags", "reject"));
    ObjectId m = strict.mr(strict.pd(), false);
    LockedBuffer b = strict.arena.allocate(PAGE_SIZE);
    MdlChain c2 = platform::describe(b, 0, PAGE_SIZE);
    Expectation e =
        strict.model.expect(calls::RegisterMr{m, view_mdl(c2.head(), PAGE_SIZE), PAGE_SIZE, 0x10});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "AMB-04")) << describe(e);
}

// RMR-PRE-01, AMB-16: on a fast-register MR, or on an MR already registered, it is a consumer
// error answered with the profile's status; a success only makes the MR's state unknown.
TEST_F(RegisterMr, OnAFastRegisterOrRegisteredMrIsAConsumerError) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    ObjectId fr = h.mr(pd, true);
    Expectation e =
        h.model.expect(calls::RegisterMr{fr, view_mdl(chain.head(), PAGE_SIZE), PAGE_SIZE, 0});
    EXPECT_TRUE(e.consumer_error);
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_DEVICE_STATE, "RMR-PRE-01")) << describe(e);
    h.accept(call(chain, PAGE_SIZE));
    Expectation twice = h.model.expect(call(chain, PAGE_SIZE));
    EXPECT_TRUE(twice.consumer_error);
    EXPECT_TRUE(fails_with(twice, STATUS_INVALID_DEVICE_STATE, "AMB-16"));
    // Accepting it is only a warning; the MR's state is then unknown.
    Applied a = h.model.apply(call(chain, PAGE_SIZE), status(STATUS_SUCCESS));
    EXPECT_TRUE(a.verdict.ok());
    EXPECT_TRUE(warning_names(a.verdict, "RMR-PRE-01"));
    EXPECT_TRUE(state(mr).indeterminate);
    EXPECT_TRUE(h.model.expect(call(chain, PAGE_SIZE)).undefined);
}

// RMR-ST-02, RMR-TOK-01/02: after STATUS_PENDING the MR is registered when the callback reports
// success; its tokens may be read only then.
TEST_F(RegisterMr, PendingThenCompletedRegisters) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    Applied a = h.accept(call(chain, PAGE_SIZE), pending());
    EXPECT_EQ(state(mr).phase, MrState::Phase::registering);
    EXPECT_TRUE(h.model.expect(calls::GetLocalTokenFromMr{mr}).undefined);
    EXPECT_TRUE(
        h.model.expect(calls::RegisterMr{mr, view_mdl(chain.head(), PAGE_SIZE), PAGE_SIZE, 0})
            .consumer_error);
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_SUCCESS).verdict.clean());
    EXPECT_EQ(state(mr).phase, MrState::Phase::registered);
    EXPECT_FALSE(h.model.expect(calls::GetLocalTokenFromMr{mr}).undefined);
    EXPECT_FALSE(h.model.expect(calls::GetRemoteTokenFromMr{mr}).undefined);
    uint32_t t = h.local_token(mr);
    EXPECT_EQ(h.model.object_of_token(h.adapter, t, false), mr);
    // TOK-01: the same registration keeps its token.
    Observed other;
    other.value = t + 1;
    EXPECT_TRUE(
        violation_names(h.model.apply(calls::GetLocalTokenFromMr{mr}, other).verdict, "TOK-01"));
}

// RMR-ST-03: resources may be lacking inline or through the callback; no registration results.
TEST_F(RegisterMr, InsufficientResourcesInlineOrAsync) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    h.accept(call(chain, PAGE_SIZE), status(STATUS_INSUFFICIENT_RESOURCES));
    EXPECT_EQ(state(mr).phase, MrState::Phase::unregistered);
    // A refusal of the next (valid) registration names RMR-ST-03 first: the failed one left
    // something registered after all.
    Expectation next = h.model.expect(call(chain, PAGE_SIZE));
    ASSERT_FALSE(next.success_rules.empty());
    EXPECT_EQ(std::string_view(*next.success_rules.begin()), "RMR-ST-03");
    Applied a = h.accept(call(chain, PAGE_SIZE), pending());
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_INSUFFICIENT_RESOURCES).verdict.clean());
    EXPECT_EQ(state(mr).phase, MrState::Phase::unregistered);
    // RMR-ST-02: a valid request failing through the callback with another error is a violation.
    Applied b = h.accept(call(chain, PAGE_SIZE), pending());
    EXPECT_TRUE(violation_names(h.model.complete(b.pending, STATUS_INVALID_PARAMETER).verdict,
                                "RMR-ST-01"));
}

// RMR-DEREG-01, DMR-01: after deregistration the tokens reach nothing; DeregisterMr of an
// unregistered MR is a consumer error.
TEST_F(RegisterMr, DeregistrationEndsTheTokens) {
    Region r = h.register_mr(pd, buffer, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    EXPECT_EQ(h.model.object_of_token(h.adapter, r.remote, true), r.mr);
    h.accept(calls::DeregisterMr{r.mr});
    EXPECT_EQ(h.model.object_of_token(h.adapter, r.remote, true), 0u);
    EXPECT_EQ(h.model.object_of_token(h.adapter, r.local, false), 0u);
    EXPECT_TRUE(h.model.expect(calls::DeregisterMr{r.mr}).consumer_error);
}

// ---- What a registration grants, with real bytes (simulate mode) ----

class RegisteredAccess : public ::testing::Test {
  protected:
    Harness h;
    Pair p = h.connected_pair();
    LockedBuffer source = h.arena.allocate(2 * PAGE_SIZE);
    LockedBuffer target = h.arena.allocate(2 * PAGE_SIZE);

    // Writes `bytes` bytes from the start of source to `address` through `token`; returns the
    // completion on QP A's CQ.
    Completion write(const Region& from, uint64_t address, uint32_t token, uint32_t bytes,
                     Context ctx = 0x51) {
        h.accept(calls::Write{p.qp_a, ctx, {{from.va, bytes, from.local}}, address, token, 0});
        auto entries = h.drain(p.cq_a);
        EXPECT_EQ(entries.size(), 1u);
        return entries.empty() ? Completion{} : entries[0];
    }
};

// RMR-FLG-02, RMR-VA-01, RMR-TOK-01/02, WRT-01: Flags 0 is a valid local source; a remote-write
// registration takes the bytes at VA + offset.
TEST_F(RegisteredAccess, WriteLandsAtVaPlusOffset) {
    fill(source.bytes(), 3);
    Region from = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0);
    Region to = h.register_mr(p.pd, target, 0, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    Completion c = write(from, to.va + 100, to.remote, 300);
    EXPECT_EQ(c.outcome, Completion::Outcome::success) << c.why;
    EXPECT_EQ(c.type, NdkOperationTypeWrite);
    EXPECT_EQ(std::memcmp(target.data() + 100, source.data(), 300), 0);
    EXPECT_EQ(target.data()[99], std::byte{0});
    EXPECT_EQ(target.data()[400], std::byte{0});
}

// RMR-FLG-04: local write 0x1 without the 0x4 bit does not let a peer write.
TEST_F(RegisteredAccess, LocalWriteAloneGrantsNoRemoteWrite) {
    Region from = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0);
    Region to = h.register_mr(p.pd, target, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    Completion c = write(from, to.va, to.remote, 64);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(c.rules, "RMR-FLG-04")) << c.why;
    EXPECT_EQ(target.data()[0], std::byte{0});
}

// RMR-ACC-03: an access beyond [VA, VA + Length) fails and touches nothing.
TEST_F(RegisteredAccess, AccessBeyondTheRegionFails) {
    fill(source.bytes(), 9);
    Region from = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0);
    Region to = h.register_mr(p.pd, target, 0, 1000, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    Completion c = write(from, to.va + 900, to.remote, 101);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(c.rules, "RMR-ACC-03")) << c.why;
    EXPECT_EQ(target.data()[900], std::byte{0});
}

// RMR-VA-02: addresses are VA-based; the bare offset 0 does not reach the region.
TEST_F(RegisteredAccess, ZeroBasedAddressDoesNotReachTheRegion) {
    Region from = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0);
    Region to = h.register_mr(p.pd, target, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    ASSERT_NE(to.va, 0u);
    Completion c = write(from, 0, to.remote, 16);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
    ASSERT_FALSE(c.rules.empty());
    EXPECT_EQ(c.rules.front(), "RMR-VA-02") << c.why;  // named before RMR-ACC-03
}

// RMR-VA-01: a region registered from mid-page starts at VA (StartVa + ByteOffset): an access
// before it, inside [StartVa, StartVa + Length), fails and names that rule first.
TEST_F(RegisteredAccess, AccessBetweenStartVaAndVaNamesTheRegionStart) {
    Region from = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0);
    Region to = h.register_mr(p.pd, target, 512, 1024, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    Completion c = write(from, to.va - 4, to.remote, 8);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
    ASSERT_FALSE(c.rules.empty());
    EXPECT_EQ(c.rules.front(), "RMR-VA-01") << c.why;
}

// RMR-ACC-01: a read needs remote read at the target; RMR-SINK-03: a sink registration works.
TEST_F(RegisteredAccess, ReadNeedsRemoteReadAndASink) {
    fill(target.bytes(), 21);
    Region sink = h.register_mr(p.pd, source, 0, PAGE_SIZE,
                                NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    Region readable = h.register_mr(p.pd, target, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    h.accept(
        calls::Read{p.qp_a, 0x61, {{sink.va, 512, sink.local}}, readable.va, readable.remote, 0});
    auto ok = h.drain(p.cq_a);
    ASSERT_EQ(ok.size(), 1u);
    EXPECT_EQ(ok[0].outcome, Completion::Outcome::success) << ok[0].why;
    EXPECT_EQ(std::memcmp(source.data(), target.data(), 512), 0);

    Harness x;
    Pair q = x.connected_pair();
    LockedBuffer s2 = x.arena.allocate(PAGE_SIZE), t2 = x.arena.allocate(PAGE_SIZE);
    Region sink2 = x.register_mr(q.pd, s2, 0, PAGE_SIZE,
                                 NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
    Region unreadable = x.register_mr(q.pd, t2, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    x.accept(calls::Read{
        q.qp_a, 0x62, {{sink2.va, 8, sink2.local}}, unreadable.va, unreadable.remote, 0});
    auto bad = x.drain(q.cq_a);
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_EQ(bad[0].outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(bad[0].rules, "RMR-ACC-01")) << bad[0].why;
}

// RMR-ACC-02, RMR-FLG-03: a receive needs local write; 0x5 carries it.
TEST_F(RegisteredAccess, ReceiveTargetNeedsLocalWriteWhichRemoteWriteCarries) {
    fill(source.bytes(), 5);
    Region from = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0);
    Region rw = h.register_mr(p.pd, target, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    h.accept(calls::Receive{p.qp_b, 0x71, {{rw.va, PAGE_SIZE, rw.local}}});
    h.accept(calls::Send{p.qp_a, 0x72, {{from.va, 200, from.local}}, 0, {}});
    auto got = h.drain(p.cq_b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].outcome, Completion::Outcome::success) << got[0].why;
    EXPECT_EQ(got[0].bytes_transferred, 200u);
    EXPECT_EQ(std::memcmp(target.data(), source.data(), 200), 0);

    Harness x;
    Pair q = x.connected_pair();
    LockedBuffer s2 = x.arena.allocate(PAGE_SIZE), t2 = x.arena.allocate(PAGE_SIZE);
    Region from2 = x.register_mr(q.pd, s2, 0, PAGE_SIZE, 0);
    Region ro = x.register_mr(q.pd, t2, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    x.accept(calls::Receive{q.qp_b, 0x73, {{ro.va, PAGE_SIZE, ro.local}}});
    x.accept(calls::Send{q.qp_a, 0x74, {{from2.va, 16, from2.local}}, 0, {}});
    auto bad = x.drain(q.cq_b);
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_EQ(bad[0].outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(bad[0].rules, "RMR-ACC-02")) << bad[0].why;
}

// RMR-DEREG-01: once NdkDeregisterMr completed, an access through the old tokens fails, named
// by the deregistration's rule first (not only as a stray token).
TEST_F(RegisteredAccess, AccessThroughADeregisteredTokenNamesTheDeregistration) {
    Region from = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0);
    Region to = h.register_mr(p.pd, target, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    h.accept(calls::DeregisterMr{to.mr});
    Completion c = write(from, to.va, to.remote, 8);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
    ASSERT_FALSE(c.rules.empty());
    EXPECT_EQ(c.rules.front(), "RMR-DEREG-01") << c.why;
}

// RMR-DEREG-01: after NdkDeregisterMr an access through the old token fails.
TEST_F(RegisteredAccess, AccessAfterDeregistrationFails) {
    Region from = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0);
    Region to = h.register_mr(p.pd, target, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    h.accept(calls::DeregisterMr{to.mr}, pending());
    Completion c = write(from, to.va, to.remote, 8);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
}

}  // namespace
}  // namespace ndkct::model::test
