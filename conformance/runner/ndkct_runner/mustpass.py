"""Must-pass lists: which tests decide the exit status of a run.

conformance/must-pass/<profile>.txt (or --must-pass FILE) holds one pattern a line (`#` starts a
comment):
    ndk.mr.fast_register.*      a glob of test IDs or gtest names
    rule:FR-ALIGN-*             tests that declare a rule matching the glob
    level:must                  tests that declare at least one rule of that catalog level
    -ndk.cq.resize.*            removes tests matched by the lines above (any of the forms)
Lines apply in order. Without a file for the profile, every test is must-pass.
A run exits 0 when every must-pass test it ran is pass, warning, waived or not_supported.
"""
import fnmatch
import os

from . import InputError, textfile

LEVELS = ("must", "consumer-duty", "model-choice")


class MustPass:
    def __init__(self, path, entries):
        self.path = path  # None: every test
        self.entries = entries  # (line, exclude, kind, pattern)

    def describe(self):
        return self.path or "every test (no must-pass list for this profile)"

    def applies(self, test, rule_levels):
        if self.path is None:
            return True
        chosen = False
        for _, exclude, kind, pattern in self.entries:
            if kind == "test":
                hit = fnmatch.fnmatchcase(test["test"], pattern) or (
                    bool(test.get("id")) and fnmatch.fnmatchcase(test["id"], pattern))
            elif kind == "rule":
                hit = any(fnmatch.fnmatchcase(r, pattern) for r in test.get("rules", []))
            else:
                hit = any(rule_levels.get(r) == pattern for r in test.get("rules", []))
            if hit:
                chosen = not exclude
        return chosen


def parse(text, path, known_rules):
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exclude = line.startswith("-")
        body = line[1:].strip() if exclude else line
        kind, colon, pattern = body.partition(":")
        if not colon:
            kind, pattern = "test", body
        kind, pattern = kind.strip(), pattern.strip()
        if kind not in ("test", "rule", "level"):
            raise InputError(f"{path}:{number}: unknown kind '{kind}:' (a test pattern, "
                             f"rule:PATTERN or level:LEVEL)")
        if not pattern or " " in pattern:
            raise InputError(f"{path}:{number}: expected one pattern, found '{body}'")
        if kind == "level" and pattern not in LEVELS:
            raise InputError(f"{path}:{number}: level '{pattern}' is not a catalog level "
                             f"({', '.join(LEVELS)})")
        if kind == "rule" and not any(fnmatch.fnmatchcase(r, pattern) for r in known_rules):
            raise InputError(f"{path}:{number}: rule:{pattern} matches no rule of the catalog")
        entries.append((number, exclude, kind, pattern))
    return MustPass(path, entries)


def load(explicit_path, profile_name, folder, known_rules):
    path = explicit_path
    if path is None:
        candidate = os.path.join(folder, f"{profile_name}.txt")
        if not os.path.exists(candidate):
            return MustPass(None, [])
        path = candidate
    return parse(textfile.read_text(path, "the must-pass list"), path, known_rules)
