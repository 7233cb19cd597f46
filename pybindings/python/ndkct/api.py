"""The Pythonic face of the harness: adapters and NDK objects with context managers.

Every method is one NDK call through the provider's dispatch table, awaited when it pends and
judged by the oracle (the reference model in check mode). Calls that hand out an object raise
:class:`NdkError` when they fail; calls that only change state take ``check=True`` (raise on
failure) or ``check=False`` (return the final :class:`Status`); work requests return the status
NdkSend/NdkWrite/... returned and complete on a CQ. With ``strict=True`` an adapter raises
:class:`ViolationError` right after any call the oracle judged wrong (with ``strict`` a set of
rule IDs: wrong by one of those rules).
"""

import itertools
import os
import random
import time
from typing import NamedTuple

from . import _ndkct
from .errors import NdkError, ViolationError

Status = _ndkct.Status
_PORTS = 49152 - 20000  # next_port(): 20000..49151, below the ephemeral range


class Sge(NamedTuple):
    """One scatter/gather entry (NDK_SGE): an address, a length and a memory region token.

    The address is a consumer virtual address for regions registered with NdkRegisterMr, and
    the region's own address label (BaseVirtualAddress + offset) for fast-registered regions.
    """
    address: int
    length: int
    token: int


def _sgl(sgl):
    if isinstance(sgl, Sge) or (isinstance(sgl, tuple) and len(sgl) == 3
                                and isinstance(sgl[0], int)):
        sgl = [sgl]
    try:
        entries = [tuple(int(x) for x in s) for s in sgl]
    except (TypeError, ValueError):
        entries = None
    if entries is None or any(len(e) != 3 for e in entries):
        raise TypeError(f"an SGL is an Sge (MemoryRegion.sge(offset, length)), an (address, "
                        f"length, token) tuple, or a list of them; got {sgl!r:.80}")
    return entries


class Adapter:
    """One adapter of a provider, over a fresh arena (host memory), with the oracle.

    ``provider``: ``"model[:seed=N][:profile=NAME]"`` (the reference provider),
    ``"lib:/path/libvendor.so"`` (any provider library), or ``"verbs[:device=NAME]"`` (the
    provider on rdma-core; needs an RDMA device). Use it as a context manager; closing closes
    every object still open, then the adapter. ``strict``: raise :class:`ViolationError` after
    a call the oracle judged wrong (``True``), or wrong by one of these rule IDs (a collection).
    ``waived``: rule IDs of known findings about this provider (a waiver's rules,
    conformance/waivers): a violation naming only those is not a failure (it stays in the
    verdict; :meth:`waived_violations` lists them); ``on_waived(violations)`` is called after a
    call that met one (and no failure): what the oracle expects after a finding may no longer
    be what the provider does. ``capture``: a folder to record the adapter's every NDK call and
    callback into, as a trace (spec/TRACE.md) named after ``label`` (default: the running
    pytest test); ``capture_bytes`` adds the bytes requests move (replayable);
    ``capture_digest_limit`` (bytes) leaves longer data blocks unread, so that large transfers
    cost the capture no digests (where they land then goes unjudged, and the verdict says so).
    :attr:`trace` reads it back once the adapter is closed.
    """

    def __init__(self, provider="model", *, arena_pages=4096, strict=False,
                 callback_timeout=10.0, profile="", waived=(), on_waived=None, capture=None,
                 capture_bytes=False, capture_digest_limit=None, label=None):
        self.provider = provider
        if label is None:  # the running pytest test, else "python"
            label = os.environ.get("PYTEST_CURRENT_TEST", "python").split(" ")[0]
        if capture_digest_limit is not None and (
                not isinstance(capture_digest_limit, int) or isinstance(capture_digest_limit, bool)
                or not 0 < capture_digest_limit < 2**32):
            raise ValueError(f"capture_digest_limit={capture_digest_limit!r}: a number of bytes, "
                             "1 .. 4294967295")
        if capture_digest_limit is not None and not capture:
            raise ValueError("capture_digest_limit: only with capture=DIR")
        self._s = _ndkct.Session(provider, arena_pages, int(callback_timeout * 1000), profile,
                                 os.fspath(capture) if capture else "", bool(capture_bytes),
                                 label, int(capture_digest_limit or 0))
        self.strict = bool(strict)
        self._focus = None if isinstance(strict, bool) else frozenset(strict)
        self._waived = frozenset(waived)
        self._on_waived = on_waived
        self._seen = 0            # violations already handed out
        self._last = []           # the violations of the last call
        self._contexts = itertools.count(0x1000)
        self._port = random.Random(os.getpid() ^ id(self)).randrange(_PORTS)

    # ---- lifetime ----
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Closes every open object (successors first), then the adapter. Idempotent."""
        if not self._s.closed:
            self._s.close()

    @property
    def closed(self):
        return self._s.closed

    def __repr__(self):
        if not hasattr(self, "_s"):  # the provider never opened (__init__ raised)
            return f"<Adapter {getattr(self, 'provider', '?')} (not opened)>"
        state = "closed" if self.closed else self._s.identity["name"]
        return f"<Adapter {self.provider} ({state})>"

    # ---- what the adapter is ----
    @property
    def identity(self):
        """The provider's identity: name, version, description, ndk_version."""
        return self._s.identity

    @property
    def info(self):
        """NDK_ADAPTER_INFO (as a dict with snake_case keys) reported at open."""
        return self._s.info

    def has_flag(self, flag):
        """True when NDK_ADAPTER_INFO.AdapterFlags has ``flag`` (an ADAPTER_FLAG_* value)."""
        return bool(self._s.info["adapter_flags"] & flag)

    @property
    def session(self):
        """The low layer (ndkct._ndkct.Session): handles and tuples, for what this one lacks."""
        return self._s

    @property
    def trace(self):
        """The :class:`~ndkct.trace.Trace` this adapter recorded (``capture=DIR``, or
        NDKCT_CAPTURE_DIR), read once the adapter is closed; None when it records none."""
        if not self._s.trace_path:
            return None
        if not self.closed:
            raise RuntimeError("the trace is whole once the adapter is closed (close() it, or "
                               "leave its with block, first)")
        from .trace import Trace
        return Trace(self._s.trace_path)

    # ---- the oracle ----
    def verdict(self):
        """Everything the oracle found so far (:class:`Verdict`; truthy when no failure)."""
        return self._s.verdict()

    def check(self):
        """Raises :class:`ViolationError` when the oracle found any failure so far (of the rules
        ``strict`` names, when it names some)."""
        failures = self.failures(self._s.verdict().violations)
        if failures:
            raise ViolationError(failures)

    def failures(self, violations):
        """The failures among ``violations`` (not warnings), of the rules ``strict`` names when
        it names some, and not waived (every rule a violation names among ``waived``)."""
        return [v for v in violations if not v.warning and
                (self._focus is None or self._focus.intersection(v.rules)) and
                not (self._waived and self._waived.issuperset(v.rules))]

    def waived_violations(self):
        """The violations so far that ``waived`` covers (known findings: failures, not
        counted as such)."""
        return [v for v in self._s.verdict().violations if not v.warning and self._waived
                and self._waived.issuperset(v.rules)]

    def last_violations(self):
        """The violations (and warnings) the oracle reported during the last call."""
        return list(self._last)

    def _judged(self, call, status=None):
        """After each call: collects its new violations; in strict mode raises on failures."""
        n = self._s.violation_count()
        if n > self._seen:
            self._last = self._s.verdict().violations[self._seen:n]
            self._seen = n
            if self.strict and self.failures(self._last):
                raise ViolationError(self._last, call, status)
            if self._on_waived and self._waived and any(
                    not v.warning and self._waived.issuperset(v.rules) for v in self._last):
                self._on_waived(self._last)
        else:
            self._last = []

    def _made(self, call, result, cls, *args):
        status, final, handle = result
        self._judged(call, final)
        if handle is None:
            raise NdkError(call, final, self._last)
        return cls(self, handle, *args)

    def _done(self, call, result, check):
        status, final = result
        self._judged(call, final)
        if check and not (_ndkct.nt_success(final) and final != Status.STATUS_PENDING):
            raise NdkError(call, final, self._last)
        return final

    def _posted(self, call, status):
        self._judged(call, status)
        return status

    def next_context(self):
        """A fresh RequestContext value (an int that comes back in the completion)."""
        return next(self._contexts)

    def next_port(self):
        """A port number for listen/connect, different on every call: below 49152, where
        providers pick the ports of endpoints bound to port 0 (CONN-25)."""
        self._port = (self._port + 1) % _PORTS
        return 20000 + self._port

    # ---- host memory ----
    def buffer(self, size, *, contiguous=False):
        """A zeroed locked buffer of ``size`` bytes (whole pages) from this adapter's arena."""
        return self._s.buffer(size, contiguous)

    def build_lam(self, memory, offset=0, length=None, *, buffer_size=None, with_buffer=True,
                  with_completion=True):
        """NdkBuildLAM over a buffer range (or an MdlChain, with Length ``length`` when given,
        else the bytes the chain describes): a LogicalAddressMapping.

        ``buffer_size`` defaults to what the pages need (``lam_size(pages)``); pass a smaller
        one to see STATUS_BUFFER_TOO_SMALL. The result's ``status``/``final_status`` say how it
        went; ``pages`` and ``fbo`` are what FastRegister takes.
        """
        if isinstance(memory, _ndkct.MdlChain):  # Length: the chain's bytes, or `length`
            chain = memory
        else:
            chain, length = memory.describe(offset, length), None
        lam = self._s.build_lam(chain, buffer_size, with_buffer, with_completion, length)
        self._judged("NdkBuildLAM", lam.final_status)
        return lam

    def release_lam(self, lam):
        """NdkReleaseLAM (after every fast registration using it is gone, LAM-REL-03)."""
        self._s.release_lam(lam)
        self._judged("NdkReleaseLAM")

    # ---- the consumer's Dispatch (GEN-CREATE-05) ----
    def overwrite_dispatch(self):
        """Points the Dispatch member of the adapter, of every open object and of every object
        handed out from now on at the harness's trap tables, as a consumer may (GEN-CREATE-05).
        Calls keep working through them; a provider reading Dispatch after handout is a
        violation. One adapter per process at a time."""
        self._s.overwrite_dispatch()
        self._judged("overwrite_dispatch")

    # ---- consumer code inside the provider's event callbacks ----
    def hook_events(self, obj, *, calls=(), hold=5.0):
        """Runs consumer code inside ``obj``'s next event callback (a CQ notification, a
        connect event...), on the provider's thread: the callback is held until
        :meth:`release_hook` (at most ``hold`` seconds), then makes the NDK ``calls``, each a
        tuple ``("register_mr", mr, chain, flags)``, ``("initialize_fast_register_mr", mr,
        pages, remote_access)``, ``("create_qp", pd, cq)``, ``("create_mr", pd,
        fast_register)``, ``("build_lam", chain)`` (the chain's bytes, into a mapping buffer
        of the size they need) or ``("fast_register", qp, context, mr, pages, fbo, length,
        base_virtual_address, flags)``. See :meth:`wait_hook`, :meth:`unhook_events`."""
        lowered = [tuple(getattr(x, "handle", x) for x in call) for call in calls]
        self._s.hook_events(obj.handle, lowered, int(hold * 1000))

    def release_hook(self, obj):
        """Lets the held callback go on: to its calls, then back to the provider."""
        self._s.release_hook(obj.handle)

    def wait_hook(self, obj, until="done", timeout=5.0):
        """Waits until the hook on ``obj`` entered its callback (``until="entered"``) or
        finished; False after ``timeout`` seconds."""
        return self._s.wait_hook(obj.handle, until, int(timeout * 1000))

    def unhook_events(self, obj):
        """Removes the hook; returns ``(NDK call, status, ms, object made or None)`` for each
        call it made (a call that blocked inside the callback is a violation, GEN-IRQL-01)."""
        made = [(call, status, ms, self._object(call, handle))
                for call, status, ms, handle in self._s.unhook_events(obj.handle)]
        self._judged("calls inside a callback")
        return made

    def finish_deferred(self):
        """Awaits the calls made inside callbacks that pended: ``(NDK call, final status,
        object made or None)`` each."""
        done = [(call, status, self._object(call, handle))
                for call, status, handle in self._s.finish_deferred()]
        self._judged("calls inside a callback, finished")
        return done

    def _object(self, call, handle):
        if handle is None:
            return None
        return (QueuePair if call == "NdkCreateQp" else MemoryRegion)(self, handle)

    # ---- adapter calls ----
    def query_adapter_info(self, size=_ndkct.ADAPTER_INFO_SIZE, *, with_buffer=True):
        """NdkQueryAdapterInfo with a ``size``-byte buffer: (status, size written, info)."""
        status, size_out, info = self._s.query_adapter_info(size, with_buffer)
        self._judged("NdkQueryAdapterInfo", status)
        return status, size_out, info

    def create_pd(self):
        """NdkCreatePd: a :class:`ProtectionDomain`."""
        return self._made("NdkCreatePd", self._s.create_pd(), ProtectionDomain)

    def create_cq(self, depth=64, *, notifications=True):
        """NdkCreateCq: a :class:`CompletionQueue` of ``depth`` entries."""
        return self._made("NdkCreateCq", self._s.create_cq(depth, notifications),
                          CompletionQueue)

    def create_connector(self):
        """NdkCreateConnector: a :class:`Connector`."""
        return self._made("NdkCreateConnector", self._s.create_connector(), Connector)

    def create_listener(self):
        """NdkCreateListener: a :class:`Listener` (connect events are queued for it)."""
        return self._made("NdkCreateListener", self._s.create_listener(), Listener)

    def loopback_pair(self, *, receive_depth=64, initiator_depth=64, receive_sge=4,
                      initiator_sge=4, inline_size=0, cq_depth=256):
        """A PD, one CQ and two QPs ``a`` and ``b`` connected to each other on this adapter.

        Raises :class:`NdkError` naming the step that failed.
        """
        d = self._s.loopback_pair(receive_depth, initiator_depth, receive_sge, initiator_sge,
                                  inline_size, cq_depth)
        self._judged("loopback_pair")
        if not d["connected"]:
            raise NdkError("loopback_pair: " + d["problem"], Status.STATUS_CONNECTION_INVALID,
                           self._last)
        return LoopbackPair(
            pd=ProtectionDomain(self, d["pd"]), cq=CompletionQueue(self, d["cq"]),
            a=QueuePair(self, d["a"]), b=QueuePair(self, d["b"]),
            active=Connector(self, d["active"]), passive=Connector(self, d["passive"]),
            listener=Listener(self, d["listener"]))


    def connect_pair(self, pd, cq, a, b, *, host="127.0.0.1", port=0):
        """Connects the QPs ``a`` (active) and ``b`` (passive), both on ``pd`` and ``cq``,
        through a new listener and connectors: a :class:`LoopbackPair`. Raises
        :class:`NdkError` naming the step that failed."""
        d = self._s.connect_pair(pd.handle, cq.handle, a.handle, b.handle, host, port)
        self._judged("connect_pair")
        pair = LoopbackPair(
            pd=pd, cq=cq, a=a, b=b,
            active=None if d["active"] is None else Connector(self, d["active"]),
            passive=None if d["passive"] is None else Connector(self, d["passive"]),
            listener=None if d["listener"] is None else Listener(self, d["listener"]))
        if not d["connected"]:
            for o in (pair.passive, pair.active, pair.listener):
                if o is not None:
                    o.close()
            raise NdkError("connect_pair: " + d["problem"], Status.STATUS_CONNECTION_INVALID,
                           self._last)
        return pair


class LoopbackPair(NamedTuple):
    """Two connected QPs on one PD and one CQ (see :meth:`Adapter.loopback_pair`)."""
    pd: "ProtectionDomain"
    cq: "CompletionQueue"
    a: "QueuePair"
    b: "QueuePair"
    active: "Connector"
    passive: "Connector"
    listener: "Listener"


class NdkObject:
    """An NDK object of an adapter. ``with obj:`` closes it at the end of the block."""

    ndk_type = "object"

    def __init__(self, adapter, handle):
        self.adapter = adapter
        self.handle = handle

    @property
    def _s(self):
        return self.adapter._s

    @property
    def is_open(self):
        """True until closed (by :meth:`close` or by closing the adapter)."""
        return self._s.is_open(self.handle)

    def close(self):
        """NdkCloseObject, awaiting its completion. Nothing to do when already closed."""
        if not self.is_open:
            return Status.STATUS_SUCCESS
        status, final = self._s.close_object(self.handle)
        self.adapter._judged("NdkCloseObject", final)
        return final

    def close_async(self):
        """NdkCloseObject without waiting: the status it returned. When it pended (the object
        has open successors, CLOSE-02), close those, then :meth:`wait_close`."""
        status = self._s.close_async(self.handle)
        self.adapter._judged("NdkCloseObject", status)
        return status

    def wait_close(self):
        """Awaits the completion of a close :meth:`close_async` saw pend: its final status."""
        status, final = self._s.wait_close(self.handle)
        self.adapter._judged("NdkCloseObject", final)
        return final

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.adapter.closed:
            self.close()
        return False

    def __repr__(self):
        state = "open" if not self.adapter.closed and self.is_open else "closed"
        return f"<{type(self).__name__} {self.handle:#x} {state}>"


class ProtectionDomain(NdkObject):
    """NDK_PD: makes MRs, MWs, SRQs and QPs."""

    ndk_type = "PD"

    def create_mr(self, *, fast_register=False):
        """NdkCreateMr: a :class:`MemoryRegion` (for NdkRegisterMr, or fast registration)."""
        return self.adapter._made("NdkCreateMr", self._s.create_mr(self.handle, fast_register),
                                  MemoryRegion)

    def create_mw(self):
        """NdkCreateMw: a :class:`MemoryWindow`."""
        return self.adapter._made("NdkCreateMw", self._s.create_mw(self.handle), MemoryWindow)

    def create_srq(self, depth=64, max_sge=4, threshold=0, *, notifications=True):
        """NdkCreateSrq: a :class:`SharedReceiveQueue`."""
        return self.adapter._made(
            "NdkCreateSrq",
            self._s.create_srq(self.handle, depth, max_sge, threshold, notifications),
            SharedReceiveQueue)

    def create_qp(self, cq, initiator_cq=None, *, context=1, receive_depth=64,
                  initiator_depth=64, receive_sge=4, initiator_sge=4, inline_size=0):
        """NdkCreateQp: a :class:`QueuePair` reporting to ``cq`` (and ``initiator_cq``)."""
        icq = initiator_cq or cq
        return self.adapter._made(
            "NdkCreateQp",
            self._s.create_qp(self.handle, cq.handle, icq.handle, context, receive_depth,
                              initiator_depth, receive_sge, initiator_sge, inline_size),
            QueuePair)

    def create_qp_with_srq(self, srq, cq, initiator_cq=None, *, context=1, initiator_depth=64,
                           initiator_sge=4, inline_size=0):
        """NdkCreateQpWithSrq: a :class:`QueuePair` receiving through ``srq``."""
        icq = initiator_cq or cq
        return self.adapter._made(
            "NdkCreateQpWithSrq",
            self._s.create_qp_with_srq(self.handle, cq.handle, icq.handle, srq.handle, context,
                                       initiator_depth, initiator_sge, inline_size),
            QueuePair)

    def privileged_token(self):
        """NdkGetPrivilegedMemoryRegionToken."""
        token = self._s.privileged_token(self.handle)
        self.adapter._judged("NdkGetPrivilegedMemoryRegionToken")
        return token

    def register(self, buffer, flags=0, offset=0, length=None):
        """NdkCreateMr + NdkRegisterMr over ``buffer[offset:offset+length]``: a registered
        :class:`MemoryRegion` (raises :class:`NdkError` when either fails)."""
        mr = self.create_mr()
        try:
            mr.register(buffer, flags, offset, length)
        except NdkError:
            mr.close()
            raise
        return mr

    def fast_register_mr(self, pages, *, remote_access=True):
        """NdkCreateMr(fast) + NdkInitializeFastRegisterMr for ``pages`` pages."""
        mr = self.create_mr(fast_register=True)
        try:
            mr.initialize_fast_register(pages, remote_access)
        except NdkError:
            mr.close()
            raise
        return mr


class MemoryRegion(NdkObject):
    """NDK_MR: registered with NdkRegisterMr, or initialized and fast-registered on a QP."""

    ndk_type = "MR"

    def __init__(self, adapter, handle):
        super().__init__(adapter, handle)
        self.buffer = None  # what NdkRegisterMr registered, for sge()
        self.offset = 0
        self.length = 0

    def register(self, memory, flags=0, offset=0, length=None, *, check=True):
        """NdkRegisterMr over a buffer range, or over an MdlChain (with Length ``length`` when
        given, else the bytes the chain describes), with MR_FLAG_* ``flags``."""
        if isinstance(memory, _ndkct.MdlChain):
            chain = memory
        else:
            chain, length = memory.describe(offset, length), None
        final = self.adapter._done("NdkRegisterMr",
                                   self._s.register_mr(self.handle, chain, length, flags), check)
        if _ndkct.nt_success(final) and not isinstance(memory, _ndkct.MdlChain):
            self.buffer, self.offset, self.length = memory, offset, len(chain)
        return final

    def deregister(self, *, check=True):
        """NdkDeregisterMr."""
        self.buffer = None
        return self.adapter._done("NdkDeregisterMr", self._s.deregister_mr(self.handle), check)

    def initialize_fast_register(self, pages, remote_access=True, *, check=True):
        """NdkInitializeFastRegisterMr for up to ``pages`` pages."""
        return self.adapter._done(
            "NdkInitializeFastRegisterMr",
            self._s.initialize_fast_register_mr(self.handle, pages, remote_access), check)

    @property
    def local_token(self):
        """NdkGetLocalTokenFromMr."""
        t = self._s.local_token(self.handle)
        self.adapter._judged("NdkGetLocalTokenFromMr")
        return t

    @property
    def remote_token(self):
        """NdkGetRemoteTokenFromMr."""
        t = self._s.remote_token(self.handle)
        self.adapter._judged("NdkGetRemoteTokenFromMr")
        return t

    @property
    def address(self):
        """The consumer virtual address of the registered range (NdkRegisterMr only)."""
        if self.buffer is None:
            raise ValueError("the MR has no NdkRegisterMr registration")
        return self.buffer.address + self.offset

    def sge(self, offset=0, length=None):
        """An :class:`Sge` over ``[offset, offset+length)`` of the registered range."""
        if length is None:
            length = self.length - offset
        return Sge(self.address + offset, length, self.local_token)


class MemoryWindow(NdkObject):
    """NDK_MW: bound to a region of an MR with :meth:`QueuePair.bind`."""

    ndk_type = "MW"

    @property
    def remote_token(self):
        """NdkGetRemoteTokenFromMw."""
        t = self._s.remote_token(self.handle)
        self.adapter._judged("NdkGetRemoteTokenFromMw")
        return t


class CompletionQueue(NdkObject):
    """NDK_CQ: where work requests complete."""

    ndk_type = "CQ"

    def poll(self, max=16, *, ex=None):
        """NdkGetCqResultsEx (``ex=True``), NdkGetCqResults (``ex=False``) or the one the
        adapter's version names (``None``): the :class:`Result` entries available now (at most
        ``max``)."""
        r = self._s.poll(self.handle, max, ex)
        self.adapter._judged("NdkGetCqResultsEx" if ex else "NdkGetCqResults")
        return r

    def drain(self, count=1, timeout=5.0, *, ex=None, batch=64):
        """Polls (at most ``batch`` entries per call, with the call ``ex`` names, as in
        :meth:`poll`) until ``count`` results came or ``timeout`` seconds passed; returns
        them."""
        r = self._s.drain(self.handle, count, int(timeout * 1000), ex, batch)
        self.adapter._judged("NdkGetCqResultsEx" if ex else "NdkGetCqResults")
        return r

    def arm(self, type=_ndkct.CQ_NOTIFY_ANY):
        """NdkArmCq with CQ_NOTIFY_ANY, CQ_NOTIFY_ERRORS or CQ_NOTIFY_SOLICITED."""
        self._s.arm_cq(self.handle, type)
        self.adapter._judged("NdkArmCq")

    @property
    def notifications(self):
        """How many notification callbacks this CQ received."""
        return self._s.notifications(self.handle)

    @property
    def notification_owed(self):
        """The oracle says a notification of this CQ is owed: an arm is outstanding and an
        event that satisfies it happened (CQ-NOT-07)."""
        return self._s.notification_owed(self.handle)

    def expect_notification_delivered(self, waited):
        """Declares the wait (``waited`` seconds) for an owed notification over: one the oracle
        still says is owed is missing (CQ-NOT-07, with the rule of what satisfied the arm)."""
        v = self._s.expect_notification_delivered(self.handle, waited)
        self.adapter._judged("awaited notification")
        return v

    def resize(self, depth, *, check=True):
        """NdkResizeCq."""
        return self.adapter._done("NdkResizeCq", self._s.resize_cq(self.handle, depth), check)

    def control_interrupt_moderation(self, interval, count):
        """NdkControlCqInterruptModeration: the status it returned."""
        return self.adapter._posted(
            "NdkControlCqInterruptModeration",
            self._s.control_cq_interrupt_moderation(self.handle, interval, count))


class SharedReceiveQueue(NdkObject):
    """NDK_SRQ: receives shared by the QPs made with it."""

    ndk_type = "SRQ"

    def receive(self, sgl, *, context=None):
        """NdkSrqReceive: the status it returned."""
        ctx = self.adapter.next_context() if context is None else context
        return self.adapter._posted("NdkSrqReceive",
                                    self._s.srq_receive(self.handle, ctx, _sgl(sgl)))

    def modify(self, depth, threshold=0, *, check=True):
        """NdkModifySrq."""
        return self.adapter._done("NdkModifySrq",
                                  self._s.modify_srq(self.handle, depth, threshold), check)


class QueuePair(NdkObject):
    """NDK_QP: work requests. Each returns the status the NDK call returned; the outcome comes
    as a :class:`Result` on the QP's CQ with the request's ``context``."""

    ndk_type = "QP"

    def _ctx(self, context):
        return self.adapter.next_context() if context is None else context

    def send(self, sgl, *, context=None, flags=0):
        """NdkSend."""
        return self.adapter._posted(
            "NdkSend", self._s.send(self.handle, self._ctx(context), _sgl(sgl), flags))

    def send_and_invalidate(self, sgl, remote_token, *, context=None, flags=0):
        """NdkSendAndInvalidate."""
        return self.adapter._posted(
            "NdkSendAndInvalidate",
            self._s.send_and_invalidate(self.handle, self._ctx(context), _sgl(sgl), flags,
                                        remote_token))

    def receive(self, sgl, *, context=None):
        """NdkReceive."""
        return self.adapter._posted(
            "NdkReceive", self._s.receive(self.handle, self._ctx(context), _sgl(sgl)))

    def read(self, sgl, remote_address, remote_token, *, context=None, flags=0):
        """NdkRead: the peer's [remote_address, +length) into the local ``sgl``."""
        return self.adapter._posted(
            "NdkRead", self._s.read(self.handle, self._ctx(context), _sgl(sgl), remote_address,
                                    remote_token, flags))

    def write(self, sgl, remote_address, remote_token, *, context=None, flags=0):
        """NdkWrite: the local ``sgl`` to the peer's [remote_address, +length)."""
        return self.adapter._posted(
            "NdkWrite", self._s.write(self.handle, self._ctx(context), _sgl(sgl),
                                      remote_address, remote_token, flags))

    def fast_register(self, mr, pages, *, fbo=0, length, base_virtual_address, flags=0,
                      context=None):
        """NdkFastRegister: maps ``pages`` (adapter logical addresses, e.g. a
        LogicalAddressMapping's ``pages``) into ``mr`` at ``base_virtual_address``."""
        return self.adapter._posted(
            "NdkFastRegister",
            self._s.fast_register(self.handle, self._ctx(context), mr.handle, list(pages), fbo,
                                  length, base_virtual_address, flags))

    def bind(self, mr, mw, virtual_address, length, *, flags=0, context=None):
        """NdkBind: binds ``mw`` to [virtual_address, +length) of ``mr``."""
        return self.adapter._posted(
            "NdkBind", self._s.bind(self.handle, self._ctx(context), mr.handle, mw.handle,
                                    virtual_address, length, flags))

    def invalidate(self, mr_or_mw, *, context=None, flags=0):
        """NdkInvalidate of a fast-registered MR or a bound MW."""
        return self.adapter._posted(
            "NdkInvalidate",
            self._s.invalidate(self.handle, self._ctx(context), mr_or_mw.handle, flags))

    def flush(self):
        """NdkFlush: every outstanding request completes with STATUS_CANCELLED."""
        self._s.flush(self.handle)
        self.adapter._judged("NdkFlush")

    @property
    def outstanding_completions(self):
        """Completions the oracle still expects from this QP."""
        return self._s.outstanding_completions(self.handle)

    def expect_nothing_outstanding(self):
        """Declares the QP drained: completions the oracle still expects are missing (WR-05)."""
        v = self._s.expect_nothing_outstanding(self.handle)
        self.adapter._judged("drained")
        return v


class Connector(NdkObject):
    """NDK_CONNECTOR: one connection's setup and teardown."""

    ndk_type = "connector"

    def connect(self, qp, host, port, *, ird=4, ord=4, private_data=b"", check=True):
        """NdkConnect, awaited."""
        self.connect_async(qp, host, port, ird=ird, ord=ord, private_data=private_data)
        return self.wait_connect(check=check)

    def connect_async(self, qp, host, port, *, ird=4, ord=4, private_data=b""):
        """NdkConnect without waiting (see :meth:`wait_connect`): the status it returned."""
        return self.adapter._posted(
            "NdkConnect", self._s.connect_async(self.handle, qp.handle, host, port, ird, ord,
                                                bytes(private_data)))

    def wait_connect(self, *, check=True):
        return self.adapter._done("NdkConnect", self._s.wait_connect(self.handle), check)

    def accept_async(self, qp, *, ird=4, ord=4, private_data=b""):
        """NdkAccept without waiting (see :meth:`wait_accept`)."""
        return self.adapter._posted(
            "NdkAccept", self._s.accept_async(self.handle, qp.handle, ird, ord,
                                              bytes(private_data)))

    def wait_accept(self, *, check=True):
        return self.adapter._done("NdkAccept", self._s.wait_accept(self.handle), check)

    def accept_ex_async(self, qp, *, ird=4, ord=4, private_data=b""):
        """NdkAcceptEx (NDKPI 2.1) without waiting (see :meth:`wait_accept`)."""
        return self.adapter._posted(
            "NdkAcceptEx", self._s.accept_ex_async(self.handle, qp.handle, ird, ord,
                                                   bytes(private_data)))

    def complete_connect_ex(self, *, check=True):
        """NdkCompleteConnectEx (NDKPI 2.1)."""
        return self.adapter._done("NdkCompleteConnectEx",
                                  self._s.complete_connect_ex(self.handle), check)

    def local_address(self, buffer_length=128):
        """NdkGetLocalAddress with a ``buffer_length``-byte buffer: an :class:`Address`."""
        a = Address(*self._s.local_address(self.handle, buffer_length))
        self.adapter._judged("NdkGetLocalAddress", a.status)
        return a

    def peer_address(self, buffer_length=128):
        """NdkGetPeerAddress with a ``buffer_length``-byte buffer: an :class:`Address`."""
        a = Address(*self._s.peer_address(self.handle, buffer_length))
        self.adapter._judged("NdkGetPeerAddress", a.status)
        return a

    def complete_connect(self, *, check=True):
        """NdkCompleteConnect."""
        return self.adapter._done("NdkCompleteConnect", self._s.complete_connect(self.handle),
                                  check)

    def reject(self, private_data=b""):
        """NdkReject."""
        return self.adapter._posted("NdkReject", self._s.reject(self.handle, bytes(private_data)))

    def disconnect(self, *, check=True):
        """NdkDisconnect."""
        return self.adapter._done("NdkDisconnect", self._s.disconnect(self.handle), check)

    @property
    def disconnect_events(self):
        return self._s.disconnect_events(self.handle)

    def connection_data(self, buffer_length=0, *, with_buffer=True, with_limits=True):
        """NdkGetConnectionData with a ``buffer_length``-byte buffer (NULL unless
        ``with_buffer``) and the read-limit pointers (NULL unless ``with_limits``): a
        :class:`ConnectionData`. The harness checks the bytes copied and past the buffer."""
        status, length, limits, data = self._s.get_connection_data(
            self.handle, buffer_length, with_buffer, with_limits)
        self.adapter._judged("NdkGetConnectionData", status)
        return ConnectionData(status, length, limits, data)


class ConnectionData(NamedTuple):
    """NdkGetConnectionData's outcome: ``length`` is *pPrivateDataLength after the call (the
    private data's size, RDS), ``read_limits`` the (inbound, outbound) limits or None, ``data``
    the caller's buffer after the call."""
    status: int
    length: int
    read_limits: tuple
    data: bytes


class Address(NamedTuple):
    """An address getter's outcome: ``length`` is *pAddressLength after the call; ``family``
    and ``port`` are read from the caller's buffer (meaningful when ``status`` is success)."""
    status: int
    length: int
    family: int
    port: int


class Listener(NdkObject):
    """NDK_LISTENER: incoming connection requests."""

    ndk_type = "listener"

    def local_address(self, buffer_length=128):
        """NdkGetLocalAddress with a ``buffer_length``-byte buffer: an :class:`Address`."""
        a = Address(*self._s.local_address(self.handle, buffer_length))
        self.adapter._judged("NdkGetLocalAddress", a.status)
        return a

    def listen(self, host, port, *, check=True):
        """NdkListen on host:port."""
        return self.adapter._done("NdkListen", self._s.listen(self.handle, host, port), check)

    def wait_connect_event(self, timeout=5.0):
        """The :class:`Connector` of the next connection request, or None after ``timeout``."""
        h = self._s.wait_connect_event(self.handle, int(timeout * 1000))
        self.adapter._judged("NdkConnectEventCallback")
        return None if h is None else Connector(self.adapter, h)


def open_adapter(provider="model", **options):
    """An :class:`Adapter` of ``provider`` (see there); use it in a ``with`` block."""
    return Adapter(provider, **options)


def wait_for(predicate, timeout=5.0, interval=0.001):
    """Polls ``predicate()`` until it is true or ``timeout`` seconds passed; returns it."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)
