"""The rule catalog (spec/rules/catalog/*.json), as the reports need it: every rule with its
level, function, object, summary and documentation pages."""
import glob
import json
import os

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "spec")


def page_url(page):
    """The public address of a documentation page named folder/page (spec/READING.md)."""
    folder, _, name = page.partition("/")
    base = "https://learn.microsoft.com/"
    if folder == "ddi":
        header = name.split("-")[1] if name.count("-") >= 1 else ""
        return f"{base}windows-hardware/drivers/ddi/{header}/{name}"
    if folder == "concepts":
        return f"{base}windows-hardware/drivers/network/{name}"
    if folder == "sdk":
        return f"{base}windows/win32/api/ndkinfo/{name}"
    return base


def load(spec_dir=SPEC):
    """Returns the rules in catalog order (file by file, as written)."""
    rules = []
    files = sorted(glob.glob(os.path.join(spec_dir, "rules", "catalog", "*.json")))
    if not files:
        raise FileNotFoundError(f"no rule catalog in {spec_dir}/rules/catalog")
    for path in files:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        for rule in data["rules"]:
            rules.append({
                "id": rule["id"], "area": data.get("area", ""), "level": rule["level"],
                "function": rule.get("function", ""), "object": rule.get("object", ""),
                "summary": rule.get("summary", ""), "source": rule.get("source", []),
                "related": rule.get("related", []),
            })
    return rules
