"""pytest configuration for the ndkct Python tests.

Markers: ``statemachine`` (the Hypothesis cross-check on the reference provider), ``faulty``
(deliberately faulty providers must be caught), ``device`` (the verbs provider on an RDMA
device; run inside the Soft-RoCE guest). Environment: PYTHONPATH = the build's pybindings
folder; NDKCT_FAULTY_DIR = where libndkct_faulty_*.so are; NDKCT_SEEDS = reference provider
seeds for the state machine (default 1,2,3,4,5).
"""

import os

import pytest


def pytest_configure(config):
    for marker, text in [
            ("statemachine", "the Hypothesis state machine against the reference provider"),
            ("faulty", "deliberately faulty providers caught by the state machine"),
            ("device", "needs an RDMA device (the verbs provider); run in the rxe guest")]:
        config.addinivalue_line("markers", f"{marker}: {text}")


@pytest.fixture
def adapter():
    """A strict adapter of the reference provider: a wrong outcome raises at once."""
    import ndkct
    with ndkct.open_adapter("model:seed=3", strict=True) as a:
        yield a


def faulty_dir():
    return os.environ.get("NDKCT_FAULTY_DIR", "")
