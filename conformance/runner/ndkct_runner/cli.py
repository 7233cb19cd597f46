"""`./ndkct run`: the conformance run of one provider, from options to exit status.

Steps: check every input (options, files, the output folder); load the provider and read its
identity; choose the NDKPI version (version.py) and the profile; open the provider once
(identity, NDK_ADAPTER_INFO); list the tests of every test executable; filter and shard (a
selection with no test is an error unless --allow-empty); load waivers and the must-pass list;
run the tests in isolated batches, writing each result as it arrives; write result.json,
junit.xml and report.html; print a summary led by what to fix next; exit 0 only when every
must-pass test passed, was waived or is not supported (1 otherwise, 2 for bad input, 130 when
interrupted).
"""
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

from . import (InputError, execute, mustpass, opening, options, provider as providers, selection,
               trace, twonode, version as versions, waivers as waiver_files)
from .summary import Progress, say, summarize

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "reports"))
from ndkct_reports import catalog, result as results  # noqa: E402

EXECUTABLES = (  # kind, path in the build folder
    ("directed", os.path.join("conformance", "tests", "conformance_tests")),
    ("property", os.path.join("conformance", "properties", "conformance_properties")),
)
QUIET_AFTER = 20  # failures printed while the run goes on; the summary has the rest


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def has_device():
    tool = os.path.join(ROOT, "adapters", "rxe", "has-device")
    if not os.path.exists(tool):  # an install without the Soft-RoCE guest
        raise InputError("the verbs provider needs an RDMA device here: this install of ndkct "
                         "has no Soft-RoCE guest (adapters/rxe is in the source tree)")
    return subprocess.run([tool], capture_output=True).returncode == 0


def run_in_guest(args, argv):
    """verbs without a local device: the whole run again inside the Soft-RoCE guest, writing
    into the same output folder. Returns the exit status."""
    if not shutil.which("qemu-system-x86_64"):
        raise InputError("no RDMA device on this machine and no qemu-system-x86_64 to start the "
                         "Soft-RoCE guest (Debian: qemu-system-x86; see adapters/rxe/README.md)")
    out = os.path.abspath(args.out)
    inner = [sys.executable, os.path.join(ROOT, "conformance", "runner", "ndkct-run")] + argv + [
        "--in-guest", "--out", out, "--build", os.path.abspath(args.build)]
    capture = ["--rw", trace.capture_environment(args.capture)["NDKCT_CAPTURE_DIR"]] \
        if args.capture else []
    command = [os.path.join(ROOT, "adapters", "rxe", "device-run"), "--timeout",
               str(args.guest_timeout), "--rw", out] + capture + ["--cwd", os.getcwd(), "--"] + inner
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
                            complete=False, finished=now(), catalog_rules=rules,
                            stopped="the Soft-RoCE guest ended before the run did")
    result["duration_s"] = round(time.time() - run.get("started_epoch", time.time()), 3)
    result.pop("started_epoch", None)
    paths = results.write_all(result, out, rules, html=not args.no_html)
    summarize(result, paths)
    return 1


def main(argv):
    try:
        return run(argv)
    except InputError as error:
        say(f"error: {error}")
        return 2


def waiver_paths(args):
    if args.waivers == ["none"]:
        return []
    if args.waivers:
        return args.waivers
    return sorted(glob.glob(os.path.join(ROOT, "conformance", "waivers", "*.txt")))


def choose_profile(args, provider, build, out, executable):
    """Reads the provider's identity and settles the profile and NDKPI version of the run.
    Returns (identity, profile_name, version, why)."""
    # The profile: --profile, else one named in the provider spec, else --ndk-version's, else
    # the default.
    provider.override("profile", args.profile, "--profile")
    if "profile" not in provider.options and args.ndk_version:
        provider.options["profile"] = options.VERSION_PROFILES[args.ndk_version]
    document, name, profile_version = versions.resolve_profile(build, provider.profile)
    identity = opening.run_mode(executable, provider.argument(build), "identity", out,
                                args.timeout, provider.library(build))
    version, why = versions.choose(identity.get("ndk_version", ""), name, profile_version,
                                   args.ndk_version)
    chosen = versions.profile_for(build, out, provider.profile, document, name, profile_version,
                                  version)
    if chosen != provider.profile:
        provider.options["profile"] = chosen
        shown = chosen if "/" not in chosen else f"'{name}' at NDKPI {version} ({chosen})"
        why += f"; profile {shown}"
    return identity, name, version, why


def describe(args, provider, build, out, executable, version):
    try:
        described = opening.run_mode(executable, provider.argument(build), "describe", out,
                                     args.timeout, provider.library(build))
    except InputError as error:
        hint = ""
        if "NDIS_STATUS_BAD_VERSION" in str(error):
            hint = (f" (the run asked for NDKPI {version}; --ndk-version V chooses another: "
                    f"1.1, 1.2 or 2.1)")
        raise InputError(f"provider '{args.provider}': {error}{hint}") from None
    reported = described["adapter_info"]["Version"]
    if reported.split(".")[0] != version.split(".")[0] or versions.key(reported) < versions.key(version):
        raise InputError(f"the run asked for NDKPI {version}; the provider opened at {reported} "
                         f"(NDK_ADAPTER_INFO.Version; VER-02: the same major, at least that minor)")
    return described


def run(argv):
    args = options.parse(argv, ROOT)
    started_epoch, started = time.time(), now()
    build = os.path.abspath(args.build)
    provider = providers.Provider(args.provider)
    provider.override("seed", args.seed, "--seed")
    rules = catalog.load()
    known_rules = {r["id"] for r in rules}
    rule_levels = {r["id"]: r["level"] for r in rules}
    provider.check(build)
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
    shard = selection.parse_shard(args.shard)
    waivers = waiver_files.load(waiver_paths(args), known_rules)
    out = options.output_folder(args.out)
    if args.capture_digest_limit and not args.capture:
        raise InputError("--capture-digest-limit: only with --capture DIR")
    capture_env = trace.capture_environment(args.capture, args.capture_digest_limit) \
        if args.capture else {}
    in_guest = args.in_guest or os.environ.get("NDKCT_IN_GUEST") == "1"
    if topology and topology.kind == "two-guests" and not in_guest and not args.list:
        if provider.kind != "verbs":
            raise InputError("--peer two-guests runs the verbs provider on Soft-RoCE in both "
                             "guests: use --provider verbs")
        return twonode.run_in_two_guests(args, argv, say)
    if topology and provider.kind == "verbs" and not in_guest and not args.list and not has_device():
        raise InputError(f"--peer {args.peer} needs an RDMA device on this machine (two real "
                         f"hosts); for two emulated nodes use --peer two-guests")
    if provider.kind == "verbs" and not in_guest and not args.list and not has_device():
        return run_in_guest(args, argv)

    identity0, profile_name, ndk_version, version_why = choose_profile(
        args, provider, build, out, present[0][1])
    provider_arg = provider.argument(build)
    must = mustpass.load(args.must_pass, profile_name,
                         os.path.join(ROOT, "conformance", "must-pass"), known_rules)

    # Listing and selection.
    tests = []
    for kind, exe in present:
        tests += selection.list_tests(exe, kind, provider_arg, out)
    chosen = selection.select(tests, selection.split_patterns(args.tests),
                              selection.split_patterns(args.exclude_tests),
                              selection.split_patterns(args.rules),
                              selection.split_patterns(args.exclude_rules), known_rules,
                              args.allow_empty)
    selected = len(chosen)
    chosen = selection.shard(chosen, shard)
    if not chosen and not args.allow_empty:
        plural = "s" if selected != 1 else ""
        raise InputError(f"--shard {args.shard}: this shard of the {selected} test{plural} "
                         f"selected holds none (fewer tests than shards; --allow-empty accepts "
                         f"that)")
    if args.list:
        for t in chosen:
            print(f"{t['id'] or '-':<60} {t['test']:<90} {','.join(t['rules'])}")
        say(f"{len(chosen)} of {len(tests)} tests selected")
        return 0
    must_count = sum(must.applies(t, rule_levels) for t in chosen)
    if must_count == 0 and not args.allow_empty:
        raise InputError(f"the must-pass list ({must.describe()}) matches none of the "
                         f"{len(chosen)} selected tests: the run could only pass with nothing "
                         f"checked (--allow-empty accepts that)")

    if topology:  # the test executables split the provider from here on (NDKCT_PEER)
        twonode.use(topology)

    # Open the provider once: its identity keys the waivers and heads the report.
    described = describe(args, provider, build, out, present[0][1], ndk_version)
    identity = described["identity"]
    ndk_version = described["adapter_info"]["Version"]
    active = [w for w in waivers if w.applies_to(identity) and w.applies_in(2 if topology else 1)]
    if {k for k, _ in present} == {k for k, _ in EXECUTABLES}:  # the whole suite was listed
        for w in active:
            w.check_patterns(tests)

    logs = os.path.join(out, "logs")
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
        "profile": described["profile"], "ndk_version": ndk_version,
        "ndk_version_reason": version_why, "seed": provider.seed,
        "topology": topology.describe() if topology else twonode.one_node(),
        "selection": {"tests": selection.split_patterns(args.tests),
                      "exclude_tests": selection.split_patterns(args.exclude_tests),
                      "rules": selection.split_patterns(args.rules),
                      "exclude_rules": selection.split_patterns(args.exclude_rules),
                      "suites": [k for k, _ in present],
                      "shard": args.shard, "timeout_s": args.timeout, "selected": len(chosen),
                      "listed": len(tests), "allow_empty": args.allow_empty},
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
        f"{identity['device_id']:#x}), profile {profile_name}; {version_why}; "
        f"{len(active)} waiver(s) apply; must-pass: {must.describe()}")
    progress = Progress(len(chosen))
    finished = []
    replay_prefix = []
    if in_guest:  # the replay needs the guest too
        replay_prefix = [os.path.join(ROOT, "adapters", "rxe", "device-run"), "--"]
    if topology:  # and the peer
        replay_prefix = twonode.replay_prefix(topology, build)
    runners = []
    interrupted = []
    stopped = []

    def on_result(r):
        waiver_files.apply(active, identity, [r])
        r["must_pass"] = must.applies(r, rule_levels)
        finished.append(r)
        records.write(json.dumps(dict(r, record="test")) + "\n")
        records.flush()
        bad = sum(t["verdict"] in ("fail", "crash", "timeout", "blocked") for t in finished)
        if bad <= QUIET_AFTER:
            progress.finished_test(r)
        else:
            if bad == QUIET_AFTER + 1 and r["verdict"] in ("fail", "crash", "timeout", "blocked"):
                progress.clear()
                say("  (more failures are not printed as they come: see the summary)")
            progress.done += 1
            progress.bad = bad
            progress.show(force=progress.done == progress.total)
        if args.max_failures and bad >= args.max_failures and not stopped:
            stopped.append(f"stopped after {bad} failing tests (--max-failures "
                           f"{args.max_failures})")
            for runner in runners:
                runner.stop = True

    def stop(signum, _frame):
        interrupted.append(signum)
        for r in runners:
            r.stop = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    os.environ.update(capture_env)  # --capture: every test process writes its traces there
    for kind, exe in present:
        mine = [t for t in chosen if t["executable"] == exe]
        if not mine or interrupted or stopped:
            continue
        extra = []  # the property executable's own flags
        if kind == "property":
            if args.property_sequences:
                extra.append(f"--ndkct_tests={args.property_sequences}")
            # A sequence that meets a known finding is discarded and counted there, and the
            # search goes on (conformance/properties/waivers.hpp): a waiver at the level of the
            # whole test would end the property at its first waived sequence.
            extra += [f"--ndkct_waivers={os.path.abspath(p)}" for p in waiver_paths(args)]
        runner = execute.Runner(exe, provider_arg, logs, args.timeout, known_rules, replay_prefix,
                                provider.library(build), args.unresponsive_after, extra)
        runners.append(runner)
        runner.run(mine, progress.started_test, on_result)
    progress.clear()
    records.close()

    complete = not interrupted and not stopped and len(finished) == len(chosen)
    result = results.finish(run_record, finished, [w.to_json() for w in active],
                            args.strict_waivers, complete, now(), rules,
                            stopped=stopped[0] if stopped else None)
    result["duration_s"] = round(time.time() - started_epoch, 3)
    result.pop("started_epoch", None)
    paths = results.write_all(result, out, rules, html=not args.no_html)
    summarize(result, paths)
    if interrupted:
        return 130
    return 0 if result["gate"]["passed"] else 1


def tool_version():
    if os.environ.get("NDKCT_VERSION"):  # an install (packaging/ndkct.in)
        return os.environ["NDKCT_VERSION"]
    try:
        with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
            for line in f:
                if "project(ndkct VERSION" in line:
                    return line.split("VERSION")[1].split()[0]
    except OSError:
        pass
    return "unknown"
