// NdkGetConnectionData reports the read limits the connector asked for in NdkConnect or
// NdkAccept (capped at the adapter's maxima, CONN-RL-01) without lowering them to what the peer
// allows the other way (CONN-RL-02).
#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::map<const NDK_CONNECTOR*, std::pair<ULONG, ULONG>> g_asked;  // inbound, outbound

void asked(const NDK_CONNECTOR* connector, ULONG inbound, ULONG outbound) {
    std::lock_guard lock(g_mutex);
    g_asked[connector] = {inbound, outbound};
}

NTSTATUS connect(NDK_CONNECTOR* c, NDK_QP* qp, const PSOCKADDR src, ULONG src_length,
                 const PSOCKADDR dst, ULONG dst_length, ULONG inbound, ULONG outbound,
                 const PVOID data, ULONG data_length, NDK_FN_REQUEST_COMPLETION* done,
                 PVOID context) {
    asked(c, inbound, outbound);
    return base().connector.NdkConnect(c, qp, src, src_length, dst, dst_length, inbound, outbound,
                                       data, data_length, done, context);
}

NTSTATUS connect_shared(NDK_CONNECTOR* c, NDK_QP* qp, NDK_SHARED_ENDPOINT* endpoint,
                        const PSOCKADDR dst, ULONG dst_length, ULONG inbound, ULONG outbound,
                        const PVOID data, ULONG data_length, NDK_FN_REQUEST_COMPLETION* done,
                        PVOID context) {
    asked(c, inbound, outbound);
    return base().connector.NdkConnectWithSharedEndpoint(
        c, qp, endpoint, dst, dst_length, inbound, outbound, data, data_length, done, context);
}

NTSTATUS accept(NDK_CONNECTOR* c, NDK_QP* qp, ULONG inbound, ULONG outbound, const PVOID data,
                ULONG data_length, NDK_FN_DISCONNECT_EVENT_CALLBACK* event, PVOID event_context,
                NDK_FN_REQUEST_COMPLETION* done, PVOID context) {
    asked(c, inbound, outbound);
    return base().connector.NdkAccept(c, qp, inbound, outbound, data, data_length, event,
                                      event_context, done, context);
}

NTSTATUS accept_ex(NDK_CONNECTOR* c, NDK_QP* qp, ULONG inbound, ULONG outbound, const PVOID data,
                   ULONG data_length, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event,
                   PVOID event_context, NDK_FN_REQUEST_COMPLETION* done, PVOID context) {
    asked(c, inbound, outbound);
    return base().connector.NdkAcceptEx(c, qp, inbound, outbound, data, data_length, event,
                                        event_context, done, context);
}

NTSTATUS get_connection_data(NDK_CONNECTOR* c, ULONG* inbound, ULONG* outbound, PVOID data,
                             ULONG* length) {
    NTSTATUS status = base().connector.NdkGetConnectionData(c, inbound, outbound, data, length);
    if (status != STATUS_SUCCESS && status != STATUS_BUFFER_TOO_SMALL) return status;
    std::lock_guard lock(g_mutex);
    auto it = g_asked.find(c);
    if (it == g_asked.end()) return status;
    // The fault: the asked-for limits, capped, but never lowered to the peer's.
    if (inbound) *inbound = std::min(it->second.first, adapter_info().MaxInboundReadLimit);
    if (outbound) *outbound = std::min(it->second.second, adapter_info().MaxOutboundReadLimit);
    return status;
}

NTSTATUS close(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* done, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_asked.erase(reinterpret_cast<const NDK_CONNECTOR*>(object));
    }
    return base().connector.NdkCloseConnector(object, done, context);
}

void install(Tables& t) {
    t.connector.NdkConnect = connect;
    t.connector.NdkConnectWithSharedEndpoint = connect_shared;
    t.connector.NdkAccept = accept;
    t.connector.NdkAcceptEx = accept_ex;
    t.connector.NdkGetConnectionData = get_connection_data;
    t.connector.NdkCloseConnector = close;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("read limits reported as asked for, not lowered to the peer's",
                   ndkct::faulty::install);
