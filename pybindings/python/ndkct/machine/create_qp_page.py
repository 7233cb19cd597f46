"""s11qp (issue 13): NdkCreateQp's page on what a QP holds open and where its queues complete.
A QP made with an SRQ (NdkCreateQpWithSrq) has the SRQ as an antecedent beside its PD and CQs:
the SRQ's close while the QP is open pends and completes only once the QP is closed (CQP-SRQ-06;
CLOSE-02 is the generic rule; ObjectRules.close_antecedent closes a PD or a CQ first,
CQP-LIFE-01). A QP's receive requests complete on its pReceiveCq and its initiator requests on
its pInitiatorCq (CQP-OBJ-02; a QP made with an SRQ takes its receives from the SRQ with their
entries on its pReceiveCq, CQP-SRQ-01): the other rules' QPs have one CQ for both, which hides a
swap.
The C++ machine's commands are in conformance/properties/commands_qp_creation.cpp."""

import time

from hypothesis import strategies as st
from hypothesis.stateful import rule

from .. import _ndkct
from ..errors import NdkError


class CreateQpPageRules:
    @rule()
    def close_srq_before_its_qp(self):
        """NdkCreateSrq on the pair's PD, NdkCreateQpWithSrq with it on the pair's CQ, then
        NdkCloseObject of the SRQ while the QP is open: STATUS_PENDING, and the close completes
        after the QP's (CQP-SRQ-06)."""
        pair = self.pair
        if pair is None or self.info["max_srq_depth"] == 0:  # refused (resources), or no SRQs
            return
        link = pair.link
        try:
            srq = link.pd.create_srq(min(16, self.info["max_srq_depth"]), 1)
        except NdkError:
            return
        try:
            qp = link.pd.create_qp_with_srq(srq, link.cq, context=self.qp_context(),
                                            initiator_depth=4, initiator_sge=1)
        except NdkError:
            srq.close()
            return
        status = srq.close_async()
        qp.close()
        if status == _ndkct.Status.STATUS_PENDING:
            srq.wait_close()

    @rule(with_srq=st.booleans())
    def queues_on_their_own_cqs(self, with_srq):
        """Two QPs of the pair's PD, each with a receive CQ and an initiator CQ of its own
        (``with_srq``: b made with an SRQ, NdkCreateQpWithSrq), connected; a receive on b (or its
        SRQ), a send from a; all four CQs polled until both entries came: the send's on a's
        initiator CQ, the receive's on b's receive CQ (CQP-OBJ-02, CQP-SRQ-01)."""
        pair = self.pair
        if pair is None or not self.usable(pair):  # refused (resources), or not reconnected
            return
        with_srq = with_srq and self.info["max_srq_depth"] > 0
        link, adapter = pair.link, self.adapter
        made = []  # closed at the end, newest first
        try:
            cqs = []
            for _ in range(4):
                cqs.append(adapter.create_cq(16))
                made.append(cqs[-1])
            srq = None
            if with_srq:
                srq = link.pd.create_srq(min(16, self.info["max_srq_depth"]), 1)
                made.append(srq)
            a = link.pd.create_qp(cqs[0], cqs[1], receive_depth=4, initiator_depth=4,
                                  receive_sge=1, initiator_sge=1, context=self.qp_context())
            made.append(a)
            b = (link.pd.create_qp_with_srq(srq, cqs[2], cqs[3], initiator_depth=4,
                                            initiator_sge=1, context=self.qp_context())
                 if srq is not None else
                 link.pd.create_qp(cqs[2], cqs[3], receive_depth=4, initiator_depth=4,
                                   receive_sge=1, initiator_sge=1, context=self.qp_context()))
            made.append(b)
            connection = adapter.connect_pair(link.pd, cqs[0], a, b)
            made += [o for o in (connection.listener, connection.active, connection.passive)
                     if o is not None]
        except NdkError:
            for o in reversed(made):
                o.close()
            return
        (srq if srq is not None else b).receive(pair.snk.sge(0, 64))
        a.send(pair.src.sge(0, 64))
        got, deadline = 0, time.monotonic() + self.settle_timeout
        while got < 2 and time.monotonic() < deadline:
            for cq in cqs:
                got += len(cq.poll(16, ex=self.poll_ex))
            if got < 2:
                time.sleep(0.001)
        for o in reversed(made):
            o.close()
