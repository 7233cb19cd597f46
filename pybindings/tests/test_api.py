"""The ndkct API on the reference provider: statuses, memory, objects, errors, the data path.

Each test asserts real behaviour: bytes that landed, statuses, completions, the oracle's word.
"""

import json

import pytest

import ndkct
from ndkct import PAGE_SIZE, Status


def test_status_names_and_values():
    assert Status.STATUS_SUCCESS == 0
    assert Status.STATUS_PENDING == 0x103
    assert Status.STATUS_INVALID_PARAMETER == 0xC000000D - (1 << 32)  # NTSTATUS is signed
    assert ndkct.status_name(Status.STATUS_BUFFER_TOO_SMALL) == "STATUS_BUFFER_TOO_SMALL"
    assert ndkct.status_name(0x12345) == "0x00012345"


def test_bad_provider_specs_name_the_problem():
    with pytest.raises(ndkct.ProviderSpecError, match="unknown kind 'nic'"):
        ndkct.open_adapter("nic:0")
    with pytest.raises(ndkct.ProviderSpecError, match="seed 'x' is not a number"):
        ndkct.open_adapter("model:seed=x")
    with pytest.raises(ndkct.ProviderSpecError, match="/nowhere/libx.so"):
        ndkct.open_adapter("lib:/nowhere/libx.so")
    assert ndkct.parse_provider("model:seed=7")["seed"] == 7


def test_adapter_reports_its_identity_and_info(adapter):
    assert adapter.identity["name"] == "ndkct-model"
    assert adapter.info["frmr_page_count"] >= 16  # AI-02
    status, size, info = adapter.query_adapter_info(8)
    assert status == Status.STATUS_BUFFER_TOO_SMALL and size == ndkct.ADAPTER_INFO_SIZE  # AI-05
    assert adapter.verdict().ok


def test_buffers_read_write_and_slices(adapter):
    b = adapter.buffer(100)
    assert len(b) == PAGE_SIZE and b.is_zero()
    b[10:13] = b"abc"
    assert b.read(10, 3) == b"abc" and b[11] == ord("b")
    with pytest.raises(IndexError, match="outside the buffer"):
        b.read(PAGE_SIZE - 1, 2)
    with pytest.raises(ValueError, match="keeps its length"):
        b[0:2] = b"xyz"


def test_buffers_die_with_their_adapter():
    a = ndkct.open_adapter("model")
    b = a.buffer(PAGE_SIZE)
    a.close()
    assert not b.alive
    with pytest.raises(ValueError, match="adapter was closed"):
        b.read()


def test_closed_and_foreign_objects_are_python_errors(adapter):
    pd = adapter.create_pd()
    cq = adapter.create_cq(16)
    with pytest.raises(TypeError, match="expected PD, got CQ"):
        adapter.session.create_mr(cq.handle)
    pd.close()
    assert not pd.is_open
    with pytest.raises(ValueError, match="not an open NDK object"):
        pd.create_mr()
    with ndkct.open_adapter("model") as other:
        with pytest.raises(ValueError, match="not an open NDK object"):
            other.session.create_mr(cq.handle + 1000)


def test_malformed_arguments_are_named(adapter):
    pair = adapter.loopback_pair()
    with pytest.raises(TypeError, match="an SGL is an Sge .* got 'hello'"):
        pair.a.write("hello", 0, 0)
    with pytest.raises(TypeError, match="an SGL is an Sge"):
        pair.a.send([(1, 2)])
    with pytest.raises(ndkct.ProviderSpecError, match="unknown kind 'modle'") as caught:
        ndkct.open_adapter("modle:seed=3")
    # pytest shows the half-built adapter's repr in the traceback: it must not raise itself
    frame = caught.traceback[-1].frame
    assert "not opened" in repr(frame.f_locals["self"])


def test_context_managers_close_objects(adapter):
    with adapter.create_pd() as pd:
        with pd.create_mr() as mr:
            assert mr.is_open
        assert not mr.is_open
    assert not pd.is_open
    assert adapter.verdict().ok


def test_a_refused_create_raises_ndk_error_with_the_status(adapter):
    pair = adapter.loopback_pair()
    limit = adapter.info["max_initiator_queue_depth"]
    with pytest.raises(ndkct.NdkError) as caught:
        pair.pd.create_qp(pair.cq, initiator_depth=limit + 1)
    assert caught.value.call == "NdkCreateQp"
    assert caught.value.status_name.startswith("STATUS_")
    assert caught.value.rules == []  # refusing is what the docs ask (CQP-LIM-*)
    assert adapter.verdict().ok


def test_write_lands_in_the_peer_region(adapter):
    pair = adapter.loopback_pair()
    source = adapter.buffer(2 * PAGE_SIZE)
    source.fill(seed=3)
    target = adapter.buffer(2 * PAGE_SIZE)
    src = pair.pd.register(source)
    dst = pair.pd.register(target, ndkct.MR_FLAG_ALLOW_REMOTE_WRITE)
    assert pair.a.write(src.sge(5, 5000), dst.address + 100, dst.remote_token,
                        context=77) == Status.STATUS_SUCCESS
    [result] = pair.cq.drain(1)
    assert result.status == Status.STATUS_SUCCESS and result.request_context == 77
    assert target[100:5100] == source[5:5005]
    assert target.is_zero(0, 100) and target.is_zero(5100)
    assert adapter.verdict().ok


def test_send_fills_the_posted_receive(adapter):
    pair = adapter.loopback_pair()
    source, sink = adapter.buffer(PAGE_SIZE), adapter.buffer(PAGE_SIZE)
    source.fill(seed=9)
    src = pair.pd.register(source)
    snk = pair.pd.register(sink, ndkct.MR_FLAG_ALLOW_LOCAL_WRITE)
    pair.b.receive(snk.sge(), context=1)
    pair.a.send(src.sge(0, 300), context=2)
    results = {r.request_context: r for r in pair.cq.drain(2)}
    assert results[1].bytes_transferred == 300 and results[1].type == ndkct.OperationType.RECEIVE
    assert sink[0:300] == source[0:300]
    assert adapter.verdict().ok


def test_lam_too_small_says_the_size_needed(adapter):
    memory = adapter.buffer(3 * PAGE_SIZE)
    lam = adapter.build_lam(memory, buffer_size=ndkct.lam_size(1))
    assert lam.final_status == Status.STATUS_BUFFER_TOO_SMALL
    assert lam.size_out == ndkct.lam_size(3)  # LAM-SIZE-04
    lam = adapter.build_lam(memory, 100, 2 * PAGE_SIZE)
    assert lam.ok and lam.fbo == 100 and len(lam.pages) == 3
    assert adapter.verdict().ok


def test_broken_mdl_chain_is_refused(adapter):
    pd = adapter.create_pd()
    memory = adapter.buffer(2 * PAGE_SIZE)
    mr = pd.create_mr()
    status = mr.register(memory.with_hole(0, 100, 8, 200), check=False)
    assert not ndkct.nt_success(status)  # RMR-MDL-01
    with pytest.raises(ndkct.NdkError, match="NdkRegisterMr failed with STATUS_"):
        mr.register(memory.with_hole(0, 100, 8, 200))
    assert adapter.verdict().ok


def test_rules_come_from_the_catalog():
    r = ndkct.rule("FR-ALIGN-01")
    assert r.function == "NdkFastRegister" and r.summary
    with pytest.raises(KeyError):
        ndkct.rule("NO-SUCH-01")
    assert len(ndkct.rules()) > 500
    assert "default" in ndkct.profile_names()


def test_close_of_an_antecedent_pends_until_its_successor_is_closed(adapter):
    pd = adapter.create_pd()
    mr = pd.create_mr()
    assert pd.close_async() == Status.STATUS_PENDING  # CLOSE-02: its MR is open
    assert pd.is_open
    assert mr.close() == Status.STATUS_SUCCESS
    assert pd.close() == Status.STATUS_SUCCESS  # the pending close awaited, not issued again
    assert not pd.is_open
    assert adapter.verdict().ok, adapter.verdict()


def test_connection_data_carries_private_data_and_read_limits(adapter):
    pair = adapter.loopback_pair()
    qa, qb = pair.pd.create_qp(pair.cq), pair.pd.create_qp(pair.cq)
    listener, active = adapter.create_listener(), adapter.create_connector()
    port = adapter.next_port()
    listener.listen("127.0.0.1", port)
    active.connect_async(qa, "127.0.0.1", port, ird=16, ord=16, private_data=b"hello")
    passive = listener.wait_connect_event()
    data = passive.connection_data(4)  # CONN-PD-03: 4 of the 5 bytes, nothing past them
    assert data.status == Status.STATUS_BUFFER_TOO_SMALL and data.length == 5
    assert data.data == b"hell"
    passive.accept_async(qb, ird=1, ord=2)
    assert active.wait_connect() == Status.STATUS_SUCCESS
    limits = active.connection_data(with_buffer=False).read_limits
    assert limits[0] <= 2 and limits[1] <= 1  # CONN-RL-02: lowered to the peer's
    active.complete_connect()
    passive.wait_accept()
    assert adapter.verdict().ok, adapter.verdict()


def test_calls_inside_a_notification_callback(adapter):
    pair = adapter.loopback_pair()
    source, sink = adapter.buffer(PAGE_SIZE), adapter.buffer(PAGE_SIZE)
    src = pair.pd.register(source)
    snk = pair.pd.register(sink, ndkct.MR_FLAG_ALLOW_LOCAL_WRITE)
    mr = pair.pd.create_mr()
    adapter.hook_events(pair.cq, calls=[("register_mr", mr, sink.describe(0, PAGE_SIZE), 0),
                                        ("create_qp", pair.pd, pair.cq)])
    pair.b.receive(snk.sge(0, 64))
    pair.cq.arm()
    pair.a.send(src.sge(0, 8))
    adapter.release_hook(pair.cq)
    assert adapter.wait_hook(pair.cq)  # the notification came and the hook ran
    finished = adapter.finish_deferred()  # what pended there, awaited here
    assert len(pair.cq.drain(2)) == 2
    made = adapter.unhook_events(pair.cq)
    assert [call for call, *_ in made] == ["NdkRegisterMr", "NdkCreateQp"]
    assert mr.local_token != 0  # registered from inside the callback
    qps = [o for *_, o in made + finished if isinstance(o, ndkct.QueuePair)]
    assert len(qps) == 1 and qps[0].is_open  # created inside (inline or pended)
    assert adapter.verdict().ok, adapter.verdict()


def test_the_consumer_may_overwrite_dispatch(adapter):
    pair = adapter.loopback_pair()
    adapter.overwrite_dispatch()  # GEN-CREATE-05: every later call goes through its tables
    b = adapter.buffer(PAGE_SIZE)
    mr = pair.pd.register(b, ndkct.MR_FLAG_ALLOW_REMOTE_WRITE)
    assert mr.remote_token != 0
    assert adapter.session.dispatch_overwritten
    assert adapter.verdict().ok, adapter.verdict()


def test_a_pair_in_error_can_be_replaced_on_its_pd(adapter):
    pair = adapter.loopback_pair()
    pair.b.receive(pair.pd.register(adapter.buffer(PAGE_SIZE),
                                    ndkct.MR_FLAG_ALLOW_LOCAL_WRITE).sge(0, 64))
    pair.b.flush()
    assert pair.cq.drain(1)[0].status == Status.STATUS_CANCELLED
    a, b = pair.pd.create_qp(pair.cq), pair.pd.create_qp(pair.cq)
    again = adapter.connect_pair(pair.pd, pair.cq, a, b)
    source = adapter.buffer(PAGE_SIZE)
    target = adapter.buffer(PAGE_SIZE)
    source.fill(3)
    src, dst = pair.pd.register(source), pair.pd.register(target, ndkct.MR_FLAG_ALLOW_REMOTE_WRITE)
    again.a.write(src.sge(0, 100), dst.address, dst.remote_token)
    assert again.cq.drain(1)[0].status == Status.STATUS_SUCCESS
    assert target[0:100] == source[0:100]
    assert adapter.verdict().ok, adapter.verdict()


@pytest.mark.parametrize("order", ["in_order", "relaxed"])
def test_reference_completion_order_knob(tmp_path, order):
    """reference_provider.completion_order (AMB-35): relaxed makes the reference report one
    queue's entries out of posting order within a batch (seeded), so a consumer that assumes
    the order shows it; in_order keeps posting order. Judged under the matching reading."""
    profile = tmp_path / f"{order}.json"
    profile.write_text(json.dumps({
        "name": f"order-{order}", "description": "AMB-35 both ways",
        "policies": {"completion_order": order},
        "reference_provider": {"completion_order": order}}))
    with ndkct.open_adapter("model:seed=1", profile=str(profile)) as adapter:
        pair = adapter.loopback_pair()
        source, target = adapter.buffer(PAGE_SIZE), adapter.buffer(PAGE_SIZE)
        src = pair.pd.register(source)
        dst = pair.pd.register(target, ndkct.MR_FLAG_ALLOW_REMOTE_WRITE)
        contexts = list(range(1, 33))
        for c in contexts:
            assert pair.a.write(src.sge(0, 64), dst.address + 64 * c, dst.remote_token,
                                context=c) == Status.STATUS_SUCCESS
        seen = [r.request_context for r in pair.cq.drain(len(contexts), batch=32)]
        assert sorted(seen) == contexts  # every entry once, whatever the order
        assert (seen == contexts) == (order == "in_order"), seen
        assert adapter.verdict().ok, adapter.verdict()
