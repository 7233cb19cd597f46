#!/usr/bin/python3
"""Runs rdma-core's own test suite against one RDMA device, within a time cap.

Debian's python3-pyverbs ships the suite under /usr/share/doc/rdma-core/tests, some
files gzipped. This copies it to a temporary directory, unpacks it, runs it with
unittest and prints one summary line:

    rdma-core tests: ran N, passed P, failed F, errors E, skipped S

When the time cap is reached no further test starts and the line says how many of
the suite's tests ran. The exit status is 0 whatever the tests found (their results
describe the device, not this program); 2 when the suite could not run at all.
"""

import argparse
import gzip
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import unittest

DEFAULT_SRC = "/usr/share/doc/rdma-core/tests"


def unpack(src, dst):
    """Copies src to dst/tests, gunzipping *.gz files."""
    tests = os.path.join(dst, "tests")
    os.makedirs(tests)
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if not os.path.isfile(path):
            continue
        if name.endswith(".gz"):
            with gzip.open(path, "rb") as fin, open(os.path.join(tests, name[:-3]), "wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copyfile(path, os.path.join(tests, name))
    return tests


class CappedResult(unittest.TextTestResult):
    """A result that asks the suite to stop once the deadline has passed."""

    deadline = None

    def stopTest(self, test):
        super().stopTest(test)
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.capped = True
            self.stop()


def counts(result):
    ran = result.testsRun
    failed = len(result.failures) + len(result.unexpectedSuccesses)
    errors = len(result.errors)
    skipped = len(result.skipped)
    xfail = len(result.expectedFailures)
    return {"ran": ran, "passed": ran - failed - errors - skipped - xfail,
            "failed": failed, "errors": errors, "skipped": skipped,
            "expected_failures": xfail}


def summary_line(c, total, capped, budget):
    line = ("rdma-core tests: ran {ran}, passed {passed}, failed {failed}, "
            "errors {errors}, skipped {skipped}").format(**c)
    if c["expected_failures"]:
        line += ", expected failures {}".format(c["expected_failures"])
    if capped:
        line += " (time cap {} s reached: a subset, {} of {} tests)".format(
            budget, c["ran"], total)
    return line


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dev", required=True, help="RDMA device, e.g. rxe0")
    ap.add_argument("--gid", type=int, help="GID index for the tests")
    ap.add_argument("--port", type=int, default=1)
    ap.add_argument("--budget", type=int, default=360, help="time cap in seconds")
    ap.add_argument("--src", default=DEFAULT_SRC)
    ap.add_argument("--report", help="also write the counts as JSON to this file")
    ap.add_argument("-q", "--quiet", action="store_true", help="no per-test lines")
    opts = ap.parse_args()

    def give_up(why):
        print("rdma-core tests: not run ({})".format(why), flush=True)
        if opts.report:
            with open(opts.report, "w") as f:
                json.dump({"run": False, "reason": why}, f)
        return 2

    if not os.path.isfile(os.path.join(opts.src, "__init__.py")):
        return give_up("no suite in {} (Debian package python3-pyverbs)".format(opts.src))

    work = tempfile.mkdtemp(prefix="ndkct-rdma-core-")
    try:
        tests_dir = unpack(opts.src, work)
        sys.path[:0] = [tests_dir, work]
        try:
            from args_parser import parser  # the suite's own option parser
            argv = ["run_tests.py", "--dev", opts.dev, "--port", str(opts.port)]
            if opts.gid is not None:
                argv += ["--gid", str(opts.gid)]
            sys.argv = argv
            parser.parse_args()
            import tests  # noqa: F401  (loads every test module)
            suite = unittest.TestLoader().loadTestsFromModule(tests)
        except Exception as e:  # the suite itself failed to load
            return give_up("loading failed: {}: {}".format(type(e).__name__, e))

        total = suite.countTestCases()
        CappedResult.deadline = time.monotonic() + opts.budget
        runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=1 if opts.quiet else 2,
                                         resultclass=CappedResult)
        state = {}

        def hung(signum, frame):
            # One test outlived the cap by a minute: report what we have and leave.
            result = state.get("result")
            c = counts(result) if result else {"ran": 0, "passed": 0, "failed": 0,
                                               "errors": 0, "skipped": 0,
                                               "expected_failures": 0}
            print("\n" + summary_line(c, total, True, opts.budget) + " (a test hung)", flush=True)
            shutil.rmtree(work, ignore_errors=True)
            os._exit(0)

        signal.signal(signal.SIGALRM, hung)
        signal.alarm(opts.budget + 60)
        orig = runner._makeResult

        def make_result():
            state["result"] = orig()
            return state["result"]

        runner._makeResult = make_result
        start = time.monotonic()
        result = runner.run(suite)
        signal.alarm(0)
        c = counts(result)
        capped = getattr(result, "capped", False) and c["ran"] < total
        line = summary_line(c, total, capped, opts.budget)
        print(line, flush=True)
        if opts.report:
            c.update(run=True, total=total, capped=capped,
                     seconds=round(time.monotonic() - start, 1), summary=line)
            with open(opts.report, "w") as f:
                json.dump(c, f, indent=1)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
