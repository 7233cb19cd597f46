"""The local token of a fast-register MR read before its first fast registration (issue 13,
s13tok). NdkGetLocalTokenFromMr may be called once NdkInitializeFastRegisterMr completed and
returns the MR's local token (IFR-TOK-01); under AMB-40's from_initialize (the default) local SGEs
with it reach the region of the MR's next fast registration. Called from memory.py: the token is
read when a new fast-register MR's initialization succeeded, and used after that MR's first fast
registration where the draws say so (derived from them, not drawn, so that the stream every
other fault is found with stays as it was). The C++ machine's command is
InitializedTokenSourceWrite (conformance/properties/commands_initialized_tokens.cpp)."""


class TokenRules:
    def read_initialized_token(self, fmr):
        """NdkGetLocalTokenFromMr of a fast-register MR whose initialization just succeeded,
        before any fast registration: kept for its first one (FastMr.initialized_token)."""
        fmr.initialized_token = fmr.mr.local_token

    def write_through_initialized_token(self, pair, fmr, address, offset, count, token):
        """After the MR's first fast registration succeeded (local read is a right of every
        region, FR-FLG-02): its tokens read again, so that the oracle knows both values, then
        a's write of ``count`` bytes at ``offset`` into the region to the pair's target, through
        ``token``, the local token read after the initialization (IFR-TOK-01)."""
        if not self.usable(pair):
            return
        self.learn_tokens(fmr.mr)
        self.transfer(pair, pair.link.a, True, [(address + offset, count, token)],
                      pair.tgt.address, pair.tgt.remote_token, 0)
