"""Traces (spec/TRACE.md): what an adapter recorded, read back and judged offline.

A trace is every NDK call and callback at the consumer/provider boundary, as the capture
library (capture/) wrote it: in a Windows kernel test driver, under ``./ndkct run --capture``,
or from Python with ``open_adapter(..., capture=DIR)``::

    with ndkct.open_adapter("model", capture=tmp_path) as adapter:
        ...
    trace = adapter.trace
    print(trace.dump())                     # as ./ndkct trace dump prints it
    writes = [r for r in trace.records if r["name"] == "NdkWrite"]
    assert trace.check().ok                 # the oracle over the recording
"""
import os

from . import _ndkct


class Finding:
    """One broken rule (``violation``: a :class:`~ndkct.Violation`) and the record that shows
    it (``record``: its number, ``offset``: where it starts in the file)."""

    def __init__(self, raw):
        self.violation = raw["violation"]
        self.record = raw["record"]
        self.offset = raw["offset"]

    @property
    def rules(self):
        return list(self.violation.rules)

    @property
    def warning(self):
        return self.violation.warning

    def __str__(self):
        return f"record #{self.record}: {self.violation.describe()}"

    __repr__ = __str__


class TraceVerdict:
    """The oracle's findings over a trace (what ./ndkct check-trace reports for it). Truthy
    (``ok``) when no finding is a failure and judging reached the trace's end."""

    def __init__(self, raw):
        self.findings = [Finding(f) for f in raw["findings"]]
        self.records = raw["records"]
        self.calls = raw["calls"]
        self.callbacks = raw["callbacks"]
        self.completions = raw["completions"]
        self.unjudged_landings = raw["unjudged_landings"]
        self.unjudged_posts = raw["unjudged_posts"]
        self.ended = raw["ended"]
        self.stopped = raw["stopped"]  # why judging stopped early, or None
        self.stopped_record = raw["stopped_record"]
        self.notes = list(raw["notes"])

    @property
    def failures(self):
        return [f for f in self.findings if not f.warning]

    @property
    def rules(self):
        """The rule IDs the failures name, in order, each once."""
        seen = []
        for f in self.failures:
            seen += [r for r in f.rules if r not in seen]
        return seen

    @property
    def ok(self):
        return not self.failures and self.stopped is None

    def __bool__(self):
        return self.ok

    def __str__(self):
        lines = [str(f) for f in self.findings]
        if self.stopped:
            lines.append(f"stopped at record #{self.stopped_record}: {self.stopped}")
        return "\n".join(lines) or f"clean ({self.calls} calls, {self.callbacks} callbacks)"


class Trace:
    """A trace file. ``header``: its header, readably; ``records``: every record as a dict of
    its fields (``index``, ``offset``, ``type``: ``"call"``, ``"callback"`` or ``"meta"``,
    ``name`` such as ``"NdkWrite"``, ``thread``, ``seq``, ``fields``: the arguments and outcome
    by the format's names; ``line``: its dump line);
    ``problem``: where and why reading stopped, for a damaged file (None when whole)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        open(self.path, "rb").close()  # a missing or unreadable file: Python's own OSError
        raw = _ndkct.read_trace(self.path)
        self.header = raw["header"]
        self.records = list(raw["records"])
        self.problem = raw["problem"]
        if self.header is None and self.problem:
            raise ValueError(f"{self.path}: not a trace: {self.problem}")

    def calls(self, name=None):
        """The call records (``name``: only those of one NDK function, e.g. ``"NdkWrite"``)."""
        return [r for r in self.records
                if r["type"] == "call" and (name is None or r["name"] == name)]

    def dump(self):
        """The trace as ./ndkct trace dump prints it."""
        lines = [self.header] + [r["line"] for r in self.records]
        if self.problem:
            lines.append(f"stopped: {self.problem}")
        return "\n".join(lines)

    def check(self, profile=""):
        """The oracle over the recording (:class:`TraceVerdict`), by ``profile`` (default: the
        one the trace names)."""
        return TraceVerdict(_ndkct.check_trace(self.path, profile))

    def __len__(self):
        return len(self.records)

    def __repr__(self):
        return f"<Trace {self.path}: {len(self.records)} records>"


def traces(folder):
    """Every trace in a folder (``*.ndktrace``), by name."""
    folder = os.fspath(folder)
    return [Trace(os.path.join(folder, n)) for n in sorted(os.listdir(folder))
            if n.endswith(".ndktrace")]
