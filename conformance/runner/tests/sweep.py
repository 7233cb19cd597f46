#!/usr/bin/python3
"""The harness never crashes on a provider's answer: the directed suite, through the runner,
against providers in which each NDK function in turn answers badly (tests/providers/sweep.cpp:
not_implemented, error, null output, late callback), each run on the tests that call that
function (learnt from a clean run's event stream). It requires, for every function and mode:

- no crash in ndkct's own code (a crash whose deciding frame is in the provider is the
  provider's, and allowed here), and no hang: no timeout at all;
- every failure names a rule (no test with unnamed_failures);
- the runner answers 0 or 1 (2 only when the provider cannot be opened at all, with one line);
- not_implemented: no test that called the function passes or warns, where the function
  answers with a status (GEN-MAND-01: STATUS_NOT_IMPLEMENTED is no answer; the entries that
  return nothing, a count or a token are left out, since what they leave undone may not show:
  NO_STATUS).

usage: sweep.py --build BUILD --work DIR --provider SO [--modes M,...] [--functions F,...]
                [--timeout S] [--jobs N] [--max-tests K] [--patience F]

The whole sweep (every function, every mode, every test that calls it: about 30 minutes on a
2-core machine) is the documented long run; CI runs each mode with --max-tests 6 (the tests
spread over the suites), about a minute each.
Prints a table (function x mode: tests run, verdicts) and every problem; exit 1 on a problem.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
RUNNER = os.path.join(ROOT, "conformance", "runner", "ndkct-run")
MODES = ("not_implemented", "error", "null", "late")


def spread(tests, limit):
    """At most `limit` of the tests (all when 0), taken round-robin over their suites so that
    every kind of test that calls a function is among them."""
    if not limit or len(tests) <= limit:
        return tests
    by_suite = {}
    for t in tests:
        by_suite.setdefault(t.get("suite") or t["test"].split(".")[0], []).append(t)
    out, queues = [], [list(v) for _, v in sorted(by_suite.items())]
    while len(out) < limit and any(queues):
        for q in queues:
            if q and len(out) < limit:
                out.append(q.pop(0))
    return out


def clean_passed(report):
    """Whether an earlier clean run can be reused: it passed its gate."""
    try:
        with open(report, encoding="utf-8") as f:
            return json.load(f)["gate"]["passed"] is True
    except (OSError, ValueError, KeyError, TypeError):
        return False


def run(opts, out, env_value, tests):
    env = dict(os.environ)
    env.pop("NDKCT_SWEEP", None)
    env.pop("NDKCT_PATIENCE", None)
    if env_value:
        # Short waits only where the provider answers badly: the clean run is the baseline and
        # keeps the harness's full waits (a loaded machine must not make it fail).
        env["NDKCT_SWEEP"] = env_value
        env["NDKCT_PATIENCE"] = str(opts.patience)
    command = ["/usr/bin/python3", RUNNER, "--build", opts.build, "--out", out, "--provider",
               f"lib:{opts.provider}", "--suites", "directed", "--waivers", "none",
               "--timeout", str(opts.timeout), "--unresponsive-after", "0", "--no-html"]
    if tests:
        command += ["--tests", ",".join(tests)]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, errors="replace")
    return done, time.monotonic() - started


# Left out of the not_implemented pass check: the entries whose not_implemented answer is no
# status (sweep.cpp: a VOID entry does nothing, a count or token entry returns 0), and the two
# whose model name also stands for their Ex entry, which still works (a test calling
# NdkAcceptEx lists NdkAccept among its functions).
NO_STATUS = {"NdkReleaseLam", "NdkFlush", "NdkArmCq", "NdkGetPrivilegedMemoryRegionToken",
             "NdkGetCqResults", "NdkGetCqResultsEx", "NdkGetRemoteTokenFromMr",
             "NdkGetLocalTokenFromMr", "NdkGetRemoteTokenFromMw", "NdkAccept",
             "NdkCompleteConnect"}


def judge(label, done, out, function=None, mode=None):
    """(summary, problems) of one run."""
    problems = []
    output = done.stdout + done.stderr
    if "Traceback" in output:
        problems.append(f"{label}: the runner raised a traceback")
    if done.returncode == 2:
        lines = [x for x in done.stderr.splitlines() if x.strip()]
        if len(lines) != 1 or not lines[0].startswith("ndkct: error:"):
            problems.append(f"{label}: exit 2 without one error line: {done.stderr[-400:]}")
        return {"refused": lines[-1][:160] if lines else ""}, problems
    if done.returncode not in (0, 1):
        problems.append(f"{label}: runner exit status {done.returncode}")
        return {}, problems
    try:
        with open(os.path.join(out, "result.json"), encoding="utf-8") as f:
            result = json.load(f)
    except (OSError, ValueError) as error:
        problems.append(f"{label}: no result.json ({error})")
        return {}, problems
    for t in result["tests"]:
        name = t["id"] or t["test"]
        if t.get("ndkct_bug"):
            problems.append(f"{label}: {name}: {t['verdict']} in ndkct's own code:\n"
                            + t["message"][:1500])
        elif t["verdict"] == "timeout":
            problems.append(f"{label}: {name}: a hang:\n" + t["message"][:800])
        if (mode == "not_implemented" and function not in NO_STATUS
                and t["verdict"] in ("pass", "warning") and function in t["functions"]):
            problems.append(f"{label}: {name}: {t['verdict']} although {function} answered "
                            "STATUS_NOT_IMPLEMENTED")
        if t.get("unnamed_failures"):
            problems.append(f"{label}: {name}: {t['unnamed_failures']} failure(s) name no rule:\n"
                            + t["message"][:1200])
    return dict(result["counts"], provider_crashes=sum(
        1 for t in result["tests"] if t["verdict"] == "crash" and not t.get("ndkct_bug"))), problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--provider", required=True, help="the sweep provider library")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--functions", default="", help="only these functions (default: every one "
                   "the clean run calls)")
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--max-tests", type=int, default=0, help="at most this many tests per "
                   "function, spread over the test suites (default 0: every test that calls it)")
    p.add_argument("--clean", help="where the clean run lives (default: --work); shared by the "
                   "per-mode runs of CI")
    p.add_argument("--baseline-only", action="store_true", help="only the clean run")
    p.add_argument("--patience", type=float, default=0.05, help="NDKCT_PATIENCE: how much of "
                   "the harness's waits for what a provider owes (default 0.05: 250 ms for a "
                   "completion, 500 ms for a callback)")
    opts = p.parse_args()
    os.makedirs(opts.work, exist_ok=True)
    started = time.monotonic()
    clean = os.path.join(opts.clean or opts.work, "clean")
    exe = os.path.join(opts.build, "conformance", "tests", "conformance_tests")
    report = os.path.join(clean, "result.json")
    if not (os.path.exists(report) and os.path.getmtime(report) > os.path.getmtime(exe)
            and os.path.getmtime(report) > os.path.getmtime(opts.provider)
            and clean_passed(report)):
        done, _ = run(opts, clean, None, [])
        if done.returncode != 0:
            print(f"the clean run failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
            return 1
    if opts.baseline_only:
        print(f"sweep: the clean run is in {clean}")
        return 0
    with open(report, encoding="utf-8") as f:
        baseline = json.load(f)
    callers = {}
    for t in baseline["tests"]:
        for fn in t["functions"]:
            callers.setdefault(fn, []).append(t)
    for fn, tests in callers.items():
        callers[fn] = [t["id"] or t["test"] for t in spread(tests, opts.max_tests)]
    functions = sorted(callers)
    if opts.functions:
        wanted = opts.functions.split(",")
        unknown = [f for f in wanted if f not in callers]
        if unknown:
            print(f"no test calls {', '.join(unknown)} (known: {', '.join(functions)})")
            return 2
        functions = wanted
    modes = opts.modes.split(",")
    jobs = [(fn, mode) for mode in modes for fn in functions]
    print(f"sweep: {len(functions)} functions x {len(modes)} modes = {len(jobs)} runs; "
          f"{len(baseline['tests'])} directed tests, {sum(len(v) for v in callers.values())} "
          f"function calls by test")

    def one(job):
        fn, mode = job
        out = os.path.join(opts.work, f"{fn}-{mode}")
        done, took = run(opts, out, f"{fn}:{mode}", callers[fn])
        summary, problems = judge(f"{fn}:{mode}", done, out, fn, mode)
        return fn, mode, len(callers[fn]), took, summary, problems

    problems, rows = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        for fn, mode, n, took, summary, found in pool.map(one, jobs):
            rows.append((fn, mode, n, took, summary))
            problems += found
            shown = summary.get("refused") or ", ".join(
                f"{k} {v}" for k, v in summary.items() if v)
            print(f"  {fn:<36} {mode:<16} {n:>4} tests {took:6.1f} s  {shown}", flush=True)
    elapsed = time.monotonic() - started
    print(f"sweep: {len(jobs)} runs in {elapsed:.0f} s; "
          f"{sum(r[4].get('provider_crashes', 0) for r in rows)} provider crashes (allowed), "
          f"{len(problems)} problems")
    for problem in problems:
        print("PROBLEM " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
