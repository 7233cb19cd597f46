#!/usr/bin/python3
"""The proofs of issue 15 (traces), one ctest each (label "traces"):

  definition      the format's definition is valid, the page's appendix is the definition's,
                  and it decodes every record of the directed suite's traces exactly
  model_suite     the directed suite captured from the reference provider through the runner
                  (./ndkct run --capture) checks clean offline (./ndkct check-trace), and the
                  live and offline verdicts agree test by test
  model_properties  the same for the property suite: thousands of generated call sequences (a
                  trace each), which reach what directed tests do not (SGEs naming the same
                  bytes, registrations refused on a registered MR)
  faulty_properties  the property suite on a faulty provider (fr_misaligned_base): live and
                  offline verdicts agree test by test, and both name its rule; a test that
                  fails live only at its teardown's drain does too (the DRAINED records)
  faults          every deliberately faulty provider's trace is judged offline to break the
                  rule the live run names; the live-vs-offline table is written to
                  <work>/fault-table.md (faults no call stream can show are listed with why)
  replay          reference traces replay the same against another seed; a faulty provider's
                  trace replayed against the reference provider differs at the faulty call; a
                  trace with digests only is refused, naming the record
  fuzz_check_trace  truncated and bit-flipped traces given to check-trace: clean errors only
  verbs_traces    (after conformance.verbs_on_device, which captures) the verbs provider's
                  traces from the rxe guest check offline as the live run judged them
  replay_on_verbs (in the guest) a reference-provider trace replays the same on verbs
"""
import argparse
import concurrent.futures
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
PY = "/usr/bin/python3"
RUNNER = os.path.join(ROOT, "conformance", "runner", "ndkct-run")
TRACES = os.path.join(ROOT, "conformance", "runner", "ndkct-traces")
sys.path.insert(0, os.path.join(ROOT, "reports"))
from ndkct_reports import result as results  # noqa: E402

# Faults whose broken rule no stream of NDK calls and callbacks can show, and why.
INVISIBLE = {
    "connection_data_overrun":
        "CONN-PD-03's 'nothing past the buffer is written': the provider writes past the end of "
        "the consumer's buffer, which is no argument or outcome the boundary carries; only a "
        "consumer that guards its buffer (the live harness does) can see it",
    # The fast registrations whose entries never come (defer_stranded_on_refusal,
    # fr_posted_unsignaled, fr_deferred_dropped, fr_silent_failure_dropped) and the solicited
    # notification that never comes (send_drops_solicit) were listed here until trace 1.5: the
    # harness's waits now write OVERDUE and UNNOTIFIED records when they run out, and the judge
    # names the same rules there.
    "fr_pages_reordered":
        "FR-PAGE-02's array order: the peer's bytes land on another page of the fast "
        "registration; the trace carries the bytes of the target pages only, so offline the "
        "write shows as WRT-01 (the bytes at the target are not the ones sent), not on which "
        "page they went (the live oracle reads the registration's other pages)",
    # s13map (issue 13)
    "fr_assumes_contiguous_pages":
        "FR-MAP-01's pages: the peer's write lands on, and its read returns, the page after "
        "AdapterPageArray[0] instead of the array's middle entry; the trace carries the bytes of "
        "the pages the request names only, so offline the write shows as WRT-01 and the read as "
        "RD-01 (the bytes are not the ones sent), not on which page they went (the live oracle "
        "reads the page the run from AdapterPageArray[0] puts them on)",
    # s11qp (issue 13)
    "qp_resource_failure_hands_qp":
        "CQP-ST-03's 'creates no QP': the CreateCompletion that reports "
        "STATUS_INSUFFICIENT_RESOURCES passes the QP it made as pNdkObject; the capture keeps a "
        "create completion's object only with STATUS_SUCCESS (capture.c, cap_create_completion), "
        "so the trace shows a plain resource failure, which is allowed (the live harness sees "
        "the pointer; the offline judge names the rule for a trace that carries it)",
    # s13va (issue 13)
    "mr_accesses_through_va":
        "RMR-VA-03's 'never dereferences the VA': the peer's bytes land in the decoy buffer the "
        "decoy-VA MDL's virtual address maps; the trace carries the MDL's VA and PFNs and the "
        "bytes of the PFNs' pages only, not which pages that VA maps in the consumer's address "
        "space, so offline the write shows as WRT-01 (the bytes at the target are not the ones "
        "sent), not where they went (the live oracle asks the arena what the VA maps)",
    # s13lamva (issue 13)
    "lam_maps_through_va":
        "LAM-VA-01's 'never reads or writes through the VA': the LAM's logical pages map the "
        "decoy buffer the decoy-VA MDL's virtual address maps, so a send through them carries "
        "the decoy's bytes and a receive into them lands in the decoy; the trace carries the "
        "MDL's VA and PFNs and the bytes of the PFNs' pages only, not which pages that VA maps "
        "in the consumer's address space, so offline both show as RCV-03 (the bytes are not the "
        "ones sent), not where they went (the live oracle asks the arena what the VA maps)",
}

# (The wrong-Context faults, mr_/ifr_/lam_callback_wrong_context, had a GEN-CB-03 fallback here
# until 2026-12-07: a stray that came while its pended call was still inside stood before the
# call's record and was judged before the request it belonged to was known. The judge now holds
# a stray to the end and counts the calls that were inside then, as the live harness counts the
# requests it registered before the call: their own rule, offline as live, however the race
# goes; trace_test's AStrayCallbackInsideItsCallNamesThatCallsContextRule.)
# Live failures that only a test body's own expectation finds (no oracle finding live either;
# the rule the live report names is the test's scope for that expectation):
# the oracle, live or offline, judges the calls and callbacks that happen, and these tests fail
# on one that never comes while the test waits for it, which no record shows. Offline they are
# judged pass; the comparison lists them as such instead of as agreements.
BODY_ONLY = {
    "CompletionQueue.SolicitedArmFiresOnAnError":
        "a CQ armed for solicited completions gets an error completion and the test waits for "
        "its notification (CQ-NOT-11); rxe raises none (waived live): the trace shows the arm "
        "and the completion, and no notification, but not that the consumer was owed one by a "
        "given time",
}
# (A test's second session, seed_support.hpp's session_with, prints "oracle (second session): ".)
ORACLE = re.compile(r"oracle(?: \(second session\))?: ([A-Z0-9, -]+?):")


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def tool(opts):
    return os.path.join(opts.build, "conformance", "trace", "ndkct-trace")


def tests_exe(opts):
    return os.path.join(opts.build, "conformance", "tests", "conformance_tests")


def capture(opts, folder, provider, gtest_filter=None, with_bytes=False, block_kb=None,
            events=None):
    """The conformance tests against `provider`, each test's session captured into `folder`;
    returns the live output. `events`: a file for the tests' event stream (--ndkct_events)."""
    env = dict(os.environ, NDKCT_CAPTURE_DIR=fresh(folder))
    if with_bytes:
        env["NDKCT_CAPTURE_BYTES"] = "1"
    if block_kb:
        env["NDKCT_CAPTURE_BLOCK_KB"] = str(block_kb)
    command = [tests_exe(opts), f"--provider={provider}"]
    if gtest_filter:
        command.append(f"--gtest_filter={gtest_filter}")
    if events:
        if os.path.exists(events):
            os.remove(events)
        command.append(f"--ndkct_events={events}")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    return done.stdout + done.stderr


def oracle_rules(text):
    rules = set()
    for m in ORACLE.finditer(text):
        rules |= {r.strip() for r in m.group(1).split(",") if r.strip()}
    return rules


def failure_rules(events):
    """The rules the live run's failures name, as its runner takes them (the event stream's
    failure_rules): the oracle's, and the harness's own where a wait ran out (WR-10, FR-ST-01...),
    which print no 'oracle:' line."""
    rules = set()
    if not os.path.exists(events):
        return rules
    with open(events, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            event = json.loads(line)
            for named in event.get("failure_rules", []):
                rules |= set(named)
    return rules


def judge(opts, files):
    """ndkct-trace check --json over files: the per-file results."""
    out = os.path.join(opts.work, "judge.jsonl")
    done = subprocess.run([tool(opts), "check", "--json", out] + files, capture_output=True,
                          text=True, timeout=600)
    check(done.returncode in (0, 1, 2), f"ndkct-trace check exited {done.returncode}: "
          f"{done.stderr[-2000:]}")
    with open(out, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def offline_rules(judged):
    rules = set()
    for j in judged:
        for f in j["findings"]:
            if not f["warning"]:
                rules |= set(f["rules"])
    return rules


# ---- definition ----

def case_definition(opts):
    import jsonschema
    with open(os.path.join(ROOT, "spec", "trace", "trace-format.json"), encoding="utf-8") as f:
        definition = json.load(f)
    with open(os.path.join(ROOT, "spec", "trace", "trace-format.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    problems = [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(definition)]
    check(not problems, f"trace-format.json breaks its schema: {problems[:3]}")
    # A call's arguments and outcome may not share a field name (the decoded record is one map).
    for r in definition["records"]:
        names = [f["name"] for f in r.get("args", []) + r.get("outcome", []) + r.get("fields", [])
                 if not f["name"].startswith("reserved")]
        check(len(names) == len(set(names)), f"{r['name']}: a field name repeats")
    # The page's appendix is the definition's own.
    with open(os.path.join(ROOT, "spec", "TRACE.md"), encoding="utf-8") as f:
        page = f.read()
    for line in appendix(definition):
        check(line in page, f"spec/TRACE.md's appendix lacks or differs at: {line[:100]}")
    # Every record of the directed suite's traces (digests and bytes) decodes by it exactly.
    folder = os.path.join(opts.work, "definition")
    capture(opts, folder, "model:seed=1", with_bytes=True, block_kb=8192)
    files = sorted(glob.glob(os.path.join(folder, "*.ndktrace")))
    check(len(files) > 250, f"only {len(files)} traces captured")
    done = subprocess.run([tool(opts), "check-definition"] + files, capture_output=True,
                          text=True, timeout=600)
    check(done.returncode == 0, f"check-definition: {done.stderr[-3000:]}")
    print(done.stdout.strip())
    kinds = set()
    for path in files[:400]:
        out = subprocess.run([tool(opts), "dump", "--json", path], capture_output=True, text=True)
        for line in out.stdout.splitlines():
            record = json.loads(line)
            if "name" in record:
                kinds.add(record["name"])
    unseen = sorted(r["name"] for r in definition["records"] if r["name"] not in kinds
                    and r["class"] != "meta")
    print(f"record kinds seen in the suite's traces: {len(kinds)}; not seen: {', '.join(unseen)}")
    # As a user runs it: ./ndkct trace dump FILE (the script puts --build first).
    done = subprocess.run([PY, TRACES, "trace", "--build", opts.build, "dump", files[0]],
                          capture_output=True, text=True, timeout=120)
    check(done.returncode == 0 and "NdkQueryAdapterInfo" in done.stdout,
          f"./ndkct trace dump exited {done.returncode}: {done.stderr[-2000:]}")


def appendix(definition):
    def fields(fs):
        out = []
        for f in fs:
            t = f["type"]
            if "count" in f:
                t = f"{t}[{f['count']}]"
            if "when" in f:
                t += f" if {f['when']['field']}&{f['when']['mask']}"
            out.append(f"{f['name']}:{t}")
        return ", ".join(out)
    lines = []
    for r in definition["records"]:
        if r["class"] == "call":
            body, order = fields(r["args"]) + " ‖ " + (fields(r["outcome"]) or "—"), r["recorded"]
        else:
            body, order = fields(r["fields"]), "start" if r["class"] == "callback" else "—"
        lines.append(f"| 0x{r['kind']:04X} | {r['name']} | {order} | {body} |")
    for name, fs in definition["structs"].items():
        lines.append(f"| {name} | {fields(fs)} |")
    return lines


# ---- model_suite: live and offline agree ----

def compare_live_offline(live, offline):
    """Test by test: the offline verdict of a test's traces against its live verdict. Returns the
    disagreements."""
    by_test = {}
    for t in offline["tests"]:
        by_test.setdefault(results.test_of(t), []).append(t)
    disagreements = []
    for t in live["tests"]:
        traced = by_test.get(t["test"], [])
        # Waivers apply offline as live: a waived failure is a failure of the provider.
        off_fail = any(x["verdict"] == "fail" or (x["verdict"] == "waived" and
                                                  x.get("waived_verdict", "fail") == "fail")
                       for x in traced)
        off_rules = set(r for x in traced for r in x["failed_rules"])
        live_fail = t["verdict"] in ("fail", "waived") and t.get("waived_verdict", "fail") == "fail"
        live_rules = set(t["failed_rules"])
        body_only = next((why for name, why in BODY_ONLY.items() if name in t["test"]), None)
        if not traced and t["verdict"] != "not_supported":
            disagreements.append(f"{t['test']}: no trace")
        elif live_fail and not off_fail and body_only:
            print(f"live {t['verdict']}, offline pass (the test body's expectation alone): "
                  f"{t['test']}: {body_only}")
        elif live_fail != off_fail:
            disagreements.append(f"{t['test']}: live {t['verdict']} {sorted(live_rules)}, "
                                 f"offline {'fail' if off_fail else 'pass'} {sorted(off_rules)}")
        elif live_fail and not (live_rules & off_rules):
            disagreements.append(f"{t['test']}: live {sorted(live_rules)}, offline "
                                 f"{sorted(off_rules)}")
    return disagreements


def run_and_check(opts, name, provider, extra=(), suites="directed"):
    traces = fresh(os.path.join(opts.work, name, "traces"))
    live_out = os.path.join(opts.work, name, "live")
    off_out = os.path.join(opts.work, name, "offline")
    done = subprocess.run([PY, RUNNER, "--build", opts.build, "--provider", provider, "--suites",
                           suites, "--capture", traces, "--out", live_out, "--no-html"]
                          + list(extra), capture_output=True, text=True, timeout=900)
    check(done.returncode in (0, 1), f"the live run exited {done.returncode}: {done.stderr[-1500:]}")
    return traces, live_out, off_out, done.returncode


# Warnings a suite's own consumer behaviour earns offline, by rule: the property teardown releases
# only the LAMs built inline (keep_lam in commands_mappings_and_initializations.cpp: a build that
# pended inside a callback keeps its buffer to the end), so the adapter closes with the others
# and the judge warns of them; live, the property check fails on violations only.
CONSUMER_WARNINGS = {
    "property": {"AMB-36"},
}


def case_model_suite(opts, name="model-suite", suites="directed"):
    traces, live_out, off_out, status = run_and_check(opts, name, "model:seed=1", suites=suites)
    check(status == 0, "the live run of the reference provider failed")
    done = subprocess.run([PY, TRACES, "check-trace", "--build", opts.build, traces, "--out",
                           off_out], capture_output=True, text=True, timeout=900)
    print(done.stderr.strip().splitlines()[0] if done.stderr.strip() else "")
    check(done.returncode == 0, f"check-trace exited {done.returncode}: {done.stderr[-2000:]}")
    live = json.load(open(os.path.join(live_out, "result.json"), encoding="utf-8"))
    offline = json.load(open(os.path.join(off_out, "result.json"), encoding="utf-8"))
    for r in (live, offline):
        problems = results.validate(r)
        check(not problems, f"a result.json breaks its schema: {problems[:3]}")
    allowed = CONSUMER_WARNINGS.get(suites, set())
    warned = {}
    for t in offline["tests"]:
        if t["verdict"] == "warning" and allowed:
            rules = set(re.findall(r"^warning: ([A-Z0-9, -]+?):", t["message"], re.M))
            rules = {r.strip() for group in rules for r in group.split(",")}
            if rules <= allowed:
                for r in rules:
                    warned[r] = warned.get(r, 0) + 1
                continue
        check(t["verdict"] == "pass", f"offline: {t['test']}: {t['verdict']}: "
              f"{t['message'][:600]}")
    for rule, n in sorted(warned.items()):
        print(f"offline warnings the suite's consumer earns: {rule} in {n} traces")
    disagreements = compare_live_offline(live, offline)
    check(not disagreements, "live and offline disagree:\n  " + "\n  ".join(disagreements))
    print(f"{name}: {len(live['tests'])} tests live, {len(offline['tests'])} traces offline, "
          f"verdicts agree test by test")


def case_model_properties(opts):
    case_model_suite(opts, "model-properties", "property")


def case_faulty_properties(opts):
    name, rule = "fr_misaligned_base", "FR-ALIGN-03"
    library = os.path.join(opts.build, "conformance", "faulty", f"libndkct_faulty_{name}.so")
    traces, live_out, off_out, status = run_and_check(opts, "faulty-properties", f"lib:{library}",
                                                      suites="property")
    check(status == 1, f"the live run of {name} exited {status}, not 1 (a failure)")
    done = subprocess.run([PY, TRACES, "check-trace", "--build", opts.build, traces, "--out",
                           off_out], capture_output=True, text=True, timeout=900)
    check(done.returncode == 1, f"check-trace exited {done.returncode}: {done.stderr[-2000:]}")
    live = json.load(open(os.path.join(live_out, "result.json"), encoding="utf-8"))
    offline = json.load(open(os.path.join(off_out, "result.json"), encoding="utf-8"))
    disagreements = compare_live_offline(live, offline)
    check(not disagreements, "live and offline disagree:\n  " + "\n  ".join(disagreements))
    failing = [t for t in live["tests"] if t["verdict"] == "fail"]
    check(failing and all(rule in t["failed_rules"] for t in failing),
          f"live: not every failing test names {rule}")
    # The summary counts tests, not their traces (a property's cases are a trace each).
    summary = [x for x in (done.stderr + done.stdout).splitlines() if "must-pass test" in x]
    check(summary and re.search(rf"\b{len(failing)} must-pass tests? did not pass \(in \d+ "
                                r"traces\)", summary[0]), f"check-trace's summary: {summary[:1]}")
    print(f"faulty_properties: {len(failing)} tests fail live and offline, naming {rule}")


# ---- faults ----

def faults_list():
    out = []
    with open(os.path.join(ROOT, "conformance", "faulty", "CMakeLists.txt"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r'ndkct_faulty_provider\((\w+)\s+(\S+)\s+"([^"]+)"\)', line)
            if m:
                out.append(m.groups())
    return out


def one_fault(opts, name, rule, gtest_filter):
    library = os.path.join(opts.build, "conformance", "faulty", f"libndkct_faulty_{name}.so")
    folder = os.path.join(opts.work, "faults", name)
    events = os.path.join(opts.work, "faults", f"{name}.events.jsonl")
    live_text = capture(opts, folder, f"lib:{library}", gtest_filter, events=events)
    files = sorted(glob.glob(os.path.join(folder, "*.ndktrace")))
    out = os.path.join(opts.work, "faults", f"{name}.jsonl")
    done = subprocess.run([tool(opts), "check", "--json", out] + files, capture_output=True,
                          text=True, timeout=600)
    judged = []
    if os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            judged = [json.loads(line) for line in f if line.strip()]
    return {"name": name, "rule": rule, "live": oracle_rules(live_text) | failure_rules(events),
            "offline": offline_rules(judged), "traces": len(files), "status": done.returncode,
            "judged": judged}


def check_objects_named_by_handle(opts, row):
    """The oracle's messages name objects as the trace does: "came on CQ 0x55bc2b5994f0", a
    handle some create in the same trace handed out, not the oracle's own number."""
    named = re.compile(r"came on CQ (0x[0-9a-f]+); its \w+ request completes on CQ (0x[0-9a-f]+)")
    for j in row["judged"]:
        for f in j["findings"]:
            m = named.search(f["message"])
            if not m:
                continue
            done = subprocess.run([tool(opts), "dump", j["file"]], capture_output=True, text=True,
                                  timeout=120)
            # Handed out by the create's return ("made") or by its CreateCompletion ("object").
            made = set(re.findall(r"handle (0x[0-9a-f]+), null_member \d+, object_type 3,",
                                  done.stdout))
            check(set(m.groups()) <= made, f"{f['message']}: not the handles of the trace's CQs "
                  f"({sorted(made)})")
            return
    check(False, f"{row['name']}: no message names the two CQs")


def check_fast_registration_hint(opts):
    """fr_pages_reordered: a trace digests the pages AdapterPageArray names, not the ones the
    bytes went to, so offline the rule is the write's (WRT-01); the message still points at the
    registration's page order, and check-trace's line keeps the record the verdict names."""
    folder = os.path.join(opts.work, "faults", "fr_pages_reordered")
    out = os.path.join(opts.work, "faults", "fr_pages_reordered-report")
    done = subprocess.run([PY, TRACES, "check-trace", "--build", opts.build, folder, "--out", out],
                          capture_output=True, text=True, timeout=600)
    lines = [x for x in done.stdout.splitlines() + done.stderr.splitlines() if " FAIL " in x]
    check(any("FR-PAGE-02, would do this too) [record #" in x for x in lines),
          "no check-trace line of fr_pages_reordered names FR-PAGE-02 and its record:\n" +
          "\n".join(lines[:3]))


def case_faults(opts):
    fresh(os.path.join(opts.work, "faults"))
    faults = faults_list()
    check(len(faults) >= 32, f"{len(faults)} faulty providers listed")
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        rows = list(pool.map(lambda f: one_fault(opts, *f), faults))
    table = ["| fault | rule | live run names | offline names | offline |",
             "| --- | --- | --- | --- | --- |"]
    missing = []
    for r in rows:
        hit = r["rule"] in r["offline"]
        why = INVISIBLE.get(r["name"])
        verdict = "caught" if hit else ("not visible: " + why if why else "MISSED")
        if not hit and not why:
            missing.append(r["name"])
        if hit and r["rule"] not in r["live"]:
            missing.append(r["name"] + " (live)")
        table.append(f"| {r['name']} | {r['rule']} | {', '.join(sorted(r['live']))} | "
                     f"{', '.join(sorted(r['offline'])) or '—'} | {verdict} |")
    text = "\n".join(table) + "\n"
    with open(os.path.join(opts.work, "fault-table.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    check(not missing, f"faults not caught offline by their rule: {missing}")
    check_objects_named_by_handle(opts, next(r for r in rows if r["name"] == "qp_cqs_swapped"))
    check_fast_registration_hint(opts)
    caught = sum(1 for r in rows if r["rule"] in r["offline"])
    print(f"faults: {caught} of {len(rows)} caught offline by their rule; "
          f"{len(INVISIBLE)} not visible in any call stream")


# ---- replay ----

def replay(opts, path, provider, *extra):
    done = subprocess.run([tool(opts), "replay", path, "--provider", provider] + list(extra),
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


REPLAY_TESTS = ("DataPath.WriteLandsInTheRemoteRegion", "DataPath.SendFillsThePostedReceive",
                "DataPath.ReadBringsTheRemoteBytes", "FastRegister.RefusedRemoteRightsRegisterNothing",
                "Connection.ConnectionDataProbeAndCopy", "CompletionQueue.ArmAnyNotifiesOnce",
                "CompletionQueue.SendAndInvalidateEntries")


def reference_traces(opts):
    """Traces of data-path and connection tests from the reference provider, with their bytes."""
    folder = os.path.join(opts.work, "replay", "reference")
    capture(opts, folder, "model:seed=1", ":".join(f"*{t}/*" for t in REPLAY_TESTS),
            with_bytes=True)
    files = sorted(glob.glob(os.path.join(folder, "*.ndktrace")))
    check(len(files) >= 4, f"only {len(files)} reference traces")
    return files


def case_replay(opts):
    fresh(os.path.join(opts.work, "replay"))
    for path in reference_traces(opts):
        status, text = replay(opts, path, "model:seed=2")
        check(status == 0, f"{os.path.basename(path)} replayed against model:seed=2 differs:\n{text}")
    # A faulty provider's trace against the reference: the difference at the faulty call.
    for fault, test, expect in (
            ("write_reported_as_read", "DataPath.WriteLandsInTheRemoteRegion",
             r"differs at record #\d+ \(NdkGetCqResultsEx\): .*recorded Type 32 "
             r"\(NdkOperationTypeRead\), replayed 64 \(NdkOperationTypeWrite\)"),
            ("fr_returns_pending", "Bites.FastRegisterLocalWriteIsNotRemote",
             r"differs at record #\d+ \(NdkFastRegister\): recorded STATUS_PENDING, replayed "
             r"STATUS_SUCCESS"),
            # A data fault: the same statuses, other bytes where the write landed.
            ("fr_pages_reordered", "FastRegister.PagesMapInArrayOrder",
             r"differs at record #\d+ \(NdkGetCqResultsEx\): .*: the \d+ bytes that landed "
             r"differ from the recording's")):
        library = os.path.join(opts.build, "conformance", "faulty", f"libndkct_faulty_{fault}.so")
        folder = os.path.join(opts.work, "replay", fault)
        capture(opts, folder, f"lib:{library}", f"*{test}*", with_bytes=True)
        files = sorted(glob.glob(os.path.join(folder, "*.ndktrace")))
        check(files, f"no trace of {fault}")
        status, text = replay(opts, files[0], "model:seed=1")
        check(status == 1 and re.search(expect, text),
              f"{fault}: the replay against the reference provider did not differ at the faulty "
              f"call (exit {status}):\n{text}")
        print(f"{fault}: {re.search(expect, text).group(0)}")
    # Digests only: refused, naming the record.
    folder = os.path.join(opts.work, "replay", "digests")
    capture(opts, folder, "model:seed=1", "*DataPath.WriteLandsInTheRemoteRegion/*")
    path = sorted(glob.glob(os.path.join(folder, "*.ndktrace")))[0]
    status, text = replay(opts, path, "model:seed=2")
    check(status == 2 and re.search(r"record #\d+ \(NdkWrite\) moves \d+ bytes the trace carries "
                                     r"only the digest of", text),
          f"a digest-only trace was not refused as it should (exit {status}):\n{text}")
    status, _ = replay(opts, path, "model:seed=2", "--without-data")
    check(status == 0, "--without-data did not replay the digest-only trace")


# ---- fuzz_check_trace ----

def case_fuzz_check_trace(opts):
    folder = os.path.join(opts.work, "fuzz")
    capture(opts, os.path.join(folder, "seeds"), "model:seed=1",
            "*DataPath.*:*Connection.ConnectionDataProbeAndCopy*")
    seeds = sorted(glob.glob(os.path.join(folder, "seeds", "*.ndktrace")))
    check(seeds, "no seed traces")
    rng = random.Random(15)
    mutants = fresh(os.path.join(folder, "mutants"))
    paths = []
    for i in range(240):
        with open(rng.choice(seeds), "rb") as f:
            data = bytearray(f.read())
        kind = i % 3
        if kind in (0, 2):
            data = data[:rng.randrange(len(data) + 1)]
        for _ in range(rng.randrange(1, 9) if kind else 0):
            if data:
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        path = os.path.join(mutants, f"m{i:03}.ndktrace")
        with open(path, "wb") as f:
            f.write(data)
        paths.append(path)
    # The tool: one process per mutant, so that a crash would show as a signal.
    outcomes = {}
    for path in paths:
        done = subprocess.run([tool(opts), "check", path], capture_output=True, text=True,
                              timeout=60)
        check(done.returncode in (0, 1, 2), f"{path}: ndkct-trace check exited "
              f"{done.returncode} (a crash?):\n{done.stderr[-500:]}")
        outcomes[done.returncode] = outcomes.get(done.returncode, 0) + 1
        if "stopped" in done.stdout:
            check("offset" in done.stdout, f"{path}: a stop without its offset: {done.stdout}")
    # The runner: reports written, exit status of bad input, no traceback.
    out = os.path.join(folder, "report")
    done = subprocess.run([PY, TRACES, "check-trace", "--build", opts.build, mutants, "--out",
                           out, "--no-html"], capture_output=True, text=True, timeout=900)
    check("Traceback" not in done.stderr, f"check-trace raised:\n{done.stderr[-2000:]}")
    check(done.returncode == 2, f"check-trace exited {done.returncode} on damaged traces (bad "
          f"input: 2)")
    result = json.load(open(os.path.join(out, "result.json"), encoding="utf-8"))
    check(not results.validate(result), "the report of damaged traces breaks its schema")
    check(len(result["tests"]) == len(paths), "not every mutant has its test in the report")
    stopped = sum(1 for t in result["tests"] if "stopped" in t["message"])
    print(f"fuzz: {len(paths)} mutants: exit statuses {outcomes}; check-trace exit "
          f"{done.returncode}, {stopped} reported as stopped with their offset")
    # A profile that cannot be loaded is bad input, named before anything is judged.
    bad_out = os.path.join(folder, "bad-profile")
    done = subprocess.run([PY, TRACES, "check-trace", "--build", opts.build, seeds[0], "--out",
                           bad_out, "--profile", "no-such-profile"], capture_output=True,
                          text=True, timeout=300)
    said = done.stdout + done.stderr
    check(done.returncode == 2 and "--profile no-such-profile: no built-in profile" in said,
          f"check-trace --profile no-such-profile exited {done.returncode}:\n{said[-1000:]}")
    check(not os.path.exists(os.path.join(bad_out, "result.json")),
          "check-trace with a profile it cannot load wrote a report")


# ---- verbs ----

def case_verbs_traces(opts):
    """The traces conformance.verbs_on_device captured in the guest, judged here."""
    traces = os.path.join(opts.build, "conformance-verbs-traces")
    live_out = os.path.join(opts.build, "conformance-verbs")
    check(glob.glob(os.path.join(traces, "*.ndktrace")), f"no verbs traces in {traces} (run "
          f"conformance.verbs_on_device first)")
    off_out = os.path.join(opts.work, "verbs-offline")
    done = subprocess.run([PY, TRACES, "check-trace", "--build", opts.build, traces, "--out",
                           off_out, "--no-html"], capture_output=True, text=True, timeout=900)
    print("\n".join(done.stderr.strip().splitlines()[:6]))
    check(done.returncode == 0, f"check-trace of the verbs traces exited {done.returncode}:\n"
          f"{done.stderr[-3000:]}")
    live = json.load(open(os.path.join(live_out, "result.json"), encoding="utf-8"))
    offline = json.load(open(os.path.join(off_out, "result.json"), encoding="utf-8"))
    disagreements = compare_live_offline(live, offline)
    check(not disagreements, "live and offline disagree:\n  " + "\n  ".join(disagreements))
    print(f"verbs_traces: {len(offline['tests'])} traces from rxe: {offline['counts']}; the "
          f"live run: {live['counts']}")


def case_replay_on_verbs(opts):
    """In the guest: reference-provider traces (captured with their bytes on the host by
    trace.proof.replay) replayed on verbs."""
    files = sorted(glob.glob(os.path.join(opts.work, "replay", "reference", "*.ndktrace")))
    check(files, "no reference traces (trace.proof.replay makes them)")
    # ndkct-trace opens providers by spec; the verbs provider is its shared library (the runner
    # turns `--provider verbs` into the same spec).
    verbs = "lib:" + os.path.join(opts.build, "adapters", "verbs", "libndkct_verbs_provider.so")
    # A test waived for verbs on rxe (conformance/waivers/verbs-rxe.txt) must differ on it, by
    # the oracle naming a rule of its waiver: the replay shows the known finding, nothing else.
    waived = {"CompletionQueue.SendAndInvalidateEntries":
              {"SAI-01", "CQ-RES-07", "CQ-RES-06", "CQ-RES-03", "RCV-03", "CQ-CST-01"}}
    for path in files:
        status, text = replay(opts, path, verbs)
        print(text.strip())
        rules = next((r for name, r in waived.items() if name in os.path.basename(path)), None)
        named = set(oracle_rules(text))
        if rules is None:
            # Passes: the oracle finds nothing. Outcomes that differ within what the rules
            # allow are shown, not failed (rdma_cm pads private data to its fixed size, so
            # NdkGetConnectionData reports 56 or 148 bytes where the reference reports 20).
            check(status in (0, 1) and not named,
                  f"{os.path.basename(path)} replayed on verbs: exit {status}, the oracle "
                  f"names {sorted(named)}")
            continue
        check(status == 1 and named and named <= rules,
              f"{os.path.basename(path)} (waived on rxe for {sorted(rules)}) replayed on verbs: "
              f"exit {status}, rules {sorted(named)}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case")
    p.add_argument("--build", required=True)
    p.add_argument("--work", required=True)
    opts = p.parse_args()
    opts.build = os.path.abspath(opts.build)
    opts.work = os.path.abspath(opts.work)
    os.makedirs(opts.work, exist_ok=True)
    case = globals().get("case_" + opts.case)
    if case is None:
        print(f"unknown case {opts.case}")
        return 2
    try:
        case(opts)
    except Failure as failure:
        print(f"FAILED: {failure}")
        return 1
    print(f"{opts.case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
