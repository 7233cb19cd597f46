"""Every page of a fast registration backs it, the last one too (issue 13, s14apc):
AdapterPageCount is the number of AdapterPageArray entries the provider reads, each PAGE_SIZE
bytes, and the region's backing is those pages (FR-APC-01). A provider that reads fewer entries
fails an access that reaches the region's last page; from that failure alone the oracle cannot
tell a short region from tokens or rights that fail everywhere, so an access that reaches the
last page is preceded by the same access at the region's start: the same request succeeding
there and failing in the last page names FR-APC-01 first. No rule of its own (a rule would move
every fault's draws): data.py's peer_access_fast_registered and local_use_fast_registered call
it for their accesses that reach the region's last page with a token and rights meant to work;
derived, not drawn. The C++ machine's command is LastPageAfterFirst
(conformance/properties/commands_fast_register_page_counts.cpp); the directed tests are
conformance/tests/bites_s14apc_test.cpp's."""

from .. import _ndkct
from .base import PAGE_SIZE

#: The rights an access of each kind relies on in a fast-registered region's Flags.
_NEEDS = {
    "peer_write": _ndkct.OP_FLAG_ALLOW_REMOTE_WRITE,
    "peer_read": _ndkct.OP_FLAG_ALLOW_REMOTE_READ,
    "source": 0,  # local read needs no flag (FR-FLG-02)
    "sink": _ndkct.OP_FLAG_ALLOW_LOCAL_WRITE | _ndkct.OP_FLAG_RDMA_READ_SINK,
    "receive": _ndkct.OP_FLAG_ALLOW_LOCAL_WRITE,
}


class PageCountRules:
    def start_before_last_page(self, pair, fmr, kind, offset, length, access):
        """``access(at)`` makes the drawn access (of ``kind``, ``length`` bytes) at region offset
        ``at``; before the drawn one, at ``offset``, it is made at offset 0 when the drawn one
        reaches the page the region's Length ends in while one from the start stays in an
        earlier page, and the region's Flags grant the access (the token is the caller's to
        choose right: only the MR's own token of the kind is passed here)."""
        if fmr.length == 0 or not self.usable(pair):
            return
        need = _NEEDS[kind]
        if fmr.flags & need != need:
            return
        fbo = fmr.base % PAGE_SIZE
        last = (fbo + fmr.length - 1) // PAGE_SIZE
        reached = (fbo + offset + length - 1) // PAGE_SIZE
        from_start = (fbo + length - 1) // PAGE_SIZE
        if reached == last and from_start < reached:
            access(0)
