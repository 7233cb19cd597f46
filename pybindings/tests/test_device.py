"""The verbs provider on a real RDMA device (Soft-RoCE in the guest: ctest's
pybindings.statemachine.verbs_on_device). A failure here is a finding about the provider or the
device: it is reported with its rule IDs and the shrunk program, never hidden. Findings already
known are waived the project's way: a waiver in conformance/waivers whose identity matches the
provider and whose ``tests`` name this test lists the rules that then fail no example (each met
is printed)."""

import fnmatch
import os
import pathlib

import pytest

import ndkct
from ndkct.statemachine import check_provider

PROVIDER = os.environ.get("NDKCT_DEVICE_PROVIDER", "verbs")
EXAMPLES = int(os.environ.get("NDKCT_DEVICE_EXAMPLES", "40"))
TEST_ID = "pybindings.statemachine.verbs_on_device"
WAIVERS = pathlib.Path(__file__).resolve().parents[2] / "conformance/waivers"

pytestmark = [
    pytest.mark.device,
    pytest.mark.skipif(not os.path.exists("/dev/infiniband/uverbs0"),
                       reason="no RDMA device here (run through adapters/rxe/device-run)"),
]


def stanzas(text):
    """The waivers of a file as dicts of their fields (conformance/waivers/README.md: 'field:
    value' lines, continuation lines start with white space, a blank line ends a waiver)."""
    current, last = {}, None
    for raw in text.splitlines() + [""]:
        if raw.lstrip().startswith("#"):
            continue
        if not raw.strip():
            if current:
                yield current
            current, last = {}, None
        elif raw[0] in " \t" and last:
            current[last] += " " + raw.strip()
        else:
            key, _, value = raw.partition(":")
            last = key.strip().lower()
            current[last] = value.strip()


def waived_rules(adapter):
    """The rules of the waivers that apply to this provider and this test."""
    name, info = adapter.identity["name"], adapter.info

    def number_matches(value, actual):
        return value in (None, "", "*") or int(value, 0) == actual

    rules = set()
    for path in sorted(WAIVERS.glob("*.txt")):
        for w in stanzas(path.read_text()):
            tests = w.get("tests", "").replace(",", " ").split()
            if (fnmatch.fnmatchcase(name, w.get("provider", ""))
                    and number_matches(w.get("vendor"), info["vendor_id"])
                    and number_matches(w.get("device"), info["device_id"])
                    and any(fnmatch.fnmatchcase(TEST_ID, t) for t in tests)):
                rules |= set(w.get("rules", "").replace(",", " ").split())
    return rules


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
    with ndkct.open_adapter(PROVIDER) as adapter:
        waived = waived_rules(adapter)
    outcome = check_provider(PROVIDER, max_examples=EXAMPLES, steps=20, settle_timeout=5.0,
                             callback_timeout=10.0, shrink_seconds=120, waived=waived)
    print(f"{PROVIDER}: {outcome.examples} examples in {outcome.seconds:.1f} s "
          f"({outcome.examples / outcome.seconds:.2f} examples/s); waived rules "
          f"{sorted(waived)}; waived violations met: {outcome.waived}")
    assert outcome.ok, (f"{PROVIDER} broke {outcome.rules} (shrunk to {outcome.length} steps):"
                        f"\n{outcome.error}\n{outcome.program}")
