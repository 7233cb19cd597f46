#!/usr/bin/python3
"""Device fault sweep: the directed suite's tests on the verbs provider, with the N-th call of
one libibverbs / librdmacm function failing (libndkct_verbs_faults.so, LD_PRELOAD), for every N
(or a sample of them) and every errno asked for. Runs where the device is (in the Soft-RoCE
guest under ctest: adapters/rxe/device-run).

One case = one process of conformance_tests over the subset, with NDKCT_VERBS_FAULTS=fn:N:errno.
A case passes when
  - the process ended by itself (no crash, no hang: --case-timeout);
  - the interposer saw no device context closed and no rdma_cm channel destroyed with objects
    of its still open (nothing leaked or left half-made: leaks == 0 in its report);
  - every test passed but the one during which the fault fired ("the next test runs clean");
  - that one passed too, or failed with no rule named by the oracle: the provider answered the
    failure with a status the docs allow (STATUS_INSUFFICIENT_RESOURCES and its kin), so only
    the test's own expectation of success broke.
A fault that never fired (N beyond the calls of that run) is counted apart, not judged.

  sweep.py --build BUILD [--functions a,b] [--errnos ENOMEM,EINVAL,EAGAIN] [--all-n | --samples K]
           [--budget SECONDS] [--report FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "conformance", "runner"))
from ndkct_runner import waivers as waiver_files  # noqa: E402

IDENTITY = {"name": "ndkct-verbs"}

# Directed tests that between them create every object kind, register memory, bind windows,
# connect through rdma_cm, and post every kind of request (DEFER chains included).
SUBSET = [
    "*DataPath.WriteLandsInTheRemoteRegion/*",
    "*FastRegister.DeferredRequestCompletesOnceANonDeferredOneFollows/*",
    "*Connection.EstablishedQpsCarryDataBothWays/*",
    "*QpOperations.WriteThroughABoundWindowLands/*",
    "*QpOperations.SrqReceiveServesAnAttachedQp/*",
    "*FastRegister.RemoteReadReturnsTheBytesWithTheRight/*",
]
# The calls the subset makes that can fail for want of resources.
FUNCTIONS = ["ibv_alloc_pd", "ibv_create_cq", "ibv_create_qp", "ibv_modify_qp", "ibv_create_srq",
             "ibv_reg_mr_iova", "ibv_reg_mr_iova2", "ibv_alloc_mw", "ibv_post_send",
             "ibv_post_recv", "ibv_post_srq_recv", "ibv_req_notify_cq", "ibv_create_comp_channel",
             "rdma_create_event_channel", "rdma_create_id", "rdma_bind_addr", "rdma_resolve_addr",
             "rdma_resolve_route", "rdma_listen", "rdma_connect", "rdma_accept",
             "ibv_open_device"]
ORACLE = re.compile(r"oracle: ((?:[A-Z][A-Z0-9-]*-\d\d(?:, )?)+)")
RUN = re.compile(r"^\[ RUN      \] (\S+)", re.M)
FIRED = re.compile(r"^ndkct-verbs-faults: (\S+) call (\d+) fails with (\S+)", re.M)


def run_case(args, spec, filter_text):
    with tempfile.TemporaryDirectory() as tmp:
        report_path = os.path.join(tmp, "report.json")
        json_path = os.path.join(tmp, "gtest.json")
        env = dict(os.environ, LD_PRELOAD=args.interposer, NDKCT_VERBS_FAULTS_REPORT=report_path)
        if spec:
            env["NDKCT_VERBS_FAULTS"] = spec
        command = [args.suite, f"--provider=lib:{args.provider}", f"--gtest_filter={filter_text}",
                   f"--gtest_output=json:{json_path}"]
        started = time.monotonic()
        try:
            done = subprocess.run(command, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, errors="replace",
                                  timeout=args.case_timeout)
            output, code = done.stdout, done.returncode
        except subprocess.TimeoutExpired as expired:
            output = expired.stdout or ""
            if isinstance(output, bytes):
                output = output.decode(errors="replace")
            code = "timeout"
        elapsed = time.monotonic() - started
        report = None
        if os.path.exists(report_path):
            with open(report_path) as f:
                report = json.load(f)
        tests = {}
        if os.path.exists(json_path):
            with open(json_path) as f:
                for suite in json.load(f).get("testsuites", []):
                    for t in suite.get("testsuite", []):
                        name = f"{suite['name']}.{t['name']}"
                        tests[name] = "\n".join(x.get("failure", "") for x in t.get("failures", []))
    return output, code, report, tests, elapsed


def waived(known, test, rules):
    """Whether a stanza of sweep-waivers.txt covers every rule the faulted test's failure named."""
    record = {"test": test, "rules": [], "failed_rules": rules, "verdict": "fail"}
    return any(w.applies_to(IDENTITY) and w.matches_test(record) and w.covers_failure(record)
               for w in known)


def judge(spec, output, code, report, tests, known):
    """Returns (verdict, detail): ok, waived, not_reached or finding."""
    if code == "timeout":
        return "finding", "the process hung"
    if not isinstance(code, int) or code < 0 or code > 1:
        return "finding", f"the process ended with {code} (a crash)"
    if report is None:
        return "finding", "no interposer report (the process did not exit normally)"
    if report["leaks"]:
        return "finding", f"{report['leaks']} device context(s) or channel(s) closed with " \
                          f"objects still open"
    fired = FIRED.search(output)
    if not fired or not report["fired"]:
        return "not_reached", ""
    faulted = None
    for run in RUN.finditer(output[:fired.start()]):
        faulted = run.group(1)
    problems = []
    for name, failure in tests.items():
        if not failure:
            continue
        if name != faulted:
            problems.append(f"{name} failed after the fault (not clean): "
                            f"{failure.strip().splitlines()[0][:160]}")
            continue
        rules = sorted(set(r for found in ORACLE.findall(failure) for r in found.split(", ")))
        if rules and waived(known, name, rules):
            return "waived", f"{name}: {', '.join(rules)} (sweep-waivers.txt)"
        if rules:
            problems.append(f"{name}: the oracle names {', '.join(rules)}: "
                            f"{failure.strip().splitlines()[0][:200]}")
    if problems:
        return "finding", "; ".join(problems)
    return "ok", f"fired in {faulted or 'set-up'}" + (
        " (failed: documented status)" if faulted and tests.get(faulted) else "")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--functions", default=",".join(FUNCTIONS))
    p.add_argument("--errnos", default="ENOMEM,EINVAL,EAGAIN")
    p.add_argument("--all-n", action="store_true", help="every N up to the calls seen")
    p.add_argument("--samples", type=int, default=3,
                   help="N values per function: first, last and evenly between")
    p.add_argument("--budget", type=float, default=0, help="stop starting cases after SECONDS")
    p.add_argument("--case-timeout", type=float, default=180)
    p.add_argument("--report", help="write every case as JSON lines here")
    args = p.parse_args()
    args.suite = os.path.join(args.build, "conformance", "tests", "conformance_tests")
    args.provider = os.path.join(args.build, "adapters", "verbs", "libndkct_verbs_provider.so")
    args.interposer = os.path.join(args.build, "adapters", "verbs", "faults",
                                   "libndkct_verbs_faults.so")
    filter_text = ":".join(SUBSET)
    started = time.monotonic()

    output, code, report, tests, elapsed = run_case(args, None, filter_text)
    failed = [n for n, f in tests.items() if f]
    if code != 0 or report is None or failed or len(tests) < len(SUBSET):
        print(output[-3000:])
        print(f"sweep: the subset does not pass without faults ({len(tests)} tests, failed: "
              f"{failed}, exit {code})")
        return 1
    calls = report["calls"]
    print(f"sweep: baseline {len(tests)} tests in {elapsed:.1f} s; calls: " +
          ", ".join(f"{fn} {calls[fn]}" for fn in args.functions.split(",") if calls.get(fn)))

    errnos = args.errnos.split(",")
    cases = []
    for fn in args.functions.split(","):
        count = calls.get(fn, 0)
        if count == 0:
            continue
        if args.all_n:
            ns = range(1, count + 1)
        else:
            k = max(1, min(args.samples, count))
            ns = sorted({1 + round(i * (count - 1) / max(1, k - 1)) for i in range(k)})
        for i, n in enumerate(ns):
            for error in (errnos if args.all_n else [errnos[(i + len(cases)) % len(errnos)]]):
                cases.append((fn, n, error))
    rules = set()
    for name in os.listdir(os.path.join(ROOT, "spec", "rules", "catalog")):
        with open(os.path.join(ROOT, "spec", "rules", "catalog", name)) as f:
            rules |= {r["id"] for r in json.load(f)["rules"]}
    known = waiver_files.load([os.path.join(HERE, "sweep-waivers.txt")], rules)
    counts = {"ok": 0, "waived": 0, "not_reached": 0, "finding": 0}
    findings = []
    log = open(args.report, "w") if args.report else None
    ran = 0
    for fn, n, error in cases:
        if args.budget and time.monotonic() - started > args.budget:
            break
        spec = f"{fn}:{n}:{error}"
        output, code, report, tests, elapsed = run_case(args, spec, filter_text)
        verdict, detail = judge(spec, output, code, report, tests, known)
        counts[verdict] += 1
        ran += 1
        print(f"  {spec:32} {verdict:11} {elapsed:5.1f} s  {detail}", flush=True)
        if verdict == "finding":
            findings.append((spec, detail))
            if os.environ.get("NDKCT_SWEEP_VERBOSE"):
                print(output[-4000:])
        if log:
            log.write(json.dumps({"case": spec, "verdict": verdict, "detail": detail,
                                  "seconds": round(elapsed, 2)}) + "\n")
    print(f"sweep: {ran} of {len(cases)} fault cases in {time.monotonic() - started:.0f} s: "
          f"{counts['ok']} ok, {counts['waived']} waived, {counts['not_reached']} not reached, "
          f"{counts['finding']} findings")
    for spec, detail in findings:
        print(f"FINDING {spec}: {detail}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
