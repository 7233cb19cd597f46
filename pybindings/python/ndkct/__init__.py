"""ndkct: NDKPI conformance from Python.

Open an adapter of any provider (the reference provider ``"model"``, a provider library
``"lib:PATH"``, or ``"verbs"`` on an RDMA device), make NDK objects, post work, and read the
oracle's verdict: which documented rules (by ID) the provider broke, if any::

    import ndkct
    with ndkct.open_adapter("model:seed=3") as adapter:
        pair = adapter.loopback_pair()
        ...
        assert adapter.verdict().ok

``open_adapter(..., capture=DIR)`` records every call into a trace (:class:`Trace`:
``adapter.trace`` once closed), which reads back field by field and is judged offline
(``trace.check()``), as ./ndkct check-trace judges a Windows driver's recording.

The low layer (handles and tuples) is ``ndkct._ndkct``; Hypothesis strategies and the
cross-check state machine are ``ndkct.strategies`` and ``ndkct.statemachine``.
"""

from ._ndkct import (  # noqa: F401  (re-exported)
    ADAPTER_INFO_SIZE, ADAPTER_INFO_V1_SIZE, PAGE_SIZE, Buffer, LogicalAddressMapping, MdlChain,
    OperationType, ProviderSpecError, Result, Rule, Status, Verdict, Violation, lam_size,
    nt_success, parse_provider, profile_names, rule, rules, status_name, verbs_provider_path)
from ._ndkct import (  # noqa: F401
    MR_FLAG_ALLOW_LOCAL_READ, MR_FLAG_ALLOW_LOCAL_WRITE, MR_FLAG_ALLOW_REMOTE_READ,
    MR_FLAG_ALLOW_REMOTE_WRITE, MR_FLAG_RDMA_READ_SINK, OP_FLAG_SILENT_SUCCESS,
    OP_FLAG_READ_FENCE, OP_FLAG_SEND_AND_SOLICIT_EVENT, OP_FLAG_ALLOW_REMOTE_READ,
    OP_FLAG_ALLOW_LOCAL_WRITE, OP_FLAG_ALLOW_REMOTE_WRITE, OP_FLAG_INLINE, OP_FLAG_RDMA_READ_SINK,
    OP_FLAG_RDMA_READ_LOCAL_INVALIDATE, OP_FLAG_DEFER, CQ_NOTIFY_ERRORS, CQ_NOTIFY_ANY,
    CQ_NOTIFY_SOLICITED, ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED,
    ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED, ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED,
    ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED, ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED,
    ADAPTER_FLAG_CQ_RESIZE_SUPPORTED, ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED)
from .api import (  # noqa: F401
    Adapter, Address, CompletionQueue, ConnectionData, Connector, Listener, LoopbackPair,
    MemoryRegion, MemoryWindow, NdkObject, ProtectionDomain, QueuePair, SharedReceiveQueue, Sge,
    open_adapter, wait_for)
from .errors import NdkError, ViolationError  # noqa: F401
from .trace import Trace, TraceVerdict, traces  # noqa: F401
