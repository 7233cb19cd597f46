"""The state machine's state and the helpers its rules share.

What the machine holds is the consumer's intent (which objects it made, what it registered where,
with which rights), never a verdict: whether a provider's answer is right is the oracle's call,
made inside every NDK call of the adapter (strict: a wrong answer raises ViolationError there).
The machine reads the provider's answers only to know what a consumer would know next (a
registration that succeeded is there to be used), and asks the oracle what it still expects
(completions outstanding, a notification owed).
"""

import os
import sys
import time
from dataclasses import dataclass, field

from hypothesis import reject
from hypothesis.errors import UnsatisfiedAssumption
from hypothesis.stateful import Bundle, RuleBasedStateMachine

from .. import _ndkct
from ..api import Adapter
from ..errors import NdkError

PAGE_SIZE = _ndkct.PAGE_SIZE
#: Fast-registered regions get address labels far from any pointer (FR-ALIGN-01: labels); each
#: registration its own window of 2^28 bytes (a 4096-page registration fits).
FAR_BASE = 0x5A00_0000_0000
LABEL_STRIDE = 1 << 28
LOOPBACK = "127.0.0.1"
#: The most pages a fast registration lists (the LAM's pages repeated): an adapter may accept far
#: larger MRs than a test should map.
MAX_LISTED_PAGES = 1 << 13
#: A token nobody was given (TOK-*): no provider hands out this value in the tests' seeds.
STRAY_TOKEN = 0x5EED_0BAD


@dataclass(eq=False)
class Pair:
    """Two connected QPs with a patterned source, a read sink and a target open to remote reads
    and writes, all registered (4 pages each)."""
    link: object
    source: object
    sink: object
    target: object
    src: object
    snk: object
    tgt: object
    fmrs: list = field(default_factory=list)  # its fast-register MRs (FastMr), in order made
    broken: bool = False  # flushed or in error: reconnected before its next data step

    def fmr(self, which):
        """Its fast-register MR number ``which`` (counting round when there are fewer)."""
        return self.fmrs[which % len(self.fmrs)] if self.fmrs else None

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
    length: int  # 0: not to be used for transfers (a broken chain, a Length not the chain's)
    live: bool = True

    @property
    def address(self):
        return self.buffer.address + self.offset


@dataclass(eq=False)
class FastMr:
    """A fast-register MR of a pair's PD and, once fast-registered, its region."""
    pair: Pair
    mr: object
    pages: int            # the AdapterPageCount its last successful initialization gave
    remote_access: bool
    base: int = 0
    length: int = 0       # 0: nothing registered now
    flags: int = 0
    # The local token read once its initialization succeeded, until its first fast
    # registration is posted (tokens.py, IFR-TOK-01); None otherwise.
    initialized_token: object = None


@dataclass(eq=False)
class Mapping:
    """An NdkBuildLAM result over a buffer range."""
    lam: object
    buffer: object
    offset: int
    length: int

    def __repr__(self):
        return "Mapping()"


@dataclass(eq=False)
class Window:
    """A memory window bound to part of a registered region."""
    pair: Pair
    mw: object
    mr: object  # the MR it is bound to
    base: int
    length: int
    flags: int
    live: bool = True

    def __repr__(self):
        return "Window()"


def split(address, length, token, count):
    """``count`` SGEs covering [address, +length), the last taking the rest (0: none)."""
    if count <= 0:
        return []
    count = min(count, max(length, 1))
    piece = length // count
    sges = [(address + i * piece, piece, token) for i in range(count - 1)]
    sges.append((address + (count - 1) * piece, length - piece * (count - 1), token))
    return sges


class MachineBase(RuleBasedStateMachine):
    """State and helpers; the rules are in the mixins of :class:`ndkct.statemachine.NdkMachine`."""

    #: The provider under test (a subclass or :func:`machine_for` sets it).
    provider = os.environ.get("NDKCT_PROVIDER", "model:seed=1")
    #: Rule IDs to look for (None: every rule): violations of other rules do not fail an
    #: example, so Hypothesis finds and shrinks a program breaking one of these.
    focus = None
    #: Rule IDs of known findings about the provider (waivers): a violation naming only those
    #: does not fail an example.
    waived = frozenset()
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
    #: Seconds to poll closely for a CQ notification the oracle says is owed (then less often,
    #: up to settle_timeout, after which it is missing).
    notification_wait = 0.05

    buffers = Bundle("buffers")
    regions = Bundle("regions")
    mappings = Bundle("mappings")
    windows = Bundle("windows")

    def __init__(self):
        super().__init__()
        # The exception being handled where Hypothesis runs the example, if any: teardown runs
        # in a `finally`, and an error of a step is any other (see failing()).
        self._ambient = sys.exc_info()[1]
        # A known finding met (a waived violation) ends the example as invalid: what the oracle
        # expects after it may no longer be what the provider does (a token the provider did
        # not invalidate...), and what follows would be judged against that.
        self.adapter = Adapter(self.provider, arena_pages=self.arena_pages,
                               strict=self.focus or True, callback_timeout=self.callback_timeout,
                               waived=self.waived, on_waived=lambda _: reject())
        self.info = self.adapter.info  # NDK_ADAPTER_INFO as reported at open (a dict)
        # The connected pair every data step uses (first_pair makes it; one per example, so
        # the rules take none as an argument: a value Hypothesis would draw at every step).
        self.pair = None
        self.counts = {"buffers": 0}
        self.next_base = FAR_BASE
        self.next_qp_context = 0x0C00_0000
        # How completions are read (poll_style): the call (None: by the adapter's version) and
        # how many entries one call may return.
        self.poll_ex = None
        self.poll_batch = 64
        self.lam_cache = {}  # (buffer id, offset) -> the ordinary Mapping of that range

    # ------------------------------------------------------------------ helpers
    def qp_context(self):
        """A QPContext no other QP of this example has (CQ-RES-02, CQP-CTX-01)."""
        self.next_qp_context += 0x10
        return self.next_qp_context

    def label(self):
        """A fresh page-aligned address label for a fast registration or a window."""
        self.next_base += LABEL_STRIDE
        return self.next_base

    def settle(self, pair):
        """Polls the pair's CQ until the oracle expects nothing more of its QPs, then declares
        them drained (a completion still expected is missing: WR-10); returns the results. An
        error entry leaves the pair to be reconnected."""
        got = self.settle_qps(pair.link.cq, pair.link.a, pair.link.b)
        if any(int(r.status) != 0 for r in got):
            pair.broken = True  # an error completion moves a connection to error
        return got

    def settle_qps(self, cq, *qps):
        """settle() for QPs reporting to ``cq``."""
        got = []
        deadline = time.monotonic() + self.settle_timeout
        while True:
            expected = sum(qp.outstanding_completions for qp in qps)
            left = deadline - time.monotonic()
            if not expected or left <= 0:
                break
            got += cq.drain(expected, timeout=left, ex=self.poll_ex, batch=self.poll_batch)
        got += cq.poll(16, ex=self.poll_ex)  # anything extra is judged too
        for qp in qps:
            if qp.outstanding_completions:
                qp.expect_nothing_outstanding()
        return got

    def usable(self, pair):
        """A pair in error (flushed, or after an error completion) gets two new QPs of the same
        PD and CQ, connected, before its next data step: its registrations stay valid, so data
        steps keep going. False when that fails (the step then does nothing)."""
        if not pair.broken:
            return True
        link = pair.link
        for o in (link.active, link.passive, link.listener, link.a, link.b):
            if o is not None:
                o.close()
        try:
            a = link.pd.create_qp(link.cq, context=self.qp_context(), inline_size=self.inline)
            b = link.pd.create_qp(link.cq, context=self.qp_context(), inline_size=self.inline)
            pair.link = self.adapter.connect_pair(link.pd, link.cq, a, b)
        except NdkError:
            return False
        pair.broken = False
        return True

    @property
    def inline(self):
        """The InlineDataSize of the pairs' QPs: inline requests fit (CQP-INL-01)."""
        return min(64, self.info["max_inline_data_size"])

    def marker(self, pair):
        """A 1-byte write of a into the pair's target, which completes after every request a
        posted before it: an entry of an earlier request that must leave none (failed inline,
        WR-05; silent, WR-SILENT-01) is on the CQ by the time the marker's is."""
        pair.link.a.write(pair.src.sge(0, 1), pair.tgt.address, pair.tgt.remote_token)

    def after_request(self, pair, status, flags):
        """After a request that may leave no entry (failed inline, or silent): the marker."""
        if not _ndkct.nt_success(status) or flags & _ndkct.OP_FLAG_SILENT_SUCCESS:
            self.marker(pair)

    @staticmethod
    def learn_tokens(mr):
        """Reads both tokens of a registered MR, as a consumer holding a region has both (the C++
        commands' learn_tokens): the oracle then knows each value, so a remote token that is
        the local one fails the access under RMR-TOK-02 / FR-TOK-01, not a data-path rule."""
        return mr.local_token, mr.remote_token

    def token(self, kind, mr, remote):
        """The token a request names: ``kind`` "remote"/"local" (of ``mr``), "other" (the
        remote token of another region), "stray" (a value nobody was given)."""
        if kind == "stray":
            return STRAY_TOKEN
        if kind == "other":
            return None  # the caller picks the other region's token
        return mr.remote_token if kind == "remote" else mr.local_token

    def chain(self, buffer, offset, length, shape):
        """An MDL chain over [offset, +length) of ``buffer``: whole, split in two, with a hole,
        or with a misaligned joint (the last two are not virtually contiguous)."""
        if shape == "split" and length >= 2:
            return buffer.describe_split(offset, [length // 2, length - length // 2]), True
        if shape == "hole" and length >= 3:
            return buffer.with_hole(offset, 1, 1, length - 2), False
        if shape == "misaligned" and len(buffer) >= 2 * PAGE_SIZE and offset + 1 < PAGE_SIZE:
            return buffer.with_misaligned_joint(offset, 1, PAGE_SIZE // 2), False
        return buffer.describe(offset, length), True

    def await_notification(self, cq):
        """Waits while the oracle says a notification of ``cq`` is owed: closely for
        notification_wait, then up to settle_timeout (as for a completion), after which it is
        missing (CQ-NOT-07; SND-04 and CQ-NOT-10 when a solicited send's receive satisfied the
        arm)."""
        start = time.monotonic()
        brief, deadline = start + self.notification_wait, start + self.settle_timeout
        while True:
            # Hands the notifications that came to the oracle (and raises what it found).
            self.adapter._judged("NdkCqNotificationCallback")
            if not cq.notification_owed:
                return
            now = time.monotonic()
            if now > deadline:
                cq.expect_notification_delivered(now - start)
                return
            time.sleep(0.0002 if now < brief else 0.002)

    # ------------------------------------------------------------------ the oracle
    # No invariant: a violation reported on a provider's thread after a call returned (a stray
    # callback) fails the next call, or teardown. An invariant would see it right after the
    # step or not, by a few microseconds: an example that fails at another step when replayed.

    def teardown(self):
        """Closes every object and the adapter; violations that appear only while closing
        fail the example (those of earlier steps already did). When a step already failed,
        its error is the example's: what closing finds then does not replace it."""
        from ..errors import ViolationError
        failing_now = failing(self)
        adapter = self.adapter
        if adapter.closed:
            return
        seen = adapter._seen
        adapter.session.close_objects()
        adapter.session.close_adapter()
        if self.quiet > 0:
            # After a failure longer: what the provider still delivers for this adapter (a
            # worker it did not stop) must not land in the next example's adapter.
            time.sleep(self.quiet * (5 if failing_now else 1))
        verdict = adapter.verdict()
        adapter.close()
        fresh = verdict.violations[seen:]
        if not failing_now and adapter.failures(fresh):
            raise ViolationError(fresh, "closing")


def failing(machine):
    """True in teardown when a step of the example raised (Hypothesis runs teardown in a
    `finally`: the step's error is the exception being handled there)."""
    error = sys.exc_info()[1]
    # Not Hypothesis' own control flow (StopTest, a BaseException, ends an example early; an
    # example rejected after a waived finding).
    return isinstance(error, Exception) and error is not machine._ambient and \
        not isinstance(error, UnsatisfiedAssumption)
