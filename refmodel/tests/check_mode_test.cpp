// Check mode: the model predicts completions and judges the NDK_RESULT_EX entries a provider
// returns. Here the test plays the provider: it moves (or fails to move) the bytes itself and
// feeds completions to observe_completion.
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

class CheckMode : public ::testing::Test {
  protected:
    explicit CheckMode(Readings readings = default_readings())
        : h(Mode::check, std::move(readings)) {}

    Harness h;
    Pair p = h.connected_pair();
    LockedBuffer a_buf = h.arena.allocate(2 * PAGE_SIZE);
    LockedBuffer b_buf = h.arena.allocate(2 * PAGE_SIZE);
    Region a = h.register_mr(p.pd, a_buf, 0, 2 * PAGE_SIZE, 0xF);
    Region b = h.register_mr(p.pd, b_buf, 0, 2 * PAGE_SIZE,
                             NDK_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);

    // A write of `n` bytes from a to b, posted and accepted; returns its context.
    Context write(Context ctx, uint32_t n = 256, uint32_t flags = 0) {
        fill(a_buf.bytes(), static_cast<uint8_t>(ctx));
        h.accept(calls::Write{p.qp_a, ctx, {{a.va, n, a.local}}, b.va, b.remote, flags, {}});
        return ctx;
    }
    void provider_moves(uint32_t n = 256) { std::memcpy(b_buf.data(), a_buf.data(), n); }
};

// WRT-01, CQP-CTX-01: the right completion, with the bytes in place, passes; nothing is then
// outstanding.
TEST_F(CheckMode, RightCompletionPasses) {
    write(0x10);
    EXPECT_EQ(h.model.outstanding_completions(p.qp_a), 1u);
    provider_moves();
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x10, NdkOperationTypeWrite), true);
    EXPECT_TRUE(v.clean()) << v.describe();
    EXPECT_EQ(h.model.outstanding_completions(p.qp_a), 0u);
    EXPECT_TRUE(h.model.expect_nothing_outstanding(p.qp_a).clean());
}

// The same through NdkGetCqResults: the results the provider returned are judged.
TEST_F(CheckMode, GetCqResultsJudgesWhatItReturned) {
    write(0x11);
    provider_moves();
    Observed o;
    o.value = 1;
    o.results.push_back(cq_entry(STATUS_SUCCESS, p.ctx_a, 0x11, NdkOperationTypeWrite));
    EXPECT_TRUE(h.model.apply(calls::GetCqResults{p.cq_a, 8, true}, o).verdict.clean());
    Observed too_many;
    too_many.value = 9;
    EXPECT_TRUE(violation_names(
        h.model.apply(calls::GetCqResults{p.cq_a, 8, true}, too_many).verdict, "CQ-GET-01"));
}

// WRT-01, CQ-CST-01: a wrong status on a request that must succeed is a violation.
TEST_F(CheckMode, WrongStatusIsAViolation) {
    write(0x12);
    provider_moves();
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_ACCESS_VIOLATION, p.ctx_a, 0x12, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "WRT-01")) << v.describe();
    EXPECT_TRUE(violation_names(v, "CQ-CST-01"));
}

// WRT-01: success reported but the bytes did not land.
TEST_F(CheckMode, BytesNotLandedIsAViolation) {
    write(0x13);
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x13, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "WRT-01")) << v.describe();
}

// CQ-RES-03, CQ-RES-04: NDK_RESULT_EX.Type must be the operation; ProviderErrorCode 0 on success.
TEST_F(CheckMode, ResultExFieldsAreChecked) {
    write(0x14);
    provider_moves();
    NDK_RESULT_EX r = cq_entry(STATUS_SUCCESS, p.ctx_a, 0x14, NdkOperationTypeRead);
    r.ProviderErrorCode = 7;
    Verdict v = h.model.observe_completion(p.cq_a, r, true);
    EXPECT_TRUE(violation_names(v, "CQ-RES-03")) << v.describe();
    EXPECT_TRUE(violation_names(v, "CQ-RES-04")) << v.describe();
}

// WR-SILENT-01, FR-SILENT-01, AMB-33: an entry for a SILENT_SUCCESS request that succeeded is a
// violation (a warning with silent_success_entry = tolerated); its bytes are checked with the
// next entry of the queue.
TEST_F(CheckMode, CompletionForASilentSuccessIsAViolation) {
    write(0x15, 128, NDK_OP_FLAG_SILENT_SUCCESS);
    EXPECT_EQ(h.model.outstanding_completions(p.qp_a), 0u);
    provider_moves(128);
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x15, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "WR-SILENT-01")) << v.describe();

    Harness lax(Mode::check, readings_with("silent_success_entry", "tolerated"));
    Pair q = lax.connected_pair();
    LockedBuffer x = lax.arena.allocate(PAGE_SIZE);
    Region r = lax.register_mr(q.pd, x, 0, PAGE_SIZE, 0xF);
    lax.accept(calls::Write{
        q.qp_a, 0x16, {{r.va, 8, r.local}}, r.va + 100, r.remote, NDK_OP_FLAG_SILENT_SUCCESS, {}});
    Verdict w = lax.model.observe_completion(
        q.cq_a, cq_entry(STATUS_SUCCESS, q.ctx_a, 0x16, NdkOperationTypeWrite), true);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE(warning_names(w, "AMB-33"));
}

TEST_F(CheckMode, SilentSuccessBytesAreCheckedWithTheNextEntry) {
    write(0x17, 64, NDK_OP_FLAG_SILENT_SUCCESS);  // the provider does not move these
    fill(a_buf.bytes(), 0x18);
    h.accept(calls::Write{p.qp_a, 0x18, {{a.va, 8, a.local}}, b.va + PAGE_SIZE, b.remote, 0, {}});
    std::memcpy(b_buf.data() + PAGE_SIZE, a_buf.data(), 8);
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x18, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "WRT-01")) << v.describe();
}

// FR-QP-01, CQP-CTX-01, CQP-OBJ-02: a fast registration's entry without its QP's QPContext, or
// on the QP's receive CQ, breaks NdkFastRegister's own page first; another request's breaks only
// NdkCreateQp's. Either form of NdkGetCqResults: the oracle knows the request's type.
// LAM-REL-01: a write from a live LAM's logical addresses (privileged token) that fails, after
// another LAM of the adapter built before it was released, names LAM-REL-01 first (that release
// likely took its pages); with no release since it was built, the data-path rules alone.
TEST_F(CheckMode, FailedAccessThroughLamOutlivingAReleaseNamesLamRel01First) {
    uint32_t privileged = h.privileged_token(p.pd);
    LockedBuffer first = h.arena.allocate(PAGE_SIZE), second = h.arena.allocate(PAGE_SIZE);
    Lam a = h.build_lam(first, 0, PAGE_SIZE);
    Lam lam = h.build_lam(second, 0, PAGE_SIZE);
    auto write_from = [&](const Lam& l, Context ctx) {
        h.accept(calls::Write{p.qp_a, ctx, {{l.pages[0], 64, privileged}}, b.va, b.remote, 0, {}});
        return h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_ACCESS_VIOLATION, p.ctx_a, ctx, NdkOperationTypeWrite), true);
    };
    Verdict before = write_from(lam, 0x1E);
    ASSERT_FALSE(before.ok()) << before.describe();
    EXPECT_FALSE(violation_names(before, "LAM-REL-01")) << before.describe();
    EXPECT_TRUE(violation_names(before, "WRT-01")) << before.describe();

    Harness x(Mode::check, default_readings());
    Pair q = x.connected_pair();
    uint32_t priv = x.privileged_token(q.pd);
    LockedBuffer f = x.arena.allocate(PAGE_SIZE), g = x.arena.allocate(PAGE_SIZE);
    LockedBuffer t = x.arena.allocate(PAGE_SIZE);
    Region to = x.register_mr(q.pd, t, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    Lam released = x.build_lam(f, 0, PAGE_SIZE);
    Lam live = x.build_lam(g, 0, PAGE_SIZE);
    x.accept(calls::ReleaseLam{x.adapter, released.id});
    x.accept(calls::Write{q.qp_a, 0x1F, {{live.pages[0], 64, priv}}, to.va, to.remote, 0, {}});
    Verdict after = x.model.observe_completion(
        q.cq_a, cq_entry(STATUS_ACCESS_VIOLATION, q.ctx_a, 0x1F, NdkOperationTypeWrite), true);
    ASSERT_FALSE(after.ok()) << after.describe();
    EXPECT_EQ(after.violations.front().rules.front(), "LAM-REL-01") << after.describe();
    EXPECT_TRUE(violation_names(after, "WRT-01")) << after.describe();
    // A mapping built after the release is not the release's victim.
    Harness y(Mode::check, default_readings());
    Pair r = y.connected_pair();
    uint32_t priv_r = y.privileged_token(r.pd);
    LockedBuffer m = y.arena.allocate(PAGE_SIZE), n = y.arena.allocate(PAGE_SIZE);
    LockedBuffer u = y.arena.allocate(PAGE_SIZE);
    Region into = y.register_mr(r.pd, u, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    Lam gone = y.build_lam(m, 0, PAGE_SIZE);
    y.accept(calls::ReleaseLam{y.adapter, gone.id});
    Lam later = y.build_lam(n, 0, PAGE_SIZE);
    y.accept(
        calls::Write{r.qp_a, 0x20, {{later.pages[0], 64, priv_r}}, into.va, into.remote, 0, {}});
    Verdict fresh = y.model.observe_completion(
        r.cq_a, cq_entry(STATUS_ACCESS_VIOLATION, r.ctx_a, 0x20, NdkOperationTypeWrite), true);
    ASSERT_FALSE(fresh.ok()) << fresh.describe();
    EXPECT_FALSE(violation_names(fresh, "LAM-REL-01")) << fresh.describe();
    EXPECT_TRUE(violation_names(fresh, "WRT-01")) << fresh.describe();
}

TEST_F(CheckMode, FastRegisterEntryOffItsQpNamesFrQp01First) {
    LockedBuffer f = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(f, 0, PAGE_SIZE);
    for (bool ex : {true, false}) {
        const Context ctx = ex ? 0x1B : 0x1C;
        ObjectId mr = h.fr_mr(p.pd, 1, false);
        h.accept(calls::FastRegister{p.qp_a, ctx, mr, lam.pages, 0, PAGE_SIZE, 0x200000, 0});
        Verdict v = h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_SUCCESS, 0, ctx, NdkOperationTypeFastRegister), ex);
        ASSERT_FALSE(v.ok()) << v.describe();
        EXPECT_EQ(v.violations.front().rules.front(), "FR-QP-01") << v.describe();
        EXPECT_TRUE(violation_names(v, "CQP-CTX-01")) << v.describe();
        EXPECT_EQ(h.model.outstanding_completions(p.qp_a), 0u);
    }
    write(0x1D);
    provider_moves();
    Verdict w = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, 0, 0x1D, NdkOperationTypeWrite), true);
    ASSERT_FALSE(w.ok()) << w.describe();
    EXPECT_EQ(w.violations.front().rules.front(), "CQP-CTX-01") << w.describe();
    EXPECT_FALSE(violation_names(w, "FR-QP-01")) << w.describe();

    Harness x(Mode::check, default_readings());
    ObjectId pd = x.pd();
    ObjectId a_recv = x.cq(), a_init = x.cq(), b_cq = x.cq();
    ObjectId qa = x.qp(pd, a_recv, a_init, 0xAAA);
    ObjectId qb = x.qp(pd, b_cq, b_cq, 0xBBB);
    x.connect(qa, qb, 7101);
    LockedBuffer g = x.arena.allocate(PAGE_SIZE);
    Lam pages = x.build_lam(g, 0, PAGE_SIZE);
    ObjectId mr = x.fr_mr(pd, 1, false);
    x.accept(calls::FastRegister{qa, 0x1E, mr, pages.pages, 0, PAGE_SIZE, 0x200000, 0});
    Verdict o = x.model.observe_completion(
        a_recv, cq_entry(STATUS_SUCCESS, 0xAAA, 0x1E, NdkOperationTypeFastRegister), true);
    ASSERT_FALSE(o.ok()) << o.describe();
    EXPECT_EQ(o.violations.front().rules.front(), "FR-QP-01") << o.describe();
    EXPECT_TRUE(violation_names(o, "CQP-OBJ-02")) << o.describe();
}

// WR-05, FR-ST-04: an entry for a request that failed inline is a violation.
TEST_F(CheckMode, CompletionForAnInlineFailedRequestIsAViolation) {
    // A write with more SGEs than the QP allows is refused inline (SGE-04).
    std::vector<Sge> many(5, Sge{a.va, 8, a.local});
    h.accept(calls::Write{p.qp_a, 0x19, many, b.va, b.remote, 0, {}},
             status(STATUS_INVALID_PARAMETER));
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x19, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "WR-05")) << v.describe();

    // The same for a fast registration refused with STATUS_ACCESS_VIOLATION (FR-ACC-01).
    LockedBuffer f = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(f, 0, PAGE_SIZE);
    ObjectId mr = h.fr_mr(p.pd, 1, false);
    h.accept(calls::FastRegister{p.qp_a, 0x1A, mr, lam.pages, 0, PAGE_SIZE, 0x200000,
                                 NDK_OP_FLAG_ALLOW_REMOTE_READ},
             status(STATUS_ACCESS_VIOLATION));
    Verdict fr = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x1A, NdkOperationTypeFastRegister), true);
    EXPECT_TRUE(violation_names(fr, "FR-ST-04")) << fr.describe();
}

// WR-05: a posted request whose entry never comes is reported missing.
TEST_F(CheckMode, MissingCompletionIsReported) {
    write(0x1B);
    Verdict v = h.model.expect_nothing_outstanding(p.qp_a);
    EXPECT_TRUE(violation_names(v, "WR-10")) << v.describe();
}

// CQ-GET-04: an entry matching no posted request.
TEST_F(CheckMode, UnknownCompletionIsAViolation) {
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x999, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "CQ-GET-04")) << v.describe();
    write(0x1C);
    Verdict wrong_cq = h.model.observe_completion(
        p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x1C, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(wrong_cq, "CQ-GET-04")) << wrong_cq.describe();
}

// AMB-35: completions of one queue are expected in posting order (in_order default); no page
// promises it, so an entry ahead of an earlier one is a warning, and the earlier one is still
// expected (WR-10: it must eventually come; LostRequest tests the one that never does).
TEST_F(CheckMode, OutOfOrderCompletionIsAWarningByDefault) {
    write(0x1D, 8);
    h.accept(calls::Write{p.qp_a, 0x1E, {{a.va, 8, a.local}}, b.va + 100, b.remote, 0, {}});
    std::memcpy(b_buf.data(), a_buf.data(), 8);
    std::memcpy(b_buf.data() + 100, a_buf.data(), 8);
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x1E, NdkOperationTypeWrite), true);
    EXPECT_TRUE(v.ok()) << v.describe();
    EXPECT_TRUE(warning_names(v, "AMB-35")) << v.describe();
    EXPECT_TRUE(
        h.model
            .observe_completion(
                p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x1D, NdkOperationTypeWrite), true)
            .clean());
}

// The rule a verdict's first failure (not a warning) names first.
std::string first_failure_rule(const Verdict& v) {
    for (const auto& violation : v.violations)
        if (!violation.warning && !violation.rules.empty()) return violation.rules.front();
    return "";
}

// FR-FENCE-01, WR-FENCE-01: a request posted with READ_FENCE starts only after every earlier
// read of its QP has completed, so its entry ahead of such a read's is a failure, whatever the
// AMB-35 reading (in_order or relaxed) says of unfenced requests; FR-FENCE-01 first for a fast
// registration. An unfenced one ahead of the read stays AMB-35's warning.
TEST_F(CheckMode, FencedRequestAheadOfAnEarlierReadIsAViolation) {
    for (const char* order : {"in_order", "relaxed"}) {
        SCOPED_TRACE(order);
        Harness x(Mode::check, readings_with("completion_order", order));
        Pair q = x.connected_pair();
        LockedBuffer buffer = x.arena.allocate(2 * PAGE_SIZE);
        Region r = x.register_mr(q.pd, buffer, 0, 2 * PAGE_SIZE, 0xF);
        LockedBuffer pages = x.arena.allocate(PAGE_SIZE);
        Lam lam = x.build_lam(pages, 0, PAGE_SIZE);
        auto read = [&](Context ctx) {  // the second page into the first
            x.accept(calls::Read{q.qp_a, ctx, {{r.va, 8, r.local}}, r.va + PAGE_SIZE, r.remote, 0});
        };
        auto fast_register = [&](Context ctx, uint32_t flags) {
            x.accept(calls::FastRegister{q.qp_a, ctx, x.fr_mr(q.pd, 1, true), lam.pages, 0,
                                         PAGE_SIZE, 0x200000, flags});
        };
        auto observe = [&](Context ctx, NDK_OPERATION_TYPE type) {
            return x.model.observe_completion(q.cq_a, cq_entry(STATUS_SUCCESS, q.ctx_a, ctx, type),
                                              true);
        };

        read(0x40);
        fast_register(0x41, NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_READ_FENCE);
        Verdict fr = observe(0x41, NdkOperationTypeFastRegister);
        EXPECT_EQ(first_failure_rule(fr), "FR-FENCE-01") << fr.describe();
        EXPECT_TRUE(violation_names(fr, "WR-FENCE-01")) << fr.describe();
        EXPECT_TRUE(observe(0x40, NdkOperationTypeRead).clean());  // still expected

        read(0x42);
        x.accept(calls::Write{
            q.qp_a, 0x43, {{r.va, 8, r.local}}, r.va + 100, r.remote, NDK_OP_FLAG_READ_FENCE, {}});
        std::memcpy(buffer.data() + 100, buffer.data(), 8);
        Verdict write = observe(0x43, NdkOperationTypeWrite);
        EXPECT_EQ(first_failure_rule(write), "WR-FENCE-01") << write.describe();
        EXPECT_TRUE(observe(0x42, NdkOperationTypeRead).clean());

        read(0x44);
        fast_register(0x45, NDK_OP_FLAG_ALLOW_REMOTE_WRITE);  // no fence: the order is AMB-35's
        Verdict unfenced = observe(0x45, NdkOperationTypeFastRegister);
        EXPECT_TRUE(unfenced.ok()) << unfenced.describe();
        EXPECT_EQ(warning_names(unfenced, "AMB-35"), std::string_view(order) == "in_order");
        EXPECT_TRUE(observe(0x44, NdkOperationTypeRead).clean());

        fast_register(0x46, NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_READ_FENCE);
        EXPECT_TRUE(observe(0x46, NdkOperationTypeFastRegister).clean());  // no read before it
    }
}

// FR-SILENT-02: a silent fast registration that must fail (over a valid one: AMB-30's
// completion_error) and never makes its entry owes an error entry once a remote access it would
// have let through failed (it did not take effect): FR-SILENT-02 first. Without such an access
// it may have been taken as a silent success: its failure's own rules lead (FR-INV-01).
TEST_F(CheckMode, SilentFastRegisterShownNotInForceOwesItsErrorEntry) {
    LockedBuffer pages = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(pages, 0, PAGE_SIZE);
    for (bool access : {true, false}) {
        SCOPED_TRACE(access ? "a failed access follows" : "no access follows");
        const Context base = access ? 0x50 : 0x60;
        ObjectId mr = h.fr_mr(p.pd, 1, true);
        h.accept(calls::FastRegister{p.qp_a, base, mr, lam.pages, 0, PAGE_SIZE, 0x200000,
                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
        Verdict first = h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, base, NdkOperationTypeFastRegister), true);
        EXPECT_TRUE(first.clean()) << first.describe();
        h.accept(calls::FastRegister{p.qp_a, base + 1, mr, lam.pages, 0, PAGE_SIZE, 0x400000,
                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_SILENT_SUCCESS});
        if (access) {
            // qp_b writes into the second region through the token read after the call.
            const uint32_t token = h.remote_token(mr);
            h.accept(
                calls::Write{p.qp_b, base + 2, {{a.va, 8, a.local}}, 0x400000 + 16, token, 0, {}});
            Verdict write = h.model.observe_completion(
                p.cq_b, cq_entry(STATUS_ACCESS_VIOLATION, p.ctx_b, base + 2, NdkOperationTypeWrite),
                true);
            EXPECT_TRUE(write.ok()) << write.describe();
        }
        Verdict missing = h.model.expect_nothing_outstanding(p.qp_a);
        EXPECT_EQ(first_failure_rule(missing), access ? "FR-SILENT-02" : "FR-INV-01")
            << missing.describe();
        EXPECT_TRUE(violation_names(missing, "WR-10")) << missing.describe();
    }
}

// FR-APC-01: the peer's write into the last page of a fast registration of three pages fails.
// With a write of the same shape (QP, tokens, flags) that succeeded in its first page, the
// region's backing ends short of its AdapterPageCount pages: FR-APC-01 first. Without one (or
// with one of another shape), the failure is the data rule's, with FR-APC-01 among its rules
// since it reaches the last page; a failure short of the last page beyond no such witness names
// none of it, nor one nearer the start than the witness reached.
TEST(CheckModePageCount, AccessFailingBeyondTheSameShapesSuccessNamesThePageCount) {
    enum class Before { same_shape, other_shape, nothing, same_shape_further };
    struct Case {
        const char* what;
        Before before;
        uint64_t failing_at;  // the region offset of the failing write
        const char* first;    // the rule the failure names first
        bool names_page_count;
    };
    const Case cases[] = {
        {"the same shape succeeded in page 0", Before::same_shape, 2 * PAGE_SIZE + 64, "FR-APC-01",
         true},
        {"another shape succeeded in page 0", Before::other_shape, 2 * PAGE_SIZE + 64, "WRT-01",
         true},
        {"nothing before", Before::nothing, 2 * PAGE_SIZE + 64, "WRT-01", true},
        {"nothing before, page 1", Before::nothing, PAGE_SIZE + 64, "WRT-01", false},
        {"the same shape reached page 2, a failure in page 1", Before::same_shape_further,
         PAGE_SIZE + 64, "WRT-01", false},
    };
    constexpr uint64_t kBase = 0x200000;
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        Harness h(Mode::check, default_readings());
        Pair p = h.connected_pair();
        LockedBuffer source = h.arena.allocate(PAGE_SIZE);
        Region a = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0xF);
        Region other = h.register_mr(p.pd, source, 0, PAGE_SIZE, 0xF);
        LockedBuffer pages = h.arena.allocate(3 * PAGE_SIZE);
        Lam lam = h.build_lam(pages, 0, 3 * PAGE_SIZE);
        ObjectId mr = h.fr_mr(p.pd, 3, true);
        h.accept(calls::FastRegister{p.qp_a, 0x70, mr, lam.pages, 0, 3 * PAGE_SIZE, kBase,
                                     NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
        Verdict registered = h.model.observe_completion(
            p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x70, NdkOperationTypeFastRegister), true);
        ASSERT_TRUE(registered.clean()) << registered.describe();
        const uint32_t token = h.remote_token(mr);
        fill(source.bytes(), 0x71);
        if (c.before != Before::nothing) {
            const Region& from = c.before == Before::other_shape ? other : a;
            const uint64_t at = c.before == Before::same_shape_further ? 2 * PAGE_SIZE : 0;
            h.accept(
                calls::Write{p.qp_b, 0x71, {{from.va, 256, from.local}}, kBase + at, token, 0, {}});
            std::memcpy(pages.data() + at, source.data(), 256);  // the provider moves the bytes
            Verdict first = h.model.observe_completion(
                p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0x71, NdkOperationTypeWrite), true);
            ASSERT_TRUE(first.clean()) << first.describe();
        }
        h.accept(
            calls::Write{p.qp_b, 0x72, {{a.va, 256, a.local}}, kBase + c.failing_at, token, 0, {}});
        Verdict failed = h.model.observe_completion(
            p.cq_b, cq_entry(STATUS_ACCESS_VIOLATION, p.ctx_b, 0x72, NdkOperationTypeWrite), true);
        EXPECT_EQ(first_failure_rule(failed), c.first) << failed.describe();
        EXPECT_EQ(violation_names(failed, "FR-APC-01"), c.names_page_count) << failed.describe();
        EXPECT_TRUE(violation_names(failed, "CQ-CST-01")) << failed.describe();
    }
}

// RMR-FLG-04, CQ-CST-03: a request that must fail but succeeds names the rule that makes it fail;
// MODEL-CQ-ERR-01: another error status than ndkct's table is a warning (exact: a violation).
TEST_F(CheckMode, ExpectedErrorsAreJudged) {
    LockedBuffer c_buf = h.arena.allocate(PAGE_SIZE);
    Region local_only = h.register_mr(p.pd, c_buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    h.accept(
        calls::Write{p.qp_a, 0x20, {{a.va, 8, a.local}}, local_only.va, local_only.remote, 0, {}});
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x20, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "RMR-FLG-04")) << v.describe();
    EXPECT_TRUE(violation_names(v, "CQ-CST-03"));

    // On another pair: qp_a is in error now, and a peer in error answers nothing (AMB-12).
    Pair q = h.connected_pair();
    Region q_b = h.register_mr(q.pd, c_buf, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    h.accept(calls::Write{q.qp_b, 0x21, {{q_b.va, 8, q_b.local}}, q_b.va, 0xBAD, 0, {}});
    Verdict other = h.model.observe_completion(
        q.cq_b, cq_entry(STATUS_REMOTE_RESOURCES, q.ctx_b, 0x21, NdkOperationTypeWrite), true);
    EXPECT_TRUE(other.clean()) << other.describe();  // any_error: any error status is right
}

// MODEL-CQ-ERR-01 (exact): another error status is the reading not chosen, a warning.
TEST(CheckModeExact, AnotherErrorStatusIsAWarningWithExact) {
    Harness h(Mode::check, readings_with("completion_error_status", "exact"));
    Pair p = h.connected_pair();
    LockedBuffer buf = h.arena.allocate(PAGE_SIZE);
    Region r = h.register_mr(p.pd, buf, 0, PAGE_SIZE, 0);
    h.accept(calls::Write{p.qp_a, 0x22, {{r.va, 8, r.local}}, r.va, 0xBAD, 0, {}});
    NDK_RESULT_EX res{};
    res.Status = STATUS_REMOTE_RESOURCES;
    res.QPContext = pointer_of(p.ctx_a);
    res.RequestContext = pointer_of(0x22);
    res.Type = NdkOperationTypeWrite;
    Verdict v = h.model.observe_completion(p.cq_a, res, true);
    EXPECT_TRUE(v.ok()) << v.describe();
    EXPECT_TRUE(warning_names(v, "MODEL-CQ-ERR-01"));
}

// FLS-02: after a failed request the later ones must complete with STATUS_CANCELLED.
TEST_F(CheckMode, RequestsAfterAnErrorMustBeCancelled) {
    h.accept(calls::Write{p.qp_a, 0x30, {{a.va, 8, a.local}}, b.va, 0xBAD, 0, {}});
    write(0x31, 8);
    provider_moves(8);
    EXPECT_TRUE(h.model
                    .observe_completion(
                        p.cq_a,
                        cq_entry(STATUS_ACCESS_VIOLATION, p.ctx_a, 0x30, NdkOperationTypeWrite),
                        true)
                    .clean());
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x31, NdkOperationTypeWrite), true);
    EXPECT_TRUE(violation_names(v, "FLS-02")) << v.describe();
}

// RCV-03, CQ-RES-01: a receive's entry must report the bytes sent, and they must be in place.
TEST_F(CheckMode, ReceiveCompletionReportsTheBytesSent) {
    h.accept(calls::Receive{p.qp_b, 0x40, {{b.va, 512, b.local}}});
    fill(a_buf.bytes(), 0x41);
    h.accept(calls::Send{p.qp_a, 0x41, {{a.va, 300, a.local}}, 0, {}});
    std::memcpy(b_buf.data(), a_buf.data(), 300);
    Verdict wrong = h.model.observe_completion(
        p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0x40, NdkOperationTypeReceive, 299), true);
    EXPECT_TRUE(violation_names(wrong, "CQ-RES-01")) << wrong.describe();
    EXPECT_TRUE(h.model
                    .observe_completion(
                        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x41, NdkOperationTypeSend), true)
                    .clean());
}

// FR-TOK-01, FR-RES-01, FR-MAP-01: in check mode the remote token read after NdkFastRegister
// returned reaches the new region at once; the registration's entry must have Type FastRegister;
// the write's bytes must land in the mapped pages.
TEST_F(CheckMode, FastRegisterTokenAndCompletion) {
    LockedBuffer f = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(f, 0, PAGE_SIZE);
    ObjectId mr = h.fr_mr(p.pd, 1, true);
    h.accept(calls::FastRegister{p.qp_b, 0x50, mr, lam.pages, 0, PAGE_SIZE, 0x800000,
                                 NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
    uint32_t token = h.remote_token(mr);  // before the registration's completion
    fill(a_buf.bytes(), 0x51);
    h.accept(calls::Write{p.qp_a, 0x51, {{a.va, 100, a.local}}, 0x800000 + 20, token, 0, {}});
    Verdict type = h.model.observe_completion(
        p.cq_b, cq_entry(STATUS_SUCCESS, p.ctx_b, 0x50, NdkOperationTypeBind), true);
    EXPECT_TRUE(violation_names(type, "CQ-RES-03")) << type.describe();
    Verdict not_landed = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x51, NdkOperationTypeWrite), true);
    EXPECT_FALSE(not_landed.ok());
    // Once more, with the bytes placed where FR-MAP-01 says.
    h.accept(calls::Write{p.qp_a, 0x52, {{a.va, 100, a.local}}, 0x800000 + 20, token, 0, {}});
    std::memcpy(f.data() + 20, a_buf.data(), 100);
    Verdict ok = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_SUCCESS, p.ctx_a, 0x52, NdkOperationTypeWrite), true);
    EXPECT_TRUE(ok.clean()) << ok.describe();
}

// FR-ST-01: a fast registration that must succeed and completes with an error is a violation.
TEST_F(CheckMode, FastRegisterCompletionMustSucceed) {
    LockedBuffer f = h.arena.allocate(PAGE_SIZE);
    Lam lam = h.build_lam(f, 0, PAGE_SIZE);
    ObjectId mr = h.fr_mr(p.pd, 1, false);
    h.accept(calls::FastRegister{p.qp_a, 0x60, mr, lam.pages, 0, PAGE_SIZE, 0x800000, 0});
    Verdict v = h.model.observe_completion(
        p.cq_a, cq_entry(STATUS_INVALID_PARAMETER, p.ctx_a, 0x60, NdkOperationTypeFastRegister),
        true);
    EXPECT_TRUE(violation_names(v, "FR-ST-01")) << v.describe();
}

// Pending paths are the same in check mode: RegisterMr pends, the callback reports success.
TEST_F(CheckMode, PendingRegistrationThenCompletion) {
    ObjectId mr = h.mr(p.pd, false);
    MdlChain chain = platform::describe(a_buf, 0, PAGE_SIZE);
    Applied a =
        h.accept(calls::RegisterMr{mr, view_mdl(chain.head(), PAGE_SIZE), PAGE_SIZE, 0}, pending());
    Applied done = h.model.complete(a.pending, STATUS_SUCCESS);
    EXPECT_TRUE(done.verdict.clean()) << done.verdict.describe();
    EXPECT_EQ(h.model.state_of<MrState>(mr)->phase, MrState::Phase::registered);
    // CQ-NOT-01: a notification without an arm is a violation in check mode.
    Applied note = h.model.observe_event({Event::Kind::cq_notification, p.cq_a});
    EXPECT_TRUE(violation_names(note.verdict, "CQ-NOT-01"));
}

}  // namespace
}  // namespace ndkct::model::test
