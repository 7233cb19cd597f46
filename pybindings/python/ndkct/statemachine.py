"""The cross-check as a Hypothesis RuleBasedStateMachine: random NDK call sequences against a
provider, every outcome judged by the oracle.

Every example has one connected QP pair with its fast-register MRs (``state.pair``); bundles
hold buffers, registered regions, logical address mappings and bound windows. The rules (in
:mod:`ndkct.machine`: memory, data, objects, connections) cover what the C++ RapidCheck machine
generates: NdkBuildLam over odd offsets and lengths with every buffer size; NdkRegisterMr with
every right, the read sink, undocumented bits, broken chains and odd Lengths;
NdkInitializeFastRegisterMr of counts up to and past FRMRPageCount; NdkFastRegister at the
boundaries of its page count (the LAM's, exactly what was initialized, one past), FBO, Length
and BaseVirtualAddress, with every flag; writes, reads, sends, receives, binds, invalidations
and send-and-invalidate through right and wrong tokens, with every flag of each call's table
and undocumented ones; chains of DEFER requests ended by an inline refusal; CQ arms and
notifications; completions read with NdkGetCqResults or NdkGetCqResultsEx, one or many at a
time; NdkCreateQp, NdkCreateCq, NdkCreateSrq at and past each advertised maximum, and QPs held
to the depths, SGE counts and inline size they were created with; NdkQueryAdapterInfo;
handshakes with private data and read limits both ways (NdkGetConnectionData, addresses,
rejects, disconnects, a connecting side giving up); closes of objects with open successors;
NDK calls and closes inside a CQ notification callback; the consumer overwriting Dispatch
members. Most calls are valid, with invalid ones mixed in; the adapter is strict: the step
whose outcome breaks a rule raises :class:`ndkct.ViolationError` with the rule IDs, and
Hypothesis shrinks the sequence. The machine's rules take plain values only, so Hypothesis'
printed steps form a Python program; :func:`check_provider` returns that program with the
import that makes it runnable::

    from ndkct.statemachine import check_provider
    outcome = check_provider("lib:/path/libvendor.so", max_examples=100)
    if not outcome.ok:
        print(outcome.program)          # runs as written and fails the same way
"""

import inspect
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.errors import Flaky
from hypothesis.reporting import with_reporter
from hypothesis.stateful import initialize, run_state_machine_as_test

from . import _ndkct
from .errors import NdkError
from .machine.base import PAGE_SIZE, MachineBase, Pair, failing
from .machine.connections import ConnectionRules
from .machine.data import DataRules
from .machine.memory import MemoryRules
from .machine.objects import ObjectRules
# s10mem (issue 13): accesses across a region's end (RMR-ACC-03, FR-LEN-03).
from .machine.bounds import BoundsRules
# s11qp (issue 13): an SRQ closed before the QP made with it (CQP-SRQ-06), a QP's queues on CQs
# of their own (CQP-OBJ-02).
from .machine.create_qp_page import CreateQpPageRules
# s11lam (issue 13): NdkBuildLam over a chain broken past Length (LAM-MDL-04), and from inside
# a CQ notification callback (LAM-IRQL-01).
from .machine.lam import LamRules
# s11mdl (issue 13): NdkRegisterMr of whole pages of a chain broken past them (RMR-MDL-04;
# no rule of its own: lam.py's build_lam_before_a_break calls it).
from .machine.chains import ChainRules
# s12fence (issue 13): a read outstanding when a fenced fast registration is posted
# (FR-FENCE-01; no rule of its own: memory.py's fast_register calls it).
from .machine.fence import FenceRules
# s12lamrel (issue 13): a mapping used after an older one was released (LAM-REL-01).
from .machine.lam_release import LamReleaseRules
# s13tok (issue 13): the local token read after initialization reaches the first fast
# registration's region (IFR-TOK-01; no rule of its own: memory.py calls it).
from .machine.tokens import TokenRules
# s13map (issue 13): fast registrations over pages that are not one run (FR-MAP-01; no rule of
# its own: data.py's peer_access_fast_registered calls it).
from .machine.pages import PageRunRules
# s13silent (issue 13): a silent fast registration read through by the peer at once
# (FR-SILENT-02; no rule of its own: memory.py's fast_register calls it).
from .machine.silent import SilentRules
# s13lam (issue 13): failing mapping requests between builds of one mapping (LAM-ERR-01,
# LAM-ST-03; no rule of its own: lam_release.py's send_after_a_release calls it).
from .machine.lam_failures import LamFailureRules
# s13va (issue 13): NdkRegisterMr over a decoy-VA MDL (RMR-VA-03; no rule of its own:
# memory.py's register calls it).
from .machine.decoy_va import DecoyVaRules
# s13lamva (issue 13): NdkBuildLam over a decoy-VA MDL (LAM-VA-01; no rule of its own: lam.py's
# send_from_mapping calls it).
from .machine.lam_decoy_va import LamDecoyVaRules
# s14apc (issue 13): an access reaching a fast registration's last page preceded by the same at
# its start (FR-APC-01; no rule of its own: data.py's peer and local accesses call it).
from .machine.page_count import PageCountRules


class NdkMachine(MemoryRules, DataRules, ObjectRules, ConnectionRules, BoundsRules,
                 CreateQpPageRules, LamRules, ChainRules, FenceRules, LamReleaseRules,
                 TokenRules, PageRunRules, SilentRules, LamFailureRules, DecoyVaRules,
                 LamDecoyVaRules, PageCountRules, MachineBase):
    """Random NDK sequences against ``provider``, judged by the oracle at every step."""

    buffers = MachineBase.buffers

    @initialize()
    def first_pair(self):
        """Every example starts with a connected pair and a buffer (below), so that data-path
        rules apply from the first steps: a loopback pair (QPs with an InlineDataSize, each its
        own QPContext) with a patterned source, a read sink and a remote target (4 pages each),
        and two fast-register MRs, initialized for 16 pages with remote access and 4 without
        (FR-ACC-*), fast-registered by the first step that uses them."""
        source = self.adapter.buffer(4 * PAGE_SIZE)
        source.fill(7)
        sink = self.adapter.buffer(4 * PAGE_SIZE)
        target = self.adapter.buffer(4 * PAGE_SIZE)
        target.fill(11)
        try:  # a refusal the oracle allows (resources): nothing to test in this example
            link = self.adapter.loopback_pair(inline_size=self.inline)
            src = link.pd.register(source, 0)
            snk = link.pd.register(sink, _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE |
                                   _ndkct.MR_FLAG_RDMA_READ_SINK)
            tgt = link.pd.register(target, _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE |
                                   _ndkct.MR_FLAG_ALLOW_REMOTE_READ |
                                   _ndkct.MR_FLAG_ALLOW_REMOTE_WRITE)
        except NdkError:
            return
        for mr in (src, snk, tgt):
            self.learn_tokens(mr)
        pair = Pair(link, source, sink, target, src, snk, tgt)
        self.new_fast_register_mr(pair, 16, True)
        self.new_fast_register_mr(pair, 4, False)
        self.pair = pair

    @initialize(target=buffers)
    def first_buffer(self):
        """Two scattered pages (the buffer rule makes others; no arguments here, so that a
        shrunk example has nothing to minimize in its first steps)."""
        return self.buffer(2, False)


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

    for _, f in inspect.getmembers(machine):  # the mixins' rules too
        r = getattr(f, "hypothesis_stateful_rule", None)
        if isinstance(r, Rule) and type(r) is Rule:
            r.__class__ = NamedRule


_cheap_rule_reprs(NdkMachine)


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
    first_rules: list = field(default_factory=list)  # the rules of the first failure found
    waived: dict = field(default_factory=dict)  # waived violations met: rules -> how many
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
                   focus=None, waived=(), verbosity=Verbosity.normal):
    """Runs the state machine against ``provider``; on failure, the shrunk program.

    Returns an :class:`Outcome`: ``ok``, the number of examples run, the seconds taken, and on
    failure the exception, its rule IDs (for a ViolationError or NdkError), the shrunk steps and
    ``program``, a Python program that replays them. ``shrink_seconds`` bounds the time spent
    shrinking (the program is then the shortest found by then). ``focus``: rule IDs; only a
    violation of one of them fails an example (others are recorded, and the run goes on), so
    the program found and shrunk is one that breaks them. ``waived``: rule IDs of known
    findings about the provider (its waivers' rules): a violation naming only those fails no
    example; ``Outcome.waived`` counts the ones met.

    Without ``focus``, the program is shrunk keeping the rules of the first failure found
    (``first_rules``): Hypothesis takes any smaller failing example as the same bug, and a
    fault may break another rule further down (a consequence) in a smaller one. When the
    shrunk program shows none of those rules, the search runs once more, focused on them.
    """
    extra = {} if settle_timeout is None else {"settle_timeout": settle_timeout}
    if callback_timeout is not None:
        extra["callback_timeout"] = callback_timeout
    if waived:
        extra["waived"] = frozenset(waived)
    run = dict(max_examples=max_examples, steps=steps, derandomize=derandomize, name=name,
               shrink_seconds=shrink_seconds, verbosity=verbosity, extra=extra)
    start = time.monotonic()
    outcome = _run(provider, focus, **run)
    if focus is None and not outcome.ok and outcome.first_rules and \
            not set(outcome.rules) & set(outcome.first_rules):
        again = _run(provider, outcome.first_rules, **run)
        if not again.ok and set(again.rules) & set(outcome.first_rules):
            again.first_rules, again.found_after = outcome.first_rules, outcome.found_after
            again.examples += outcome.examples
            outcome = again
    outcome.seconds = time.monotonic() - start
    return outcome


def _run(provider, focus, *, max_examples, steps, derandomize, name, shrink_seconds, verbosity,
         extra):
    """One Hypothesis run of the machine (see check_provider)."""
    if focus is not None:
        extra = dict(extra, focus=frozenset(focus))
    machine = machine_for(provider, name, **extra)
    lines = []
    examples = [0]
    found = [0]
    outcome = Outcome(provider, True)
    original_init = machine.__init__

    def counting_init(self):
        examples[0] += 1
        original_init(self)

    original_teardown = machine.teardown

    def note_waived(adapter):
        for v in adapter.waived_violations():
            key = ", ".join(v.rules)
            outcome.waived[key] = outcome.waived.get(key, 0) + 1

    def first_failure(error):
        if not found[0]:
            found[0] = examples[0]
            outcome.first_rules = list(getattr(error, "rules", []))

    def noting_teardown(self):
        # Runs in Hypothesis' `finally`: an error on its way out is a failing example.
        if failing(self):
            first_failure(sys.exc_info()[1])
        if self.waived and not self.adapter.closed:
            note_waived(self.adapter)
        try:
            original_teardown(self)
        except BaseException as error:
            first_failure(error)
            raise

    machine.__init__ = counting_init
    machine.teardown = noting_teardown
    config = settings(max_examples=max_examples, stateful_step_count=steps, deadline=None,
                      derandomize=derandomize, database=None, verbosity=verbosity,
                      suppress_health_check=list(HealthCheck), print_blob=False,
                      report_multiple_bugs=False,
                      phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink])
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
        if outcome.flaky and not outcome.rules:
            # The replay ran out of recorded steps without failing (Hypothesis' StopTest, which
            # it reports as an unreliable assumption): the rules are the failure's, found first.
            outcome.rules = list(outcome.first_rules)
        lines += [l for note in getattr(error, "__notes__", []) for l in str(note).splitlines()]
        outcome.steps, outcome.program = _program(provider, name, lines, focus)
    outcome.report = lines
    outcome.examples = examples[0]
    outcome.found_after = found[0]
    return outcome
