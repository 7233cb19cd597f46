"""NdkRegisterMr over a chain broken only past Length (issue 13, s11mdl): whole pages of a
buffer, then a hole, registered for those pages alone. Only the first Length bytes must be
virtually contiguous, so the registration must succeed (RMR-MDL-04); the register rule's broken
chains are broken inside the range they register. The C++ machine's command is
RegisteredBeforeABreak (conformance/properties/commands_s11mdl.cpp)."""

from hypothesis import strategies as st
from hypothesis.stateful import rule

from .. import _ndkct
from .. import strategies as nst
from ..errors import NdkError
from .base import PAGE_SIZE

#: Whole pages registered (RMR-MDL-04 is named first for whole pages; a refusal of a partial
#: page is as likely RMR-LEN-03's).
_PAGES = st.integers(1, 2)
#: Bytes of the buffer skipped after them.
_GAP = st.sampled_from([1, 8, PAGE_SIZE])


class ChainRules:
    @rule(pages=_PAGES, gap=_GAP)
    def register_before_a_break(self, pages, gap):
        """NdkRegisterMr of ``pages`` whole pages of a new buffer (from 100 bytes into its
        first page) whose chain goes on past a ``gap``-byte hole: the registration must succeed
        (RMR-MDL-04), and the peer's write into the region's last bytes land there. The MR is
        deregistered and closed at once."""
        pair = self.pair
        if pair is None or not self.usable(pair):  # the first pair was refused (resources)
            return
        length = pages * PAGE_SIZE
        buffer = self.adapter.buffer(4 * PAGE_SIZE)
        offset = 100
        mdl = buffer.with_hole(offset, length, gap, 100)
        try:
            mr = pair.link.pd.create_mr()
        except NdkError:
            return
        status = mr.register(mdl, nst.MR_LW | nst.MR_RW, length=length, check=False)
        self.adapter.check()
        if _ndkct.nt_success(status):
            self.learn_tokens(mr)
            n = 64
            self.transfer(pair, pair.link.b, True, pair.src.sge(0, n),
                          buffer.address + offset + length - n, mr.remote_token, 0)
            mr.deregister(check=False)
        mr.close()
