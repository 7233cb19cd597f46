"""NdkBuildLam over a decoy-VA MDL (issue 13, s13lamva): an MDL whose virtual address is another
buffer's range (the decoy) while its PFN array lists the mapped buffer's pages. The VA is only a
label for the start of the range (LAM-VA-01): a send through the LAM's logical addresses (the
PD's privileged token) must carry the bytes of the pages the PFNs name, never the decoy's; the
oracle names LAM-VA-01 where the bytes came through the VA's pages. Called from lam.py's
send_from_mapping, derived from its draws rather than drawn, so that the stream every other fault
is found with stays as it was. The C++ machine's command is SendFromDecoyVaMapping
(conformance/properties/commands_decoy_va_mappings.cpp)."""

from .base import PAGE_SIZE


class LamDecoyVaRules:
    def send_from_decoy_va_mapping(self, pair, buffer, offset, count):
        """``buffer``'s range from ``offset`` (at most to its page's end) mapped again through a
        decoy-VA MDL labelled with the pair's source (a buffer of other bytes), then NdkSend on a
        from its first logical page with the privileged token into a receive of the pair's sink
        on b. The mapping is released at once."""
        decoy = pair.source
        n = min(count, PAGE_SIZE - offset % PAGE_SIZE, len(buffer) - offset)
        if n <= 0 or offset + n > len(decoy) or not self.usable(pair):
            return
        mdl = buffer.with_decoy_va(decoy, offset, n)
        lam = self.adapter.build_lam(mdl, length=n)
        if not lam.ok or not lam.pages:
            return
        try:
            link = pair.link
            token = link.pd.privileged_token()
            link.b.receive(pair.snk.sge(0, n))
            link.a.send([(lam.pages[0] + lam.fbo % PAGE_SIZE, n, token)])
            self.settle(pair)
        finally:
            self.adapter.release_lam(lam)
