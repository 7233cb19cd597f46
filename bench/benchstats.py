"""The Python side of the benchmark convention (bench/README.md, "Convention").

Same statistics and the same one-line JSON record as bench/include/ndkct/bench/stats.hpp:
`bootstrap_median(rounds)` gives (value, low, high) over the rounds, `emit(...)` prints the
`ndkct-bench: {...}` line that `./ndkct bench` collects. Standard library only.
"""

import json
import random
import statistics
import sys

SETTLED_WITHIN = 0.03


def bootstrap(rounds, statistic=statistics.median, resamples=2000, seed=0x9E3779B9):
    """(value, low, high): the statistic and its 95 % percentile-bootstrap interval."""
    value = statistic(rounds)
    if len(rounds) < 2:
        return value, value, value
    rng = random.Random(seed)
    stats = sorted(statistic(rng.choices(rounds, k=len(rounds))) for _ in range(resamples))
    return value, stats[int(0.025 * (resamples - 1) + 0.5)], stats[int(0.975 * (resamples - 1) + 0.5)]


def bootstrap_median(rounds, resamples=2000):
    return bootstrap(rounds, statistics.median, resamples)


def settled(value, low, high):
    return value != 0 and (value - low) <= SETTLED_WITHIN * abs(value) and (high - value) <= SETTLED_WITHIN * abs(value)


def emit(bench, name, value, unit, interval=None, rounds=None, better=None, target=None, note=None,
         out=sys.stdout):
    """Prints one figure as `ndkct-bench: {json}`; interval = (low, high) over `rounds` rounds."""
    record = {"bench": bench, "name": name, "value": value, "unit": unit}
    if interval is not None:
        low, high = interval
        record.update(ci_low=low, ci_high=high, rounds=rounds, settled=settled(value, low, high))
    if better:
        record["better"] = better
    if target:
        record["target"] = target
    if note:
        record["note"] = note
    out.write("ndkct-bench: " + json.dumps(record, sort_keys=False) + "\n")
    out.flush()
