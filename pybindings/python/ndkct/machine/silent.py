"""NdkFastRegister's NDK_OP_FLAG_SILENT_SUCCESS when the registration fails (issue 13,
s13silent): only a success makes no entry; "requests that fail do generate an event in the
completion queue" (FR-SILENT-02). From the CQ alone a dropped error entry and a wrongful silent
success look the same, so after a silent registration that grants remote read the peer reads
its first bytes through the MR's remote token, before the settle that follows: a read that
fails shows the registration did not take effect, and the oracle then names a missing entry
FR-SILENT-02 (a silent success would have let the read through). Called from memory.py's
fast_register for arguments that describe a region (the LAM's pages or the MR's count, an FBO in
the first page, a Length the pages hold, a base congruent to the FBO: a registration that fails
then fails for the MR's state, e.g. one still valid, AMB-30, not for an argument whose own rule
the read would overtake); derived from the drawn Flags, not drawn, so that the stream every
other fault is found with stays as it was. The C++ machine's command is SilentFastRegisterOverValid
(conformance/properties/commands_silent_failure.cpp)."""

from .. import _ndkct

#: Bytes the peer reads: the region's first ones (FR-LEN-03: never past its end).
_READ_BYTES = 64


class SilentRules:
    def read_through_a_silent_registration(self, pair, fmr, status, flags, address, length):
        """After an NdkFastRegister that returned STATUS_SUCCESS with SILENT_SUCCESS and remote
        read in ``flags`` (on an MR initialized with remote access, FR-ACC-01), b's NdkRead of
        [address, +min(length, 64)) into the pair's sink through the MR's remote token, read
        after the call returned (FR-TOK-01). Its entry is polled by the settle that follows."""
        if not _ndkct.nt_success(status) or not flags & _ndkct.OP_FLAG_SILENT_SUCCESS:
            return
        if not flags & _ndkct.OP_FLAG_ALLOW_REMOTE_READ or not fmr.remote_access or length <= 0:
            return
        n = min(length, _READ_BYTES)
        pair.link.b.read(pair.snk.sge(0, n), address, fmr.mr.remote_token)
