"""The HTML report of a run: one self-contained page (inline CSS, SVG plots, vanilla JS).

- the run: provider identity, NDK_ADAPTER_INFO, profile, seed, the gate's decision;
- plots: verdicts per NDK function, rules per object by verdict, test durations;
- the rule matrix: every catalog rule with its verdict (the worst verdict of the tests that
  declare it or whose failure names it), filterable by object, function, level and verdict,
  with the rule's summary and documentation pages beside the failure, counterexample and the
  command that replays it;
- every test, and the waivers that applied.
Works without JavaScript (filters need it); when its script has run, <body data-ready="1">.
"""
import html
import math

from .catalog import page_url

# Worst first: a rule's verdict is the first of these among its tests.
RULE_ORDER = ("fail", "crash", "timeout", "waived", "warning", "pass", "not_supported")
COLORS = {"pass": "#2e7d32", "fail": "#c62828", "crash": "#6a1b9a", "timeout": "#e65100",
          "waived": "#546e7a", "warning": "#f9a825", "not_supported": "#9e9e9e",
          "untested": "#e3e3e3"}
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


def rule_verdicts(result, rules):
    """For every rule: its verdict and the tests behind it (declared or named by a failure)."""
    by_rule = {r["id"]: [] for r in rules}
    for t in result["tests"]:
        for rid in dict.fromkeys(t["rules"] + t["failed_rules"]):
            if rid in by_rule:
                by_rule[rid].append(t)
    verdicts = {}
    for rid, tests in by_rule.items():
        present = {t["verdict"] for t in tests}
        verdicts[rid] = next((v for v in RULE_ORDER if v in present), "untested")
    return verdicts, by_rule


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
    """Histogram of test durations on decades, bars split by verdict."""
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
                        [v for v in RULE_ORDER if any(c.get(v) for _, c in rows)], width)


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


def evidence(tests):
    """What the tests behind a rule say: failures with counterexample and replay, else the list."""
    bad = [t for t in tests if t["verdict"] in ("fail", "crash", "timeout", "waived")]
    parts = []
    for t in bad[:3]:
        parts.append(f'<details><summary>{chip(t["verdict"])} {e(t["id"] or t["test"])}'
                     f'</summary>')
        if t["verdict"] == "waived" and t.get("waiver"):
            parts.append(f'<p class="waiver">waived {e(t.get("waived_verdict", ""))}: '
                         f'{e(t["waiver"]["reason"])} [{e(t["waiver"]["reference"])}]</p>')
        parts.append(f'<pre class="msg">{e(t["message"][:2000])}</pre>')
        if t.get("counterexample"):
            parts.append(f'<p>Minimal counterexample:</p><pre class="cex">'
                         f'{e(t["counterexample"])}</pre>')
        parts.append(f'<p>Replay: <code>{e(t["replay"])}</code></p></details>')
    if len(bad) > 3:
        parts.append(f"<p>and {len(bad) - 3} more failing tests (see Tests below)</p>")
    if not bad and tests:
        parts.append('<span class="tests">' + ", ".join(
            f'<span title="{e(t["test"])}">{e(t["id"] or t["test"])}</span>'
            for t in tests[:4]) + (f" +{len(tests) - 4}" if len(tests) > 4 else "") + "</span>")
    return "".join(parts)


def matrix(result, rules, verdicts, by_rule):
    objects = sorted({r["object"] for r in rules})
    functions = sorted({r["function"] for r in rules})
    levels = sorted({r["level"] for r in rules})
    used = [v for v in RULE_ORDER + ("untested",) if v in verdicts.values()]

    def options(values, fmt=lambda v: v):
        return "".join(f'<option value="{e(v)}">{e(fmt(v))}</option>' for v in values)

    head = f"""
<div class="filters" id="matrix-filters">
 <label>Object <select id="f-object"><option value="">any</option>{options(objects)}</select></label>
 <label>Function <select id="f-function"><option value="">any</option>{options(functions)}</select></label>
 <label>Level <select id="f-level"><option value="">any</option>{options(levels)}</select></label>
 <label>Verdict <select id="f-verdict"><option value="">any</option>{options(used, label)}</select></label>
 <label>Text <input id="f-text" type="search" placeholder="rule ID, words of the summary"></label>
 <span id="f-count">{len(rules)} of {len(rules)} rules</span>
</div>
<table id="matrix" class="grid">
<thead><tr><th>Rule</th><th>Level</th><th>Object</th><th>Function</th><th>Verdict</th>
<th>Tests</th><th>What the documentation says</th><th>Evidence</th></tr></thead>
<tbody>"""
    body = []
    for r in rules:
        v = verdicts[r["id"]]
        tests = by_rule[r["id"]]
        sources = " ".join(f'<a href="{e(page_url(s))}" target="_blank" rel="noopener">'
                           f'{e(s.split("/")[-1])}</a>' for s in r["source"])
        body.append(
            f'<tr id="rule-{e(r["id"])}" data-object="{e(r["object"])}" '
            f'data-function="{e(r["function"])}" data-level="{e(r["level"])}" '
            f'data-verdict="{v}"><td class="rid">{e(r["id"])}</td><td>{e(r["level"])}</td>'
            f'<td>{e(r["object"])}</td><td>{e(r["function"])}</td><td>{chip(v)}</td>'
            f'<td class="num">{len(tests)}</td><td class="sum">{e(r["summary"])}'
            f'<div class="src">{sources}</div></td><td class="ev">{evidence(tests)}</td></tr>')
    return head + "\n".join(body) + "</tbody></table>"


def tests_table(result):
    rows = []
    for t in sorted(result["tests"], key=lambda t: (RULE_ORDER.index(t["verdict"]), t["test"])):
        rules = " ".join(f'<a href="#rule-{e(r)}">{e(r)}</a>' for r in t["rules"])
        named = " ".join(f'<a href="#rule-{e(r)}">{e(r)}</a>' for r in t["failed_rules"])
        detail = ""
        if t["message"] or t.get("counterexample"):
            detail = (f'<details><summary>{e((t["message"].splitlines() or [""])[0][:120])}'
                      f'</summary><pre class="msg">{e(t["message"][:4000])}</pre>'
                      + (f'<pre class="cex">{e(t["counterexample"])}</pre>'
                         if t.get("counterexample") else "")
                      + f'<p>Replay: <code>{e(t["replay"])}</code></p></details>')
        rows.append(
            f'<tr data-verdict="{t["verdict"]}"><td>{chip(t["verdict"])}'
            f'{"" if t["must_pass"] else " <small>(optional)</small>"}</td>'
            f'<td>{e(t["id"])}<div class="gname">{e(t["test"])}</div></td><td>{rules}'
            f'{"<div>failure names: " + named + "</div>" if named else ""}</td>'
            f'<td class="num">{t["duration_s"] * 1000:.1f} ms</td><td>{detail}</td></tr>')
    return ('<div class="filters"><label>Verdict <select id="t-verdict"><option value="">any'
            '</option>' + "".join(f'<option value="{v}">{e(label(v))}</option>'
                                  for v in RULE_ORDER if result["counts"].get(v)) +
            '</select></label></div><table id="tests" class="grid"><thead><tr><th>Verdict</th>'
            '<th>Test</th><th>Rules</th><th>Duration</th><th>Message</th></tr></thead><tbody>'
            + "\n".join(rows) + "</tbody></table>")


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
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 24px 40px;color:#222}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
.gate{display:inline-block;padding:4px 12px;border-radius:4px;color:#fff;font-weight:bold}
.gate.pass{background:#2e7d32}.gate.fail{background:#c62828}
.facts{border-collapse:collapse}.facts th{text-align:left;padding:2px 12px 2px 0;color:#555;font-weight:normal}
.v{display:inline-block;padding:1px 7px;border-radius:10px;color:#fff;font-size:12px;white-space:nowrap}
.v-pass{background:#2e7d32}.v-fail{background:#c62828}.v-crash{background:#6a1b9a}
.v-timeout{background:#e65100}.v-waived{background:#546e7a}.v-warning{background:#f9a825;color:#222}
.v-not_supported{background:#9e9e9e}.v-untested{background:#e3e3e3;color:#555}
.counts .v{font-size:14px;margin-right:6px}
.plots{display:flex;flex-wrap:wrap;gap:24px}.plot{max-width:100%;height:auto}
.plot-title{font-weight:bold;font-size:13px}.axis,.legend{font-size:11px}.bar{cursor:pointer}
.filters{margin:8px 0;display:flex;gap:14px;flex-wrap:wrap;align-items:center}
.grid{border-collapse:collapse;width:100%}.grid th,.grid td{border-bottom:1px solid #e4e4e4;padding:4px 6px;vertical-align:top;text-align:left}
.grid thead th{position:sticky;top:0;background:#f4f4f4}
.rid{font-family:monospace;white-space:nowrap}.num{text-align:right;white-space:nowrap}
.sum{max-width:520px}.src a{font-size:11px;margin-right:6px;color:#1565c0}
.ev{max-width:380px;overflow-wrap:anywhere}.tests{font-size:11px;color:#555}
#matrix td:nth-child(4){max-width:190px;overflow-wrap:anywhere}.filters select{max-width:240px}.gname{font-size:11px;color:#666;font-family:monospace}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:6px;margin:4px 0;font-size:12px}
pre.cex{background:#fff3e0}code{font-size:12px;word-break:break-all}.waiver{color:#37474f}
"""

SCRIPT = """
(function () {
  function byId(id) { return document.getElementById(id); }
  var rows = Array.prototype.slice.call(document.querySelectorAll('#matrix tbody tr'));
  var f = {object: byId('f-object'), 'function': byId('f-function'), level: byId('f-level'),
           verdict: byId('f-verdict')};
  var text = byId('f-text'), count = byId('f-count');
  function apply() {
    var shown = 0, words = text.value.trim().toLowerCase();
    rows.forEach(function (r) {
      var ok = Object.keys(f).every(function (k) { return !f[k].value || r.dataset[k] === f[k].value; });
      if (ok && words) ok = r.textContent.toLowerCase().indexOf(words) >= 0;
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
    verdicts, by_rule = rule_verdicts(result, rules)
    ident = result["provider"]["identity"]
    gate = result["gate"]
    function_of = {r["id"]: r["function"] for r in rules}
    object_of = {r["id"]: r["object"] for r in rules}

    per_function = {}
    for t in result["tests"]:
        for fn in dict.fromkeys(function_of[r] for r in t["rules"] if r in function_of):
            c = per_function.setdefault(fn, {})
            c[t["verdict"]] = c.get(t["verdict"], 0) + 1
    fn_rows = sorted(per_function.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    per_object = {}
    for rid, v in verdicts.items():
        c = per_object.setdefault(object_of[rid], {})
        c[v] = c.get(v, 0) + 1
    obj_rows = sorted(per_object.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    test_verdicts = [v for v in RULE_ORDER if result["counts"].get(v)]

    slow = sorted(result["tests"], key=lambda t: -t["duration_s"])[:8]
    slow_list = "".join(f'<li>{t["duration_s"] * 1000:.1f} ms: {e(t["id"] or t["test"])}</li>'
                        for t in slow)
    facts = [
        ("Provider", f'{ident.get("name")} {ident.get("version")}: {ident.get("description")}'),
        ("Spec", result["provider"]["spec"]),
        ("Vendor / device", f'{ident.get("vendor_id", 0):#x} / {ident.get("device_id", 0):#x}'),
        ("NDKPI version", f'{result["ndk_version"]} (provider implements up to '
                          f'{ident.get("ndk_version")})'),
        ("Profile", f'{result["profile"]["name"]} ({result["profile"]["origin"]})'),
        ("Seed", str(result["seed"])),
        ("Topology", topology_text(result)),
        ("Started", f'{result["started"]}, {result["duration_s"]:.1f} s'
                    + ("" if result["complete"] else " (interrupted: partial results)")),
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
    covered = sum(1 for v in verdicts.values() if v != "untested")
    reasons = "".join(f"<li>{e(r)}</li>" for r in gate["reasons"])
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ndkct report: {e(ident.get("name", ""))}</title>
<style>{CSS}</style></head>
<body>
<h1>ndkct conformance report: {e(ident.get("name", ""))}
 <span class="gate {"pass" if gate["passed"] else "fail"}">{"PASS" if gate["passed"] else "FAIL"}</span></h1>
{"<ul class='reasons'>" + reasons + "</ul>" if reasons else
 "<p>Every must-pass test passed, was waived or is not supported.</p>"}
<p class="counts">{counts_html}</p>
<table class="facts">{facts_html}</table>

<h2>Plots</h2>
<div class="plots">
{stacked_bars("Verdicts per NDK function (tests naming a rule of the function)", fn_rows,
              test_verdicts, attribute="function")}
{stacked_bars(f"Rules per object by verdict ({covered} of {len(rules)} rules covered)",
              obj_rows, [v for v in RULE_ORDER + ("untested",) if any(c.get(v) for _, c in obj_rows)])}
{duration_plot(result["tests"])}
<div><b>Slowest tests</b><ol>{slow_list}</ol></div>
</div>

<h2>Rule matrix</h2>
<p>Every rule of the catalog with the verdict of the tests that declare it or whose failure
names it (the worst one); <i>untested</i>: no test in this run covers it.</p>
{matrix(result, rules, verdicts, by_rule)}

<h2>Tests</h2>
{tests_table(result)}

<h2>Waivers</h2>
{waivers_table(result)}

<h2>NDK_ADAPTER_INFO</h2>
<table class="facts">{adapter_info_rows(result["provider"]["adapter_info"])}</table>
<script>{SCRIPT}</script>
</body></html>
"""
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
