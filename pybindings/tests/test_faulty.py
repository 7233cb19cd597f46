"""Deliberately faulty providers (conformance/faulty: the reference provider with one rule
broken) must be caught by the state machine, by their rule ID, with a short shrunk program;
the no-fault control must pass; shrunk failures must replay as Python programs."""

import os
import subprocess
import sys

import pytest

from ndkct.statemachine import check_provider

# fault -> rule IDs any of which the oracle must name: every fault of conformance/faulty.
CAUGHT = {
    "ai_frmr_page_count_8": ["AI-02"],
    "ai_no_required_size": ["AI-05"],
    "callback_after_success": ["GEN-ASYNC-03"],
    "callback_twice": ["GEN-ASYNC-01"],
    "callback_wrong_context": ["GEN-CB-03"],
    "cancelled_as_success": ["FLS-02"],
    "close_early": ["CLOSE-02"],
    "close_keeps_connect": ["CLOSE-08"],
    "connection_data_overrun": ["CONN-PD-03"],
    "cq_wrong_request_context": ["CQ-RES-05"],
    "dispatch_reread": ["GEN-CREATE-05"],
    "fr_entry_after_inline_failure": ["WR-05"],
    "fr_local_write_as_remote": ["FR-ACC-02"],
    "fr_misaligned_base": ["FR-ALIGN-01"],
    "fr_remote_on_local_mr": ["FR-ACC-01"],
    "fr_returns_pending": ["FR-ST-03"],
    "ifr_limit_below_16": ["IFR-APC-04"],
    "irql_waits_for_callback": ["GEN-IRQL-01"],
    "lam_size_not_written": ["LAM-SIZE-04"],
    "mr_noncontiguous_mdl": ["RMR-MDL-01"],
    "mw_wrong_object_type": ["GEN-CREATE-06"],
    "notification_outlives_close": ["CLOSE-07"],
    "null_dispatch_member": ["GEN-MAND-01"],
    "provider_error_code": ["CQ-RES-04"],
    "qp_clamps_depth": ["CQP-LIM-06"],
    "qp_output_while_pending": ["GEN-CREATE-04"],
    "read_limits_not_lowered": ["CONN-RL-02"],
    "receive_bytes_zero": ["CQ-RES-01"],
    "silent_write_entry": ["WR-SILENT-01"],
    "write_drops_last_byte": ["WRT-01"],
    "write_reported_as_read": ["CQ-RES-03"],
    "wrong_header_version": ["VER-03"],
}

# The CI budget (the whole test in about a minute and a half on 2 cores): 200 examples of at
# most 10 steps (so that a shrunk program has at most 10); a pending callback missing after 1 s
# (the faulty providers are the reference provider: theirs come within milliseconds; the
# faults that never call back, callback_wrong_context and close_keeps_connect, cost that much
# per replay); shrinking stops after 4 s (irql_waits_for_callback blocks 2 s in every replay).
SETTINGS = dict(max_examples=200, steps=10, callback_timeout=1.0, shrink_seconds=4)
MAX_STEPS = 10

_outcomes = {}


def library(fault):
    d = os.environ.get("NDKCT_FAULTY_DIR", "")
    path = os.path.join(d, f"libndkct_faulty_{fault}.so")
    if not os.path.exists(path):
        pytest.skip(f"{path} is not built")
    return "lib:" + path


def outcome_of(fault):
    """The state machine's outcome on the fault's provider, looking for the fault's rules (a
    failure by another rule, which a fault may cause too, neither stops the search nor takes
    over the shrinking); run once per test session. A fault whose violation shows on the
    provider's own thread (a stray callback) can show a step later when Hypothesis replays the
    example under load (``flaky``: the rules, but no program): then a new search, at most
    twice more."""
    if fault not in _outcomes:
        outcome = check_provider(library(fault), focus=CAUGHT[fault], **SETTINGS)
        for _ in range(2):
            if not outcome.flaky:
                break
            outcome = check_provider(library(fault), focus=CAUGHT[fault], derandomize=False,
                                     **SETTINGS)
        _outcomes[fault] = outcome
    return _outcomes[fault]


@pytest.mark.faulty
@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_faulty_provider_is_caught(fault):
    outcome = outcome_of(fault)
    assert not outcome.ok, f"{fault}: not caught in {outcome.examples} examples"
    print(f"{fault}: caught by {outcome.rules} after {outcome.found_after} examples, shrunk to "
          f"{outcome.length} steps ({outcome.examples} examples, {outcome.seconds:.1f} s)"
          f"{' (flaky: the replay did not fail the same way)' if outcome.flaky else ''}\n"
          f"{outcome.program}")
    assert set(outcome.rules) & set(CAUGHT[fault]), f"{fault}: {outcome.error}"
    assert 1 <= outcome.length <= MAX_STEPS, outcome.program


@pytest.mark.faulty
def test_no_fault_control_passes():
    outcome = check_provider(library("none"), max_examples=60, steps=30,
                             callback_timeout=SETTINGS["callback_timeout"])
    assert outcome.ok, f"{outcome.error}\n{outcome.program}"


# A data-path fault, one caught through a hook inside a CQ notification callback, one caught
# during a connection handshake.
@pytest.mark.faulty
@pytest.mark.parametrize("fault", ["cancelled_as_success", "close_early",
                                   "connection_data_overrun"])
def test_shrunk_program_replays_the_failure(tmp_path, fault):
    outcome = outcome_of(fault)
    rule = CAUGHT[fault][0]
    assert not outcome.ok and rule in outcome.rules
    script = tmp_path / "replay.py"
    script.write_text(outcome.program)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=os.environ.copy())
    print(outcome.program)
    assert run.returncode != 0, "the replayed program passed"
    assert "ViolationError" in run.stderr and rule in run.stderr, run.stderr
