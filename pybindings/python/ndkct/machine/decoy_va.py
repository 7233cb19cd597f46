"""NdkRegisterMr over a decoy-VA MDL (issue 13, s13va): an MDL whose virtual address is another
buffer's range (the decoy) while its PFN array lists the registered buffer's pages. The VA is
only a label for the region (RMR-VA-03): the peer's write, addressed by the VA, must land in the
pages the PFNs name, never in the decoy; the oracle names RMR-VA-03 where the bytes went through
the VA's pages. Called from memory.py's register on a region the peer writes, derived from its
draws rather than drawn, so that the stream every other fault is found with stays as it was. The
C++ machine's command is RegisteredWithDecoyVa
(conformance/properties/commands_decoy_virtual_addresses.cpp)."""

from .. import _ndkct
from .. import strategies as nst
from ..errors import NdkError


class DecoyVaRules:
    def register_with_decoy_va(self, pair, buffer, offset, length):
        """The same range of ``buffer`` registered again through a decoy-VA MDL labelled with
        the pair's sink (a buffer of other bytes), then the peer's write into it through that
        label. The MR is deregistered and closed at once."""
        decoy = pair.sink
        n = min(length, 4096)
        if n == 0 or offset + n > len(decoy) or not self.usable(pair):
            return
        mdl = buffer.with_decoy_va(decoy, offset, n)
        try:
            mr = pair.link.pd.create_mr()
        except NdkError:
            return
        status = mr.register(mdl, nst.MR_LW | nst.MR_RW, length=n, check=False)
        self.adapter.check()
        if _ndkct.nt_success(status):
            self.learn_tokens(mr)
            self.transfer(pair, pair.link.b, True, pair.src.sge(0, n), decoy.address + offset,
                          mr.remote_token, 0)
            mr.deregister(check=False)
        mr.close()
