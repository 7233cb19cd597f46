"""NdkBuildLam's chain and IRQL rules and overlapping NdkInitializeFastRegisterMr (issue 13): a
mapping of the first piece of a chain with a hole after it (contiguous for Length bytes, so it
must be mapped, LAM-MDL-04; the build_lam rule's broken chains are broken inside the range), an
NdkBuildLam made inside a CQ notification callback (where a kernel consumer runs at
DISPATCH_LEVEL: it may not wait, LAM-IRQL-01; in_notification makes other calls there, never
this one), and two fast-register MRs initialized there back to back, the second issued while the
first may still be pending (IFR-CONC-01: each completes on its own; every other rule waits for
an initialization before the next call), and a send from a mapping's logical addresses with the
PD's privileged token (LAM-USE-02: local sources as well as targets; no other rule uses that
token). The C++ machine's commands are BuildLamBeforeABreak, NotifiedLam,
OverlappingInitializations and SendFromMapping
(conformance/properties/commands_mappings_and_initializations.cpp)."""

import time

from hypothesis import strategies as st
from hypothesis.stateful import rule

from .. import strategies as nst
from ..errors import NdkError
from .base import PAGE_SIZE, MachineBase

#: Bytes of the buffer skipped between the chain's two pieces.
_GAP = st.sampled_from([1, 8, PAGE_SIZE])
#: Where the first piece (all that is mapped) ends: a share of what the buffer holds.
_CUT = st.integers(0, 1 << 16)
#: AdapterPageCount of an initialization every adapter takes (IFR-APC-04).
_PAGES = st.integers(1, 16)


#: Bytes sent from a mapping (at most to its first page's end).
_SEND_BYTES = st.sampled_from([1, 8, 100, PAGE_SIZE])


class LamRules:
    buffers = MachineBase.buffers
    mappings = MachineBase.mappings

    @rule(mapping=mappings, count=_SEND_BYTES)
    def send_from_mapping(self, mapping, count):
        """NdkSend on a from the mapping's first logical page (from its FBO, at most to the
        page's end) with the pair's PD's privileged token, into a receive of the pair's sink on
        b: logical addresses of a live mapping are local sources with that token (LAM-USE-02);
        the oracle judges the status and the bytes that land."""
        pair = self.pair
        if pair is None or mapping.lam.released or not mapping.lam.pages:
            return
        if not self.usable(pair):
            return
        link = pair.link
        fbo = mapping.lam.fbo % PAGE_SIZE
        n = max(1, min(count, PAGE_SIZE - fbo, mapping.length))
        token = link.pd.privileged_token()
        link.b.receive(pair.snk.sge(0, n))
        link.a.send([(mapping.lam.pages[0] + fbo, n, token)])
        self.settle(pair)
        if count == 100:
            # s13lamva: the same range mapped again through a decoy-VA MDL, and a send through
            # it (LAM-VA-01, lam_decoy_va.py). Derived from the draws, not drawn.
            self.send_from_decoy_va_mapping(pair, mapping.buffer, mapping.offset, count)

    @rule(buffer=buffers, offset=nst.page_offsets, gap=_GAP, cut=_CUT)
    def build_lam_before_a_break(self, buffer, offset, gap, cut):
        """NdkBuildLam of the first piece of a two-piece chain with ``gap`` bytes skipped after
        it: Length is that piece, contiguous, so the chain must be mapped (LAM-MDL-04). The
        oracle judges the mapping; it is released at once. Then the whole pages of that piece
        are registered over the same chain (RMR-MDL-04, chains.py)."""
        offset = min(offset, len(buffer) - 1)
        room = len(buffer) - offset - gap  # for both pieces
        if room < 2:
            return
        first = 1 + cut % (room - 1)
        mdl = buffer.with_hole(offset, first, gap, room - first)
        lam = self.adapter.build_lam(mdl, length=first)
        if lam.ok:
            self.adapter.release_lam(lam)
        # s11mdl: the same chain registered for the whole pages of its first piece (RMR-MDL-04;
        # chains.py: derived, not drawn).
        self.register_before_a_break(mdl, buffer, offset, first)

    @rule(buffer=buffers, offset=nst.page_offsets)
    def build_lam_in_notification(self, buffer, offset):
        """NdkBuildLam of the rest of ``buffer`` inside the pair's CQ notification callback (the
        notification for a send of the pair's): it must return at once (LAM-IRQL-01,
        GEN-IRQL-01; the Session's watchdog says so); one that pends finishes afterwards."""
        pair = self.pair
        if pair is None or not self.usable(pair):  # the first pair was refused (resources)
            return
        offset = min(offset, len(buffer) - 1)
        mdl, _ = self.chain(buffer, offset, len(buffer) - offset, "whole")
        self._in_notification(pair, [("build_lam", mdl)])

    @rule(first=_PAGES, second=_PAGES)
    def initialize_two_in_notification(self, first, second):
        """NdkInitializeFastRegisterMr of two new fast-register MRs inside the pair's CQ
        notification callback, the second right after the first returned (pending, maybe):
        each must complete on its own (IFR-CONC-01), the pended ones afterwards."""
        pair = self.pair
        if pair is None or not self.usable(pair):
            return
        try:
            mrs = [pair.link.pd.create_mr(fast_register=True) for _ in range(2)]
        except NdkError:
            return
        self._in_notification(pair, [("initialize_fast_register_mr", mrs[0], first, True),
                                     ("initialize_fast_register_mr", mrs[1], second, False)])
        for mr in mrs:
            mr.close()

    def _in_notification(self, pair, calls):
        """The ``calls`` (Session.hook_events tuples) inside the pair's CQ notification
        callback, the notification being for a send of the pair's; what pended is finished
        afterwards, and a call that blocked there is the Session's verdict (GEN-IRQL-01)."""
        link, adapter = pair.link, self.adapter
        adapter.hook_events(link.cq, calls=calls)
        link.b.receive(pair.snk.sge(0, PAGE_SIZE))
        link.cq.arm()
        link.a.send(pair.src.sge(0, 8))
        adapter.release_hook(link.cq)  # the send is judged: the calls may go
        # Long enough for a blocked call to come back (the Session's watchdog then reports it).
        adapter.wait_hook(link.cq, "done", timeout=self.hook_timeout)
        self.settle(pair)
        adapter.finish_deferred()
        # Judged last, after a moment: a callback for a call that returned inline comes on its
        # own thread (GEN-ASYNC-03).
        time.sleep(self.quiet / 4)
        adapter.unhook_events(link.cq)
