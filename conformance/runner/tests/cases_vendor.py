"""Runner test cases for a vendor's first day (runner_test.py runs them): the PROVIDER.md
skeleton built as the page says and run as the README says; verdicts per rule; budgets; empty
gates; stable names; shards merged into one report."""
import json
import os
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET

from runner_test import (PY, ROOT, SEND_TEST, WRITE_TEST, Failure, by_id, check, load_checked,
                         out_dir, runner)

REPORT = os.path.join(ROOT, "reports", "ndkct-report")


def skeleton_source():
    """The skeleton provider of spec/PROVIDER.md, verbatim (the C block that is vendor.c)."""
    with open(os.path.join(ROOT, "spec", "PROVIDER.md"), encoding="utf-8") as f:
        page = f.read()
    blocks = re.findall(r"```c\n(.*?)```", page, re.S)
    sources = [b for b in blocks if "vendor.c" in b.splitlines()[0]]
    check(len(sources) == 1, f"PROVIDER.md has {len(sources)} vendor.c blocks")
    return sources[0]


def build_skeleton(work):
    folder = os.path.join(work, "vendor")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "vendor.c"), "w") as f:
        f.write(skeleton_source())
    library = os.path.join(folder, "libvendor.so")
    done = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-shared",
                           "-fPIC", "-fvisibility=hidden", "-I",
                           os.path.join(ROOT, "spec", "include"), "-o", library,
                           os.path.join(folder, "vendor.c")], capture_output=True, text=True)
    check(done.returncode == 0, "the PROVIDER.md skeleton does not build:\n" + done.stderr)
    return library


def case_skeleton(opts):
    """The skeleton, run as the README says (no --ndk-version): NDKPI 1.2 is chosen and said,
    the summary's first line says to implement NdkCreatePd, every failure names a rule, nothing
    crashes; an explicit --ndk-version 2.1 is obeyed, and the refusal says what to do."""
    work = out_dir(opts, "skeleton")
    library = build_skeleton(work)
    out = os.path.join(work, "out")
    done, output = runner(opts, "--provider", f"lib:{library}", status=1, out=out)
    result = load_checked(out)
    check(result["ndk_version"] == "1.2", f"NDKPI {result['ndk_version']}")
    check("the highest version both the provider (up to 1.2" in result["ndk_version_reason"],
          result["ndk_version_reason"])
    summary = done.stderr.split("\n")
    first = next(i for i, x in enumerate(summary) if "tests against vendor-nic" in x
                 and "in " in x and " s" in x)
    check(summary[first - 1].startswith("ndkct: Next: implement NdkCreatePd (CPD-01 is broken"),
          "the summary does not start with what to implement next", done.stderr)
    check(result["rules"]["next"]["function"] == "NdkCreatePd", f"{result['rules']['next']}")
    last = [x for x in summary if x.strip()][-1]
    check(last.startswith("ndkct: Next: implement NdkCreatePd (CPD-01 is broken"),
          "the summary does not end with what to implement next either", last)
    with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
        body = f.read().split("<body>", 1)[1]
    check(re.sub(r"<[^>]+>", "", body).strip().startswith("Next: implement NdkCreatePd"),
          "the HTML report's first line is not what to implement next")
    bad = [t for t in result["tests"] if t["verdict"] in ("crash", "timeout") or t["ndkct_bug"]]
    check(not bad, f"crashes or ndkct bugs: {[t['id'] for t in bad]}")
    unnamed = [t["id"] for t in result["tests"] if t["unnamed_failures"]]
    check(not unnamed, f"failures that name no rule: {unnamed[:10]}")
    # A TODO entry's STATUS_NOT_IMPLEMENTED passes no test (GEN-MAND-01), even where the test
    # wants a refusal (ndk.adapter.build_lam.length_beyond_chain passed on it once): every test
    # that passes calls only what the skeleton implements.
    implemented = {"NdkQueryAdapterInfo"}
    wrong = [(t["id"], sorted(set(t["functions"]) - implemented)) for t in result["tests"]
             if t["verdict"] in ("pass", "warning") and set(t["functions"]) - implemented]
    check(not wrong, f"tests that pass on functions the skeleton does not implement: {wrong}")
    check(by_id(result)["ndk.adapter.build_lam.length_beyond_chain"]["failed_rules"] ==
          ["GEN-MAND-01"], "a refusal by STATUS_NOT_IMPLEMENTED is not GEN-MAND-01")
    check(result["counts"].get("pass", 0) > 0, "nothing the skeleton implements passes")
    counts = result["rules"]["counts"]
    print(f"skeleton: {result['counts']}; rules {counts}; {result['rules']['next']['text']}")
    done, output = runner(opts, "--provider", f"lib:{library}", "--ndk-version", "2.1",
                          status=2, out=out)
    check(re.search(r"NDIS_STATUS_BAD_VERSION.*the run asked for NDKPI 2\.1; --ndk-version",
                    output), "the refusal does not say what to do", output)


def case_rule_verdicts(opts):
    """A provider that breaks FR-ALIGN-01 only: the matrix shows it broken (with the rules the
    same verdicts name), ranked first; every other rule is blocked or passes."""
    out = out_dir(opts, "rule_verdicts")
    runner(opts, "--provider", f"lib:{opts.faulty_fr}", "--suites", "directed", "--tests",
           "*FastRegister*,*Bites*", status=1, out=out)
    result = load_checked(out)
    rules = result["rules"]
    ranked = [r["rule"] for r in rules["ranked"]]
    check(ranked and ranked[0] == "FR-ALIGN-01", f"ranked {ranked}")
    named = {r for t in result["tests"] for r in t["failed_rules"]}
    broken = {rid for rid, v in rules["verdicts"].items() if v["verdict"] == "broken"}
    check(broken == named, f"broken {sorted(broken)} but named {sorted(named)}")
    declared = {r for t in result["tests"] for r in t["rules"]}
    for rid in declared - named:
        check(rules["verdicts"][rid]["verdict"] in ("pass", "blocked", "warning",
                                                    "not_supported"),
              f"{rid}: {rules['verdicts'][rid]}")
    blocked = [rid for rid, v in rules["verdicts"].items() if v["verdict"] == "blocked"]
    for rid in blocked:
        check(set(rules["verdicts"][rid]["blocked_by"]) <= named, f"{rid} blocked by a rule "
              f"nobody broke: {rules['verdicts'][rid]}")
    print(f"rule_verdicts: broken {sorted(broken)}; blocked {len(blocked)}; "
          f"rule counts {rules['counts']}")


def case_budgets(opts):
    """--unresponsive-after: a hanging group costs K timeouts, not one per test;
    --max-failures: the run stops, reports itself incomplete (JUnit too), exit 1."""
    out = out_dir(opts, "budget_unresponsive")
    started = time.monotonic()
    runner(opts, "--provider", f"lib:{opts.hang}", "--timeout", "1", "--unresponsive-after",
           "2", "--suites", "directed", "--tests", "ndk.qp.*", status=1, out=out)
    elapsed = time.monotonic() - started
    result = load_checked(out)
    blocked = [t for t in result["tests"] if t["verdict"] == "blocked"]
    timeouts = [t for t in result["tests"] if t["verdict"] == "timeout"]
    check(blocked and all("declared unresponsive" in t["message"] for t in blocked),
          f"{result['counts']}")
    # In each group, once 2 timeouts came in a row, the rest of the group is blocked.
    in_a_row = {}
    for t in result["tests"]:  # in the order they finished
        group = t["suite"]
        if in_a_row.get(group, 0) >= 2:
            check(t["verdict"] == "blocked", f"{t['id']} ran after its group was unresponsive")
        elif t["verdict"] == "timeout":
            in_a_row[group] = in_a_row.get(group, 0) + 1
        elif t["verdict"] != "blocked":
            in_a_row[group] = 0
    print(f"budgets: {len(timeouts)} timeouts, {len(blocked)} blocked in {elapsed:.1f} s")
    out = out_dir(opts, "budget_max_failures")
    done, output = runner(opts, "--provider", f"lib:{opts.crash}", "--max-failures", "1",
                          "--suites", "directed", "--tests", "*DataPath*,*Adapter.*", status=1,
                          out=out)
    result = load_checked(out, complete=False)
    check("--max-failures 1" in result["stopped"], result.get("stopped", ""))
    check(any("did not complete" in r for r in result["gate"]["reasons"]), "gate reason")
    check(len(result["tests"]) < result["selection"]["selected"], "it did not stop early")


def case_empty_gates(opts):
    """--allow-empty: a selection with no test runs and passes, saying nothing was checked."""
    out = out_dir(opts, "empty_allowed")
    done, output = runner(opts, "--tests", SEND_TEST, "--exclude-tests", "ndk.qp.send.*",
                          "--allow-empty", status=0, out=out)
    result = load_checked(out)
    check(result["tests"] == [] and result["selection"]["allow_empty"], "not empty")
    done, output = runner(opts, "--tests", SEND_TEST, "--shard", "2/2", "--allow-empty",
                          status=0, out=out)
    print("empty_gates: --allow-empty lets an empty selection or shard pass")


def junit_names(out):
    root = ET.parse(os.path.join(out, "junit.xml")).getroot()
    return sorted(c.get("name") for c in root.iter("testcase"))


def case_stable_names(opts):
    """JUnit names and result IDs are the dotted test IDs whatever the provider path, seed or
    profile (those are properties)."""
    work = out_dir(opts, "stable_names")
    other = os.path.join(work, "elsewhere", "libother_name.so")
    os.makedirs(os.path.dirname(other), exist_ok=True)
    shutil.copy(opts.faulty, other)
    names = []
    for n, (library, extra) in enumerate(((opts.faulty, []),
                                          (other, ["--seed", "7", "--profile", "strict"]))):
        out = os.path.join(work, f"run{n}")
        runner(opts, "--provider", f"lib:{library}", "--tests", "*DataPath*", *extra,
               status=1, out=out)
        result = load_checked(out)
        names.append(junit_names(out))
        check(names[-1] == sorted(t["id"] for t in result["tests"]), "names are not the IDs")
        root = ET.parse(os.path.join(out, "junit.xml")).getroot()
        props = {p.get("name"): p.get("value") for p in root.find("properties")}
        check(props["seed"] == ("7" if extra else "1") and library in props["provider"],
              f"properties {props}")
    check(names[0] == names[1], "JUnit names change with the provider's path, seed or profile")
    print(f"stable_names: {len(names[0])} names equal across two paths, seeds and profiles")


def merge(*args, status):
    command = [PY, REPORT, "merge"] + list(args)
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    print("$ " + " ".join(command) + f"\n  -> exit {done.returncode}")
    check(done.returncode == status, f"merge exit {done.returncode}, expected {status}", output)
    check("Traceback" not in output, "a traceback", output)
    return output


def case_merge(opts):
    """Three shards on 'three machines' merge into the report of the unsharded run; shards of
    another run, a shard twice, overlapping or missing shards are refused by name."""
    work = out_dir(opts, "merge")
    select = ["--provider", f"lib:{opts.faulty}", "--suites", "directed", "--tests",
              "*DataPath*,*Adapter.*"]
    whole = os.path.join(work, "whole")
    runner(opts, *select, status=1, out=whole)
    shards = []
    for i in (1, 2, 3):
        shards.append(os.path.join(work, f"shard{i}"))
        runner(opts, *select, "--shard", f"{i}/3", status=None, out=shards[-1])
    merged = os.path.join(work, "merged")
    output = merge(*shards, "--out", merged, status=1)
    a, b = load_checked(whole), load_checked(merged)
    check(a["counts"] == b["counts"], f"merged counts {b['counts']} vs {a['counts']}")
    check({t["id"]: t["verdict"] for t in a["tests"]} == {t["id"]: t["verdict"]
                                                          for t in b["tests"]}, "verdicts")
    check(a["rules"]["counts"] == b["rules"]["counts"], "rule verdicts differ")
    check(b["gate"]["reasons"] and not b["gate"]["passed"], "the merged gate")
    check(junit_names(whole) == junit_names(merged), "JUnit names")
    check(os.path.exists(os.path.join(merged, "report.html")), "no HTML")
    # Refusals.
    out = os.path.join(work, "refused")
    output = merge(shards[0], shards[1], "--out", out, status=2)
    check("shard 3/3 is missing" in output, "missing shard not named", output)
    output = merge(shards[0], shards[0], shards[1], shards[2], "--out", out, status=2)
    check("shard 1/3 is given twice" in output, "duplicate not named", output)
    other = os.path.join(work, "other_seed")
    runner(opts, *select, "--seed", "2", "--shard", "3/3", status=None, out=other)
    output = merge(shards[0], shards[1], other, "--out", out, status=2)
    check(re.search(r"other_seed.* is not a shard of the run of .*: its seed differs", output),
          "another run not named", output)
    # Overlap: a test of shard 1 copied into shard 2.
    overlap = os.path.join(work, "overlap")
    shutil.copytree(shards[1], overlap, dirs_exist_ok=True)
    with open(os.path.join(overlap, "result.json")) as f:
        doctored = json.load(f)
    doctored["tests"].append(load_checked(shards[0])["tests"][0])
    with open(os.path.join(overlap, "result.json"), "w") as f:
        json.dump(doctored, f)
    output = merge(shards[0], overlap, shards[2], "--out", out, status=2)
    check("the shards overlap" in output, "overlap not named", output)
    print(f"merge: 3 shards = the whole run ({b['counts']}); 4 refusals named")


__all__ = ["case_skeleton", "case_rule_verdicts", "case_budgets", "case_empty_gates",
           "case_stable_names", "case_merge", "Failure", "by_id", "WRITE_TEST"]
