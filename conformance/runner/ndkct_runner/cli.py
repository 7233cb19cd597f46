"""`./ndkct run`: the conformance run of one provider, from options to exit status.

Steps: check the options and the provider; open it once (identity, NDK_ADAPTER_INFO); list the
tests of every test executable; filter and shard; load waivers and the must-pass list; run the
tests in isolated batches, writing each result as it arrives; write result.json, junit.xml and
report.html; print a summary; exit 0 only when every must-pass test passed, was waived or is
not supported (1 otherwise, 2 for bad input, 130 when interrupted).
"""
import argparse
import datetime
import glob
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

from . import InputError, execute, mustpass, provider as providers, selection, twonode, \
    waivers as waiver_files

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "reports"))
from ndkct_reports import catalog, result as results  # noqa: E402

EXECUTABLES = (  # kind, path in the build folder
    ("directed", os.path.join("conformance", "tests", "conformance_tests")),
    ("property", os.path.join("conformance", "properties", "conformance_properties")),
)
VERSION_PROFILES = {"1.1": "ndkpi-1.1", "1.2": "ndkpi-1.2", "2.1": "default"}


def say(text):
    print(f"ndkct: {text}", file=sys.stderr, flush=True)


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def parse_arguments(argv):
    p = argparse.ArgumentParser(
        prog="./ndkct run", description="Run the conformance suite (directed and property "
        "tests) against one provider and write a report (result.json, junit.xml, report.html).",
        epilog="Exit status: 0 when every must-pass test passed, was waived or is not supported; "
        "1 otherwise (the reason is printed); 2 for bad input; 130 when interrupted. "
        "See conformance/runner/README.md.")
    p.add_argument("--provider", default="model", metavar="SPEC",
                   help=f"the provider under test: {providers.KINDS} (default: model)")
    p.add_argument("--profile", metavar="NAME|FILE", help="profile: default, strict, ndkpi-1.1, "
                   "ndkpi-1.2 or a profile file (spec/profiles)")
    p.add_argument("--ndk-version", choices=sorted(VERSION_PROFILES), metavar="V",
                   help="NDKPI version 1.1, 1.2 or 2.1 (chooses the profile ndkpi-V when no "
                   "--profile is given, and checks the provider reports it)")
    p.add_argument("--seed", type=int, metavar="N", help="seed of the provider's choices")
    p.add_argument("--tests", "--filter", action="append", default=[], metavar="PATTERNS",
                   help="run only tests whose dotted ID or gtest name matches one of these globs "
                   "(comma-separated; repeatable)")
    p.add_argument("--exclude-tests", action="append", default=[], metavar="PATTERNS")
    p.add_argument("--rules", action="append", default=[], metavar="PATTERNS",
                   help="run only tests that declare a rule matching one of these globs")
    p.add_argument("--exclude-rules", action="append", default=[], metavar="PATTERNS")
    p.add_argument("--shard", metavar="I/N", help="run shard I of N of the selection")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="time limit of one test (default 120)")
    p.add_argument("--waivers", action="append", metavar="FILE",
                   help="waiver file (repeatable; default: every conformance/waivers/*.txt; "
                   "'none' for no waivers)")
    p.add_argument("--strict-waivers", action="store_true",
                   help="a stale waiver (its test now passes) fails the run (for CI)")
    p.add_argument("--must-pass", metavar="FILE", help="must-pass list (default: "
                   "conformance/must-pass/<profile>.txt; without one, every test)")
    p.add_argument("--out", default=os.path.join(ROOT, "out"), metavar="DIR",
                   help="output folder (default: out/)")
    p.add_argument("--list", action="store_true", help="list the selected tests, run nothing")
    p.add_argument("--suites", default="directed,property", metavar="KINDS",
                   help="which tests: directed, property or both (default: both, when built)")
    p.add_argument("--build", default=os.environ.get("NDKCT_BUILD_DIR", os.path.join(ROOT, "build")),
                   metavar="DIR", help="the build folder (default: build/)")
    p.add_argument("--no-html", action="store_true", help="write no HTML report")
    p.add_argument("--guest-timeout", type=int, default=3600, metavar="SECONDS",
                   help="time limit of the Soft-RoCE guest for verbs runs (default 3600)")
    p.add_argument("--peer", metavar="two-guests|HOST:PORT",
                   help="two nodes: each test that connects has its passive side on the peer "
                   "(two-guests: two Soft-RoCE guests on one link; HOST:PORT: where `./ndkct agent "
                   "--listen PORT` runs; see conformance/twonode/README.md)")
    p.add_argument("--topology-kind", help=argparse.SUPPRESS)
    p.add_argument("--in-guest", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.timeout <= 0:
        raise InputError(f"--timeout {args.timeout:g}: must be more than 0 seconds")
    return args


def check_profile(build, name):
    """The profile as ndkct-spec resolves it (name, ndk_version); errors name file, line, field."""
    tool = os.path.join(build, "spec", "ndkct-spec")
    if not os.path.exists(tool):
        raise InputError(f"{tool} is missing: build first (./ndkct build)")
    done = subprocess.run([tool, "profile", name], capture_output=True, text=True)
    if done.returncode != 0:
        raise InputError(f"bad profile '{name}': " + done.stderr.strip().removeprefix("ndkct-spec: "))
    profile = json.loads(done.stdout)
    return profile["name"], profile.get("ndk_version", "2.1")


def describe(executable, provider_arg):
    done = subprocess.run([executable, f"--provider={provider_arg}", "--ndkct_describe"],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        problem = done.stderr.strip().removeprefix("ndkct: ") or f"exit status {done.returncode}"
        raise InputError(problem)
    return json.loads(done.stdout)


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
        if r["verdict"] in ("fail", "crash", "timeout"):
            self.bad += 1
            first = (r["message"].splitlines() or [""])
            first = next((x for x in first if x.strip()), "")[:160]
            rules = f" [{', '.join(r['failed_rules'])}]" if r["failed_rules"] else ""
            self.clear()
            sys.stderr.write(f"ndkct:   {r['verdict'].upper()} {r['id'] or r['test']}{rules}: "
                             f"{first}\n")
        self.show(force=self.done == self.total)

    def clear(self):
        if self.tty:
            sys.stderr.write("\r\033[K")


def has_device():
    return subprocess.run([os.path.join(ROOT, "adapters", "rxe", "has-device")],
                          capture_output=True).returncode == 0


def run_in_guest(args, argv):
    """verbs without a local device: the whole run again inside the Soft-RoCE guest, writing
    into the same output folder. Returns the exit status."""
    if not shutil.which("qemu-system-x86_64"):
        raise InputError("no RDMA device on this machine and no qemu-system-x86_64 to start the "
                         "Soft-RoCE guest (Debian: qemu-system-x86; see adapters/rxe/README.md)")
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    inner = [sys.executable, os.path.join(ROOT, "conformance", "runner", "ndkct-run")] + argv + [
        "--in-guest", "--out", out, "--build", os.path.abspath(args.build)]
    command = [os.path.join(ROOT, "adapters", "rxe", "device-run"), "--timeout",
               str(args.guest_timeout), "--rw", out, "--cwd", os.getcwd(), "--"] + inner
    say("no RDMA device here: running inside the Soft-RoCE guest (adapters/rxe, ~5 s to start)")
    started = time.time()
    status = subprocess.call(command)
    if status == 125:
        raise InputError("the Soft-RoCE guest could not be started (see the messages above; "
                         "adapters/rxe/README.md)")
    records = os.path.join(out, "results.jsonl")
    report = os.path.join(out, "result.json")
    finished = os.path.exists(report) and os.path.getmtime(report) >= started
    if not finished and os.path.exists(records) and os.path.getmtime(records) >= started:
        say(f"the guest ended before the report was written (status {status}); "
            f"reporting what finished")
        return finalize_partial(out, args)
    if not finished:
        say(f"the run in the guest ended with status {status} and no results")
        return status or 1
    return status


def finalize_partial(out, args):
    run, tests = results.read_records(os.path.join(out, "results.jsonl"))
    rules = catalog.load()
    result = results.finish(run, tests, run.get("waivers", []), args.strict_waivers,
                            complete=False, finished=now())
    result["duration_s"] = round(time.time() - run.get("started_epoch", time.time()), 3)
    result.pop("started_epoch", None)
    paths = results.write_all(result, out, rules, html=not args.no_html)
    summarize(result, paths)
    return 1


def summarize(result, paths):
    c = result["counts"]
    ident = result["provider"]["identity"]
    say(f"{len(result['tests'])} tests against {ident.get('name')} {ident.get('version')} "
        f"({result['provider']['spec']}, profile {result['profile']['name']}, NDKPI "
        f"{result['ndk_version']}) in {result['duration_s']:.1f} s")
    say("  " + ", ".join(f"{k} {v}" for k, v in c.items() if v or k in ("pass", "fail")))
    topology = result.get("topology") or {}
    if topology.get("nodes") == 2:
        crossed = sum(1 for t in result["tests"] if t.get("nodes") == 2)
        say(f"  two nodes ({topology['kind']}, peer {topology.get('peer')}): {crossed} tests "
            f"crossed the link, {len(result['tests']) - crossed} ran on this node alone")
    for t in result["tests"]:
        if t["verdict"] in ("fail", "crash", "timeout"):
            first = next((x for x in t["message"].splitlines() if x.strip()), "")[:160]
            rules = f" [{', '.join(t['failed_rules'])}]" if t["failed_rules"] else ""
            mark = "" if t["must_pass"] else " (not must-pass)"
            say(f"  {t['verdict'].upper()} {t['id'] or t['test']}{rules}{mark}: {first}")
    for w in result["waivers"]:
        if w.get("stale"):
            say(f"  stale waiver {w['where']}: its tests ran and none failed as waived: remove it? "
                f"({', '.join(w['matched'][:3])})")
    say("  report: " + ", ".join(paths[k] for k in ("html", "json", "junit") if k in paths))
    if result["gate"]["passed"]:
        say("PASS: every must-pass test passed, was waived or is not supported")
    else:
        for reason in result["gate"]["reasons"]:
            say(f"FAIL: {reason}")


def main(argv):
    try:
        return run(argv)
    except InputError as error:
        say(f"error: {error}")
        return 2


def run(argv):
    args = parse_arguments(argv)
    started_epoch, started = time.time(), now()
    build = os.path.abspath(args.build)
    provider = providers.Provider(args.provider)
    provider.override("seed", args.seed, "--seed")
    rules = catalog.load()
    known_rules = {r["id"] for r in rules}
    rule_levels = {r["id"]: r["level"] for r in rules}

    # The profile: --profile, else the one --ndk-version implies, else the spec's.
    if args.profile is None and args.ndk_version and "profile" not in provider.options:
        provider.options["profile"] = VERSION_PROFILES[args.ndk_version]
    provider.override("profile", args.profile, "--profile")
    profile_name, profile_version = check_profile(build, provider.profile)
    if args.ndk_version and profile_version != args.ndk_version:
        raise InputError(f"--ndk-version {args.ndk_version}: the profile '{provider.profile}' "
                         f"is NDKPI {profile_version}")
    provider.check(build)
    provider_arg = provider.argument(build)
    topology = twonode.parse(args.peer, args.topology_kind) if args.peer else None

    kinds = [k.strip() for k in args.suites.split(",") if k.strip()]
    for k in kinds:
        if k not in ("directed", "property", "properties"):
            raise InputError(f"--suites: unknown kind '{k}' (directed, property)")
    kinds = ["property" if k == "properties" else k for k in kinds]
    executables = [(k, os.path.join(build, p)) for k, p in EXECUTABLES if k in kinds]
    present = [(k, e) for k, e in executables if os.path.exists(e)]
    if not present:
        raise InputError(f"no test executable in {build} ({', '.join(e for _, e in executables)}"
                         f"): build first (./ndkct build)")

    # Listing and selection need no provider: no guest either.
    tests = []
    for kind, exe in present:
        tests += selection.list_tests(exe, kind, provider_arg)
    chosen = selection.select(tests, selection.split_patterns(args.tests),
                              selection.split_patterns(args.exclude_tests),
                              selection.split_patterns(args.rules),
                              selection.split_patterns(args.exclude_rules), known_rules)
    chosen = selection.shard(chosen, selection.parse_shard(args.shard))
    if args.list:
        for t in chosen:
            print(f"{t['id'] or '-':<60} {t['test']:<90} {','.join(t['rules'])}")
        say(f"{len(chosen)} of {len(tests)} tests selected")
        return 0

    if args.waivers == ["none"]:
        waiver_paths = []
    elif args.waivers:
        waiver_paths = args.waivers
    else:
        waiver_paths = sorted(glob.glob(os.path.join(ROOT, "conformance", "waivers", "*.txt")))
    waivers = waiver_files.load(waiver_paths, known_rules)
    must = mustpass.load(args.must_pass, profile_name,
                         os.path.join(ROOT, "conformance", "must-pass"), known_rules)

    in_guest = args.in_guest or os.environ.get("NDKCT_IN_GUEST") == "1"
    if topology and topology.kind == "two-guests" and not in_guest:
        if provider.kind != "verbs":
            raise InputError("--peer two-guests runs the verbs provider on Soft-RoCE in both "
                             "guests: use --provider verbs")
        return twonode.run_in_two_guests(args, argv, say)
    if topology and provider.kind == "verbs" and not in_guest and not has_device():
        raise InputError(f"--peer {args.peer} needs an RDMA device on this machine (two real "
                         f"hosts); for two emulated nodes use --peer two-guests")
    if provider.kind == "verbs" and not in_guest and not has_device():
        return run_in_guest(args, argv)
    if topology:
        twonode.use(topology)

    # Open the provider once: its identity keys the waivers and heads the report.
    try:
        described = describe(present[0][1], provider_arg)
    except InputError as error:
        raise InputError(f"provider '{args.provider}': {error}") from None
    identity = described["identity"]
    ndk_version = described["adapter_info"]["Version"]
    if args.ndk_version and ndk_version != args.ndk_version:
        raise InputError(f"--ndk-version {args.ndk_version}: the provider reports NDKPI "
                         f"{ndk_version} (NDK_ADAPTER_INFO.Version)")
    active = [w for w in waivers if w.applies_to(identity) and w.applies_in(2 if topology else 1)]

    out = os.path.abspath(args.out)
    logs = os.path.join(out, "logs")
    os.makedirs(logs, exist_ok=True)
    for old in ("result.json", "junit.xml", "report.html", "results.jsonl"):
        if os.path.exists(os.path.join(out, old)):
            os.remove(os.path.join(out, old))
    for old in glob.glob(os.path.join(logs, "batch-*")):
        os.remove(old)

    run_record = {
        "record": "run", "format": "ndkct-result/1",
        "tool": {"name": "ndkct", "version": tool_version(),
                 "command": "./ndkct run " + " ".join(shlex.quote(a) for a in argv
                                                       if a != "--in-guest"),
                 "host": socket.gethostname(), "in_guest": in_guest},
        "started": started, "started_epoch": started_epoch,
        "provider": {"spec": provider.canonical(), "kind": provider.kind, "identity": identity,
                     "adapter_info": described["adapter_info"]},
        "profile": described["profile"], "ndk_version": ndk_version, "seed": provider.seed,
        "topology": topology.describe() if topology else twonode.one_node(),
        "selection": {"tests": selection.split_patterns(args.tests),
                      "exclude_tests": selection.split_patterns(args.exclude_tests),
                      "rules": selection.split_patterns(args.rules),
                      "exclude_rules": selection.split_patterns(args.exclude_rules),
                      "shard": args.shard, "timeout_s": args.timeout, "selected": len(chosen)},
        "waivers": [w.to_json() for w in active],
        "must_pass": {"list": must.describe()},
    }
    records_path = os.path.join(out, "results.jsonl")
    records = open(records_path, "w", encoding="utf-8")
    records.write(json.dumps(run_record) + "\n")
    records.flush()

    if topology:
        say(f"two nodes ({topology.kind}): the passive side of each connection on the agent at "
            f"{topology.peer}")
    say(f"{len(chosen)} tests against '{provider.canonical()}' ({identity['name']} "
        f"{identity['version']}, vendor {identity['vendor_id']:#x}, device "
        f"{identity['device_id']:#x}), profile {profile_name}, NDKPI {ndk_version}; "
        f"{len(active)} waiver(s) apply; must-pass: {must.describe()}")
    progress = Progress(len(chosen))
    finished = []
    replay_prefix = []
    if in_guest:  # the replay needs the guest too
        replay_prefix = [os.path.join(ROOT, "adapters", "rxe", "device-run"), "--"]
    if topology:  # and the peer
        replay_prefix = twonode.replay_prefix(topology, build)

    def on_result(r):
        waiver_files.apply(active, identity, [r])
        r["must_pass"] = must.applies(r, rule_levels)
        finished.append(r)
        records.write(json.dumps(dict(r, record="test")) + "\n")
        records.flush()
        progress.finished_test(r)

    runners = []
    interrupted = []

    def stop(signum, _frame):
        interrupted.append(signum)
        for r in runners:
            r.stop = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    for kind, exe in present:
        mine = [t for t in chosen if t["executable"] == exe]
        if not mine or interrupted:
            continue
        runner = execute.Runner(exe, provider_arg, logs, args.timeout, known_rules, replay_prefix)
        runners.append(runner)
        runner.run(mine, progress.started_test, on_result)
    progress.clear()
    records.close()

    complete = not interrupted and len(finished) == len(chosen)
    result = results.finish(run_record, finished, [w.to_json() for w in active],
                            args.strict_waivers, complete, now())
    result["duration_s"] = round(time.time() - started_epoch, 3)
    result.pop("started_epoch", None)
    paths = results.write_all(result, out, rules, html=not args.no_html)
    summarize(result, paths)
    if interrupted:
        return 130
    return 0 if result["gate"]["passed"] else 1


def tool_version():
    try:
        with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
            for line in f:
                if "project(ndkct VERSION" in line:
                    return line.split("VERSION")[1].split()[0]
    except OSError:
        pass
    return "unknown"
