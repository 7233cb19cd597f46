"""Rules for host memory and its registration: buffers, NdkRegisterMr / NdkDeregisterMr,
NdkBuildLam / NdkReleaseLam, NdkCreateMr + NdkInitializeFastRegisterMr, NdkFastRegister and
NdkInvalidate (the data path over the regions is in data.py)."""

import time

from hypothesis import strategies as st
from hypothesis.stateful import multiple, precondition, rule

from .. import _ndkct
from .. import strategies as nst
from ..errors import NdkError
from .base import (MAX_LISTED_PAGES, PAGE_SIZE, FastMr, MachineBase, Mapping, Region)

Status = _ndkct.Status


def _odd(n):
    """An odd-sized part of n bytes (at least 1)."""
    return max(1, n - 1 - n // 3)


class MemoryRules:
    buffers = MachineBase.buffers
    regions = MachineBase.regions
    mappings = MachineBase.mappings

    @precondition(lambda self: self.counts["buffers"] < 6)
    @rule(target=buffers, pages=nst.buffer_pages, contiguous=st.booleans())
    def buffer(self, pages, contiguous):
        """A buffer of its own pattern (each buffer's differs, and so does each page of it:
        misplaced bytes and pages show)."""
        self.counts["buffers"] += 1
        b = self.adapter.buffer(pages * PAGE_SIZE, contiguous=contiguous)
        b.fill(29 * self.counts["buffers"])
        return b

    @rule(target=regions, buffer=buffers, flags=nst.mr_flags,
          chain=nst.chain_kinds, offset=nst.page_offsets, length=nst.register_lengths,
          then=nst.region_uses)
    def register(self, buffer, flags, chain, offset, length, then):
        """NdkRegisterMr over a valid or a broken chain (RMR-MDL-01), with every documented
        right and read sink (RMR-SINK-*) and now and then an undocumented bit, a Length of the
        chain's bytes, an odd part of them, 0 or one past the chain (RMR-LEN-*); then the peer
        writes or reads the region, or a writes from it or reads into it (``then``: what its
        rights allow is the oracle's to say, RMR-ACC-*); a region registered with 0x5 is then a
        receive buffer too (RMR-FLG-03)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return multiple()
        size = len(buffer)
        offset = min(offset, size - 1)
        described = size - offset
        mdl, contiguous = self.chain(buffer, offset, described, chain)
        n = {"chain": len(mdl), "odd": _odd(len(mdl)), "zero": 0, "past": len(mdl) + 1}[length]
        try:
            mr = pair.link.pd.create_mr()
        except NdkError:
            return multiple()
        status = mr.register(mdl, flags, length=n, check=False)
        if status == Status.STATUS_INSUFFICIENT_RESOURCES:
            # As a consumer would, once more: the failure left the MR unregistered, so this is
            # a first registration of it (RMR-ST-03).
            status = mr.register(mdl, flags, length=n, check=False)
        if not _ndkct.nt_success(status):
            mr.close()
            return multiple()
        # A callback for a registration that returned its status inline (GEN-ASYNC-03) would
        # come on a provider thread about now: it fails this step, not a later one.
        time.sleep(self.quiet / 4)
        self.adapter.check()
        self.learn_tokens(mr)
        usable = n if contiguous and length in ("chain", "odd") else 0
        region = Region(pair, mr, buffer, flags, offset, usable)
        if then in ("peer_write", "peer_read"):
            self.peer_access_registered(region, then == "peer_write", 0, 4096, 0, "remote")
        elif then in ("local_source", "local_sink") and usable and self.usable(pair):
            # a writes the region to the pair's target, or reads the target into the region
            # (RMR-SINK-*, RD-03)
            self.transfer(pair, pair.link.a, then == "local_source",
                          [(region.address, min(usable, 4096), mr.local_token)],
                          pair.tgt.address, pair.tgt.remote_token, 0)
        if usable and (flags & nst.MR_RW) == nst.MR_RW and self.usable(pair):
            # s11flg3: a region registered with NDK_MR_FLAG_ALLOW_REMOTE_WRITE (0x5) has local
            # write too (RMR-FLG-03): b's receive buffer for a send of a. Derived from the drawn
            # Flags, not drawn, so that the stream every other fault is found with stays as it
            # was.
            self.receive_into(pair, region.address, min(usable, 4096), mr.local_token)
        if then == "peer_write" and usable and chain == "whole" and offset % 4 == 3:
            # s13va: the same range again through a decoy-VA MDL, and the peer's write into it
            # (RMR-VA-03, decoy_va.py). Derived from the draws, not drawn, as above.
            self.register_with_decoy_va(pair, buffer, offset, usable)
        return region

    def receive_into(self, pair, address, length, token):
        """b posts a receive into [address, +length) through ``token``, a sends as many bytes
        from the pair's source (RCV-*; whether the region may be written is the oracle's to
        say: RMR-FLG-03, FR-FLG-03, RMR-ACC-02)."""
        link = pair.link
        if not _ndkct.nt_success(link.b.receive([(address, length, token)])):
            self.settle(pair)  # refused at once: no send to land anywhere
            return
        if not _ndkct.nt_success(link.a.send(pair.src.sge(0, length))):
            self.marker(pair)
        self.settle(pair)

    @rule(region=regions)
    def deregister(self, region):
        """NdkDeregisterMr of a registered region. Where the region starts at an odd offset
        (derived from the draws, not drawn, so that the stream every other fault is found with
        stays as it was), the peer then writes where it was through the remote token it had:
        once the deregistration completed, that must fail and touch nothing (RMR-DEREG-01).
        Where it starts at 2 mod 4, the MR is registered again over the same bytes and a
        writes from it through the local token the new registration reports (RMR-TOK-01)."""
        if not region.live:
            return
        region.live = False
        pair = region.pair
        after = region.offset % 2 == 1 and region.length > 0  # s11rmr: RMR-DEREG-01
        token = region.mr.remote_token if after else None
        status = region.mr.deregister(check=False)
        if after and status == Status.STATUS_SUCCESS and self.usable(pair):
            n = min(region.length, 64)
            self.transfer(pair, pair.link.b, True, pair.src.sge(0, n), region.address, token, 0)
        again = region.offset % 4 == 2 and region.length > 0  # s11rmr: RMR-TOK-01
        if again and status == Status.STATUS_SUCCESS and self.usable(pair):
            # Registered again over the same bytes, then a's write from it through the local
            # token the new registration reports (derived from the draws, as above).
            if not _ndkct.nt_success(region.mr.register(region.buffer, region.flags,
                                                        region.offset, region.length,
                                                        check=False)):
                return
            region.live = True
            self.learn_tokens(region.mr)
            n = min(region.length, 64)
            self.transfer(pair, pair.link.a, True, [(region.address, n, region.mr.local_token)],
                          pair.tgt.address, pair.tgt.remote_token, 0)

    def map(self, buffer, offset, length="rest", size="exact", chain="whole"):
        """NdkBuildLam over ``buffer`` from ``offset`` to its end (a chain of ``chain``'s shape),
        for the bytes the chain describes, an odd part of them, 0 or a page more (``length``);
        the mapping buffer is the size its pages need, or ``size`` says otherwise. A reported
        STATUS_BUFFER_TOO_SMALL is answered as a consumer would: the same call again with the
        size the provider wrote (LAM-SIZE-04, LAM-SIZE-05). A Mapping, or None. The ordinary
        mapping of a buffer range is built once and used by every fast registration of it (the
        build_lam rule builds anew each time)."""
        offset = min(offset, len(buffer) - 1)
        ordinary = (length, size, chain) == ("rest", "exact", "whole")
        key = (id(buffer), offset)
        if ordinary and key in self.lam_cache:  # judged when it was built; still valid
            return self.lam_cache[key]
        mdl, _ = self.chain(buffer, offset, len(buffer) - offset, chain)
        described = len(mdl)
        n = {"rest": described, "odd": _odd(described), "zero": 0,
             "past": described + PAGE_SIZE}[length]
        pages = (offset % PAGE_SIZE + n + PAGE_SIZE - 1) // PAGE_SIZE
        needed = _ndkct.lam_size(pages)
        with_buffer = size != "probe"
        room = {"exact": needed, "short": max(needed - 8, 0), "short1": max(needed - 1, 0),
                "probe": 0, "zero": 0, "roomy": needed + 64}[size]
        lam = self.adapter.build_lam(mdl, length=n, buffer_size=room, with_buffer=with_buffer)
        if lam.final_status == Status.STATUS_BUFFER_TOO_SMALL and 0 < lam.size_out <= 1 << 20:
            lam = self.adapter.build_lam(mdl, length=n, buffer_size=lam.size_out)
        mapping = Mapping(lam, buffer, offset, n) if lam.ok else None
        if ordinary and mapping is not None:
            self.lam_cache[key] = mapping
        return mapping

    @rule(target=mappings, buffer=buffers, offset=nst.page_offsets, length=nst.lam_lengths,
          size=nst.lam_sizes, chain=nst.chain_kinds)
    def build_lam(self, buffer, offset, length, size, chain):
        """NdkBuildLam from any offset, for the rest of the buffer, an odd part of it, 0 bytes
        or past the chain (LAM-LEN-01), over a whole or broken chain (LAM-MDL-*), with a mapping
        buffer of the size needed, one entry or one byte short, none (the size probe), 0 or
        more (LAM-SIZE-*, LAM-OUT-*). The oracle judges the pages, FBO and sizes written."""
        mapping = self.map(buffer, offset, length, size, chain)
        return multiple() if mapping is None else mapping

    @rule(mapping=mappings)
    def release_lam(self, mapping):
        """NdkReleaseLam. Fast registrations made from a mapping list its pages themselves
        (fast_register builds its own), so nothing in use goes (LAM-REL-03)."""
        if not mapping.lam.released:
            self.adapter.release_lam(mapping.lam)

    # ------------------------------------------------------------------ fast registration
    def pages_of(self, kind):
        """An AdapterPageCount of ``kind`` (frmr_pages) on this adapter."""
        frmr = self.info["frmr_page_count"]
        if isinstance(kind, int):
            return kind
        return {"frmr": frmr, "frmr+1": frmr + 1, "over": 4 * max(frmr, 16) + 3,
                "huge": 1 << 24}[kind]

    @rule(pages=nst.frmr_pages, remote_access=st.booleans(),
          on=nst.ifr_targets, which=nst.which_fmr)
    def fast_register_mr(self, pages, remote_access, on, which):
        """NdkCreateMr(fast) + NdkInitializeFastRegisterMr of a small count, the guaranteed 16,
        the adapter's FRMRPageCount, one past it or far past it (IFR-APC-*), one more fast-
        register MR of the pair (every pair starts with two: 16 pages with remote access, 4
        without); or the initialization again of one of the pair's MRs (``on="again"``,
        IFR-ST-04), or of an MR made for NdkRegisterMr (``"plain"``, AMB-16)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        count = self.pages_of(pages)
        if on == "again" and pair.fmrs:
            fmr = pair.fmr(which)
            status = fmr.mr.initialize_fast_register(count, remote_access, check=False)
            if _ndkct.nt_success(status):
                fmr.pages, fmr.remote_access, fmr.length = count, remote_access, 0
                fmr.initialized_token = None  # (tokens.py: new MRs only)
                self.register_all_pages(fmr)
            return
        if on == "plain":
            try:
                mr = pair.link.pd.create_mr()
            except NdkError:
                return
            mr.initialize_fast_register(count, remote_access, check=False)
            mr.close()
            return
        fmr = self.new_fast_register_mr(pair, count, remote_access)
        if fmr is not None:
            self.register_all_pages(fmr)

    def new_fast_register_mr(self, pair, pages, remote_access):
        """NdkCreateMr(fast) + NdkInitializeFastRegisterMr: the pair's new FastMr, or None."""
        try:
            mr = pair.link.pd.create_mr(fast_register=True)
        except NdkError:
            return None
        status = mr.initialize_fast_register(pages, remote_access, check=False)
        if not _ndkct.nt_success(status):
            mr.close()
            return None
        fmr = FastMr(pair, mr, pages, remote_access)
        pair.fmrs.append(fmr)
        self.read_initialized_token(fmr)  # s13tok: IFR-TOK-01 (tokens.py)
        return fmr

    def all_rights(self, fmr):
        """Local write and read sink, and the remote rights the MR may grant."""
        flags = _ndkct.OP_FLAG_ALLOW_LOCAL_WRITE | _ndkct.OP_FLAG_RDMA_READ_SINK
        if fmr.remote_access:
            flags |= _ndkct.OP_FLAG_ALLOW_REMOTE_READ | _ndkct.OP_FLAG_ALLOW_REMOTE_WRITE
        return flags

    def register_all_pages(self, fmr):
        """NdkFastRegister of every page the MR was just initialized for (the pair's source
        pages, the last repeated), with local write and read-sink rights and the remote rights
        it may grant: an initialization accepted is an initialization usable (IFR-APC-01,
        FR-APC-03), up to FRMRPageCount and past it. The data-path steps do it too for an MR
        with nothing registered."""
        pair = fmr.pair
        fmr.initialized_token = None  # s13tok: the first registration is this one (tokens.py)
        if fmr.pages > MAX_LISTED_PAGES or not self.usable(pair):
            return
        mapping = self.map(pair.source, 0)
        if mapping is None:
            return
        lam_pages = mapping.lam.pages
        listed = lam_pages[:fmr.pages] + lam_pages[-1:] * max(0, fmr.pages - len(lam_pages))
        flags = self.all_rights(fmr)
        address, n = self.label(), fmr.pages * PAGE_SIZE
        # s13tok2: the remote token may be read once the initialization has completed, and the
        # read changes nothing: the registration below must still be taken (IFR-TOK-02).
        fmr.mr.remote_token
        ctx = self.adapter.next_context()
        status = pair.link.a.fast_register(fmr.mr, listed, fbo=0, length=n,
                                           base_virtual_address=address, flags=flags,
                                           context=ctx)
        if not _ndkct.nt_success(status):
            self.marker(pair)
        results = self.settle(pair)
        mine = [r for r in results if r.request_context == ctx]
        if _ndkct.nt_success(status) and mine and int(mine[0].status) == 0:
            fmr.base, fmr.length, fmr.flags = address, n, flags

    @rule(which=nst.which_fmr, buffer=MachineBase.buffers, offset=nst.page_offsets,
          pages=nst.fr_page_counts, fbo=nst.fr_fbos, length=nst.fr_lengths, base=nst.fr_bases,
          shift=st.integers(0, 4095), flags=nst.fast_register_flags, then=nst.region_uses)
    def fast_register(self, which, buffer, offset, pages, fbo, length, base, shift, flags,
                      then):
        """NdkBuildLam of a buffer from ``offset``, then NdkFastRegister of one of the pair's
        fast-register MRs with that mapping's pages: as many as the LAM has, exactly as many as
        the MR was initialized for (the LAM's last page repeated, IFR-APC-01, FR-APC-03), one
        more (FR-APC-02), fewer, none; the LAM's FBO, 0, another, a page or more (FR-FBO-*); the
        mapping's Length, the most the pages hold, more, less, 0 (FR-LEN-*); a base address
        congruent to FBO, misaligned, or 0 (FR-ALIGN-*); any rights (FR-ACC-*, FR-SINK-*).
        ``shift`` picks the odd values (page index, offsets). Then (``then``) the peer writes
        or reads the region, or it is the local source or sink of a's request, from its start
        or up to its end (FR-MAP-01: which page each byte is in); a region registered without
        local write is then the source of a write (FR-FLG-02) and the buffer of a receive, which
        must not land (FR-FLG-03)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        fmr = pair.fmr(which)
        if fmr is None or not self.usable(pair):
            return
        mapping = self.map(buffer, offset)
        if mapping is None:
            return
        lam_pages = mapping.lam.pages
        have = len(lam_pages)
        count = {"lam": have, "initialized": fmr.pages, "past": fmr.pages + 1,
                 "fewer": 1 + shift % have, "zero": 0}[pages]
        if count > MAX_LISTED_PAGES:
            count = have
        listed = lam_pages[:count] + lam_pages[-1:] * max(0, count - have)
        first = {"lam": mapping.lam.fbo, "zero": 0, "other": 1 + shift % (PAGE_SIZE - 1),
                 "page": PAGE_SIZE + shift % 64}[fbo]
        most = max(count * PAGE_SIZE - first, 0)
        n = {"mapping": min(mapping.length, most), "max": most, "past": most + 1 + shift % 4096,
             "short": 1 + shift % max(most, 1), "zero": 0}[length]
        label = self.label() + (shift % 16) * PAGE_SIZE
        if shift >> 9 == 7:
            # s13align: 1 in 8, a label no pointer has (bit 63 set; FR-ALIGN-01: the address is
            # an index, however large). Derived from ``shift``, not drawn.
            label |= 1 << 63
        address = {"congruent": label + first % PAGE_SIZE,
                   "misaligned": label + (first + 1 + shift % (PAGE_SIZE - 1)) % PAGE_SIZE,
                   "zero": 0}[base]
        ctx = self.adapter.next_context()
        early, fmr.initialized_token = fmr.initialized_token, None  # s13tok (tokens.py)
        # s12fence: a read outstanding on a when a fenced registration is posted (FR-FENCE-01;
        # fence.py: derived from the drawn Flags, not drawn).
        self.read_before_the_fence(pair, flags)
        status = pair.link.a.fast_register(fmr.mr, listed, fbo=first, length=n,
                                           base_virtual_address=address, flags=flags,
                                           context=ctx)
        # No entry may come for it (WR-05: failed inline; FR-SILENT-01: silent): one would be
        # there before the marker's.
        self.after_request(pair, status, flags)
        # s13silent: a silent one with arguments that describe a region is read through at once
        # by the peer, so that a failure whose entry never comes shows as such (FR-SILENT-02;
        # silent.py: derived, not drawn).
        well_formed = (pages in ("lam", "initialized", "fewer") and fbo in ("lam", "zero")
                       and length in ("mapping", "max") and base == "congruent")
        if well_formed:
            self.read_through_a_silent_registration(pair, fmr, status, flags, address, n)
        results = self.settle(pair)
        if not _ndkct.nt_success(status):
            return
        mine = [r for r in results if r.request_context == ctx]
        if (mine and int(mine[0].status) == 0) or \
                (not mine and flags & _ndkct.OP_FLAG_SILENT_SUCCESS):
            fmr.base, fmr.length, fmr.flags = address, n, flags
            end = "end" if shift & 1 else "start"
            if early is not None and n and shift % 4 == 1:
                # s13tok: a's write from the region through the local token read after the
                # initialization (IFR-TOK-01; derived from the draws, not drawn).
                offset, count = self.where(end, shift, PAGE_SIZE, n)
                self.write_through_initialized_token(pair, fmr, address, offset, count, early)
            if then in ("peer_write", "peer_read"):
                self.peer_access_fast_registered(which, then == "peer_write", end, shift,
                                                 4096, "remote")
            elif then != "none":
                self.local_use_fast_registered(which, then[len("local_"):], end, shift,
                                               4096, "local", False)
            if not flags & _ndkct.OP_FLAG_ALLOW_LOCAL_WRITE and fmr.length and \
                    fmr.base == address and self.usable(pair):
                # s11flg3: a region without NDK_OP_FLAG_ALLOW_LOCAL_WRITE (0x10, also in 0x30)
                # is still a local source, local read needing no flag (FR-FLG-02): a's write from
                # it; but no receive may write into it (FR-FLG-03): b's receive into it for a
                # send of a. Derived from the drawn Flags, not drawn, as above.
                offset, count = self.where(end, shift, PAGE_SIZE, n)
                sge = [(address + offset, count, fmr.mr.local_token)]
                self.transfer(pair, pair.link.a, True, sge, pair.tgt.address,
                              pair.tgt.remote_token, 0)
                if self.usable(pair):
                    self.receive_into(pair, address + offset, count, fmr.mr.local_token)

    @rule(which=nst.which_fmr, flags=nst.invalidate_flags)
    def invalidate(self, which, flags):
        """NdkInvalidate of one of the pair's fast-registered MRs (fast-registered first when
        nothing is) on its QP (INV-*)."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        fmr = self.registered_fmr(pair, which)
        if fmr is None:
            return
        status = pair.link.a.invalidate(fmr.mr, flags=flags)
        self.after_request(pair, status, flags)
        results = self.settle(pair)
        if _ndkct.nt_success(status) and (not pair.broken or not results):
            fmr.length = 0
