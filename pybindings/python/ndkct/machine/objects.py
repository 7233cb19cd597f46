"""Rules for objects and the limits the adapter advertises: PDs, QPs created at and past each
maximum (and then used up to what they were created for), CQs and SRQs at and past theirs,
closes of objects with open successors, NdkQueryAdapterInfo, the consumer's own Dispatch."""

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from .. import _ndkct
from .. import strategies as nst
from ..errors import NdkError
from .base import PAGE_SIZE, split

#: NdkCreateQp arguments and the NDK_ADAPTER_INFO maxima they may not exceed (CQP-LIM-01..05).
QP_LIMITS = {"receive_depth": "max_receive_queue_depth",
             "initiator_depth": "max_initiator_queue_depth",
             "receive_sge": "max_receive_request_sge", "initiator_sge": "max_initiator_request_sge",
             "inline_size": "max_inline_data_size"}


class ObjectRules:

    def limit(self, field, kind):
        """The value of a QP argument at its maximum, one past it, or 0."""
        maximum = self.info[QP_LIMITS[field]]
        return {"max": maximum, "past": maximum + 1, "zero": 0}[kind]

    @rule(receive_depth=nst.queue_depths, initiator_depth=nst.queue_depths,
          field=nst.qp_limit_fields, kind=nst.limit_kinds, separate=st.booleans())
    def create_and_close_qp(self, receive_depth, initiator_depth, field, kind, separate):
        """NdkCreateQp with depths up to beyond any adapter's limits, or one value at this
        adapter's maximum, one past it, or 0 (CQP-LIM-01..07: the documented status for each),
        on the pair's CQ or a CQ of its own for initiator completions."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        shape = {"receive_depth": receive_depth, "initiator_depth": initiator_depth}
        if field:  # the depths within any limit: the one value at its limit is what is judged
            shape = {k: min(v, 64) for k, v in shape.items()}
            shape[field] = self.limit(field, kind)
        made = []
        try:
            icq = None
            if separate:
                icq = self.adapter.create_cq(64)
                made.append(icq)
            made.append(pair.link.pd.create_qp(pair.link.cq, icq, context=self.qp_context(),
                                               **shape))
        except NdkError:
            pass
        for o in reversed(made):
            o.close()

    @rule(receive_depth=nst.small_depths, initiator_depth=nst.small_depths,
          receive_sge=nst.sge_limits, initiator_sge=nst.sge_limits, inline=nst.inline_sizes,
          overflow=st.booleans())
    def limited_pair(self, receive_depth, initiator_depth, receive_sge, initiator_sge,
                     inline, overflow):
        """Two QPs of the pair's PD created with small depths and SGE counts or the adapter's
        maxima, and an InlineDataSize, connected; then held to what they were created for:
        ``receive_depth`` receives outstanding at once (CQP-DEPTH-01), as many sends, each of
        ``initiator_sge`` SGEs (CQP-DEPTH-02, CQP-SGE-02), receives of ``receive_sge`` SGEs
        (CQP-SGE-01), an inline send of exactly InlineDataSize bytes (CQP-INL-01); with
        ``overflow``, one receive more than the depth (WR-*: the documented refusal)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        info = self.info
        rsge = info["max_receive_request_sge"] if receive_sge == "max" else receive_sge
        isge = info["max_initiator_request_sge"] if initiator_sge == "max" else initiator_sge
        size = info["max_inline_data_size"] if inline == "max" else inline
        link = pair.link
        made = []
        try:
            for _ in range(2):
                made.append(link.pd.create_qp(
                    link.cq, context=self.qp_context(), receive_depth=receive_depth,
                    initiator_depth=initiator_depth, receive_sge=rsge, initiator_sge=isge,
                    inline_size=size))
            a, b = made
            connection = self.adapter.connect_pair(link.pd, link.cq, a, b)
        except NdkError:
            for o in reversed(made):
                o.close()
            return
        made += [o for o in (connection.listener, connection.active, connection.passive) if o]
        sink, src = pair.snk, pair.src
        sends = min(receive_depth, initiator_depth)
        for _ in range(receive_depth + int(overflow)):
            b.receive(split(sink.address, PAGE_SIZE, sink.local_token, rsge))
        for i in range(sends):
            if i == 0 and size > 0:  # exactly InlineDataSize bytes, inline
                status = a.send(split(src.address, size, src.local_token, min(isge, size)),
                                flags=_ndkct.OP_FLAG_INLINE)
            else:
                status = a.send(split(src.address, 64 * isge, src.local_token, isge))
            if not _ndkct.nt_success(status):
                break
        # The sends' entries first (each took a receive), then the receives no send took are
        # flushed (FLS-02: cancelled), then everything is judged.
        self.settle_qps(link.cq, a)
        b.flush()
        self.settle_qps(link.cq, a, b)
        for o in reversed(made):
            o.close()

    @rule(depth=nst.cq_depth_kinds, resize=nst.cq_resizes,
          moderation=st.sampled_from([None, (0, 0), (100, 16), (1 << 20, 1)]))
    def cq_limits(self, depth, resize, moderation):
        """NdkCreateCq with an ordinary depth, the adapter's MaxCqDepth, one past it, 0 or 1
        (CQ-CREATE-*); NdkResizeCq to more, to the maximum, past it, to 0 (CQ-RESIZE-*);
        NdkControlCqInterruptModeration (CQ-IM-*)."""
        maximum = self.info["max_cq_depth"]
        n = {"ordinary": 64, "max": maximum, "past": maximum + 1, "zero": 0, "one": 1}[depth]
        try:
            cq = self.adapter.create_cq(n)
        except NdkError:
            return
        if resize != "none" and self.adapter.has_flag(_ndkct.ADAPTER_FLAG_CQ_RESIZE_SUPPORTED):
            to = {"bigger": max(n, 1) * 2 if n < maximum // 2 else maximum, "max": maximum,
                  "past": maximum + 1, "zero": 0}[resize]
            cq.resize(to, check=False)
        if moderation is not None and \
                self.adapter.has_flag(_ndkct.ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED):
            cq.control_interrupt_moderation(*moderation)
        cq.close()

    @rule(kind=nst.srq_kinds, qp_field=st.sampled_from(
        ["", "initiator_depth", "initiator_sge", "inline_size"]), qp_kind=nst.limit_kinds)
    def srq_limits(self, kind, qp_field, qp_kind):
        """NdkCreateSrq at and past MaxSrqDepth and the receive SGE maximum (SRQ-*), and a QP
        made with it at and past its initiator limits (CQP-SRQ-02..05); a receive posted to the
        SRQ and a send that lands in it when both are within limits."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        info = self.info
        depth, sges = 16, 4
        if kind.endswith("depth"):
            depth = {"max_depth": info["max_srq_depth"], "past_depth": info["max_srq_depth"] + 1,
                     "zero_depth": 0}[kind]
        elif kind.endswith("sge"):
            sges = info["max_receive_request_sge"] + int(kind == "past_sge")
        link = pair.link
        try:
            srq = link.pd.create_srq(depth, sges)
        except NdkError:
            return
        shape = {}
        if qp_field:
            shape[qp_field] = self.limit(qp_field, qp_kind)
        try:
            qp = link.pd.create_qp_with_srq(srq, link.cq, context=self.qp_context(), **shape)
        except NdkError:
            srq.close()
            return
        qp.close()
        srq.close()

    @rule(successor=nst.antecedent_successors)
    def close_antecedent(self, successor):
        """NdkCloseObject of a new PD (or CQ) while its MR, MW or QP is open: the close pends
        until the successor is closed (CLOSE-02, LIFE-TREE-03)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        link = pair.link
        made = []
        try:
            if successor == "qp_on_cq":
                made.append(self.adapter.create_cq(16))
                made.append(link.pd.create_qp(made[0], receive_depth=4, initiator_depth=4,
                                              context=self.qp_context()))
            else:
                made.append(self.adapter.create_pd())
                pd = made[0]
                made.append(pd.create_mr() if successor == "mr" else pd.create_mw()
                            if successor == "mw" else
                            pd.create_qp(link.cq, receive_depth=4, initiator_depth=4,
                                         context=self.qp_context()))
        except NdkError:
            for o in reversed(made):
                o.close()
            return
        antecedent, child = made
        status = antecedent.close_async()
        child.close()
        if status == _ndkct.Status.STATUS_PENDING:
            antecedent.wait_close()

    # s10qp (issue 13): initiator requests on a QP no connector has connected.
    @rule(call=st.sampled_from(["send", "write", "read", "fast_register"]))
    def post_on_new_qp(self, call):
        """An initiator request on a QP just created on the pair's PD and CQ (no connector has
        connected it): NdkSend, NdkWrite, NdkRead or NdkFastRegister is refused inline with
        STATUS_CONNECTION_INVALID (CQP-STATE-01; FR-ST-02 and each call's own rule, WR-04)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        link = pair.link
        fmr = pair.fmr(0)
        mapping = self.map(pair.source, 0) if call == "fast_register" and fmr else None
        if call == "fast_register" and mapping is None:
            return
        try:
            qp = link.pd.create_qp(link.cq, receive_depth=4, initiator_depth=4,
                                   context=self.qp_context())
        except NdkError:
            return
        try:
            if call == "send":
                qp.send(pair.src.sge(0, 64))
            elif call == "write":
                qp.write(pair.src.sge(0, 64), pair.tgt.address, pair.tgt.remote_token)
            elif call == "read":
                qp.read(pair.snk.sge(0, 64), pair.tgt.address, pair.tgt.remote_token)
            else:
                pages = mapping.lam.pages[:1]
                qp.fast_register(fmr.mr, pages, fbo=0, length=PAGE_SIZE,
                                 base_virtual_address=self.label(),
                                 flags=_ndkct.OP_FLAG_ALLOW_LOCAL_WRITE)
        finally:
            qp.close()

    @precondition(lambda self: not self.adapter.session.dispatch_overwritten)
    @rule()
    def overwrite_dispatch(self):
        """The consumer points the Dispatch of the adapter and of every object, open or made
        later, at its own tables; every call still works (GEN-CREATE-05)."""
        self.adapter.overwrite_dispatch()

    @rule(size=nst.adapter_info_sizes)
    def query_adapter_info(self, size):
        """NdkQueryAdapterInfo with a full, old-layout, one-short, small or no buffer (AI-*)."""
        self.adapter.query_adapter_info(size, with_buffer=size > 0)
