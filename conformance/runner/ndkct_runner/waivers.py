"""Waiver files: known failures of one provider, keyed by its identity.

A waiver file is a list of stanzas separated by blank lines; `#` starts a comment line. A stanza
is `field: value` lines (a line starting with white space continues the previous field):

    provider:  ndkct-verbs
    vendor:    0xFFFFFF
    device:    *
    tests:     *CompletionQueue.SendAndInvalidateEntries*
    rules:     SAI-01 CQ-RES-07
    reason:    why the failure is known and accepted
    reference: where it is tracked (an issue, a file, a URL)

provider is NdkctGetProviderIdentity()->Name (a glob; * = any); vendor and device are
NDK_ADAPTER_INFO.VendorId and DeviceId (decimal or 0x hexadecimal; * or absent = any); tests are
globs of test IDs or gtest names; rules are globs of rule IDs.

provider, reason, reference and at least one of tests and rules are required. A waiver turns a
fail, crash or timeout of a test into `waived` when the provider's identity matches and
- tests is given: the test matches one of its patterns, and
- rules is given: every rule the failure names matches one of its patterns (a waiver for SAI-01
  never hides a new failure of the same test on CQ-NOT-11); a failure that names no catalog rule
  (a plain assertion, a crash) needs one of the rules the test declares to match.
A waiver that matched a test that ran but waived nothing is stale (the failure is gone); a property
test's pass does not count (random sequences that missed a finding do not show it is gone: a
bounded run, --property-sequences, may well miss it). A tests
pattern that matches no test of the suite at all is unmatched (a typo, or a test since renamed):
it could never waive anything, so it is reported, and --strict-waivers fails the run on it.
Patterns for the Python state machine's tests (pybindings/tests/test_device.py reads the same
files) start with `pybindings.` and are left to it.
"""
import fnmatch
import re

from . import InputError, textfile
from .selection import test_matches

FIELDS = ("provider", "vendor", "device", "topology", "tests", "rules", "reason", "reference")
TOPOLOGIES = ("one-node", "two-nodes", "*")
OTHER_CONSUMERS = ("pybindings.",)  # test IDs of other readers of these files
RULE_PATTERN = re.compile(r"^[A-Z*?][A-Z0-9*?\[\]]*(-[A-Z0-9*?\[\]]+)*$")


class Waiver:
    def __init__(self, path, line):
        self.path, self.line = path, line
        self.provider = None
        self.vendor = None  # None = any
        self.device = None
        self.topology = "*"  # one-node, two-nodes (./ndkct run --peer) or * (either)
        self.tests = []
        self.rules = []
        self.reason = ""
        self.reference = ""
        self.matched = []  # tests it matched (by identity and pattern) that ran
        self.matched_directed = []  # those of them that are directed (deterministic) tests
        self.waived = []  # tests it waived
        self.unmatched = []  # its tests patterns that match no test of the suite

    @property
    def where(self):
        return f"{self.path}:{self.line}"

    def applies_to(self, identity):
        return (fnmatch.fnmatchcase(identity.get("name", ""), self.provider)
                and (self.vendor is None or self.vendor == identity.get("vendor_id"))
                and (self.device is None or self.device == identity.get("device_id")))

    def check_patterns(self, listed):
        """Records the tests patterns that match none of `listed` (the whole suite's tests)."""
        self.unmatched = [p for p in self.tests if not p.startswith(OTHER_CONSUMERS)
                          and not any(test_matches(t, p) for t in listed)]

    def applies_in(self, nodes):
        """Whether the waiver applies to a run on this many nodes (1, or 2 with --peer)."""
        return self.topology == "*" or self.topology == ("two-nodes" if nodes == 2 else "one-node")

    def matches_test(self, test):
        if self.tests and not any(test_matches(test, p) for p in self.tests):
            return False
        if self.rules and not self.tests:
            named = set(test.get("rules", [])) | set(test.get("failed_rules", []))
            return any(fnmatch.fnmatchcase(r, p) for r in named for p in self.rules)
        return True

    def covers_failure(self, test):
        """Whether the waiver covers this test's failure (the test already matches): every rule
        the failure names is among the waiver's rules; a failure that names no catalog rule (a
        plain assertion, a crash) is covered when the waiver names one the test declares."""
        if not self.rules:
            return True

        def waived(rule):
            return any(fnmatch.fnmatchcase(rule, p) for p in self.rules)

        if test.get("failed_rules"):
            return all(waived(r) for r in test["failed_rules"])
        return any(waived(r) for r in test.get("rules", []))

    def to_json(self):
        return {"where": self.where, "provider": self.provider,
                "vendor_id": self.vendor, "device_id": self.device,
                "tests": self.tests, "rules": self.rules, "reason": self.reason,
                "reference": self.reference, "matched": sorted(set(self.matched)),
                "waived": sorted(set(self.waived)),
                "stale": bool(self.matched_directed) and not self.waived,
                "unmatched_tests": self.unmatched}


def _number(text, path, line, field):
    text = text.strip()
    if text == "*":
        return None
    try:
        return int(text, 0)
    except ValueError:
        raise InputError(f"{path}:{line}: {field}: '{text}' is not a number "
                         f"(decimal, 0x hexadecimal, or * for any)") from None


def parse(text, path, known_rules):
    """Parses a waiver file's text. Raises InputError naming the file, line and field."""
    waivers, fields, lines, start = [], {}, {}, None

    def finish():
        if start is None:
            return
        w = Waiver(path, start)
        for required in ("provider", "reason", "reference"):
            if not fields.get(required, "").strip():
                raise InputError(f"{path}:{start}: the waiver has no '{required}' field "
                                 f"(every waiver needs provider, reason and reference)")
        w.provider = fields["provider"].strip()
        w.vendor = _number(fields.get("vendor", "*"), path, lines.get("vendor", start), "vendor")
        w.device = _number(fields.get("device", "*"), path, lines.get("device", start), "device")
        w.topology = fields.get("topology", "*").strip()
        if w.topology not in TOPOLOGIES:
            raise InputError(f"{path}:{lines['topology']}: topology: '{w.topology}' is not one of "
                             f"{', '.join(TOPOLOGIES)}")
        w.tests = fields.get("tests", "").replace(",", " ").split()
        w.rules = fields.get("rules", "").replace(",", " ").split()
        if not w.tests and not w.rules:
            raise InputError(f"{path}:{start}: the waiver names neither 'tests' nor 'rules' "
                             f"(it would waive every failure)")
        for rule in w.rules:
            if not RULE_PATTERN.match(rule):
                raise InputError(f"{path}:{lines['rules']}: rules: '{rule}' is not a rule ID "
                                 f"(like FR-ALIGN-01) or a glob of rule IDs")
            if not any(fnmatch.fnmatchcase(r, rule) for r in known_rules):
                raise InputError(f"{path}:{lines['rules']}: rules: '{rule}' matches no rule "
                                 f"of the catalog (spec/rules/catalog)")
        w.reason = " ".join(fields["reason"].split())
        w.reference = " ".join(fields["reference"].split())
        waivers.append(w)

    last = None
    for number, raw in enumerate(text.splitlines(), 1):
        if raw.lstrip().startswith("#"):
            continue
        if not raw.strip():
            finish()
            fields, lines, start, last = {}, {}, None, None
            continue
        if raw[0] in " \t":
            if last is None:
                raise InputError(f"{path}:{number}: a continuation line (starting with white "
                                 f"space) with no field before it")
            fields[last] += " " + raw.strip()
            continue
        key, colon, value = raw.partition(":")
        key = key.strip().lower()
        if not colon:
            raise InputError(f"{path}:{number}: expected 'field: value', found '{raw.strip()}'")
        if key not in FIELDS:
            shown = key if len(key) <= 30 else key[:30] + "..."
            raise InputError(f"{path}:{number}: unknown field '{shown}' "
                             f"(fields: {', '.join(FIELDS)})")
        if key in fields:
            raise InputError(f"{path}:{number}: field '{key}' given twice in one waiver "
                             f"(blank lines separate waivers)")
        if start is None:
            start = number
        fields[key], lines[key], last = value.strip(), number, key
    finish()
    return waivers


def load(paths, known_rules):
    waivers = []
    for path in paths:
        waivers += parse(textfile.read_text(path, "the waiver file"), path, known_rules)
    return waivers


def apply(waivers, identity, tests):
    """Marks waived tests (verdict 'waived', original verdict kept) and records which waivers
    matched and waived what. Returns the waivers that apply to this provider."""
    active = [w for w in waivers if w.applies_to(identity)]
    for test in tests:
        for w in active:
            if not w.matches_test(test):
                continue
            w.matched.append(test["test"])
            if test.get("kind", "directed") != "property":
                w.matched_directed.append(test["test"])
            if test["verdict"] in ("fail", "crash", "timeout") and w.covers_failure(test):
                test["waived_verdict"] = test["verdict"]
                test["verdict"] = "waived"
                test["waiver"] = {"where": w.where, "reason": w.reason,
                                  "reference": w.reference}
                w.waived.append(test["test"])
                break
    return active
