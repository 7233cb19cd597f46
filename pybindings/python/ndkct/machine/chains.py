"""NdkRegisterMr over a chain broken only past Length (issue 13, s11mdl): whole pages of a
chain's first piece, with a hole after it, registered for those pages alone. Only the first
Length bytes must be virtually contiguous, so the registration must succeed (RMR-MDL-04); the
register rule's broken chains are broken inside the range they register. Called from lam.py's
build_lam_before_a_break on the chain it maps, derived from its draws rather than drawn, so that
the stream every other fault is found with stays as it was (a rule of its own moved it: two
faults were then found through other examples, write_drops_last_byte naming RMR-ACC-03). The
C++ machine's command is RegisteredBeforeABreak
(conformance/properties/commands_chains_past_length.cpp)."""

from .. import _ndkct
from .. import strategies as nst
from ..errors import NdkError
from .base import PAGE_SIZE


class ChainRules:
    def register_before_a_break(self, mdl, buffer, offset, first):
        """NdkRegisterMr of the whole pages of ``mdl``'s first piece (``first`` bytes of
        ``buffer`` from ``offset``; the chain goes on past a hole): it must succeed
        (RMR-MDL-04), and the peer's write into the region's last bytes land there. The MR is
        deregistered and closed at once."""
        pair = self.pair
        length = first // PAGE_SIZE * PAGE_SIZE
        if pair is None or length == 0 or not self.usable(pair):
            return
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
