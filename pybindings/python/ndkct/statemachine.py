"""The cross-check as a Hypothesis RuleBasedStateMachine: random NDK call sequences against a
provider, every outcome judged by the oracle.

Bundles hold NDK objects (connected QP pairs, buffers, registered regions, fast-register MRs,
logical address mappings). The adapter is strict: the step whose outcome breaks a rule raises
:class:`ndkct.ViolationError` with the rule IDs, and Hypothesis shrinks the sequence. The
machine's rules take plain values only, so Hypothesis' printed steps form a Python program;
:func:`check_provider` returns that program with the import that makes it runnable::

    from ndkct.statemachine import check_provider
    outcome = check_provider("lib:/path/libvendor.so", max_examples=100)
    if not outcome.ok:
        print(outcome.program)          # runs as written and fails the same way
"""

import os
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.errors import Flaky
from hypothesis import strategies as st
from hypothesis.reporting import with_reporter
from hypothesis.stateful import (Bundle, RuleBasedStateMachine, initialize, invariant,
                                 multiple, precondition, rule, run_state_machine_as_test)

from . import _ndkct
from . import strategies as nst
from .api import Adapter, Sge
from .errors import NdkError, ViolationError

PAGE_SIZE = _ndkct.PAGE_SIZE
#: Fast-registered regions get address labels far from any pointer (FR-ALIGN-01: labels).
FAR_BASE = 0x5A00_0000_0000


@dataclass(eq=False)
class Pair:
    """Two connected QPs with a patterned source and a read sink, both registered."""
    link: object
    source: object
    sink: object
    src: object
    snk: object
    broken: bool = False  # flushed or in error: no more data steps on it

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

    pairs = Bundle("pairs")
    buffers = Bundle("buffers")
    regions = Bundle("regions")
    frmrs = Bundle("frmrs")
    pds = Bundle("pds")

    def __init__(self):
        super().__init__()
        self.adapter = Adapter(self.provider, arena_pages=self.arena_pages, strict=True,
                               callback_timeout=self.callback_timeout)
        self.counts = {"pairs": 0, "buffers": 0, "pds": 0}
        self.next_base = FAR_BASE

    # ------------------------------------------------------------------ helpers
    def _settle(self, pair):
        """Polls the pair's CQ until the oracle expects nothing more, then declares it drained
        (a completion still expected is missing: WR-05); returns the results."""
        link = pair.link
        got = []
        deadline = time.monotonic() + self.settle_timeout
        while (link.a.outstanding_completions or link.b.outstanding_completions) \
                and time.monotonic() < deadline:
            r = link.cq.poll(16)
            got += r
            if not r:
                time.sleep(0.0005)
        got += link.cq.poll(16)  # anything extra is judged too
        for qp in (link.a, link.b):
            if qp.outstanding_completions:
                qp.expect_nothing_outstanding()
        if any(int(r.status) != 0 for r in got):
            pair.broken = True  # an error completion moves a connection to error
        return got

    # ------------------------------------------------------------------ objects
    @initialize(target=pairs)
    def first_pair(self):
        """Every example starts with a connected pair and a buffer (below), so that data-path
        rules apply from the first steps."""
        return self.connect()

    @initialize(target=buffers, pages=nst.buffer_pages, contiguous=st.booleans(),
                seed=st.integers(0, 255))
    def first_buffer(self, pages, contiguous, seed):
        return self.buffer(pages, contiguous, seed)

    @precondition(lambda self: self.counts["pairs"] < 2)
    @rule(target=pairs)
    def connect(self):
        """A loopback pair with a patterned source and a read sink (4 pages each)."""
        try:
            link = self.adapter.loopback_pair()
        except NdkError:
            return multiple()
        self.counts["pairs"] += 1
        source = self.adapter.buffer(4 * PAGE_SIZE)
        source.fill(7)
        sink = self.adapter.buffer(4 * PAGE_SIZE)
        src = link.pd.register(source, 0)
        snk = link.pd.register(sink, _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE |
                               _ndkct.MR_FLAG_RDMA_READ_SINK)
        return Pair(link, source, sink, src, snk)

    @precondition(lambda self: self.counts["buffers"] < 6)
    @rule(target=buffers, pages=nst.buffer_pages, contiguous=st.booleans(),
          seed=st.integers(0, 255))
    def buffer(self, pages, contiguous, seed):
        self.counts["buffers"] += 1
        b = self.adapter.buffer(pages * PAGE_SIZE, contiguous=contiguous)
        b.fill(seed)
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
        return Region(pair, mr, buffer, flags, offset,
                      length if chain in ("whole", "split") else 0)

    @rule(target=frmrs, pair=pairs, pages=nst.frmr_pages, remote_access=st.booleans())
    def fast_register_mr(self, pair, pages, remote_access):
        """NdkCreateMr(fast) + NdkInitializeFastRegisterMr (IFR-*)."""
        try:
            mr = pair.link.pd.create_mr(fast_register=True)
        except NdkError:
            return multiple()
        status = mr.initialize_fast_register(pages, remote_access, check=False)
        if not _ndkct.nt_success(status):
            mr.close()
            return multiple()
        return FastMr(pair, mr, pages, remote_access)

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

    @rule(pair=pairs, receive_depth=nst.queue_depths, initiator_depth=nst.queue_depths)
    def create_and_close_qp(self, pair, receive_depth, initiator_depth):
        """NdkCreateQp with depths up to beyond the adapter's limits (CQP-LIM-*)."""
        try:
            qp = pair.link.pd.create_qp(pair.link.cq, receive_depth=receive_depth,
                                        initiator_depth=initiator_depth)
        except NdkError:
            return
        qp.close()

    @rule(pair=pairs)
    def create_and_close_mw(self, pair):
        try:
            mw = pair.link.pd.create_mw()
        except NdkError:
            return
        mw.close()

    @rule(size=nst.adapter_info_sizes)
    def query_adapter_info(self, size):
        """NdkQueryAdapterInfo with a full, old-layout, small or no buffer (AI-*)."""
        self.adapter.query_adapter_info(size, with_buffer=size > 0)

    # ------------------------------------------------------------------ data path
    @rule(fmr=frmrs, buffer=buffers, offset=nst.page_offsets, pages=st.integers(1, 8),
          congruent=st.booleans(), flags=nst.fast_register_flags)
    def fast_register(self, fmr, buffer, offset, pages, congruent, flags):
        """NdkBuildLAM of a buffer from ``offset``, then NdkFastRegister of its first pages;
        ``congruent=False`` gives a base address whose page offset differs from the FBO
        (FR-ALIGN-01)."""
        pair = fmr.pair
        if pair.broken:
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
        if not _ndkct.nt_success(status):
            return
        results = self._settle(pair)
        mine = [r for r in results if r.request_context == ctx]
        if (mine and int(mine[0].status) == 0) or \
                (not mine and flags & _ndkct.OP_FLAG_SILENT_SUCCESS):
            fmr.base, fmr.length, fmr.flags = base, length, flags

    @rule(fmr=frmrs, write=st.booleans(), offset=st.integers(0, 3 * PAGE_SIZE),
          length=nst.lengths)
    def peer_access_fast_registered(self, fmr, write, offset, length):
        """The peer reads or writes a fast-registered region through its remote token (FR-ACC-*,
        FR-MAP-*): bytes and statuses are judged by the oracle."""
        pair = fmr.pair
        if pair.broken or fmr.length == 0:
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
        if pair.broken or not region.live or region.length == 0:
            return
        offset = min(offset, region.length - 1)
        length = min(length, region.length - offset, 4 * PAGE_SIZE)
        token = region.mr.remote_token
        address = region.address + offset
        b = pair.link.b
        if write:
            b.write(pair.src.sge(0, length), address, token, flags=flags)
        else:
            b.read(pair.snk.sge(0, length), address, token, flags=flags)
        self._settle(pair)

    @rule(pair=pairs, length=nst.lengths)
    def send_receive(self, pair, length):
        """b posts a receive into its sink, a sends from its source (CQ-RES-01: bytes)."""
        if pair.broken:
            return
        length = min(length, 4 * PAGE_SIZE)
        pair.link.b.receive(pair.snk.sge(0, 4 * PAGE_SIZE))
        pair.link.a.send(pair.src.sge(0, length))
        self._settle(pair)

    @rule(fmr=frmrs)
    def invalidate(self, fmr):
        """NdkInvalidate of a fast-register MR on its QP."""
        pair = fmr.pair
        if pair.broken:
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
        if pair.broken:
            return
        for _ in range(receives):
            pair.link.b.receive(pair.snk.sge(0, PAGE_SIZE))
        pair.link.b.flush()
        self._settle(pair)
        pair.broken = True

    # ------------------------------------------------------------------ the oracle
    @invariant()
    def oracle_agrees(self):
        """Nothing the provider did so far broke a rule (events included)."""
        if not self.adapter.closed:
            self.adapter.check()

    def teardown(self):
        """Closes every object and the adapter; violations that appear only while closing
        fail the example (those of earlier steps already did)."""
        adapter = self.adapter
        if adapter.closed:
            return
        seen = adapter._seen
        adapter.session.close_objects()
        adapter.session.close_adapter()
        if self.quiet > 0:
            time.sleep(self.quiet)
        verdict = adapter.verdict()
        adapter.close()
        fresh = verdict.violations[seen:]
        if any(not v.warning for v in fresh):
            raise ViolationError(fresh, "closing")


def machine_for(provider, name="NdkCrossCheck", **attributes):
    """A subclass of :class:`NdkMachine` testing ``provider``, named ``name`` (the name the
    printed program uses)."""
    return type(name, (NdkMachine,), {"provider": provider, **attributes})


@dataclass
class Outcome:
    """What :func:`check_provider` found."""
    provider: str
    ok: bool
    examples: int = 0
    seconds: float = 0.0
    error: BaseException = None
    rules: list = field(default_factory=list)
    steps: list = field(default_factory=list)  # the shrunk program's steps
    program: str = ""                           # a runnable Python program
    flaky: bool = False  # the failure did not happen again when its example was replayed
    report: list = field(default_factory=list)  # everything Hypothesis reported

    @property
    def length(self):
        """Steps in the shrunk failing program (NDK-level rules called)."""
        return len(self.steps)


def _program(provider, name, lines):
    steps = [l for l in lines if "state." in l and not l.startswith("state = ")
             and "state.oracle_agrees()" not in l and "state.teardown()" not in l]
    body = [l for l in lines if l.startswith("state = ") or "state." in l]
    head = [
        f"# ndkct: a shrunk failing example against {provider} ({len(steps)} steps).",
        "# Run it with /usr/bin/python3 (PYTHONPATH = the build's pybindings folder).",
        "from ndkct.statemachine import machine_for",
        f"{name} = machine_for({provider!r}, {name!r})",
    ]
    return steps, "\n".join(head + body) + "\n"


def check_provider(provider, *, max_examples=50, steps=30, derandomize=True, name="NdkCrossCheck",
                   settle_timeout=None, callback_timeout=None, verbosity=Verbosity.normal):
    """Runs the state machine against ``provider``; on failure, the shrunk program.

    Returns an :class:`Outcome`: ``ok``, the number of examples run, the seconds taken, and on
    failure the exception, its rule IDs (for a ViolationError or NdkError), the shrunk steps and
    ``program``, a Python program that replays them.
    """
    extra = {} if settle_timeout is None else {"settle_timeout": settle_timeout}
    if callback_timeout is not None:
        extra["callback_timeout"] = callback_timeout
    machine = machine_for(provider, name, **extra)
    lines = []
    examples = [0]
    original_init = machine.__init__

    def counting_init(self):
        examples[0] += 1
        original_init(self)

    machine.__init__ = counting_init
    config = settings(max_examples=max_examples, stateful_step_count=steps, deadline=None,
                      derandomize=derandomize, database=None, verbosity=verbosity,
                      suppress_health_check=list(HealthCheck), print_blob=False,
                      report_multiple_bugs=False,
                      phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
    start = time.monotonic()
    outcome = Outcome(provider, True)
    try:
        with with_reporter(lambda text: lines.extend(str(text).splitlines())):
            run_state_machine_as_test(machine, settings=config)
    except BaseException as error:  # noqa: B902 - any failure of the provider is the result
        if isinstance(error, KeyboardInterrupt):
            raise
        outcome.ok = False
        outcome.error = error
        # Hypothesis raises Flaky when the shrunk example passed on replay (a timing-dependent
        # fault): the violation found first is its cause, and the program may not fail again.
        if isinstance(error, Flaky) and error.__cause__ is not None:
            outcome.flaky = True
            error = error.__cause__
        outcome.rules = list(getattr(error, "rules", []))
        lines += [l for note in getattr(error, "__notes__", []) for l in str(note).splitlines()]
        outcome.steps, outcome.program = _program(provider, name, lines)
    outcome.report = lines
    outcome.examples = examples[0]
    outcome.seconds = time.monotonic() - start
    return outcome
