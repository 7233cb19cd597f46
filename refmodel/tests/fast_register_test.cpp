// NdkFastRegister (FR-*): argument checks at and past each edge, the access-violation rule and
// its 0x10 trap, status forms, and what a fast registration maps (real bytes, simulate mode).
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

constexpr uint64_t kBase = 0x100000;  // a page-aligned BaseVirtualAddress

class FastRegister : public ::testing::Test {
  protected:
    explicit FastRegister(Readings readings = default_readings())
        : h(Mode::simulate, std::move(readings)) {}

    Harness h;
    Pair p = h.connected_pair();
    LockedBuffer buffer = h.arena.allocate(4 * PAGE_SIZE);
    Lam lam = h.build_lam(buffer, 0, 4 * PAGE_SIZE);
    ObjectId local_mr = h.fr_mr(p.pd, 4, false);  // RemoteAccess = FALSE
    ObjectId remote_mr = h.fr_mr(p.pd, 4, true);  // RemoteAccess = TRUE

    // A fast registration of `pages` LAM pages with FBO `fbo`, BaseVirtualAddress kBase + fbo.
    calls::FastRegister fr(ObjectId mr, uint32_t flags, uint32_t fbo = 0,
                           uint64_t length = PAGE_SIZE, size_t pages = 1, Context ctx = 0xF00) {
        std::vector<uint64_t> array(lam.pages.begin(), lam.pages.begin() + pages);
        return calls::FastRegister{p.qp_a, ctx, mr, array, fbo, length, kBase + fbo, flags};
    }
    const MrState& state(ObjectId mr) { return *h.model.state_of<MrState>(mr); }
};

// FR-ALIGN-03 (first), FR-ALIGN-01, AMB-29: BaseVirtualAddress not congruent to FBO fails inline
// with STATUS_INVALID_PARAMETER by default; accepting it is a warning, and then the completion must
// report the error and nothing is registered.
TEST_F(FastRegister, MisalignedBaseVirtualAddressFailsWithInvalidParameter) {
    calls::FastRegister call = fr(remote_mr, 0);
    call.base_virtual_address = kBase + 17;
    Expectation e = h.model.expect(call);
    ASSERT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "FR-ALIGN-01")) << describe(e);
    EXPECT_TRUE(failure_names(e, "FR-ALIGN-03"));
    EXPECT_TRUE(failure_names(e, "AMB-29"));
    EXPECT_EQ(e.failures[0].strength, Strength::model_choice);
    EXPECT_TRUE(e.failure_may_surface_in_completion);
    EXPECT_TRUE(judge_inline(e, STATUS_INVALID_PARAMETER, "NdkFastRegister").clean());
    // FR-ST-03: never STATUS_PENDING.
    EXPECT_TRUE(violation_names(judge_inline(e, STATUS_PENDING, "NdkFastRegister"), "FR-ST-03"));

    Applied a = h.model.apply(call, status(STATUS_SUCCESS));
    EXPECT_TRUE(a.verdict.ok()) << a.verdict.describe();
    EXPECT_TRUE(warning_names(a.verdict, "FR-ALIGN-01"));
    auto entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].outcome, Completion::Outcome::error);
    ASSERT_FALSE(entries[0].rules.empty());
    EXPECT_EQ(entries[0].rules.front(), "FR-ALIGN-03");  // the rule of exactly this request
    EXPECT_TRUE(names(entries[0].rules, "FR-ALIGN-01"));
    EXPECT_NE(state(remote_mr).phase, MrState::Phase::fast_registered);
}

// IFR-POST-01: after a successful initialization the MR takes fast registrations; refused with the
// status of an MR never initialized (AMB-16's), that rule is named first. Once it holds a
// registration the same refusal is AMB-30's reading, not IFR-POST-01.
TEST_F(FastRegister, RefusalAsUninitializedAfterInitializationNamesIfrPost01) {
    Expectation e = h.model.expect(fr(local_mr, 0));
    Verdict refused = judge_inline(e, STATUS_INVALID_DEVICE_STATE, "NdkFastRegister");
    ASSERT_FALSE(refused.violations.empty());
    EXPECT_EQ(refused.violations.front().rules.front(), "IFR-POST-01") << refused.describe();
    EXPECT_FALSE(violation_names(judge_inline(e, STATUS_INVALID_PARAMETER, "NdkFastRegister"),
                                 "IFR-POST-01"));
    h.accept(fr(local_mr, 0), status(STATUS_SUCCESS));
    h.drain(p.cq_a);
    EXPECT_FALSE(violation_names(judge_inline(h.model.expect(fr(local_mr, 0)),
                                              STATUS_INVALID_DEVICE_STATE, "NdkFastRegister"),
                                 "IFR-POST-01"));
}

// IFR-TOK-02: the remote token may be read once the initialization has completed. A refusal of
// the MR's first registration with the status of an unusable MR, after such a read, names the read
// beside IFR-POST-01; so does that status where the request had to fail for another reason.
TEST_F(FastRegister, RefusalAfterARemoteTokenReadNamesIfrTok02) {
    auto refusal = [&](ObjectId mr, uint32_t flags, NTSTATUS status) {
        return judge_inline(h.model.expect(fr(mr, flags)), status, "NdkFastRegister");
    };
    EXPECT_FALSE(violation_names(refusal(local_mr, 0, STATUS_INVALID_DEVICE_STATE), "IFR-TOK-02"));
    h.remote_token(local_mr);
    Verdict after = refusal(local_mr, 0, STATUS_INVALID_DEVICE_STATE);
    ASSERT_FALSE(after.violations.empty());
    EXPECT_EQ(after.violations.front().rules.front(), "IFR-POST-01") << after.describe();
    EXPECT_TRUE(violation_names(after, "IFR-TOK-02")) << after.describe();
    // FR-ACC-01: remote rights on an MR initialized without RemoteAccess must be refused with
    // STATUS_ACCESS_VIOLATION; refused as an unusable MR, the read is named beside it.
    Verdict wrong = refusal(local_mr, NDK_OP_FLAG_ALLOW_REMOTE_WRITE, STATUS_INVALID_DEVICE_STATE);
    ASSERT_FALSE(wrong.violations.empty());
    EXPECT_EQ(wrong.violations.front().rules.front(), "FR-ACC-01") << wrong.describe();
    EXPECT_TRUE(violation_names(wrong, "IFR-TOK-02")) << wrong.describe();
    EXPECT_FALSE(violation_names(refusal(local_mr, 0, STATUS_INVALID_PARAMETER), "IFR-TOK-02"));
    // Once the provider took a first registration with no read (remote_mr's), the read is what
    // differs: named first.
    h.accept(fr(remote_mr, 0), status(STATUS_SUCCESS));
    h.drain(p.cq_a);
    Verdict evidence = refusal(local_mr, 0, STATUS_INVALID_DEVICE_STATE);
    ASSERT_FALSE(evidence.violations.empty());
    EXPECT_EQ(evidence.violations.front().rules.front(), "IFR-TOK-02") << evidence.describe();
}

// FR-ALIGN-02, AMB-05: BaseVirtualAddress 0 is fine with FBO 0, not with FBO != 0; the strict
// reading refuses 0 altogether.
TEST_F(FastRegister, ZeroBaseVirtualAddressOnlyWithFboZero) {
    calls::FastRegister zero = fr(remote_mr, 0);
    zero.base_virtual_address = 0;
    EXPECT_FALSE(h.model.expect(zero).must_fail()) << describe(h.model.expect(zero));
    calls::FastRegister zero_fbo = fr(remote_mr, 0, 1, PAGE_SIZE - 1);
    zero_fbo.base_virtual_address = 0;
    Expectation e = h.model.expect(zero_fbo);
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "FR-ALIGN-02")) << describe(e);

    Harness strict(Mode::simulate, readings_with("zero_base_virtual_address", "reject"));
    Pair q = strict.connected_pair();
    LockedBuffer b = strict.arena.allocate(PAGE_SIZE);
    Lam l = strict.build_lam(b, 0, PAGE_SIZE);
    ObjectId mr = strict.fr_mr(q.pd, 1, false);
    Expectation s =
        strict.model.expect(calls::FastRegister{q.qp_a, 1, mr, l.pages, 0, PAGE_SIZE, 0, 0});
    EXPECT_TRUE(fails_with(s, STATUS_INVALID_PARAMETER, "AMB-05")) << describe(s);
    EXPECT_TRUE(s.refusal_is_reading());  // its success is a warning
}

// FR-ALIGN-01: any FBO + n * PAGE_SIZE is accepted, however large.
TEST_F(FastRegister, LargeCongruentBaseVirtualAddressIsAccepted) {
    for (uint64_t base :
         {uint64_t{PAGE_SIZE} + 5, uint64_t{0x7FFF00000000} + 5, ~uint64_t{0} - PAGE_SIZE - 4090}) {
        calls::FastRegister call = fr(remote_mr, 0, 5, PAGE_SIZE - 5);
        call.base_virtual_address = base;
        EXPECT_FALSE(h.model.expect(call).must_fail())
            << base << ": " << describe(h.model.expect(call));
    }
}

// FR-ALIGN-01: a refusal of a congruent address no pointer has (bit 47 or 63 set) breaks
// FR-ALIGN-01 first ("small or large": a label); below 2^47 the refusal names the others first.
TEST_F(FastRegister, RefusalOfAnAddressBeyondEveryPointerNamesFrAlign01First) {
    for (uint64_t base : {(uint64_t{1} << 47) + 5, (uint64_t{1} << 63) + 5}) {
        calls::FastRegister call = fr(remote_mr, 0, 5, PAGE_SIZE - 5);
        call.base_virtual_address = base;
        Verdict refused =
            judge_inline(h.model.expect(call), STATUS_INVALID_PARAMETER, "NdkFastRegister");
        ASSERT_FALSE(refused.violations.empty()) << base;
        EXPECT_EQ(refused.violations.front().rules.front(), "FR-ALIGN-01") << refused.describe();
    }
    calls::FastRegister low = fr(remote_mr, 0, 5, PAGE_SIZE - 5);
    low.base_virtual_address = (uint64_t{1} << 47) - PAGE_SIZE + 5;
    Verdict refused =
        judge_inline(h.model.expect(low), STATUS_INVALID_PARAMETER, "NdkFastRegister");
    ASSERT_FALSE(refused.violations.empty());
    EXPECT_NE(refused.violations.front().rules.front(), "FR-ALIGN-01") << refused.describe();
}

// FR-FBO-01, FR-FBO-02: FBO 0, 1 and PAGE_SIZE - 1 are accepted; PAGE_SIZE is not an offset
// inside the first page.
TEST_F(FastRegister, FboWithinTheFirstPage) {
    for (uint32_t fbo : {0u, 1u, PAGE_SIZE - 1}) {
        Expectation e = h.model.expect(fr(remote_mr, 0, fbo, 1));
        EXPECT_FALSE(e.must_fail()) << fbo << ": " << describe(e);
    }
    Expectation e = h.model.expect(fr(remote_mr, 0, PAGE_SIZE, 1, 2));
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "FR-FBO-02")) << describe(e);
    EXPECT_TRUE(failure_names(e, "AMB-29"));
}

// FR-LEN-01, FR-LEN-02: Length up to AdapterPageCount * PAGE_SIZE - FBO is accepted, one more is
// refused (AMB-29 form). MODEL-RMR-LEN-02: Length 0 is refused by default.
TEST_F(FastRegister, LengthAtAndOnePastTheLimit) {
    for (uint32_t fbo : {0u, 100u}) {
        uint64_t limit = 2 * PAGE_SIZE - fbo;
        EXPECT_FALSE(h.model.expect(fr(remote_mr, 0, fbo, limit, 2)).must_fail()) << fbo;
        EXPECT_FALSE(h.model.expect(fr(remote_mr, 0, fbo, 1, 2)).must_fail()) << fbo;
        Expectation over = h.model.expect(fr(remote_mr, 0, fbo, limit + 1, 2));
        EXPECT_TRUE(fails_with(over, STATUS_INVALID_PARAMETER, "FR-LEN-02"))
            << fbo << ": " << describe(over);
    }
    EXPECT_TRUE(failure_names(h.model.expect(fr(remote_mr, 0, 0, 0)), "MODEL-RMR-LEN-02"));
}

// FR-APC-03, FR-APC-02, AMB-08, AMB-09: AdapterPageCount 1 and the initialized count are
// accepted; 0 and one more than initialized are refused (AMB-29 form).
TEST_F(FastRegister, AdapterPageCountZeroOneInitializedAndOneMore) {
    ObjectId three = h.fr_mr(p.pd, 3, true);
    EXPECT_FALSE(h.model.expect(fr(three, 0, 0, PAGE_SIZE, 1)).must_fail());
    EXPECT_FALSE(h.model.expect(fr(three, 0, 0, 3 * PAGE_SIZE, 3)).must_fail());
    Expectation over = h.model.expect(fr(three, 0, 0, PAGE_SIZE, 4));
    EXPECT_TRUE(fails_with(over, STATUS_INVALID_PARAMETER, "FR-APC-02")) << describe(over);
    EXPECT_TRUE(failure_names(over, "AMB-08"));
    Expectation none = h.model.expect(fr(three, 0, 0, 0, 0));
    EXPECT_TRUE(failure_names(none, "AMB-09")) << describe(none);
    // FR-APC-03: a valid request must not fail for its page count.
    EXPECT_TRUE(violation_names(judge_inline(h.model.expect(fr(three, 0, 0, 3 * PAGE_SIZE, 3)),
                                             STATUS_INVALID_PARAMETER, "NdkFastRegister"),
                                "FR-APC-03"));
}

// FR-LEN-02, AMB-09 (accept): with 0 pages allowed, any Length still has to fit in them (no
// wrap-around of AdapterPageCount * PAGE_SIZE - FBO); an empty registration is allowed.
TEST(FastRegisterZeroPages, LengthMustFitInZeroPages) {
    Harness x(Mode::simulate, readings_from(R"({"name": "z", "policies": {
        "zero_adapter_page_count": "accept", "zero_length_mapping": "accept"}})"));
    Pair q = x.connected_pair();
    ObjectId mr = x.fr_mr(q.pd, 0, false);
    Expectation empty = x.model.expect(calls::FastRegister{q.qp_a, 1, mr, {}, 0, 0, kBase, 0});
    EXPECT_FALSE(empty.must_fail()) << describe(empty);
    Expectation e = x.model.expect(calls::FastRegister{q.qp_a, 2, mr, {}, 5, 10, kBase + 5, 0});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "FR-LEN-02")) << describe(e);
}

// FR-ACC-01, FR-ST-03: remote rights (0x8, 0x20, 0x30) on an MR initialized with RemoteAccess =
// FALSE fail inline with STATUS_ACCESS_VIOLATION; a provider that accepts them breaks FR-ACC-01.
TEST_F(FastRegister, RemoteRightsOnALocalOnlyMrAreAnAccessViolation) {
    for (uint32_t flags : {NDK_OP_FLAG_ALLOW_REMOTE_READ, NDK_OP_FLAG_ALLOW_REMOTE_WRITE,
                           NDKCT_OP_FLAG_REMOTE_WRITE_BIT,
                           NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_LOCAL_WRITE}) {
        Expectation e = h.model.expect(fr(local_mr, flags));
        ASSERT_TRUE(fails_with(e, STATUS_ACCESS_VIOLATION, "FR-ACC-01"))
            << flags << ": " << describe(e);
        EXPECT_EQ(e.failures[0].strength, Strength::documented);
        Verdict accepted = judge_inline(e, STATUS_SUCCESS, "NdkFastRegister");
        EXPECT_FALSE(accepted.ok()) << flags;
        EXPECT_TRUE(violation_names(accepted, "FR-ACC-01")) << accepted.describe();
        Verdict other = judge_inline(e, STATUS_INVALID_PARAMETER, "NdkFastRegister");
        EXPECT_TRUE(violation_names(other, "FR-ACC-01")) << other.describe();
        EXPECT_FALSE(violation_names(other, "FR-ALIGN-02")) << other.describe();
        // At BaseVirtualAddress 0 with FBO 0 (FR-ALIGN-02: an ordinary start address) the
        // STATUS_INVALID_PARAMETER points at the address too; an acceptance does not.
        calls::FastRegister at_zero = fr(local_mr, flags);
        at_zero.base_virtual_address = 0;
        Expectation z = h.model.expect(at_zero);
        Verdict zero = judge_inline(z, STATUS_INVALID_PARAMETER, "NdkFastRegister");
        EXPECT_TRUE(violation_names(zero, "FR-ACC-01")) << zero.describe();
        EXPECT_TRUE(violation_names(zero, "FR-ALIGN-02")) << zero.describe();
        EXPECT_FALSE(
            violation_names(judge_inline(z, STATUS_SUCCESS, "NdkFastRegister"), "FR-ALIGN-02"));
    }
}

// FR-ACC-02: local write 0x10 alone (with SILENT_SUCCESS, READ_FENCE or DEFER) is not a remote
// right, though 0x10 & NDK_OP_FLAG_ALLOW_REMOTE_WRITE != 0.
TEST_F(FastRegister, LocalWriteAloneIsNotARemoteRight) {
    for (uint32_t flags : {0x10u, 0x11u, 0x12u, 0x210u, 0x0u}) {
        Expectation e = h.model.expect(fr(local_mr, flags));
        EXPECT_FALSE(e.must_fail()) << flags << ": " << describe(e);
        Verdict v = judge_inline(e, STATUS_ACCESS_VIOLATION, "NdkFastRegister");
        EXPECT_TRUE(violation_names(v, "FR-ACC-02")) << flags << ": " << v.describe();
    }
}

// FR-ACC-03, FR-FLG-01, AMB-01: on a remote-access MR every documented flag combination is
// accepted, 0x80 included.
TEST_F(FastRegister, DocumentedFlagsAreAcceptedOnARemoteAccessMr) {
    const uint32_t bits[] = {0x1, 0x2, 0x8, 0x10, 0x30, 0x80, 0x200};
    for (uint32_t mask = 0; mask < (1u << 7); ++mask) {
        uint32_t flags = 0;
        for (int i = 0; i < 7; ++i)
            if (mask & (1u << i)) flags |= bits[i];
        Expectation e = h.model.expect(fr(remote_mr, flags));
        EXPECT_FALSE(e.must_fail()) << flags << ": " << describe(e);
    }
    EXPECT_TRUE(violation_names(
        judge_inline(h.model.expect(fr(remote_mr, 0x38)), STATUS_ACCESS_VIOLATION, "x"),
        "FR-ACC-03"));
}

// FR-SINK-02: on an adapter with RDMA_READ_SINK_NOT_REQUIRED, 0x80 must not make it fail.
TEST_F(FastRegister, ReadSinkFlagIsAcceptedWhenNotRequired) {
    Readings r = default_readings();
    r.adapter_info.AdapterFlags |= NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
    Harness x(Mode::simulate, r);
    Pair q = x.connected_pair();
    LockedBuffer b = x.arena.allocate(PAGE_SIZE);
    Lam l = x.build_lam(b, 0, PAGE_SIZE);
    ObjectId mr = x.fr_mr(q.pd, 1, false);
    calls::FastRegister call{
        q.qp_a, 1,         mr,    l.pages,
        0,      PAGE_SIZE, kBase, NDK_OP_FLAG_RDMA_READ_SINK | NDK_OP_FLAG_ALLOW_LOCAL_WRITE};
    Expectation e = x.model.expect(call);
    EXPECT_FALSE(e.must_fail()) << describe(e);
    EXPECT_TRUE(violation_names(judge_inline(e, STATUS_INVALID_PARAMETER, "x"), "FR-ST-01"));
}

// AMB-04, OPF-01: unknown bits are ignored by default; refused under the strict knobs. INLINE is
// not in NdkFastRegister's table (OPF-01).
TEST_F(FastRegister, UnknownAndUnlistedFlagsFollowTheProfile) {
    EXPECT_FALSE(h.model.expect(fr(remote_mr, 0x400)).must_fail());
    EXPECT_FALSE(h.model.expect(fr(remote_mr, NDK_OP_FLAG_INLINE)).must_fail());
    Harness strict(Mode::simulate, readings_from(R"({"name": "s", "policies": {
        "unknown_flags": "reject", "flag_not_listed_for_call": "reject"}})"));
    Pair q = strict.connected_pair();
    LockedBuffer b = strict.arena.allocate(PAGE_SIZE);
    Lam l = strict.build_lam(b, 0, PAGE_SIZE);
    ObjectId mr = strict.fr_mr(q.pd, 1, true);
    Expectation unknown = strict.model.expect(
        calls::FastRegister{q.qp_a, 1, mr, l.pages, 0, PAGE_SIZE, kBase, 0x400});
    EXPECT_TRUE(fails_with(unknown, STATUS_INVALID_PARAMETER, "AMB-04")) << describe(unknown);
    Expectation unlisted =
        strict.model.expect(calls::FastRegister{q.qp_a, 1, mr, l.pages, 0, PAGE_SIZE, kBase, 0x40});
    EXPECT_TRUE(fails_with(unlisted, STATUS_INVALID_PARAMETER, "OPF-01")) << describe(unlisted);
    EXPECT_TRUE(failure_names(unlisted, "FR-FLG-01"));
    Expectation sink =
        strict.model.expect(calls::FastRegister{q.qp_a, 1, mr, l.pages, 0, PAGE_SIZE, kBase, 0x80});
    EXPECT_FALSE(sink.must_fail()) << describe(sink);  // AMB-01 accept
}

// AMB-03: a lone 0x20 reads as 0x30 by default; the strict reading refuses it.
TEST_F(FastRegister, LoneRemoteWriteBitFollowsTheProfile) {
    h.accept(fr(remote_mr, NDKCT_OP_FLAG_REMOTE_WRITE_BIT));
    EXPECT_EQ(state(remote_mr).region.access, static_cast<uint32_t>(kLocalWrite | kRemoteWrite));
    Harness strict(Mode::simulate, readings_with("lone_remote_write_bit", "reject"));
    Pair q = strict.connected_pair();
    LockedBuffer b = strict.arena.allocate(PAGE_SIZE);
    Lam l = strict.build_lam(b, 0, PAGE_SIZE);
    ObjectId mr = strict.fr_mr(q.pd, 1, true);
    Expectation e =
        strict.model.expect(calls::FastRegister{q.qp_a, 1, mr, l.pages, 0, PAGE_SIZE, kBase, 0x20});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "AMB-03")) << describe(e);
}

// FR-ACC-04, FR-ST-04, WR-05: a refused request is not posted: no CQ entry, nothing registered.
TEST_F(FastRegister, RefusedRequestMakesNoEntryAndRegistersNothing) {
    h.accept(fr(local_mr, NDK_OP_FLAG_ALLOW_REMOTE_READ), status(STATUS_ACCESS_VIOLATION));
    EXPECT_TRUE(h.drain(p.cq_a).empty());
    EXPECT_EQ(state(local_mr).phase, MrState::Phase::initialized);
    EXPECT_EQ(h.model.outstanding_completions(p.qp_a), 0u);
}

// FR-ST-01, FR-QP-01, FR-RES-01, FR-TOK-01: a posted request completes on the initiator CQ with
// its RequestContext, the QPContext and Type FastRegister; the registration is in force once the
// call returned.
TEST_F(FastRegister, PostedRequestCompletesOnTheInitiatorCq) {
    h.accept(fr(remote_mr, NDK_OP_FLAG_ALLOW_REMOTE_WRITE, 0, PAGE_SIZE, 1, 0xF1));
    EXPECT_EQ(state(remote_mr).phase, MrState::Phase::fast_registered);
    EXPECT_FALSE(h.model.expect(calls::GetRemoteTokenFromMr{remote_mr}).undefined);
    auto entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].outcome, Completion::Outcome::success);
    EXPECT_EQ(entries[0].type, NdkOperationTypeFastRegister);
    EXPECT_EQ(entries[0].request_context, 0xF1u);
    EXPECT_EQ(entries[0].qp_context, p.ctx_a);
    EXPECT_TRUE(h.drain(p.cq_b).empty());
}

// FR-ST-02: on a QP that is not connected: STATUS_CONNECTION_INVALID inline.
TEST_F(FastRegister, UnconnectedQpGivesConnectionInvalid) {
    ObjectId qp = h.qp(p.pd, p.cq_a, p.cq_a);
    calls::FastRegister call = fr(remote_mr, 0);
    call.qp = qp;
    Expectation e = h.model.expect(call);
    EXPECT_TRUE(fails_with(e, STATUS_CONNECTION_INVALID, "FR-ST-02")) << describe(e);
    EXPECT_TRUE(violation_names(judge_inline(e, STATUS_SUCCESS, "NdkFastRegister"), "FR-ST-02"));
}

// FR-SILENT-01: with SILENT_SUCCESS a successful registration leaves no entry;
// FR-SILENT-02: a posted one that fails still does.
TEST_F(FastRegister, SilentSuccessLeavesNoEntryButAFailureDoes) {
    h.accept(fr(remote_mr, NDK_OP_FLAG_SILENT_SUCCESS));
    EXPECT_TRUE(h.drain(p.cq_a).empty());
    EXPECT_EQ(state(remote_mr).phase, MrState::Phase::fast_registered);
    calls::FastRegister bad =
        fr(local_mr, NDK_OP_FLAG_SILENT_SUCCESS, 0, 2 * PAGE_SIZE);  // FR-LEN-02
    Applied a = h.model.apply(bad, status(STATUS_SUCCESS));
    EXPECT_TRUE(a.verdict.ok()) << a.verdict.describe();
    auto entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(entries[0].rules, "FR-LEN-02"));
}

// FR-MR-01, AMB-16: a normal MR, or an uninitialized fast-register MR, is a consumer error.
TEST_F(FastRegister, WrongKindOfMrIsAConsumerError) {
    LockedBuffer b = h.arena.allocate(PAGE_SIZE);
    Region normal = h.register_mr(p.pd, b, 0, PAGE_SIZE, 0);
    Expectation e = h.model.expect(fr(normal.mr, 0));
    EXPECT_TRUE(e.consumer_error);
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_DEVICE_STATE, "FR-MR-01")) << describe(e);
    ObjectId fresh = h.mr(p.pd, true);
    EXPECT_TRUE(failure_names(h.model.expect(fr(fresh, 0)), "FR-MR-01"));
}

// FR-LAM-01: pages that no live LAM produced make the request undefined (a consumer duty).
TEST_F(FastRegister, PagesFromNoLiveLamAreUndefined) {
    calls::FastRegister call = fr(remote_mr, 0);
    call.adapter_pages = {buffer.pfns()[0] * PAGE_SIZE};  // a physical address, not a logical one
    Expectation e = h.model.expect(call);
    EXPECT_TRUE(e.undefined);
    EXPECT_TRUE(names(e.undefined_rules, "FR-LAM-01"));
    h.accept(calls::ReleaseLam{h.adapter, lam.id});  // LAM-REL-01: released pages are gone too
    EXPECT_TRUE(h.model.expect(fr(remote_mr, 0)).undefined);
}

// AMB-28: an MR of another PD fails the request's completion by default, inline with all_inline.
TEST_F(FastRegister, MrOfAnotherPdFollowsTheProfile) {
    ObjectId other_pd = h.pd();
    ObjectId foreign = h.fr_mr(other_pd, 1, true);
    Expectation e = h.model.expect(fr(foreign, 0));
    EXPECT_FALSE(e.must_fail()) << describe(e);
    h.accept(fr(foreign, 0));
    auto entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(entries[0].rules, "AMB-28"));
}

// FR-INV-01, AMB-30: fast-registering over a valid registration fails its completion by default;
// after NdkInvalidate the MR takes a new registration.
TEST_F(FastRegister, OverAValidRegistrationNeedsAnInvalidateFirst) {
    h.accept(fr(remote_mr, 0, 0, PAGE_SIZE, 1, 1));
    h.accept(fr(remote_mr, 0, 0, PAGE_SIZE, 1, 2));
    auto entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].outcome, Completion::Outcome::success);
    EXPECT_EQ(entries[1].outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(entries[1].rules, "FR-INV-01"));
    h.accept(calls::Invalidate{p.qp_a, 3, remote_mr, 0});
    EXPECT_EQ(state(remote_mr).phase, MrState::Phase::invalidated);
    h.accept(fr(remote_mr, 0, 0, PAGE_SIZE, 1, 4));
    entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[1].outcome, Completion::Outcome::success) << entries[1].why;

    Harness strict(Mode::simulate, readings_with("fr_over_valid_registration", "inline_error"));
    Pair q = strict.connected_pair();
    LockedBuffer b = strict.arena.allocate(PAGE_SIZE);
    Lam l = strict.build_lam(b, 0, PAGE_SIZE);
    ObjectId mr = strict.fr_mr(q.pd, 1, false);
    calls::FastRegister call{q.qp_a, 1, mr, l.pages, 0, PAGE_SIZE, kBase, 0};
    strict.accept(call);
    EXPECT_TRUE(fails_with(strict.model.expect(call), STATUS_INVALID_DEVICE_STATE, "AMB-30"));
}

// AMB-29 (completion_error): the request is accepted and completes with an error; an inline
// refusal is the other allowed form, a warning.
TEST_F(FastRegister, CompletionErrorReadingOfBadArguments) {
    Harness x(Mode::simulate, readings_with("fr_invalid_request_report", "completion_error"));
    Pair q = x.connected_pair();
    LockedBuffer b = x.arena.allocate(PAGE_SIZE);
    Lam l = x.build_lam(b, 0, PAGE_SIZE);
    ObjectId mr = x.fr_mr(q.pd, 1, false);
    calls::FastRegister call{q.qp_a, 1, mr, l.pages, 0, PAGE_SIZE, kBase + 8, 0};
    Expectation e = x.model.expect(call);
    EXPECT_FALSE(e.must_fail()) << describe(e);
    Verdict refused = judge_inline(e, STATUS_INVALID_PARAMETER, "NdkFastRegister");
    EXPECT_TRUE(refused.ok()) << refused.describe();
    EXPECT_TRUE(warning_names(refused, "AMB-29")) << refused.describe();
    x.accept(call);
    auto entries = x.drain(q.cq_a);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(entries[0].rules, "FR-ALIGN-01"));
}

// FR-DEFER-01, FR-DEFER-02, DEFER-06: a DEFER registration may be held back; when the next one
// fails inline, the held one is handed over first and completes; the failed one makes no entry.
TEST_F(FastRegister, InlineFailureReleasesEarlierDeferredRequests) {
    h.accept(fr(remote_mr, NDK_OP_FLAG_DEFER, 0, PAGE_SIZE, 1, 0xD1));
    EXPECT_TRUE(h.drain(p.cq_a).empty());  // held (reference_provider.defer_doorbell = hold)
    h.accept(fr(local_mr, NDK_OP_FLAG_DEFER | NDK_OP_FLAG_ALLOW_REMOTE_READ, 0, PAGE_SIZE, 1, 0xD2),
             status(STATUS_ACCESS_VIOLATION));
    auto entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].request_context, 0xD1u);
    EXPECT_EQ(entries[0].outcome, Completion::Outcome::success);
}

// FR-DEFER-01: a request without DEFER hands over the held ones (in order).
TEST_F(FastRegister, RequestWithoutDeferReleasesTheHeldOnes) {
    ObjectId second = h.fr_mr(p.pd, 1, false);
    h.accept(fr(remote_mr, NDK_OP_FLAG_DEFER, 0, PAGE_SIZE, 1, 0xE1));
    h.accept(fr(second, 0, 0, PAGE_SIZE, 1, 0xE2));
    auto entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].request_context, 0xE1u);
    EXPECT_EQ(entries[1].request_context, 0xE2u);
}

// ---- What a fast registration maps (FR-MAP-01, FR-PAGE-02, FR-FLG-*, FR-LEN-03, FR-ZBVA-01) ----

class FastRegisteredAccess : public FastRegister {
  protected:
    LockedBuffer other = h.arena.allocate(4 * PAGE_SIZE);
    Region peer = h.register_mr(p.pd, other, 0, 4 * PAGE_SIZE,
                                NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_ALLOW_REMOTE_READ |
                                    NDK_MR_FLAG_RDMA_READ_SINK);

    Completion only_entry(ObjectId cq) {
        auto entries = h.drain(cq);
        EXPECT_EQ(entries.size(), 1u);
        return entries.empty() ? Completion{} : entries.back();
    }
};

// FR-MAP-01, FR-PAGE-02: pages given in reverse logical order are mapped in array order; byte k
// of the region is byte (FBO + k) % PAGE_SIZE of page AdapterPageArray[(FBO + k) / PAGE_SIZE].
TEST_F(FastRegisteredAccess, RemoteWriteLandsWhereTheMappingSays) {
    const uint32_t fbo = 100;
    std::vector<uint64_t> reversed(lam.pages.rbegin(), lam.pages.rend());
    const uint64_t base = 0x7000000 + fbo;
    h.accept(calls::FastRegister{p.qp_a, 1, remote_mr, reversed, fbo, 4 * PAGE_SIZE - fbo, base,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
    EXPECT_EQ(only_entry(p.cq_a).outcome, Completion::Outcome::success);
    uint32_t token = h.remote_token(remote_mr);
    fill(other.bytes(), 11);
    const uint64_t k0 = 10, n = 3 * PAGE_SIZE;
    h.accept(calls::Write{
        p.qp_b, 2, {{peer.va, static_cast<uint32_t>(n), peer.local}}, base + k0, token, 0, {}});
    Completion c = only_entry(p.cq_b);
    ASSERT_EQ(c.outcome, Completion::Outcome::success) << c.why;
    for (uint64_t j = 0; j < n; j += 97) {
        uint64_t k = k0 + j;
        size_t index = (fbo + k) / PAGE_SIZE;
        PFN_NUMBER pfn = buffer.pfns()[3 - index];  // reversed[index] maps buffer page 3 - index
        EXPECT_EQ(h.physical(pfn)[(fbo + k) % PAGE_SIZE], other.data()[j]) << "byte " << k;
    }
}

// FR-FLG-04, FR-LEN-03, FR-ZBVA-01: remote read with 0x8 works inside [Base, Base + Length);
// beyond it, or at the bare offset, it fails.
TEST_F(FastRegisteredAccess, RemoteReadNeedsTheRightAndStaysInside) {
    fill(buffer.bytes(), 42);
    h.accept(calls::FastRegister{p.qp_a, 1, remote_mr, lam.pages, 0, 2 * PAGE_SIZE, kBase,
                                 NDK_OP_FLAG_ALLOW_REMOTE_READ});
    only_entry(p.cq_a);
    uint32_t token = h.remote_token(remote_mr);
    h.accept(calls::Read{p.qp_b, 2, {{peer.va, 1000, peer.local}}, kBase + 50, token, 0});
    Completion ok = only_entry(p.cq_b);
    ASSERT_EQ(ok.outcome, Completion::Outcome::success) << ok.why;
    EXPECT_EQ(std::memcmp(other.data(), buffer.data() + 50, 1000), 0);

    h.accept(calls::Read{
        p.qp_b, 3, {{peer.va, 200, peer.local}}, kBase + 2 * PAGE_SIZE - 100, token, 0});
    Completion beyond = only_entry(p.cq_b);
    EXPECT_EQ(beyond.outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(beyond.rules, "FR-LEN-03")) << beyond.why;
}

TEST_F(FastRegisteredAccess, BareOffsetDoesNotReachTheRegion) {
    h.accept(calls::FastRegister{p.qp_a, 1, remote_mr, lam.pages, 0, 2 * PAGE_SIZE, kBase,
                                 NDK_OP_FLAG_ALLOW_REMOTE_READ});
    only_entry(p.cq_a);
    uint32_t token = h.remote_token(remote_mr);
    h.accept(calls::Read{p.qp_b, 2, {{peer.va, 16, peer.local}}, 16, token, 0});
    EXPECT_EQ(only_entry(p.cq_b).outcome, Completion::Outcome::error);  // FR-ZBVA-01
}

TEST_F(FastRegisteredAccess, RemoteReadWithoutTheRightFails) {
    h.accept(calls::FastRegister{p.qp_a, 1, remote_mr, lam.pages, 0, PAGE_SIZE, kBase,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
    only_entry(p.cq_a);
    uint32_t token = h.remote_token(remote_mr);
    h.accept(calls::Read{p.qp_b, 2, {{peer.va, 16, peer.local}}, kBase, token, 0});
    Completion c = only_entry(p.cq_b);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(c.rules, "FR-FLG-04")) << c.why;
}

// FR-FLG-05: remote write needs the 0x20 bit; 0x10 alone grants none.
TEST_F(FastRegisteredAccess, RemoteWriteNeedsTheRemoteWriteBit) {
    h.accept(calls::FastRegister{p.qp_a, 1, remote_mr, lam.pages, 0, PAGE_SIZE, kBase,
                                 NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ});
    only_entry(p.cq_a);
    uint32_t token = h.remote_token(remote_mr);
    h.accept(calls::Write{p.qp_b, 2, {{peer.va, 16, peer.local}}, kBase, token, 0, {}});
    Completion c = only_entry(p.cq_b);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(c.rules, "FR-FLG-05")) << c.why;
    EXPECT_EQ(buffer.data()[0], std::byte{0});
}

// FR-FLG-02, FR-TOK-02: Flags 0 is a valid local source through the local token; FR-FLG-03: a
// receive into the region needs 0x10.
TEST_F(FastRegisteredAccess, LocalTokenSourceAndLocalWriteTarget) {
    fill(buffer.bytes(), 77);
    ObjectId writable = h.fr_mr(p.pd, 4, false);
    LockedBuffer sink_pages = h.arena.allocate(PAGE_SIZE);
    Lam sink_lam = h.build_lam(sink_pages, 0, PAGE_SIZE);
    h.accept(calls::FastRegister{p.qp_a, 1, local_mr, lam.pages, 0, PAGE_SIZE, kBase, 0});
    h.accept(calls::FastRegister{p.qp_a, 2, writable, sink_lam.pages, 0, PAGE_SIZE, 0x900000,
                                 NDK_OP_FLAG_ALLOW_LOCAL_WRITE});
    h.drain(p.cq_a);
    uint32_t source = h.local_token(local_mr);
    uint32_t target = h.local_token(writable);
    // B sends into a receive on A's writable region; A sends from its Flags-0 region to B.
    fill(other.bytes(), 5);
    h.accept(calls::Receive{p.qp_a, 3, {{0x900000, PAGE_SIZE, target}}});
    h.accept(calls::Send{p.qp_b, 4, {{peer.va, 300, peer.local}}, 0, {}});
    EXPECT_EQ(std::memcmp(sink_pages.data(), other.data(), 300), 0);
    h.drain(p.cq_b);
    Completion received = only_entry(p.cq_a);
    EXPECT_EQ(received.outcome, Completion::Outcome::success) << received.why;
    h.accept(calls::Receive{p.qp_b, 5, {{peer.va + PAGE_SIZE, PAGE_SIZE, peer.local}}});
    h.accept(calls::Send{p.qp_a, 6, {{kBase + 8, 256, source}}, 0, {}});
    EXPECT_EQ(std::memcmp(other.data() + PAGE_SIZE, buffer.data() + 8, 256), 0);

    // A receive into the Flags-0 region fails (no local write).
    h.drain(p.cq_a);
    h.drain(p.cq_b);
    h.accept(calls::Receive{p.qp_a, 7, {{kBase, PAGE_SIZE, source}}});
    h.accept(calls::Send{p.qp_b, 8, {{peer.va, 10, peer.local}}, 0, {}});
    Completion c = only_entry(p.cq_a);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(c.rules, "FR-FLG-03")) << c.why;
}

// FR-INV-01, INV-01: after NdkInvalidate the remote token reaches nothing.
TEST_F(FastRegisteredAccess, InvalidateThenAccessFails) {
    h.accept(calls::FastRegister{p.qp_a, 1, remote_mr, lam.pages, 0, PAGE_SIZE, kBase,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
    uint32_t token = h.remote_token(remote_mr);
    h.accept(calls::Invalidate{p.qp_a, 2, remote_mr, 0});
    auto entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[1].type, NdkOperationTypeInvalidate);
    h.accept(calls::Write{p.qp_b, 3, {{peer.va, 16, peer.local}}, kBase, token, 0, {}});
    Completion c = only_entry(p.cq_b);
    EXPECT_EQ(c.outcome, Completion::Outcome::error);
    // FR-INV-01 first: the token is that of a fast registration an invalidation ended (a
    // provider that let the write through would break it before the generic TOK-03, INV-01).
    ASSERT_FALSE(c.rules.empty()) << c.why;
    EXPECT_EQ(c.rules.front(), "FR-INV-01") << c.why;
    EXPECT_TRUE(names(c.rules, "INV-01")) << c.why;
    EXPECT_EQ(buffer.data()[0], std::byte{0});
    // CQ-RI-03, AMB-32: invalidating again is tolerated inline, and fails its completion.
    Expectation again = h.model.expect(calls::Invalidate{p.qp_a, 4, remote_mr, 0});
    EXPECT_FALSE(again.must_fail());
    EXPECT_TRUE(
        warning_names(judge_inline(again, STATUS_INVALID_DEVICE_STATE, "NdkInvalidate"), "AMB-32"));
}

// FR-INV-01 (named first), INV-01: NdkInvalidate of a fast-registered MR must succeed; a
// provider that refuses it (one that invalidates only MWs, say) breaks the page rule.
TEST_F(FastRegisteredAccess, RefusedInvalidateOfAFastRegisteredMrNamesFrInv01) {
    h.accept(calls::FastRegister{p.qp_a, 1, remote_mr, lam.pages, 0, PAGE_SIZE, kBase,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
    h.drain(p.cq_a);
    Expectation e = h.model.expect(calls::Invalidate{p.qp_a, 2, remote_mr, 0});
    ASSERT_FALSE(e.must_fail());
    for (NTSTATUS refusal : {STATUS_NOT_SUPPORTED, STATUS_INVALID_PARAMETER}) {
        Verdict v = judge_inline(e, refusal, "NdkInvalidate");
        ASSERT_FALSE(v.ok());
        EXPECT_EQ(v.violations.front().rules.front(), "FR-INV-01") << v.describe();
        EXPECT_TRUE(names(v.violations.front().rules, "INV-01")) << v.describe();
    }
    EXPECT_TRUE(judge_inline(e, STATUS_SUCCESS, "NdkInvalidate").ok());
}

// FR-SINK-01, FR-SINK-03: on an adapter that needs read sinks, a read into a fast-registered
// region needs 0x80 (with local write); with it the read lands.
TEST_F(FastRegisteredAccess, ReadSinkNeedsTheSinkFlag) {
    fill(other.bytes(), 91);
    ObjectId sink = h.fr_mr(p.pd, 4, false);
    h.accept(calls::FastRegister{p.qp_a, 1, sink, lam.pages, 0, PAGE_SIZE, kBase,
                                 NDK_OP_FLAG_ALLOW_LOCAL_WRITE});
    h.drain(p.cq_a);
    uint32_t t = h.local_token(sink);
    h.accept(calls::Read{p.qp_a, 2, {{kBase, 64, t}}, peer.va, peer.remote, 0});
    Completion no_sink = only_entry(p.cq_a);
    EXPECT_NE(no_sink.outcome, Completion::Outcome::success);  // the caller's duty: any outcome

    Harness x;
    Pair q = x.connected_pair();
    LockedBuffer mine = x.arena.allocate(PAGE_SIZE), theirs = x.arena.allocate(PAGE_SIZE);
    fill(theirs.bytes(), 19);
    Lam l = x.build_lam(mine, 0, PAGE_SIZE);
    Region src = x.register_mr(q.pd, theirs, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ);
    ObjectId s2 = x.fr_mr(q.pd, 1, false);
    x.accept(calls::FastRegister{q.qp_a, 1, s2, l.pages, 0, PAGE_SIZE, kBase,
                                 NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_RDMA_READ_SINK});
    x.drain(q.cq_a);
    uint32_t t2 = x.local_token(s2);
    x.accept(calls::Read{q.qp_a, 2, {{kBase, 512, t2}}, src.va, src.remote, 0});
    auto got = x.drain(q.cq_a);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].outcome, Completion::Outcome::success) << got[0].why;
    EXPECT_EQ(std::memcmp(mine.data(), theirs.data(), 512), 0);
}

// FLS-02, FR-ST-01: on a QP already in error a fast registration is flushed (STATUS_CANCELLED)
// and registers nothing; an invalidation flushed the same way leaves the token valid.
TEST_F(FastRegisteredAccess, FlushedRegistrationAndInvalidationTakeNoEffect) {
    // B's QP goes into error (a write with a bad token).
    h.accept(calls::Write{p.qp_b, 1, {{peer.va, 8, peer.local}}, peer.va, 0xBAD, 0, {}});
    h.accept(calls::FastRegister{p.qp_b, 2, remote_mr, lam.pages, 0, PAGE_SIZE, kBase,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
    auto flushed = h.drain(p.cq_b);
    ASSERT_EQ(flushed.size(), 2u);
    EXPECT_EQ(flushed[1].outcome, Completion::Outcome::cancelled);
    EXPECT_NE(state(remote_mr).phase, MrState::Phase::fast_registered);

    h.accept(calls::FastRegister{p.qp_a, 3, local_mr, lam.pages, 0, PAGE_SIZE, kBase, 0});
    h.drain(p.cq_a);
    h.accept(calls::Invalidate{p.qp_b, 4, local_mr, 0});
    auto cancelled = h.drain(p.cq_b);
    ASSERT_EQ(cancelled.size(), 1u);
    EXPECT_EQ(cancelled[0].outcome, Completion::Outcome::cancelled);
    EXPECT_EQ(state(local_mr).phase, MrState::Phase::fast_registered);
}

// FR-FENCE-01: with READ_FENCE the registration completes only after the earlier reads.
TEST_F(FastRegisteredAccess, ReadFenceOrdersAfterEarlierReads) {
    h.accept(
        calls::Read{p.qp_a, 0x1, {{peer.va, 64, peer.local}}, peer.va + PAGE_SIZE, peer.remote, 0});
    h.accept(fr(remote_mr, NDK_OP_FLAG_READ_FENCE, 0, PAGE_SIZE, 1, 0x2));
    auto entries = h.drain(p.cq_a);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].request_context, 0x1u);
    EXPECT_EQ(entries[1].request_context, 0x2u);
}

}  // namespace
}  // namespace ndkct::model::test
