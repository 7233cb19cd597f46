#!/usr/bin/python3
"""Docs that are true (ctest docs.truth): the counts and claims of README.md, spec/PROVIDER.md and
the folder READMEs, checked against what the code and the catalog say now. Expected values are
derived (the catalog, the test executables' listings, the runner's own option table, the
headers), never written here, so the check stays true while the code moves; a claim that no
longer holds is named with its file and line.

usage: docs_truth.py --build BUILD
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "reports"))
sys.path.insert(0, os.path.join(ROOT, "conformance", "runner"))
from ndkct_reports import catalog, result as results  # noqa: E402
from ndkct_runner import options, provider as providers, version as versions  # noqa: E402
from ndkct_runner import InputError  # noqa: E402

PROBLEMS = []


def problem(path, line, text):
    PROBLEMS.append(f"{os.path.relpath(path, ROOT)}:{line}: {text}")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def claims(path, pattern):
    """(line number, match) for every match of pattern in the file."""
    out = []
    for number, line in enumerate(read(path).splitlines(), 1):
        for m in re.finditer(pattern, line):
            out.append((number, m))
    return out


def facts(build):
    """What the code says now."""
    f = {"rules": len(catalog.load())}
    exe = os.path.join(build, "conformance", "tests", "conformance_tests")
    done = subprocess.run([exe, "--coverage"], capture_output=True, text=True, check=True)
    m = re.search(r"(\d+) of (\d+) must rules have a test; (\d+) tests declared", done.stderr)
    f["must_covered"], f["must"], f["directed"] = (int(x) for x in m.groups())
    props = os.path.join(build, "conformance", "properties", "conformance_properties")
    if os.path.exists(props):
        done = subprocess.run([props, "--provider=model", "--ndkct_list=json"],
                              capture_output=True, text=True, check=True)
        f["properties"] = sum(1 for x in done.stdout.splitlines() if x.startswith("{"))
    faulty = read(os.path.join(ROOT, "conformance", "faulty", "CMakeLists.txt"))
    f["faults"] = len(re.findall(r"^ndkct_faulty_provider\(", faulty, re.M))
    exemptions = read(os.path.join(ROOT, "conformance", "coverage-exemptions.txt"))
    f["exempt"] = sum(1 for x in exemptions.splitlines() if x.strip() and not x.startswith("#"))

    f["options"] = runner_options()
    f["profiles"] = sorted(os.path.basename(p)[:-5] for p in
                           glob.glob(os.path.join(ROOT, "spec", "profiles", "*.json"))
                           if not p.endswith("schema.json"))
    return f


def runner_options():
    """Every option of `./ndkct run` (the runner's own parser), suppressed ones left out."""
    import argparse as ap
    captured = {}

    class Spy(options.Parser):
        def parse_args(self, argv=None, namespace=None):
            captured["parser"] = self
            return ap.Namespace()

    original = options.Parser
    options.Parser = Spy
    try:
        options.parse([], ROOT)
    finally:
        options.Parser = original
    out = set()
    for action in captured["parser"]._actions:
        if action.help == ap.SUPPRESS:
            continue
        out.update(s for s in action.option_strings if s.startswith("--"))
    out.discard("--help")
    return out


def check_counts(f):
    readme = os.path.join(ROOT, "README.md")
    for line, m in claims(readme, r"(\d[\d,]*) catalogued rules"):
        if int(m.group(1).replace(",", "")) != f["rules"]:
            problem(readme, line, f"says {m.group(1)} catalogued rules; the catalog has "
                    f"{f['rules']}")
    for path in (readme, os.path.join(ROOT, "conformance", "README.md")):
        for line, m in claims(path, r"(\d+) directed tests"):
            if int(m.group(1)) != f["directed"]:
                problem(path, line, f"says {m.group(1)} directed tests; conformance_tests "
                        f"declares {f['directed']}")
    for path in glob.glob(os.path.join(ROOT, "**", "README.md"), recursive=True):
        if "/build" in path:
            continue
        for line, m in claims(path, r"(\d+) deliberately faulty providers"):
            if int(m.group(1)) != f["faults"]:
                problem(path, line, f"says {m.group(1)} deliberately faulty providers; "
                        f"conformance/faulty declares {f['faults']}")
        for line, m in claims(path, r"all (\d+) (?:deliberately )?faulty providers"):
            if int(m.group(1)) != f["faults"]:
                problem(path, line, f"says all {m.group(1)} faulty providers; there are "
                        f"{f['faults']}")
    for line, m in claims(readme, r"(\d+) of (\d+) `must` rules have a directed test, the "
                                  r"other (\d+)"):
        said = tuple(int(x) for x in m.groups())
        real = (f["must_covered"], f["must"], f["exempt"])
        if said != real:
            problem(readme, line, f"says {said[0]} of {said[1]} must rules have a test and "
                    f"{said[2]} are exempt; the suite says {real[0]} of {real[1]}, and "
                    f"coverage-exemptions.txt lists {real[2]}")
    if "properties" in f:
        for line, m in claims(readme, r"\((\d+) tests incl\. (\d+) properties\)"):
            total, props = int(m.group(1)), int(m.group(2))
            if (total, props) != (f["directed"] + f["properties"], f["properties"]):
                problem(readme, line, f"says {total} tests incl. {props} properties; there are "
                        f"{f['directed'] + f['properties']} incl. {f['properties']}")
        for line, m in claims(readme, r"\((\d+) properties, "):
            if int(m.group(1)) != f["properties"]:
                problem(readme, line, f"says {m.group(1)} properties; conformance_properties "
                        f"has {f['properties']}")


def check_options(f):
    """The options README.md shows for `./ndkct run` exist; conformance/runner/README.md names
    every option there is."""
    readme = os.path.join(ROOT, "README.md")
    text = read(readme)
    section = text[text.index("## The two commands"):text.index("## What is here")]
    start = text.index("## The two commands")
    for m in re.finditer(r"`(--[a-z-]+)", section):
        if m.group(1) not in f["options"]:
            problem(readme, text[:start + m.start()].count("\n") + 1,
                    f"names the option {m.group(1)}, which ./ndkct run does not have")
    runner_readme = os.path.join(ROOT, "conformance", "runner", "README.md")
    # Options in prose and in `ndkct run` command lines (other tools' blocks are theirs).
    prose = re.sub(r"```sh\n(.*?)```", lambda m: m.group(0) if "ndkct run" in m.group(1) else "",
                   read(runner_readme), flags=re.S)
    named = set(re.findall(r"(--[a-z][a-z_-]*[a-z])", prose))
    for option in sorted(f["options"] - named):
        problem(runner_readme, 1, f"does not describe the option {option} (./ndkct run --help "
                f"has it)")
    for option in sorted(o for o in named - f["options"] if not o.startswith("--gtest")
                         and not o.startswith("--ndkct_") and o not in ("--rw", "--cwd",
                                                                         "--help")):
        problem(runner_readme, 1, f"names {option}, which ./ndkct run does not have")
    # The verdicts the README lists are the result's verdicts.
    for m in re.finditer(r"Verdicts:\s+([a-z_,\s]+)\.", text):
        said = {v.strip() for v in m.group(1).split(",")}
        if said != set(results.VERDICTS):
            problem(readme, text[:m.start()].count("\n") + 1, f"lists the verdicts "
                    f"{sorted(said)}; result.json has {sorted(results.VERDICTS)}")


def check_provider_page(f):
    page = os.path.join(ROOT, "spec", "PROVIDER.md")
    text = read(page)
    header = read(os.path.join(ROOT, "spec", "include", "ndkct", "provider.h"))
    for name in re.findall(r'#define NDKCT_SYMBOL_\w+ "(\w+)"', header):
        if f"{name}(" not in text:
            problem(page, 1, f"does not show the export {name}")
    abi = re.search(r"#define NDKCT_PROVIDER_ABI_VERSION (\d+)", header).group(1)
    for line, m in claims(page, r"`NDKCT_PROVIDER_ABI_VERSION` \((\d+)\)"):
        if m.group(1) != abi:
            problem(page, line, f"says the ABI version is {m.group(1)}; provider.h has {abi}")
    for line, m in claims(page, r"Versions known to ndkct: ([0-9., and]+)\."):
        said = re.findall(r"\d+\.\d+", m.group(1))
        if said != list(versions.KNOWN):
            problem(page, line, f"lists the versions {said}; the runner knows "
                    f"{list(versions.KNOWN)}")
    for m in re.finditer(r"The shipped profiles are (.*?)(?:\(`spec/profiles`\)|\n\n)", text,
                         re.S):
        said = sorted(re.findall(r"`([a-z0-9.-]+)`", m.group(1)))
        if said != f["profiles"]:
            problem(page, text[:m.start()].count("\n") + 1,
                    f"lists the profiles {said}; spec/profiles has {f['profiles']}")
    statuses = set(re.findall(r"X\((\w+),", read(os.path.join(ROOT, "spec", "include", "ndkct",
                                                               "ntstatus.h"))))
    for line, m in claims(page, r"^\| ((?:STATUS|NDIS_STATUS)_\w+) \|"):
        if m.group(1) not in statuses:
            problem(page, line, f"names {m.group(1)}, which ntstatus.h does not define")
    # Every command line shown runs: its options exist and its --provider parses.
    for block_start, block in ((m.start(), m.group(1))
                               for m in re.finditer(r"```sh\n(.*?)```", text, re.S)):
        for offset, command in enumerate(block.splitlines()):
            if "ndkct run" not in command:
                continue
            line = text[:block_start].count("\n") + 2 + offset
            words = command.split("#")[0].split()
            for i, word in enumerate(words):
                if word.startswith("--") and word not in f["options"]:
                    problem(page, line, f"shows the option {word}, which ./ndkct run does not "
                            f"have")
                if word == "--provider" and i + 1 < len(words):
                    try:
                        providers.Provider(words[i + 1])
                    except InputError as error:
                        problem(page, line, f"shows --provider {words[i + 1]}: {error}")
    for line, m in claims(page, r"(planned|being built|not yet)"):
        problem(page, line, f"still says '{m.group(1)}'")


def check_files_named():
    """Files a folder README's tables name exist."""
    for readme in glob.glob(os.path.join(ROOT, "**", "README.md"), recursive=True):
        rel = os.path.relpath(readme, ROOT)
        if rel.startswith("build") or "/build" in rel:
            continue
        folder = os.path.dirname(readme)
        for number, line in enumerate(read(readme).splitlines(), 1):
            if not line.startswith("|"):
                continue
            cell = line.split("|")[1]
            for token in re.findall(r"`([^`]+)`", cell):
                token = token.strip()
                if (" " in token or token.startswith(("-", "P/")) or "*" in token
                        or "<" in token):
                    continue
                if not ("/" in token or re.search(r"\.(py|cpp|hpp|h|json|txt|md|cmake|in|c)$",
                                                  token)):
                    continue
                candidates = [os.path.join(folder, token), os.path.join(ROOT, token)]
                if not any(os.path.exists(c.rstrip("/")) for c in candidates):
                    problem(readme, number, f"names {token}, which does not exist")


def check_rule_scopes():
    """Every rule ID an NDKCT_RULE scope or a test helper's rule list names is in the catalog
    (a typo would make a failure name no rule)."""
    known = {r["id"] for r in catalog.load()}
    files = (glob.glob(os.path.join(ROOT, "conformance", "tests", "*.[ch]pp"))
             + glob.glob(os.path.join(ROOT, "conformance", "properties", "*.[ch]pp")))
    for path in files:
        for number, line in enumerate(read(path).splitlines(), 1):
            if "NDKCT_RULE(" not in line and "every_combination(" not in line and \
                    '{"' not in line:
                continue
            for rule in re.findall(r'"([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)"', line):
                if rule not in known:
                    problem(path, number, f"names the rule {rule}, which the catalog does not "
                            f"have")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    opts = p.parse_args()
    f = facts(os.path.abspath(opts.build))
    check_counts(f)
    check_options(f)
    check_provider_page(f)
    check_files_named()
    check_rule_scopes()
    print("docs_truth: " + json.dumps({k: v for k, v in f.items() if k != "options"})
          + f"; {len(f['options'])} runner options")
    for text in PROBLEMS:
        print("FALSE: " + text)
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
