#!/usr/bin/python3
"""Fuzzes the runner's own parsers: waiver files and must-pass lists (conformance/runner).

They are Python, so libFuzzer cannot drive them. This is the same loop with the standard library:
coverage-guided mutation. Each input is run through the parser as the runner runs it (read from a
file, parsed against the catalog's rule IDs, then applied to a few test results); the lines of the
runner's modules it executed (sys.settrace) are its coverage, and an input that reaches a line no
earlier one reached joins the corpus. The only allowed outcomes are a result or InputError (the
runner's "bad input" error, which names the file and line); anything else (another exception, a
hang) is a finding: the input is saved and the run fails.

  runner_files_fuzz.py --replay                 run the checked-in corpus and regressions once
  runner_files_fuzz.py --seconds 60             fuzz both targets for 60 s each (corpus kept in
                                                --work, default build/fuzz-work/runner_files)
  runner_files_fuzz.py --seconds 600 --target waivers --seed 7

Corpus: fuzz/corpus/runner_files/<target>/, regressions: fuzz/regressions/runner_files/<target>/.
"""
import argparse
import hashlib
import json
import os
import random
import signal
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "conformance", "runner"))

from ndkct_runner import InputError, mustpass, waivers  # noqa: E402

TARGETS = ("waivers", "must_pass")
CORPUS = os.path.join(HERE, "corpus", "runner_files")
REGRESSIONS = os.path.join(HERE, "regressions", "runner_files")
# An input that takes more CPU time than this is a hang (a finding). CPU time, not wall time
# (ITIMER_PROF): the shared machines run many builds at once.
PER_INPUT_SECONDS = 10

# Tokens the mutator splices in: the files' own vocabulary and the characters parsers trip on.
TOKENS = [b"provider:", b"vendor:", b"device:", b"tests:", b"rules:", b"reason:", b"reference:",
          b"rule:", b"level:", b"must", b"consumer-duty", b"model-choice", b"-", b"*", b"?", b"[",
          b"]", b"[!", b"#", b"\n", b"\n\n", b"\r\n", b"\t", b" ", b":", b"0x", b"0X", b"1_0",
          b"ndk.", b"FR-ALIGN-01", b"SAI-*", b"CQ-NOT-1?", b",", b"\x00", b"\xff", b"\xc3\x28",
          b"\xe2\x80\xa8", b"\x0b", b"\x0c", b"\x1c", b"\x85", "\u2028".encode()]


def known_rules():
    rules = set()
    folder = os.path.join(ROOT, "spec", "rules", "catalog")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                rules |= {r["id"] for r in json.load(f)["rules"]}
    return rules


RULES = None
LEVELS = None

SAMPLE_TESTS = [
    {"test": "Providers/CompletionQueue.SendAndInvalidateEntries/model_seed1",
     "id": "ndk.cq.sai_entries", "rules": ["SAI-01", "CQ-RES-07"], "failed_rules": ["SAI-01"],
     "verdict": "fail"},
    {"test": "Providers/MemoryWindows.WindowGrantsNoMoreThanItsBind/verbs", "id": "ndk.mw.bounds",
     "rules": ["BND-08"], "failed_rules": [], "verdict": "crash"},
    {"test": "Providers/RegisterMr.Basic/model_seed2", "id": "", "rules": ["RMR-FLG-01"],
     "verdict": "pass"},
]
IDENTITIES = [{"name": "ndkct-verbs", "vendor_id": 0xFFFFFF, "device_id": 0},
              {"name": "ndkct-model", "vendor_id": 0, "device_id": 0}]


def run_waivers(path):
    for w in waivers.load([path], RULES):
        w.to_json()
    tests = [dict(t) for t in SAMPLE_TESTS]
    for identity in IDENTITIES:
        waivers.apply(waivers.load([path], RULES), identity, tests)


def run_must_pass(path):
    lists = mustpass.load(path, "fuzz", HERE, RULES)
    lists.describe()
    for t in SAMPLE_TESTS:
        lists.applies(t, LEVELS)


RUN = {"waivers": run_waivers, "must_pass": run_must_pass}


class Hang(Exception):
    pass


def on_alarm(signum, frame):
    raise Hang(f"an input took more than {PER_INPUT_SECONDS} s of CPU time")


class Coverage:
    """Lines of the runner's parser modules an input executed."""

    def __init__(self):
        self.files = {os.path.realpath(m.__file__) for m in (waivers, mustpass)}
        self.lines = set()

    def tracer(self, frame, event, arg):
        if os.path.realpath(frame.f_code.co_filename) not in self.files:
            return None
        if event == "line":
            self.lines.add((frame.f_code.co_filename, frame.f_lineno))
        return self.tracer


def execute(target, data, scratch, trace):
    """Runs one input. Returns (finding or None, coverage set or None)."""
    with open(scratch, "wb") as f:
        f.write(data)
    coverage = Coverage() if trace else None
    signal.setitimer(signal.ITIMER_PROF, PER_INPUT_SECONDS)
    if coverage:
        sys.settrace(coverage.tracer)
    try:
        RUN[target](scratch)
        finding = None
    except InputError as error:
        # The allowed failure: it must name the problem (a message, with the file's path).
        finding = None if str(error).strip() else "InputError with an empty message"
    except Exception:  # noqa: BLE001 - every other exception is the finding
        finding = traceback.format_exc()
    finally:
        sys.settrace(None)
        signal.setitimer(signal.ITIMER_PROF, 0)
    return finding, (coverage.lines if coverage else None)


def inputs_in(folder):
    if not os.path.isdir(folder):
        return []
    out = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                out.append((path, f.read()))
    return out


def mutate(rng, data, corpus):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(7)
        at = rng.randint(0, len(data))
        if choice == 0 and data:  # flip a byte
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif choice == 1:  # insert a token
            data[at:at] = rng.choice(TOKENS)
        elif choice == 2 and data:  # delete a range
            end = min(len(data), at + rng.randint(1, 16))
            del data[at:end]
        elif choice == 3 and data:  # duplicate a range
            start = rng.randrange(len(data))
            piece = data[start:start + rng.randint(1, 64)]
            data[at:at] = piece * rng.randint(1, 8)
        elif choice == 4 and corpus:  # splice with another input
            other = rng.choice(corpus)
            cut = rng.randint(0, len(other))
            data = data[:at] + other[cut:cut + rng.randint(1, 256)]
        elif choice == 5:  # random bytes
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif data:  # replace a line with another input's line
            lines = bytes(data).split(b"\n")
            others = rng.choice(corpus).split(b"\n") if corpus else [b""]
            lines[rng.randrange(len(lines))] = rng.choice(others)
            data = bytearray(b"\n".join(lines))
    return bytes(data[:8192])


def save(folder, data):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, hashlib.sha1(data).hexdigest()[:16])
    with open(path, "wb") as f:
        f.write(data)
    return path


def replay(scratch):
    failures, count = 0, 0
    for target in TARGETS:
        for folder in (os.path.join(CORPUS, target), os.path.join(REGRESSIONS, target)):
            for path, data in inputs_in(folder):
                count += 1
                finding, _ = execute(target, data, scratch, trace=False)
                if finding:
                    failures += 1
                    print(f"FINDING {target} {path}:\n{finding}", file=sys.stderr)
    print(f"replay: {count} inputs, {failures} findings")
    return 1 if failures else 0


def fuzz(target, seconds, seed, work, scratch):
    rng = random.Random(seed)
    work_dir = os.path.join(work, target)
    seeds = [d for _, d in inputs_in(os.path.join(CORPUS, target))]
    seeds += [d for _, d in inputs_in(os.path.join(REGRESSIONS, target))]
    seeds += [d for _, d in inputs_in(work_dir)]
    corpus, seen = [], set()
    findings, signatures = 0, set()

    def report(data, finding):
        # One report per distinct cause (the exception and where it was raised).
        lines = finding.strip().splitlines()
        frames = [line for line in lines if line.lstrip().startswith("File ")]
        signature = (lines[-1].split(":")[0], frames[-1] if frames else "")
        if signature in signatures:
            return
        signatures.add(signature)
        path = save(os.path.join(work, "findings", target), data)
        print(f"FINDING {target} {path}:\n{finding}", file=sys.stderr)

    for data in seeds or [b""]:
        finding, lines = execute(target, data, scratch, trace=True)
        if finding:
            findings += 1
            report(data, finding)
            continue
        if not lines <= seen:
            seen |= lines
            corpus.append(data)
    corpus = corpus or [b""]
    started = time.monotonic()
    runs = 0
    while time.monotonic() - started < seconds:
        data = mutate(rng, rng.choice(corpus), corpus)
        finding, lines = execute(target, data, scratch, trace=True)
        runs += 1
        if finding:
            findings += 1
            report(data, finding)
            continue
        if not lines <= seen:
            seen |= lines
            corpus.append(data)
            save(work_dir, data)
    elapsed = max(time.monotonic() - started, 1e-9)
    print(f"{target}: {runs} runs in {elapsed:.0f} s ({runs / elapsed:.0f} exec/s), corpus "
          f"{len(corpus)} inputs, {len(seen)} lines covered, {findings} findings")
    return findings


def main():
    global RULES, LEVELS
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replay", action="store_true")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--target", choices=TARGETS, action="append")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "fuzz-work",
                                                       "runner_files"))
    args = parser.parse_args()
    RULES = known_rules()
    LEVELS = {r: "must" for r in RULES}
    signal.signal(signal.SIGPROF, on_alarm)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = os.path.join(tmp, "input.txt")
        if args.replay:
            return replay(scratch)
        print(f"seed {args.seed}")
        findings = sum(fuzz(t, args.seconds, args.seed, args.work, scratch)
                       for t in args.target or TARGETS)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
