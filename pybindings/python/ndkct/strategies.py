"""Hypothesis strategies for NDK arguments: flags, sizes, offsets, page counts.

Every strategy draws plain ints, bools or short strings, so that a printed Hypothesis step is a
Python expression that runs again as written.
"""

from hypothesis import strategies as st

from . import _ndkct

PAGE_SIZE = _ndkct.PAGE_SIZE

#: NdkRegisterMr flags: every right alone, common pairs, and the read sink.
mr_flags = st.sampled_from([
    0,
    _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE,
    _ndkct.MR_FLAG_ALLOW_REMOTE_READ,
    _ndkct.MR_FLAG_ALLOW_REMOTE_WRITE,
    _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE | _ndkct.MR_FLAG_RDMA_READ_SINK,
    _ndkct.MR_FLAG_ALLOW_REMOTE_READ | _ndkct.MR_FLAG_ALLOW_LOCAL_WRITE,
    _ndkct.MR_FLAG_ALLOW_REMOTE_WRITE | _ndkct.MR_FLAG_ALLOW_REMOTE_READ,
])

#: NdkFastRegister flags: the rights a fast registration can grant, sometimes silent.
fast_register_flags = st.sampled_from([
    0,
    _ndkct.OP_FLAG_ALLOW_LOCAL_WRITE,
    _ndkct.OP_FLAG_ALLOW_REMOTE_READ,
    _ndkct.OP_FLAG_ALLOW_REMOTE_WRITE,
    _ndkct.OP_FLAG_ALLOW_REMOTE_READ | _ndkct.OP_FLAG_ALLOW_REMOTE_WRITE,
    _ndkct.OP_FLAG_ALLOW_LOCAL_WRITE | _ndkct.OP_FLAG_ALLOW_REMOTE_READ,
    _ndkct.OP_FLAG_ALLOW_REMOTE_READ | _ndkct.OP_FLAG_SILENT_SUCCESS,
])

#: Initiator flags for writes and reads (silent success included).
rdma_flags = st.sampled_from([0, 0, _ndkct.OP_FLAG_SILENT_SUCCESS, _ndkct.OP_FLAG_READ_FENCE])

#: How an MDL chain describes a buffer: whole, split in two (valid), or broken (RMR-MDL-01).
chain_kinds = st.sampled_from(["whole", "split", "hole", "misaligned"])

#: Buffer sizes in pages.
buffer_pages = st.integers(min_value=1, max_value=6)

#: Which of a pair's fast-register MRs (0, 1: the two it starts with, with and without remote
#: access; the last when it has fewer).
which_fmr = st.integers(min_value=0, max_value=3)

#: Fast-register MR sizes in pages, around the guaranteed 16 (IFR-APC-04).
frmr_pages = st.sampled_from([1, 2, 4, 8, 16, 17, 32])

#: Offsets into a page (first byte offsets).
page_offsets = st.one_of(st.just(0), st.integers(min_value=0, max_value=PAGE_SIZE - 1))

#: Transfer lengths in bytes.
lengths = st.one_of(st.sampled_from([1, 8, 64, 4096, 4097]), st.integers(1, 3 * PAGE_SIZE))

#: NdkQueryAdapterInfo buffer sizes: full, the old layout, too small, none.
adapter_info_sizes = st.sampled_from([_ndkct.ADAPTER_INFO_SIZE, _ndkct.ADAPTER_INFO_V1_SIZE,
                                      8, 0])

#: Queue depths, sometimes beyond any adapter's limits (CQP-LIM-*).
queue_depths = st.sampled_from([1, 16, 64, 1 << 20])

#: A QP limit to create at (False) or one past (True) the adapter's maximum (CQP-LIM-01..06):
#: "" leaves every value ordinary.
qp_limit_fields = st.sampled_from(["", "receive_depth", "initiator_depth", "receive_sge",
                                   "initiator_sge", "inline_size"])

#: What stays open when a PD or a CQ is closed (CLOSE-02): its MR, MW or QP; "qp_on_cq": a QP of
#: a new CQ, which is closed.
antecedent_successors = st.sampled_from(["mr", "mw", "qp", "qp_on_cq"])

#: (IRD, ORD) asked for in NdkConnect or NdkAccept: usual, none, small and uneven, the usual
#: adapter maximum, beyond it (capped, CONN-RL-01).
read_limits = st.sampled_from([(4, 4), (0, 0), (1, 2), (2, 1), (16, 16), (17, 1 << 16)])

#: Private data lengths, both ways (within MaxCallerData, 56 or more on every adapter).
private_data_lengths = st.sampled_from([0, 1, 5, 16, 56])

#: NdkGetConnectionData buffer lengths: None passes NULL (a probe for the size, RDS).
connection_data_buffers = st.sampled_from([None, 0, 1, 4, 15, 16, 64])

#: What a consumer does inside a CQ notification callback: an NDK call (GEN-IRQL-01), or close
#: the CQ (CLOSE-07).
calls_in_callbacks = st.sampled_from(["register_mr", "initialize_fast_register_mr", "create_qp",
                                      "create_mr", "close_cq"])
