"""Running tests with isolation: batches of tests in child processes, one event line per test.

Each batch runs one test executable on a list of tests (--gtest_filter) with
--ndkct_events=FILE: the executable appends a line when a test starts and one when it ends
(conformance/suite/src/main.cpp), and --ndkct_flight=FILE: the call-in-flight record
(flight.py). The runner follows the event file: a test that runs longer than the time limit is a
timeout (the batch's process group is killed), a test that was running when the process died is
a crash; either way the verdict says which NDK call was in flight, on which thread, the signal
and the top frames of a crash, and the test's own output, and the batch restarts with the tests
not yet run. A result is handed on (and written) as soon as its end line arrives, so nothing
finished is ever lost. Nothing here reads what the provider prints to decide anything.

Budget: after `unresponsive_after` consecutive timeouts in one group (a test suite), the
provider is declared unresponsive there and the group's remaining tests get the verdict
`blocked` at once instead of one time limit each.
"""
import ctypes
import json
import os
import shlex
import signal
import subprocess
import time

from . import flight

FILTER_LIMIT = 100_000  # bytes of --gtest_filter per batch (one argument may hold 128 KiB)
OUTPUT_LINES, OUTPUT_BYTES = 40, 16_000  # of a crashed or hung test's own output


def group_of(test):
    return test.get("suite") or test["test"].split(".")[0].split("/")[-1]


def outcome_rules(event, known_rules):
    """(broken, blocked_by, unnamed) from an end event's structured failure_rules and
    failure_kinds (one entry per failure; message text is never searched): the rules checks and
    the oracle found broken, the rules that stopped a setup step, and how many failures named
    no catalog rule."""
    broken, blocked, unnamed = [], [], 0
    kinds = event.get("failure_kinds") or []
    for i, rules in enumerate(event.get("failure_rules") or []):
        rules = [r for r in (rules if isinstance(rules, list) else []) if r in known_rules]
        if not rules:
            unnamed += 1
        kind = kinds[i] if i < len(kinds) else "rule"
        if kind == "oracle":
            # The oracle names the rule it judged first, then the rules that follow from it
            # (the form AMB-29 chose, the completion's status...): only the judged rule is
            # broken; the others stay in the message, and a test declaring them was stopped.
            rules = rules[:1]
        target = blocked if kind == "setup" else broken
        for rule in rules:
            if rule not in target:
                target.append(rule)
    return broken, [r for r in blocked if r not in broken], unnamed


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


def own_output(path, offset):
    """The test's own output: the log from where the test started (its start event's offset),
    the last lines of it."""
    try:
        with open(path, "rb") as f:
            if offset is not None and offset >= 0:
                f.seek(offset)
            data = f.read()
    except OSError:
        return ""
    text = data[-OUTPUT_BYTES:].decode("utf-8", "replace")
    return "\n".join(text.splitlines()[-OUTPUT_LINES:])


class Runner:
    """Runs the tests of one executable against one provider."""

    def __init__(self, executable, provider_arg, work, timeout, known_rules, replay_prefix=(),
                 provider_library=None, unresponsive_after=3, extra_args=()):
        self.executable = executable
        self.extra_args = list(extra_args)  # after the runner's own (e.g. --ndkct_tests=N)
        self.provider_arg = provider_arg
        self.work = work
        self.timeout = timeout
        self.known_rules = known_rules
        self.replay_prefix = list(replay_prefix)
        self.provider_library = provider_library
        self.unresponsive_after = unresponsive_after
        self.batches = 0
        self.stop = False  # set from a signal handler or a budget: end the batch, run no more
        self.timeouts_in_a_row = {}  # group -> consecutive timeouts
        self.unresponsive = {}  # group -> the message of the timeout that decided it

    def replay(self, name):
        return " ".join(shlex.quote(a) for a in self.replay_prefix + [
            self.executable, f"--provider={self.provider_arg}", f"--gtest_filter={name}"]
            + self.extra_args)

    def result(self, test, verdict, message, duration, extra=None, failed_rules=(),
               blocked_by=()):
        r = {"test": test["test"], "id": test.get("id", ""), "suite": test.get("suite", ""),
             "kind": test.get("kind", "directed"), "rules": test.get("rules", []),
             "verdict": verdict, "duration_s": round(duration, 6), "message": message,
             "failed_rules": list(failed_rules), "blocked_by": list(blocked_by),
             "rules_held": [], "functions": [], "unnamed_failures": 0, "ndkct_bug": False,
             "counterexample": None, "replay": self.replay(test["test"])}
        if extra:
            r.update(extra)
        return r

    def from_end_event(self, test, event):
        props = event.get("properties", {})
        duration = event.get("duration_us", 0) / 1e6
        extra = {"functions": [f for f in event.get("functions") or [] if isinstance(f, str)]}
        if props.get("counterexample"):
            extra["counterexample"] = props["counterexample"]
        if props.get("replay"):
            extra["replay"] = props["replay"]
        if props.get("nodes"):
            extra["nodes"] = int(props["nodes"])  # conformance/twonode: it crossed the link
        reached = [r for r in event.get("rules_reached") or [] if r in self.known_rules]
        if event["result"] == "failed":
            message = "\n".join(event.get("failures", [])) or "failed"
            broken, blocked, unnamed = outcome_rules(event, self.known_rules)
            extra["unnamed_failures"] = unnamed
            extra["rules_held"] = [r for r in test.get("rules", [])
                                   if r in reached and r not in broken]
            return self.result(test, "fail", message, duration, extra, broken, blocked)
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

    def explain(self, test, verdict, how, record, log_path, log_offset, elapsed):
        """A crash's or a timeout's result from the call-in-flight record: the NDK call in
        flight and its thread, the signal and top frames, whose crash it was, the test's own
        output; its rules come from the call in flight, never from text."""
        lines = [how]
        rules, ndkct_bug, details = [], False, {}
        busy = flight.in_flight(record) if record and record["test"] == test["test"] else []
        crash = record.get("crash") if record else None
        if crash:
            culprit, frames = flight.crash_report(crash, self.provider_library, self.executable)
            thread = crash["thread"]
            at = (f" at address {crash['address']}" if crash.get("code", 0) > 0
                  else " (raised by the process itself)")
            lines.append(f"SIG{crash['signal']}{at} on "
                         + ("the test's thread" if thread == record["test_thread"]
                            else f"thread {thread}") + "; top frames:")
            lines += frames
            if culprit == "ndkct":
                ndkct_bug = True
                lines.append("The top frame is in ndkct's own code (the test executable): "
                             "ndkct's bug, not the provider's; no waiver covers it.")
            elif culprit == "provider":
                lines.append("The top frame is in the provider "
                             f"({os.path.basename(self.provider_library)}).")
            details["crash"] = {"signal": "SIG" + crash["signal"], "address": crash["address"],
                                "thread": thread, "frames": crash["frames"][:16],
                                "culprit": culprit}
            mine = [s for s in busy if s.get("thread") == thread] or busy
        else:
            mine = busy
        if mine:
            slot = mine[0]
            lines.append(("The NDK call in flight: " if slot.get("state") == "call"
                          else "The harness was ") + flight.describe_slot(slot, record))
            if not ndkct_bug:  # the call's rules, or what owes the awaited callback or entry
                rules = [r for r in (slot.get("rules") or "").split(",") if r in self.known_rules]
            details["in_flight"] = {k: slot.get(k, "") for k in
                                    ("state", "function", "object", "call", "rules", "thread")}
            for other in mine[1:3]:
                lines.append("Also in flight: " + flight.describe_slot(other, record))
        elif record and record["test"] == test["test"]:
            lines.append("No NDK call was in flight: ndkct's own code was running.")
            if verdict == "timeout" and not crash:
                ndkct_bug = True
                lines.append("A test that hangs outside every provider call is ndkct's bug.")
        else:
            lines.append("(no call-in-flight record for this test)")
        output = own_output(log_path, log_offset)
        lines.append(f"Its own output (log: {log_path}):" if output else
                     f"It printed nothing (log: {log_path}).")
        if output:
            lines.append(output)
        details["ndkct_bug"] = ndkct_bug
        return self.result(test, verdict, "\n".join(lines), elapsed, details,
                           [] if ndkct_bug else rules)

    def run(self, tests, on_start, on_result):
        """Runs every test; calls on_start(test) and on_result(result) as they happen."""
        remaining = list(tests)
        while remaining and not self.stop:
            remaining = self._skip_unresponsive(remaining, on_result)
            if not remaining:
                break
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

    def _skip_unresponsive(self, remaining, on_result):
        keep = []
        for t in remaining:
            reason = self.unresponsive.get(group_of(t))
            if reason is None:
                keep.append(t)
            else:
                on_result(self.result(t, "blocked", reason, 0.0))
        return keep

    def _note(self, test, verdict):
        """Counts consecutive timeouts per group; K of them declare the provider unresponsive
        for the rest of the group."""
        group = group_of(test)
        if verdict != "timeout":
            self.timeouts_in_a_row[group] = 0
            return False
        n = self.timeouts_in_a_row.get(group, 0) + 1
        self.timeouts_in_a_row[group] = n
        if self.unresponsive_after and n >= self.unresponsive_after:
            self.unresponsive[group] = (
                f"not run: the provider was declared unresponsive in the group {group} after "
                f"{n} consecutive timeouts (the last: {test.get('id') or test['test']}); "
                f"--unresponsive-after 0 runs every test")
            return True
        return False

    def _batch(self, chunk, on_start, on_result):
        self.batches += 1
        by_name = {t["test"]: t for t in chunk}
        base = os.path.join(self.work, f"batch-{os.path.basename(self.executable)}-{self.batches}")
        events_path, log_path, flight_path = base + ".events.jsonl", base + ".log", base + ".flight"
        open(events_path, "w").close()
        args = [self.executable, f"--provider={self.provider_arg}",
                "--gtest_filter=" + ":".join(by_name), f"--ndkct_events={events_path}",
                f"--ndkct_flight={flight_path}", "--gtest_brief=1"] + self.extra_args
        with open(log_path, "w") as log:
            log.write("$ " + " ".join(shlex.quote(a) for a in args[:2]) + " --gtest_filter=... "
                      + " ".join(args[3:]) + "\n")
            log.flush()
            process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       preexec_fn=_die_with_runner)
        finished, current, started_at, progressed = set(), None, 0.0, False
        offsets = {}
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
                    if name not in by_name or not isinstance(event, dict):
                        continue
                    if event.get("event") == "start":
                        current, started_at, progressed = name, time.monotonic(), True
                        offset = event.get("log_offset")
                        offsets[name] = offset if isinstance(offset, int) else None
                        on_start(by_name[name])
                    elif event.get("event") == "end":
                        finished.add(name)
                        current = None
                        r = self.from_end_event(by_name[name], event)
                        self._note(by_name[name], r["verdict"])
                        on_result(r)
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
            record = flight.read(flight_path)
            if timed_out:
                r = self.explain(test, "timeout", f"no result within the time limit of "
                                 f"{self.timeout:g} s; the test process was killed.", record,
                                 log_path, offsets.get(current), elapsed)
                finished.add(current)
                self._note(test, "timeout")
                on_result(r)
            elif not self.stop:
                how = (f"killed by {signal_name(status)}" if status < 0
                       else f"exited with status {status}")
                r = self.explain(test, "crash", f"the test process {how} during this test.",
                                 record, log_path, offsets.get(current), elapsed)
                self._note(test, "crash")
                on_result(r)
                finished.add(current)
        how = f"killed by {signal_name(status)}" if status < 0 else f"exit status {status}"
        self._not_run_message = (f"not run: the test executable ended ({how}) without running "
                                 f"this test (log: {log_path})\n" + own_output(log_path, None))
        if status in (0, 1) and not timed_out:
            # A normal end: whatever it did not run, it will never run.
            for name, test in by_name.items():
                if name not in finished:
                    on_result(self.result(test, "crash", self._not_run_message, 0.0))
                    finished.add(name)
        return finished, progressed
