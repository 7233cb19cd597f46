"""Traces from Python (ndkct.trace): an adapter records its calls with capture=DIR, and the
recording reads back with every call's fields and is judged offline as ./ndkct check-trace
judges it: clean for the reference provider, the fault's rule and the record that shows it for
a faulty one."""

import os

import pytest

import ndkct
from ndkct.trace import Trace, traces

from conftest import faulty_dir


def write_once(adapter, payload=b"traced bytes"):
    """One NdkWrite of `payload` over a loopback pair, waited for; the pair's CQ results."""
    pair = adapter.loopback_pair()
    source = adapter.buffer(ndkct.PAGE_SIZE)
    target = adapter.buffer(ndkct.PAGE_SIZE)
    source[0:len(payload)] = payload
    src = pair.pd.register(source, 0)
    dst = pair.pd.register(target, ndkct.MR_FLAG_ALLOW_REMOTE_WRITE)
    pair.a.write(src.sge(0, len(payload)), dst.address, dst.remote_token)
    results = pair.cq.drain(1)
    return results, target


def test_a_captured_write_reads_back_with_its_fields_and_checks_clean(tmp_path):
    with ndkct.open_adapter("model:seed=1", capture=tmp_path, label="a write") as adapter:
        results, target = write_once(adapter)
        assert results[0].status == ndkct.Status.STATUS_SUCCESS
        assert target[0:12] == b"traced bytes"
        with pytest.raises(RuntimeError, match="once the adapter is closed"):
            adapter.trace
    trace = adapter.trace
    assert os.path.basename(trace.path) == "a_write.ndktrace"
    assert trace.problem is None
    assert "label: a write" in trace.header
    writes = trace.calls("NdkWrite")
    assert len(writes) == 1
    fields = writes[0]["fields"]
    assert fields["status"] == 0 and len(fields["sgl"]) == 1 and fields["sgl"][0]["length"] == 12
    polls = [r for r in trace.calls("NdkGetCqResultsEx") + trace.calls("NdkGetCqResults")
             if r["fields"].get("results")]
    assert polls, "no NdkGetCqResults that returned the write's completion"
    assert "NdkWrite(" in trace.dump()
    verdict = trace.check()
    assert verdict.ok, str(verdict)
    assert verdict.calls == len(trace.calls()) and verdict.ended
    assert [t.path for t in traces(tmp_path)] == [trace.path]


def test_a_digest_limit_leaves_long_blocks_unread_and_the_verdict_says_so(tmp_path):
    with ndkct.open_adapter("model:seed=1", capture=tmp_path, label="limited",
                            capture_digest_limit=8) as adapter:
        write_once(adapter)  # 12 bytes: over the limit
    verdict = adapter.trace.check()
    assert verdict.ok, str(verdict)
    assert verdict.unjudged_posts == 1 and verdict.unjudged_landings == 1
    assert any("not judged where bytes landed" in n for n in verdict.notes)
    assert "not digested: 12 bytes, over the capture's digest limit" in adapter.trace.dump()
    assert "digest limit: 8 bytes" in adapter.trace.header
    for bad in (0, -1, 2**32, "64", True):
        with pytest.raises(ValueError, match="capture_digest_limit"):
            ndkct.open_adapter("model:seed=1", capture=tmp_path, capture_digest_limit=bad)
    with pytest.raises(ValueError, match="only with capture"):
        ndkct.open_adapter("model:seed=1", capture_digest_limit=64)


def test_a_wait_for_a_notification_given_up_on_is_in_the_trace(tmp_path):
    # The CQ was never armed: no notification is owed, so the word (an UNNOTIFIED record) is
    # judged clean live and offline alike.
    with ndkct.open_adapter("model:seed=1", capture=tmp_path, label="unnotified") as adapter:
        cq = adapter.create_cq(16)
        assert cq.expect_notification_delivered(0.25).ok
        for bad in (-1, float("nan"), 1e9):
            with pytest.raises(ValueError, match="waited must be"):
                cq.expect_notification_delivered(bad)
    assert "Unnotified cq 0x" in adapter.trace.dump()
    assert "waited_ms 250" in adapter.trace.dump()
    verdict = adapter.trace.check()
    assert verdict.ok, str(verdict)


def test_without_capture_there_is_no_trace(tmp_path):
    with ndkct.open_adapter("model:seed=1") as adapter:
        adapter.create_pd()
    assert adapter.trace is None


def test_a_faulty_providers_trace_names_its_rule_and_the_record(tmp_path):
    # write_reported_as_read: the write's completion says NdkOperationTypeRead (CQ-RES-03).
    library = os.path.join(faulty_dir(), "libndkct_faulty_write_reported_as_read.so")
    if not os.path.exists(library):
        pytest.skip("the faulty providers are not built (NDKCT_FAULTY_DIR)")
    with ndkct.open_adapter("lib:" + library, capture=tmp_path) as adapter:
        write_once(adapter)
        live = adapter.verdict()
    assert not live.ok
    verdict = adapter.trace.check()
    assert not verdict.ok
    assert set(verdict.rules) & {r for v in live.violations for r in v.rules}, \
        f"offline {verdict.rules}, live {[v.rules for v in live.violations]}"
    shown = adapter.trace.records[verdict.failures[0].record]
    assert shown["name"].startswith("NdkGetCqResults"), shown["line"]


def test_a_damaged_trace_says_where_it_stopped(tmp_path):
    with ndkct.open_adapter("model:seed=1", capture=tmp_path, label="whole") as adapter:
        write_once(adapter)
    whole = adapter.trace
    cut = tmp_path / "cut.ndktrace"
    data = open(whole.path, "rb").read()
    cut.write_bytes(data[:len(data) * 2 // 3])
    damaged = Trace(cut)
    assert damaged.problem and "offset" in damaged.problem
    # The records of the frames before the cut (none when the drain wrote one frame only:
    # a frame's records are handed out once its CRC is checked).
    assert len(damaged) < len(whole)
    verdict = damaged.check()
    assert verdict.stopped and not verdict.ok
    not_a_trace = tmp_path / "garbage.ndktrace"
    not_a_trace.write_bytes(b"this is not a trace at all")
    with pytest.raises(ValueError, match="not a trace"):
        Trace(not_a_trace)
    with pytest.raises(FileNotFoundError):
        Trace(tmp_path / "missing.ndktrace")
