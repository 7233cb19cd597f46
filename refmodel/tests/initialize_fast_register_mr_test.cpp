// NdkInitializeFastRegisterMr (IFR-*): the model's expectations and the state it moves to.
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

class InitializeFastRegisterMr : public ::testing::Test {
  protected:
    Harness h;
    ObjectId pd = h.pd();
    ObjectId fr = h.mr(pd, true);

    const MrState& state(ObjectId mr) { return *h.model.state_of<MrState>(mr); }
};

// IFR-ST-01, IFR-POST-01: a valid call may succeed inline; the MR is then initialized.
TEST_F(InitializeFastRegisterMr, ValidCallSucceedsInlineAndInitializesTheMr) {
    calls::InitializeFastRegisterMr call{fr, 16, false};
    Expectation e = h.model.expect(call);
    EXPECT_FALSE(e.must_fail()) << describe(e);
    EXPECT_TRUE(e.may_pend);
    EXPECT_TRUE(e.may_lack_resources);  // IFR-ST-02 (resources, inline or async)
    EXPECT_EQ(e.model_status(), STATUS_SUCCESS);
    h.accept(call);
    EXPECT_EQ(state(fr).phase, MrState::Phase::initialized);
    EXPECT_EQ(state(fr).max_pages, 16u);
    EXPECT_FALSE(state(fr).remote_access);
}

// IFR-RA-02: RemoteAccess FALSE and TRUE are both accepted.
TEST_F(InitializeFastRegisterMr, BothRemoteAccessValuesAreAccepted) {
    ObjectId other = h.mr(pd, true);
    EXPECT_FALSE(h.model.expect(calls::InitializeFastRegisterMr{fr, 8, false}).must_fail());
    EXPECT_FALSE(h.model.expect(calls::InitializeFastRegisterMr{other, 8, true}).must_fail());
    h.accept(calls::InitializeFastRegisterMr{other, 8, true});
    EXPECT_TRUE(state(other).remote_access);
}

// IFR-APC-03, AMB-09: AdapterPageCount 0 fails with STATUS_INVALID_PARAMETER by default. The docs
// do not say it fails at all (a reading): another error and a success are both warnings.
TEST_F(InitializeFastRegisterMr, ZeroPagesFailsWithInvalidParameterByDefault) {
    calls::InitializeFastRegisterMr call{fr, 0, false};
    Expectation e = h.model.expect(call);
    ASSERT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "IFR-APC-03")) << describe(e);
    EXPECT_TRUE(failure_names(e, "AMB-09"));
    EXPECT_TRUE(judge_inline(e, STATUS_INVALID_PARAMETER, "NdkInitializeFastRegisterMr").clean());
    Verdict other = judge_inline(e, STATUS_NOT_SUPPORTED, "NdkInitializeFastRegisterMr");
    EXPECT_TRUE(other.ok());
    EXPECT_TRUE(warning_names(other, "IFR-APC-03"));
    Verdict accepted = judge_inline(e, STATUS_SUCCESS, "x");
    EXPECT_TRUE(accepted.ok()) << accepted.describe();
    EXPECT_TRUE(warning_names(accepted, "AMB-09"));
    // ...and the model follows the provider: the MR is initialized for 0 pages.
    Verdict v = h.model.apply(call, status(STATUS_SUCCESS)).verdict;
    EXPECT_TRUE(v.ok()) << v.describe();
    EXPECT_EQ(state(fr).phase, MrState::Phase::initialized);
    EXPECT_EQ(state(fr).max_pages, 0u);
}

// IFR-APC-03, AMB-09 (accept): with the knob, 0 pages is a valid request.
TEST_F(InitializeFastRegisterMr, ZeroPagesIsAcceptedWhenTheProfileSaysSo) {
    Harness lenient(Mode::simulate, readings_with("zero_adapter_page_count", "accept"));
    ObjectId mr = lenient.mr(lenient.pd(), true);
    EXPECT_FALSE(lenient.model.expect(calls::InitializeFastRegisterMr{mr, 0, false}).must_fail());
}

// IFR-APC-04: 1, 16 and FRMRPageCount pages must all work (no IMPLEMENTATION_LIMIT allowed).
TEST_F(InitializeFastRegisterMr, OneSixteenAndFrmrPageCountMustSucceed) {
    uint32_t frmr = h.model.readings().adapter_info.FRMRPageCount;
    ASSERT_GE(frmr, 16u);
    for (uint32_t pages : {1u, 16u, frmr}) {
        Expectation e = h.model.expect(calls::InitializeFastRegisterMr{fr, pages, false});
        EXPECT_FALSE(e.must_fail()) << pages;
        EXPECT_TRUE(e.also_allowed.empty()) << pages;
        EXPECT_EQ(e.preferred, STATUS_SUCCESS);
        Verdict v = judge_inline(e, STATUS_IMPLEMENTATION_LIMIT, "NdkInitializeFastRegisterMr");
        EXPECT_TRUE(violation_names(v, "IFR-APC-04")) << pages << ": " << v.describe();
    }
}

// IFR-APC-02, AMB-08: one more than FRMRPageCount may succeed or hit STATUS_IMPLEMENTATION_LIMIT;
// the reference provider succeeds up to limits.max_frmr_pages and refuses beyond it.
TEST_F(InitializeFastRegisterMr, BeyondFrmrPageCountImplementationLimitIsAllowed) {
    uint32_t frmr = h.model.readings().adapter_info.FRMRPageCount;
    Expectation e = h.model.expect(calls::InitializeFastRegisterMr{fr, frmr + 1, false});
    EXPECT_FALSE(e.must_fail());
    ASSERT_EQ(e.also_allowed.size(), 1u);
    EXPECT_TRUE(names(e.also_allowed[0].rules, "IFR-APC-02"));
    EXPECT_EQ(e.preferred, STATUS_SUCCESS);
    EXPECT_TRUE(judge_inline(e, STATUS_SUCCESS, "x").clean());
    EXPECT_TRUE(judge_inline(e, STATUS_IMPLEMENTATION_LIMIT, "x").clean());
    EXPECT_TRUE(judge_async(e, STATUS_IMPLEMENTATION_LIMIT, "x").clean());

    uint32_t over = h.model.readings().max_frmr_pages + 1;
    Expectation far = h.model.expect(calls::InitializeFastRegisterMr{fr, over, false});
    EXPECT_EQ(far.preferred, STATUS_IMPLEMENTATION_LIMIT);
    EXPECT_EQ(far.model_status(), STATUS_IMPLEMENTATION_LIMIT);
}

// IFR-ST-02, IFR-POST-01, AMB-11: after STATUS_PENDING the MR is usable only once the callback
// reported success.
TEST_F(InitializeFastRegisterMr, PendingThenCompletedMakesTheMrUsable) {
    Applied a = h.accept(calls::InitializeFastRegisterMr{fr, 4, true}, pending());
    ASSERT_NE(a.pending, 0u);
    EXPECT_EQ(state(fr).phase, MrState::Phase::initializing);
    // TOK-04, IFR-TOK-01: no token before the initialization completed.
    EXPECT_TRUE(h.model.expect(calls::GetLocalTokenFromMr{fr}).undefined);
    Applied done = h.model.complete(a.pending, STATUS_SUCCESS);
    EXPECT_TRUE(done.verdict.clean()) << done.verdict.describe();
    EXPECT_EQ(state(fr).phase, MrState::Phase::initialized);
    EXPECT_TRUE(state(fr).remote_access);
    EXPECT_FALSE(h.model.expect(calls::GetLocalTokenFromMr{fr}).undefined);
    EXPECT_FALSE(h.model.expect(calls::GetRemoteTokenFromMr{fr}).undefined);  // IFR-TOK-02
}

// IFR-POST-01, AMB-11 (completion): a fast registration posted before the callback is a consumer
// error; with fr_init_ready_point = return it is a valid request.
TEST_F(InitializeFastRegisterMr, FastRegisterBeforeTheCallbackDependsOnTheProfile) {
    for (bool at_return : {false, true}) {
        Harness x(Mode::simulate,
                  at_return ? readings_with("fr_init_ready_point", "return") : default_readings());
        Pair p = x.connected_pair();
        ObjectId mr = x.mr(p.pd, true);
        LockedBuffer buffer = x.arena.allocate(PAGE_SIZE);
        Lam lam = x.build_lam(buffer, 0, PAGE_SIZE);
        Applied a = x.accept(calls::InitializeFastRegisterMr{mr, 1, false}, pending());
        Expectation e =
            x.model.expect(calls::FastRegister{p.qp_a, 1, mr, lam.pages, 0, PAGE_SIZE, 0x10000, 0});
        if (at_return) {
            EXPECT_FALSE(e.must_fail()) << describe(e);
        } else {
            EXPECT_TRUE(e.consumer_error);
            EXPECT_TRUE(failure_names(e, "FR-MR-01")) << describe(e);
        }
        EXPECT_TRUE(x.model.complete(a.pending, STATUS_SUCCESS).verdict.clean());
    }
}

// IFR-ST-02, IFR-ST-04: a pending initialization that fails leaves the MR unusable.
TEST_F(InitializeFastRegisterMr, PendingThenFailedLeavesTheMrUninitialized) {
    uint32_t frmr = h.model.readings().adapter_info.FRMRPageCount;
    Applied a = h.accept(calls::InitializeFastRegisterMr{fr, frmr + 1, false}, pending());
    Applied done = h.model.complete(a.pending, STATUS_IMPLEMENTATION_LIMIT);
    EXPECT_TRUE(done.verdict.clean()) << done.verdict.describe();
    EXPECT_EQ(state(fr).phase, MrState::Phase::uninitialized);
    // GEN-ASYNC-01: a second callback for the same request is a violation.
    EXPECT_TRUE(
        violation_names(h.model.complete(a.pending, STATUS_SUCCESS).verdict, "GEN-ASYNC-01"));
}

// IFR-ST-02, RMR-ST-03 style: resources may be lacking inline or through the callback.
TEST_F(InitializeFastRegisterMr, InsufficientResourcesInlineOrAsyncIsConformant) {
    calls::InitializeFastRegisterMr call{fr, 8, false};
    Applied inline_failure = h.accept(call, status(STATUS_INSUFFICIENT_RESOURCES));
    EXPECT_EQ(state(fr).phase, MrState::Phase::uninitialized);  // IFR-ST-03
    Applied a = h.accept(call, pending());
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_INSUFFICIENT_RESOURCES).verdict.clean());
    EXPECT_EQ(state(fr).phase, MrState::Phase::uninitialized);  // IFR-ST-04
}

// IFR-ST-01: a valid call answered with an undocumented error is a violation naming the success
// rules; STATUS_PENDING from a call that may pend is fine.
TEST_F(InitializeFastRegisterMr, ValidCallMustNotFailOtherwise) {
    Applied a = h.model.apply(calls::InitializeFastRegisterMr{fr, 8, false},
                              status(STATUS_INVALID_PARAMETER));
    EXPECT_TRUE(violation_names(a.verdict, "IFR-ST-01")) << a.verdict.describe();
    EXPECT_EQ(state(fr).phase, MrState::Phase::uninitialized);
}

// IFR-PRE-01, AMB-16: on a normal MR it is a consumer error; the profile's status is expected,
// and any outcome is only a warning.
TEST_F(InitializeFastRegisterMr, OnANormalMrIsAConsumerErrorWithTheProfilesStatus) {
    ObjectId normal = h.mr(pd, false);
    calls::InitializeFastRegisterMr call{normal, 8, false};
    Expectation e = h.model.expect(call);
    EXPECT_TRUE(e.consumer_error);
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_DEVICE_STATE, "IFR-PRE-01")) << describe(e);
    EXPECT_TRUE(failure_names(e, "AMB-16"));
    Verdict v = judge_inline(e, STATUS_SUCCESS, "NdkInitializeFastRegisterMr");
    EXPECT_TRUE(v.ok());
    EXPECT_TRUE(warning_names(v, "IFR-PRE-01"));

    Harness other(Mode::simulate, readings_with("mr_wrong_state_status", "invalid_parameter"));
    ObjectId n2 = other.mr(other.pd(), false);
    EXPECT_TRUE(fails_with(other.model.expect(calls::InitializeFastRegisterMr{n2, 8, false}),
                           STATUS_INVALID_PARAMETER, "IFR-PRE-01"));
}

// AMB-16: a consumer error that the provider pends and then fails changes nothing.
TEST_F(InitializeFastRegisterMr, PendingConsumerErrorLeavesTheNormalMrAlone) {
    LockedBuffer buffer = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(pd, buffer, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    Applied a = h.accept(calls::InitializeFastRegisterMr{r.mr, 8, false}, pending());
    EXPECT_EQ(state(r.mr).phase, MrState::Phase::registered);
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_INVALID_DEVICE_STATE).verdict.clean());
    EXPECT_EQ(state(r.mr).phase, MrState::Phase::registered);
    EXPECT_EQ(h.model.object_of_token(h.adapter, r.local, false), r.mr);
}

// IFR-CONC-01, AMB-10: initializations of different MRs may overlap; the same MR may be
// initialized again while no registration is valid, not while one is (default reading).
TEST_F(InitializeFastRegisterMr, DifferentMrsMayBeInitializedConcurrently) {
    ObjectId a_mr = h.mr(pd, true), b_mr = h.mr(pd, true);
    Applied a = h.accept(calls::InitializeFastRegisterMr{a_mr, 4, false}, pending());
    // A valid initialization refused while another MR's pends breaks IFR-CONC-01 first.
    Verdict busy = judge_inline(h.model.expect(calls::InitializeFastRegisterMr{b_mr, 8, true}),
                                STATUS_INVALID_DEVICE_STATE, "NdkInitializeFastRegisterMr");
    ASSERT_FALSE(busy.violations.empty());
    EXPECT_EQ(busy.violations.front().rules.front(), "IFR-CONC-01") << busy.describe();
    Applied b = h.accept(calls::InitializeFastRegisterMr{b_mr, 8, true}, pending());
    EXPECT_TRUE(h.model.complete(b.pending, STATUS_SUCCESS).verdict.clean());
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_SUCCESS).verdict.clean());
    EXPECT_EQ(state(a_mr).max_pages, 4u);
    EXPECT_EQ(state(b_mr).max_pages, 8u);
    // With none pending, the same refusal names IFR-CONC-01 nowhere.
    EXPECT_FALSE(violation_names(
        judge_inline(h.model.expect(calls::InitializeFastRegisterMr{h.mr(pd, true), 8, true}),
                     STATUS_INVALID_DEVICE_STATE, "NdkInitializeFastRegisterMr"),
        "IFR-CONC-01"));
    // Re-initializing an initialized MR with no valid registration: allowed by default.
    EXPECT_FALSE(h.model.expect(calls::InitializeFastRegisterMr{a_mr, 2, false}).must_fail());
    // While its own initialization pends: refused.
    ObjectId c_mr = h.mr(pd, true);
    h.accept(calls::InitializeFastRegisterMr{c_mr, 4, false}, pending());
    EXPECT_TRUE(fails_with(h.model.expect(calls::InitializeFastRegisterMr{c_mr, 4, false}),
                           STATUS_INVALID_DEVICE_STATE, "AMB-10"));
}

TEST_F(InitializeFastRegisterMr, ReinitializingWithAValidRegistrationIsRefused) {
    Pair p = h.connected_pair();
    ObjectId mr = h.fr_mr(p.pd, 1, false);
    LockedBuffer buffer = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(buffer, 0, PAGE_SIZE);
    h.accept(calls::FastRegister{p.qp_a, 1, mr, lam.pages, 0, PAGE_SIZE, 0x40000, 0});
    ASSERT_EQ(state(mr).phase, MrState::Phase::fast_registered);
    Expectation e = h.model.expect(calls::InitializeFastRegisterMr{mr, 1, false});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_DEVICE_STATE, "AMB-10")) << describe(e);
    EXPECT_TRUE(e.refusal_is_reading());  // the docs do not say a re-initialization fails

    Harness strict(Mode::simulate, readings_with("fr_mr_reinitialize", "reject"));
    ObjectId s = strict.fr_mr(strict.pd(), 1, false);
    EXPECT_TRUE(
        failure_names(strict.model.expect(calls::InitializeFastRegisterMr{s, 1, false}), "AMB-10"));
    Harness lax(Mode::simulate, readings_with("fr_mr_reinitialize", "allow_always"));
    ObjectId l = lax.fr_mr(lax.pd(), 1, false);
    EXPECT_FALSE(lax.model.expect(calls::InitializeFastRegisterMr{l, 1, false}).must_fail());
}

// IFR-APC-01, FR-APC-03, FR-APC-02, AMB-08: after initializing with N pages, fast registrations
// of 1..N pages are supported; N + 1 is refused (inline by default, AMB-29).
TEST_F(InitializeFastRegisterMr, InitializedCountBoundsLaterFastRegistrations) {
    Pair p = h.connected_pair();
    const uint32_t n = 3;
    ObjectId mr = h.fr_mr(p.pd, n, false);
    LockedBuffer buffer = h.arena.allocate((n + 1) * PAGE_SIZE);
    Lam lam = h.build_lam(buffer, 0, (n + 1) * PAGE_SIZE);
    for (uint32_t pages = 1; pages <= n; ++pages) {
        std::vector<uint64_t> array(lam.pages.begin(), lam.pages.begin() + pages);
        Expectation e = h.model.expect(
            calls::FastRegister{p.qp_a, pages, mr, array, 0, pages * PAGE_SIZE, 0x100000, 0});
        EXPECT_FALSE(e.must_fail()) << pages << ": " << describe(e);
    }
    Expectation over =
        h.model.expect(calls::FastRegister{p.qp_a, 9, mr, lam.pages, 0, PAGE_SIZE, 0x100000, 0});
    EXPECT_TRUE(fails_with(over, STATUS_INVALID_PARAMETER, "FR-APC-02")) << describe(over);
    EXPECT_TRUE(failure_names(over, "AMB-08"));
}

}  // namespace
}  // namespace ndkct::model::test
