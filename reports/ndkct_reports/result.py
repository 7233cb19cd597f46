"""The run result: built from the runner's records, checked against result.schema.json, and
written with its JUnit XML and HTML report.

While a run goes on, the runner appends to OUT/results.jsonl: one {"record": "run"} line (who,
what, how) before the first test, then one {"record": "test"} line per finished test. result.json
is made from that file at the end, or afterwards by `reports/ndkct-report OUT` when the run was
killed: a partial run is reported as such ("complete": false), never lost.
"""
import json
import os
import re

VERDICTS = ("pass", "fail", "not_supported", "waived", "warning", "crash", "timeout", "blocked")
GOOD = ("pass", "warning", "waived", "not_supported")
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "result.schema.json")


def counts(tests):
    c = {v: 0 for v in VERDICTS}
    for t in tests:
        c[t["verdict"]] += 1
    return c


NOTHING_CHECKED = "no must-pass test ran: nothing was checked"

_TRACE_SUFFIX = re.compile(r" \(trace \d+\)$")


def test_of(t):
    """The test a result entry belongs to: check-trace gives each trace an entry, and a test that
    ran many sessions (a property's cases) has many traces, named "<test> (trace N)"."""
    return _TRACE_SUFFIX.sub("", t["test"])


def gate(tests, waivers, strict_waivers, complete, stopped=None, allow_empty=False):
    """Exit decision: every must-pass test passed, was waived or is not supported, and at least
    one must-pass test ran (unless allow_empty)."""
    reasons = []
    if not any(t["must_pass"] for t in tests) and not allow_empty:
        reasons.append(NOTHING_CHECKED + " (--allow-empty accepts that)")
    bugs = [t for t in tests if t.get("ndkct_bug")]
    if bugs:
        reasons.append(f"ndkct's own code failed in {len(bugs)} test{'s' if len(bugs) != 1 else ''}"
                       f" (not the provider's fault; report it): "
                       + ", ".join(t["id"] or t["test"] for t in bugs[:5]))
    bad = [t for t in tests if t["must_pass"] and t["verdict"] not in GOOD]
    if bad:
        # By test: a test whose traces fail (check-trace) is one test, its rules and verdicts
        # those of all its traces, in the order they first came.
        by_test = {}
        for t in bad:
            g = by_test.setdefault(test_of(t), {"id": t["id"] or test_of(t), "verdicts": {},
                                                "rules": {}, "entries": 0})
            g["verdicts"][t["verdict"]] = None
            g["rules"].update(dict.fromkeys(t["failed_rules"]))
            g["entries"] += 1
        groups = list(by_test.values())
        names = ", ".join(f"{g['id']} ({'/'.join(g['verdicts'])}"
                          + (f": {', '.join(g['rules'])}" if g["rules"] else "")
                          + (f"; {g['entries']} traces" if g["entries"] > 1 else "")
                          + ")" for g in groups[:10])
        more = f" and {len(groups) - 10} more" if len(groups) > 10 else ""
        traces = f" (in {len(bad)} traces)" if len(bad) != len(groups) else ""
        reasons.append(f"{len(groups)} must-pass test{'s' if len(groups) != 1 else ''} did not "
                       f"pass{traces}: {names}{more}")
    stale = [w for w in waivers if w.get("stale")]
    if stale and strict_waivers:
        reasons.append(f"{len(stale)} stale waiver{'s' if len(stale) != 1 else ''} (the failure "
                       f"is gone; remove it): " + ", ".join(w["where"] for w in stale))
    unmatched = [w for w in waivers if w.get("unmatched_tests")]
    if unmatched and strict_waivers:
        one = len(unmatched) == 1
        reasons.append(f"{len(unmatched)} waiver{'' if one else 's'} name{'s' if one else ''} tests "
                       f"that do not exist (a typo or a renamed test; it can never waive "
                       f"anything): " + ", ".join(f"{w['where']} '{w['unmatched_tests'][0]}'"
                                                  for w in unmatched))
    if not complete:
        reasons.append("the run did not complete: " + (stopped or "interrupted"))
    return {"passed": not reasons, "reasons": reasons}


def finish(run, tests, waivers, strict_waivers, complete, finished, catalog_rules,
           stopped=None):
    """The result document from the run record and the test records."""
    from . import rules as rule_verdicts
    result = dict(run)
    result.pop("record", None)
    result["finished"] = finished
    result["complete"] = complete
    if stopped:
        result["stopped"] = stopped
    result["tests"] = tests
    result["waivers"] = waivers
    result["counts"] = counts(tests)
    result["rules"] = rule_verdicts.summarize(tests, catalog_rules)
    result["must_pass"] = dict(result["must_pass"], tests=sum(t["must_pass"] for t in tests))
    allow_empty = result.get("selection", {}).get("allow_empty", False)
    result["gate"] = gate(tests, waivers, strict_waivers, complete, stopped, allow_empty)
    # What a reader needs first leads the document: what to fix next and the broken rules.
    lead = {k: result.pop(k) for k in ("format", "rules") if k in result}
    return {**lead, **result}


def validate(result):
    """Problems of the result against the schema (empty when valid). Needs python3-jsonschema."""
    import jsonschema  # Debian: python3-jsonschema
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    validator = jsonschema.Draft7Validator(schema)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
            for e in validator.iter_errors(result)]


def read_records(path):
    """The run record and the test records of a results.jsonl (a cut last line is ignored)."""
    run, tests = None, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("record") == "run":
                run = record
            elif record.get("record") == "test":
                record.pop("record")
                tests.append(record)
    if run is None:
        raise ValueError(f"{path} has no run record")
    return run, tests


def write_all(result, out, catalog_rules, html=True):
    """result.json, junit.xml and report.html in the output folder; returns their paths."""
    from . import junit, html as html_report
    paths = {"json": os.path.join(out, "result.json"), "junit": os.path.join(out, "junit.xml"),
             "html": os.path.join(out, "report.html")}
    tmp = paths["json"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    os.replace(tmp, paths["json"])
    junit.write(result, paths["junit"])
    if html:
        html_report.write(result, catalog_rules, paths["html"])
    else:
        paths.pop("html")
    return paths
