#!/usr/bin/python3
"""Host checks of the two-node machinery (no RDMA device, no guest; ctest conformance.twonode.*).

passthrough BUILD   The split provider is exact for a test that never connects: the directed
                    suite against the reference provider with NDKCT_PEER naming a port nobody
                    listens on passes every such test; every other test fails, and names the
                    unreachable peer (a clear verdict, the run goes on).
bad-input BUILD     A malformed NDKCT_PEER is refused naming it; the agent answers a hello of
                    another protocol version with the reason, ends a session that sends garbage
                    with a message and exit status 1 (never a crash), and opens the reference
                    provider for a well-formed hello.
"""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fail(message):
    print(f"twonode_check: FAIL {message}")
    sys.exit(1)


def tests_of(json_path):
    with open(json_path, encoding="utf-8") as f:
        doc = json.load(f)
    out = {}
    for suite in doc.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = f"{suite['name']}.{t['name']}"
            failures = " ".join(x.get("failure", "") for x in t.get("failures", []))
            out[name] = ("skipped" if t.get("result") == "SKIPPED" else
                         "failed" if failures else "passed", failures)
    return out


def passthrough(build):
    exe = os.path.join(build, "conformance", "tests", "conformance_tests")
    with tempfile.TemporaryDirectory() as work:
        plain_json, split_json = os.path.join(work, "plain.json"), os.path.join(work, "split.json")
        env = dict(os.environ)
        env.pop("NDKCT_PEER", None)
        subprocess.run([exe, "--provider=model:seed=1", f"--gtest_output=json:{plain_json}"],
                       env=env, capture_output=True, timeout=600)
        env["NDKCT_PEER"] = f"127.0.0.1:{free_port()}"
        env["NDKCT_PEER_WAIT"] = "0"
        subprocess.run([exe, "--provider=model:seed=1", f"--gtest_output=json:{split_json}"],
                       env=env, capture_output=True, timeout=600)
        plain, split = tests_of(plain_json), tests_of(split_json)
    if set(plain) != set(split):
        fail("the split run ran other tests than the plain one")
    alone, crossed, bad = 0, 0, []
    for name, (verdict, failures) in sorted(split.items()):
        if verdict == "failed":
            # The test's own session names the lost peer; one the test opened itself (a second
            # session) reports the connect the split refused.
            if "node B" not in failures and "STATUS_HOST_UNREACHABLE" not in failures:
                bad.append(f"{name}: failed without naming node B: {failures[:300]}")
            crossed += 1
        else:
            if verdict != plain[name][0]:
                bad.append(f"{name}: {verdict} split, {plain[name][0]} alone")
            alone += 1
    print(f"twonode_check: {len(split)} tests; {alone} never connect and ran as on one node, "
          f"{crossed} connect and failed naming the unreachable peer")
    if bad:
        fail("\n  ".join([f"{len(bad)} tests did not run as on one node:"] + bad[:20]))
    if alone < 50 or crossed < 100:
        fail(f"unexpected split of the suite ({alone} alone, {crossed} connecting)")
    print("twonode_check: PASS passthrough")


def frame(kind, code, ident, payload):
    return struct.pack("<IHHQ", len(payload), kind, code, ident) + payload


def text(s):
    b = s.encode()
    return struct.pack("<I", len(b)) + b


def hello(version, spec):
    return (struct.pack("<IHQHH", 0x4E324B4E, version, 2048, 2, 1) + text("") + text("") +
            text(spec) + struct.pack("<Q", 1))


def read_frame(sock):
    head = b""
    while len(head) < 16:
        chunk = sock.recv(16 - len(head))
        if not chunk:
            return None
        head += chunk
    size, kind, code, ident = struct.unpack("<IHHQ", head)
    body = b""
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            return None
        body += chunk
    return kind, code, ident, body


def agent(build, *extra):
    port = free_port()
    exe = os.path.join(build, "conformance", "twonode", "ndkct-agent")
    p = subprocess.Popen([exe, "--listen", str(port), "--once", *extra],
                         stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        try:
            return p, socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            time.sleep(0.05)
    p.kill()
    fail("the agent did not listen")


def reply_status(body):
    if body[0] != 1:
        return None, body[1:].decode(errors="replace")
    status = struct.unpack("<i", body[1:5])[0] & 0xFFFFFFFF
    n = struct.unpack("<I", body[5:9])[0]
    message = body[9:9 + n].decode(errors="replace")
    rest = body[9 + n:]
    name = ""
    if len(rest) >= 4:
        m = struct.unpack("<I", rest[:4])[0]
        name = rest[4:4 + m].decode()
    return status, message, name


def bad_input(build):
    exe = os.path.join(build, "conformance", "tests", "conformance_tests")
    env = dict(os.environ, NDKCT_PEER="no-port-here")
    done = subprocess.run([exe, "--provider=model", "--gtest_filter=*DataPath.SendFills*"],
                          env=env, capture_output=True, text=True, timeout=120)
    if done.returncode == 0 or "NDKCT_PEER" not in done.stdout + done.stderr:
        fail("a malformed NDKCT_PEER was not refused naming it")
    print("twonode_check: PASS a malformed NDKCT_PEER is refused naming it")

    p, s = agent(build)
    s.sendall(frame(1, 1, 1, hello(99, "model")))
    r = read_frame(s)
    if not r or r[0] != 2:
        fail("no reply to a hello of another protocol version")
    status, message = reply_status(r[3])[:2]
    if status == 0 or "protocol version 99" not in message:
        fail(f"the agent accepted protocol version 99 ({status:#x}: {message})")
    s.close()
    p.wait(timeout=30)
    print(f"twonode_check: PASS another protocol version is refused: {message}")

    p, s = agent(build)
    s.sendall(b"\xff" * 64)
    s.close()
    code = p.wait(timeout=30)
    err = p.stderr.read()
    if code != 1 or "ndkct-agent:" not in err:
        fail(f"garbage on the side channel: exit status {code}, stderr {err!r}")
    print(f"twonode_check: PASS garbage ends the session with a message: {err.strip()}")

    p, s = agent(build)
    s.sendall(frame(1, 1, 7, hello(1, "model:seed=3")))
    r = read_frame(s)
    status, message, name = reply_status(r[3])
    if status != 0 or name != "ndkct-model":
        fail(f"a well-formed hello did not open the reference provider ({status:#x} {message})")
    s.close()
    p.wait(timeout=30)
    print("twonode_check: PASS a well-formed hello opens the provider on node B")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("passthrough", "bad-input"):
        print(__doc__)
        sys.exit(2)
    {"passthrough": passthrough, "bad-input": bad_input}[sys.argv[1]](sys.argv[2])
