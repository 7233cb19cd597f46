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
