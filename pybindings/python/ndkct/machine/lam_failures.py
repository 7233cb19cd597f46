"""Failing NdkBuildLam requests between builds of one mapping (issue 13, s13lam). A request
that fails must release whatever it built (LAM-ERR-01), one refused for want of resources
included (LAM-ST-03: it leaves no mapping behind). A leak shows only as a later
STATUS_INSUFFICIENT_RESOURCES: each step builds and releases a mapping, makes failing requests,
and builds it again, with nothing else in between, where the oracle judges such a refusal
(Model::lam_refusal_rules). The C++ machine's commands are ProbeBuildAndRelease and
ShortageBetweenBuilds (conformance/properties/commands_mapping_failures.cpp).

No rule of its own: lam_release.py's send_after_a_release calls failing_builds_between with its
two buffers once its own mappings are released, so that the machine's rules, and the examples
Hypothesis draws for every other fault, stay as they were (a new rule moved two other faults'
first findings). Nothing here is drawn: the rounds and the large request's size are fixed."""

from .base import PAGE_SIZE

#: Rounds of size probe, build and release: a leak of one page a probe fills a table of up to
#: this many entries.
_ROUNDS = 80
#: Pages of the request too large for an adapter with a small table (one buffer per example).
_LARGE_PAGES = 128


class LamFailureRules:
    def _build_and_release(self, buffer):
        lam = self.adapter.build_lam(buffer.describe(0, len(buffer)))
        if lam.ok:
            self.adapter.release_lam(lam)

    def failing_builds_between(self, probed, small):
        """``_ROUNDS`` times: NdkBuildLam of ``probed`` with a zero-size mapping buffer (a size
        probe: STATUS_BUFFER_TOO_SMALL), then with the size it needs, then NdkReleaseLam: each
        build after a probe finds the room the one before it had (LAM-ERR-01). Then NdkBuildLam
        of ``small`` and its release, NdkBuildLam of ``_LARGE_PAGES`` pages (the adapter may
        lack the resources; released if built), and ``small`` again: a request refused for want
        of resources leaves no mapping behind (LAM-ST-03, LAM-ERR-01)."""
        for _ in range(_ROUNDS):
            self.adapter.build_lam(probed.describe(0, len(probed)), buffer_size=0)
            self._build_and_release(probed)
        self._build_and_release(small)
        large = getattr(self, "_large_buffer", None)
        if large is None:
            large = self._large_buffer = self.adapter.buffer(_LARGE_PAGES * PAGE_SIZE)
        self._build_and_release(large)
        self._build_and_release(small)
