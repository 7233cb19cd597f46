"""Fast registrations over pages that are not one run (issue 13, s13map): byte k of the region
is on page AdapterPageArray[(FBO + k) / PAGE_SIZE], whatever the entries' logical order
(FR-MAP-01; FR-PAGE-02). No rule of its own (a rule would move every fault's draws): data.py's
peer_access_fast_registered calls it for some of its draws. The C++ machine's command is
PagesNotARunWrite
(conformance/properties/commands_fast_register_page_runs.cpp); the directed tests are
conformance/tests/bites_s13map_test.cpp's."""

from .. import _ndkct
from ..errors import NdkError
from .base import PAGE_SIZE

#: Physically contiguous pages: wherever logical addresses keep the low bits of the PFN, the
#: mapping holds a run of four consecutive logical pages.
_MAPPED_PAGES = 8


class PageRunRules:
    def pages_not_a_run(self, pair, fbo):
        """NdkBuildLam of physically contiguous pages, then NdkFastRegister of a fresh MR with
        three of its pages: ends two logical pages apart whose run's middle page is mapped too,
        and a middle entry off that run; then the peer writes the whole region through its
        remote token. The oracle judges where the bytes land (a provider that took the array
        for one run from its first entry puts page 1's on the run's middle page: FR-MAP-01).
        Nothing when the mapping has no such pages."""
        memory = getattr(self, "_pages_not_a_run_memory", None)
        if memory is None:
            try:
                memory = self.adapter.buffer(_MAPPED_PAGES * PAGE_SIZE, contiguous=True)
            except ValueError:
                return
            self._pages_not_a_run_memory = memory
        lam = self.adapter.build_lam(memory, 0, len(memory))
        if not lam.ok:
            return
        try:
            pages = list(lam.pages)
            array = None
            for a in pages:
                if a + PAGE_SIZE in pages and a + 2 * PAGE_SIZE in pages:
                    other = [k for k in pages if k not in (a, a + PAGE_SIZE, a + 2 * PAGE_SIZE)]
                    if other:
                        array = [a, other[0], a + 2 * PAGE_SIZE]
                    break
            if array is None or not self.usable(pair):
                return
            link = pair.link
            try:
                mr = link.pd.fast_register_mr(3, remote_access=True)
            except NdkError:
                return
            try:
                fbo %= PAGE_SIZE
                length = 3 * PAGE_SIZE - fbo
                base = self.label() + fbo
                ctx = self.adapter.next_context()
                status = link.a.fast_register(mr, array, fbo=fbo, length=length,
                                              base_virtual_address=base,
                                              flags=_ndkct.OP_FLAG_ALLOW_REMOTE_WRITE,
                                              context=ctx)
                if not _ndkct.nt_success(status):
                    self.marker(pair)
                results = self.settle(pair)
                mine = [r for r in results if r.request_context == ctx]
                if _ndkct.nt_success(status) and mine and int(mine[0].status) == 0:
                    link.b.write(pair.src.sge(0, length), base, mr.remote_token)
                    self.settle(pair)
            finally:
                mr.close()
        finally:
            self.adapter.release_lam(lam)
