"""Runner test cases: every bad input is one line and exit 2, never a traceback (runner_test.py
runs them: runner.bad_inputs, runner.random_inputs, runner.open_misbehaves)."""
import os
import random
import re
import subprocess

from runner_test import (PY, ROOT, RUNNER, SEND_TEST, WRITE_TEST, Failure, check, load_checked,
                         out_dir, runner, write)


def one_line_error(output, args):
    """The rule for bad input: no traceback, and exactly one line, 'ndkct: error: ...'."""
    lines = [x for x in output.splitlines() if x.strip()]
    check("Traceback" not in output, f"{args}: a traceback", output)
    check(len(lines) == 1 and lines[0].startswith("ndkct: error: "),
          f"{args}: not one 'ndkct: error:' line", output)


def write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def case_bad_inputs(opts):
    work = out_dir(opts, "bad_inputs")
    w = lambda name, text: write(os.path.join(work, name), text)  # noqa: E731
    b = lambda name, data: write_bytes(os.path.join(work, name), data)  # noqa: E731
    bad_profile = w("bad-profile.json", '{\n  "name": "bad",\n  "ndk_version": "3.0"\n}\n')
    bad_waiver = w("bad-waiver.txt", "# comment\nprovider: ndkct-model\ntests: *\nreson: typo\n")
    no_reason = w("no-reason.txt", "provider: ndkct-model\ntests: *\nreference: here\n")
    bad_vendor = w("bad-vendor.txt", "provider: x\nvendor: mellanox\n"
                   "tests: *\nreason: r\nreference: here\n")
    bad_rule = w("bad-rule.txt", "provider: x\ntests: *\nrules: NOPE-99\n"
                 "reason: r\nreference: here\n")
    bad_must = w("bad-must.txt", "ndk.*\nlevel:mustt\n")
    latin1 = b("latin1-waiver.txt", "provider: ndkct-model\nreason: caf\u00e9\n".encode("latin-1"))
    random_must = b("random-must.txt", bytes(random.Random(5).randrange(256) for _ in range(400)))
    random_profile = b("random-profile.json", b'{"name": "x", \xff\xfe\x00}')
    nul_waiver = b("nul-waiver.txt", b"provider: x\0\nreason: y\n")
    utf16 = b("utf16-must.txt", "ndk.*\n".encode("utf-16"))
    a_file = w("a-file", "not a folder\n")
    none_must = w("none-must.txt", "ndk.nothing.at.all.*\n")
    cases = [
        (["--provider", "foo"], r"unknown provider 'foo' \(use model"),
        (["--provider", "./libvendor.so"], r"a provider library is given as lib:\./libvendor\.so"),
        (["--provider", "model:speed=3"], r"unknown option 'speed=3'"),
        (["--provider", "model:seed=-1"], r"seed '-1' is not a whole number"),
        (["--provider", "model:seed=99999999999999999999999"], r"seed .* is out of range"),
        (["--provider", "lib:/nonexistent/libx.so"], r"no such file: /nonexistent/libx\.so"),
        (["--provider", f"lib:{opts.not_a_provider}"], r"does not export NdkctOpenAdapter"),
        (["--tests", "NoSuchTest*"], r"--tests 'NoSuchTest\*' matches no test"),
        (["--rules", "XYZ-*"], r"the rule filter 'XYZ-\*' matches no rule"),
        (["--tests", SEND_TEST, "--exclude-tests", "ndk.qp.send.*"],
         r"the filters together leave no test to run \(--allow-empty"),
        (["--profile", "nosuch"], r"bad profile 'nosuch': no built-in profile"),
        (["--profile", bad_profile], r"bad-profile\.json:3: ndk_version"),
        (["--profile", random_profile], r"bad profile"),
        (["--waivers", bad_waiver], r"bad-waiver\.txt:4: unknown field 'reson'"),
        (["--waivers", no_reason], r"no-reason\.txt:1: the waiver has no 'reason' field"),
        (["--waivers", bad_vendor], r"bad-vendor\.txt:2: vendor: 'mellanox' is not a number"),
        (["--waivers", bad_rule], r"bad-rule\.txt:3: rules: 'NOPE-99' matches no rule"),
        (["--waivers", "/nonexistent/w.txt"], r"cannot read the waiver file /nonexistent/w\.txt"),
        (["--waivers", latin1], r"latin1-waiver\.txt:2: the waiver file is not UTF-8 text"),
        (["--waivers", nul_waiver], r"nul-waiver\.txt:1: the waiver file holds a NUL byte"),
        (["--waivers", work], r"cannot read the waiver file .*: Is a directory"),
        (["--must-pass", bad_must], r"bad-must\.txt:2: level 'mustt' is not a catalog level"),
        (["--must-pass", random_must], r"random-must\.txt:\d+: the must-pass list is not UTF-8"),
        (["--must-pass", utf16], r"utf16-must\.txt:1: the must-pass list is not UTF-8"),
        (["--tests", SEND_TEST, "--must-pass", none_must],
         r"the must-pass list .* matches none of the 1 selected tests"),
        (["--shard", "4/3"], r"--shard '4/3'"),
        (["--shard", "x"], r"--shard 'x': expected I/N"),
        (["--shard", "0/0"], r"--shard '0/0'"),
        (["--shard", "1/2/3"], r"--shard '1/2/3': expected I/N"),
        (["--shard", "99999999999999999999/99999999999999999999"], r"N between 1 and"),
        (["--tests", SEND_TEST, "--shard", "2/2"], r"--shard 2/2: this shard .* holds none"),
        (["--timeout", "0"], r"--timeout 0: must be more than 0"),
        (["--timeout", "-1"], r"--timeout -1: must be more than 0"),
        (["--timeout", "nan"], r"--timeout nan: must be more than 0"),
        (["--timeout", "inf"], r"--timeout inf: must be more than 0"),
        (["--timeout", "1e400"], r"--timeout 1e400: must be more than 0"),
        (["--timeout", "soon"], r"--timeout 'soon' is not a number"),
        (["--seed", "-5"], r"--seed -5 is out of range"),
        (["--seed", "18446744073709551616"], r"--seed 18446744073709551616 is out of range"),
        (["--seed", "0x10"], r"--seed '0x10' is not a whole number"),
        (["--max-failures", "-1"], r"--max-failures -1 is out of range"),
        (["--unresponsive-after", "many"], r"--unresponsive-after 'many' is not a whole"),
        (["--guest-timeout", "-1"], r"--guest-timeout -1 is out of range"),
        (["--property-sequences", "0"], r"--property-sequences 0 is out of range"),
        (["--ndk-version", "3.0"], r"invalid choice: '3\.0'"),
        (["--no-such-option"], r"unrecognized arguments: --no-such-option"),
        (["OUT:" + a_file], r"--out .*a-file: exists and is not a folder"),
        (["OUT:/proc/ndkct-nope"], r"--out /proc/ndkct-nope: cannot make the folder"),
        (["OUT:" + os.path.join(work, "x" * 300)], r"--out .*: cannot make the folder: File name"),
    ]
    verbs_lib = os.path.join(opts.build, "adapters", "verbs", "libndkct_verbs_provider.so")
    has_device = subprocess.run([os.path.join(ROOT, "adapters", "rxe", "has-device")]).returncode == 0
    if os.path.exists(verbs_lib) and not has_device:
        # No device, and a PATH without qemu: no way to start the guest.
        cases.append((["--provider", "verbs", "--tests", SEND_TEST, "ENV:PATH=/nonexistent"],
                      r"no RDMA device on this machine and no qemu-system-x86_64"))
    for args, pattern in cases:
        env = None
        out = os.path.join(work, "out")
        if args and args[-1].startswith("ENV:"):
            name, _, value = args.pop()[4:].partition("=")
            env = dict(os.environ, **{name: value})
        if args and args[0].startswith("OUT:"):
            out = args.pop(0)[4:]
        done, output = runner(opts, *args, "--out", out, status=2, env=env)
        check(re.search(pattern, output), f"{args}: the message does not match /{pattern}/",
              output)
        one_line_error(output, args)
        print("   " + output.strip().splitlines()[-1][:200])
    check(not os.path.exists(os.path.join(work, "out", "result.json")),
          "bad input still wrote a report")
    print(f"bad_inputs: {len(cases)} bad inputs, each one line and exit 2")


def case_open_misbehaves(opts):
    """A provider that prints to stdout (at open and in every NdkWrite) changes nothing; one
    that crashes or hangs while being opened is one line and exit 2, within the time limit."""
    out = out_dir(opts, "open_print")
    runner(opts, "--provider", f"lib:{opts.open_print}", "--tests", f"{WRITE_TEST},{SEND_TEST}",
           status=0, out=out)
    result = load_checked(out)
    check(result["provider"]["identity"]["name"] == "faulty-open_print", "identity")
    check(result["counts"]["pass"] == 2, f"{result['counts']}")
    for mode, pattern in (("crash", r"the provider crashed while being opened: SIGSEGV, in "
                                    r"NdkctOpenAdapter\(.*libndkct_runner_open_crash\.so"),
                          ("hang", r"the provider was not opened within the time limit of 3 s "
                                   r"\(--timeout\): it hung in NdkctOpenAdapter\(")):
        library = getattr(opts, f"open_{mode}")
        done, output = runner(opts, "--provider", f"lib:{library}", "--timeout", "3",
                              "--tests", SEND_TEST, status=2, out=out_dir(opts, f"open_{mode}"))
        check(re.search(pattern, output), f"{mode}: /{pattern}/", output)
        one_line_error(output, [mode])
        print("   " + output.strip())
    print("open_misbehaves: a printing provider runs; crash and hang at open are one line, exit 2")


# ---- random arguments and random files ----

VALUES = ["", "0", "-1", "1", "2", "3/2", "1/1", "2/7", "nan", "inf", "-inf", "1e9", "1e-9",
          "0x10", "99999999999999999999999", "abc", "*", "ndk.*", "FR-*", "NOPE-1", "\u00e9\u00e9",
          "1.2", "2.1", "strict", "default", "model", "lib:", "lib:/nonexistent.so", "verbs:x=1",
          "model:seed=3", "model:seed=x", "a,b,,c", " ", "--", "-"]
OPTIONS = ["--provider", "--profile", "--ndk-version", "--seed", "--tests", "--exclude-tests",
           "--rules", "--exclude-rules", "--shard", "--timeout", "--waivers", "--must-pass",
           "--max-failures", "--unresponsive-after", "--suites", "--guest-timeout",
           "--property-sequences"]
FLAGS = ["--allow-empty", "--strict-waivers", "--no-html", "--list"]


def random_file(rng, folder, n):
    path = os.path.join(folder, f"random-{n}.txt")
    kind = rng.randrange(4)
    if kind == 0:
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
    elif kind == 1:
        data = "".join(chr(rng.randrange(32, 0x2FFF)) for _ in range(rng.randrange(1, 200)))
        data = data.encode("utf-8", "surrogatepass")
    elif kind == 2:  # waiver- or must-pass-like lines, some broken
        lines = []
        for _ in range(rng.randrange(1, 12)):
            lines.append(rng.choice(["provider", "vendor", "device", "tests", "rules", "reason",
                                     "reference", "level", "rule", "", "-", " "])
                         + rng.choice([": ", ":", " ", ""]) + rng.choice(VALUES))
            if rng.random() < 0.2:
                lines.append("")
        data = "\n".join(lines).encode("utf-8")
    else:
        data = b'{"name": "p", "ndk_version": "' + rng.choice(VALUES).encode() + b'"}'
    with open(path, "wb") as f:
        f.write(data)
    return path


def case_random_inputs(opts, count=60):
    """Random arguments and random file contents (seeded: reproducible): the runner exits 0, 1
    or 2, never with a traceback, and a 2 is exactly one 'ndkct: error:' line."""
    rng = random.Random(int(os.environ.get("NDKCT_FUZZ_SEED", "14")))
    work = out_dir(opts, "random_inputs")
    statuses = {}
    for n in range(count):
        args = []
        for _ in range(rng.randrange(1, 5)):
            option = rng.choice(OPTIONS)
            value = (random_file(rng, work, n) if option in ("--waivers", "--must-pass",
                                                             "--profile") and rng.random() < 0.7
                     else rng.choice(VALUES))
            args += [option, value]
        if rng.random() < 0.5:
            args.append(rng.choice(FLAGS))
        if "--list" not in args and rng.random() < 0.8:
            args.append("--list")  # mostly listing: the checks run, the suite does not
        if "--tests" not in args:
            args += ["--tests", SEND_TEST]
        command = [PY, RUNNER, "--build", opts.build, "--out", os.path.join(work, "out")] + args
        done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                              errors="replace")
        output = done.stdout + done.stderr
        statuses[done.returncode] = statuses.get(done.returncode, 0) + 1
        if done.returncode not in (0, 1, 2):
            raise Failure(f"{args}: exit status {done.returncode}\n{output}")
        if "Traceback" in output:
            raise Failure(f"{args}: a traceback\n{output}")
        if done.returncode == 2:
            one_line_error(done.stderr, args)
    print(f"random_inputs: {count} random command lines: exit statuses {statuses}")
