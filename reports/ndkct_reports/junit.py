"""JUnit XML from a run result: one <testsuite> per test suite, one <testcase> per test.
fail and crash are <failure>, timeout an <error>, not_supported and waived <skipped> (with the
reason), warning a pass with its warnings in <system-out>."""
import xml.etree.ElementTree as ET


def write(result, path):
    suites = {}
    for t in result["tests"]:
        suites.setdefault(t["suite"] or t["test"].split(".")[0], []).append(t)
    provider = result["provider"]["identity"].get("name", result["provider"]["spec"])
    root = ET.Element("testsuites", name=f"ndkct conformance: {provider}",
                      tests=str(len(result["tests"])),
                      failures=str(result["counts"]["fail"] + result["counts"]["crash"]),
                      errors=str(result["counts"]["timeout"]),
                      skipped=str(result["counts"]["not_supported"] + result["counts"]["waived"]),
                      time=f"{result['duration_s']:.3f}", timestamp=result["started"])
    for name, tests in sorted(suites.items()):
        c = lambda *vs: str(sum(t["verdict"] in vs for t in tests))  # noqa: E731
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(tests)),
                              failures=c("fail", "crash"), errors=c("timeout"),
                              skipped=c("not_supported", "waived"),
                              time=f"{sum(t['duration_s'] for t in tests):.3f}")
        for t in tests:
            case = ET.SubElement(suite, "testcase", name=t["test"], classname=t["id"] or name,
                                 time=f"{t['duration_s']:.6f}")
            ET.SubElement(case, "properties")
            props = case.find("properties")
            for key in ("verdict", "rules", "failed_rules", "replay"):
                value = t[key]
                value = ",".join(value) if isinstance(value, list) else value
                ET.SubElement(props, "property", name=key, value=str(value))
            text = t["message"]
            if t.get("counterexample"):
                text += "\ncounterexample:\n" + t["counterexample"]
            text += "\nreplay: " + t["replay"]
            v = t["verdict"]
            if v in ("fail", "crash"):
                first = (t["message"].splitlines() or [v])[-1][:200]
                ET.SubElement(case, "failure", type=v, message=first).text = text
            elif v == "timeout":
                ET.SubElement(case, "error", type="timeout",
                              message="no result within the time limit").text = text
            elif v == "not_supported":
                ET.SubElement(case, "skipped", message=t["message"][:200])
            elif v == "waived":
                w = t.get("waiver", {})
                ET.SubElement(case, "skipped", message=f"waived ({t.get('waived_verdict')}): "
                              f"{w.get('reason', '')} [{w.get('reference', '')}]"[:400]).text = text
            elif v == "warning":
                ET.SubElement(case, "system-out").text = "warnings: " + t["message"]
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
