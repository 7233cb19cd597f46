"""The Hypothesis cross-check against the reference provider under several seeds: the model
and the provider built on it must agree on every step."""

import os

import pytest

from ndkct.statemachine import check_provider

SEEDS = [int(s) for s in os.environ.get("NDKCT_SEEDS", "1,2,3,4,5").split(",")]
EXAMPLES = int(os.environ.get("NDKCT_EXAMPLES", "60"))


@pytest.mark.statemachine
@pytest.mark.parametrize("seed", SEEDS)
def test_reference_provider_agrees_with_the_oracle(seed):
    outcome = check_provider(f"model:seed={seed}", max_examples=EXAMPLES, steps=30)
    print(f"model:seed={seed}: {outcome.examples} examples in {outcome.seconds:.1f} s "
          f"({outcome.examples / outcome.seconds:.1f} examples/s)")
    assert outcome.ok, f"{outcome.error}\n{outcome.program}"
    assert outcome.examples >= EXAMPLES


class LateCallback(AssertionError):
    """Stands in for a ViolationError the provider's timing made appear once."""
    rules = ["GEN-ASYNC-03"]


@pytest.mark.statemachine
def test_a_failure_that_does_not_replay_keeps_its_rules(monkeypatch):
    """A timing-dependent fault may not fail again when Hypothesis replays the shrunk example
    (Hypothesis then raises Flaky); the outcome still names the rules first broken."""
    from ndkct.statemachine import NdkMachine
    original = NdkMachine.teardown
    fired = []

    def teardown_failing_once(self):
        original(self)
        if not fired:
            fired.append(True)
            raise LateCallback("a completion callback after the call returned a final status")

    monkeypatch.setattr(NdkMachine, "teardown", teardown_failing_once)
    outcome = check_provider("model:seed=1", max_examples=20, steps=5)
    assert not outcome.ok and outcome.flaky
    assert outcome.rules == ["GEN-ASYNC-03"], repr(outcome.error)
