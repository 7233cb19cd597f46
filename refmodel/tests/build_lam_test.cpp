// NdkBuildLam (LAM-*): the size protocol (0, required - 1, required, larger, NULL with the size
// written back), contiguity, short chains, status forms, the mapping's checks, and using a
// mapping through the privileged token (real bytes, simulate mode).
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

class BuildLam : public ::testing::Test {
  protected:
    Harness h;
    LockedBuffer buffer = h.arena.allocate(8 * PAGE_SIZE);

    static uint32_t required(uint64_t fbo, uint64_t length) {
        return static_cast<uint32_t>(16 + 8 * ((fbo + length + PAGE_SIZE - 1) / PAGE_SIZE));
    }
    calls::BuildLam call(const MdlChain& chain, uint64_t length, uint32_t size,
                         bool buffer_given = true, bool completion = true) {
        return calls::BuildLam{
            h.adapter, view_mdl(chain.head(), length), length, completion, buffer_given, size};
    }
    // What a correct provider reports on success.
    Observed success(const calls::BuildLam& c) {
        Observed o;
        for (PFN_NUMBER pfn : c.mdl.pfns)
            o.lam_pages.push_back(Harness::logical_of(pfn));
        o.size_out = static_cast<uint32_t>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(o.lam_pages.size()));
        o.fbo_out = c.mdl.first_byte_offset;
        return o;
    }
};

// LAM-SIZE-01, LAM-SIZE-02, LAM-ST-01: sizes 0 and required - 1 fail with STATUS_BUFFER_TOO_SMALL
// (documented); required and larger succeed. Required = 16 + 8 * ceil((FBO + Length) / PAGE_SIZE).
TEST_F(BuildLam, BufferSizesAroundTheRequiredSize) {
    const uint64_t fbo = 300, length = 2 * PAGE_SIZE;  // spans three pages
    MdlChain chain = platform::describe(buffer, fbo, length);
    const uint32_t need = required(fbo, length);
    ASSERT_EQ(need, 16u + 8 * 3);
    for (uint32_t size : {0u, need - 1}) {
        Expectation e = h.model.expect(call(chain, length, size));
        ASSERT_TRUE(fails_with(e, STATUS_BUFFER_TOO_SMALL, "LAM-SIZE-01"))
            << size << ": " << describe(e);
        EXPECT_EQ(e.failures[0].strength, Strength::documented);
        EXPECT_TRUE(violation_names(judge_inline(e, STATUS_SUCCESS, "NdkBuildLam"), "LAM-SIZE-01"));
    }
    for (uint32_t size : {need, need + 1, 4096u}) {
        Expectation e = h.model.expect(call(chain, length, size));
        EXPECT_FALSE(e.must_fail()) << size << ": " << describe(e);
        EXPECT_TRUE(e.may_pend);            // LAM-ST-02
        EXPECT_TRUE(e.may_lack_resources);  // LAM-ST-03
    }
}

// LAM-SIZE-04, LAM-SIZE-02: BUFFER_TOO_SMALL must write a size that will do; LAM-SIZE-05: the
// same request with that size is valid.
TEST_F(BuildLam, TooSmallWritesTheRequiredSizeWhichThenWorks) {
    MdlChain chain = platform::describe(buffer, 0, 3 * PAGE_SIZE);
    calls::BuildLam small = call(chain, 3 * PAGE_SIZE, 16);
    Observed right = status(STATUS_BUFFER_TOO_SMALL);
    right.size_out = required(0, 3 * PAGE_SIZE);
    EXPECT_TRUE(h.model.apply(small, right).verdict.clean());
    Observed missing = status(STATUS_BUFFER_TOO_SMALL);
    EXPECT_TRUE(violation_names(h.model.apply(small, missing).verdict, "LAM-SIZE-04"));
    Observed low = status(STATUS_BUFFER_TOO_SMALL);
    low.size_out = required(0, 3 * PAGE_SIZE) - 8;
    EXPECT_TRUE(violation_names(h.model.apply(small, low).verdict, "LAM-SIZE-02"));
    calls::BuildLam retry = call(chain, 3 * PAGE_SIZE, *right.size_out);
    EXPECT_FALSE(h.model.expect(retry).must_fail());  // LAM-SIZE-05
    Applied a = h.accept(retry, success(retry));
    EXPECT_NE(a.created, 0u);
}

// LAM-SIZE-03, AMB-14: pNdkLAM = NULL is a size probe by default (STATUS_BUFFER_TOO_SMALL and the
// required size written back); the reject reading wants STATUS_INVALID_PARAMETER.
TEST_F(BuildLam, NullBufferIsASizeProbeByDefault) {
    MdlChain chain = platform::describe(buffer, 10, PAGE_SIZE);
    calls::BuildLam probe = call(chain, PAGE_SIZE, 0, false);
    Expectation e = h.model.expect(probe);
    EXPECT_TRUE(fails_with(e, STATUS_BUFFER_TOO_SMALL, "LAM-SIZE-03")) << describe(e);
    Observed o = status(STATUS_BUFFER_TOO_SMALL);
    o.size_out = required(10, PAGE_SIZE);
    EXPECT_TRUE(h.model.apply(probe, o).verdict.clean());
    EXPECT_TRUE(violation_names(h.model.apply(probe, status(STATUS_BUFFER_TOO_SMALL)).verdict,
                                "LAM-SIZE-04"));

    Harness strict(Mode::simulate, readings_with("build_lam_null_buffer", "reject"));
    LockedBuffer b = strict.arena.allocate(PAGE_SIZE);
    MdlChain c = platform::describe(b, 0, PAGE_SIZE);
    Expectation s = strict.model.expect(
        calls::BuildLam{strict.adapter, view_mdl(c.head(), PAGE_SIZE), PAGE_SIZE, true, false, 0});
    EXPECT_TRUE(fails_with(s, STATUS_INVALID_PARAMETER, "AMB-14")) << describe(s);
}

// LAM-MDL-01: a chain with a hole or a misaligned joint within Length is refused with
// STATUS_INVALID_PARAMETER (documented), inline or through the callback.
TEST_F(BuildLam, NonContiguousChainsAreRefused) {
    MdlChain hole = platform::with_hole(buffer, 0, PAGE_SIZE, PAGE_SIZE, PAGE_SIZE);
    Expectation e = h.model.expect(call(hole, 2 * PAGE_SIZE, 4096));
    ASSERT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "LAM-MDL-01")) << describe(e);
    EXPECT_TRUE(violation_names(judge_inline(e, STATUS_SUCCESS, "NdkBuildLam"), "LAM-MDL-01"));
    EXPECT_TRUE(
        violation_names(judge_inline(e, STATUS_BUFFER_TOO_SMALL, "NdkBuildLam"), "LAM-MDL-01"));
    EXPECT_TRUE(judge_async(e, STATUS_INVALID_PARAMETER, "NdkBuildLam").clean());
    MdlChain joint = platform::with_misaligned_joint(buffer, 0, 1000, PAGE_SIZE);
    EXPECT_TRUE(fails_with(h.model.expect(call(joint, joint.byte_count(), 4096)),
                           STATUS_INVALID_PARAMETER, "LAM-MDL-01"));
}

// LAM-MDL-04: only the first Length bytes must be contiguous.
TEST_F(BuildLam, ChainContiguousForLengthIsMapped) {
    MdlChain hole = platform::with_hole(buffer, 0, 2 * PAGE_SIZE, PAGE_SIZE, PAGE_SIZE);
    calls::BuildLam c = call(hole, 2 * PAGE_SIZE, 4096);
    EXPECT_FALSE(h.model.expect(c).must_fail()) << describe(h.model.expect(c));
    // A provider that checks the whole chain and refuses it breaks LAM-MDL-04, named first.
    Verdict refused = judge_inline(h.model.expect(c), STATUS_INVALID_PARAMETER, "NdkBuildLam");
    ASSERT_FALSE(refused.violations.empty());
    EXPECT_EQ(refused.violations.front().rules.front(), "LAM-MDL-04") << refused.describe();
    // A chain contiguous to its end: a refusal names LAM-ST-01 first, not LAM-MDL-04.
    MdlChain whole = platform::describe(buffer, 0, 3 * PAGE_SIZE);
    Verdict plain = judge_inline(h.model.expect(call(whole, 2 * PAGE_SIZE, 4096)),
                                 STATUS_INVALID_PARAMETER, "NdkBuildLam");
    ASSERT_FALSE(plain.violations.empty());
    EXPECT_EQ(plain.violations.front().rules.front(), "LAM-ST-01") << plain.describe();
    h.accept(c, success(c));
}

// LAM-LEN-01, AMB-26: a short chain (Length beyond its bytes) is the caller's error: refused by
// the reference; any outcome of a provider is allowed (a warning at most).
TEST_F(BuildLam, ShortChainFails) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    Expectation e = h.model.expect(call(chain, PAGE_SIZE + 1, 4096));
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "LAM-LEN-01")) << describe(e);
    EXPECT_TRUE(e.consumer_error);
    EXPECT_TRUE(judge_inline(e, STATUS_INVALID_BUFFER_SIZE, "NdkBuildLam").clean());
    EXPECT_TRUE(judge_inline(e, STATUS_SUCCESS, "NdkBuildLam").ok());
    EXPECT_FALSE(h.model.expect(call(chain, PAGE_SIZE, 4096)).must_fail());
}

// MODEL-RMR-LEN-02: Length 0 is refused by default.
TEST_F(BuildLam, ZeroLengthIsRefusedByDefault) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    EXPECT_TRUE(fails_with(h.model.expect(call(chain, 0, 4096)), STATUS_INVALID_PARAMETER,
                           "MODEL-RMR-LEN-02"));
}

// LAM-OUT-01..03, LAM-PAGE-01/02: the mapping the provider reports is checked.
TEST_F(BuildLam, ReportedMappingIsChecked) {
    MdlChain chain = platform::describe(buffer, 200, 2 * PAGE_SIZE);
    calls::BuildLam c = call(chain, 2 * PAGE_SIZE, 4096);
    Observed good = success(c);
    ASSERT_EQ(good.lam_pages.size(), 3u);

    Observed unaligned = good;
    unaligned.lam_pages[1] += 8;
    EXPECT_TRUE(violation_names(h.model.apply(c, unaligned).verdict, "LAM-PAGE-01"));
    Observed short_map = good;
    short_map.lam_pages.pop_back();
    short_map.size_out = static_cast<uint32_t>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(2));
    EXPECT_TRUE(violation_names(h.model.apply(c, short_map).verdict, "LAM-PAGE-02"));
    EXPECT_FALSE(violation_names(h.model.apply(c, short_map).verdict, "LAM-OUT-01"));
    // LAM-OUT-01: an AdapterPageCount of 0 gives none of the entries (named first).
    Observed no_count = good;
    no_count.lam_pages.clear();
    Verdict none = h.model.apply(c, no_count).verdict;
    ASSERT_FALSE(none.violations.empty());
    EXPECT_EQ(none.violations.front().rules.front(), "LAM-OUT-01") << none.describe();
    // LAM-OUT-02: at least the mapping's bytes, at most the buffer's.
    Observed too_short = good;
    too_short.size_out = static_cast<uint32_t>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(3)) - 1;
    EXPECT_TRUE(violation_names(h.model.apply(c, too_short).verdict, "LAM-OUT-02"));
    Observed past_buffer = good;
    past_buffer.size_out = 4097;
    EXPECT_TRUE(violation_names(h.model.apply(c, past_buffer).verdict, "LAM-OUT-02"));
    Observed more_than_needed = good;  // bytes written beyond the mapping's: allowed
    more_than_needed.size_out = 4096;
    EXPECT_FALSE(violation_names(h.model.apply(c, more_than_needed).verdict, "LAM-OUT-02"));
    Observed wrong_fbo = good;
    wrong_fbo.fbo_out = 0;
    EXPECT_TRUE(violation_names(h.model.apply(c, wrong_fbo).verdict, "LAM-OUT-03"));
    Applied ok = h.accept(c, good);
    const LamState* lam = h.model.state_of<LamState>(ok.created);
    ASSERT_NE(lam, nullptr);
    EXPECT_EQ(lam->first_byte_offset, 200u);
    EXPECT_EQ(lam->logical_pages, good.lam_pages);
    EXPECT_EQ(h.model.find(ok.created)->parent, h.adapter);  // LAM-REL-01: a child of the adapter
}

// LAM-PAGE-02: two live mappings may not give one logical address to different pages.
TEST_F(BuildLam, AliasedLogicalAddressesAreFlagged) {
    MdlChain first = platform::describe(buffer, 0, PAGE_SIZE);
    calls::BuildLam a = call(first, PAGE_SIZE, 4096);
    h.accept(a, success(a));
    MdlChain second = platform::describe(buffer, PAGE_SIZE, PAGE_SIZE);
    calls::BuildLam b = call(second, PAGE_SIZE, 4096);
    Observed alias = success(b);
    alias.lam_pages[0] = Harness::logical_of(buffer.pfns()[0]);
    EXPECT_TRUE(violation_names(h.model.apply(b, alias).verdict, "LAM-PAGE-02"));
}

// LAM-ST-02: after STATUS_PENDING the mapping exists once the callback reports success.
TEST_F(BuildLam, PendingThenCompleted) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    calls::BuildLam c = call(chain, PAGE_SIZE, 4096);
    Applied a = h.accept(c, pending());
    ASSERT_NE(a.pending, 0u);
    Applied done = h.model.complete(a.pending, STATUS_SUCCESS, success(c));
    EXPECT_TRUE(done.verdict.clean()) << done.verdict.describe();
    EXPECT_NE(done.created, 0u);
    // GEN-ASYNC-01: STATUS_PENDING through the callback itself is a violation.
    Applied b = h.accept(c, pending());
    EXPECT_TRUE(
        violation_names(h.model.complete(b.pending, STATUS_PENDING).verdict, "GEN-ASYNC-01"));
}

// LAM-ST-03, LAM-ST-04, LAM-ERR-01: resources may be lacking inline or through the callback; an
// inline failure finishes the request and leaves no mapping.
TEST_F(BuildLam, FailuresLeaveNoMapping) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    calls::BuildLam c = call(chain, PAGE_SIZE, 4096);
    size_t before = h.model.object_count();
    h.accept(c, status(STATUS_INSUFFICIENT_RESOURCES));
    Applied a = h.accept(c, pending());
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_INSUFFICIENT_RESOURCES).verdict.clean());
    EXPECT_EQ(h.model.object_count(), before);
    EXPECT_TRUE(
        violation_names(h.model.apply(c, status(STATUS_INVALID_PARAMETER)).verdict, "LAM-ST-01"));
}

// AMB-15 (inline_only): a too-small buffer should be refused inline; pending it is a warning.
TEST_F(BuildLam, TooSmallBufferPendingIsAWarning) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    Applied a = h.model.apply(call(chain, PAGE_SIZE, 8), pending());
    EXPECT_TRUE(a.verdict.ok()) << a.verdict.describe();
    EXPECT_TRUE(warning_names(a.verdict, "AMB-15")) << a.verdict.describe();
    Observed o;
    o.size_out = required(0, PAGE_SIZE);
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_BUFFER_TOO_SMALL, o).verdict.clean());
}

// AMB-06, LAM-CB-01: with a NULL RequestCompletion the call must finish inline (default), or is
// refused (reject).
TEST_F(BuildLam, NullCompletionFollowsTheProfile) {
    MdlChain chain = platform::describe(buffer, 0, PAGE_SIZE);
    calls::BuildLam c = call(chain, PAGE_SIZE, 4096, true, false);
    Expectation e = h.model.expect(c);
    EXPECT_FALSE(e.must_fail());
    EXPECT_FALSE(e.may_pend);
    EXPECT_TRUE(violation_names(judge_inline(e, STATUS_PENDING, "NdkBuildLam"), "GEN-ASYNC-01"));
    Harness strict(Mode::simulate, readings_with("build_lam_null_completion", "reject"));
    LockedBuffer b = strict.arena.allocate(PAGE_SIZE);
    MdlChain c2 = platform::describe(b, 0, PAGE_SIZE);
    Expectation s = strict.model.expect(calls::BuildLam{
        strict.adapter, view_mdl(c2.head(), PAGE_SIZE), PAGE_SIZE, false, true, 4096});
    EXPECT_TRUE(fails_with(s, STATUS_INVALID_PARAMETER, "AMB-06")) << describe(s);
}

// LAM-USE-02, SGE-01, PTOK-01: logical addresses with the privileged token are local sources and
// targets without registration; LAM-REL-01: after NdkReleaseLam they reach nothing.
TEST_F(BuildLam, PrivilegedTokenReachesMappedPagesUntilReleased) {
    Pair p = h.connected_pair();
    uint32_t privileged = h.privileged_token(p.pd);
    LockedBuffer source = h.arena.allocate(PAGE_SIZE), target = h.arena.allocate(PAGE_SIZE);
    fill(source.bytes(), 33);
    Lam src = h.build_lam(source, 0, PAGE_SIZE);
    Lam dst = h.build_lam(target, 0, PAGE_SIZE);
    h.accept(calls::Receive{p.qp_b, 1, {{dst.pages[0] + 64, 1000, privileged}}});
    h.accept(calls::Send{p.qp_a, 2, {{src.pages[0] + 8, 500, privileged}}, 0, {}});
    auto got = h.drain(p.cq_b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].outcome, Completion::Outcome::success) << got[0].why;
    EXPECT_EQ(std::memcmp(target.data() + 64, source.data() + 8, 500), 0);
    h.drain(p.cq_a);
    // PTOK-02: the privileged token never grants remote access.
    h.accept(
        calls::Write{p.qp_a, 3, {{src.pages[0], 8, privileged}}, dst.pages[0], privileged, 0, {}});
    auto denied = h.drain(p.cq_a);
    ASSERT_EQ(denied.size(), 1u);
    EXPECT_EQ(denied[0].outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(denied[0].rules, "PTOK-02"));

    Harness x;
    Pair q = x.connected_pair();
    uint32_t priv = x.privileged_token(q.pd);
    LockedBuffer s2 = x.arena.allocate(PAGE_SIZE);
    Lam l = x.build_lam(s2, 0, PAGE_SIZE);
    LockedBuffer t2 = x.arena.allocate(PAGE_SIZE);
    Region r = x.register_mr(q.pd, t2, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    x.accept(calls::ReleaseLam{x.adapter, l.id});
    x.accept(calls::Receive{q.qp_b, 1, {{r.va, PAGE_SIZE, r.local}}});
    x.accept(calls::Send{q.qp_a, 2, {{l.pages[0], 16, priv}}, 0, {}});
    auto after = x.drain(q.cq_a);
    ASSERT_EQ(after.size(), 1u);
    EXPECT_EQ(after[0].outcome, Completion::Outcome::error);
    EXPECT_TRUE(names(after[0].rules, "LAM-USE-02"));
}

// LAM-USE-02: a send from a live mapping's logical addresses with the privileged token refused
// inline names that rule first; from addresses no live mapping holds, it does not.
TEST_F(BuildLam, RefusedSendFromAMappingNamesLamUse02) {
    Pair p = h.connected_pair();
    uint32_t privileged = h.privileged_token(p.pd);
    LockedBuffer source = h.arena.allocate(PAGE_SIZE);
    Lam src = h.build_lam(source, 0, PAGE_SIZE);
    Verdict refused = judge_inline(
        h.model.expect(calls::Send{p.qp_a, 2, {{src.pages[0] + 8, 500, privileged}}, 0, {}}),
        STATUS_ACCESS_VIOLATION, "NdkSend");
    ASSERT_FALSE(refused.violations.empty());
    EXPECT_EQ(refused.violations.front().rules.front(), "LAM-USE-02") << refused.describe();
    Verdict stray =
        judge_inline(h.model.expect(calls::Send{
                         p.qp_a, 3, {{src.pages[0] + 64 * PAGE_SIZE, 8, privileged}}, 0, {}}),
                     STATUS_ACCESS_VIOLATION, "NdkSend");
    EXPECT_FALSE(violation_names(stray, "LAM-USE-02")) << stray.describe();
}

// AMB-36: closing the adapter with a live LAM is a leak warning.
TEST_F(BuildLam, LiveLamAtAdapterCloseIsAWarning) {
    h.build_lam(buffer, 0, PAGE_SIZE);
    Verdict v = h.model.close_adapter(h.adapter);
    EXPECT_TRUE(v.ok());
    EXPECT_TRUE(warning_names(v, "AMB-36"));
}

// LAM-ERR-01, LAM-ST-03: a STATUS_INSUFFICIENT_RESOURCES refusal of a request no larger than an
// earlier success, whose mapping was released since, with only failed NdkBuildLam requests in
// between, is what those requests kept (Model::lam_refusal_rules), in either form; a lack of
// resources among them names LAM-ST-03 first. No failure in between, another call, the mapping
// still live or a larger request: a shortage may be real, and it is allowed.
TEST_F(BuildLam, ShortageAfterFailedRequestsNamesWhatTheyKept) {
    MdlChain chain = platform::describe(buffer, 0, 2 * PAGE_SIZE);
    MdlChain larger_chain = platform::describe(buffer, 0, 3 * PAGE_SIZE);
    const calls::BuildLam valid = call(chain, 2 * PAGE_SIZE, required(0, 2 * PAGE_SIZE));
    const calls::BuildLam larger = call(larger_chain, 3 * PAGE_SIZE, required(0, 3 * PAGE_SIZE));
    const calls::BuildLam probe = call(chain, 2 * PAGE_SIZE, 0);
    auto refuse = [&](const calls::BuildLam& c) {
        return h.model.apply(c, status(STATUS_INSUFFICIENT_RESOURCES)).verdict;
    };
    auto build = [&] { return h.accept(valid, success(valid)).created; };
    auto build_and_release = [&] { h.accept(calls::ReleaseLam{h.adapter, build()}); };
    auto probe_fails = [&] {
        Observed too_small = status(STATUS_BUFFER_TOO_SMALL);
        too_small.size_out = required(0, 2 * PAGE_SIZE);
        h.accept(probe, too_small);
    };
    // Nothing failed since the success: the release may have kept the room (not these rules).
    build_and_release();
    Verdict first = refuse(valid);
    EXPECT_TRUE(first.ok()) << first.describe();
    // That refusal kept the room in turn: LAM-ST-03 first.
    Verdict second = refuse(valid);
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.violations.front().rules.front(), "LAM-ST-03") << second.describe();
    EXPECT_TRUE(violation_names(second, "LAM-ERR-01")) << second.describe();
    // A size probe between: LAM-ERR-01, inline or through the callback.
    build_and_release();
    probe_fails();
    Verdict inline_form = refuse(valid);
    ASSERT_FALSE(inline_form.ok());
    EXPECT_EQ(inline_form.violations.front().rules.front(), "LAM-ERR-01") << inline_form.describe();
    EXPECT_FALSE(violation_names(inline_form, "LAM-ST-03")) << inline_form.describe();
    build_and_release();
    probe_fails();
    Applied pended = h.model.apply(valid, status(STATUS_PENDING));
    ASSERT_TRUE(pended.verdict.ok()) << pended.verdict.describe();
    Verdict async_form = h.model.complete(pended.pending, STATUS_INSUFFICIENT_RESOURCES).verdict;
    ASSERT_FALSE(async_form.ok());
    EXPECT_EQ(async_form.violations.front().rules.front(), "LAM-ERR-01") << async_form.describe();
    // Another call between: the shortage may be real.
    build_and_release();
    probe_fails();
    h.pd();
    EXPECT_TRUE(refuse(valid).ok());
    // The mapping still live: the room it took is not there.
    ObjectId live = build();
    probe_fails();
    EXPECT_TRUE(refuse(valid).ok());
    h.accept(calls::ReleaseLam{h.adapter, live});
    // A request larger than the success: the room was never shown.
    build_and_release();
    probe_fails();
    EXPECT_TRUE(refuse(larger).ok());
}

}  // namespace
}  // namespace ndkct::model::test
