"""The runner's options and the checks every input gets before anything runs: numbers in range,
files that are readable UTF-8 text, an output folder that can be written. A bad input is an
InputError: one line naming the problem, exit status 2, never a traceback."""
import argparse
import math
import os

from . import InputError, provider as providers

VERSION_PROFILES = {"1.1": "ndkpi-1.1", "1.2": "ndkpi-1.2", "2.1": "default"}
SEED_MAX = 2**64 - 1  # NDKCT_OPEN_OPTIONS.Seed is a ULONG64
TIMEOUT_MAX = 7 * 24 * 3600.0


class Parser(argparse.ArgumentParser):
    """argparse, but a bad option is one line (InputError), not usage text and exit 2 from
    inside argparse."""

    def error(self, message):
        raise InputError(f"{message} (./ndkct run --help lists the options)")


def integer(name, low, high):
    def parse(text):
        try:
            value = int(text, 10)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{name} '{text}' is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{name} {value} is out of range ({low}..{high})")
        return value
    parse.__name__ = name
    return parse


def seconds(name, high):
    def parse(text):
        try:
            value = float(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"{name} '{text}' is not a number of seconds") from None
        if not math.isfinite(value) or value <= 0 or value > high:
            raise argparse.ArgumentTypeError(
                f"{name} {text}: must be more than 0 and at most {high:g} seconds")
        return value
    parse.__name__ = name
    return parse


def parse(argv, root):
    p = Parser(
        prog="./ndkct run", description="Run the conformance suite (directed and property "
        "tests) against one provider and write a report (result.json, junit.xml, report.html).",
        epilog="Exit status: 0 when every must-pass test passed, was waived or is not supported; "
        "1 otherwise (the reason is printed); 2 for bad input; 130 when interrupted. "
        "See conformance/runner/README.md.")
    p.add_argument("--provider", default="model", metavar="SPEC",
                   help=f"the provider under test: {providers.KINDS} (default: model)")
    p.add_argument("--profile", metavar="NAME|FILE", help="profile: default, strict, ndkpi-1.1, "
                   "ndkpi-1.2 or a profile file (spec/profiles)")
    p.add_argument("--ndk-version", choices=sorted(VERSION_PROFILES), metavar="V",
                   help="NDKPI version 1.1, 1.2 or 2.1 (default: the highest both the provider's "
                   "identity and the profile allow)")
    p.add_argument("--seed", type=integer("--seed", 0, SEED_MAX), metavar="N",
                   help="seed of the provider's choices (0..2^64-1)")
    p.add_argument("--tests", "--filter", action="append", default=[], metavar="PATTERNS",
                   help="run only tests whose dotted ID or gtest name matches one of these globs "
                   "(comma-separated; repeatable)")
    p.add_argument("--exclude-tests", action="append", default=[], metavar="PATTERNS")
    p.add_argument("--rules", action="append", default=[], metavar="PATTERNS",
                   help="run only tests that declare a rule matching one of these globs")
    p.add_argument("--exclude-rules", action="append", default=[], metavar="PATTERNS")
    p.add_argument("--shard", metavar="I/N", help="run shard I of N of the selection")
    p.add_argument("--allow-empty", action="store_true",
                   help="a selection, shard or must-pass list with no test is not an error "
                   "(for CI matrices); the run then passes with nothing checked")
    p.add_argument("--timeout", type=seconds("--timeout", TIMEOUT_MAX), default=120.0,
                   metavar="SECONDS", help="time limit of one test, and of opening the "
                   "provider (default 120)")
    p.add_argument("--max-failures", type=integer("--max-failures", 0, 10**9), default=0,
                   metavar="N", help="stop the run after N failed, crashed or timed-out tests "
                   "(default 0: never)")
    p.add_argument("--unresponsive-after", type=integer("--unresponsive-after", 0, 10**6),
                   default=3, metavar="K", help="after K consecutive timeouts in a group (a test "
                   "suite) the group's other tests are not run: verdict blocked (default 3; 0: "
                   "never)")
    p.add_argument("--waivers", action="append", metavar="FILE",
                   help="waiver file (repeatable; default: every conformance/waivers/*.txt; "
                   "'none' for no waivers)")
    p.add_argument("--strict-waivers", action="store_true",
                   help="a stale waiver (its test now passes) fails the run (for CI)")
    p.add_argument("--must-pass", metavar="FILE", help="must-pass list (default: "
                   "conformance/must-pass/<profile>.txt; without one, every test)")
    p.add_argument("--out", default=os.environ.get("NDKCT_OUT") or os.path.join(root, "out"),
                   metavar="DIR", help="output folder (default: out/)")
    p.add_argument("--list", action="store_true", help="list the selected tests, run nothing")
    p.add_argument("--suites", default="directed,property", metavar="KINDS",
                   help="which tests: directed, property or both (default: both, when built)")
    p.add_argument("--build", default=os.environ.get("NDKCT_BUILD_DIR", os.path.join(root, "build")),
                   metavar="DIR", help="the build folder (default: build/)")
    p.add_argument("--no-html", action="store_true", help="write no HTML report")
    p.add_argument("--capture", metavar="DIR", help="record a trace of every test into DIR "
                   "(spec/TRACE.md); judge it offline with ./ndkct check-trace DIR")
    p.add_argument("--capture-digest-limit", type=integer("--capture-digest-limit", 1, 2**32 - 1),
                   metavar="BYTES", help="with --capture: data blocks over BYTES are not read "
                   "(where their bytes land goes unjudged, and check-trace says so); bounds the "
                   "capture's cost on large transfers")
    p.add_argument("--guest-timeout", type=integer("--guest-timeout", 1, 7 * 24 * 3600),
                   default=3600, metavar="SECONDS",
                   help="time limit of the Soft-RoCE guest for verbs runs (default 3600)")
    p.add_argument("--peer", metavar="two-guests|HOST:PORT",
                   help="two nodes: each test that connects has its passive side on the peer "
                   "(two-guests: two Soft-RoCE guests on one link; HOST:PORT: where `./ndkct agent "
                   "--listen PORT` runs; see conformance/twonode/README.md)")
    p.add_argument("--property-sequences", type=integer("--property-sequences", 1, 1_000_000),
                   metavar="N", help="sequences each property test tries (default: the property "
                   "executable's, 100); CI's two-guest run bounds it")
    p.add_argument("--topology-kind", help=argparse.SUPPRESS)
    p.add_argument("--in-guest", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def output_folder(path):
    """Checks (and makes) the output folder before anything runs."""
    path = os.path.abspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError(f"--out {path}: exists and is not a folder")
    try:
        os.makedirs(os.path.join(path, "logs"), exist_ok=True)
    except OSError as error:
        raise InputError(f"--out {path}: cannot make the folder: {error.strerror}") from None
    probe = os.path.join(path, ".ndkct-write-probe")
    try:
        with open(probe, "w") as f:
            f.write("x")
        os.remove(probe)
    except OSError as error:
        raise InputError(f"--out {path}: cannot write there: {error.strerror}") from None
    return path
