"""--peer: the suite across two nodes (conformance/twonode).

`--peer two-guests` starts two Soft-RoCE guests on one link (adapters/rxe/two-guests): node B
runs `ndkct agent`, node A runs this runner with `--peer 10.78.0.2:PORT`. `--peer HOST:PORT`
uses an agent that already runs on another machine (`./ndkct agent --listen PORT` there). The
test executables then split the provider (NDKCT_PEER): every test runs on this node, and a test
that connects has its passive side on the peer. The report says which topology ran.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

from . import InputError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
AGENT = os.path.join("conformance", "twonode", "ndkct-agent")
GUEST_B = "10.78.0.2"  # adapters/rxe/two-guests: A is 10.78.0.1, B is 10.78.0.2
AGENT_PORT = 7000


class Topology:
    def __init__(self, kind, peer=None):
        self.kind = kind  # "two-guests" (start them) or "two-hosts" (an agent runs at peer)
        self.peer = peer

    def describe(self):
        """The report's topology record."""
        t = {"kind": self.kind, "nodes": 2, "peer": self.peer or ""}
        t["node_a"] = os.environ.get("NDKCT_RDMA_ADDR", "")
        if self.kind == "two-guests":
            t["link"] = ("two qemu guests (Soft-RoCE rxe0 each) on one virtio link, a qemu dgram "
                         "netdev on 127.0.0.1 of the host")
        return t


def parse(text, in_guest_kind=None):
    """--peer two-guests | HOST:PORT | [IPv6]:PORT."""
    if text == "two-guests":
        return Topology("two-guests")
    m = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})", text or "")
    if not m or not 0 < int(m.group(2)) < 65536:
        raise InputError(f"--peer {text}: use two-guests, HOST:PORT or [IPv6]:PORT (where "
                         f"`./ndkct agent --listen PORT` runs)")
    return Topology(in_guest_kind or "two-hosts", text)


def one_node():
    return {"kind": "one-node", "nodes": 1, "peer": ""}


def use(topology):
    """The environment of the test executables: the peer, and no loopback alias in the verbs
    provider (connections use the link's real addresses)."""
    os.environ["NDKCT_PEER"] = topology.peer
    os.environ["NDKCT_VERBS_LOOPBACK_ALIAS"] = "0"
    if topology.kind == "two-guests":
        # Two emulated guests on one emulated link, beside other work on two cores: 16 MiB take
        # seconds to cross. Completions and events may take four times longer to arrive.
        os.environ.setdefault("NDKCT_TIME_SCALE", "4")


def agent_path(build):
    path = os.path.join(build, AGENT)
    if not os.path.exists(path):
        raise InputError(f"{path} is missing: build first (./ndkct build)")
    return path


def replay_prefix(topology, build):
    """What a test's replay command starts with, so that it finds its peer again."""
    env = ["env", f"NDKCT_PEER={topology.peer}", "NDKCT_VERBS_LOOPBACK_ALIAS=0"]
    if topology.kind != "two-guests":
        return env
    peer = f"NDKCT_VERBS_LOOPBACK_ALIAS=0 exec {os.path.join(build, AGENT)} --listen {AGENT_PORT}"
    return [os.path.join(ROOT, "adapters", "rxe", "two-guests"), "--rw", build, "--peer", peer,
            "--"] + env


def run_in_two_guests(args, argv, say):
    """The whole run inside guest A, with the agent in guest B. Returns the exit status."""
    if not shutil.which("qemu-system-x86_64"):
        raise InputError("--peer two-guests needs qemu-system-x86_64 (Debian: qemu-system-x86; "
                         "see adapters/rxe/README.md)")
    build = os.path.abspath(args.build)
    agent = agent_path(build)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    # argv without --peer two-guests: guest A runs with the peer's address instead.
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--peer":
            skip = True
            continue
        if a.startswith("--peer="):
            continue
        rest.append(a)
    if not any(a == "--timeout" or a.startswith("--timeout=") for a in rest):
        # Property tests make thousands of calls, many on B through the side channel.
        rest += ["--timeout", "600"]
    inner = [sys.executable, os.path.join(ROOT, "conformance", "runner", "ndkct-run")] + rest + [
        "--in-guest", "--peer", f"{GUEST_B}:{AGENT_PORT}", "--topology-kind", "two-guests",
        "--out", out, "--build", build]
    peer_log = os.path.join(out, "logs", "peer-agent.log")
    os.makedirs(os.path.dirname(peer_log), exist_ok=True)
    peer = f"NDKCT_VERBS_LOOPBACK_ALIAS=0 exec {shlex.quote(agent)} --listen {AGENT_PORT}"
    command = [os.path.join(ROOT, "adapters", "rxe", "two-guests"), "--timeout",
               str(args.guest_timeout), "--rw", out, "--rw", build, "--cwd", os.getcwd(),
               "--peer-log", peer_log, "--peer", peer, "--"] + inner
    say("two nodes: starting two Soft-RoCE guests on one link (adapters/rxe/two-guests); node B "
        f"runs the agent (its log: {peer_log})")
    started = time.time()
    status = subprocess.call(command)
    if status == 125:
        raise InputError("the two Soft-RoCE guests could not be started (see the messages above; "
                         "adapters/rxe/README.md)")
    report = os.path.join(out, "result.json")
    if not (os.path.exists(report) and os.path.getmtime(report) >= started):
        say(f"the run in guest A ended with status {status} and no report")
        return status or 1
    return status
