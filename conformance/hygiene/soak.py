#!/usr/bin/python3
"""Soak: the property tests (conformance/properties) against one provider for a chosen time, seed
after seed, reporting the sequences run, the findings (property, seed, rules the oracle named,
the shrunk counterexample's first line) and resource growth: each run's peak RSS, and the
device's objects and the free memory before and after the whole soak (what the kernel still
holds once every run's process is gone), and after each run. Free memory is MemAvailable plus
the per-CPU free page lists, read settled, with the caches dropped first where the soak may (as
root, as in the rxe guest).

  soak.py --build BUILD --minutes 60 [--provider SPEC] [--seed-start S] [--tests N]
          [--report FILE] [--keep-caches]

Default provider: the verbs provider (lib:BUILD/adapters/verbs/libndkct_verbs_provider.so), which
needs a device: run it where one is (adapters/rxe/device-run ... -- soak.py ...). Exit status 1
when a run found something or a resource grew.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

PASSED = re.compile(r"(\d+) sequences passed \(seed")
FALSIFIED = re.compile(r"failed after (\d+) passing sequences")
RULE = re.compile(r"\b((?:[A-Z][A-Z0-9]*-)+\d\d)\b")


def device_objects():
    try:
        out = subprocess.run(["rdma", "resource", "show"], capture_output=True, text=True,
                             timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    counts = {}
    for line in out.splitlines():
        words = line.split()
        for name, value in zip(words, words[1:]):
            if value.isdigit() and not name.endswith(":"):
                counts[name] = counts.get(name, 0) + int(value)
    return counts


def mem_available_kib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


def per_cpu_free_kib():
    """Free pages on the per-CPU lists (/proc/zoneinfo's pagesets 'count:', in pages): free
    memory that MemFree and MemAvailable leave out. An exiting process's pages land there; in
    the rxe guest one property run left 31 MiB on them for 38 s after its exit (and dropping
    the caches does not drain them), which read as 33 MiB less available."""
    pages = 0
    try:
        with open("/proc/zoneinfo") as f:
            for line in f:
                words = line.split()
                if len(words) == 2 and words[0] == "count:":
                    pages += int(words[1])
    except OSError:
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def own_rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def settled_memory(drop_caches):
    """The memory free for use once the last process's pages are back: MemAvailable plus the
    per-CPU free lists. Caches are dropped first where this process may (root: then page
    cache, dentries and inodes, which the provider's files and the 9p share fill, are no
    noise), then the sum is read until four readings a quarter second apart lie within 1 MiB
    (a process's teardown returns pages late), for at most 20 s. The soak's own resident size
    comes along: this process is not the provider."""
    dropped = False
    if drop_caches:
        try:
            os.sync()
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
            dropped = True
        except OSError:
            pass

    def read():
        return {"mem_available_kib": mem_available_kib(), "per_cpu_free_kib": per_cpu_free_kib()}

    def total(r):
        return r["mem_available_kib"] + r["per_cpu_free_kib"]

    def steady(readings):
        last = [total(r) for r in readings[-4:]]
        return len(last) == 4 and max(last) - min(last) < 1024

    readings = [read()]
    deadline = time.monotonic() + 20
    while not steady(readings) and time.monotonic() < deadline:
        time.sleep(0.25)
        readings.append(read())
    return {**readings[-1], "free_kib": total(readings[-1]), "caches_dropped": dropped,
            "settled": steady(readings), "soak_rss_kib": own_rss_kib()}


def run_once(args, seed):
    with tempfile.TemporaryDirectory() as tmp:
        rss_file = os.path.join(tmp, "rss")
        command = ["/usr/bin/time", "-f", "%M", "-o", rss_file, args.exe,
                   f"--provider={args.provider}", f"--ndkct_seed={seed}",
                   f"--ndkct_tests={args.tests}", "--ndkct_callback_ms=5000",
                   "--ndkct_drain_ms=3000"]
        started = time.monotonic()
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, errors="replace", timeout=args.run_timeout)
            output, code = done.stdout, done.returncode
        except subprocess.TimeoutExpired as expired:
            output = expired.stdout or ""
            if isinstance(output, bytes):
                output = output.decode(errors="replace")
            code = "timeout"
        seconds = time.monotonic() - started
        rss = 0
        if os.path.exists(rss_file):
            with open(rss_file) as f:
                text = f.read().split()
                rss = int(text[-1]) if text and text[-1].isdigit() else 0
    sequences = sum(int(n) for n in PASSED.findall(output))
    sequences += sum(int(n) for n in FALSIFIED.findall(output))
    findings = []
    if code != 0:
        # Each failing property: its name, and the rules its failure names.
        for block in re.split(r"\[ RUN      \] ", output)[1:]:
            name = block.split()[0]
            # Its own result line ("[  FAILED  ] NAME, where GetParam() = ... (12 ms)"): the
            # run's closing summary, which lists every failed test, falls into the last block.
            if not re.search(r"^\[  FAILED  \] " + re.escape(name) + r"[, ].*\(\d+ ms\)$",
                             block, re.M):
                continue
            rules = sorted(set(RULE.findall(block)))
            lines = [line.strip() for line in block.splitlines()]
            first = next((line for line in lines if "failed after" in line or "cannot open" in line
                          or "oracle" in line), lines[1] if len(lines) > 1 else "")
            # The oracle's own words: what a rare, timing-dependent finding needs to be
            # diagnosed without a rerun.
            oracle = [line for line in lines
                      if line.startswith(("oracle:", "replay:")) or "violation" in line][:5]
            findings.append({"property": name, "seed": seed, "rules": rules[:8],
                             "detail": first[:200], "oracle": [o[:400] for o in oracle]})
        if not findings:
            findings.append({"property": "(the run)", "seed": seed, "rules": [],
                             "detail": f"exit {code}: " + output.strip()[-300:]})
    return {"seed": seed, "sequences": sequences, "seconds": round(seconds, 1), "rss_kib": rss,
            "exit": code, "findings": findings}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--minutes", type=float, required=True)
    p.add_argument("--provider")
    p.add_argument("--seed-start", type=int, default=1)
    p.add_argument("--tests", type=int, default=40, help="sequences per property and seed")
    p.add_argument("--run-timeout", type=float, default=1200)
    p.add_argument("--report")
    p.add_argument("--keep-caches", action="store_true",
                   help="read the memory available without dropping the page cache first")
    args = p.parse_args()
    args.exe = os.path.join(args.build, "conformance", "properties", "conformance_properties")
    if not args.provider:
        args.provider = "lib:" + os.path.join(args.build, "adapters", "verbs",
                                              "libndkct_verbs_provider.so")
    drop = not args.keep_caches
    before = {"device": device_objects(), **settled_memory(drop)}
    started = time.monotonic()
    runs = []
    seed = args.seed_start
    # At least one run; then more while the time lasts (a run is not cut short).
    while not runs or time.monotonic() - started < args.minutes * 60:
        r = run_once(args, seed)
        # After each run: a trend over a long soak says more than its two ends.
        r["free_kib"] = settled_memory(drop)["free_kib"]
        runs.append(r)
        state = "ok" if not r["findings"] else f"{len(r['findings'])} finding(s)"
        print(f"  seed {seed:4}: {r['sequences']:5} sequences in {r['seconds']:6.1f} s, "
              f"peak RSS {r['rss_kib']} KiB, then {r['free_kib']} KiB free: "
              f"{state}", flush=True)
        for f in r["findings"]:
            print(f"      FINDING {f['property']} seed {f['seed']}: {', '.join(f['rules'])} "
                  f"{f['detail']}", flush=True)
            for line in f.get("oracle", []):
                print(f"        {line}", flush=True)
        seed += 1
    time.sleep(2)  # the last run's kernel objects are released asynchronously
    after = {"device": device_objects(), **settled_memory(drop)}
    sequences = sum(r["sequences"] for r in runs)
    findings = [f for r in runs for f in r["findings"]]
    rss = [r["rss_kib"] for r in runs if r["rss_kib"]]
    grew = []
    if after["device"] != before["device"]:
        grew.append(f"device objects {before['device']} -> {after['device']}")
    # Memory the kernel keeps after every run's process is gone (pinned pages, queues), less
    # what this script's own heap grew by: more than 16 MiB is growth. Free means MemAvailable
    # plus the per-CPU free lists: MemAvailable alone fell by up to 48 MiB over clean runs in
    # the rxe guest, and the per-CPU lists held all but 2-6 MiB of it (a 3-run soak: +1.3 MiB).
    own = after["soak_rss_kib"] - before["soak_rss_kib"]
    lost = before["free_kib"] - after["free_kib"] - max(own, 0)
    memory = (f"free memory {before['free_kib']} -> {after['free_kib']} KiB (MemAvailable "
              f"{before['mem_available_kib']} -> {after['mem_available_kib']}, per-CPU lists "
              f"{before['per_cpu_free_kib']} -> {after['per_cpu_free_kib']}; "
              f"{'caches dropped' if after['caches_dropped'] else 'caches kept'}"
              f"{'' if after['settled'] else ', still moving after 20 s'}; the soak's own RSS "
              f"{before['soak_rss_kib']} -> {after['soak_rss_kib']} KiB): {lost / 1024:+.1f} MiB held")
    if lost > 16 * 1024:
        grew.append(memory)
    elapsed = time.monotonic() - started
    print(f"soak {args.provider}: {len(runs)} runs (seeds {args.seed_start}..{seed - 1}), "
          f"{sequences} sequences in {elapsed:.0f} s ({sequences / max(elapsed, 1e-9):.1f}/s), "
          f"{len(findings)} findings; peak RSS per run {min(rss, default=0)}..{max(rss, default=0)}"
          f" KiB (first {rss[0] if rss else 0}, last {rss[-1] if rss else 0}); device objects "
          f"{before['device'] or '-'} -> {after['device'] or '-'}; {memory}"
          + (f"; GREW: {'; '.join(grew)}" if grew else "; no growth"))
    if args.report:
        with open(args.report, "w") as f:
            json.dump({"provider": args.provider, "runs": runs, "before": before, "after": after,
                       "sequences": sequences, "seconds": round(elapsed, 1), "grew": grew}, f,
                      indent=1)
    return 1 if findings or grew else 0


if __name__ == "__main__":
    sys.exit(main())
