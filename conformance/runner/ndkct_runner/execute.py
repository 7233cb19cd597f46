"""Running tests with isolation: batches of tests in child processes, one event line per test.

Each batch runs one test executable on a list of tests (--gtest_filter) with
--ndkct_events=FILE: the executable appends a line when a test starts and one when it ends
(conformance/suite/src/main.cpp). The runner follows that file: a test that runs longer than the
time limit is a timeout (the batch's process group is killed), a test that was running when the
process died is a crash; either way the batch restarts with the tests not yet run. A result is
handed on (and written) as soon as its end line arrives, so nothing finished is ever lost.
"""
import ctypes
import json
import os
import shlex
import signal
import subprocess
import time

FILTER_LIMIT = 100_000  # bytes of --gtest_filter per batch (one argument may hold 128 KiB)


def rules_of_failures(event, known_rules):
    """The catalog rule IDs a test's failures name, in order: the structured `failure_rules` of
    its end event (one list per failure, from the RuleScope that was active when it was
    recorded). Message text is never searched for rule IDs."""
    seen = []
    for rules in event.get("failure_rules") or []:
        for rule in rules if isinstance(rules, list) else []:
            if rule in known_rules and rule not in seen:
                seen.append(rule)
    return seen


def signal_name(status):
    try:
        return signal.Signals(-status).name
    except ValueError:
        return f"signal {-status}"


def _die_with_runner():
    """In a batch's child: SIGKILL when the runner dies (even by kill -9), so that no hanging
    test process outlives it (prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def log_tail(path, lines=12):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read().splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


class Runner:
    """Runs the tests of one executable against one provider."""

    def __init__(self, executable, provider_arg, work, timeout, known_rules, replay_prefix=()):
        self.executable = executable
        self.provider_arg = provider_arg
        self.work = work
        self.timeout = timeout
        self.known_rules = known_rules
        self.replay_prefix = list(replay_prefix)
        self.batches = 0
        self.stop = False  # set from a signal handler: end the current batch, run no more

    def replay(self, name):
        return " ".join(shlex.quote(a) for a in self.replay_prefix + [
            self.executable, f"--provider={self.provider_arg}", f"--gtest_filter={name}"])

    def result(self, test, verdict, message, duration, extra=None, failed_rules=()):
        r = {"test": test["test"], "id": test.get("id", ""), "suite": test.get("suite", ""),
             "kind": test.get("kind", "directed"), "rules": test.get("rules", []),
             "verdict": verdict, "duration_s": round(duration, 6), "message": message,
             "failed_rules": list(failed_rules), "counterexample": None,
             "replay": self.replay(test["test"])}
        if extra:
            r.update(extra)
        return r

    def from_end_event(self, test, event):
        props = event.get("properties", {})
        duration = event.get("duration_us", 0) / 1e6
        extra = {}
        if props.get("counterexample"):
            extra["counterexample"] = props["counterexample"]
        if props.get("replay"):
            extra["replay"] = props["replay"]
        if event["result"] == "failed":
            message = "\n".join(event.get("failures", [])) or "failed"
            return self.result(test, "fail", message, duration, extra,
                               rules_of_failures(event, self.known_rules))
        if event["result"] == "skipped":
            skips = [s.strip() for s in event.get("skips", [])]
            reasons = [s for s in skips if s.startswith("not_supported:")]
            if reasons:
                return self.result(test, "not_supported", reasons[0], duration, extra)
            return self.result(test, "fail", "skipped without a 'not_supported:' reason: "
                               + ("; ".join(skips) or "(no message)"), duration, extra)
        if props.get("warnings"):
            return self.result(test, "warning", props["warnings"], duration, extra)
        return self.result(test, "pass", "", duration, extra)

    def run(self, tests, on_start, on_result):
        """Runs every test; calls on_start(test) and on_result(result) as they happen."""
        remaining = list(tests)
        while remaining and not self.stop:
            chunk, size = [], 0
            for t in remaining:
                if chunk and size + len(t["test"]) + 1 > FILTER_LIMIT:
                    break
                chunk.append(t)
                size += len(t["test"]) + 1
            finished, progressed = self._batch(chunk, on_start, on_result)
            left = [t for t in chunk if t["test"] not in finished]
            if left and not progressed and not self.stop:
                # The executable ran none of them: no restart would do better.
                for t in left:
                    on_result(self.result(t, "crash", self._not_run_message, 0.0))
                left = []
            remaining = left + remaining[len(chunk):]

    def _batch(self, chunk, on_start, on_result):
        self.batches += 1
        by_name = {t["test"]: t for t in chunk}
        base = os.path.join(self.work, f"batch-{os.path.basename(self.executable)}-{self.batches}")
        events_path, log_path = base + ".events.jsonl", base + ".log"
        open(events_path, "w").close()
        args = [self.executable, f"--provider={self.provider_arg}",
                "--gtest_filter=" + ":".join(by_name), f"--ndkct_events={events_path}",
                "--gtest_brief=1"]
        with open(log_path, "w") as log:
            log.write("$ " + " ".join(shlex.quote(a) for a in args[:2]) + " --gtest_filter=... "
                      + " ".join(args[3:]) + "\n")
            log.flush()
            process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       preexec_fn=_die_with_runner)
        finished, current, started_at, progressed = set(), None, 0.0, False
        timed_out = False
        pending = ""
        with open(events_path, encoding="utf-8", errors="replace") as events:
            while True:
                status = process.poll()
                pending += events.read()
                *lines, pending = pending.split("\n")
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue  # a line cut by a crash mid-write: its test is the current one
                    name = event.get("test")
                    if name not in by_name:
                        continue
                    if event.get("event") == "start":
                        current, started_at, progressed = name, time.monotonic(), True
                        on_start(by_name[name])
                    elif event.get("event") == "end":
                        finished.add(name)
                        current = None
                        on_result(self.from_end_event(by_name[name], event))
                if status is not None:
                    break
                if self.stop or (current and time.monotonic() - started_at > self.timeout):
                    timed_out = not self.stop
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                    status = process.returncode
                    break
                time.sleep(0.02)
        if current and current not in finished:
            test = by_name[current]
            elapsed = time.monotonic() - started_at
            if timed_out:
                on_result(self.result(test, "timeout", f"no result within the time limit of "
                                      f"{self.timeout:g} s; the test process was killed "
                                      f"(log: {log_path})\n" + log_tail(log_path), elapsed))
                finished.add(current)
            elif not self.stop:
                how = (f"killed by {signal_name(status)}" if status < 0
                       else f"exited with status {status}")
                on_result(self.result(test, "crash", f"the test process {how} during this test "
                                      f"(log: {log_path})\n" + log_tail(log_path), elapsed))
                finished.add(current)
        how = f"killed by {signal_name(status)}" if status < 0 else f"exit status {status}"
        self._not_run_message = (f"not run: the test executable ended ({how}) without running "
                                 f"this test (log: {log_path})\n" + log_tail(log_path))
        if status in (0, 1) and not timed_out:
            # A normal end: whatever it did not run, it will never run.
            for name, test in by_name.items():
                if name not in finished:
                    on_result(self.result(test, "crash", self._not_run_message, 0.0))
                    finished.add(name)
        return finished, progressed
