"""The call-in-flight record a test process leaves (--ndkct_flight=FILE, written by the harness:
conformance/harness/include/ndkct/conformance/in_flight.hpp), read after the process died.

It says, without anything the provider printed: which test ran, which NDK call each thread was
in (function, object, the call with its arguments, the rules it is judged by, since when) or
which callback the harness awaited; and after a crash, the signal, the faulting address, the
crashing thread and its top frames. The frames decide whose crash it was: the first frame in
the provider library makes it the provider's; the first in the test executable (ndkct's own
code) makes it ndkct's bug, which no waiver covers.
"""
import os
import re
import shutil
import subprocess

HEADER = re.compile(rb"^ndkct-flight/1 slots=(\d+) slot_size=(\d+) header=(\d+)")
TEST_AT, CRASH_AT = 256, 2048


def _text(block):
    return block.split(b"\0", 1)[0].decode("utf-8", "replace")


def _fields(text):
    out = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq:
            out.setdefault(key, value)
    return out


def read(path):
    """The record as a dict, or None when there is none (the process never mapped it)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    m = HEADER.match(data)
    if not m:
        return None
    slots, slot_size, header = (int(x) for x in m.groups())
    head = _fields(_text(data[TEST_AT:CRASH_AT]))
    crash_text = _text(data[CRASH_AT:header])
    record = {"test": head.get("test", ""), "test_thread": head.get("test_thread", ""),
              "crash": None, "slots": []}
    if crash_text.startswith("crash=1"):
        fields = _fields(crash_text)
        record["crash"] = {
            "signal": fields.get("signal_name") or f"signal {fields.get('signal', '?')}",
            "address": fields.get("address", ""), "thread": fields.get("thread", ""),
            "code": int(fields.get("code", "0") or 0),
            "frames": [line[6:] for line in crash_text.splitlines() if line.startswith("frame=")],
            "complete": "end=1" in crash_text}
    for i in range(slots):
        block = data[header + i * slot_size: header + (i + 1) * slot_size]
        if not block or block[0] not in b"Sw":
            continue
        slot = _fields(_text(block[1:]))
        slot["torn"] = block[:1] == b"w"
        record["slots"].append(slot)
    return record


def in_flight(record):
    """The provider calls running (or callbacks awaited) when the process ended: test thread first."""
    if not record:
        return []
    busy = [s for s in record["slots"] if s.get("state") in ("call", "wait")]
    busy.sort(key=lambda s: s.get("thread") != record["test_thread"])
    return busy


def describe_slot(slot, record, now_ns=None):
    who = ("the test's thread" if slot.get("thread") == record["test_thread"]
           else f"thread {slot.get('thread')} (a provider thread, in a callback)")
    if slot.get("state") == "wait":
        text = f"waiting for the completion callback of {slot.get('function')} on {who}"
    else:
        call = slot.get("call") or slot.get("function")
        text = f"in {call}" + (f" on {slot['object']}" if slot.get("object") else "") + f", on {who}"
    if slot.get("torn"):
        text += " (the record was being rewritten)"
    return text


# ---- frames ----

def short_name(name):
    """A C++ function name without its parameter list: "ns::Session::write(...)"."""
    name = name.split(" [clone ")[0]
    depth = 0
    for i, c in enumerate(name):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0 and not name.startswith("(anonymous namespace)", i):
            return name[:i] + "(...)" if name.endswith(")") else name
    return name


def _symbolize(module, offset):
    """'function (file:line)' for a frame when addr2line can tell (binutils), else ''."""
    tool = shutil.which("addr2line")
    if not tool or not module or not os.path.exists(module):
        return ""
    try:
        done = subprocess.run([tool, "-f", "-C", "-e", module, offset], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = done.stdout.splitlines()
    if len(lines) < 2 or lines[0] == "??":
        return ""
    where = os.path.basename(lines[1]) if not lines[1].startswith("??") else ""
    where = where.replace(":?", "").removesuffix(" (discriminator")
    return short_name(lines[0])[:140] + (f" ({where})" if where else "")


def parse_frame(text):
    """'/path/lib.so +0x1234 sym+0x10' -> (module, offset, symbol)."""
    parts = text.split(" ")
    if len(parts) >= 2 and parts[1].startswith("+"):
        return parts[0], parts[1][1:], " ".join(parts[2:])
    return "", "", text


def classify(frames, provider_library, executable):
    """Whose crash: 'provider' (the first frame that is the provider's or ndkct's is the
    provider's), 'ndkct', or 'unknown'; with the deciding frame's index."""
    provider = os.path.realpath(provider_library) if provider_library else None
    exe = os.path.realpath(executable)
    for i, frame in enumerate(frames):
        module = parse_frame(frame)[0]
        if not module:
            continue
        real = os.path.realpath(module)
        if provider and real == provider:
            return "provider", i
        if real == exe:
            return "ndkct", i
    return "unknown", -1


def show_frame(frame):
    module, offset, symbol = parse_frame(frame)
    name = _symbolize(module, offset) or symbol
    return f"{os.path.basename(module) or '?'} +{offset}" + (f" {name}" if name else "")


def deciding_frame(crash, provider_library, executable):
    """The first frame in the provider or in ndkct, shown; or None."""
    _, index = classify(crash["frames"], provider_library, executable)
    return show_frame(crash["frames"][index]) if index >= 0 else None


def crash_report(crash, provider_library, executable, top=6):
    """(culprit, lines): whose crash it was and its top frames, symbolized where possible."""
    culprit, _ = classify(crash["frames"], provider_library, executable)
    lines = ["  " + show_frame(frame) for frame in crash["frames"][:top]]
    if len(crash["frames"]) > top:
        lines.append(f"  ... {len(crash['frames']) - top} more")
    return culprit, lines
