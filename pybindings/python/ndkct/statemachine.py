"""The cross-check as a Hypothesis RuleBasedStateMachine: random NDK call sequences against a
provider, every outcome judged by the oracle.

Bundles hold NDK objects (connected QP pairs with their fast-register MRs, buffers,
registered regions, PDs). Rules cover the data path (writes, reads, sends, fast registers,
invalidates, flushes), registrations, creates over and at the adapter's limits,
NdkQueryAdapterInfo, connections with private data and read limits (NdkGetConnectionData, a
connecting side giving up), closes of objects with open successors, NDK calls and closes
inside a CQ notification callback, and the consumer overwriting Dispatch members. The adapter
is strict: the step whose outcome breaks a rule raises :class:`ndkct.ViolationError` with the
rule IDs, and Hypothesis shrinks the sequence. The machine's rules take plain values only, so
Hypothesis' printed steps form a Python program; :func:`check_provider` returns that program
with the import that makes it runnable::

    from ndkct.statemachine import check_provider
    outcome = check_provider("lib:/path/libvendor.so", max_examples=100)
    if not outcome.ok:
        print(outcome.program)          # runs as written and fails the same way
"""

import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.errors import Flaky
from hypothesis import strategies as st
from hypothesis.reporting import with_reporter
from hypothesis.stateful import (Bundle, RuleBasedStateMachine, initialize, multiple,
                                 precondition, rule, run_state_machine_as_test)

from . import _ndkct
from . import strategies as nst
from .api import Adapter, Sge
from .errors import NdkError, ViolationError

PAGE_SIZE = _ndkct.PAGE_SIZE
#: Fast-registered regions get address labels far from any pointer (FR-ALIGN-01: labels).
FAR_BASE = 0x5A00_0000_0000
LOOPBACK = "127.0.0.1"
#: NdkCreateQp arguments and the NDK_ADAPTER_INFO maxima they may not exceed (CQP-LIM-01..05).
QP_LIMITS = {"receive_depth": "max_receive_queue_depth",
             "initiator_depth": "max_initiator_queue_depth",
             "receive_sge": "max_receive_request_sge", "initiator_sge": "max_initiator_request_sge",
             "inline_size": "max_inline_data_size"}


@dataclass(eq=False)
class Pair:
    """Two connected QPs with a patterned source, a read sink and a target open to remote reads
    and writes, all registered."""
    link: object
    source: object
    sink: object
    src: object
    snk: object
    target: object
    tgt: object
    fmrs: list = field(default_factory=list)  # its fast-register MRs (FastMr), in order made
    broken: bool = False  # flushed or in error: reconnected before its next data step

    def fmr(self, which):
        """Its fast-register MR number ``which`` (the last one when there are fewer)."""
        return self.fmrs[min(which, len(self.fmrs) - 1)] if self.fmrs else None

    def __repr__(self):
        return "Pair()"


@dataclass(eq=False)
class Region:
    """A buffer range registered with NdkRegisterMr on a pair's PD."""
    pair: Pair
    mr: object
    buffer: object
    flags: int
    offset: int
    length: int
    live: bool = True

    @property
    def address(self):
        return self.buffer.address + self.offset


@dataclass(eq=False)
class FastMr:
    """A fast-register MR of a pair's PD and, once fast-registered, its region."""
    pair: Pair
    mr: object
    pages: int
    remote_access: bool
    base: int = 0
    length: int = 0       # 0: nothing registered now
    flags: int = 0


@dataclass(eq=False)
class Mapping:
    """An NdkBuildLAM result over a buffer range."""
    lam: object
    length: int


class NdkMachine(RuleBasedStateMachine):
    """Random NDK sequences against ``provider``, judged by the oracle at every step."""

    #: The provider under test (a subclass or :func:`machine_for` sets it).
    provider = os.environ.get("NDKCT_PROVIDER", "model:seed=1")
    #: Rule IDs to look for (None: every rule): violations of other rules do not fail an
    #: example, so Hypothesis finds and shrinks a program breaking one of these.
    focus = None
    #: Host memory per example, in pages.
    arena_pages = 1024
    #: Seconds to wait for completions the oracle expects.
    settle_timeout = 2.0
    #: Seconds a pending NDK call may take before its missing callback is a violation.
    callback_timeout = 3.0
    #: Seconds to wait after CloseNdkAdapter for stray callbacks (a callback the provider
    #: should never have made arrives on its own thread, late; waiting lets a shrunk example
    #: fail again when replayed).
    quiet = 0.002
    #: Seconds a CQ notification callback stays running after its QP's and its own close were
    #: requested (a close completing then is too early, CLOSE-07).
    close_window = 0.001
    #: Seconds to wait for a hook in a provider callback to finish (its calls may block, and
    #: the Session's watchdog reports a call that blocked once it returns).
    hook_timeout = 5.0

    pairs = Bundle("pairs")
    buffers = Bundle("buffers")
    regions = Bundle("regions")
    pds = Bundle("pds")

    def __init__(self):
        super().__init__()
        # The exception being handled where Hypothesis runs the example, if any: teardown runs
        # in a `finally`, and an error of a step is any other (see _failing).
        self._ambient = sys.exc_info()[1]
        self.adapter = Adapter(self.provider, arena_pages=self.arena_pages,
                               strict=self.focus or True, callback_timeout=self.callback_timeout)
        self.counts = {"pairs": 0, "buffers": 0, "pds": 0}
        self.next_base = FAR_BASE

    # ------------------------------------------------------------------ helpers
    def _settle(self, pair):
        """Polls the pair's CQ until the oracle expects nothing more, then declares it drained
        (a completion still expected is missing: WR-05); returns the results."""
        link = pair.link
        got = []
        deadline = time.monotonic() + self.settle_timeout
        while True:
            expected = link.a.outstanding_completions + link.b.outstanding_completions
            left = deadline - time.monotonic()
            if not expected or left <= 0:
                break
            got += link.cq.drain(expected, timeout=left)  # polls in C++ until they came
        got += link.cq.poll(16)  # anything extra is judged too
        for qp in (link.a, link.b):
            if qp.outstanding_completions:
                qp.expect_nothing_outstanding()
        if any(int(r.status) != 0 for r in got):
            pair.broken = True  # an error completion moves a connection to error
        return got

    def _usable(self, pair):
        """A pair in error (flushed, or after an error completion) gets two new QPs of the same
        PD and CQ, connected, before its next data step: its registrations stay valid, so data
        steps keep going. False when that fails (the step then does nothing)."""
        if not pair.broken:
            return True
        link = pair.link
        for o in (link.active, link.passive, link.listener, link.a, link.b):
            o.close()
        try:
            a = link.pd.create_qp(link.cq)
            b = link.pd.create_qp(link.cq)
            pair.link = self.adapter.connect_pair(link.pd, link.cq, a, b)
        except NdkError:
            return False
        pair.broken = False
        return True

    # ------------------------------------------------------------------ objects
    @initialize(target=pairs)
    def first_pair(self):
        """Every example starts with a connected pair and a buffer (below), so that data-path
        rules apply from the first steps."""
        return self.connect()

    @initialize(target=buffers)
    def first_buffer(self):
        """Two scattered pages (the buffer rule makes others; no arguments here, so that a
        shrunk example has nothing to minimize in its first steps)."""
        return self.buffer(2, False)

    @precondition(lambda self: self.counts["pairs"] < 2)
    @rule(target=pairs)
    def connect(self):
        """A loopback pair with a patterned source, a read sink and a remote target (4 pages
        each)."""
        try:
            link = self.adapter.loopback_pair()
        except NdkError:
            return multiple()
        self.counts["pairs"] += 1
        source = self.adapter.buffer(4 * PAGE_SIZE)
        source.fill(7)
        sink = self.adapter.buffer(4 * PAGE_SIZE)
        target = self.adapter.buffer(4 * PAGE_SIZE)
        target.fill(11)
        src = link.pd.register(source, 0)
        snk = link.pd.register(sink, _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE |
                               _ndkct.MR_FLAG_RDMA_READ_SINK)
        tgt = link.pd.register(target, _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE |
                               _ndkct.MR_FLAG_ALLOW_REMOTE_READ |
                               _ndkct.MR_FLAG_ALLOW_REMOTE_WRITE)
        pair = Pair(link, source, sink, src, snk, target, tgt)
        # Fast registers apply at once: one MR with remote access, one without (FR-ACC-*).
        self._new_fast_register_mr(pair, 16, True)
        self._new_fast_register_mr(pair, 4, False)
        return pair

    @precondition(lambda self: self.counts["buffers"] < 6)
    @rule(target=buffers, pages=nst.buffer_pages, contiguous=st.booleans())
    def buffer(self, pages, contiguous):
        """A buffer of its own pattern (each buffer's differs: misplaced bytes show)."""
        self.counts["buffers"] += 1
        b = self.adapter.buffer(pages * PAGE_SIZE, contiguous=contiguous)
        b.fill(29 * self.counts["buffers"])
        return b

    @rule(target=regions, pair=pairs, buffer=buffers, flags=nst.mr_flags,
          chain=nst.chain_kinds, offset=nst.page_offsets)
    def register(self, pair, buffer, flags, chain, offset):
        """NdkRegisterMr over a valid or a broken chain (RMR-MDL-01)."""
        size = len(buffer)
        offset = min(offset, size - 1)
        length = size - offset
        if chain == "split" and length >= 2:
            mdl = buffer.describe_split(offset, [length // 2, length - length // 2])
        elif chain == "hole" and length >= 3:
            mdl = buffer.with_hole(offset, 1, 1, length - 2)
        elif chain == "misaligned" and size >= 2 * PAGE_SIZE and offset + 1 < PAGE_SIZE:
            mdl = buffer.with_misaligned_joint(offset, 1, PAGE_SIZE // 2)
        else:
            mdl = buffer.describe(offset, length)
        try:
            mr = pair.link.pd.create_mr()
        except NdkError:
            return multiple()
        status = mr.register(mdl, flags, check=False)
        if not _ndkct.nt_success(status):
            mr.close()
            return multiple()
        # A callback for a registration that returned its status inline (GEN-ASYNC-03) would
        # come on a provider thread about now: it fails this step, not a later one.
        time.sleep(self.quiet / 4)
        self.adapter.check()
        return Region(pair, mr, buffer, flags, offset,
                      length if chain in ("whole", "split") else 0)

    @rule(pair=pairs, pages=nst.frmr_pages, remote_access=st.booleans())
    def fast_register_mr(self, pair, pages, remote_access):
        """NdkCreateMr(fast) + NdkInitializeFastRegisterMr (IFR-*): one more fast-register MR
        of the pair (every pair starts with two: 16 pages with remote access, 4 without)."""
        self._new_fast_register_mr(pair, pages, remote_access)

    def _new_fast_register_mr(self, pair, pages, remote_access):
        try:
            mr = pair.link.pd.create_mr(fast_register=True)
        except NdkError:
            return
        status = mr.initialize_fast_register(pages, remote_access, check=False)
        if not _ndkct.nt_success(status):
            mr.close()
            return
        pair.fmrs.append(FastMr(pair, mr, pages, remote_access))

    def _map(self, buffer, offset, short=False):
        offset = min(offset, len(buffer) - 1)
        length = len(buffer) - offset
        pages = (offset % PAGE_SIZE + length + PAGE_SIZE - 1) // PAGE_SIZE
        size = _ndkct.lam_size(pages) - (8 if short else 0)
        lam = self.adapter.build_lam(buffer, offset, length, buffer_size=size)
        return Mapping(lam, length) if lam.ok else None

    @rule(buffer=buffers, offset=nst.page_offsets, short=st.booleans())
    def build_lam(self, buffer, offset, short):
        """NdkBuildLAM; with ``short`` the mapping buffer is one entry too small (LAM-SIZE-*).
        Mappings are released when the adapter closes (after the MRs that may use them)."""
        self._map(buffer, offset, short)

    @rule(target=pds)
    def create_pd(self):
        try:
            pd = self.adapter.create_pd()
        except NdkError:
            return multiple()
        return pd

    @rule(pd=pds)
    def close_pd(self, pd):
        pd.close()

    @rule(pair=pairs, receive_depth=nst.queue_depths, initiator_depth=nst.queue_depths,
          at_limit=nst.qp_limit_fields, over=st.booleans())
    def create_and_close_qp(self, pair, receive_depth, initiator_depth, at_limit, over):
        """NdkCreateQp with depths up to beyond any adapter's limits, or one value at this
        adapter's maximum or one past it (CQP-LIM-01..06)."""
        shape = {"receive_depth": receive_depth, "initiator_depth": initiator_depth}
        if at_limit:
            shape[at_limit] = self.adapter.info[QP_LIMITS[at_limit]] + int(over)
        try:
            qp = pair.link.pd.create_qp(pair.link.cq, **shape)
        except NdkError:
            return
        qp.close()

    @rule(pair=pairs, successor=nst.antecedent_successors)
    def close_antecedent(self, pair, successor):
        """NdkCloseObject of a new PD (or CQ) while its MR, MW or QP is open: the close pends
        until the successor is closed (CLOSE-02, LIFE-TREE-03)."""
        link = pair.link
        made = []
        try:
            if successor == "qp_on_cq":
                made.append(self.adapter.create_cq(16))
                made.append(link.pd.create_qp(made[0], receive_depth=4, initiator_depth=4))
            else:
                made.append(self.adapter.create_pd())
                pd = made[0]
                made.append(pd.create_mr() if successor == "mr" else pd.create_mw()
                            if successor == "mw" else
                            pd.create_qp(link.cq, receive_depth=4, initiator_depth=4))
        except NdkError:
            for o in reversed(made):
                o.close()
            return
        antecedent, child = made
        status = antecedent.close_async()
        child.close()
        if status == _ndkct.Status.STATUS_PENDING:
            antecedent.wait_close()

    @rule(pair=pairs)
    def create_and_close_mw(self, pair):
        try:
            mw = pair.link.pd.create_mw()
        except NdkError:
            return
        mw.close()

    @precondition(lambda self: not self.adapter.session.dispatch_overwritten)
    @rule()
    def overwrite_dispatch(self):
        """The consumer points the Dispatch of the adapter and of every object, open or made
        later, at its own tables; every call still works (GEN-CREATE-05)."""
        self.adapter.overwrite_dispatch()

    @rule(pair=pairs, limits=nst.read_limits, accept_limits=nst.read_limits,
          data=nst.private_data_lengths, buffer=nst.connection_data_buffers,
          give_up=st.booleans())
    def handshake(self, pair, limits, accept_limits, data, buffer, give_up):
        """Two new QPs of the pair's PD connected through a listener: NdkConnect with ``data``
        bytes of private data and (IRD, ORD) ``limits``, NdkGetConnectionData with a ``buffer``
        on the passive side (CONN-PD-03), then either the connecting side gives up (its close
        cancels the pending connect, CLOSE-08) or NdkAccept with its own limits and private
        data, NdkGetConnectionData on the active side (the effective limits, CONN-RL-01..03),
        NdkCompleteConnect."""
        made = []  # closed at the end, newest first (after a failure, teardown closes them)
        self._handshake(pair.link, made, limits, accept_limits, data, buffer, give_up)
        for o in reversed(made):
            o.close()

    def _handshake(self, link, made, limits, accept_limits, data, buffer, give_up):
        adapter = self.adapter
        try:
            for make in (lambda: link.pd.create_qp(link.cq, receive_depth=4, initiator_depth=4),
                         lambda: link.pd.create_qp(link.cq, receive_depth=4, initiator_depth=4),
                         adapter.create_listener, adapter.create_connector):
                made.append(make())
        except NdkError:
            return
        qa, qb, listener, active = made
        port = adapter.next_port()
        if not _ndkct.nt_success(listener.listen(LOOPBACK, port, check=False)):
            return
        status = active.connect_async(qa, LOOPBACK, port, ird=limits[0], ord=limits[1],
                                      private_data=bytes(range(1, data + 1)))
        if status != _ndkct.Status.STATUS_PENDING and not _ndkct.nt_success(status):
            return
        passive = listener.wait_connect_event(timeout=self.settle_timeout)
        if passive is None:
            return
        made.append(passive)
        passive.connection_data(buffer or 0, with_buffer=buffer is not None)
        if give_up:
            if active.close_async() == _ndkct.Status.STATUS_PENDING:
                active.wait_connect(check=False)  # the close cancels it (CLOSE-08)
                active.wait_close()
            return
        status = passive.accept_async(qb, ird=accept_limits[0], ord=accept_limits[1],
                                      private_data=bytes(range(2, data + 2)))
        if status != _ndkct.Status.STATUS_PENDING and not _ndkct.nt_success(status):
            return
        if not _ndkct.nt_success(active.wait_connect(check=False)):
            passive.wait_accept(check=False)
            return
        active.connection_data(buffer or 0, with_buffer=buffer is not None)
        active.complete_connect(check=False)
        passive.wait_accept(check=False)

    @rule(pair=pairs, call=nst.calls_in_callbacks)
    def in_notification(self, pair, call):
        """Consumer code inside a CQ notification callback (where a kernel consumer runs at
        DISPATCH_LEVEL): an NDK ``call`` there may not block (GEN-IRQL-01, *-IRQL-01), one that
        pends finishes afterwards; ``"close_cq"``: the CQ is closed while the callback runs
        (CLOSE-07)."""
        if call == "close_cq":
            self._close_cq_in_notification(pair)
        else:
            self._call_inside_notification(pair, call)

    def _call_inside_notification(self, pair, call):
        """The call inside the pair's CQ notification callback, the notification being for a
        send of the pair's."""
        if not self._usable(pair):
            return
        link, adapter = pair.link, self.adapter
        try:
            if call == "register_mr":
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
        self._settle(pair)
        made = [o for *_, o in adapter.finish_deferred() if o is not None]
        # Judged last, after a moment: a callback for a call made in the hook that returned its
        # status inline (GEN-ASYNC-03) comes on its own thread; it fails this step.
        time.sleep(self.quiet / 4)
        made += [o for *_, o in adapter.unhook_events(link.cq) if o is not None]
        for o in made:
            o.close()

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
            qp = link.pd.create_qp(cq, receive_depth=4, initiator_depth=4)
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
            if qp_close == _ndkct.Status.STATUS_PENDING:
                qp.wait_close()
            if cq_close == _ndkct.Status.STATUS_PENDING:
                cq.wait_close()
        adapter.release_hook(cq)
        adapter.wait_hook(cq, "done", timeout=self.hook_timeout)
        adapter.unhook_events(cq)
        qp.close()
        cq.close()

    @rule(size=nst.adapter_info_sizes)
    def query_adapter_info(self, size):
        """NdkQueryAdapterInfo with a full, old-layout, small or no buffer (AI-*)."""
        self.adapter.query_adapter_info(size, with_buffer=size > 0)

    # ------------------------------------------------------------------ data path
    @rule(pair=pairs, which=nst.which_fmr, buffer=buffers, offset=nst.page_offsets,
          pages=st.integers(1, 8),
          congruent=st.booleans(), flags=nst.fast_register_flags)
    def fast_register(self, pair, which, buffer, offset, pages, congruent, flags):
        """NdkBuildLAM of a buffer from ``offset``, then NdkFastRegister of its first pages;
        ``congruent=False`` gives a base address whose page offset differs from the FBO
        (FR-ALIGN-01)."""
        fmr = pair.fmr(which)
        if fmr is None:
            return
        if not self._usable(pair):
            return
        mapping = self._map(buffer, offset)
        if mapping is None:
            return
        lam = mapping.lam
        pages = min(pages, len(lam.pages))
        fbo = lam.fbo
        length = min(mapping.length, pages * PAGE_SIZE - fbo)
        self.next_base += 1 << 24
        base = self.next_base + (fbo if congruent else (fbo + 8) % PAGE_SIZE)
        ctx = self.adapter.next_context()
        status = pair.link.a.fast_register(fmr.mr, lam.pages[:pages], fbo=fbo, length=length,
                                           base_virtual_address=base, flags=flags, context=ctx)
        if not _ndkct.nt_success(status) or flags & _ndkct.OP_FLAG_SILENT_SUCCESS:
            # No entry may come for it (WR-05: failed inline; FR-SILENT-01: silent): one would
            # be there before the marker's.
            self._marker(pair)
        if not _ndkct.nt_success(status):
            self._settle(pair)
            return
        results = self._settle(pair)
        mine = [r for r in results if r.request_context == ctx]
        if (mine and int(mine[0].status) == 0) or \
                (not mine and flags & _ndkct.OP_FLAG_SILENT_SUCCESS):
            fmr.base, fmr.length, fmr.flags = base, length, flags

    @rule(pair=pairs, which=nst.which_fmr, write=st.booleans(),
          offset=st.integers(0, 3 * PAGE_SIZE), length=nst.lengths)
    def peer_access_fast_registered(self, pair, which, write, offset, length):
        """The peer reads or writes a fast-registered region through its remote token (FR-ACC-*,
        FR-MAP-*): bytes and statuses are judged by the oracle."""
        fmr = pair.fmr(which)
        if fmr is None or fmr.length == 0 or not self._usable(pair):
            return
        offset = min(offset, fmr.length - 1)
        length = min(length, fmr.length - offset, 4 * PAGE_SIZE)
        token = fmr.mr.remote_token
        b = pair.link.b
        if write:
            b.write(pair.src.sge(0, length), fmr.base + offset, token)
        else:
            b.read(pair.snk.sge(0, length), fmr.base + offset, token)
        self._settle(pair)

    @rule(region=regions, write=st.booleans(), offset=st.integers(0, 3 * PAGE_SIZE),
          length=nst.lengths, flags=nst.rdma_flags)
    def peer_access_registered(self, region, write, offset, length, flags):
        """The peer reads or writes a region registered with NdkRegisterMr (RMR-ACC-*, WRT-*,
        RD-*)."""
        pair = region.pair
        if not region.live or region.length == 0 or not self._usable(pair):
            return
        offset = min(offset, region.length - 1)
        length = min(length, region.length - offset, 4 * PAGE_SIZE)
        self._write_or_read(pair, pair.link.b, write, region.address + offset, length,
                            region.mr.remote_token, flags)

    @rule(pair=pairs, write=st.booleans(), offset=st.integers(0, 3 * PAGE_SIZE),
          length=nst.lengths, flags=nst.rdma_flags)
    def write_or_read(self, pair, write, offset, length, flags):
        """a writes into or reads from the pair's target, registered for both (WRT-*, RD-*,
        CQ-RES-*)."""
        if not self._usable(pair):
            return
        length = min(length, 4 * PAGE_SIZE - offset)
        self._write_or_read(pair, pair.link.a, write, pair.tgt.address + offset, length,
                            pair.tgt.remote_token, flags)

    def _write_or_read(self, pair, qp, write, address, length, token, flags):
        request = qp.write if write else qp.read
        local = (pair.src if write else pair.snk).sge(0, length)
        status = request(local, address, token, flags=flags)
        if flags & _ndkct.OP_FLAG_SILENT_SUCCESS:
            # The same request again, not silent: the silent one's entry (WR-SILENT-01: none
            # when it succeeds) and bytes are judged when this one completes after it.
            request(local, address, token)
        elif not _ndkct.nt_success(status):
            self._marker(pair)
        self._settle(pair)

    def _marker(self, pair):
        """A 1-byte write of a into the pair's target, which completes after every request a
        posted before it: an entry of an earlier request that must leave none (failed inline,
        WR-05; silent, WR-SILENT-01) is on the CQ by the time the marker's is."""
        pair.link.a.write(pair.src.sge(0, 1), pair.tgt.address, pair.tgt.remote_token)

    @rule(pair=pairs, length=nst.lengths)
    def send_receive(self, pair, length):
        """b posts a receive into its sink, a sends from its source (CQ-RES-01: bytes)."""
        if not self._usable(pair):
            return
        length = min(length, 4 * PAGE_SIZE)
        pair.link.b.receive(pair.snk.sge(0, 4 * PAGE_SIZE))
        pair.link.a.send(pair.src.sge(0, length))
        self._settle(pair)

    @rule(pair=pairs, which=nst.which_fmr)
    def invalidate(self, pair, which):
        """NdkInvalidate of a fast-register MR on its QP."""
        fmr = pair.fmr(which)
        if fmr is None:
            return
        if not self._usable(pair):
            return
        pair.link.a.invalidate(fmr.mr)
        results = self._settle(pair)
        if not pair.broken or not results:
            fmr.length = 0

    @rule(region=regions)
    def deregister(self, region):
        """NdkDeregisterMr of a registered region."""
        if not region.live:
            return
        region.live = False
        region.mr.deregister(check=False)

    @rule(pair=pairs, receives=st.integers(1, 3))
    def flush(self, pair, receives):
        """Receives posted on b, then NdkFlush: each completes cancelled (FLS-*)."""
        if not self._usable(pair):
            return
        for _ in range(receives):
            pair.link.b.receive(pair.snk.sge(0, PAGE_SIZE))
        pair.link.b.flush()
        self._settle(pair)
        pair.broken = True

    # ------------------------------------------------------------------ the oracle
    # No invariant: a violation reported on a provider's thread after a call returned (a stray
    # callback) fails the next call, or teardown. An invariant would see it right after the
    # step or not, by a few microseconds: an example that fails at another step when replayed.

    def teardown(self):
        """Closes every object and the adapter; violations that appear only while closing
        fail the example (those of earlier steps already did). When a step already failed,
        its error is the example's: what closing finds then does not replace it."""
        failing = _failing(self)
        adapter = self.adapter
        if adapter.closed:
            return
        seen = adapter._seen
        adapter.session.close_objects()
        adapter.session.close_adapter()
        if self.quiet > 0:
            # After a failure longer: what the provider still delivers for this adapter (a
            # worker it did not stop) must not land in the next example's adapter.
            time.sleep(self.quiet * (5 if failing else 1))
        verdict = adapter.verdict()
        adapter.close()
        fresh = verdict.violations[seen:]
        if not failing and adapter.failures(fresh):
            raise ViolationError(fresh, "closing")


def _cheap_rule_reprs(machine):
    """Hypothesis builds ``sampled_from(rules)`` at every step, and the repr it makes of it
    spells every rule with its strategies (a tenth of a step's time with this many rules): our
    rules' reprs are their names."""
    try:
        from hypothesis.stateful import Rule
    except ImportError:  # another Hypothesis
        return

    class NamedRule(Rule):
        def __repr__(self):
            return f"rule({self.function.__name__})"

    for f in vars(machine).values():
        r = getattr(f, "hypothesis_stateful_rule", None)
        if isinstance(r, Rule) and type(r) is Rule:
            r.__class__ = NamedRule


_cheap_rule_reprs(NdkMachine)


def _failing(machine):
    """True in teardown when a step of the example raised (Hypothesis runs teardown in a
    `finally`: the step's error is the exception being handled there)."""
    error = sys.exc_info()[1]
    # Not Hypothesis' own control flow (StopTest, a BaseException, ends an example early).
    return isinstance(error, Exception) and error is not machine._ambient


def machine_for(provider, name="NdkCrossCheck", **attributes):
    """A subclass of :class:`NdkMachine` testing ``provider``, named ``name`` (the name the
    printed program uses)."""
    return type(name, (NdkMachine,), {"provider": provider, **attributes})


@dataclass
class Outcome:
    """What :func:`check_provider` found."""
    provider: str
    ok: bool
    examples: int = 0     # examples run, shrinking included
    found_after: int = 0  # examples run when the first failure happened (0: none)
    seconds: float = 0.0
    error: BaseException = None
    rules: list = field(default_factory=list)
    steps: list = field(default_factory=list)  # the shrunk program's steps
    program: str = ""                           # a runnable Python program
    flaky: bool = False  # the failure did not happen again when its example was replayed
    shrink_stopped: bool = False  # shrinking ran out of its budget (shrink_seconds)
    report: list = field(default_factory=list)  # everything Hypothesis reported

    @property
    def length(self):
        """Steps in the shrunk failing program (NDK-level rules called)."""
        return len(self.steps)


def _program(provider, name, lines, focus=None):
    steps = [l for l in lines if "state." in l and not l.startswith("state = ")
             and "state.oracle_agrees()" not in l and "state.teardown()" not in l]
    body = [l for l in lines if l.startswith("state = ") or "state." in l]
    head = [
        f"# ndkct: a shrunk failing example against {provider} ({len(steps)} steps).",
        "# Run it with /usr/bin/python3 (PYTHONPATH = the build's pybindings folder).",
        "from ndkct.statemachine import machine_for",
        f"{name} = machine_for({provider!r}, {name!r}"
        + ("" if focus is None else f", focus={sorted(focus)!r}") + ")",
    ]
    return steps, "\n".join(head + body) + "\n"


class _ShrinkDeadline:
    """Hypothesis (6.x) stops shrinking once ConjectureRunner.finish_shrinking_deadline has
    passed (it sets five minutes from the start of shrinking); installed on the class, this
    descriptor caps that at ``seconds``."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __get__(self, runner, owner=None):
        return self if runner is None else runner.__dict__.get("_ndkct_shrink_deadline")

    def __set__(self, runner, value):
        if value is not None:
            value = min(value, time.perf_counter() + self.seconds)
        runner.__dict__["_ndkct_shrink_deadline"] = value


@contextmanager
def _lambda_sources_cached():
    """Hypothesis notes an event each time a rule draw is retried (a rule disabled for this
    example, or not applicable yet), and spells the rule strategy for it, the source of its
    filter lambda included: found anew each time with inspect and ast (a tenth of a step's
    time). The lambda is always the same code: its source is kept by code object."""
    try:
        from hypothesis.internal import reflection
        extract = reflection.extract_lambda_source
    except (ImportError, AttributeError):  # another Hypothesis
        yield
        return
    sources = {}

    def cached(f):
        code = getattr(f, "__code__", None)
        if code is None:
            return extract(f)
        if code not in sources:
            sources[code] = extract(f)
        return sources[code]

    reflection.extract_lambda_source = cached
    try:
        yield
    finally:
        reflection.extract_lambda_source = extract


@contextmanager
def _shrink_budget(seconds):
    try:
        from hypothesis.internal.conjecture.engine import ConjectureRunner
    except ImportError:  # another Hypothesis: shrinking takes what it takes
        ConjectureRunner = None
    if seconds is None or ConjectureRunner is None or \
            "finish_shrinking_deadline" in vars(ConjectureRunner):
        yield
        return
    ConjectureRunner.finish_shrinking_deadline = _ShrinkDeadline(seconds)
    try:
        yield
    finally:
        del ConjectureRunner.finish_shrinking_deadline


def check_provider(provider, *, max_examples=50, steps=30, derandomize=True, name="NdkCrossCheck",
                   settle_timeout=None, callback_timeout=None, shrink_seconds=None,
                   focus=None, verbosity=Verbosity.normal):
    """Runs the state machine against ``provider``; on failure, the shrunk program.

    Returns an :class:`Outcome`: ``ok``, the number of examples run, the seconds taken, and on
    failure the exception, its rule IDs (for a ViolationError or NdkError), the shrunk steps and
    ``program``, a Python program that replays them. ``shrink_seconds`` bounds the time spent
    shrinking (the program is then the shortest found by then). ``focus``: rule IDs; only a
    violation of one of them fails an example (others are recorded, and the run goes on), so
    the program found and shrunk is one that breaks them.
    """
    extra = {} if settle_timeout is None else {"settle_timeout": settle_timeout}
    if callback_timeout is not None:
        extra["callback_timeout"] = callback_timeout
    if focus is not None:
        extra["focus"] = frozenset(focus)
    machine = machine_for(provider, name, **extra)
    lines = []
    examples = [0]
    found = [0]
    original_init = machine.__init__

    def counting_init(self):
        examples[0] += 1
        original_init(self)

    original_teardown = machine.teardown

    def noting_teardown(self):
        # Runs in Hypothesis' `finally`: an error on its way out is a failing example.
        if not found[0] and _failing(self):
            found[0] = examples[0]
        try:
            original_teardown(self)
        except BaseException:
            if not found[0]:
                found[0] = examples[0]
            raise

    machine.__init__ = counting_init
    machine.teardown = noting_teardown
    config = settings(max_examples=max_examples, stateful_step_count=steps, deadline=None,
                      derandomize=derandomize, database=None, verbosity=verbosity,
                      suppress_health_check=list(HealthCheck), print_blob=False,
                      report_multiple_bugs=False,
                      phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
    start = time.monotonic()
    outcome = Outcome(provider, True)
    try:
        def reporter(text):
            text = str(text)
            if text.startswith("WARNING: Hypothesis has spent more than five minutes"):
                outcome.shrink_stopped = True  # our budget, not five minutes: no warning
            else:
                lines.extend(text.splitlines())

        with with_reporter(reporter), _shrink_budget(shrink_seconds), _lambda_sources_cached():
            run_state_machine_as_test(machine, settings=config)
    except BaseException as error:  # noqa: B902 - any failure of the provider is the result
        if isinstance(error, KeyboardInterrupt):
            raise
        outcome.ok = False
        outcome.error = error
        # Hypothesis raises Flaky when the shrunk example passed on replay (a timing-dependent
        # fault; from the failure), or failed at another step (Inconsistent data generation;
        # while handling the failure): the violation found first is its cause, and the program
        # may not fail again.
        cause = error.__cause__ or error.__context__ if isinstance(error, Flaky) else None
        if cause is not None:
            outcome.flaky = True
            error = cause
        outcome.rules = list(getattr(error, "rules", []))
        lines += [l for note in getattr(error, "__notes__", []) for l in str(note).splitlines()]
        outcome.steps, outcome.program = _program(provider, name, lines, focus)
    outcome.report = lines
    outcome.examples = examples[0]
    outcome.found_after = found[0]
    outcome.seconds = time.monotonic() - start
    return outcome
