// judge_inline / judge_async: how an observed status is held against an expectation, on the
// seed functions' own expectations (documented failures, model choices, tolerated and also
// allowed outcomes, pending rules, consumer errors).
#include <functional>

#include "harness.hpp"

namespace ndkct::model::test {
namespace {

class Judge : public ::testing::Test {
  protected:
    Harness h;
    Pair p = h.connected_pair();
    LockedBuffer buffer = h.arena.allocate(2 * PAGE_SIZE);
    Lam lam = h.build_lam(buffer, 0, 2 * PAGE_SIZE);
    ObjectId local_mr = h.fr_mr(p.pd, 2, false);

    calls::FastRegister fr(uint32_t flags, uint64_t base = 0x100000) {
        return calls::FastRegister{p.qp_a, 1, local_mr, {lam.pages[0]}, 0, PAGE_SIZE, base, flags};
    }
};

// A provider answering STATUS_SUCCESS where the model requires a documented failure: a violation
// naming the rule (FR-ACC-01).
TEST_F(Judge, SuccessWhereADocumentedFailureIsRequiredIsAViolation) {
    Expectation e = h.model.expect(fr(NDK_OP_FLAG_ALLOW_REMOTE_READ));
    Verdict v = judge_inline(e, STATUS_SUCCESS, "NdkFastRegister");
    ASSERT_EQ(v.violations.size(), 1u) << v.describe();
    EXPECT_FALSE(v.violations[0].warning);
    EXPECT_TRUE(names(v.violations[0].rules, "FR-ACC-01"));
    EXPECT_NE(v.describe().find("STATUS_ACCESS_VIOLATION"), std::string::npos) << v.describe();
    // And applying it does not advance the state (off the documented path).
    Applied a = h.model.apply(fr(NDK_OP_FLAG_ALLOW_REMOTE_READ), status(STATUS_SUCCESS));
    EXPECT_FALSE(a.verdict.ok());
    EXPECT_EQ(h.model.state_of<MrState>(local_mr)->phase, MrState::Phase::initialized);
}

// Another error than the documented one: a violation naming only the documented rules.
TEST_F(Judge, AnotherErrorThanTheDocumentedOneIsAViolation) {
    Expectation e = h.model.expect(fr(NDK_OP_FLAG_ALLOW_REMOTE_READ));
    Verdict v = judge_inline(e, STATUS_INVALID_PARAMETER, "NdkFastRegister");
    EXPECT_FALSE(v.ok());
    EXPECT_TRUE(violation_names(v, "FR-ACC-01"));
}

// A model-choice mismatch (another error where the docs name none): a warning naming the rules.
TEST_F(Judge, ModelChoiceMismatchIsAWarning) {
    Expectation e = h.model.expect(fr(0, 0x100000 + 5));  // FR-ALIGN-01, AMB-29
    Verdict v = judge_inline(e, STATUS_NOT_SUPPORTED, "NdkFastRegister");
    EXPECT_TRUE(v.ok()) << v.describe();
    ASSERT_EQ(v.violations.size(), 1u);
    EXPECT_TRUE(v.violations[0].warning);
    EXPECT_TRUE(names(v.violations[0].rules, "FR-ALIGN-01"));
    EXPECT_TRUE(names(v.violations[0].rules, "AMB-29"));
    EXPECT_EQ(v.describe().rfind("warning: ", 0), 0u) << v.describe();
}

// A documented failure and a model-choice one at once: any listed status is right; an unlisted
// error is a violation naming the documented rule only.
TEST_F(Judge, SeveralFailuresAnyListedStatusIsRight) {
    Expectation e = h.model.expect(fr(NDK_OP_FLAG_ALLOW_REMOTE_READ, 0x100000 + 5));
    ASSERT_GE(e.failures.size(), 2u) << describe(e);
    EXPECT_TRUE(judge_inline(e, STATUS_ACCESS_VIOLATION, "x").clean());
    EXPECT_TRUE(judge_inline(e, STATUS_INVALID_PARAMETER, "x").clean());
    Verdict v = judge_inline(e, STATUS_NOT_SUPPORTED, "x");
    EXPECT_FALSE(v.ok());
    EXPECT_TRUE(violation_names(v, "FR-ACC-01"));
    EXPECT_FALSE(violation_names(v, "AMB-29"));
    // Accepted: FR-ACC-01 is documented, so it is a violation even though the other failure
    // could surface in the completion.
    EXPECT_TRUE(violation_names(judge_inline(e, STATUS_SUCCESS, "x"), "FR-ACC-01"));
}

// GEN-ASYNC-01 and the call's own rule: STATUS_PENDING where the call cannot pend.
TEST_F(Judge, PendingWhereNotAllowed) {
    Expectation e = h.model.expect(fr(0));
    Verdict v = judge_inline(e, STATUS_PENDING, "NdkFastRegister");
    EXPECT_TRUE(violation_names(v, "FR-ST-03"));
    EXPECT_TRUE(violation_names(v, "WR-04"));
    // A callback reporting STATUS_PENDING is always wrong.
    Expectation reg = h.model.expect(calls::InitializeFastRegisterMr{h.mr(p.pd, true), 2, false});
    EXPECT_TRUE(judge_inline(reg, STATUS_PENDING, "x").clean());
    EXPECT_TRUE(violation_names(judge_async(reg, STATUS_PENDING, "x"), "GEN-ASYNC-01"));
}

// A valid call that fails with an unlisted status names its success rules; a resources failure
// is allowed where documented (inline or through the callback).
TEST_F(Judge, ValidCallFailingNamesTheSuccessRules) {
    Expectation e = h.model.expect(fr(0));
    Verdict v = judge_inline(e, STATUS_INVALID_PARAMETER, "NdkFastRegister");
    EXPECT_TRUE(violation_names(v, "FR-ST-01"));
    ObjectId mr = h.mr(p.pd, false);
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    Expectation reg =
        h.model.expect(calls::RegisterMr{mr, view_mdl(chain.head(), PAGE_SIZE), PAGE_SIZE, 0});
    EXPECT_TRUE(judge_inline(reg, STATUS_INSUFFICIENT_RESOURCES, "x").clean());
    EXPECT_TRUE(judge_async(reg, STATUS_INSUFFICIENT_RESOURCES, "x").clean());
    EXPECT_TRUE(violation_names(judge_async(reg, STATUS_INVALID_PARAMETER, "x"), "RMR-ST-01"));
}

// Consumer errors (AMB-16): whatever the provider does is at most a warning.
TEST_F(Judge, ConsumerErrorsOnlyWarn) {
    ObjectId normal = h.mr(p.pd, false);
    Expectation e = h.model.expect(calls::InitializeFastRegisterMr{normal, 2, false});
    ASSERT_TRUE(e.consumer_error);
    for (NTSTATUS s : {STATUS_SUCCESS, STATUS_INVALID_PARAMETER, STATUS_INVALID_DEVICE_STATE}) {
        Verdict v = judge_inline(e, s, "x");
        EXPECT_TRUE(v.ok()) << s << ": " << v.describe();
    }
}

// An undefined expectation (a broken consumer duty) judges nothing.
TEST_F(Judge, UndefinedJudgesNothing) {
    Expectation e = h.model.expect(calls::InitializeFastRegisterMr{9999, 2, false});
    EXPECT_TRUE(e.undefined);
    EXPECT_TRUE(judge_inline(e, STATUS_SUCCESS, "x").clean());
    EXPECT_TRUE(judge_inline(e, STATUS_PENDING, "x").clean());
}

// GEN-MAND-01: STATUS_NOT_IMPLEMENTED (a provider's TODO entry) never passes for an answer,
// wherever the status alone would: a refusal a model choice expects, a consumer error, an
// undefined call, inline or through the callback. Where it already fails (a documented refusal,
// a valid call) the call's own rules name it as before: the vendor's "Next: implement ..." line
// reads those.
TEST_F(Judge, NotImplementedPassesForNoAnswer) {
    ObjectId normal = h.mr(p.pd, false);
    const Expectation would_pass[] = {
        h.model.expect(fr(0, 0x100000 + 5)),                                // model choice
        h.model.expect(calls::InitializeFastRegisterMr{normal, 2, false}),  // consumer error
        h.model.expect(calls::InitializeFastRegisterMr{9999, 2, false}),    // undefined
    };
    for (const Expectation& e : would_pass)
        for (bool async : {false, true}) {
            Verdict v = async ? judge_async(e, STATUS_NOT_IMPLEMENTED, "NdkFastRegister")
                              : judge_inline(e, STATUS_NOT_IMPLEMENTED, "NdkFastRegister");
            EXPECT_FALSE(v.ok()) << v.describe();
            ASSERT_EQ(v.violations.size(), 1u) << v.describe();
            EXPECT_EQ(v.violations[0].rules, RuleIds{"GEN-MAND-01"}) << v.describe();
            EXPECT_NE(v.describe().find("NdkFastRegister returned STATUS_NOT_IMPLEMENTED"),
                      std::string::npos)
                << v.describe();
        }
    for (const Expectation& e :
         {h.model.expect(fr(NDK_OP_FLAG_ALLOW_REMOTE_READ)), h.model.expect(fr(0))}) {
        Verdict v = judge_inline(e, STATUS_NOT_IMPLEMENTED, "NdkFastRegister");
        ASSERT_FALSE(v.ok());
        EXPECT_FALSE(violation_names(v, "GEN-MAND-01")) << v.describe();
        EXPECT_NE(v.describe().find("STATUS_NOT_IMPLEMENTED"), std::string::npos);
    }
}

// Expectation::model_status: the first failure, else the preferred status.
TEST_F(Judge, ModelStatusIsTheFirstFailureOrThePreferredStatus) {
    EXPECT_EQ(h.model.expect(fr(0)).model_status(), STATUS_SUCCESS);
    EXPECT_EQ(h.model.expect(fr(NDK_OP_FLAG_ALLOW_REMOTE_READ)).model_status(),
              STATUS_ACCESS_VIOLATION);
}

// ---- Profile knobs switch readings (spec::load_profile on JSON text) ----

struct Knob {
    const char* profile;  // JSON text
    std::function<Call(Harness&)> call;
    NTSTATUS default_status;  // model_status() with the default profile
    NTSTATUS knob_status;     // model_status() with `profile`
};

TEST(ProfileKnobs, ExpectationsChangeWithTheProfile) {
    auto lam_call = [](Harness& h, bool buffer, bool completion) {
        LockedBuffer b = h.arena.allocate(PAGE_SIZE);  // the view keeps what it needs
        MdlChain chain = platform::describe(b, 0, PAGE_SIZE);
        return calls::BuildLam{h.adapter, view_mdl(chain.head(), PAGE_SIZE),
                               PAGE_SIZE, completion,
                               buffer,    buffer ? 4096u : 0u};
    };
    std::vector<Knob> knobs = {
        {R"({"name": "k", "policies": {"unknown_flags": "reject"}})",
         [](Harness& h) {
             LockedBuffer b = h.arena.allocate(PAGE_SIZE);
             MdlChain c = platform::describe(b, 0, PAGE_SIZE);
             return Call{calls::RegisterMr{h.mr(h.pd(), false), view_mdl(c.head(), PAGE_SIZE),
                                           PAGE_SIZE, 0x100}};
         },
         STATUS_SUCCESS, STATUS_INVALID_PARAMETER},
        {R"({"name": "k", "policies": {"zero_adapter_page_count": "accept"}})",
         [](Harness& h) {
             return Call{calls::InitializeFastRegisterMr{h.mr(h.pd(), true), 0, false}};
         },
         STATUS_INVALID_PARAMETER, STATUS_SUCCESS},
        {R"({"name": "k", "policies": {"build_lam_null_buffer": "reject"}})",
         [&](Harness& h) { return Call{lam_call(h, false, true)}; }, STATUS_BUFFER_TOO_SMALL,
         STATUS_INVALID_PARAMETER},
        {R"({"name": "k", "policies": {"build_lam_null_completion": "reject"}})",
         [&](Harness& h) { return Call{lam_call(h, true, false)}; }, STATUS_SUCCESS,
         STATUS_INVALID_PARAMETER},
        {R"({"name": "k", "policies": {"mr_wrong_state_status": "invalid_parameter"}})",
         [](Harness& h) {
             return Call{calls::InitializeFastRegisterMr{h.mr(h.pd(), false), 4, false}};
         },
         STATUS_INVALID_DEVICE_STATE, STATUS_INVALID_PARAMETER},
        {R"({"name": "k", "limits": {"max_frmr_pages": 300}})",
         [](Harness& h) {
             return Call{calls::InitializeFastRegisterMr{h.mr(h.pd(), true), 301, false}};
         },
         STATUS_SUCCESS, STATUS_IMPLEMENTATION_LIMIT},
        {R"({"name": "k", "adapter_info": {"MaxInitiatorQueueDepth": 8}})",
         [](Harness& h) {
             ObjectId cq = h.cq();
             return Call{calls::CreateQp{h.pd(), cq, cq, 0, 4, 9, 1, 1, 0}};
         },
         STATUS_SUCCESS, STATUS_INVALID_PARAMETER},
    };
    for (const Knob& k : knobs) {
        Harness by_default;
        Harness with_knob(Mode::simulate, readings_from(k.profile));
        EXPECT_EQ(by_default.model.expect(k.call(by_default)).model_status(), k.default_status)
            << k.profile;
        EXPECT_EQ(with_knob.model.expect(k.call(with_knob)).model_status(), k.knob_status)
            << k.profile;
    }
}

// The shipped strict profile loads and reads its policies.
TEST(ProfileKnobs, StrictProfileReadsItsPolicies) {
    Readings r = read_profile(spec::builtin_profile("strict"));
    EXPECT_TRUE(r.unknown_flags_rejected);
    EXPECT_TRUE(r.unlisted_flag_rejected);
    EXPECT_TRUE(r.zero_base_va_rejected);
    EXPECT_TRUE(r.lone_remote_write_bit_rejected);
    EXPECT_TRUE(r.fr_usable_at_return);
    EXPECT_EQ(r.fr_reinitialize, Readings::FrReinitialize::reject);
    EXPECT_FALSE(r.build_lam_null_buffer_probe);
    Readings d = default_readings();
    EXPECT_FALSE(d.unknown_flags_rejected);
    EXPECT_TRUE(d.zero_adapter_page_count_rejected);
    EXPECT_TRUE(d.fr_bad_request_inline);
}

}  // namespace
}  // namespace ndkct::model::test
