"""JUnit XML from a run result: one <testsuite> per test suite, one <testcase> per test.

Names are stable for CI history: a test case's name is its dotted test ID (the same whatever the
provider's path, the seed or the profile, which are properties), its classname the suite.
fail and crash are <failure>, timeout and blocked an <error>, not_supported and waived
<skipped> (with the reason), warning a pass with its warnings in <system-out>. A run that did
not complete (interrupted, stopped by --max-failures, a guest that died) adds a test case
`ndkct.run.incomplete` with an <error> saying so."""
import xml.etree.ElementTree as ET


def stable_id(test):
    """The dotted test ID; for an undeclared test, its gtest name without the provider part."""
    if test.get("id"):
        return test["id"]
    name = test["test"]
    parts = name.split("/")
    return parts[1] if len(parts) == 3 else name  # "Providers/Suite.Name/label"


def write(result, path):
    suites = {}
    for t in result["tests"]:
        suites.setdefault(t["suite"] or stable_id(t).split(".")[0], []).append(t)
    counts = result["counts"]
    complete = result["complete"]
    provider = result["provider"]["identity"].get("name", result["provider"]["spec"])
    errors = counts["timeout"] + counts.get("blocked", 0) + (0 if complete else 1)
    root = ET.Element("testsuites", name=f"ndkct conformance: {provider}",
                      tests=str(len(result["tests"]) + (0 if complete else 1)),
                      failures=str(counts["fail"] + counts["crash"]), errors=str(errors),
                      skipped=str(counts["not_supported"] + counts["waived"]),
                      time=f"{result['duration_s']:.3f}", timestamp=result["started"])
    run_props = ET.SubElement(root, "properties")
    for key, value in (("provider", result["provider"]["spec"]),
                       ("provider_name", provider),
                       ("provider_version", result["provider"]["identity"].get("version", "")),
                       ("profile", result["profile"]["name"]),
                       ("ndk_version", result["ndk_version"]), ("seed", result["seed"]),
                       ("shard", result["selection"].get("shard") or ""),
                       ("complete", "true" if complete else "false")):
        ET.SubElement(run_props, "property", name=key, value=str(value))
    for name, tests in sorted(suites.items()):
        c = lambda *vs: str(sum(t["verdict"] in vs for t in tests))  # noqa: E731
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(tests)),
                              failures=c("fail", "crash"), errors=c("timeout", "blocked"),
                              skipped=c("not_supported", "waived"),
                              time=f"{sum(t['duration_s'] for t in tests):.3f}")
        for t in sorted(tests, key=stable_id):
            case = ET.SubElement(suite, "testcase", name=stable_id(t), classname=name,
                                 time=f"{t['duration_s']:.6f}")
            props = ET.SubElement(case, "properties")
            for key in ("verdict", "rules", "failed_rules", "blocked_by", "test", "replay"):
                value = t.get(key, "")
                value = ",".join(value) if isinstance(value, list) else value
                ET.SubElement(props, "property", name=key, value=str(value))
            text = t["message"]
            if t.get("counterexample"):
                text += "\ncounterexample:\n" + t["counterexample"]
            text += "\nreplay: " + t["replay"]
            v = t["verdict"]
            first = next((x for x in t["message"].splitlines() if x.strip()), v)[:200]
            if v in ("fail", "crash"):
                rules = ", ".join(t["failed_rules"])
                ET.SubElement(case, "failure", type=v,
                              message=(f"[{rules}] " if rules else "") + first).text = text
            elif v == "timeout":
                ET.SubElement(case, "error", type="timeout", message=first).text = text
            elif v == "blocked":
                ET.SubElement(case, "error", type="blocked", message=first).text = text
            elif v == "not_supported":
                ET.SubElement(case, "skipped", message=t["message"][:200])
            elif v == "waived":
                w = t.get("waiver", {})
                ET.SubElement(case, "skipped", message=f"waived ({t.get('waived_verdict')}): "
                              f"{w.get('reason', '')} [{w.get('reference', '')}]"[:400]).text = text
            elif v == "warning":
                ET.SubElement(case, "system-out").text = "warnings: " + t["message"]
    if not complete:
        why = result.get("stopped") or "the run was interrupted"
        suite = ET.SubElement(root, "testsuite", name="ndkct.run", tests="1", failures="0",
                              errors="1", skipped="0", time="0")
        case = ET.SubElement(suite, "testcase", name="ndkct.run.incomplete", classname="ndkct.run",
                             time="0")
        ET.SubElement(case, "error", type="incomplete",
                      message=f"the run did not complete: {why}; "
                      f"{len(result['tests'])} of {result['selection']['selected']} tests "
                      f"reported").text = (
            "This report is partial: the tests not listed here did not run.")
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
