"""Figures from Python, printed (never asserted): Hypothesis examples/s of the cross-check
state machine (and the judged NDK calls an example makes), and NDK calls/s (NdkWrite +
NdkGetCqResults through the harness and the oracle).

    PYTHONPATH=build/pybindings /usr/bin/python3 pybindings/bench/bench.py [--quick]
"""

import sys
import time

import ndkct
from ndkct.statemachine import check_provider


def calls_per_second(provider, seconds):
    with ndkct.open_adapter(provider) as adapter:
        pair = adapter.loopback_pair()
        source, target = adapter.buffer(ndkct.PAGE_SIZE), adapter.buffer(ndkct.PAGE_SIZE)
        src = pair.pd.register(source)
        dst = pair.pd.register(target, ndkct.MR_FLAG_ALLOW_REMOTE_WRITE)
        sge, address, token = src.sge(0, 64), dst.address, dst.remote_token
        calls, start = 0, time.monotonic()
        while time.monotonic() - start < seconds:
            for _ in range(100):
                pair.a.write(sge, address, token, context=1)
                while not pair.cq.poll(1):
                    calls += 1
                calls += 2
        elapsed = time.monotonic() - start
        assert adapter.verdict().ok, adapter.verdict()
    return calls / elapsed


def main():
    quick = "--quick" in sys.argv
    provider = next((a for a in sys.argv[1:] if not a.startswith("--")), "model:seed=1")
    examples = 100 if quick else 500
    # The NDK calls the machine makes through the Python API (each judged by the oracle; the
    # harness's composite calls, loopback_pair and connect_pair, count once).
    calls = [0]
    judged = ndkct.Adapter._judged

    def counting(self, call, status=None):
        calls[0] += 1
        return judged(self, call, status)

    ndkct.Adapter._judged = counting
    try:
        outcome = check_provider(provider, max_examples=examples, steps=30, derandomize=False)
    finally:
        ndkct.Adapter._judged = judged
    print(f"state machine on {provider}: {outcome.examples} examples (<= 30 steps) in "
          f"{outcome.seconds:.1f} s: {outcome.examples / outcome.seconds:.1f} examples/s, "
          f"{calls[0] / outcome.examples:.0f} judged NDK calls per example, "
          f"{calls[0] / outcome.seconds:.0f} calls/s"
          + ("" if outcome.ok else f" (FAILED: {outcome.rules})"))
    rate = calls_per_second(provider, 1.0 if quick else 3.0)
    print(f"NDK calls from Python on {provider} (NdkWrite + NdkGetCqResults, judged): "
          f"{rate / 1000:.1f} k calls/s")
    return 0 if outcome.ok else 1


if __name__ == "__main__":
    sys.exit(main())
