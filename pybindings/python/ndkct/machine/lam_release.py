"""NdkReleaseLam among live mappings (issue 13, s12lamrel): a mapping used after an older one
was released. A LAM lives until NdkReleaseLam releases it, as a child of the adapter: releasing
one leaves the adapter's other mappings as they were (LAM-REL-01). The C++ machine's command is
SendAfterARelease (conformance/properties/commands_lam_releases.cpp)."""

from hypothesis import strategies as st
from hypothesis.stateful import rule

from .base import PAGE_SIZE, MachineBase

#: Bytes sent from the mapping still live (at most to its first page's end).
_SEND_BYTES = st.sampled_from([1, 64, PAGE_SIZE])


class LamReleaseRules:
    buffers = MachineBase.buffers

    @rule(older=buffers, newer=buffers, count=_SEND_BYTES)
    def send_after_a_release(self, older, newer, count):
        """NdkBuildLam of ``older`` and then of ``newer`` (whole buffers), NdkReleaseLam of the
        first, then NdkSend on a from the second's first logical page with the pair's PD's
        privileged token into a receive of the pair's sink on b: the mapping still live must
        still map its pages (LAM-REL-01; LAM-USE-02). The oracle judges the status and the bytes
        that land; the second mapping is released afterwards. Then failing requests between
        builds of the two buffers (lam_failures.py, s13lam: LAM-ERR-01, LAM-ST-03)."""
        pair = self.pair
        if pair is None or not self.usable(pair):
            return
        first = self.adapter.build_lam(older.describe(0, len(older)))
        if not first.ok:
            return
        second = self.adapter.build_lam(newer.describe(0, len(newer)))
        self.adapter.release_lam(first)
        if not second.ok:
            return
        if second.pages:
            link = pair.link
            fbo = second.fbo % PAGE_SIZE
            n = max(1, min(count, PAGE_SIZE - fbo, len(newer)))
            token = link.pd.privileged_token()
            link.b.receive(pair.snk.sge(0, n))
            link.a.send([(second.pages[0] + fbo, n, token)])
            self.settle(pair)
        self.adapter.release_lam(second)
        self.failing_builds_between(older, newer)  # s13lam
