// A connector's close does not cancel the connect pending on it: the close waits for that
// connect to finish, which only the peer can bring about (CLOSE-08: a close itself starts the
// cancellation its pending requests need, so that it never waits on what nothing would finish).
#include <map>
#include <mutex>
#include <optional>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct PendingConnect {
    NDK_FN_REQUEST_COMPLETION* done;
    void* context;
    NDK_CONNECTOR* connector;
};

struct DeferredClose {
    NDK_FN_CLOSE_COMPLETION* done;
    void* context;
};

std::mutex g_mutex;
std::map<const NDK_CONNECTOR*, int> g_connecting;  // connectors with a connect pending
std::map<const NDK_CONNECTOR*, DeferredClose> g_closes;

void finish_close(NDK_CONNECTOR* connector, DeferredClose close) {
    NTSTATUS s = base().connector.NdkCloseConnector(&connector->Header, close.done, close.context);
    if (s != STATUS_PENDING) close.done(close.context);  // the consumer was told STATUS_PENDING
}

void connected(void* forward, NTSTATUS status) {
    PendingConnect p = *static_cast<PendingConnect*>(forward);
    delete static_cast<PendingConnect*>(forward);
    std::optional<DeferredClose> close;
    {
        std::lock_guard lock(g_mutex);
        g_connecting.erase(p.connector);
        if (auto it = g_closes.find(p.connector); it != g_closes.end()) {
            close = it->second;
            g_closes.erase(it);
        }
    }
    p.done(p.context, status);
    if (close) finish_close(p.connector, *close);  // only now does the close go on
}

template <typename Call>
NTSTATUS track(NDK_CONNECTOR* c, NDK_FN_REQUEST_COMPLETION* done, PVOID context, Call call) {
    if (!done) return call(done, context);
    auto* forward = new PendingConnect{done, context, c};
    {
        std::lock_guard lock(g_mutex);
        g_connecting[c] = 1;
    }
    NTSTATUS s = call(connected, forward);
    if (s != STATUS_PENDING) {  // finished inline: no callback comes
        std::lock_guard lock(g_mutex);
        g_connecting.erase(c);
        delete forward;
    }
    return s;
}

NTSTATUS connect(NDK_CONNECTOR* c, NDK_QP* qp, const PSOCKADDR src, ULONG src_length,
                 const PSOCKADDR dst, ULONG dst_length, ULONG inbound, ULONG outbound,
                 const PVOID data, ULONG data_length, NDK_FN_REQUEST_COMPLETION* done,
                 PVOID context) {
    return track(c, done, context, [&](NDK_FN_REQUEST_COMPLETION* d, void* x) {
        return base().connector.NdkConnect(c, qp, src, src_length, dst, dst_length, inbound,
                                           outbound, data, data_length, d, x);
    });
}

NTSTATUS connect_shared(NDK_CONNECTOR* c, NDK_QP* qp, NDK_SHARED_ENDPOINT* endpoint,
                        const PSOCKADDR dst, ULONG dst_length, ULONG inbound, ULONG outbound,
                        const PVOID data, ULONG data_length, NDK_FN_REQUEST_COMPLETION* done,
                        PVOID context) {
    return track(c, done, context, [&](NDK_FN_REQUEST_COMPLETION* d, void* x) {
        return base().connector.NdkConnectWithSharedEndpoint(
            c, qp, endpoint, dst, dst_length, inbound, outbound, data, data_length, d, x);
    });
}

NTSTATUS close(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* done, PVOID context) {
    const auto* c = reinterpret_cast<const NDK_CONNECTOR*>(object);
    {
        std::lock_guard lock(g_mutex);
        if (done && g_connecting.contains(c)) {
            g_closes[c] = {done, context};  // the fault: waits for the connect, cancels nothing
            return STATUS_PENDING;
        }
    }
    return base().connector.NdkCloseConnector(object, done, context);
}

void install(Tables& t) {
    t.connector.NdkConnect = connect;
    t.connector.NdkConnectWithSharedEndpoint = connect_shared;
    t.connector.NdkCloseConnector = close;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("a connector's close waits for its pending connect instead of cancelling it",
                   ndkct::faulty::install);
