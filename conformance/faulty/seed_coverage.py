#!/usr/bin/python3
"""Which `must` rules of the five seed pages a deliberately faulty provider breaks (issue 13).

Reads the rule catalog (spec/rules/catalog: the five seed functions' files) and the faults
(conformance/faulty/CMakeLists.txt: ndkct_faulty_provider(NAME RULE "directed filter"), the
rule each breaks; conformance/properties/bites.cmake: the property that catches each; the
Python state machine's test reads the same CMakeLists.txt, so every fault listed there is a
Python test too). Prints, per seed page, each provider-duty `must` rule with the faults that
break it (or "-"), then the page's consumer-duty rules with the catalog's reason (a duty of the
caller: no provider fault can break it, so they are not counted), and the totals.

The subject of a rule is the catalog's own data: `level` is "must" for a provider obligation,
"consumer-duty" for the caller's (with a `reason`), "model-choice" for a reading the docs leave
open (neither is counted here).

Fails (exit 1) when the faults and the catalog disagree: a fault names a rule the catalog does
not have, a fault has no property bite or a property bite no fault, or fewer seed-page must
rules are broken than --at-least (the floor a change may not silently lower).

usage: seed_coverage.py [--source-dir DIR] [--at-least N] [--gaps-only]
"""

import argparse
import json
import pathlib
import re
import sys

SEED_PAGES = [  # catalog file, the page's function
    ("initialize_fast_register_mr", "NdkInitializeFastRegisterMr"),
    ("register_mr", "NdkRegisterMr"),
    ("create_qp", "NdkCreateQp"),
    ("fast_register", "NdkFastRegister"),
    ("build_lam", "NdkBuildLam"),
]


def fault_rules(cmake_text):
    """fault -> its rule, from ndkct_faulty_provider(NAME RULE "filter") lines."""
    return {m.group(1): m.group(2) for m in re.finditer(
        r"^\s*ndkct_faulty_provider\(\s*(\w+)\s+([A-Z][A-Z0-9-]*)\s+\"([^\"]+)\"", cmake_text, re.M)}


def property_bites(cmake_text):
    """fault -> (rules, property, seed), from ndkct_property_bites(FAULT RULE[,RULE...] PROPERTY
    [SEED]) (a comma list: the rules the fault's own call breaks, any of which the property may
    name)."""
    return {m.group(1): (m.group(2).split(","), m.group(3), m.group(4) or "1") for m in re.finditer(
        r"^\s*ndkct_property_bites\(\s*(\w+)\s+([A-Z][A-Z0-9,-]*)\s+(\w+)(?:\s+(\d+))?\s*\)",
        cmake_text, re.M)}


def main():
    here = pathlib.Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", type=pathlib.Path, default=here.parents[2])
    parser.add_argument("--at-least", type=int, default=0,
                        help="fail if fewer seed-page must rules are broken by a fault")
    parser.add_argument("--gaps-only", action="store_true",
                        help="list only the must rules no fault breaks")
    args = parser.parse_args()
    src = args.source_dir
    catalog_dir = src / "spec/rules/catalog"
    problems = []

    catalog = {}
    for path in sorted(catalog_dir.glob("*.json")):
        for rule in json.loads(path.read_text())["rules"]:
            catalog[rule["id"]] = rule
    faults = fault_rules((src / "conformance/faulty/CMakeLists.txt").read_text())
    bites = property_bites((src / "conformance/properties/bites.cmake").read_text())
    if not faults:
        problems.append("no ndkct_faulty_provider() lines found")
    for fault, rule in sorted(faults.items()):
        if rule not in catalog:
            problems.append(f"fault {fault} breaks {rule}, which the catalog does not have")
        if fault not in bites:
            problems.append(f"fault {fault} has no property bite (conformance/properties/bites.cmake)")
        elif rule not in bites[fault][0]:
            problems.append(f"fault {fault}: its property bite expects {bites[fault][0]}, "
                            f"its directed bite {rule}")
    for fault in sorted(set(bites) - set(faults)):
        problems.append(f"property bite {fault} has no faulty provider")
    breakers = {}
    for fault, rule in faults.items():
        breakers.setdefault(rule, []).append(fault)

    total_must = total_broken = total_duty = 0
    for area, function in SEED_PAGES:
        rules = json.loads((catalog_dir / f"{area}.json").read_text())["rules"]
        must = [r for r in rules if r["level"] == "must"]
        duty = [r for r in rules if r["level"] == "consumer-duty"]
        broken = [r for r in must if r["id"] in breakers]
        total_must += len(must)
        total_broken += len(broken)
        total_duty += len(duty)
        print(f"== {function} ({area}.json): {len(broken)} of {len(must)} must rules broken by a "
              f"fault; {len(duty)} consumer-duty rules")
        for r in must:
            by = sorted(breakers.get(r["id"], []))
            if args.gaps_only and by:
                continue
            print(f"  {r['id']:<14} {', '.join(by) if by else '-'}")
        if not args.gaps_only:
            for r in duty:
                print(f"  {r['id']:<14} consumer duty: {r.get('reason', '(no reason given)')}")
    print(f"seed pages: {total_broken} of {total_must} provider-duty must rules are broken by a "
          f"faulty provider ({total_must - total_broken} not yet); {total_duty} consumer-duty "
          f"rules are the caller's (no provider fault can break them); "
          f"{len(faults)} faulty providers in all")
    if total_broken < args.at_least:
        problems.append(f"only {total_broken} seed-page must rules are broken by a fault, fewer "
                        f"than the floor {args.at_least}")
    for p in problems:
        print(f"seed_coverage: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
