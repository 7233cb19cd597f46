"""Rules for the data path: writes, reads and sends over registered, fast-registered and
window-bound regions (with their right tokens mostly, and now and then another), receives,
binds, send-and-invalidate, flushes, chains of DEFER requests, CQ arms and notifications, and
how completions are read. After each step the machine polls until the oracle expects nothing
more and declares the QPs drained (settle)."""

from hypothesis import strategies as st
from hypothesis.stateful import multiple, rule

from .. import _ndkct
from .. import strategies as nst
from ..errors import NdkError
from .base import PAGE_SIZE, STRAY_TOKEN, MachineBase, Window, split

OP_SILENT = _ndkct.OP_FLAG_SILENT_SUCCESS
OP_DEFER = _ndkct.OP_FLAG_DEFER


class DataRules:
    regions = MachineBase.regions
    windows = MachineBase.windows

    # ------------------------------------------------------------------ helpers
    def remote_token(self, kind, target, pair, mr=None):
        """The RemoteToken a request names for ``target`` (an MR, or a window bound to ``mr``):
        its remote token mostly; the MR's local token, the pair's target's remote token
        (another region), or a stray value (TOK-*)."""
        if kind == "other":
            return pair.tgt.remote_token
        if kind == "stray":
            return STRAY_TOKEN
        # Both tokens are read (as a consumer holding a region has both): the oracle then knows
        # what each value is, and a provider whose local token is its remote token (rxe's lkey
        # and rkey of a region with remote access) is judged by that; a remote token that is
        # the local one fails the access under RMR-TOK-02 / FR-TOK-01.
        local = (mr or target).local_token
        remote = target.remote_token
        return local if kind == "local" else remote

    def local_token(self, kind, mr):
        """The token a local SGE names for ``mr``: its local token mostly; its remote token or
        a stray value (both tokens read, as above)."""
        if kind == "stray":
            return STRAY_TOKEN
        local, remote = mr.local_token, mr.remote_token
        return remote if kind == "remote" else local

    def registered_fmr(self, pair, which):
        """The pair's fast-register MR ``which``, fast-registered first (every page it was
        initialized for, every right it may grant) when nothing is registered in it; None
        when that fails or the pair cannot be used."""
        fmr = pair.fmr(which)
        if fmr is None or not self.usable(pair):
            return None
        if fmr.length == 0:
            self.register_all_pages(fmr)
        return fmr if fmr.length and self.usable(pair) else None

    def where(self, end, offset, length, size):
        """(offset, length) of an access to a region of ``size`` bytes: from its start or
        ending at its end, at most 3 pages."""
        length = max(1, min(length, size, 3 * PAGE_SIZE))
        offset = offset % max(size - length + 1, 1)
        return (size - length - offset if end == "end" else offset), length

    def transfer(self, pair, qp, write, sges, address, token, flags):
        """NdkWrite or NdkRead on ``qp``; a silent one is followed by the same request not
        silent (its entry and bytes are judged when that one completes after it), one that
        failed inline by the marker (WR-05)."""
        request = qp.write if write else qp.read
        status = request(sges, address, token, flags=flags)
        if flags & OP_SILENT:
            request(sges, address, token, flags=flags & ~OP_SILENT)
        elif not _ndkct.nt_success(status):
            self.marker(pair)
        self.settle(pair)

    # ------------------------------------------------------------------ the pair's regions
    @rule(offset=st.integers(0, 3 * PAGE_SIZE), length=nst.lengths,
          sges=nst.sge_counts, flags=nst.write_flags, token=nst.remote_tokens)
    def write(self, offset, length, sges, flags, token):
        """a writes from its source into the pair's target, registered for remote writes (WRT-*,
        CQ-RES-*), from 0 to 3 SGEs, with every flag of NdkWrite's table (INLINE: AMB-13)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        if not self.usable(pair):
            return
        length = min(length, 4 * PAGE_SIZE - offset)
        local = split(pair.src.address, length, pair.src.local_token, sges)
        self.transfer(pair, pair.link.a, True, local, pair.tgt.address + offset,
                      self.remote_token(token, pair.tgt, pair), flags)

    @rule(offset=st.integers(0, 3 * PAGE_SIZE), length=nst.lengths,
          sges=nst.sge_counts, flags=nst.read_flags, token=nst.remote_tokens)
    def read(self, offset, length, sges, flags, token):
        """a reads the pair's target into its read sink (RD-*, RMR-SINK-*)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        if not self.usable(pair):
            return
        length = min(length, 4 * PAGE_SIZE - offset)
        local = split(pair.snk.address, length, pair.snk.local_token, sges)
        self.transfer(pair, pair.link.a, False, local, pair.tgt.address + offset,
                      self.remote_token(token, pair.tgt, pair), flags)

    @rule(region=regions, write=st.booleans(), offset=st.integers(0, 3 * PAGE_SIZE),
          length=nst.lengths, flags=nst.read_flags, token=nst.remote_tokens)
    def peer_access_registered(self, region, write, offset, length, flags, token):
        """The peer reads or writes a region registered with NdkRegisterMr, with its rights
        (RMR-ACC-*, RMR-FLG-*, WRT-*, RD-*). An access whose drawn offset is 7 mod 8 names the
        bare offset (RemoteAddress = offset, not the region's VA + offset), which must not
        reach the region (RMR-VA-02): derived from the draws, not drawn, so that the stream
        every other fault is found with stays as it was."""
        pair = region.pair
        if not region.live or region.length == 0 or not self.usable(pair):
            return
        bare = offset % 8 == 7  # s11rmr: RMR-VA-02
        offset, length = self.where("start", offset, length, region.length)
        local = (pair.src if write else pair.snk).sge(0, length)
        flags &= ~_ndkct.OP_FLAG_INLINE
        if bare:  # no flags: its failure is its own entry (not silent)
            flags = 0
        address = offset if bare else region.address + offset
        self.transfer(pair, pair.link.b, write, local, address,
                      self.remote_token(token, region.mr, pair), flags)

    # ------------------------------------------------------------------ fast-registered regions
    @rule(which=nst.which_fmr, write=st.booleans(), end=nst.region_ends,
          offset=st.integers(0, 1 << 24), length=nst.lengths, token=nst.remote_tokens)
    def peer_access_fast_registered(self, which, write, end, offset, length, token):
        """The peer reads or writes a fast-registered region through its remote token, from its
        start or up to its end (FR-ACC-*, FR-FLG-*, FR-MAP-01: which page each byte is in, the
        region's span, FR-LEN-03). An access from the start whose drawn offset is 3 mod 4
        names the bare offset (RemoteAddress = offset, not BaseVirtualAddress + offset), which
        must not reach the region (FR-ZBVA-01), and one up to its end whose drawn offset is 5
        mod 8 is followed by a fast registration over pages that are not one run, written into
        (pages.py, FR-MAP-01); one through the remote token that reaches the region's last page
        is preceded by the same access at its start (page_count.py, FR-APC-01): all derived from
        the draws, not drawn, so that the stream every other fault is found with stays as it
        was."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        fmr = self.registered_fmr(pair, which)
        if fmr is None:
            return
        bare = end == "start" and offset % 4 == 3  # s10fr: FR-ZBVA-01
        not_a_run = end == "end" and offset % 8 == 5  # s13map: FR-MAP-01 (pages.py)
        fbo = offset // 8
        offset, length = self.where(end, offset, length, fmr.length)
        local = (pair.src if write else pair.snk).sge(0, length)
        remote = self.remote_token(token, fmr.mr, pair)

        def access(at):
            self.transfer(pair, pair.link.b, write, local, at if bare else fmr.base + at, remote,
                          0)

        if not bare and token == "remote":  # s14apc: FR-APC-01 (page_count.py)
            self.start_before_last_page(pair, fmr, "peer_write" if write else "peer_read",
                                        offset, length, access)
        access(offset)
        if not_a_run:
            self.pages_not_a_run(pair, fbo)

    @rule(which=nst.which_fmr, use=st.sampled_from(["source", "sink", "receive"]),
          end=nst.region_ends, offset=st.integers(0, 1 << 24), length=nst.lengths,
          token=nst.local_tokens, invalidate=st.booleans())
    def local_use_fast_registered(self, which, use, end, offset, length, token,
                                  invalidate):
        """A fast-registered region as a local buffer through its local token (FR-TOK-02,
        FR-ZBVA-01): the source of a's write to the pair's target (FR-FLG-02: local read needs
        no flag), the sink of a's read of the target (FR-FLG-03, FR-SINK-*; with ``invalidate``
        NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE), or b's receive buffer for a send of a. One
        through the local token that reaches the region's last page is preceded by the same use
        at its start (page_count.py, FR-APC-01; derived, not drawn)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        fmr = self.registered_fmr(pair, which)
        if fmr is None:
            return
        offset, length = self.where(end, offset, length, fmr.length)
        length = min(length, 4 * PAGE_SIZE)
        local = self.local_token(token, fmr.mr)
        sge = [(fmr.base + offset, length, local)]
        link = pair.link
        if use == "receive":
            def receive(at):
                link.b.receive([(fmr.base + at, length, local)])
                status = link.a.send(pair.src.sge(0, length))
                if not _ndkct.nt_success(status):
                    self.marker(pair)
                self.settle(pair)

            if token == "local":  # s14apc: FR-APC-01 (page_count.py)
                self.start_before_last_page(pair, fmr, "receive", offset, length, receive)
            receive(offset)
            return
        flags = 0
        if use == "sink" and invalidate and \
                self.adapter.has_flag(_ndkct.ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED):
            flags = _ndkct.OP_FLAG_RDMA_READ_LOCAL_INVALIDATE
        if token == "local" and not flags:  # s14apc: FR-APC-01 (page_count.py)
            self.start_before_last_page(
                pair, fmr, use, offset, length,
                lambda at: self.transfer(pair, link.a, use == "source",
                                         [(fmr.base + at, length, local)], pair.tgt.address,
                                         pair.tgt.remote_token, 0))
        self.transfer(pair, link.a, use == "source", sge, pair.tgt.address, pair.tgt.remote_token,
                      flags)
        if flags and self.usable(pair):
            # The region once more as the source of a write: its token was invalidated by the
            # read's success (RD-02), which the oracle knows; the region stays in the machine's
            # view, so later steps use it too.
            self.transfer(pair, pair.link.a, True, sge, pair.tgt.address, pair.tgt.remote_token,
                          0)

    # ------------------------------------------------------------------ sends
    @rule(length=nst.lengths, sges=nst.sge_counts, receive_sges=nst.sge_counts,
          flags=nst.send_flags)
    def send_receive(self, length, sges, receive_sges, flags):
        """b posts a receive into its sink (1 to 3 SGEs, or none), a sends from its source
        (CQ-RES-01: bytes; INLINE within the QPs' InlineDataSize, SOLICIT, FENCE, SILENT)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        if not self.usable(pair):
            return
        link = pair.link
        if flags & _ndkct.OP_FLAG_INLINE:
            length = min(length, self.inline)
        length = min(length, 4 * PAGE_SIZE)
        link.b.receive(split(pair.snk.address, 4 * PAGE_SIZE, pair.snk.local_token,
                             max(receive_sges, 1)))
        status = link.a.send(split(pair.src.address, length, pair.src.local_token, sges),
                             flags=flags)
        self.after_request(pair, status, flags)
        self.settle(pair)

    @rule(which=nst.which_fmr, length=nst.lengths, token=nst.remote_tokens)
    def send_and_invalidate(self, which, length, token):
        """a sends to a receive of b and invalidates the remote token of one of the pair's
        fast-registered MRs with remote access (fast-registered first when nothing is; SINV-*,
        CQ-RES-06/07: the receiver's entry is ReceiveAndInvalidate)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        # One of the MRs that may grant remote rights (a local-only MR's remote token is no
        # token the peer was meant to have): the first, counting round, when none does.
        remote = [i for i, f in enumerate(pair.fmrs) if f.remote_access]
        fmr = self.registered_fmr(pair, remote[which % len(remote)] if remote else which)
        if fmr is None:
            return
        link = pair.link
        length = min(length, 4 * PAGE_SIZE)
        link.b.receive(pair.snk.sge(0, 4 * PAGE_SIZE))
        status = link.a.send_and_invalidate(pair.src.sge(0, length),
                                            self.remote_token(token, fmr.mr, pair))
        if not _ndkct.nt_success(status):
            self.marker(pair)
        self.settle(pair)
        if _ndkct.nt_success(status) and token == "remote" and not pair.broken:
            fmr.length = 0

    # ------------------------------------------------------------------ windows
    @rule(target=windows, on=st.sampled_from(["target", "target", "target", "source", "sink"]),
          offset=st.integers(0, 2 * PAGE_SIZE), length=nst.lengths, flags=nst.bind_flags)
    def bind_window(self, on, offset, length, flags):
        """NdkCreateMw and NdkBind of the window to part of one of the pair's regions (its
        target, registered with every right; its source, with none; its sink) with any rights
        (MW-*, BND-*); then the peer writes (when the bind asked for remote write) or reads
        through the window's token (BND-01)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return multiple()
        if not self.usable(pair):
            return multiple()
        region = {"target": pair.tgt, "source": pair.src, "sink": pair.snk}[on]
        try:
            mw = pair.link.pd.create_mw()
        except NdkError:
            return multiple()
        offset, length = self.where("start", offset, length, 4 * PAGE_SIZE)
        ctx = self.adapter.next_context()
        status = pair.link.a.bind(region, mw, region.address + offset, length, flags=flags,
                                  context=ctx)
        self.after_request(pair, status, flags)
        results = self.settle(pair)
        mine = [r for r in results if r.request_context == ctx]
        if _ndkct.nt_success(status) and ((mine and int(mine[0].status) == 0) or
                                          (not mine and flags & OP_SILENT)):
            window = Window(pair, mw, region, region.address + offset, length, flags)
            # The right the bind granted (write when it asked for remote write); the other
            # kind is window_access's to try (BND-08).
            self.window_access(window, bool(flags & 0x20), 0, length, "remote")
            return window
        mw.close()
        return multiple()

    @rule(window=windows, write=st.booleans(), offset=st.integers(0, 2 * PAGE_SIZE),
          length=nst.lengths, token=nst.remote_tokens)
    def window_access(self, window, write, offset, length, token):
        """The peer reads or writes through a bound window (MW-*, BND-*)."""
        pair = window.pair
        if not window.live or not self.usable(pair):
            return
        offset, length = self.where("start", offset, length, window.length)
        local = (pair.src if write else pair.snk).sge(0, length)
        self.transfer(pair, pair.link.b, write, local, window.base + offset,
                      self.remote_token(token, window.mw, pair, window.mr), 0)

    @rule(window=windows, flags=nst.invalidate_flags)
    def invalidate_window(self, window, flags):
        """NdkInvalidate of a bound window (INV-*, MW-02)."""
        pair = window.pair
        if not window.live or not self.usable(pair):
            return
        status = pair.link.a.invalidate(window.mw, flags=flags)
        self.after_request(pair, status, flags)
        self.settle(pair)
        if _ndkct.nt_success(status) and not pair.broken:
            window.live = False

    # ------------------------------------------------------------------ queues
    @rule(receives=st.integers(1, 3))
    def flush(self, receives):
        """Receives posted on b, then NdkFlush: each completes cancelled (FLS-*)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        if not self.usable(pair):
            return
        for _ in range(receives):
            pair.link.b.receive(pair.snk.sge(0, PAGE_SIZE))
        pair.link.b.flush()
        self.settle(pair)
        pair.broken = True

    @rule(kinds=nst.deferred_kinds, end=nst.chain_ends)
    def deferred_chain(self, kinds, end):
        """1 to 3 requests with NDK_OP_FLAG_DEFER on a, then the chain's end: a request without
        DEFER, or one refused inline (a fast registration with remote rights on the pair's
        local-only MR), before which the provider must have handed every deferred request to
        the hardware (DEFER-03, DEFER-04, DEFER-06, DEFER-07, FR-DEFER-02). Each ends in
        exactly one entry."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        if len(pair.fmrs) < 2 or self.registered_fmr(pair, 0) is None:
            return
        link = pair.link
        a, b = link.a, link.b
        fmr = pair.fmrs[0]
        registered = True  # by registered_fmr(); the chain invalidates and registers it in turn
        for i, kind in enumerate(kinds + [end]):
            flags = 0 if i == len(kinds) else OP_DEFER
            if kind == "fast_register" and registered:
                kind = "invalidate"
            elif kind == "invalidate" and not registered:
                kind = "fast_register"
            if kind in ("send",):
                b.receive(pair.snk.sge(0, 4 * PAGE_SIZE))
                status = a.send(pair.src.sge(0, 64), flags=flags)
            elif kind == "write":
                status = a.write(pair.src.sge(0, 64), pair.tgt.address + 128,
                                 pair.tgt.remote_token, flags=flags)
            elif kind == "read":
                status = a.read(pair.snk.sge(0, 64), pair.tgt.address + 256,
                                pair.tgt.remote_token, flags=flags)
            elif kind == "invalidate":
                status = a.invalidate(fmr.mr, flags=flags)
                registered = False
            else:  # a fast registration; "refused_...": remote rights on the local-only MR
                refused = kind == "refused_fast_register"
                target = pair.fmrs[1] if refused else fmr
                lam = self.map(pair.source, 0)
                if lam is None:
                    return
                pages = lam.lam.pages[:min(target.pages, len(lam.lam.pages))]
                rights = _ndkct.OP_FLAG_ALLOW_REMOTE_READ if refused else self.all_rights(target)
                address, n = self.label(), len(pages) * PAGE_SIZE
                status = a.fast_register(target.mr, pages, fbo=0, length=n,
                                         base_virtual_address=address, flags=rights | flags)
                if not refused:
                    registered = True
                    fmr.base, fmr.length, fmr.flags = address, n, rights
            if kind == "invalidate":
                fmr.length = 0
            if not _ndkct.nt_success(status):
                break  # the chain ends here: an inline failure
        # No marker: a request without DEFER would hand the deferred ones to the hardware
        # itself (DEFER-07) and hide a chain the inline failure left stranded.
        self.settle(pair)

    @rule(arm=nst.arm_types, cause=nst.notify_causes)
    def notify(self, arm, cause):
        """NdkArmCq of the pair's CQ (ANY, SOLICITED or ERRORS), then b's receive and a's send,
        with NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT or not, or a write naming a stray token, which
        completes in error: the notification the oracle says is owed is awaited, and one it
        does not owe is a violation (CQ-NOT-*)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        if not self.usable(pair):
            return
        link = pair.link
        link.cq.arm(arm)
        if cause == "error":
            link.a.write(pair.src.sge(0, 16), pair.tgt.address, STRAY_TOKEN)
        else:
            link.b.receive(pair.snk.sge(0, PAGE_SIZE))
            link.a.send(pair.src.sge(0, 32), flags=_ndkct.OP_FLAG_SEND_AND_SOLICIT_EVENT
                        if cause == "solicited_send" else 0)
        self.settle(pair)
        self.await_notification(link.cq)

    @rule(ex=nst.poll_calls, batch=nst.poll_batches)
    def poll_style(self, ex, batch):
        """From now on completions are read with NdkGetCqResults (``ex=False``),
        NdkGetCqResultsEx (True) or the adapter version's call (None), ``batch`` entries at a
        time at most (CQ-RES-*: a fault may be in one call only, or only with one entry)."""
        if ex and self.info["version"] < (1, 2):
            ex = None
        self.poll_ex, self.poll_batch = ex, batch
