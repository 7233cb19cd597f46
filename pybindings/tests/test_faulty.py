"""Deliberately faulty providers (conformance/faulty: the reference provider with one rule
broken) must be caught by the state machine, by their rule ID; the no-fault control must pass;
a shrunk failure must replay as a Python program."""

import os
import subprocess
import sys

import pytest

from ndkct.statemachine import check_provider

# fault -> rule IDs any of which the oracle must name. The faults the machine catches within a
# few seconds each; the others it catches (or not) only after minutes of examples are listed
# with their figures in README.md and are not part of this CI test.
CAUGHT = {
    "ai_frmr_page_count_8": ["AI-02"],
    "callback_after_success": ["GEN-ASYNC-03"],
    "callback_twice": ["GEN-ASYNC-01"],
    "cancelled_as_success": ["FLS-02"],
    "cq_wrong_request_context": ["CQ-RES-05"],
    "fr_misaligned_base": ["FR-ALIGN-01"],
    "fr_returns_pending": ["FR-ST-03"],
    "ifr_limit_below_16": ["IFR-APC-04"],
    "lam_size_not_written": ["LAM-SIZE-04"],
    "mr_noncontiguous_mdl": ["RMR-MDL-01"],
    "mw_wrong_object_type": ["GEN-CREATE-06"],
    "null_dispatch_member": ["GEN-MAND-01"],
    "provider_error_code": ["CQ-RES-04"],
    "qp_output_while_pending": ["GEN-CREATE-04"],
    "receive_bytes_zero": ["CQ-RES-01"],
    "wrong_header_version": ["VER-03"],
}


def library(fault):
    d = os.environ.get("NDKCT_FAULTY_DIR", "")
    path = os.path.join(d, f"libndkct_faulty_{fault}.so")
    if not os.path.exists(path):
        pytest.skip(f"{path} is not built")
    return "lib:" + path


@pytest.mark.faulty
@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_faulty_provider_is_caught(fault):
    outcome = check_provider(library(fault), max_examples=200, steps=25)
    assert not outcome.ok, f"{fault}: not caught in {outcome.examples} examples"
    print(f"{fault}: caught by {outcome.rules} after {outcome.examples} examples, shrunk to "
          f"{outcome.length} steps, {outcome.seconds:.1f} s"
          f"{' (flaky: the replay did not fail again)' if outcome.flaky else ''}\n"
          f"{outcome.program}")
    assert set(outcome.rules) & set(CAUGHT[fault]), f"{fault}: {outcome.error}"


@pytest.mark.faulty
def test_no_fault_control_passes():
    outcome = check_provider(library("none"), max_examples=60, steps=30)
    assert outcome.ok, f"{outcome.error}\n{outcome.program}"


@pytest.mark.faulty
def test_shrunk_program_replays_the_failure(tmp_path):
    outcome = check_provider(library("cancelled_as_success"), max_examples=200, steps=25)
    assert not outcome.ok and "FLS-02" in outcome.rules
    script = tmp_path / "replay.py"
    script.write_text(outcome.program)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=os.environ.copy())
    print(outcome.program)
    assert run.returncode != 0, "the replayed program passed"
    assert "ViolationError" in run.stderr and "FLS-02" in run.stderr, run.stderr
