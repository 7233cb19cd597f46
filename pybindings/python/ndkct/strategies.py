"""Hypothesis strategies for NDK arguments: flags, sizes, offsets, page counts, limits.

Every strategy draws plain ints, bools, short strings or tuples of them, so that a printed
Hypothesis step is a Python expression that runs again as written. Where a value is relative to
what the adapter advertises (FRMRPageCount, a queue's maximum, MaxCallerData...), the strategy
draws a *kind* ("max", "past", ...) that the machine turns into the number on the adapter under
test: a shrunk program then means the same thing on another provider.

Choices are weighted by repetition: valid values are drawn most of the time, invalid and
undocumented ones now and then (as the C++ RapidCheck commands do), so that most sequences run
to the end of the data path and the invalid calls are mixed in. Hypothesis shrinks towards the
first element of a ``sampled_from``: that is always the ordinary value.
"""

from hypothesis import strategies as st

from . import _ndkct

PAGE_SIZE = _ndkct.PAGE_SIZE
MR_LW = _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE
MR_RR = _ndkct.MR_FLAG_ALLOW_REMOTE_READ
MR_RW = _ndkct.MR_FLAG_ALLOW_REMOTE_WRITE
MR_SINK = _ndkct.MR_FLAG_RDMA_READ_SINK
OP_SILENT = _ndkct.OP_FLAG_SILENT_SUCCESS
OP_FENCE = _ndkct.OP_FLAG_READ_FENCE
OP_SOLICIT = _ndkct.OP_FLAG_SEND_AND_SOLICIT_EVENT
OP_RR = _ndkct.OP_FLAG_ALLOW_REMOTE_READ
OP_LW = _ndkct.OP_FLAG_ALLOW_LOCAL_WRITE
OP_RW = _ndkct.OP_FLAG_ALLOW_REMOTE_WRITE
OP_INLINE = _ndkct.OP_FLAG_INLINE
OP_SINK = _ndkct.OP_FLAG_RDMA_READ_SINK
OP_READ_INVALIDATE = _ndkct.OP_FLAG_RDMA_READ_LOCAL_INVALIDATE
OP_DEFER = _ndkct.OP_FLAG_DEFER


def _flags(documented, undocumented, odd=8):
    """A documented value (the first most likely), or now and then (about 1 in ``odd``) one with
    an undocumented bit set as well (AMB-04, OPF-01: the oracle knows what each call's table
    holds). One draw from one list: Hypothesis' cost per drawn value is a good part of a step's."""
    spoilt = [d | u for u in undocumented for d in documented]
    repeat = max(1, (odd - 1) * len(spoilt) // max(len(documented), 1)) if spoilt else 1
    return st.sampled_from(documented * repeat + spoilt)


# ---- memory registration ----

#: NdkRegisterMr flags: every right alone and combined, the read sink alone and with local write
#: (RMR-SINK-*), the lone remote-write bit 0x4 (AMB-03), and bits no NDK_MR_FLAG_* names.
mr_flags = _flags([
    MR_LW | MR_RR | MR_RW | MR_SINK,
    0,
    MR_LW,
    MR_RR,
    MR_RW,
    MR_LW | MR_SINK,
    MR_SINK,
    MR_RR | MR_LW,
    MR_RW | MR_RR,
    0x4,
], [0x10, 0x100, 0x8000_0000])

#: How an MDL chain describes a buffer: whole, split in two (valid), or broken (RMR-MDL-01,
#: LAM-MDL-01).
chain_kinds = st.sampled_from(["whole", "whole", "whole", "split", "hole", "misaligned"])

#: NdkRegisterMr Length: the chain's bytes, fewer (an odd size), 0, or one past the chain.
register_lengths = st.sampled_from(["chain"] * 6 + ["odd", "zero", "past"])

#: Buffer sizes in pages.
buffer_pages = st.integers(min_value=1, max_value=6)

#: Offsets into a page (first byte offsets): 0 half the time.
page_offsets = st.sampled_from([0] * PAGE_SIZE + list(range(PAGE_SIZE)))

#: NdkBuildLam Length: to the end of the buffer, an odd part of it, 0, or past the chain.
lam_lengths = st.sampled_from(["rest"] * 5 + ["odd", "odd", "zero", "past"])

#: NdkBuildLam *pLAMSize: what the pages need; 8 (one entry) to 1 byte short, 0 with no buffer
#: (the size probe), 0 with a buffer, more than needed (LAM-SIZE-*, LAM-OUT-02).
lam_sizes = st.sampled_from(["exact"] * 5 + ["short", "short1", "probe", "zero", "roomy"])

# ---- fast registration ----

#: NdkInitializeFastRegisterMr AdapterPageCount: a small count, the guaranteed 16, the adapter's
#: FRMRPageCount, one past it, further past it (IFR-APC-01, -02, -04: a provider may refuse
#: those with STATUS_IMPLEMENTATION_LIMIT, or must honour them), far beyond any adapter, 0 (AMB-09).
frmr_pages = st.sampled_from([4, 1, 2, 8, 16, 17, 32, "frmr", "frmr", "frmr+1", "over", "huge",
                              0])

#: Which of a pair's fast-register MRs (0, 1: the two it starts with, with and without remote
#: access; counting round when it has fewer).
which_fmr = st.sampled_from([0, 0, 0, 0, 1, 2, 3])

#: NdkInitializeFastRegisterMr: a new MR mostly; "again" initializes one of the pair's MRs
#: once more (IFR-ST-04, AMB-30); "plain" an MR made for NdkRegisterMr (AMB-16).
ifr_targets = st.sampled_from(["new"] * 6 + ["again", "plain"])

#: NdkFastRegister AdapterPageCount: the LAM's pages, exactly what the MR was initialized for
#: (the LAM's pages repeated: IFR-APC-01, FR-APC-03), one past that (FR-APC-02), fewer, none.
fr_page_counts = st.sampled_from(["lam"] * 4 + ["initialized", "initialized", "past", "fewer",
                                                "zero"])

#: NdkFastRegister FBO: the LAM's, 0, another offset in the page, a page or more (FR-FBO-02).
fr_fbos = st.sampled_from(["lam"] * 6 + ["zero", "other", "page"])

#: NdkFastRegister Length: the mapping's bytes, the most the pages hold (FR-LEN-01), past that
#: (FR-LEN-02), fewer, 0.
fr_lengths = st.sampled_from(["mapping"] * 4 + ["max", "max", "past", "short", "zero"])

#: NdkFastRegister BaseVirtualAddress: congruent to FBO (FR-ALIGN-01), off by some bytes, or 0
#: (FR-ALIGN-02: valid only with FBO 0).
fr_bases = st.sampled_from(["congruent"] * 6 + ["misaligned", "misaligned", "zero"])

#: NdkFastRegister flags: the rights it can grant, the read sink (FR-SINK-*, AMB-01), silent,
#: fenced; now and then a bit its table does not list (INLINE, SOLICIT, 0x400, 0x80000000).
fast_register_flags = _flags([
    OP_RR | OP_RW,
    0,
    OP_LW,
    OP_RR,
    OP_RW,
    OP_LW | OP_RR,
    OP_LW | OP_SINK,
    OP_SINK,
    OP_RR | OP_RW | OP_SINK,
    OP_RR | OP_SILENT,
    OP_LW | OP_SILENT,
    OP_RR | OP_FENCE,
], [OP_INLINE, OP_SOLICIT, 0x400, 0x8000_0000])

# ---- work requests ----

#: What follows a registration that succeeded, in the same step (so that a fault in what the
#: registration did shows within one step): the peer writes or reads the region, or (fast
#: registrations) it is the local source or read sink of a request, or nothing.
region_uses = st.sampled_from(["peer_write", "peer_read", "local_source", "local_sink", "none"])

#: A CQ arm's trigger: a send (with the solicit flag or not), or now and then a request that
#: completes in error (CQ-NOT-11).
notify_causes = st.sampled_from(["send", "solicited_send", "send", "solicited_send", "error"])

#: Which token a request names for its remote side: the region's remote token mostly, else its
#: local token, another region's remote token, or a token nobody was given (TOK-*).
remote_tokens = st.sampled_from(["remote"] * 12 + ["local", "other", "stray"])

#: Which token a local SGE names: the region's local token mostly, else its remote token.
local_tokens = st.sampled_from(["local"] * 12 + ["remote", "stray"])

#: NdkWrite flags (its table: SILENT, FENCE, DEFER; INLINE is AMB-13).
write_flags = _flags([0, 0, OP_SILENT, OP_FENCE, OP_INLINE], [OP_LW, OP_RR, 0x400, 0x8000_0000])

#: NdkRead flags (SILENT, FENCE, RDMA_READ_LOCAL_INVALIDATE, DEFER).
read_flags = _flags([0, 0, OP_SILENT, OP_FENCE], [OP_INLINE, OP_SOLICIT, 0x400, 0x8000_0000])

#: NdkSend flags (SILENT, FENCE, SEND_AND_SOLICIT_EVENT, INLINE, DEFER).
send_flags = _flags([0, 0, OP_SILENT, OP_SOLICIT, OP_FENCE, OP_INLINE, OP_SOLICIT | OP_INLINE],
                    [OP_RR, OP_LW, 0x400, 0x8000_0000])

#: NdkBind flags (REMOTE_READ, REMOTE_WRITE, SILENT, FENCE, DEFER).
bind_flags = _flags([OP_RR | OP_RW, OP_RR, OP_RW, 0, OP_RR | OP_SILENT, OP_RW | OP_FENCE],
                    [OP_INLINE, OP_LW, 0x400, 0x8000_0000])

#: NdkInvalidate flags (SILENT, FENCE, DEFER).
invalidate_flags = _flags([0, 0, OP_SILENT, OP_FENCE], [OP_RR, OP_INLINE, 0x400, 0x8000_0000])

#: How many SGEs a local side is split into (0: an empty list, a zero-byte message).
sge_counts = st.sampled_from([1, 1, 1, 2, 3, 0])

#: Transfer lengths in bytes: 64, 1, 8, a page, a page and a byte, or any up to 3 pages.
lengths = st.sampled_from([64, 1, 8, 4096, 4097] * (3 * PAGE_SIZE // 5) +
                          list(range(1, 3 * PAGE_SIZE + 1)))

#: Where in a fast-registered region an access starts: from its start, or ending at its end
#: (the last pages of a long registration), plus an offset.
region_ends = st.sampled_from(["start", "start", "end"])

#: What closes a chain of DEFER requests (DEFER-*, FR-DEFER-02): a request without DEFER, or a
#: fast registration refused inline (remote rights on a local-only MR: the deferred requests
#: before it must still complete).
chain_ends = st.sampled_from(["write", "send", "refused_fast_register"])

#: The DEFER requests of a chain (1 to 3).
deferred_kinds = st.lists(st.sampled_from(["write", "read", "send", "fast_register",
                                           "invalidate"]), min_size=1, max_size=3)

#: NdkArmCq types.
arm_types = st.sampled_from([_ndkct.CQ_NOTIFY_ANY, _ndkct.CQ_NOTIFY_SOLICITED,
                             _ndkct.CQ_NOTIFY_ERRORS])

#: NdkGetCqResults or NdkGetCqResultsEx (None: the one the adapter's version names), and how
#: many entries each call may return (CQ-RES-*, CQ-GET-*).
poll_calls = st.sampled_from([None, False, True])
poll_batches = st.sampled_from([64, 1, 2, 16])

# ---- objects and limits ----

#: NdkQueryAdapterInfo buffer sizes: full, the old layout, one short of each, small, none.
adapter_info_sizes = st.sampled_from([_ndkct.ADAPTER_INFO_SIZE, _ndkct.ADAPTER_INFO_V1_SIZE,
                                      _ndkct.ADAPTER_INFO_SIZE - 1, _ndkct.ADAPTER_INFO_V1_SIZE - 1,
                                      8, 0])

#: Queue depths, sometimes beyond any adapter's limits (CQP-LIM-*).
queue_depths = st.sampled_from([16, 1, 64, 1 << 20])

#: A QP limit to create at ("max") or one past ("past") the adapter's maximum, or at 0
#: (CQP-LIM-01..07, AMB-27): "" leaves every value ordinary.
qp_limit_fields = st.sampled_from(["", "receive_depth", "initiator_depth", "receive_sge",
                                   "initiator_sge", "inline_size"])
limit_kinds = st.sampled_from(["past", "max", "zero"])

#: A QP whose limits are then used: each queue's depth, each SGE count and the inline size
#: small or at the adapter's maximum (CQP-DEPTH-*, CQP-SGE-*, CQP-INL-01).
small_depths = st.sampled_from([2, 1, 3, 4])
sge_limits = st.sampled_from([1, 2, "max"])
inline_sizes = st.sampled_from([0, 16, "max"])

#: CQ depths at the adapter's limit or past it, 0, ordinary (CQ-*, CQ-RESIZE-02).
cq_depth_kinds = st.sampled_from(["ordinary", "max", "past", "zero", "one"])
cq_resizes = st.sampled_from(["none", "none", "bigger", "max", "past", "zero"])

#: SRQ depths and SGE counts at or past the adapter's limits (SRQ-*, CQP-SRQ-*).
srq_kinds = st.sampled_from(["ordinary", "max_depth", "past_depth", "max_sge", "past_sge",
                             "zero_depth"])

#: What stays open when a PD or a CQ is closed (CLOSE-02): its MR, MW or QP; "qp_on_cq": a QP of
#: a new CQ, which is closed.
antecedent_successors = st.sampled_from(["mr", "mw", "qp", "qp_on_cq"])

# ---- connections ----

#: (IRD, ORD) asked for in NdkConnect or NdkAccept: usual, none, small and uneven, the usual
#: adapter maximum, beyond it (capped, CONN-RL-01).
read_limits = st.sampled_from([(4, 4), (0, 0), (1, 2), (2, 1), (16, 16), (17, 1 << 16)])

#: Private data sizes, relative to MaxCallerData / MaxCalleeData: none, a few bytes, the most
#: the adapter takes, one past it (CONN-28, CONN-PD-*).
private_data_kinds = st.sampled_from([5, 0, 1, 16, "max", "max", "past"])

#: NdkGetConnectionData buffer lengths: None passes NULL (a probe for the size, RDS); "exact"
#: and "short" are relative to the private data the peer sent.
connection_data_buffers = st.sampled_from([None, 64, "exact", "short", 0, 1, 4, 15, 16])

#: How a handshake ends: accepted (NdkAccept or NdkAcceptEx), rejected, or the connecting side
#: giving up (its close cancels the connect, CLOSE-08); "disconnect": accepted, then each side
#: disconnects.
handshake_ends = st.sampled_from(["accept", "accept", "accept_ex", "disconnect", "reject",
                                  "give_up"])

#: NdkGetLocalAddress / NdkGetPeerAddress buffer lengths: room for any address, exactly an
#: IPv4 one, too small.
address_buffers = st.sampled_from([128, 16, 4, 0])

# ---- callbacks ----

#: What a consumer does inside a CQ notification callback: an NDK call (GEN-IRQL-01; s11frq:
#: NdkFastRegister, FR-IRQL-01), or close the CQ (CLOSE-07).
calls_in_callbacks = st.sampled_from(["register_mr", "initialize_fast_register_mr", "create_qp",
                                      "create_mr", "close_cq", "fast_register"])
