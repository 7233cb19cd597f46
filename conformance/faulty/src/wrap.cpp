// The one place that wraps objects: the reference provider's tables copied, the create
// functions interposed so that every object is wrapped, and the fault's edits applied.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>

#include "faulty.hpp"
#include "wrap.hpp"

namespace ndkct::faulty {

namespace {

std::mutex g_mutex;
Tables g_real;     // the reference provider's tables, as they came
Tables g_base;     // g_real with the interposers below
Tables g_wrapped;  // g_base with the fault's edits: what the consumer's objects point to
const void* g_original[NdkObjectTypeMax] = {};  // the reference's table per object type
NDK_ADAPTER_INFO g_info{};

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "ndkct faulty provider %s: %s\n", kFault.name, what);
    std::abort();
}

// ---- Create functions: every object the reference makes is wrapped before it is handed out ----

// The consumer's CreateCompletion and its context, while the reference's creation pends.
struct CreateForward {
    NDK_FN_CREATE_COMPLETION* completion;
    void* context;
};

void created(void* context, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    CreateForward forward = *static_cast<CreateForward*>(context);
    delete static_cast<CreateForward*>(context);
    if (NT_SUCCESS(status) && object) wrap(object);
    forward.completion(forward.context, status, object);
}

// Calls the reference's create function (call(completion, context, out)) with the forwarding
// completion; wraps the object it returns inline.
template <typename Ndk, typename Call>
NTSTATUS create(NDK_FN_CREATE_COMPLETION* completion, void* context, Ndk** out, Call call) {
    if (!completion) {  // no callback to forward to: pass the call through as it is
        NTSTATUS s = call(nullptr, context, out);
        if (s == STATUS_SUCCESS && out && *out) wrap(&(*out)->Header);
        return s;
    }
    auto* forward = new CreateForward{completion, context};
    NTSTATUS s = call(created, forward, out);
    if (s == STATUS_PENDING) return s;  // `created` owns the record now (it may have run already)
    delete forward;
    if (s == STATUS_SUCCESS && out && *out) wrap(&(*out)->Header);
    return s;
}

// A listener's connect events hand out new (passive) connectors: wrapped the same way.
struct ConnectEventForward {
    NDK_FN_CONNECT_EVENT_CALLBACK* event;
    void* context;
};
std::deque<ConnectEventForward> g_connect_events;  // one per listener, for the process (guarded)

void connect_event(void* context, NDK_CONNECTOR* connector) {
    auto* forward = static_cast<ConnectEventForward*>(context);
    if (connector) wrap(&connector->Header);
    forward->event(forward->context, connector);
}

NTSTATUS create_cq(NDK_ADAPTER* a, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK* notify,
                   PVOID notify_context, GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION* done,
                   PVOID context, NDK_CQ** out) {
    return create(done, context, out, [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_CQ** o) {
        return g_real.adapter.NdkCreateCq(a, depth, notify, notify_context, affinity, d, c, o);
    });
}

NTSTATUS create_pd(NDK_ADAPTER* a, NDK_FN_CREATE_COMPLETION* done, PVOID context, NDK_PD** out) {
    return create(done, context, out, [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_PD** o) {
        return g_real.adapter.NdkCreatePd(a, d, c, o);
    });
}

NTSTATUS create_shared_endpoint(NDK_ADAPTER* a, const PSOCKADDR address, ULONG length,
                                NDK_FN_CREATE_COMPLETION* done, PVOID context,
                                NDK_SHARED_ENDPOINT** out) {
    return create(done, context, out,
                  [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_SHARED_ENDPOINT** o) {
                      return g_real.adapter.NdkCreateSharedEndpoint(a, address, length, d, c, o);
                  });
}

NTSTATUS create_connector(NDK_ADAPTER* a, NDK_FN_CREATE_COMPLETION* done, PVOID context,
                          NDK_CONNECTOR** out) {
    return create(done, context, out, [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_CONNECTOR** o) {
        return g_real.adapter.NdkCreateConnector(a, d, c, o);
    });
}

NTSTATUS create_listener(NDK_ADAPTER* a, NDK_FN_CONNECT_EVENT_CALLBACK* event, PVOID event_context,
                         NDK_FN_CREATE_COMPLETION* done, PVOID context, NDK_LISTENER** out) {
    ConnectEventForward* forward = nullptr;
    if (event) {
        std::lock_guard lock(g_mutex);
        forward = &g_connect_events.emplace_back(ConnectEventForward{event, event_context});
    }
    return create(done, context, out, [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_LISTENER** o) {
        return g_real.adapter.NdkCreateListener(a, event ? connect_event : nullptr,
                                                event ? forward : event_context, d, c, o);
    });
}

NTSTATUS create_mr(NDK_PD* pd, BOOLEAN fast_register, NDK_FN_CREATE_COMPLETION* done, PVOID context,
                   NDK_MR** out) {
    return create(done, context, out, [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_MR** o) {
        return g_real.pd.NdkCreateMr(pd, fast_register, d, c, o);
    });
}

NTSTATUS create_mw(NDK_PD* pd, NDK_FN_CREATE_COMPLETION* done, PVOID context, NDK_MW** out) {
    return create(done, context, out, [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_MW** o) {
        return g_real.pd.NdkCreateMw(pd, d, c, o);
    });
}

NTSTATUS create_srq(NDK_PD* pd, ULONG depth, ULONG max_sge, ULONG threshold,
                    NDK_FN_SRQ_NOTIFICATION_CALLBACK* notify, PVOID notify_context,
                    GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION* done, PVOID context,
                    NDK_SRQ** out) {
    return create(done, context, out, [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_SRQ** o) {
        return g_real.pd.NdkCreateSrq(pd, depth, max_sge, threshold, notify, notify_context,
                                      affinity, d, c, o);
    });
}

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* done,
                   PVOID context, NDK_QP** out) {
    return create(done, context, out, [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_QP** o) {
        return g_real.pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                     initiator_depth, receive_sge, initiator_sge, inline_size, d, c,
                                     o);
    });
}

NTSTATUS create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, NDK_SRQ* srq,
                            PVOID qp_context, ULONG initiator_depth, ULONG initiator_sge,
                            ULONG inline_size, NDK_FN_CREATE_COMPLETION* done, PVOID context,
                            NDK_QP** out) {
    return create(done, context, out, [&](NDK_FN_CREATE_COMPLETION* d, void* c, NDK_QP** o) {
        return g_real.pd.NdkCreateQpWithSrq(pd, receive_cq, initiator_cq, srq, qp_context,
                                            initiator_depth, initiator_sge, inline_size, d, c, o);
    });
}

// The interposers of one table (only the adapter's and the PD's create anything).
void interpose(Tables& t, NDK_OBJECT_TYPE type) {
    if (type == NdkObjectTypeAdapter) {
        t.adapter.NdkCreateCq = create_cq;
        t.adapter.NdkCreatePd = create_pd;
        t.adapter.NdkCreateSharedEndpoint = create_shared_endpoint;
        t.adapter.NdkCreateConnector = create_connector;
        t.adapter.NdkCreateListener = create_listener;
    } else if (type == NdkObjectTypePd) {
        t.pd.NdkCreateMr = create_mr;
        t.pd.NdkCreateMw = create_mw;
        t.pd.NdkCreateSrq = create_srq;
        t.pd.NdkCreateQp = create_qp;
        t.pd.NdkCreateQpWithSrq = create_qp_with_srq;
    }
}

// ---- Wrapping ----

// Points the object at the wrapped copy of its table; builds that copy the first time.
template <typename Ndk, typename Table>
void wrap_as(NDK_OBJECT_HEADER* header, Table Tables::*member) {
    auto* object = reinterpret_cast<Ndk*>(header);
    NDK_OBJECT_TYPE type = header->ObjectType;
    const Table* wrapped = &(g_wrapped.*member);
    {
        std::lock_guard lock(g_mutex);
        if (object->Dispatch == wrapped) return;  // already ours
        if (!g_original[type]) {
            g_original[type] = object->Dispatch;
            g_real.*member = *object->Dispatch;
            g_base.*member = *object->Dispatch;
            interpose(g_base, type);
            Tables scratch = g_base;
            kFault.install(scratch);
            g_wrapped.*member = scratch.*member;
        } else if (g_original[type] != object->Dispatch) {
            die("the reference handed out two different dispatch tables for one object type");
        }
    }
    object->Dispatch = wrapped;  // GEN-CREATE-05: the reference never reads it again
    if (kFault.on_object) kFault.on_object(header);
}

}  // namespace

void wrap(NDK_OBJECT_HEADER* object) {
    switch (object->ObjectType) {
        case NdkObjectTypeAdapter:
            return wrap_as<NDK_ADAPTER>(object, &Tables::adapter);
        case NdkObjectTypePd:
            return wrap_as<NDK_PD>(object, &Tables::pd);
        case NdkObjectTypeCq:
            return wrap_as<NDK_CQ>(object, &Tables::cq);
        case NdkObjectTypeMr:
            return wrap_as<NDK_MR>(object, &Tables::mr);
        case NdkObjectTypeMw:
            return wrap_as<NDK_MW>(object, &Tables::mw);
        case NdkObjectTypeQp:
            return wrap_as<NDK_QP>(object, &Tables::qp);
        case NdkObjectTypeSrq:
            return wrap_as<NDK_SRQ>(object, &Tables::srq);
        case NdkObjectTypeConnector:
            return wrap_as<NDK_CONNECTOR>(object, &Tables::connector);
        case NdkObjectTypeListener:
            return wrap_as<NDK_LISTENER>(object, &Tables::listener);
        case NdkObjectTypeSharedEndpoint:
            return wrap_as<NDK_SHARED_ENDPOINT>(object, &Tables::shared_endpoint);
        default:
            die("the reference handed out an object of unknown type");
    }
}

void opened(NDK_ADAPTER* adapter) {
    NDK_ADAPTER_INFO info{};
    ULONG size = sizeof info;
    if (adapter->Dispatch->NdkQueryAdapterInfo(adapter, &info, &size) == STATUS_SUCCESS) {
        std::lock_guard lock(g_mutex);
        g_info = info;
    }
    wrap(&adapter->Header);
}

const Tables& base() {
    return g_base;
}

const NDK_ADAPTER_INFO& adapter_info() {
    return g_info;
}

NDK_FN_CLOSE_OBJECT* base_close(const NDK_OBJECT_HEADER* object) {
    switch (object->ObjectType) {
        case NdkObjectTypePd:
            return g_base.pd.NdkClosePd;
        case NdkObjectTypeCq:
            return g_base.cq.NdkCloseCq;
        case NdkObjectTypeMr:
            return g_base.mr.NdkCloseMr;
        case NdkObjectTypeMw:
            return g_base.mw.NdkCloseMw;
        case NdkObjectTypeQp:
            return g_base.qp.NdkCloseQp;
        case NdkObjectTypeSrq:
            return g_base.srq.NdkCloseSrq;
        case NdkObjectTypeConnector:
            return g_base.connector.NdkCloseConnector;
        case NdkObjectTypeListener:
            return g_base.listener.NdkCloseListener;
        case NdkObjectTypeSharedEndpoint:
            return g_base.shared_endpoint.NdkCloseSharedEndpoint;
        default:
            die("NdkCloseObject on an object with no close entry");
    }
}

}  // namespace ndkct::faulty
