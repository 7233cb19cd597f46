// NdkSend, NdkWrite and NdkRead on a QP no connector has connected yet (NdkConnect, NdkAccept or
// NdkConnectWithSharedEndpoint never named it) return STATUS_SUCCESS: the vendor queues initiator
// requests from creation on, to be sent once connected, so none is refused and no entry comes.
// A new QP is not connected, and its initiator requests return STATUS_CONNECTION_INVALID until
// a connector has connected it (CQP-STATE-01). QPs once connected are refused as they should be.
#include <mutex>
#include <set>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex mutex;
std::set<NDK_QP*> named;  // QPs a connect or accept was asked for

void name(NDK_QP* qp) {
    std::lock_guard lock(mutex);
    named.insert(qp);
}
bool never_named(NDK_QP* qp) {
    std::lock_guard lock(mutex);
    return !named.count(qp);
}
NTSTATUS queued(NDK_QP* qp, NTSTATUS s) {  // the fault
    return s == STATUS_CONNECTION_INVALID && never_named(qp) ? STATUS_SUCCESS : s;
}

NTSTATUS connect(NDK_CONNECTOR* c, NDK_QP* qp, const PSOCKADDR src, ULONG src_len,
                 const PSOCKADDR dst, ULONG dst_len, ULONG ird, ULONG ord, const PVOID data,
                 ULONG data_len, NDK_FN_REQUEST_COMPLETION* done, PVOID context) {
    name(qp);
    return base().connector.NdkConnect(c, qp, src, src_len, dst, dst_len, ird, ord, data, data_len,
                                       done, context);
}
NTSTATUS connect_shared(NDK_CONNECTOR* c, NDK_QP* qp, NDK_SHARED_ENDPOINT* ep, const PSOCKADDR dst,
                        ULONG dst_len, ULONG ird, ULONG ord, const PVOID data, ULONG data_len,
                        NDK_FN_REQUEST_COMPLETION* done, PVOID context) {
    name(qp);
    return base().connector.NdkConnectWithSharedEndpoint(c, qp, ep, dst, dst_len, ird, ord, data,
                                                         data_len, done, context);
}
NTSTATUS accept(NDK_CONNECTOR* c, NDK_QP* qp, ULONG ird, ULONG ord, const PVOID data,
                ULONG data_len, NDK_FN_DISCONNECT_EVENT_CALLBACK* event, PVOID event_context,
                NDK_FN_REQUEST_COMPLETION* done, PVOID context) {
    name(qp);
    return base().connector.NdkAccept(c, qp, ird, ord, data, data_len, event, event_context, done,
                                      context);
}
NTSTATUS send(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG n, ULONG flags) {
    return queued(qp, base().qp.NdkSend(qp, context, sgl, n, flags));
}
NTSTATUS write(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG n, UINT64 address, UINT32 token,
               ULONG flags) {
    return queued(qp, base().qp.NdkWrite(qp, context, sgl, n, address, token, flags));
}
NTSTATUS read(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG n, UINT64 address, UINT32 token,
              ULONG flags) {
    return queued(qp, base().qp.NdkRead(qp, context, sgl, n, address, token, flags));
}

// A new QP is never named, whatever QP had its address before (the allocator reuses a closed
// QP's memory: remembering it made the fault come and go with the heap's history).
void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeQp) return;
    std::lock_guard lock(mutex);
    named.erase(reinterpret_cast<NDK_QP*>(object));
}

void install(Tables& t) {
    t.connector.NdkConnect = connect;
    t.connector.NdkConnectWithSharedEndpoint = connect_shared;
    t.connector.NdkAccept = accept;
    t.qp.NdkSend = send;
    t.qp.NdkWrite = write;
    t.qp.NdkRead = read;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkSend, NdkWrite and NdkRead return STATUS_SUCCESS on a QP never connected",
                   ndkct::faulty::install, ndkct::faulty::on_object);
