"""Traces from the command line: `./ndkct run --capture DIR`, `./ndkct check-trace`,
`./ndkct trace dump`, `./ndkct replay`.

The work is conformance/trace's (the ndkct-trace tool: the oracle over a trace, the dump, the
replay); this module turns its results into a run's reports (result.json, junit.xml,
report.html through reports/ndkct_reports) and keeps a run's exit convention: 0 when every
must-pass test passed, was waived or is not supported; 1 otherwise; 2 for bad input (an
unreadable, damaged or future-version trace included, once everything readable was judged).
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from . import InputError, mustpass, provider as providers, selection, waivers as waiver_files

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "reports"))
from ndkct_reports import catalog, result as results  # noqa: E402

# NDKT_CAPTURE_DIGESTS (spec/include/ndkct/trace_format.h): the header's capture flag that DATA
# blocks carry digests.
CAPTURE_DIGESTS = 0x01

EXECUTABLES = (("directed", os.path.join("conformance", "tests", "conformance_tests")),
               ("property", os.path.join("conformance", "properties", "conformance_properties")))


def say(text):
    print(f"ndkct: {text}", file=sys.stderr, flush=True)


def now():
    import datetime
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def tool(build):
    path = os.path.join(build, "conformance", "trace", "ndkct-trace")
    if not os.path.exists(path):
        raise InputError(f"{path} is missing: build first (./ndkct build)")
    return path


# ---- ./ndkct run --capture DIR ----

def capture_environment(directory, digest_limit=None):
    """What the test processes need to record one trace per test into `directory`
    (conformance/harness capture_host.hpp). NDKCT_CAPTURE_BYTES=1 in the environment adds the
    bytes requests move (replayable traces); `digest_limit` (bytes) leaves longer data blocks
    unread (NDKCAP_OPTIONS.DigestLimit)."""
    directory = os.path.abspath(directory)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise InputError(f"--capture {directory}: {error.strerror}") from None
    if not os.access(directory, os.W_OK):
        raise InputError(f"--capture {directory}: not writable")
    env = {"NDKCT_CAPTURE_DIR": directory}
    if digest_limit:
        env["NDKCT_CAPTURE_DIGEST_LIMIT"] = str(digest_limit)
    return env


# ---- ./ndkct check-trace ----

def trace_files(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(p, "*.ndktrace")))
            if not found:
                raise InputError(f"{p}: no *.ndktrace file in this folder")
            files += found
        elif os.path.exists(p):
            files.append(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    return files


def strip_param(name):
    """"Providers/DataPath.X/model_seed1" -> "Providers/DataPath.X": a test apart from the
    provider it was instantiated for."""
    return name.rsplit("/", 1)[0] if name.count("/") >= 2 else name


def declarations(build, provider_spec):
    """Test declarations by gtest name without its provider part: dotted ID, suite, rules, kind
    (from the test executables' listing; empty when they are not built)."""
    arg = "model"
    try:
        p = providers.Provider(provider_spec) if provider_spec else None
        if p is not None and (p.kind != "lib" or os.path.exists(p.path or "")):
            arg = p.argument(build)
    except InputError:
        pass
    out = {}
    with tempfile.TemporaryDirectory(prefix="ndkct-trace-list-") as work:
        for kind, rel in EXECUTABLES:
            exe = os.path.join(build, rel)
            if not os.path.exists(exe):
                continue
            try:
                for t in selection.list_tests(exe, kind, arg, work):
                    out[strip_param(t["test"])] = t
            except InputError:
                continue
    return out


def run_check(build, files, profile):
    """ndkct-trace check over the files: one JSON object per file."""
    with tempfile.TemporaryDirectory() as work:
        report = os.path.join(work, "check.jsonl")
        command = [tool(build), "check", "--json", report]
        if profile:
            command += ["--profile", profile]
        done = subprocess.run(command + files, capture_output=True, text=True)
        if done.returncode not in (0, 1, 2):
            raise InputError(f"ndkct-trace check failed (exit status {done.returncode}): "
                             f"{done.stderr.strip()}")
        lines = []
        if os.path.exists(report):
            with open(report, encoding="utf-8") as f:
                lines = [json.loads(line) for line in f if line.strip()]
        if len(lines) != len(files):
            raise InputError(f"ndkct-trace check judged {len(lines)} of {len(files)} traces: "
                             f"{done.stderr.strip()}")
        return lines


def test_record(judged, declared, known_rules, seen_labels):
    header = judged["header"]
    label = header.get("label") or os.path.basename(judged["file"])
    decl = declared.get(strip_param(label), {})
    seen_labels[label] = seen_labels.get(label, 0) + 1
    name = label if seen_labels[label] == 1 else f"{label} (trace {seen_labels[label]})"
    failing = [f for f in judged["findings"] if not f["warning"]]
    warnings = [f for f in judged["findings"] if f["warning"]]
    lines = []
    for f in judged["findings"]:
        lines.append(f"{'warning' if f['warning'] else 'oracle'}: {', '.join(f['rules'])}: "
                     f"{f['message']} [record #{f['record']} at offset {f['offset']}]")
    if judged["stopped"]:
        lines.append(f"judged up to record #{judged['stopped_record']}, then stopped: "
                     f"{judged['stopped']}")
    lines += [f"note: {n}" for n in judged.get("notes", [])]
    counterexample = None
    if failing:
        blocks = []
        for f in failing[:5]:
            blocks.append(f"record #{f['record']} ({', '.join(f['rules'])}):\n" +
                          "\n".join(f["counterexample"]))
        counterexample = "\n\n".join(blocks)
    # A trace read only in part is no pass: what was judged held, the rest is unknown (the
    # run's exit status is 2 for it, bad input).
    verdict = "fail" if failing else "warning" if warnings or judged["stopped"] else "pass"
    failed_rules = [r for r in judged["failed_rules"] if r in known_rules]
    return {"test": name, "id": decl.get("id", ""), "suite": decl.get("suite", ""),
            "kind": decl.get("kind", "directed"), "rules": decl.get("rules", []),
            "verdict": verdict, "duration_s": 0.0, "message": "\n".join(lines),
            "failed_rules": failed_rules, "counterexample": counterexample,
            # A trace has no setup steps of a test body to block, and the oracle names broken
            # rules only; the functions called are in the trace (./ndkct trace dump), not here.
            "blocked_by": [], "rules_held": [], "functions": [], "unnamed_failures": 0,
            "ndkct_bug": judged["stopped"].startswith("the checker failed"),
            "replay": f"./ndkct trace dump {shlex.quote(judged['file'])}"}


def identity_of(header):
    info = header.get("adapter_info") or {}
    return {"name": header.get("provider_name") or "unknown",
            "version": header.get("provider_version") or "",
            "ndk_version": header.get("ndk_version") or "0.0",
            "description": header.get("provider_description") or "",
            "vendor_id": int(info.get("VendorId", 0)), "device_id": int(info.get("DeviceId", 0))}


def provider_of(header):
    spec = header.get("provider_spec") or ""
    kind = spec.split(":")[0]
    info = dict(header.get("adapter_info") or {})
    for key, default in (("Version", header.get("ndk_version") or "0.0"), ("VendorId", 0),
                         ("DeviceId", 0), ("AdapterFlags", 0), ("RdmaTechnology", 0)):
        info.setdefault(key, default)
    return {"spec": spec or "trace", "kind": kind if kind in ("model", "lib", "verbs") else "lib",
            "identity": identity_of(header), "adapter_info": info}


def load_profile(build, name):
    """(the profile NAME|FILE as ndkct-spec loads it, or None; why it cannot be loaded, or
    None). Both None without the spec tool: the judge then says it."""
    spec_tool = os.path.join(build, "spec", "ndkct-spec")
    if not os.path.exists(spec_tool):
        return None, None
    done = subprocess.run([spec_tool, "profile", name], capture_output=True, text=True)
    if done.returncode == 0:
        return json.loads(done.stdout), None
    return None, (done.stderr.strip().removeprefix("ndkct-spec: ")
                  or f"cannot load the profile {name!r}")


def profile_of(build, judged, override, loaded=None):
    """The report's profile record; `loaded`: the override's profile, already loaded."""
    name = override or judged["header"].get("profile") or "default"
    version = judged["header"].get("ndk_version") or "2.1"
    profile = loaded if loaded is not None else load_profile(build, name)[0]
    if profile is not None:
        version = profile.get("ndk_version", version)
    return {"name": os.path.basename(name).removesuffix(".json"), "origin": name,
            "ndk_version": version}


# A verdict's first line, at most `width` characters, keeping its "[record #N at offset M]": the
# record is what a reader goes to next, so a long message loses its middle, not its record.
LOCATOR = re.compile(r"\s*(\[record #\d+ at offset \d+\])$")


def shortened(line, width=300):
    if len(line) <= width:
        return line
    m = LOCATOR.search(line)
    if not m:
        return line[:width]
    cut = " ... "
    return line[:width - len(m.group(1)) - len(cut)].rstrip() + cut + m.group(1)


def check_trace(argv):
    p = argparse.ArgumentParser(
        prog="./ndkct check-trace",
        description="Judge traces (files, or folders of *.ndktrace) with the oracle and write "
        "result.json, junit.xml and report.html as a run does: one test per trace, the "
        "counterexample the records around each broken rule.",
        epilog="Exit status: 0 when every must-pass test passed, was waived or is not "
        "supported; 1 otherwise; 2 for bad input (also a damaged or future-version trace, after "
        "everything readable was judged). spec/TRACE.md describes the format.")
    p.add_argument("traces", nargs="+", metavar="TRACE")
    p.add_argument("--profile", metavar="NAME|FILE",
                   help="judge by this profile (default: the one each trace names)")
    p.add_argument("--out", default=os.environ.get("NDKCT_OUT") or os.path.join(ROOT, "out"),
                   metavar="DIR", help="output folder (default: $NDKCT_OUT, else out/)")
    p.add_argument("--waivers", action="append", metavar="FILE",
                   help="waiver file (repeatable; default: every conformance/waivers/*.txt; "
                   "'none' for no waivers); waivers key on the provider name in the trace")
    p.add_argument("--strict-waivers", action="store_true",
                   help="a stale waiver (its test now passes) fails the check (for CI)")
    p.add_argument("--must-pass", metavar="FILE",
                   help="must-pass list (default: conformance/must-pass/<profile>.txt)")
    p.add_argument("--no-html", action="store_true", help="write no HTML report")
    p.add_argument("--build", default=os.environ.get("NDKCT_BUILD_DIR", os.path.join(ROOT, "build")),
                   metavar="DIR", help="the build folder (default: build/)")
    args = p.parse_args(argv)
    started_epoch, started = time.time(), now()
    build = os.path.abspath(args.build)
    override_profile = None
    if args.profile:
        override_profile, problem = load_profile(build, args.profile)
        if problem:
            say(f"error: --profile {args.profile}: {problem}")
            return 2
    files = trace_files(args.traces)
    rules = catalog.load()
    known_rules = {r["id"] for r in rules}
    rule_levels = {r["id"]: r["level"] for r in rules}
    judged = run_check(build, files, args.profile)
    readable = [j for j in judged if j["header"].get("format") not in (None, "", "0.0")]
    first = readable[0] if readable else judged[0]
    header = first["header"]
    providers_seen = {j["header"].get("provider_name") for j in readable}
    if len(providers_seen) > 1:
        say(f"the traces come from {len(providers_seen)} providers "
            f"({', '.join(sorted(p or '?' for p in providers_seen))}): the report names the first")
    profile = profile_of(build, first, args.profile, override_profile)
    declared = declarations(build, header.get("provider_spec"))
    seen = {}
    tests = [test_record(j, declared, known_rules, seen) for j in judged]

    if args.waivers == ["none"]:
        waiver_paths = []
    elif args.waivers:
        waiver_paths = args.waivers
    else:
        waiver_paths = sorted(glob.glob(os.path.join(ROOT, "conformance", "waivers", "*.txt")))
    waivers = waiver_files.load(waiver_paths, known_rules)
    identity = identity_of(header)
    active = waiver_files.apply(waivers, identity, tests)
    must = mustpass.load(args.must_pass, profile["name"],
                         os.path.join(ROOT, "conformance", "must-pass"), known_rules)
    for t in tests:
        t["must_pass"] = must.applies(t, rule_levels)

    damaged = [j for j in judged if j["stopped"]]
    run_record = {
        "record": "run", "format": "ndkct-result/1",
        "tool": {"name": "ndkct", "version": tool_version(),
                 "command": "./ndkct check-trace " + " ".join(shlex.quote(a) for a in argv),
                 "host": socket.gethostname(), "in_guest": False},
        "started": started, "provider": provider_of(header), "profile": profile,
        "ndk_version": header.get("ndk_version") or profile["ndk_version"],
        "seed": int(header.get("seed") or 0),
        "selection": {"tests": [], "exclude_tests": [], "rules": [], "exclude_rules": [],
                      "shard": None, "timeout_s": 1, "selected": len(tests)},
        "waivers": [w.to_json() for w in active],
        "must_pass": {"list": must.describe()},
    }
    result = results.finish(run_record, tests, [w.to_json() for w in active],
                            args.strict_waivers, True, now(), rules)
    result["duration_s"] = round(time.time() - started_epoch, 3)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    paths = results.write_all(result, out, rules, html=not args.no_html)
    c = result["counts"]
    total_records = sum(j["records"] for j in judged)
    # What to fix first, as a run says it: first, and again last (below a long list).
    nxt = result["rules"].get("next")
    if nxt:
        say(nxt["text"])
    # The header's own names ("unknown" is identity_of's stand-in for waivers, not for a reader).
    who = " ".join(x for x in (header.get("provider_name"), header.get("provider_version")) if x)
    say(f"{len(tests)} trace{'' if len(tests) == 1 else 's'} ({total_records} records) of "
        f"{who or 'an unnamed provider'} judged under profile "
        f"{profile['name']}: "
        + ", ".join(f"{k} {v}" for k, v in c.items() if v or k in ("pass", "fail")))
    # What the traces could not show is said, not passed over: where bytes landed goes unjudged
    # without digests, and for posts and completions whose bytes a trace does not show.
    # (A file whose header could not be read has no flags to go by: its error says enough.)
    undigested = sum(1 for j in judged if j["records"] and
                     not j["header"]["capture_flags"] & CAPTURE_DIGESTS)
    if undigested:
        say(f"  data: {undigested} of {len(judged)} traces carry no data digests (captured with "
            "NDKCAP_NO_DIGESTS): where bytes landed is not judged in them")
    limits = sorted({j["header"].get("digest_limit", 0) for j in judged} - {0})
    if limits:
        limited = sum(1 for j in judged if j["header"].get("digest_limit"))
        say(f"  data: {limited} of {len(judged)} traces were captured with a digest limit "
            f"({', '.join(f'{n} bytes' for n in limits)}): longer data blocks were not read")
    posts = sum(j.get("unjudged_posts", 0) for j in judged)
    landings = sum(j.get("unjudged_landings", 0) for j in judged)
    if posts or landings:
        shown = sum(1 for j in judged if j.get("unjudged_posts") or j.get("unjudged_landings"))
        say(f"  data: in {shown} traces, {posts} posts' sources and {landings} completions' "
            "landings are not shown (pages the capture could not read, blocks over its digest "
            "limit, or sources overlapping bytes still landing): where those bytes landed is "
            "not judged")
    # Every damaged trace with where it stopped; failing ones up to `limit`, as a run lists them.
    limit, listed, unlisted = 25, 0, 0
    for t, j in zip(tests, judged):
        if t["verdict"] not in ("fail",) and not j["stopped"]:
            continue
        if not j["stopped"] and listed >= limit:
            unlisted += 1
            continue
        listed += 1
        first_line = shortened(next((x for x in t["message"].splitlines() if x.strip()), ""))
        say(f"  {t['verdict'].upper()} {t['test']}: {first_line}")
        if j["stopped"]:
            # The reason starts with its offset ("offset N: ..."), as every stop says it.
            say(f"    {j['file']}: judged up to record #{j['stopped_record']}: {j['stopped']}")
    if unlisted:
        say(f"  ... and {unlisted} more failing traces (report.html, result.json)")
    say("  report: " + ", ".join(paths[k] for k in ("html", "json", "junit") if k in paths))
    reasons = [] if result["gate"]["passed"] else result["gate"]["reasons"]
    if damaged:
        # Bad input (exit 2) whatever the judged part showed; where nothing could be judged the
        # damage is why, not a selection for --allow-empty (which check-trace does not have).
        for reason in reasons:
            if not reason.startswith(results.NOTHING_CHECKED):
                say(f"FAIL: {reason}")
        unjudged = [j for j in damaged if j["stopped"].startswith("cannot load the profile")]
        if unjudged:
            say(f"ERROR: {len(unjudged)} trace(s) name a profile that cannot be loaded (see "
                "above); --profile NAME|FILE judges them by another")
        if len(unjudged) < len(damaged):
            say(f"ERROR: {len(damaged) - len(unjudged)} trace(s) could not be read to their end "
                "(see above)")
        return 2
    if reasons:
        for reason in reasons:
            say(f"FAIL: {reason}")
        if nxt:
            say(nxt["text"])
        return 1
    say("PASS: every must-pass test passed, was waived or is not supported")
    return 0


def tool_version():
    if os.environ.get("NDKCT_VERSION"):  # installed (packaging/ndkct.in): no CMakeLists.txt
        return os.environ["NDKCT_VERSION"]
    try:
        with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
            for line in f:
                if "project(ndkct VERSION" in line:
                    return line.split("VERSION")[1].split()[0]
    except OSError:
        pass
    return "unknown"


# ---- ./ndkct trace dump ----

def trace_command(argv):
    # ./ndkct puts --build DIR before the subcommand (as for check-trace and replay).
    build = []
    if len(argv) >= 2 and argv[0] == "--build":
        build, argv = argv[:2], argv[2:]
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: ./ndkct trace dump [--json] FILE   (every record of a trace, readably)")
        return 0 if argv else 2
    if argv[0] != "dump":
        raise InputError(f"unknown trace command '{argv[0]}' (try: ./ndkct trace dump FILE)")
    p = argparse.ArgumentParser(prog="./ndkct trace dump",
                                description="Every record of a trace, readably (or as JSON "
                                "lines with --json), decoded by spec/trace/trace-format.json.")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    p.add_argument("--build", default=os.environ.get("NDKCT_BUILD_DIR", os.path.join(ROOT, "build")))
    args = p.parse_args(build + argv[1:])
    if not os.path.exists(args.file):
        raise InputError(f"{args.file}: no such file")
    command = [tool(os.path.abspath(args.build)), "dump"] + (["--json"] if args.json else [])
    return subprocess.call(command + [args.file])


# ---- ./ndkct replay ----

def replay(argv):
    p = argparse.ArgumentParser(
        prog="./ndkct replay",
        description="Issue a trace's calls again against another provider (handles, tokens, "
        "logical addresses and ports remapped; memory restored from the trace's bytes), judged "
        "by the oracle; report where the provider's outcomes differ from the recording's.",
        epilog="Exit status: 0 same outcomes and no violation; 1 a difference or a violation; "
        "2 bad input (a trace with digests only is refused unless --without-data).")
    p.add_argument("file")
    p.add_argument("--provider", required=True, metavar="SPEC",
                   help=f"the provider to replay against: {providers.KINDS}")
    p.add_argument("--profile", metavar="NAME|FILE")
    p.add_argument("--without-data", action="store_true",
                   help="replay a trace that has digests only (memory is not restored)")
    p.add_argument("--json", metavar="FILE", help="the differences as JSON")
    p.add_argument("--guest-timeout", type=int, default=900, metavar="SECONDS")
    p.add_argument("--build", default=os.environ.get("NDKCT_BUILD_DIR", os.path.join(ROOT, "build")))
    args = p.parse_args(argv)
    build = os.path.abspath(args.build)
    if not os.path.exists(args.file):
        raise InputError(f"{args.file}: no such file")
    provider = providers.Provider(args.provider)
    provider.check(build)
    command = [tool(build), "replay", os.path.abspath(args.file), "--provider",
               provider.argument(build)]
    if args.profile:
        command += ["--profile", args.profile]
    if args.without_data:
        command.append("--without-data")
    if args.json:
        command += ["--json", os.path.abspath(args.json)]
    if provider.kind == "verbs" and os.environ.get("NDKCT_IN_GUEST") != "1" and not has_device():
        if not shutil.which("qemu-system-x86_64"):
            raise InputError("no RDMA device here and no qemu-system-x86_64 for the Soft-RoCE "
                             "guest (adapters/rxe/README.md)")
        rw = []
        if args.json:
            rw = ["--rw", os.path.dirname(os.path.abspath(args.json))]
        say("no RDMA device here: replaying inside the Soft-RoCE guest (adapters/rxe)")
        command = [os.path.join(ROOT, "adapters", "rxe", "device-run"), "--timeout",
                   str(args.guest_timeout)] + rw + ["--"] + command
    return subprocess.call(command)


def has_device():
    return subprocess.run([os.path.join(ROOT, "adapters", "rxe", "has-device")],
                          capture_output=True).returncode == 0


def main(argv):
    commands = {"check-trace": check_trace, "trace": trace_command, "replay": replay}
    if not argv or argv[0] not in commands:
        say("usage: ndkct-traces check-trace|trace|replay ...")
        return 2
    try:
        return commands[argv[0]](argv[1:])
    except InputError as error:
        say(f"error: {error}")
        return 2
