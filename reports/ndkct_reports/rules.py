"""Verdicts per rule, and what to fix first.

A rule is *broken* only where a failure names it (a check of the rule, the oracle, or the call
in flight when a test crashed or hung: the test's `failed_rules`). A rule declared by tests that
could not get that far is *blocked* by the rules that stopped them (their failures' rules and the
setup failures' causes, `blocked_by`), or by something that is no rule (ndkct's own crash, an
unresponsive provider, a failure that names no rule). A rule a failing test reached and did not
break (`rules_held`) held there. A rule no test reached is *untested*.

Per rule, first that applies: broken, waived (broken, but every such failure is waived),
warning (held, with a warning the docs allow), pass (held), blocked, not_supported, untested.
The broken rules are ranked by how many tests they stop (tests whose failure names them, or
whose setup they blocked), then by how often they lead a failure's rules (an oracle verdict names
the rule it judged first, then the rules that follow from it); the first with a concrete NDK
function says what to implement or fix next.
"""

import re

from .result import test_of

RULE_VERDICTS = ("broken", "waived", "warning", "pass", "blocked", "not_supported", "untested")
BAD = ("fail", "crash", "timeout", "blocked")
# The oracle's GEN-MAND-01 message: "NdkBuildLam returned STATUS_NOT_IMPLEMENTED where ...".
_NOT_IMPLEMENTED_CALL = re.compile(r"\b(Ndk\w+) returned STATUS_NOT_IMPLEMENTED")


def _other_causes(test):
    causes = []
    if test.get("ndkct_bug"):
        causes.append("ndkct's own bug (a crash or hang in ndkct's code)")
    if test["verdict"] == "blocked" or (test.get("waived_verdict") == "blocked"):
        causes.append("an unresponsive provider (consecutive timeouts in the test's group)")
    if test.get("unnamed_failures"):
        causes.append("a failure that names no rule")
    if test["verdict"] in ("crash", "timeout") and not test["failed_rules"] and not test.get(
            "ndkct_bug"):
        causes.append(f"a {test['verdict']} outside any known NDK call")
    return causes


def verdicts(tests, catalog_rules):
    """{rule_id: {"verdict", "tests", "broken_in", "held_in", "blocked_in", "blocked_by",
    "blocked_reasons"}} for every catalog rule (tests as dotted IDs or gtest names)."""
    table = {r["id"]: {"verdict": "untested", "tests": [], "broken_in": [], "waived_in": [],
                       "held_in": [], "warned_in": [], "blocked_in": [], "blocked_by": [],
                       "blocked_reasons": [], "not_supported_in": []} for r in catalog_rules}

    def add(rid, field, value):
        if rid in table and value not in table[rid][field]:
            table[rid][field].append(value)

    for t in tests:
        name = t["id"] or t["test"]
        named = t["failed_rules"]
        waived = t["verdict"] == "waived"
        verdict = t.get("waived_verdict", t["verdict"]) if waived else t["verdict"]
        for rid in dict.fromkeys(t["rules"] + named):
            add(rid, "tests", name)
        for rid in named:
            add(rid, "waived_in" if waived else "broken_in", name)
        for rid in t["rules"]:
            if rid in named:
                continue
            if verdict == "pass":
                add(rid, "held_in", name)
            elif verdict == "warning":
                add(rid, "warned_in", name)
            elif verdict == "not_supported":
                add(rid, "not_supported_in", name)
            elif rid in t.get("rules_held", []):
                add(rid, "held_in", name)
            else:
                add(rid, "blocked_in", name)
                for cause in named + t.get("blocked_by", []):
                    if cause != rid:
                        add(rid, "blocked_by", cause)
                for reason in _other_causes(t):
                    add(rid, "blocked_reasons", reason)
    for entry in table.values():
        entry["verdict"] = (
            "broken" if entry["broken_in"] else "waived" if entry["waived_in"]
            else "warning" if entry["warned_in"] else "pass" if entry["held_in"]
            else "blocked" if entry["blocked_in"] else "not_supported" if entry["not_supported_in"]
            else "untested")
    return table


def ranking(tests, table, catalog_rules):
    """The broken rules, most blocking first: [{"rule", "function", "object", "tests_stopped",
    "failed_in", "action"}]. tests_stopped counts the failing tests whose failure names the rule
    or whose setup it blocked."""
    order = {r["id"]: i for i, r in enumerate(catalog_rules)}
    info = {r["id"]: r for r in catalog_rules}
    stopped = {}
    first = {}  # how often the rule leads a failing test's failed_rules (the oracle's first rule)
    not_implemented = set()
    unwritten = {}  # rule -> {function: tests whose message says it returned NOT_IMPLEMENTED}
    for t in tests:
        if t["verdict"] not in BAD:
            continue
        if t["failed_rules"]:
            first[t["failed_rules"][0]] = first.get(t["failed_rules"][0], 0) + 1
        for rid in dict.fromkeys(t["failed_rules"] + t.get("blocked_by", [])):
            stopped.setdefault(rid, set()).add(test_of(t))  # a test, not each of its traces
            if "STATUS_NOT_IMPLEMENTED" in t["message"] and rid in t["failed_rules"]:
                not_implemented.add(rid)
                # A rule of every function (GEN-MAND-01: a TODO entry's STATUS_NOT_IMPLEMENTED
                # where a refusal would pass) names the function in the message.
                for fn in _NOT_IMPLEMENTED_CALL.findall(t["message"]):
                    counts = unwritten.setdefault(rid, {})
                    counts[fn] = counts.get(fn, 0) + 1
    out = []
    for rid, entry in table.items():
        if entry["verdict"] != "broken":
            continue
        function = info[rid]["function"]
        if function in ("*", "") and unwritten.get(rid):
            function = max(sorted(unwritten[rid]), key=lambda f: unwritten[rid][f])
        out.append({"rule": rid, "function": function,
                    "object": info[rid]["object"], "summary": info[rid]["summary"],
                    "tests_stopped": len(stopped.get(rid, ())),
                    "failed_in": len(entry["broken_in"]),
                    "action": "implement" if rid in not_implemented else "fix"})
    out.sort(key=lambda x: (-x["tests_stopped"], -first.get(x["rule"], 0), -x["failed_in"],
                            order[x["rule"]]))
    return out


def next_step(ranked):
    """What to do first, one sentence, or None when nothing is broken."""
    if not ranked:
        return None
    top = ranked[0]
    concrete = next((r for r in ranked if r["function"] not in ("*", "")), None)
    if concrete is None:
        return {"function": None, "rule": top["rule"], "action": "fix",
                "text": f"Fix {top['rule']} first (it applies to every NDK function; it stops "
                        f"{top['tests_stopped']} test{'s' if top['tests_stopped'] != 1 else ''}): "
                        f"{top['summary']}"}
    text = (f"Next: {concrete['action']} {concrete['function']} ({concrete['rule']} is broken; "
            f"it stops {concrete['tests_stopped']} test{'s' if concrete['tests_stopped'] != 1 else ''})")
    if concrete is not top:
        text += (f"; the most blocking broken rule, {top['rule']}, applies to every NDK function "
                 f"({top['tests_stopped']} tests)")
    return {"function": concrete["function"], "rule": concrete["rule"],
            "action": concrete["action"], "text": text}


def counts(table):
    c = {v: 0 for v in RULE_VERDICTS}
    for entry in table.values():
        c[entry["verdict"]] += 1
    return c


def summarize(tests, catalog_rules):
    """The per-rule part of result.json: counts, the broken rules ranked, the next step, and
    every rule that is not untested with its verdict and evidence."""
    table = verdicts(tests, catalog_rules)
    ranked = ranking(tests, table, catalog_rules)
    return {
        "counts": counts(table),
        "ranked": ranked,
        "next": next_step(ranked),
        "verdicts": {rid: {k: v for k, v in e.items() if v or k == "verdict"}
                     for rid, e in table.items() if e["verdict"] != "untested"},
    }
