"""The verbs provider on a real RDMA device (Soft-RoCE in the guest: ctest's
pybindings.statemachine.verbs_on_device). A failure here is a finding about the provider or the
device: it is reported with its rule IDs and the shrunk program, never hidden."""

import os

import pytest

import ndkct
from ndkct.statemachine import check_provider

PROVIDER = os.environ.get("NDKCT_DEVICE_PROVIDER", "verbs")
EXAMPLES = int(os.environ.get("NDKCT_DEVICE_EXAMPLES", "40"))

pytestmark = [
    pytest.mark.device,
    pytest.mark.skipif(not os.path.exists("/dev/infiniband/uverbs0"),
                       reason="no RDMA device here (run through adapters/rxe/device-run)"),
]


def test_fast_registered_region_read_by_the_peer_on_the_device():
    with ndkct.open_adapter(PROVIDER, strict=True) as adapter:
        pair = adapter.loopback_pair()
        memory = adapter.buffer(2 * ndkct.PAGE_SIZE)
        memory.fill(seed=5)
        lam = adapter.build_lam(memory)
        mr = pair.pd.fast_register_mr(pages=2, remote_access=True)
        base = 0x5A00_0000_0000
        pair.a.fast_register(mr, lam.pages, fbo=lam.fbo, length=len(memory),
                             base_virtual_address=base, flags=ndkct.OP_FLAG_ALLOW_REMOTE_READ)
        assert pair.cq.drain(1)[0].status == ndkct.Status.STATUS_SUCCESS
        sink = adapter.buffer(ndkct.PAGE_SIZE)
        sink_mr = pair.pd.register(sink, ndkct.MR_FLAG_ALLOW_LOCAL_WRITE
                                   | ndkct.MR_FLAG_RDMA_READ_SINK)
        pair.b.read(sink_mr.sge(0, 100), base + 8, mr.remote_token)
        assert pair.cq.drain(1)[0].status == ndkct.Status.STATUS_SUCCESS
        assert sink[0:100] == memory[8:108]
        assert adapter.verdict().ok, str(adapter.verdict())


def test_state_machine_on_the_device():
    outcome = check_provider(PROVIDER, max_examples=EXAMPLES, steps=20, settle_timeout=5.0,
                             callback_timeout=10.0)
    print(f"{PROVIDER}: {outcome.examples} examples in {outcome.seconds:.1f} s "
          f"({outcome.examples / outcome.seconds:.2f} examples/s)")
    assert outcome.ok, (f"{PROVIDER} broke {outcome.rules} (shrunk to {outcome.length} steps):"
                        f"\n{outcome.error}\n{outcome.program}")
