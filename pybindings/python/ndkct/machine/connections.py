"""Rules for connections (handshakes with private data and read limits both ways, connection
data, addresses, rejects, disconnects, a connecting side giving up) and for consumer code inside
provider callbacks (NDK calls from a CQ notification, a CQ closed while one runs)."""

import time

from hypothesis import strategies as st
from hypothesis.stateful import rule

from .. import _ndkct
from .. import strategies as nst
from ..errors import NdkError
from .base import LOOPBACK, PAGE_SIZE

Status = _ndkct.Status


def _started(status):
    return status == Status.STATUS_PENDING or _ndkct.nt_success(status)


class ConnectionRules:

    def private_data(self, kind, maximum, salt):
        """``kind`` bytes of private data (an int, or "max"/"past": the adapter's maximum, one
        past it), a pattern ``salt`` tells apart."""
        n = {"max": maximum, "past": maximum + 1}.get(kind, kind)
        return bytes((i * 13 + salt) & 0xFF for i in range(n))

    def connection_data(self, connector, buffer, sent, with_limits):
        """NdkGetConnectionData with a buffer of ``buffer`` bytes (None: NULL, the probe;
        "exact"/"short": the private data's size, one less), the read-limit pointers or NULL."""
        n = {"exact": sent, "short": max(sent - 1, 0)}.get(buffer, buffer)
        connector.connection_data(n or 0, with_buffer=buffer is not None,
                                  with_limits=with_limits)

    @rule(limits=nst.read_limits, accept_limits=nst.read_limits,
          data=nst.private_data_kinds, accept_data=nst.private_data_kinds,
          buffer=nst.connection_data_buffers, with_limits=st.booleans(), end=nst.handshake_ends,
          address=nst.address_buffers)
    def handshake(self, limits, accept_limits, data, accept_data, buffer, with_limits, end,
                  address):
        """Two new QPs of the pair's PD connected through a listener: NdkConnect with private
        data (up to MaxCallerData and one past it, CONN-28) and (IRD, ORD) ``limits``;
        NdkGetConnectionData on the passive side with a ``buffer`` (CONN-PD-*) and the limits
        (CONN-RL-03); then the connecting side gives up (its close cancels the pending connect,
        CLOSE-08), the passive side rejects (NdkReject with private data), or accepts
        (NdkAccept or NdkAcceptEx, private data up to MaxCalleeData and one past it, its own
        limits), NdkGetConnectionData on the active side (the effective limits, CONN-RL-01..03),
        NdkCompleteConnect(Ex); the addresses of both connectors and the listener
        (NdkGetLocalAddress, NdkGetPeerAddress with an ``address``-byte buffer); with
        ``end="disconnect"`` each side disconnects after."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        made = []  # closed at the end, newest first (after a failure, teardown closes them)
        self._handshake(pair.link, made, limits, accept_limits, data, accept_data, buffer,
                        with_limits, end, address)
        for o in reversed(made):
            o.close()

    def _handshake(self, link, made, limits, accept_limits, data, accept_data, buffer,
                   with_limits, end, address):
        adapter, info = self.adapter, self.info
        try:
            for make in (lambda: link.pd.create_qp(link.cq, receive_depth=4, initiator_depth=4,
                                                   context=self.qp_context()),
                         lambda: link.pd.create_qp(link.cq, receive_depth=4, initiator_depth=4,
                                                   context=self.qp_context()),
                         adapter.create_listener, adapter.create_connector):
                made.append(make())
        except NdkError:
            return
        qa, qb, listener, active = made
        port = adapter.next_port()
        if not _ndkct.nt_success(listener.listen(LOOPBACK, port, check=False)):
            return
        listener.local_address(address)
        sent = self.private_data(data, info["max_caller_data"], 0xC0)
        if not _started(active.connect_async(qa, LOOPBACK, port, ird=limits[0], ord=limits[1],
                                             private_data=sent)):
            return
        passive = listener.wait_connect_event(timeout=self.settle_timeout)
        if passive is None:  # the active connector's close cancels the connect (CLOSE-08)
            return
        made.append(passive)
        self.connection_data(passive, buffer, len(sent), with_limits)
        passive.peer_address(address)
        if end == "give_up":
            if active.close_async() == Status.STATUS_PENDING:
                active.wait_connect(check=False)  # the close cancels it (CLOSE-08)
                active.wait_close()
            return
        answer = self.private_data(accept_data, info["max_callee_data"], 0xA0)
        if end == "reject":
            if _ndkct.nt_success(passive.reject(answer)):
                active.wait_connect(check=False)  # refused (CONN-REJ-*)
            return  # else (too much private data...) the active connector's close cancels it
        ex = end == "accept_ex" and info["version"] >= (2, 1)
        accept = passive.accept_ex_async if ex else passive.accept_async
        if not _started(accept(qb, ird=accept_limits[0], ord=accept_limits[1],
                               private_data=answer)):
            return  # refused (too much private data...): the active connector's close cancels

        if not _ndkct.nt_success(active.wait_connect(check=False)):
            passive.wait_accept(check=False)
            return
        self.connection_data(active, buffer, len(answer), with_limits)
        if ex:
            active.complete_connect_ex(check=False)
        else:
            active.complete_connect(check=False)
        passive.wait_accept(check=False)
        active.local_address(address)
        active.peer_address(address)
        if end == "disconnect":
            active.disconnect(check=False)
            passive.disconnect(check=False)

    @rule(call=nst.calls_in_callbacks)
    def in_notification(self, call):
        """Consumer code inside a CQ notification callback (where a kernel consumer runs at
        DISPATCH_LEVEL): an NDK ``call`` there may not block (GEN-IRQL-01, *-IRQL-01), one that
        pends finishes afterwards; ``"close_cq"``: the CQ is closed while the callback runs
        (CLOSE-07)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        if call == "close_cq":
            self._close_cq_in_notification(pair)
        else:
            self._call_inside_notification(pair, call)

    def _call_inside_notification(self, pair, call):
        """The call inside the pair's CQ notification callback, the notification being for a
        send of the pair's."""
        if not self.usable(pair):
            return
        link, adapter = pair.link, self.adapter
        fast_mr = None  # fast_register: an MR of its own, initialized for one page
        try:
            if call == "fast_register":
                mapping = self.map(pair.source, 0)
                if mapping is None:
                    return
                fast_mr = link.pd.create_mr(fast_register=True)
                if not _ndkct.nt_success(fast_mr.initialize_fast_register(1, False, check=False)):
                    fast_mr.close()
                    return
                # s11frq: NdkFastRegister on the pair's QP a (FR-IRQL-01), a valid one: its
                # entry comes on this CQ and is settled below.
                what = (call, link.a, adapter.next_context(), fast_mr, mapping.lam.pages[:1], 0,
                        PAGE_SIZE, self.label(), _ndkct.OP_FLAG_ALLOW_LOCAL_WRITE)
            elif call == "register_mr":
                what = (call, link.pd.create_mr(), pair.sink.describe(0, PAGE_SIZE),
                        _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE)
            elif call == "initialize_fast_register_mr":
                what = (call, link.pd.create_mr(fast_register=True), 2, False)
            elif call == "create_qp":
                what = (call, link.pd, link.cq)
            else:
                what = (call, link.pd, False)
        except NdkError:
            return
        adapter.hook_events(link.cq, calls=[what])
        link.b.receive(pair.snk.sge(0, PAGE_SIZE))
        link.cq.arm()
        link.a.send(pair.src.sge(0, 8))
        adapter.release_hook(link.cq)  # the send is judged: the calls may go
        # Long enough for a blocked call to come back (the Session's watchdog then reports it):
        # a hook still running would report in a later step.
        adapter.wait_hook(link.cq, "done", timeout=self.hook_timeout)
        self.settle(pair)
        made = [o for *_, o in adapter.finish_deferred() if o is not None]
        # Judged last, after a moment: a callback for a call made in the hook that returned its
        # status inline (GEN-ASYNC-03) comes on its own thread; it fails this step.
        time.sleep(self.quiet / 4)
        made += [o for *_, o in adapter.unhook_events(link.cq) if o is not None]
        for o in made:
            o.close()
        if fast_mr is not None:
            self.settle(pair)  # its entry, if the hook ran after the settle above
            fast_mr.close()

    def _close_cq_in_notification(self, pair):
        """A new CQ's close while its notification callback runs and its QP is still open: it
        pends, and completes only after the QP's close and the callback's return (CLOSE-02,
        CLOSE-07, CLOSE-CQ-01)."""
        link, adapter = pair.link, self.adapter
        try:
            cq = adapter.create_cq(16)
        except NdkError:
            return
        try:
            qp = link.pd.create_qp(cq, receive_depth=4, initiator_depth=4,
                                   context=self.qp_context())
        except NdkError:
            cq.close()
            return
        adapter.hook_events(cq, hold=self.callback_timeout)  # held until the closes are made
        qp.receive(pair.snk.sge(0, 64))
        cq.arm()
        qp.flush()  # the cancelled receive's entry: the notification comes
        if adapter.wait_hook(cq, "entered", timeout=self.settle_timeout):
            cq_close, qp_close = cq.close_async(), qp.close_async()
            # The callback still runs: a CQ close that completes now, once its QP's close is
            # through, completes too early (CLOSE-07). Then the callback returns.
            time.sleep(self.close_window)
            adapter.release_hook(cq)
            if qp_close == Status.STATUS_PENDING:
                qp.wait_close()
            if cq_close == Status.STATUS_PENDING:
                cq.wait_close()
        adapter.release_hook(cq)
        adapter.wait_hook(cq, "done", timeout=self.hook_timeout)
        adapter.unhook_events(cq)
        qp.close()
        cq.close()
