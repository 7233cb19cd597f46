// NdkCreateQp and NdkCreateQpWithSrq (CQP-*): limits at and one past each maximum, the create
// contract, lifetime edges, the unconnected state, queue depths and SGE counts.
#include "harness.hpp"

namespace ndkct::model::test {
namespace {

class CreateQp : public ::testing::Test {
  protected:
    Harness h;
    ObjectId pd = h.pd();
    ObjectId rcq = h.cq(), icq = h.cq();
    const NDK_ADAPTER_INFO& info = h.model.readings().adapter_info;

    calls::CreateQp at_maximum() const {
        return calls::CreateQp{pd,
                               rcq,
                               icq,
                               0x77,
                               info.MaxReceiveQueueDepth,
                               info.MaxInitiatorQueueDepth,
                               info.MaxReceiveRequestSge,
                               info.MaxInitiatorRequestSge,
                               info.MaxInlineDataSize};
    }
};

// CQP-LIM-01..05, CQP-LIM-07: every value equal to its maximum is within the limit.
TEST_F(CreateQp, EveryLimitAtItsMaximumIsAccepted) {
    calls::CreateQp call = at_maximum();
    Expectation e = h.model.expect(call);
    EXPECT_FALSE(e.must_fail()) << describe(e);
    EXPECT_TRUE(e.may_pend);            // CQP-ST-02
    EXPECT_TRUE(e.may_lack_resources);  // CQP-ST-03
    // CQP-LIM-07: STATUS_INVALID_PARAMETER for a valid request is a violation.
    Verdict v = judge_inline(e, STATUS_INVALID_PARAMETER, "NdkCreateQp");
    EXPECT_TRUE(violation_names(v, "CQP-LIM-07")) << v.describe();
    EXPECT_TRUE(judge_inline(e, STATUS_INSUFFICIENT_RESOURCES, "NdkCreateQp").clean());
    ObjectId qp = h.create(call);
    const QpState* q = h.model.state_of<QpState>(qp);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->pd, pd);           // CQP-OBJ-01
    EXPECT_EQ(q->receive_cq, rcq);  // CQP-OBJ-02
    EXPECT_EQ(q->initiator_cq, icq);
    EXPECT_EQ(q->qp_context, 0x77u);  // CQP-CTX-01
    EXPECT_EQ(h.model.find(qp)->parent, pd);
}

// CQP-LIM-01..06: one past each maximum fails with STATUS_INVALID_PARAMETER (documented), never
// clamped; success or another error is a violation naming the limit.
TEST_F(CreateQp, EachLimitOnePastItsMaximumIsRefused) {
    struct Case {
        const char* rule;
        void (*bump)(calls::CreateQp&);
    } cases[] = {
        {"CQP-LIM-01", [](calls::CreateQp& c) { ++c.receive_queue_depth; }},
        {"CQP-LIM-02", [](calls::CreateQp& c) { ++c.initiator_queue_depth; }},
        {"CQP-LIM-03", [](calls::CreateQp& c) { ++c.max_receive_sge; }},
        {"CQP-LIM-04", [](calls::CreateQp& c) { ++c.max_initiator_sge; }},
        {"CQP-LIM-05", [](calls::CreateQp& c) { ++c.inline_data_size; }},
    };
    for (const Case& c : cases) {
        calls::CreateQp call = at_maximum();
        c.bump(call);
        Expectation e = h.model.expect(call);
        ASSERT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, c.rule))
            << c.rule << ": " << describe(e);
        EXPECT_TRUE(failure_names(e, "CQP-LIM-06"));
        EXPECT_EQ(e.failures.size(), 1u) << describe(e);
        EXPECT_EQ(e.failures[0].strength, Strength::documented);
        Verdict accepted = judge_inline(e, STATUS_SUCCESS, "NdkCreateQp");
        EXPECT_TRUE(violation_names(accepted, c.rule)) << accepted.describe();
        Verdict other = judge_inline(e, STATUS_NOT_SUPPORTED, "NdkCreateQp");
        EXPECT_FALSE(other.ok()) << c.rule;
        EXPECT_TRUE(violation_names(other, "CQP-LIM-06"));
        EXPECT_TRUE(judge_inline(e, STATUS_INVALID_PARAMETER, "NdkCreateQp").clean());
        // CQP-LIM-06: the refusal may also come through the callback.
        EXPECT_TRUE(judge_async(e, STATUS_INVALID_PARAMETER, "NdkCreateQp").clean());
        EXPECT_TRUE(violation_names(judge_async(e, STATUS_SUCCESS, "NdkCreateQp"), c.rule));
    }
}

// CQP-ST-04: an inline failure creates nothing.
TEST_F(CreateQp, InlineFailureCreatesNoQp) {
    calls::CreateQp call = at_maximum();
    ++call.inline_data_size;
    size_t before = h.model.object_count();
    Applied a = h.accept(call, status(STATUS_INVALID_PARAMETER));
    EXPECT_EQ(a.created, 0u);
    EXPECT_EQ(h.model.object_count(), before);
    // Nothing waits on the PD or the CQs: closing them need not pend.
    EXPECT_FALSE(h.model.expect(calls::CloseObject{rcq}).must_pend);
}

// CQP-ST-02, GEN-CREATE-01: after STATUS_PENDING the QP exists only once the callback reported
// success; using it before is a consumer error.
TEST_F(CreateQp, PendingThenCompletedHandsOverTheQp) {
    Applied a = h.accept(at_maximum(), pending());
    ASSERT_NE(a.pending, 0u);
    ASSERT_NE(a.created, 0u);
    EXPECT_EQ(h.model.find(a.created)->life, Life::creating);
    EXPECT_TRUE(h.model.expect(calls::Receive{a.created, 1, {}}).undefined);
    Applied done = h.model.complete(a.pending, STATUS_SUCCESS);
    EXPECT_TRUE(done.verdict.clean()) << done.verdict.describe();
    EXPECT_EQ(done.created, a.created);
    EXPECT_EQ(h.model.find(a.created)->life, Life::ready);
    EXPECT_FALSE(h.model.expect(calls::Receive{a.created, 1, {}}).undefined);
    // GEN-CREATE-01: the provider wrote *ppNdkQp although it pended.
    Observed o = pending();
    o.output_written_while_pending = true;
    Applied bad = h.model.apply(at_maximum(), o);
    EXPECT_TRUE(violation_names(bad.verdict, "GEN-CREATE-01"));
}

// CQP-ST-03, CQP-LIM-06: a pending create may fail for resources or (for a limit) with
// STATUS_INVALID_PARAMETER; no QP results.
TEST_F(CreateQp, PendingThenFailedCreatesNoQp) {
    Applied a = h.accept(at_maximum(), pending());
    EXPECT_TRUE(h.model.complete(a.pending, STATUS_INSUFFICIENT_RESOURCES).verdict.clean());
    EXPECT_EQ(h.model.find(a.created)->life, Life::closed);
    calls::CreateQp over = at_maximum();
    ++over.max_initiator_sge;
    // A create that must fail makes no object, not even while it pends.
    Applied b = h.accept(over, pending());
    EXPECT_EQ(b.created, 0u);
    EXPECT_TRUE(h.model.complete(b.pending, STATUS_INVALID_PARAMETER).verdict.clean());
    // The PD and CQs are free again (the failed QP released its edges).
    EXPECT_FALSE(h.model.expect(calls::CloseObject{pd}).must_pend);
    EXPECT_FALSE(h.model.expect(calls::CloseObject{rcq}).must_pend);
}

// CQP-LIFE-01: the QP is a child of the PD and a successor of both CQs: closing any of them
// while the QP is open must pend, and finishes once the QP is closed.
TEST_F(CreateQp, PdAndCqsCannotFinishClosingBeforeTheQp) {
    ObjectId qp = h.create(at_maximum());
    for (ObjectId up : {pd, rcq, icq}) {
        Expectation e = h.model.expect(calls::CloseObject{up});
        EXPECT_TRUE(e.must_pend) << up;
        EXPECT_TRUE(names(e.must_pend_rules, "CLOSE-02"));
        // NdkCreateQp's page rule first, the generic one beside it.
        ASSERT_FALSE(e.must_pend_rules.empty());
        EXPECT_STREQ(*e.must_pend_rules.begin(), "CQP-LIFE-01") << up;
        EXPECT_TRUE(violation_names(judge_inline(e, STATUS_SUCCESS, "NdkCloseObject"), "CLOSE-02"));
    }
    Applied closing = h.accept(calls::CloseObject{icq}, pending());
    EXPECT_TRUE(h.model.take_events().empty());  // not before the QP is closed
    h.accept(calls::CloseObject{qp});
    bool finished = false;
    for (const Event& e : h.model.take_events())
        finished |= e.kind == Event::Kind::request_complete && e.pending == closing.pending;
    EXPECT_TRUE(finished);
    EXPECT_TRUE(h.model.complete(closing.pending, STATUS_SUCCESS).verdict.clean());
}

// CQP-STATE-01, CQP-STATE-02, WR-04: a new QP is not connected; every initiator request fails
// with STATUS_CONNECTION_INVALID, receives are accepted.
TEST_F(CreateQp, NewQpIsNotConnected) {
    ObjectId qp = h.create(at_maximum());
    ObjectId mr = h.fr_mr(pd, 1, false);
    ObjectId mw = h.create(calls::CreateMw{pd});
    std::vector<Call> initiator = {
        calls::Send{qp, 1, {}, 0, {}},       calls::SendAndInvalidate{qp, 2, {}, 0, 5, {}},
        calls::Read{qp, 3, {}, 0, 5, 0},     calls::Write{qp, 4, {}, 0, 5, 0, {}},
        calls::Bind{qp, 5, mr, mw, 0, 0, 0}, calls::FastRegister{qp, 6, mr, {}, 0, 0, 0, 0},
        calls::Invalidate{qp, 7, mr, 0},
    };
    for (const Call& call : initiator) {
        Expectation e = h.model.expect(call);
        EXPECT_TRUE(fails_with(e, STATUS_CONNECTION_INVALID, "WR-04"))
            << show(call) << ": " << describe(e);
    }
    EXPECT_TRUE(fails_with(h.model.expect(initiator[5]), STATUS_CONNECTION_INVALID, "FR-ST-02"));
    Expectation receive = h.model.expect(calls::Receive{qp, 8, {}});
    EXPECT_FALSE(receive.must_fail()) << describe(receive);
}

// AMB-27: zero depths are accepted by default and refused with the knob.
TEST_F(CreateQp, ZeroDepthsFollowTheProfile) {
    calls::CreateQp zero{pd, rcq, icq, 0, 0, 16, 0, 4, 0};
    EXPECT_FALSE(h.model.expect(zero).must_fail()) << describe(h.model.expect(zero));
    Harness strict(Mode::simulate, readings_with("zero_queue_depth", "reject"));
    ObjectId spd = strict.pd(), scq = strict.cq();
    Expectation e = strict.model.expect(calls::CreateQp{spd, scq, scq, 0, 0, 16, 0, 4, 0});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "AMB-27")) << describe(e);
    // InlineDataSize 0 is always valid.
    EXPECT_FALSE(strict.model.expect(calls::CreateQp{spd, scq, scq, 0, 4, 4, 1, 1, 0}).must_fail());
}

// CQP-CQ-01: no CQ capacity check by default; reject_undersized refuses a CQ shallower than the
// queue it serves.
TEST_F(CreateQp, CqCapacityCheckFollowsTheProfile) {
    ObjectId small = h.cq(4);
    calls::CreateQp call{pd, small, small, 0, 16, 16, 1, 1, 0};
    EXPECT_FALSE(h.model.expect(call).must_fail());
    Harness strict(Mode::simulate, readings_with("cq_capacity_check", "reject_undersized"));
    ObjectId spd = strict.pd(), scq = strict.cq(4);
    Expectation e = strict.model.expect(calls::CreateQp{spd, scq, scq, 0, 16, 16, 1, 1, 0});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "CQP-CQ-01")) << describe(e);
    EXPECT_FALSE(strict.model.expect(calls::CreateQp{spd, scq, scq, 0, 4, 4, 1, 1, 0}).must_fail());
}

// AMB-28: a CQ of another adapter fails inline with STATUS_INVALID_PARAMETER.
TEST_F(CreateQp, CqOfAnotherAdapterIsRefused) {
    ObjectId other_adapter = h.model.open_adapter();
    ObjectId foreign = h.create(calls::CreateCq{other_adapter, 16});
    Expectation e = h.model.expect(calls::CreateQp{pd, foreign, icq, 0, 4, 4, 1, 1, 0});
    EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, "AMB-28")) << describe(e);
}

// CQP-SRQ-02..05: NdkCreateQpWithSrq limits at and one past each maximum; CQP-SRQ-06: the SRQ is
// an antecedent of the QP.
TEST_F(CreateQp, WithSrqLimitsAndTheSrqAsAntecedent) {
    ObjectId srq = h.create(calls::CreateSrq{pd, 64, 4, 0});
    calls::CreateQpWithSrq at{pd,
                              rcq,
                              icq,
                              srq,
                              0x5,
                              info.MaxInitiatorQueueDepth,
                              info.MaxInitiatorRequestSge,
                              info.MaxInlineDataSize};
    EXPECT_FALSE(h.model.expect(at).must_fail()) << describe(h.model.expect(at));
    struct Case {
        const char* rule;
        uint32_t calls::CreateQpWithSrq::*field;
    } cases[] = {
        {"CQP-SRQ-02", &calls::CreateQpWithSrq::initiator_queue_depth},
        {"CQP-SRQ-03", &calls::CreateQpWithSrq::max_initiator_sge},
        {"CQP-SRQ-04", &calls::CreateQpWithSrq::inline_data_size},
    };
    for (const Case& c : cases) {
        calls::CreateQpWithSrq over = at;
        ++(over.*c.field);
        Expectation e = h.model.expect(over);
        EXPECT_TRUE(fails_with(e, STATUS_INVALID_PARAMETER, c.rule))
            << c.rule << ": " << describe(e);
        EXPECT_TRUE(failure_names(e, "CQP-SRQ-05"));
    }
    ObjectId qp = h.create(at);
    EXPECT_EQ(h.model.state_of<QpState>(qp)->srq, srq);  // CQP-SRQ-01
    Expectation close_srq = h.model.expect(calls::CloseObject{srq});
    EXPECT_TRUE(close_srq.must_pend);
    ASSERT_FALSE(close_srq.must_pend_rules.empty());
    EXPECT_STREQ(*close_srq.must_pend_rules.begin(), "CQP-SRQ-06");  // before CLOSE-02
    // MODEL-RCV-01: NdkReceive on such a QP is a consumer error: the reference refuses it with
    // the profile's status; another error and a success are warnings.
    Expectation r = h.model.expect(calls::Receive{qp, 1, {}});
    EXPECT_TRUE(fails_with(r, STATUS_INVALID_DEVICE_REQUEST, "MODEL-RCV-01")) << describe(r);
    EXPECT_TRUE(failure_names(r, "CQP-SRQ-01"));
    EXPECT_TRUE(
        warning_names(judge_inline(r, STATUS_INVALID_PARAMETER, "NdkReceive"), "MODEL-RCV-01"));
    Verdict accepted = judge_inline(r, STATUS_SUCCESS, "NdkReceive");
    EXPECT_TRUE(accepted.ok());
    EXPECT_TRUE(warning_names(accepted, "MODEL-RCV-01"));
}

// ---- Depths, SGE counts and inline sizes the QP was created with ----

class QpCapacity : public ::testing::Test {
  protected:
    Harness h;
    Pair p = h.connected_pair();  // QPs with depth 16, 4 SGEs each way, 64 bytes inline
    LockedBuffer buffer = h.arena.allocate(2 * PAGE_SIZE);
    Region r = h.register_mr(p.pd, buffer, 0, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);

    std::vector<Sge> sges(size_t n, uint32_t each = 8) const {
        std::vector<Sge> out;
        for (size_t i = 0; i < n; ++i)
            out.push_back({r.va + i * each, each, r.local});
        return out;
    }
};

// CQP-DEPTH-01: ReceiveQueueDepth receives must be accepted; one more may lack resources.
TEST_F(QpCapacity, ReceiveQueueAcceptsItsDepth) {
    for (Context i = 0; i < 16; ++i) {
        Expectation e = h.model.expect(calls::Receive{p.qp_b, 0x100 + i, sges(1)});
        EXPECT_FALSE(e.must_fail());
        EXPECT_EQ(e.preferred, STATUS_SUCCESS) << i;
        h.accept(calls::Receive{p.qp_b, 0x100 + i, sges(1)});
    }
    Expectation over = h.model.expect(calls::Receive{p.qp_b, 0x200, sges(1)});
    EXPECT_TRUE(over.may_lack_resources);
    EXPECT_EQ(over.preferred, STATUS_INSUFFICIENT_RESOURCES);
}

// CQP-DEPTH-02: InitiatorQueueDepth requests must be accepted while outstanding (sends wait for
// receives at the peer, so they stay outstanding).
TEST_F(QpCapacity, InitiatorQueueAcceptsItsDepth) {
    for (Context i = 0; i < 16; ++i) {
        Expectation e = h.model.expect(calls::Send{p.qp_a, 0x300 + i, sges(1), 0, {}});
        EXPECT_EQ(e.preferred, STATUS_SUCCESS) << i;
        h.accept(calls::Send{p.qp_a, 0x300 + i, sges(1), 0, {}});
    }
    EXPECT_EQ(h.model.expect(calls::Send{p.qp_a, 0x400, sges(1), 0, {}}).preferred,
              STATUS_INSUFFICIENT_RESOURCES);
}

// CQP-SGE-01, SGE-10: MaxReceiveRequestSge SGEs are accepted, one more is refused.
TEST_F(QpCapacity, ReceiveSgeCount) {
    EXPECT_FALSE(h.model.expect(calls::Receive{p.qp_b, 1, sges(4)}).must_fail());
    EXPECT_TRUE(fails_with(h.model.expect(calls::Receive{p.qp_b, 2, sges(5)}),
                           STATUS_INVALID_PARAMETER, "SGE-10"));
}

// CQP-SGE-02, SGE-04: MaxInitiatorRequestSge SGEs are accepted on sends and writes.
TEST_F(QpCapacity, InitiatorSgeCount) {
    EXPECT_FALSE(h.model.expect(calls::Send{p.qp_a, 1, sges(4), 0, {}}).must_fail());
    EXPECT_FALSE(
        h.model.expect(calls::Write{p.qp_a, 2, sges(4), r.va, r.remote, 0, {}}).must_fail());
    EXPECT_TRUE(fails_with(h.model.expect(calls::Send{p.qp_a, 3, sges(5), 0, {}}),
                           STATUS_INVALID_PARAMETER, "SGE-04"));
}

// CQP-INL-01, SGE-08: inline sends of up to InlineDataSize bytes are accepted, one more refused.
TEST_F(QpCapacity, InlineSize) {
    auto inline_send = [&](uint32_t bytes) {
        return calls::Send{p.qp_a, 1, {{r.va, bytes, 0}}, NDK_OP_FLAG_INLINE, pattern(bytes, 1)};
    };
    EXPECT_FALSE(h.model.expect(inline_send(64)).must_fail());
    EXPECT_TRUE(fails_with(h.model.expect(inline_send(65)), STATUS_INVALID_PARAMETER, "SGE-08"));
}

// CQP-CTX-01, CQP-OBJ-02: completions carry the QPContext and go to the right CQ: receives to
// the receive CQ, initiator requests to the initiator CQ.
TEST_F(QpCapacity, CompletionsGoToTheRightCqWithTheQpContext) {
    Harness x;
    ObjectId pd = x.pd();
    ObjectId a_recv = x.cq(), a_init = x.cq(), b_recv = x.cq(), b_init = x.cq();
    ObjectId qa = x.qp(pd, a_recv, a_init, 0xAAA);
    ObjectId qb = x.qp(pd, b_recv, b_init, 0);  // a NULL QPContext is echoed as NULL
    x.connect(qa, qb, 7100);
    LockedBuffer b = x.arena.allocate(PAGE_SIZE);
    Region reg = x.register_mr(pd, b, 0, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    x.accept(calls::Receive{qb, 0x10, {{reg.va + 2048, 1024, reg.local}}});
    x.accept(calls::Send{qa, 0x20, {{reg.va, 100, reg.local}}, 0, {}});
    auto init = x.drain(a_init);
    auto recv = x.drain(b_recv);
    EXPECT_TRUE(x.drain(a_recv).empty());
    EXPECT_TRUE(x.drain(b_init).empty());
    ASSERT_EQ(init.size(), 1u);
    ASSERT_EQ(recv.size(), 1u);
    EXPECT_EQ(init[0].qp_context, 0xAAAu);
    EXPECT_EQ(init[0].request_context, 0x20u);
    EXPECT_EQ(recv[0].qp_context, 0u);
    EXPECT_EQ(recv[0].request_context, 0x10u);
    EXPECT_EQ(recv[0].type, NdkOperationTypeReceive);
}

}  // namespace
}  // namespace ndkct::model::test
