"""What the runner prints on stderr: progress while the tests run, and the summary at the end,
led by what to fix next (the broken rule that stops the most tests, and its NDK function)."""
import sys
import time


def say(text):
    print(f"ndkct: {text}", file=sys.stderr, flush=True)


def first_line(text):
    return next((x for x in (text or "").splitlines() if x.strip()), "")[:160]


def rules_of(t):
    if t["failed_rules"]:
        return f" [{', '.join(t['failed_rules'])}]"
    if t.get("blocked_by"):
        return f" [blocked by {', '.join(t['blocked_by'])}]"
    return " [ndkct's bug]" if t.get("ndkct_bug") else ""


class Progress:
    """done/total, current group, failures so far, time left: one line that rewrites itself on a
    terminal, a line every few seconds otherwise."""

    def __init__(self, total):
        self.total, self.done, self.bad, self.group = total, 0, 0, ""
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def line(self):
        elapsed = time.monotonic() - self.started
        left = (elapsed / self.done * (self.total - self.done)) if self.done else 0
        return (f"[{self.done:>{len(str(self.total))}}/{self.total}] {self.group:<24.24} "
                f"failures {self.bad}  {elapsed:5.1f} s, ~{left:.0f} s left")

    def show(self, force=False):
        t = time.monotonic()
        if self.tty:
            if force or t - self.last > 0.1:
                sys.stderr.write("\r" + self.line() + "\033[K")
                sys.stderr.flush()
                self.last = t
        elif force or t - self.last > 5:
            sys.stderr.write("ndkct: " + self.line() + "\n")
            sys.stderr.flush()
            self.last = t

    def started_test(self, test):
        self.group = test.get("suite") or test["test"].split(".")[0]
        self.show()

    def finished_test(self, r):
        self.done += 1
        if r["verdict"] in ("fail", "crash", "timeout", "blocked"):
            self.bad += 1
            self.clear()
            sys.stderr.write(f"ndkct:   {r['verdict'].upper()} {r['id'] or r['test']}"
                             f"{rules_of(r)}: {first_line(r['message'])}\n")
        self.show(force=self.done == self.total)

    def clear(self):
        if self.tty:
            sys.stderr.write("\r\033[K")


def summarize(result, paths, limit=25):
    """The summary: what to do next first, then the run, the broken rules ranked, the failing
    tests (at most `limit`), stale waivers, the report's files and the gate."""
    rules = result["rules"]
    nxt = rules.get("next")
    if nxt:
        say(nxt["text"])
    elif result["gate"]["passed"]:
        say("Nothing to fix: no rule is broken")
    c = result["counts"]
    ident = result["provider"]["identity"]
    say(f"{len(result['tests'])} tests against {ident.get('name')} {ident.get('version')} "
        f"({result['provider']['spec']}, profile {result['profile']['name']}, NDKPI "
        f"{result['ndk_version']}) in {result['duration_s']:.1f} s")
    say("  tests: " + ", ".join(f"{k} {v}" for k, v in c.items() if v or k in ("pass", "fail")))
    topology = result.get("topology") or {}
    if topology.get("nodes") == 2:
        crossed = sum(1 for t in result["tests"] if t.get("nodes") == 2)
        say(f"  two nodes ({topology['kind']}, peer {topology.get('peer')}): {crossed} tests "
            f"crossed the link, {len(result['tests']) - crossed} ran on this node alone")
    rc = rules["counts"]
    say("  rules: " + ", ".join(f"{k} {v}" for k, v in rc.items() if v))
    for r in rules["ranked"][:10]:
        say(f"  BROKEN {r['rule']} ({r['function']}): stops {r['tests_stopped']} "
            f"test{'s' if r['tests_stopped'] != 1 else ''}")
    if len(rules["ranked"]) > 10:
        say(f"  ... and {len(rules['ranked']) - 10} more broken rules (report.html)")
    bad = [t for t in result["tests"] if t["verdict"] in ("fail", "crash", "timeout", "blocked")]
    for t in bad[:limit]:
        mark = "" if t["must_pass"] else " (not must-pass)"
        say(f"  {t['verdict'].upper()} {t['id'] or t['test']}{rules_of(t)}{mark}: "
            f"{first_line(t['message'])}")
    if len(bad) > limit:
        say(f"  ... and {len(bad) - limit} more failing tests (report.html, result.json)")
    for w in result["waivers"]:
        if w.get("stale"):
            say(f"  stale waiver {w['where']}: its tests ran and none failed as waived: remove it? "
                f"({', '.join(w['matched'][:3])})")
        for pattern in w.get("unmatched_tests", []):
            say(f"  unmatched waiver {w['where']}: tests pattern '{pattern}' matches no test of "
                f"the suite (a typo or a renamed test? ./ndkct run --list shows the IDs)")
    say("  report: " + ", ".join(paths[k] for k in ("html", "json", "junit") if k in paths))
    if result["gate"]["passed"]:
        say("PASS: every must-pass test passed, was waived or is not supported")
    else:
        for reason in result["gate"]["reasons"]:
            say(f"FAIL: {reason}")
        if nxt:  # said first; said again last, where a long failure list leaves the eye
            say(nxt["text"])
