"""Opening the provider before the run, the way every test will: first its identity (the library
loaded, no adapter: it chooses the NDKPI version), then one open with the run's profile
(identity, NDK_ADAPTER_INFO, profile). Each step runs the test executable in a child process
with the run's time limit and writes its JSON to a file (--ndkct_out), so a provider that prints
to stdout changes nothing; a provider that crashes or hangs while being opened is one line
naming the signal or the time limit and the call it was in (the call-in-flight record)."""
import json
import os
import signal
import subprocess

from . import InputError, flight


def _one_line(text):
    return " ".join(text.split())


def _in_flight_text(record):
    busy = flight.in_flight(record)
    return f"in {busy[0].get('call') or busy[0].get('function')}" if busy else "outside any call"


def run_mode(executable, provider_arg, mode, work, timeout, provider_library):
    """Runs `executable --ndkct_<mode>` and returns its JSON, or raises InputError."""
    out = os.path.join(work, f"{mode}.json")
    record_path = os.path.join(work, f"{mode}.flight")
    for old in (out, record_path):
        if os.path.exists(old):
            os.remove(old)
    args = [executable, f"--provider={provider_arg}", f"--ndkct_{mode}", f"--ndkct_out={out}",
            f"--ndkct_flight={record_path}"]
    what = "loaded" if mode == "identity" else "opened"
    try:
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as error:
        raise InputError(f"cannot run {executable}: {error.strerror}") from None
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        record = flight.read(record_path)
        raise InputError(f"the provider was not {what} within the time limit of {timeout:g} s "
                         f"(--timeout): it hung {_in_flight_text(record)}") from None
    err = err.decode("utf-8", "replace")
    if process.returncode < 0:
        try:
            name = signal.Signals(-process.returncode).name
        except ValueError:
            name = f"signal {-process.returncode}"
        record = flight.read(record_path)
        where = ""
        if record and record.get("crash"):
            crash = record["crash"]
            culprit, _ = flight.classify(crash["frames"], provider_library, executable)
            frame = flight.deciding_frame(crash, provider_library, executable)
            where = ((f" at address {crash['address']}" if crash.get("code", 0) > 0 else "")
                     + f", {_in_flight_text(record)}"
                     + (f"; in {frame}" if frame else "")
                     + (" (ndkct's own code: ndkct's bug)" if culprit == "ndkct" else ""))
        raise InputError(f"the provider crashed while being {what}: {name}{_one_line(where)}")
    if process.returncode != 0:
        problem = err.strip().splitlines()[-1] if err.strip() else ""
        problem = problem.removeprefix("ndkct: ") or f"exit status {process.returncode}"
        raise InputError(_one_line(problem))
    try:
        with open(out, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise InputError(f"the provider was {what} but gave no description ({error})") from None
