"""Which tests a run runs: the listing of every test executable, include and exclude filters on
test IDs (dotted IDs or gtest names) and rule IDs, and shards."""
import fnmatch
import json
import os
import subprocess

from . import InputError


def list_tests(executable, kind, provider_arg, work, timeout=120):
    """Every test the executable instantiates for the provider (--ndkct_list=json, written to a
    file: nothing a provider prints can disturb it)."""
    out = os.path.join(work, f"list-{kind}.jsonl")
    try:
        done = subprocess.run([executable, f"--provider={provider_arg}", "--ndkct_list=json",
                               f"--ndkct_out={out}"], capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except OSError as error:
        raise InputError(f"cannot run {executable}: {error.strerror}") from None
    except subprocess.TimeoutExpired:
        raise InputError(f"{executable} did not list its tests within {timeout:g} s") from None
    if done.returncode != 0:
        err = " ".join(done.stderr.decode("utf-8", "replace").split())
        raise InputError(f"{executable} could not list its tests (exit status "
                         f"{done.returncode}): {err}")
    tests = []
    with open(out, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("{"):
                t = json.loads(line)
                t["kind"] = kind
                t["executable"] = executable
                tests.append(t)
    return tests


def split_patterns(values):
    out = []
    for v in values or []:
        out += [p for p in v.replace(",", " ").split() if p]
    return out


def test_matches(test, pattern):
    """Whether a test's gtest name or dotted ID matches a glob (filters and waivers alike)."""
    return fnmatch.fnmatchcase(test["test"], pattern) or (
        bool(test.get("id")) and fnmatch.fnmatchcase(test["id"], pattern))


def _rule_matches(test, pattern):
    return any(fnmatch.fnmatchcase(r, pattern) for r in test.get("rules", []))


def select(tests, include_tests, exclude_tests, include_rules, exclude_rules, known_rules,
           allow_empty=False):
    """Applies the filters. Every pattern must match something, and together they must leave a
    test (unless allow_empty), else InputError."""
    for p in include_rules + exclude_rules:
        if not any(fnmatch.fnmatchcase(r, p) for r in known_rules):
            raise InputError(f"the rule filter '{p}' matches no rule of the catalog "
                             f"(rule IDs look like FR-ALIGN-01; globs like 'FR-*' work)")
    for option, patterns, matches in (("--tests", include_tests, test_matches),
                                      ("--exclude-tests", exclude_tests, test_matches),
                                      ("--rules", include_rules, _rule_matches),
                                      ("--exclude-rules", exclude_rules, _rule_matches)):
        for p in patterns:
            if not any(matches(t, p) for t in tests):
                example = tests[0] if tests else {"test": "?", "id": "?"}
                what = ("no test" if matches is test_matches else "no test covers a rule")
                raise InputError(
                    f"{option} '{p}' matches {what} (test IDs look like {example.get('id')}, "
                    f"gtest names like {example['test']}; patterns are globs: '*FastRegister*')")
    chosen = []
    for t in tests:
        if include_tests and not any(test_matches(t, p) for p in include_tests):
            continue
        if include_rules and not any(_rule_matches(t, p) for p in include_rules):
            continue
        if any(test_matches(t, p) for p in exclude_tests):
            continue
        if any(_rule_matches(t, p) for p in exclude_rules):
            continue
        chosen.append(t)
    if not chosen and not allow_empty:
        raise InputError("the filters together leave no test to run (--allow-empty accepts "
                         "that)")
    return chosen


SHARDS_MAX = 100_000


def parse_shard(text):
    if text is None:
        return None
    parts = text.split("/")
    if len(parts) != 2 or not all(p.isascii() and p.isdigit() for p in parts):
        raise InputError(f"--shard '{text}': expected I/N with whole numbers, e.g. 1/4")
    index, count = (int(x) for x in parts)
    if not 1 <= count <= SHARDS_MAX or not 1 <= index <= count:
        raise InputError(f"--shard '{text}': I must be between 1 and N, and N between 1 and "
                         f"{SHARDS_MAX}")
    return index, count


def shard(tests, shard_spec):
    """Shard I of N: every N-th test of the sorted selection, starting at the I-th. The shards
    of one selection are disjoint and together hold every test."""
    if shard_spec is None:
        return tests
    index, count = shard_spec
    ordered = sorted(tests, key=lambda t: (t["kind"], t["test"]))
    mine = {t["test"] for i, t in enumerate(ordered) if i % count == index - 1}
    return [t for t in tests if t["test"] in mine]
