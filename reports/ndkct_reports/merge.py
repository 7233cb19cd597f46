"""Merging the shards of one run (`ndkct report merge DIR...`): a CI matrix runs `--shard i/N` on
N machines; their output folders merge into one result.json, junit.xml and report.html with one
gate. Shards of different runs (another provider, version, profile, seed, selection or ndkct),
overlapping shards (one shard twice, a test in two) and missing shards are refused, by name."""
import json
import os

from . import result as results

# What makes two shards parts of the same run (the provider's path may differ between
# machines; its identity may not).
SAME = (("provider identity", lambda r: {k: r["provider"]["identity"].get(k) for k in
                                         ("name", "version", "ndk_version", "vendor_id",
                                          "device_id")}),
        ("provider kind", lambda r: r["provider"]["kind"]),
        ("profile", lambda r: r["profile"]["name"]),
        ("NDKPI version", lambda r: r["ndk_version"]),
        ("seed", lambda r: r["seed"]),
        ("selection", lambda r: {k: r["selection"].get(k) for k in
                                 ("tests", "exclude_tests", "rules", "exclude_rules", "suites",
                                  "listed", "timeout_s")}),
        ("must-pass list", lambda r: os.path.basename(r["must_pass"]["list"])),
        ("topology", lambda r: (r.get("topology") or {"kind": "one-node"})["kind"]),
        ("ndkct version", lambda r: r["tool"].get("version")))


class MergeError(Exception):
    """A set of shards that cannot be merged: the message names the shard and the reason."""


def load(folder):
    path = folder if folder.endswith(".json") else os.path.join(folder, "result.json")
    try:
        with open(path, encoding="utf-8") as f:
            result = json.load(f)
    except OSError as error:
        raise MergeError(f"{path}: {error.strerror}") from None
    except ValueError as error:
        raise MergeError(f"{path}: not JSON ({error})") from None
    problems = results.validate(result)
    if problems:
        raise MergeError(f"{path}: not an ndkct result ({problems[0]})")
    return path, result


def shard_of(path, result):
    text = result["selection"].get("shard")
    if not text:
        return 1, 1
    index, count = (int(x) for x in text.split("/"))
    return index, count


def check(loaded):
    """Raises MergeError unless the shards are the disjoint, complete parts of one run."""
    if not loaded:
        raise MergeError("no shard to merge")
    first_path, first = loaded[0]
    for name, key in SAME:
        for path, r in loaded[1:]:
            if key(r) != key(first):
                raise MergeError(f"{path} is not a shard of the run of {first_path}: its {name} "
                                 f"differs ({key(r)} vs {key(first)})")
    counts = {shard_of(p, r)[1] for p, r in loaded}
    if len(counts) != 1:
        raise MergeError("the shards split the run differently: " + ", ".join(
            f"{p}: {r['selection'].get('shard') or 'no shard'}" for p, r in loaded))
    count = counts.pop()
    seen = {}
    for path, r in loaded:
        index = shard_of(path, r)[0]
        if index in seen:
            raise MergeError(f"shard {index}/{count} is given twice: {seen[index]} and {path}")
        seen[index] = path
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        raise MergeError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                         f"{'are' if len(missing) > 1 else 'is'} missing (given: "
                         + ", ".join(f"{shard_of(p, r)[0]}/{count}" for p, r in loaded) + ")")
    owner = {}
    for path, r in loaded:
        for t in r["tests"]:
            key = (t["kind"], t["id"] or t["test"])
            if key in owner:
                raise MergeError(f"the shards overlap: {key[1]} is in {owner[key]} and {path}")
            owner[key] = path
    return count


def merge_waivers(loaded):
    merged = {}
    for _, r in loaded:
        for w in r["waivers"]:
            m = merged.setdefault(w["where"], dict(w, matched=[], waived=[]))
            m["matched"] = sorted(set(m["matched"]) | set(w.get("matched", [])))
            m["waived"] = sorted(set(m["waived"]) | set(w.get("waived", [])))
    for w in merged.values():
        w["stale"] = bool(w["matched"]) and not w["waived"]
    return list(merged.values())


def merge(folders, catalog_rules, strict_waivers=False):
    """The merged result of the shards in `folders` (MergeError when they do not make one
    run)."""
    loaded = [load(f) for f in folders]
    count = check(loaded)
    loaded.sort(key=lambda pr: shard_of(*pr)[0])
    first = loaded[0][1]
    run = {k: v for k, v in first.items()
           if k not in ("rules", "tests", "counts", "gate", "finished", "complete", "stopped",
                        "waivers", "duration_s")}
    run["started"] = min(r["started"] for _, r in loaded)
    run["selection"] = dict(first["selection"], shard=None,
                            selected=sum(r["selection"]["selected"] for _, r in loaded))
    run["tool"] = dict(first["tool"], command="ndkct report merge " + " ".join(folders))
    run["merged"] = {"shards": count, "from": [p for p, _ in loaded]}
    tests = sorted((t for _, r in loaded for t in r["tests"]),
                   key=lambda t: (t["kind"], t["id"] or t["test"]))
    incomplete = [r.get("stopped") or "interrupted" for _, r in loaded if not r["complete"]]
    merged = results.finish(run, tests, merge_waivers(loaded), strict_waivers,
                            complete=not incomplete,
                            finished=max(r["finished"] for _, r in loaded),
                            catalog_rules=catalog_rules,
                            stopped=("a shard did not complete: " + incomplete[0])
                            if incomplete else None)
    merged["duration_s"] = max(r["duration_s"] for _, r in loaded)
    return merged
