"""NdkFastRegister's NDK_OP_FLAG_READ_FENCE (issue 13, s12fence): a fenced fast registration
starts only after every NdkRead posted earlier on its QP has completed, so its entry never comes
ahead of theirs (FR-FENCE-01; WR-FENCE-01 for any fenced request). Called from memory.py's
fast_register when the drawn Flags carry READ_FENCE: a's read of the pair's target into its sink
is posted just before the registration, and both entries are polled together by the settle that
follows (in batches of poll_style's size). Derived from the drawn Flags, not drawn, so that the
stream every other fault is found with stays as it was. The C++ machine's command is
ReadThenFencedFastRegister (conformance/properties/commands_read_fence.cpp)."""

from .. import _ndkct

#: Bytes the read moves: enough that a device takes a while over it.
_READ_BYTES = 256


class FenceRules:
    def read_before_the_fence(self, pair, flags):
        """With READ_FENCE in ``flags``, NdkRead on a of the pair's target's first bytes into its
        sink (an entry: neither silent nor deferred), right before the fenced registration; a
        read refused inline is followed by the marker (WR-05), as any request."""
        if not flags & _ndkct.OP_FLAG_READ_FENCE:
            return
        link = pair.link
        status = link.a.read(pair.snk.sge(0, _READ_BYTES), pair.tgt.address,
                             pair.tgt.remote_token)
        if not _ndkct.nt_success(status):
            self.marker(pair)
