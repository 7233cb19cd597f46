"""Rules that reach a memory region's bounds: a region registered (NdkRegisterMr) or
fast-registered (NdkFastRegister) with its end inside a page, then an access that starts a few
bytes before its end (or at it) and runs a few bytes past it, through the region's own tokens:
the peer's write or read of it, or a's write from it or read into it. The access must fail and
touch nothing outside the region (RMR-ACC-03, FR-LEN-03): a provider that registers whole pages
lets it through. The other data-path rules keep their accesses inside a region (or far outside
it); the C++ machine's commands are AccessAcrossTheEnd, RegionEndAccess and FastRegionEndAccess
(conformance/properties/commands_memory_bounds.cpp)."""

from hypothesis import strategies as st
from hypothesis.stateful import multiple, rule

from .. import _ndkct
from ..errors import NdkError
from .base import MAX_LISTED_PAGES, PAGE_SIZE, MachineBase, Region

#: Bytes before the region's end the access starts at (0: at the end itself), and past it.
_INSIDE = st.sampled_from([1, 2, 4, 8, 0])
_PAST = st.sampled_from([1, 3, 8, 16])
#: How far the region's Length falls short of what its chain or pages hold.
_CUT = st.sampled_from([1, 3, 100, 2049, 4095])


class BoundsRules:
    buffers = MachineBase.buffers
    regions = MachineBase.regions

    def across_the_end(self, pair, address, length, local_token, remote_token, remote, write,
                       inside, past):
        """The access straddling [address, address + length)'s end: the peer's (b) write or
        read of it through ``remote_token`` (``remote``), else a's write from it or read into
        it (the pair's target the other side) through ``local_token``."""
        inside = min(inside, length)
        start, count = address + length - inside, inside + past
        if remote:
            local = (pair.src if write else pair.snk).sge(0, count)
            self.transfer(pair, pair.link.b, write, local, start, remote_token, 0)
        else:
            self.transfer(pair, pair.link.a, write, [(start, count, local_token)],
                          pair.tgt.address, pair.tgt.remote_token, 0)

    @rule(target=regions, buffer=buffers, offset=st.integers(0, PAGE_SIZE - 1), cut=_CUT,
          chain_ends=st.booleans(), remote=st.booleans(), write=st.booleans(), inside=_INSIDE,
          past=_PAST)
    def register_and_access_across_end(self, buffer, offset, cut, chain_ends, remote, write,
                                       inside, past):
        """NdkRegisterMr with every right of a Length short of the buffer's rest (the chain
        ending with the region, or running on), then an access across the region's end
        (RMR-ACC-03)."""
        pair = self.pair
        if pair is None or not self.usable(pair):  # the first pair was refused (resources)
            return multiple()
        size = len(buffer)
        offset = min(offset, size - 1)
        described = size - offset
        n = max(1, described - cut % described)
        mdl, _ = self.chain(buffer, offset, n if chain_ends else described, "whole")
        flags = (_ndkct.MR_FLAG_ALLOW_LOCAL_WRITE | _ndkct.MR_FLAG_ALLOW_REMOTE_READ |
                 _ndkct.MR_FLAG_ALLOW_REMOTE_WRITE | _ndkct.MR_FLAG_RDMA_READ_SINK)
        try:
            mr = pair.link.pd.create_mr()
        except NdkError:
            return multiple()
        if not _ndkct.nt_success(mr.register(mdl, flags, length=n, check=False)):
            mr.close()
            return multiple()
        self.learn_tokens(mr)
        region = Region(pair, mr, buffer, flags, offset, n)
        self.across_the_end(pair, region.address, n, mr.local_token, mr.remote_token, remote,
                            write, inside, past)
        return region

    @rule(which=st.sampled_from([0, 0, 1]), cut=_CUT, remote=st.booleans(),
          write=st.booleans(), inside=_INSIDE, past=_PAST)
    def fast_register_and_access_across_end(self, which, cut, remote, write, inside, past):
        """NdkFastRegister of one of the pair's MRs over the pair's source pages with every
        right it may grant and a Length short of what the pages hold, then an access across
        the region's end (FR-LEN-03); remotely only where the MR allows remote rights."""
        pair = self.pair
        if pair is None:  # the first pair was refused (resources)
            return
        fmr = pair.fmr(which)
        if fmr is None or fmr.pages > MAX_LISTED_PAGES or not self.usable(pair):
            return
        mapping = self.map(pair.source, 0)
        if mapping is None:
            return
        pages = mapping.lam.pages[:fmr.pages]
        fbo = mapping.lam.fbo
        most = len(pages) * PAGE_SIZE - fbo
        n = max(1, most - cut)
        flags = self.all_rights(fmr)
        address = self.label() + fbo
        ctx = self.adapter.next_context()
        status = pair.link.a.fast_register(fmr.mr, pages, fbo=fbo, length=n,
                                           base_virtual_address=address, flags=flags,
                                           context=ctx)
        self.after_request(pair, status, flags)
        results = self.settle(pair)
        mine = [r for r in results if r.request_context == ctx]
        if not _ndkct.nt_success(status) or not mine or int(mine[0].status) != 0:
            return
        fmr.base, fmr.length, fmr.flags = address, n, flags
        if self.usable(pair):
            self.across_the_end(pair, address, n, fmr.mr.local_token, fmr.mr.remote_token,
                                remote and fmr.remote_access, write, inside, past)
