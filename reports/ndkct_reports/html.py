"""The HTML report of a run: one self-contained page (inline CSS, SVG plots, vanilla JS) that
fits the window.

- first line: what to fix next (the broken rule that stops the most tests, and its function);
- the broken rules, ranked by how many tests they stop, each with its evidence shown once: the
  minimal counterexample (the shortest property counterexample naming it) or the shortest
  failure, and the command that replays it;
- the run: provider identity, NDK_ADAPTER_INFO, profile, NDKPI version and why, seed, the gate;
- plots: rules per NDK function by rule verdict, rules per object by rule verdict, test
  durations;
- the rule matrix: every catalog rule with its verdict (reports/ndkct_reports/rules.py: broken,
  waived, warning, pass, blocked by ..., not supported, untested), filterable by object,
  function, level, verdict and text (a rule ID typed in the text box matches that rule exactly);
- every test, and the waivers that applied.
Works without JavaScript (filters need it); when its script has run, <body data-ready="1">.
"""
import html
import math

from . import rules as rule_verdicts
from .catalog import page_url

TEST_ORDER = ("fail", "crash", "timeout", "blocked", "waived", "warning", "pass", "not_supported")
RULE_ORDER = rule_verdicts.RULE_VERDICTS
COLORS = {"pass": "#2e7d32", "fail": "#c62828", "crash": "#6a1b9a", "timeout": "#e65100",
          "waived": "#546e7a", "warning": "#f9a825", "not_supported": "#9e9e9e",
          "untested": "#e3e3e3", "broken": "#c62828", "blocked": "#8d6e63"}
LABELS = {"not_supported": "not supported"}
FLAGS = {0x1: "IN_ORDER_DMA_SUPPORTED", 0x2: "RDMA_READ_SINK_NOT_REQUIRED",
         0x4: "CQ_INTERRUPT_MODERATION_SUPPORTED", 0x8: "MULTI_ENGINE_SUPPORTED",
         0x10: "RDMA_READ_LOCAL_INVALIDATE_SUPPORTED", 0x100: "CQ_RESIZE_SUPPORTED",
         0x10000: "LOOPBACK_CONNECTIONS_SUPPORTED"}
TECHNOLOGIES = {0: "NdkUndefined", 1: "NdkiWarp", 2: "NdkInfiniBand", 3: "NdkRoCE",
                4: "NdkRoCEv2"}

e = html.escape


def label(verdict):
    return LABELS.get(verdict, verdict)


def chip(verdict, text=None):
    return (f'<span class="v v-{verdict}">{e(text if text is not None else label(verdict))}'
            f'</span>')


def rule_link(rid):
    return f'<a href="#rule-{e(rid)}">{e(rid)}</a>'


def stacked_bars(title, rows, order, width=760, bar=16, attribute=None):
    """A horizontal stacked bar chart: rows are (label, {verdict: count})."""
    if not rows:
        return f"<p>{e(title)}: nothing to show.</p>"
    left, gap = 230, 6
    top = 44
    height = top + len(rows) * (bar + gap) + 10
    biggest = max(sum(c.values()) for _, c in rows) or 1
    scale = (width - left - 50) / biggest
    out = [f'<svg class="plot" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" role="img" aria-label="{e(title)}">',
           f'<text x="0" y="16" class="plot-title">{e(title)}</text>']
    x = left
    for v in order:  # legend, below the title
        out.append(f'<rect x="{x}" y="22" width="10" height="10" fill="{COLORS[v]}"/>'
                   f'<text x="{x + 14}" y="31" class="legend">{e(label(v))}</text>')
        x += 24 + 7 * len(label(v))
    for i, (name, count) in enumerate(rows):
        y = top + i * (bar + gap)
        data = f' data-{attribute}="{e(name)}"' if attribute else ""
        out.append(f'<g class="bar"{data}><title>{e(name)}: ' + ", ".join(
            f"{count.get(v, 0)} {label(v)}" for v in order if count.get(v)) + "</title>")
        shown = "(every function: *)" if name == "*" else name[:34]
        out.append(f'<text x="{left - 6}" y="{y + bar - 4}" text-anchor="end" '
                   f'class="axis">{e(shown)}</text>')
        x = left
        for v in order:
            n = count.get(v, 0)
            if n:
                w = n * scale
                out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar}" '
                           f'fill="{COLORS[v]}"/>')
                x += w
        out.append(f'<text x="{x + 4:.1f}" y="{y + bar - 4}" class="axis">'
                   f'{sum(count.values())}</text></g>')
    out.append("</svg>")
    return "\n".join(out)


def duration_plot(tests, width=760):
    """Histogram of test durations on decades, bars split by test verdict."""
    edges = [0, 1e-3, 1e-2, 1e-1, 1, 10, math.inf]
    names = ["< 1 ms", "1-10 ms", "10-100 ms", "0.1-1 s", "1-10 s", "> 10 s"]
    rows = []
    for lo, hi, name in zip(edges, edges[1:], names):
        c = {}
        for t in tests:
            if lo <= t["duration_s"] < hi:
                c[t["verdict"]] = c.get(t["verdict"], 0) + 1
        rows.append((name, c))
    return stacked_bars("Test durations (tests per duration band)", rows,
                        [v for v in TEST_ORDER if any(c.get(v) for _, c in rows)], width)


def topology_text(result):
    """One node, or two (the agent's address, and how many tests crossed to it)."""
    t = result.get("topology") or {"kind": "one-node"}
    if t.get("kind", "one-node") == "one-node":
        return "one node (two-sided tests over loopback)"
    crossed = sum(1 for x in result["tests"] if x.get("nodes") == 2)
    return (f'two nodes ({t["kind"]}): passive sides on the agent at {t.get("peer", "")}; '
            f'{crossed} tests crossed the link')


def adapter_info_rows(info):
    rows = []
    for key, value in info.items():
        shown = str(value)
        if key == "AdapterFlags" and isinstance(value, int):
            names = [n for bit, n in FLAGS.items() if value & bit]
            unknown = value & ~sum(FLAGS)
            shown = f"{value:#x}: " + (" | ".join(names) or "none") + (
                f" | unknown {unknown:#x}" if unknown else "")
        elif key == "RdmaTechnology" and isinstance(value, int):
            shown = f"{value} ({TECHNOLOGIES.get(value, 'unknown')})"
        elif key in ("VendorId", "DeviceId") and isinstance(value, int):
            shown = f"{value:#x} ({value})"
        rows.append(f"<tr><th>{e(key)}</th><td>{e(shown)}</td></tr>")
    return "\n".join(rows)


def best_evidence(rid, tests):
    """The one failing test that shows a broken rule best: a property test's counterexample
    (the shortest), else the failing test with the shortest message."""
    naming = [t for t in tests if rid in t["failed_rules"]
              and t["verdict"] in ("fail", "crash", "timeout", "waived")]
    if not naming:
        return None
    with_cex = [t for t in naming if t.get("counterexample")]
    if with_cex:
        return min(with_cex, key=lambda t: (t["counterexample"].count("\n"), t["test"]))
    return min(naming, key=lambda t: (len(t["message"]), t["test"]))


def broken_section(result, shown):
    """The broken rules, ranked; each with its evidence once. `shown` collects the tests whose
    counterexample appears here, so that it is not repeated below."""
    ranked = result["rules"]["ranked"]
    if not ranked:
        return "<p>No rule is broken.</p>"
    parts = ['<ol class="broken">']
    for r in ranked:
        t = best_evidence(r["rule"], result["tests"])
        parts.append(f'<li id="broken-{e(r["rule"])}"><b>{rule_link(r["rule"])}</b> '
                     f'<span class="fn">{e(r["function"])}</span> stops '
                     f'<b>{r["tests_stopped"]}</b> test{"s" if r["tests_stopped"] != 1 else ""}'
                     f' ({r["failed_in"]} name it): {e(r["summary"])}')
        if t is not None:
            parts.append(f'<div class="evidence">{chip(t["verdict"])} '
                         f'<span class="tid">{e(t["id"] or t["test"])}</span>')
            if t.get("counterexample") and t["test"] not in shown:
                shown.add(t["test"])
                parts.append(f'<p>Minimal counterexample:</p><pre class="cex">'
                             f'{e(t["counterexample"])}</pre>')
            elif t.get("counterexample"):
                parts.append('<p>Minimal counterexample: the same as above.</p>')
            else:
                parts.append(f'<pre class="msg">{e(t["message"][:1500])}</pre>')
            parts.append(f'<p>Replay: <code>{e(t["replay"])}</code></p></div>')
        parts.append("</li>")
    parts.append("</ol>")
    return "".join(parts)


def matrix_evidence(entry):
    """What the matrix says beside a rule's verdict (the full evidence of broken rules is above
    in "Broken rules")."""
    v = entry["verdict"]
    if v == "broken":
        return (f'<a href="#broken-{e(entry["id"])}">evidence above</a>; failing: '
                + e(", ".join(entry["broken_in"][:3]))
                + (f" +{len(entry['broken_in']) - 3}" if len(entry["broken_in"]) > 3 else ""))
    if v == "blocked":
        by = " ".join(rule_link(r) for r in entry.get("blocked_by", [])[:6])
        reasons = "; ".join(entry.get("blocked_reasons", []))
        return ("blocked by " + (by or "") + (f" ({e(reasons)})" if reasons else "")
                + f' <span class="tests">in {e(", ".join(entry["blocked_in"][:3]))}</span>')
    tests = entry.get("tests", [])
    if tests:
        return ('<span class="tests">' + e(", ".join(tests[:4]))
                + (f" +{len(tests) - 4}" if len(tests) > 4 else "") + "</span>")
    return ""


def matrix(rules, table):
    objects = sorted({r["object"] for r in rules})
    functions = sorted({r["function"] for r in rules})
    levels = sorted({r["level"] for r in rules})
    used = [v for v in RULE_ORDER if any(x["verdict"] == v for x in table.values())]

    def options(values, fmt=lambda v: v):
        return "".join(f'<option value="{e(v)}">{e(fmt(v))}</option>' for v in values)

    head = f"""
<div class="filters" id="matrix-filters">
 <label>Object <select id="f-object"><option value="">any</option>{options(objects)}</select></label>
 <label>Function <select id="f-function"><option value="">any</option>{options(functions)}</select></label>
 <label>Level <select id="f-level"><option value="">any</option>{options(levels)}</select></label>
 <label>Verdict <select id="f-verdict"><option value="">any</option>{options(used, label)}</select></label>
 <label>Text <input id="f-text" type="search" placeholder="a rule ID (exact), or words"></label>
 <span id="f-count">{len(rules)} of {len(rules)} rules</span>
</div>
<table id="matrix" class="grid">
<colgroup><col class="c-id"><col class="c-level"><col class="c-obj"><col class="c-fn">
<col class="c-v"><col class="c-n"><col class="c-sum"><col class="c-ev"></colgroup>
<thead><tr><th>Rule</th><th>Level</th><th>Object</th><th>Function</th><th>Verdict</th>
<th>Tests</th><th>What the documentation says</th><th>Evidence</th></tr></thead>
<tbody>"""
    body = []
    for r in rules:
        entry = dict(table[r["id"]], id=r["id"])
        v = entry["verdict"]
        sources = " ".join(f'<a href="{e(page_url(s))}" target="_blank" rel="noopener">'
                           f'{e(s.split("/")[-1])}</a>' for s in r["source"])
        body.append(
            f'<tr id="rule-{e(r["id"])}" data-rule="{e(r["id"])}" data-object="{e(r["object"])}" '
            f'data-function="{e(r["function"])}" data-level="{e(r["level"])}" '
            f'data-verdict="{v}"><td class="rid">{e(r["id"])}</td><td>{e(r["level"])}</td>'
            f'<td>{e(r["object"])}</td><td class="fn">{e(r["function"])}</td><td>{chip(v)}</td>'
            f'<td class="num">{len(entry["tests"])}</td><td class="sum">{e(r["summary"])}'
            f'<div class="src">{sources}</div></td><td class="ev">{matrix_evidence(entry)}</td>'
            f'</tr>')
    return head + "\n".join(body) + "</tbody></table>"


def tests_table(result, shown):
    rows = []
    for t in sorted(result["tests"], key=lambda t: (TEST_ORDER.index(t["verdict"]), t["test"])):
        rules = " ".join(rule_link(r) for r in t["rules"])
        named = " ".join(rule_link(r) for r in t["failed_rules"])
        blocked = " ".join(rule_link(r) for r in t.get("blocked_by", []))
        detail = ""
        if t["message"] or t.get("counterexample"):
            cex = ""
            if t.get("counterexample"):
                cex = ('<p>Minimal counterexample: shown above (Broken rules).</p>'
                       if t["test"] in shown else
                       f'<pre class="cex">{e(t["counterexample"])}</pre>')
            detail = (f'<details><summary>{e((t["message"].splitlines() or [""])[0][:120])}'
                      f'</summary><pre class="msg">{e(t["message"][:4000])}</pre>{cex}'
                      f'<p>Replay: <code>{e(t["replay"])}</code></p></details>')
        rows.append(
            f'<tr data-verdict="{t["verdict"]}"><td>{chip(t["verdict"])}'
            f'{"" if t["must_pass"] else " <small>(optional)</small>"}</td>'
            f'<td class="tid">{e(t["id"])}<div class="gname">{e(t["test"])}</div></td>'
            f'<td>{rules}'
            f'{"<div>broken: " + named + "</div>" if named else ""}'
            f'{"<div>blocked by: " + blocked + "</div>" if blocked else ""}</td>'
            f'<td class="num">{t["duration_s"] * 1000:.1f} ms</td><td class="ev">{detail}</td>'
            f'</tr>')
    return ('<div class="filters"><label>Verdict <select id="t-verdict"><option value="">any'
            '</option>' + "".join(f'<option value="{v}">{e(label(v))}</option>'
                                  for v in TEST_ORDER if result["counts"].get(v)) +
            '</select></label></div><table id="tests" class="grid"><colgroup><col class="c-v">'
            '<col class="c-test"><col class="c-rules"><col class="c-n"><col class="c-msg">'
            '</colgroup><thead><tr><th>Verdict</th><th>Test</th><th>Rules</th><th>Duration</th>'
            '<th>Message</th></tr></thead><tbody>' + "\n".join(rows) + "</tbody></table>")


def waivers_table(result):
    if not result["waivers"]:
        return "<p>No waiver applies to this provider.</p>"
    rows = "".join(
        f'<tr><td>{e(w["where"])}</td><td>{e(" ".join(w["tests"]))}</td>'
        f'<td>{e(" ".join(w["rules"]))}</td><td>{e(w["reason"])}</td><td>{e(w["reference"])}</td>'
        f'<td>{len(w["waived"])}{" <b>stale</b>" if w["stale"] else ""}</td></tr>'
        for w in result["waivers"])
    return ('<table class="grid"><thead><tr><th>Waiver</th><th>Tests</th><th>Rules</th>'
            '<th>Reason</th><th>Reference</th><th>Waived</th></tr></thead><tbody>'
            + rows + "</tbody></table>")


CSS = """
*{box-sizing:border-box}
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;padding:0 20px 40px;color:#222;max-width:1800px}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
.next{font-size:17px;font-weight:bold;margin:10px 0;padding:8px 12px;border-left:6px solid #c62828;background:#fdecea}
.next.ok{border-color:#2e7d32;background:#e8f5e9}
.gate{display:inline-block;padding:4px 12px;border-radius:4px;color:#fff;font-weight:bold}
.gate.pass{background:#2e7d32}.gate.fail{background:#c62828}
.facts{border-collapse:collapse;max-width:100%}.facts th{text-align:left;padding:2px 12px 2px 0;color:#555;font-weight:normal;vertical-align:top}
.facts td{overflow-wrap:anywhere}
.v{display:inline-block;padding:1px 7px;border-radius:10px;color:#fff;font-size:12px;white-space:nowrap}
.v-pass{background:#2e7d32}.v-fail,.v-broken{background:#c62828}.v-crash{background:#6a1b9a}
.v-timeout{background:#e65100}.v-waived{background:#546e7a}.v-warning{background:#f9a825;color:#222}
.v-not_supported{background:#9e9e9e}.v-untested{background:#e3e3e3;color:#555}.v-blocked{background:#8d6e63}
.counts .v{font-size:14px;margin-right:6px}
.plots{display:flex;flex-wrap:wrap;gap:24px}.plot{max-width:100%;height:auto}
.plot-title{font-weight:bold;font-size:13px}.axis,.legend{font-size:11px}.bar{cursor:pointer}
.filters{margin:8px 0;display:flex;gap:14px;flex-wrap:wrap;align-items:center}
.filters select{max-width:240px}
.grid{border-collapse:collapse;width:100%;table-layout:fixed}
.grid th,.grid td{border-bottom:1px solid #e4e4e4;padding:4px 6px;vertical-align:top;text-align:left;overflow-wrap:anywhere}
.grid thead th{position:sticky;top:0;background:#f4f4f4}
.c-id{width:9em}.c-level{width:7em}.c-obj{width:7em}.c-fn{width:11em}.c-v{width:7.5em}.c-n{width:5em}
.c-sum{width:34%}.c-test{width:28%}.c-rules{width:16%}
.rid{font-family:monospace}.num{text-align:right;white-space:nowrap}
.src a{font-size:11px;margin-right:6px;color:#1565c0}
.tests{font-size:11px;color:#555}.fn{font-family:monospace;font-size:12px}
.gname,.tid{font-size:11px;font-family:monospace}.gname{color:#666}
ol.broken li{margin:0 0 10px}.evidence{margin:4px 0 0;padding:4px 8px;border-left:3px solid #ddd}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7f7f7;padding:6px;margin:4px 0;font-size:12px;max-width:100%}
pre.cex{background:#fff3e0}code{font-size:12px;overflow-wrap:anywhere}.waiver{color:#37474f}
"""

SCRIPT = """
(function () {
  function byId(id) { return document.getElementById(id); }
  var rows = Array.prototype.slice.call(document.querySelectorAll('#matrix tbody tr'));
  var f = {object: byId('f-object'), 'function': byId('f-function'), level: byId('f-level'),
           verdict: byId('f-verdict')};
  var text = byId('f-text'), count = byId('f-count');
  var ruleId = /^[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)+$/;
  function apply() {
    var shown = 0, words = text.value.trim(), exact = ruleId.test(words) &&
      rows.some(function (r) { return r.dataset.rule === words.toUpperCase(); });
    var lower = words.toLowerCase();
    rows.forEach(function (r) {
      var ok = Object.keys(f).every(function (k) { return !f[k].value || r.dataset[k] === f[k].value; });
      if (ok && words) ok = exact ? r.dataset.rule === words.toUpperCase()
                                  : r.textContent.toLowerCase().indexOf(lower) >= 0;
      r.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown + ' of ' + rows.length + ' rules';
  }
  Object.keys(f).forEach(function (k) { f[k].addEventListener('change', apply); });
  text.addEventListener('input', apply);
  // A bar of the per-function plot filters the matrix by that function.
  document.querySelectorAll('.bar[data-function]').forEach(function (b) {
    b.addEventListener('click', function () {
      f['function'].value = b.dataset['function'];
      apply();
      byId('matrix-filters').scrollIntoView();
    });
  });
  var tv = byId('t-verdict');
  var trows = Array.prototype.slice.call(document.querySelectorAll('#tests tbody tr'));
  tv.addEventListener('change', function () {
    trows.forEach(function (r) { r.hidden = tv.value && r.dataset.verdict !== tv.value; });
  });
  apply();
  document.body.dataset.ready = '1';
})();
"""


def write(result, rules, path):
    table = rule_verdicts.verdicts(result["tests"], rules)
    ident = result["provider"]["identity"]
    gate = result["gate"]
    summary = result.get("rules") or rule_verdicts.summarize(result["tests"], rules)
    result = dict(result, rules=summary)
    nxt = summary.get("next")

    per_function = {}
    per_object = {}
    for r in rules:
        v = table[r["id"]]["verdict"]
        if v != "untested":
            c = per_function.setdefault(r["function"], {})
            c[v] = c.get(v, 0) + 1
        c = per_object.setdefault(r["object"], {})
        c[v] = c.get(v, 0) + 1
    fn_rows = sorted(per_function.items(),
                     key=lambda kv: (-kv[1].get("broken", 0), -sum(kv[1].values()), kv[0]))
    obj_rows = sorted(per_object.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    fn_order = [v for v in RULE_ORDER if any(c.get(v) for _, c in fn_rows)]
    obj_order = [v for v in RULE_ORDER if any(c.get(v) for _, c in obj_rows)]

    slow = sorted(result["tests"], key=lambda t: -t["duration_s"])[:8]
    slow_list = "".join(f'<li>{t["duration_s"] * 1000:.1f} ms: {e(t["id"] or t["test"])}</li>'
                        for t in slow)
    facts = [
        ("Provider", f'{ident.get("name")} {ident.get("version")}: {ident.get("description")}'),
        ("Spec", result["provider"]["spec"]),
        ("Vendor / device", f'{ident.get("vendor_id", 0):#x} / {ident.get("device_id", 0):#x}'),
        ("NDKPI version", result.get("ndk_version_reason") or
         f'{result["ndk_version"]} (provider implements up to {ident.get("ndk_version")})'),
        ("Profile", f'{result["profile"]["name"]} ({result["profile"]["origin"]})'),
        ("Seed", str(result["seed"])),
        ("Topology", topology_text(result)),
        ("Started", f'{result["started"]}, {result["duration_s"]:.1f} s'
                    + ("" if result["complete"] else
                       f' (did not complete: {result.get("stopped") or "interrupted"}; partial '
                       f'results)')),
        ("Selection", f'{result["selection"]["selected"]} tests'
                      + "".join(f'; {k} {" ".join(v)}' for k, v in result["selection"].items()
                                if k in ("tests", "exclude_tests", "rules", "exclude_rules")
                                and v)
                      + (f'; shard {result["selection"]["shard"]}'
                         if result["selection"]["shard"] else "")),
        ("Must-pass", f'{result["must_pass"]["list"]} ({result["must_pass"]["tests"]} tests)'),
        ("Command", result["tool"]["command"]),
        ("Host", result["tool"].get("host", "") + (" (Soft-RoCE guest)"
                                                   if result["tool"].get("in_guest") else "")),
    ]
    facts_html = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in facts)
    counts_html = " ".join(chip(v, f"{label(v)} {n}") for v, n in result["counts"].items() if n)
    rule_counts_html = " ".join(chip(v, f"{label(v)} {n}")
                                for v, n in summary["counts"].items() if n)
    reasons = "".join(f"<li>{e(r)}</li>" for r in gate["reasons"])
    lead = (f'<p class="next">{e(nxt["text"])}</p>' if nxt else
            '<p class="next ok">Nothing to fix: no rule is broken.</p>')
    shown = set()
    broken = broken_section(result, shown)
    tests_html = tests_table(result, shown)
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ndkct report: {e(ident.get("name", ""))}</title>
<style>{CSS}</style></head>
<body>
{lead}
<h1>ndkct conformance report: {e(ident.get("name", ""))}
 <span class="gate {"pass" if gate["passed"] else "fail"}">{"PASS" if gate["passed"] else "FAIL"}</span></h1>
{"<ul class='reasons'>" + reasons + "</ul>" if reasons else
 "<p>Every must-pass test passed, was waived or is not supported.</p>"}
<p class="counts">Tests: {counts_html}</p>
<p class="counts">Rules: {rule_counts_html}</p>

<h2>Broken rules, most blocking first</h2>
{broken}

<h2>The run</h2>
<table class="facts">{facts_html}</table>

<h2>Plots</h2>
<div class="plots">
{stacked_bars("Rules per NDK function by rule verdict (broken: named by a failure)", fn_rows,
              fn_order, attribute="function")}
{stacked_bars("Rules per object by rule verdict", obj_rows, obj_order)}
{duration_plot(result["tests"])}
<div><b>Slowest tests</b><ol>{slow_list}</ol></div>
</div>

<h2>Rule matrix</h2>
<p>Every rule of the catalog. <i>broken</i>: a failure names it; <i>blocked</i>: its tests
stopped before checking it, at the rules named; <i>pass</i>: a test checked it and it held;
<i>untested</i>: no test in this run covers it.</p>
{matrix(rules, table)}

<h2>Tests</h2>
{tests_html}

<h2>Waivers</h2>
{waivers_table(result)}

<h2>NDK_ADAPTER_INFO</h2>
<table class="facts">{adapter_info_rows(result["provider"]["adapter_info"])}</table>
<script>{SCRIPT}</script>
</body></html>
"""
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
