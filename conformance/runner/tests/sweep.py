#!/usr/bin/python3
"""The harness never crashes on a provider's answer: the directed suite, through the runner,
against providers in which each NDK function in turn answers badly (tests/providers/sweep.cpp:
not_implemented, error, null output, late callback), each run on the tests that call that
function (learnt from a clean run's event stream). It requires, for every function and mode:

- no crash in ndkct's own code (a crash whose deciding frame is in the provider is the
  provider's, and allowed here), and no hang: no timeout at all;
- every failure names a rule (no test with unnamed_failures);
- the runner answers 0 or 1 (2 only when the provider cannot be opened at all, with one line).

usage: sweep.py --build BUILD --work DIR --provider SO [--modes M,...] [--functions F,...]
                [--timeout S] [--jobs N]
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


def run(opts, out, env_value, tests):
    env = dict(os.environ, NDKCT_PATIENCE=str(opts.patience))
    env.pop("NDKCT_SWEEP", None)
    if env_value:
        env["NDKCT_SWEEP"] = env_value
    command = ["/usr/bin/python3", RUNNER, "--build", opts.build, "--out", out, "--provider",
               f"lib:{opts.provider}", "--suites", "directed", "--waivers", "none",
               "--timeout", str(opts.timeout), "--unresponsive-after", "0", "--no-html"]
    if tests:
        command += ["--tests", ",".join(tests)]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, errors="replace")
    return done, time.monotonic() - started


def judge(label, done, out):
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
    p.add_argument("--patience", type=float, default=0.05, help="NDKCT_PATIENCE: how much of "
                   "the harness's waits for what a provider owes (default 0.05: 250 ms for a "
                   "completion, 500 ms for a callback)")
    opts = p.parse_args()
    os.makedirs(opts.work, exist_ok=True)
    started = time.monotonic()
    clean = os.path.join(opts.work, "clean")
    done, _ = run(opts, clean, None, [])
    if done.returncode != 0:
        print(f"the clean run failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
        return 1
    with open(os.path.join(clean, "result.json"), encoding="utf-8") as f:
        baseline = json.load(f)
    callers = {}
    for t in baseline["tests"]:
        for fn in t["functions"]:
            callers.setdefault(fn, []).append(t["id"] or t["test"])
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
        summary, problems = judge(f"{fn}:{mode}", done, out)
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
