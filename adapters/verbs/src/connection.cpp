// Connectors, listeners and shared endpoints on librdmacm (CONN-*, DISC-*, LIFE-TREE-06..08).
//
// The QP is ours (created with ibv_create_qp before any connector exists), so the rdma_cm ids
// carry no QP: the provider moves the QP through INIT, RTR and RTS itself with the attributes
// rdma_init_qp_attr gives. The active side then sees RDMA_CM_EVENT_CONNECT_RESPONSE when the
// peer accepts, which is exactly NDKPI's split: NdkConnect completes there (the private data and
// read limits are readable, CONN-15), and NdkCompleteConnect finishes with rdma_establish.
//
// Every state change below happens under Adapter::mutex, on the caller's thread or the event
// thread; consumer callbacks go to the worker.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "verbs.hpp"

namespace ndkct::adapters::verbs {

static bool same_adapter_ok(Adapter* a, const Life* life) {
    return life->adapter == a;
}

namespace {

constexpr int kResolveTimeoutMs = 5000;  // generous: rxe under emulation is slow
// Transport retries (see modify_qp): 4.096 us * 2^16 = 268 ms per try, 6 retries.
constexpr uint8_t kRetryCount = 6;
constexpr unsigned kAckTimeout = 16;

ULONG address_length(const sockaddr* a) {
    if (!a) return 0;
    if (a->sa_family == AF_INET) return sizeof(sockaddr_in);
    if (a->sa_family == AF_INET6) return sizeof(sockaddr_in6);
    return 0;
}

bool valid(const sockaddr* a, ULONG length) {
    ULONG need = address_length(a);
    return need != 0 && length >= need;
}

uint16_t port_of(const sockaddr* a) {
    return ntohs(a->sa_family == AF_INET ? reinterpret_cast<const sockaddr_in*>(a)->sin_port
                                         : reinterpret_cast<const sockaddr_in6*>(a)->sin6_port);
}

bool any_address(const sockaddr* a) {
    if (a->sa_family == AF_INET)
        return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr == htonl(INADDR_ANY);
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
}

void set_port(sockaddr* a, uint16_t port) {
    if (a->sa_family == AF_INET)
        reinterpret_cast<sockaddr_in*>(a)->sin_port = htons(port);
    else
        reinterpret_cast<sockaddr_in6*>(a)->sin6_port = htons(port);
}

bool is_loopback(const sockaddr* a) {
    if (a->sa_family == AF_INET)
        return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
    const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
}

// Loopback aliasing. rdma_cm cannot resolve 127.0.0.0/8 or ::1 to an RDMA device (route
// resolution fails with ENODEV), yet a consumer connecting an adapter to itself
// (NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED, AI-FLAG-07) naturally says "localhost". Such
// addresses stand for the adapter's own address: the same family where the device has one,
// else the other (rxe here: IPv4 only). Returns true when it substituted.
bool to_device(Adapter* a, const sockaddr* in, sockaddr_storage& out) {
    std::memset(&out, 0, sizeof out);
    std::memcpy(&out, in, address_length(in));
    if (!a->loopback_alias || !is_loopback(in)) return false;
    uint16_t port = port_of(in);
    if (in->sa_family == AF_INET6 && a->has_ipv6)
        std::memcpy(&out, &a->ipv6, sizeof a->ipv6);
    else if (a->has_ipv4)
        std::memcpy(&out, &a->ipv4, sizeof a->ipv4);
    else if (a->has_ipv6)
        std::memcpy(&out, &a->ipv6, sizeof a->ipv6);
    else
        return false;
    set_port(reinterpret_cast<sockaddr*>(&out), port);
    return true;
}

// An address the device reports, in the form the consumer used (CONN-ADDR-03).
void to_consumer(Adapter* a, const sockaddr* real, int alias_family, sockaddr_storage& out) {
    std::memset(&out, 0, sizeof out);
    std::memcpy(&out, real, address_length(real));
    if (!alias_family) return;
    bool ours =
        (real->sa_family == AF_INET && a->has_ipv4 &&
         reinterpret_cast<const sockaddr_in*>(real)->sin_addr.s_addr == a->ipv4.sin_addr.s_addr) ||
        (real->sa_family == AF_INET6 && a->has_ipv6 &&
         std::memcmp(&reinterpret_cast<const sockaddr_in6*>(real)->sin6_addr, &a->ipv6.sin6_addr,
                     16) == 0);
    if (!ours) return;
    uint16_t port = port_of(real);
    std::memset(&out, 0, sizeof out);
    if (alias_family == AF_INET) {
        auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
        v4->sin_family = AF_INET;
        v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        v4->sin_port = htons(port);
    } else {
        auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
        v6->sin6_family = AF_INET6;
        v6->sin6_addr = in6addr_loopback;
        v6->sin6_port = htons(port);
    }
}

// CONN-ADDR-01/02: the size, then the bytes.
NTSTATUS copy_address(Adapter* a, const sockaddr* real, int alias_family, PSOCKADDR to,
                      ULONG* length) {
    if (!length) return STATUS_INVALID_PARAMETER;
    if (!real || address_length(real) == 0) return STATUS_INVALID_DEVICE_STATE;  // no address yet
    sockaddr_storage shown;
    to_consumer(a, real, alias_family, shown);
    const sockaddr* from = reinterpret_cast<const sockaddr*>(&shown);
    ULONG need = address_length(from);
    if (need == 0) return STATUS_INVALID_DEVICE_STATE;  // no address yet
    if (*length < need || !to) {
        *length = need;
        return STATUS_BUFFER_TOO_SMALL;
    }
    std::memcpy(to, from, need);
    *length = need;
    return STATUS_SUCCESS;
}

// Binds to the address; port 0 takes a free port of the ephemeral range 49152-65535 (CONN-07,
// CONN-11, CONN-25; the kernel's own choice would come from ip_local_port_range, 32768-60999 by
// default). Returns 0 or an errno (EADDRINUSE with a port given, EMFILE when the range is
// exhausted). rdma_cm reports a port held by an id bound to the wildcard address (or a wildcard
// bind on a port some id holds) as EADDRNOTAVAIL, which a specific address also gets when it is
// not a local address at all: for those, a few EADDRNOTAVAIL in a row mean "not ours".
int bind_address(rdma_cm_id* id, const sockaddr* address) {
    sockaddr_storage a{};
    std::memcpy(&a, address, address_length(address));
    if (port_of(address) != 0)
        return rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&a)) == 0 ? 0 : errno;
    static thread_local std::minstd_rand random(std::random_device{}());
    constexpr uint32_t first = 49152, count = 65536 - 49152;
    constexpr int kNotOursAfter = 8;
    const bool wildcard = any_address(address);
    uint32_t start = random() % count;
    int unavailable = 0;
    for (uint32_t k = 0; k < count; ++k) {
        set_port(reinterpret_cast<sockaddr*>(&a),
                 static_cast<uint16_t>(first + (start + k) % count));
        if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&a)) == 0) return 0;
        int error = errno;
        if (error == EADDRINUSE) {
            unavailable = 0;
            continue;
        }
        if (error != EADDRNOTAVAIL) return error;
        if (!wildcard && ++unavailable >= kNotOursAfter) return error;  // the address is not ours
    }
    return EMFILE;
}

NTSTATUS bind_status(int error, bool port_given) {
    if (error == EMFILE) return STATUS_TOO_MANY_ADDRESSES;  // CONN-07, CONN-11, CONN-25
    if (error == EADDRINUSE)
        return port_given ? STATUS_SHARING_VIOLATION : STATUS_TOO_MANY_ADDRESSES;
    if (error == EADDRNOTAVAIL || error == ENODEV || error == EINVAL || error == EAFNOSUPPORT)
        return STATUS_INVALID_ADDRESS;  // CONN-10
    return errno_to_ntstatus(error);
}

// The id must lead to this adapter's device (an address of another device is not ours).
bool on_our_device(Adapter* a, rdma_cm_id* id) {
    return !id->verbs || a->device_name == ibv_get_device_name(id->verbs->device);
}

rdma_cm_id* new_id(Adapter* a, void* context) {
    rdma_cm_id* id = nullptr;
    if (!a->cm_channel || rdma_create_id(a->cm_channel, &id, context, RDMA_PS_TCP) != 0)
        return nullptr;
    return id;
}

// Connected QPs of this process, for SAI-02's abort (abort_connection): a peer in this process
// is found by its QP number on the same device.
std::mutex g_connected_mutex;
std::vector<Qp*> g_connected;

int modify_qp(Qp* qp, rdma_cm_id* id, ibv_qp_state state, uint32_t inbound, uint32_t outbound) {
    ibv_qp_attr attr{};
    int mask = 0;
    if (state == IBV_QPS_INIT) {
        // MODEL-FLS-01: a QP flushed before it was connected is in error, which INIT cannot
        // follow; it starts over from RESET (what it held was flushed already).
        ibv_qp_init_attr init{};
        if (ibv_query_qp(qp->qp, &attr, IBV_QP_STATE, &init) == 0 && attr.qp_state == IBV_QPS_ERR) {
            ibv_qp_attr reset{};
            reset.qp_state = IBV_QPS_RESET;
            ibv_modify_qp(qp->qp, &reset, IBV_QP_STATE);
            qp->flushed.store(false, std::memory_order_release);
        }
        attr = {};
    }
    attr.qp_state = state;
    if (rdma_init_qp_attr(id, &attr, &mask) != 0) return errno ? errno : EINVAL;
    // The QP admits every remote operation; the memory keys decide what reaches memory (rdma_cm
    // gives an active QP no remote access at INIT, so a peer's writes would be refused).
    if (state == IBV_QPS_INIT || (mask & IBV_QP_ACCESS_FLAGS)) {
        attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
        mask |= IBV_QP_ACCESS_FLAGS;
    }
    if (state == IBV_QPS_RTR) attr.max_dest_rd_atomic = static_cast<uint8_t>(inbound);
    if (state == IBV_QPS_RTS) {
        attr.max_rd_atomic = static_cast<uint8_t>(outbound);
        // A peer that stops answering (its QP in error: SAI-02's abort, a peer gone) fails the
        // request with IBV_WC_RETRY_EXC_ERR after kRetryCount retries of kAckTimeout each (about
        // 2 s), and the QP's later requests with it. Not 7: rxe retries forever at 7 (only an
        // RNR retry count of 7 means "forever" in IB), so such a request never completed.
        attr.retry_cnt = kRetryCount;
        if (attr.timeout == 0 || attr.timeout > kAckTimeout)  // 0: no timeout at all
            attr.timeout = kAckTimeout;
        attr.rnr_retry = 7;  // a send waits for the peer's receive (no RNR error)
        mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT;
    }
    int rc = ibv_modify_qp(qp->qp, &attr, mask);
    if (rc == 0 && state == IBV_QPS_RTR) note_peer(qp, attr.dest_qp_num);
    return rc;
}

// Finishes the connector's pending request with its callback (on the worker). Caller holds the
// mutex. The request's own busy count moves to the scheduled callback.
void complete(Adapter* a, Connector* c, NTSTATUS status) {
    if (c->pending == Connector::Pending::none) return;
    c->pending = Connector::Pending::none;
    NDK_FN_REQUEST_COMPLETION* callback = c->completion;
    void* context = c->completion_context;
    if (callback)
        a->schedule(
            &c->life, [callback, context, status] { callback(context, status); }, true);
    --c->life.busy;  // the request itself is finished
}

void start_request(Connector* c, Connector::Pending kind, NDK_FN_REQUEST_COMPLETION* completion,
                   void* context) {
    c->pending = kind;
    c->completion = completion;
    c->completion_context = context;
    ++c->life.busy;  // CLOSE-03: a close waits for it
}

void link_qp(Adapter* a, Connector* c, Qp* qp) {  // LIFE-TREE-06
    if (c->qp == qp) return;
    if (c->qp) a->unlink_antecedent(&c->life, &c->qp->life);
    c->qp = qp;
    qp->connector = c;
    a->link_antecedent(&c->life, &qp->life);
}

// Drops the connector's link to an antecedent; a close of that antecedent waiting for it may
// finish now (CLOSE-02). Caller holds the mutex.
void release_antecedent(Adapter* a, Connector* c, Life* antecedent) {
    a->unlink_antecedent(&c->life, antecedent);
    std::unique_lock<std::mutex> held(a->mutex, std::adopt_lock);
    a->maybe_finish_close(antecedent, held);
    held.release();  // still held by the caller
}

// LIFE-TREE-06/07: an attempt that failed associates nothing any more; the QP is idle again and
// the shared endpoint no longer waits for this connector. Caller holds the mutex.
void release_qp_and_endpoint(Adapter* a, Connector* c) {
    if (Qp* qp = c->qp) {
        if (qp->conn.load() == Conn::connecting) qp->conn.store(Conn::idle);
        if (qp->connector == c) qp->connector = nullptr;
        c->qp = nullptr;
        release_antecedent(a, c, &qp->life);
    }
    if (SharedEndpoint* e = c->endpoint) {
        c->endpoint = nullptr;
        release_antecedent(a, c, &e->life);
    }
}

void fail_connect(Adapter* a, Connector* c, NTSTATUS status) {
    VERBS_TRACE("connector %p fails with 0x%08x (errno %d)", static_cast<void*>(c),
                static_cast<unsigned>(status), errno);
    c->phase = Connector::Phase::failed;
    if (c->id) {
        c->stale_ids.push_back(c->id);  // destroyed off the event thread
        c->id = nullptr;
    }
    release_qp_and_endpoint(a, c);
    complete(a, c, status);
}

bool same_endpoint(const sockaddr* x, const sockaddr* y) {
    if (!x || !y || x->sa_family != y->sa_family || port_of(x) != port_of(y)) return false;
    if (x->sa_family == AF_INET)
        return reinterpret_cast<const sockaddr_in*>(x)->sin_addr.s_addr ==
               reinterpret_cast<const sockaddr_in*>(y)->sin_addr.s_addr;
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(x)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(y)->sin6_addr, 16) == 0;
}

// CONN-12: is a connection (being set up or established) with this four-tuple open on the
// adapter? rdma_cm does not ask: ids sharing a port through REUSEADDR (a shared endpoint's
// connectors) may connect to the same destination twice. Caller holds the mutex.
bool four_tuple_in_use(Adapter* a, const sockaddr* local, const sockaddr* remote) {
    for (Life* o = a->objects; o; o = o->next) {
        if (o->kind != Kind::connector || o->closing) continue;
        auto* c = reinterpret_cast<Connector*>(reinterpret_cast<char*>(o) -
                                               offsetof(Object<NDK_CONNECTOR>, life));
        switch (c->phase) {
            case Connector::Phase::idle:
            case Connector::Phase::disconnected:
            case Connector::Phase::failed:
                continue;
            default:
                break;
        }
        if (c->id && same_endpoint(rdma_get_local_addr(c->id), local) &&
            same_endpoint(rdma_get_peer_addr(c->id), remote))
            return true;
    }
    return false;
}

// rdma_cm hands over the whole private-data area of the CM message, padded with zeros; no peer
// can have sent more than the adapter's limit for that message (MaxCallerData for a request,
// MaxCalleeData for an accept or reject), so that is the size reported (CONN-PD-01: RDS need
// not be what the peer sent).
void copy_private_data(std::vector<uint8_t>& to, const rdma_conn_param& p, ULONG limit) {
    const auto* data = static_cast<const uint8_t*>(p.private_data);
    size_t length = data ? std::min<size_t>(p.private_data_len, limit) : 0;
    to.assign(data, data + length);
}

NTSTATUS start_connect(Adapter* a, Connector* c, Qp* qp, const sockaddr* source,
                       const sockaddr* destination, SharedEndpoint* endpoint, ULONG inbound,
                       ULONG outbound, const void* data, ULONG data_length,
                       NDK_FN_REQUEST_COMPLETION* completion, void* context) {
    if (!qp || !same_adapter_ok(a, &qp->life)) return STATUS_INVALID_PARAMETER;
    if (data_length > a->info.MaxCallerData || (data_length && !data))
        return STATUS_INVALID_PARAMETER;  // CONN-27 (profile: private_data_over_limit)
    std::unique_lock lock(a->mutex);
    if (c->phase != Connector::Phase::idle && c->phase != Connector::Phase::failed)
        return STATUS_INVALID_DEVICE_STATE;  // the connector is in use (ours)
    if (qp->conn.load() != Conn::idle) return STATUS_INVALID_DEVICE_STATE;
    sockaddr_storage dst;
    bool aliased = to_device(a, destination, dst);
    if (endpoint && four_tuple_in_use(a, reinterpret_cast<sockaddr*>(&endpoint->address),
                                      reinterpret_cast<sockaddr*>(&dst))) {
        VERBS_TRACE("connect refused inline: the four-tuple is in use (CONN-12)");
        return STATUS_ADDRESS_ALREADY_EXISTS;  // CONN-12
    }
    rdma_cm_id* id = new_id(a, c);
    if (!id) return STATUS_INSUFFICIENT_RESOURCES;
    auto drop = [&](NTSTATUS status) {
        VERBS_TRACE("connect refused inline: 0x%08x (errno %d)", static_cast<unsigned>(status),
                    errno);
        c->stale_ids.push_back(id);
        return status;
    };
    if (endpoint) {
        // CONN-14: the shared endpoint's address and port, shared with its other connectors
        // (the endpoint's own id allows REUSEADDR sharers once bound).
        int reuse = 1;
        rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &reuse, sizeof reuse);
        if (rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&endpoint->address)) != 0)
            return drop(errno == EADDRINUSE ? STATUS_ADDRESS_ALREADY_EXISTS
                                            : errno_to_ntstatus(errno));
    } else {
        // Any address binds the wildcard address, on a port of 49152-65535 when none is given
        // (CONN-11: rdma_resolve_addr would take one from the kernel's local port range).
        sockaddr_storage local;
        to_device(a, source, local);
        if (any_address(source) && local.ss_family != dst.ss_family) {
            // A loopback destination stands for the adapter's address of the other family
            // (IPv6 carried over IPv4): the wildcard follows it.
            uint16_t port = port_of(source);
            std::memset(&local, 0, sizeof local);
            local.ss_family = dst.ss_family;
            set_port(reinterpret_cast<sockaddr*>(&local), port);
        }
        if (int e = bind_address(id, reinterpret_cast<sockaddr*>(&local)); e != 0)
            return drop(bind_status(e, port_of(source) != 0));  // CONN-09, CONN-10, CONN-11
    }
    if (!on_our_device(a, id)) return drop(STATUS_INVALID_ADDRESS);  // CONN-10
    // The id is fresh and bound on our device, the destination of its family: rdma_cm refusing
    // the resolution with EINVAL then means it could not take it (found by the fault sweep:
    // STATUS_INVALID_PARAMETER failed a valid NdkConnect, CONN-02).
    if (rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&dst), kResolveTimeoutMs) != 0)
        return drop(errno == EADDRINUSE ? STATUS_ADDRESS_ALREADY_EXISTS
                    : errno == EINVAL   ? STATUS_INSUFFICIENT_RESOURCES
                                        : errno_to_ntstatus(errno));
    c->id = id;
    c->passive = false;
    c->alias_family = endpoint ? endpoint->alias_family : aliased ? destination->sa_family : 0;
    c->ird = std::min<uint32_t>(inbound, a->info.MaxInboundReadLimit);  // CONN-RL-01
    c->ord = std::min<uint32_t>(outbound, a->info.MaxOutboundReadLimit);
    const auto* bytes = static_cast<const uint8_t*>(data);
    c->private_data.assign(bytes, bytes + data_length);
    c->peer_private_data.clear();
    c->have_connection_data = false;
    c->phase = Connector::Phase::resolving;
    link_qp(a, c, qp);
    if (endpoint && c->endpoint != endpoint) {
        c->endpoint = endpoint;
        a->link_antecedent(&c->life, &endpoint->life);  // LIFE-TREE-07, CONN-LST-04
    }
    qp->conn.store(Conn::connecting);
    start_request(c, Connector::Pending::connect, completion, context);
    return STATUS_PENDING;  // CONN-02: the request completes through RequestCompletion
}

}  // namespace

void note_peer(Qp* qp, uint32_t peer_qp_num) {
    std::lock_guard lock(g_connected_mutex);
    qp->peer_qp_num = peer_qp_num;
    if (std::find(g_connected.begin(), g_connected.end(), qp) == g_connected.end())
        g_connected.push_back(qp);
}

void forget_peer(Qp* qp) {
    std::lock_guard lock(g_connected_mutex);
    std::erase(g_connected, qp);
}

// SAI-02: an incoming send-and-invalidate named a token that is not valid here; the connection
// is aborted as the transport prescribes: this QP goes to error, and the sender's QP too (IB
// answers with a NAK, which puts the requester in error so its later requests are flushed). rxe
// acknowledges the send instead, so where the sender's QP is in this process it is put in error
// here, before the consumer sees this completion; a sender elsewhere finds out when its next
// request fails after the transport's retries (kRetryCount).
void abort_connection(Qp* qp) {
    move_qp_to_error(qp);
    std::lock_guard lock(g_connected_mutex);
    const std::string& device = qp->life.adapter->device_name;
    for (Qp* peer : g_connected)
        if (peer != qp && peer->qp->qp_num == qp->peer_qp_num &&
            peer->peer_qp_num == qp->qp->qp_num && peer->life.adapter->device_name == device) {
            VERBS_TRACE("SAI-02: qp %u aborts its peer qp %u", qp->qp->qp_num, peer->qp->qp_num);
            move_qp_to_error(peer);
        }
}

// ================================================================ creation

NTSTATUS verbs_create_connector(NDK_ADAPTER* ndk, NDK_FN_CREATE_COMPLETION*, PVOID,
                                NDK_CONNECTOR** out) {
    auto* a = reinterpret_cast<Adapter*>(ndk);
    Connector* c =
        new_object<Connector>(a, Kind::connector, NdkObjectTypeConnector, &kConnectorDispatch);
    if (!c) return STATUS_INSUFFICIENT_RESOURCES;
    a->adopt(&c->life, {});  // LIFE-TREE-01
    *out = &c->ndk;
    return STATUS_SUCCESS;  // CONN-01
}

NTSTATUS verbs_create_listener(NDK_ADAPTER* ndk, NDK_FN_CONNECT_EVENT_CALLBACK* event,
                               PVOID event_context, NDK_FN_CREATE_COMPLETION*, PVOID,
                               NDK_LISTENER** out) {
    auto* a = reinterpret_cast<Adapter*>(ndk);
    Listener* l =
        new_object<Listener>(a, Kind::listener, NdkObjectTypeListener, &kListenerDispatch);
    if (!l) return STATUS_INSUFFICIENT_RESOURCES;
    l->connect_event = event;  // GEN-CB-05
    l->connect_event_context = event_context;
    a->adopt(&l->life, {});
    *out = &l->ndk;
    return STATUS_SUCCESS;  // CONN-05
}

NTSTATUS verbs_create_shared_endpoint(NDK_ADAPTER* ndk, const PSOCKADDR address, ULONG length,
                                      NDK_FN_CREATE_COMPLETION*, PVOID, NDK_SHARED_ENDPOINT** out) {
    auto* a = reinterpret_cast<Adapter*>(ndk);
    if (!valid(address, length)) return STATUS_INVALID_ADDRESS;
    SharedEndpoint* e = new_object<SharedEndpoint>(
        a, Kind::shared_endpoint, NdkObjectTypeSharedEndpoint, &kSharedEndpointDispatch);
    if (!e) return STATUS_INSUFFICIENT_RESOURCES;
    e->id = new_id(a, e);
    if (!e->id) {
        delete e;
        return STATUS_INSUFFICIENT_RESOURCES;
    }
    // CONN-06, CONN-LST-04: the endpoint binds as a listener would, so that an address held by
    // anyone (a listener, another shared endpoint, a connection) is a sharing violation; only
    // once bound does it let its own connectors (REUSEADDR ids) share the address. rdma_cm
    // lets any two REUSEADDR ids share a port, so an endpoint bound with REUSEADDR from the
    // start would let a second endpoint onto the same address.
    sockaddr_storage local;
    if (to_device(a, address, local)) e->alias_family = address->sa_family;
    int error = bind_address(e->id, reinterpret_cast<sockaddr*>(&local));
    int reuse = 1;
    if (error == 0 &&
        rdma_set_option(e->id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &reuse, sizeof reuse) != 0)
        error = errno;
    if (error != 0 || !on_our_device(a, e->id)) {
        VERBS_TRACE("shared endpoint refused: errno %d", error);
        rdma_destroy_id(e->id);
        delete e;
        return error ? bind_status(error, port_of(address) != 0)
                     : STATUS_INVALID_ADDRESS;  // CONN-06, CONN-07
    }
    std::memcpy(&e->address, rdma_get_local_addr(e->id),
                address_length(rdma_get_local_addr(e->id)));
    a->adopt(&e->life, {});
    *out = &e->ndk;
    return STATUS_SUCCESS;
}

// The event thread finds a connection object through an rdma_cm id's context and reads it with
// the adapter's mutex held (on_cm_event). Its ids are destroyed first, without the mutex
// (rdma_destroy_id waits for the event thread to acknowledge their events); the object itself
// goes with the mutex held, so that any read of it on the event thread comes before (found by
// ThreadSanitizer: the worker's delete raced with on_cm_event's read of the connector's kind).
template <typename T>
void delete_under_lock(T* object) {
    std::lock_guard lock(object->life.adapter->mutex);
    delete object;
}

void destroy_connector(Connector* c) {
    {
        std::lock_guard lock(c->life.adapter->mutex);
        if (c->qp && c->qp->connector == c) c->qp->connector = nullptr;
    }
    VERBS_TRACE("destroying connector %p (id %p, %zu stale)", static_cast<void*>(c),
                static_cast<void*>(c->id), c->stale_ids.size());
    if (c->id) rdma_destroy_id(c->id);
    for (rdma_cm_id* id : c->stale_ids)
        rdma_destroy_id(id);
    VERBS_TRACE("destroyed connector %p", static_cast<void*>(c));
    delete_under_lock(c);
}

void destroy_listener(Listener* l) {
    if (l->id) rdma_destroy_id(l->id);  // the port is free from now on (CONN-LST-01)
    delete_under_lock(l);
}

void destroy_shared_endpoint(SharedEndpoint* e) {
    if (e->id) rdma_destroy_id(e->id);
    delete_under_lock(e);
}

// CLOSE-08 and CONN-LST-03, with the mutex held when a close starts.
void begin_close_connection(Life* o) {
    Adapter* a = o->adapter;
    if (o->kind == Kind::listener) {
        auto* l = reinterpret_cast<Listener*>(reinterpret_cast<char*>(o) -
                                              offsetof(Object<NDK_LISTENER>, life));
        l->listening = false;  // no connection is accepted once the close was asked for
        return;
    }
    if (o->kind == Kind::qp) {
        // CLOSE-03, CLOSE-08: a QP's close flushes it at once, even while its connector keeps
        // the close pending: nothing posted to it completes normally from now on (found by the
        // property tests on rxe: a receive still took a send after the close began).
        move_qp_to_error(
            reinterpret_cast<Qp*>(reinterpret_cast<char*>(o) - offsetof(Object<NDK_QP>, life)));
        return;
    }
    if (o->kind != Kind::connector) return;
    auto* c = reinterpret_cast<Connector*>(reinterpret_cast<char*>(o) -
                                           offsetof(Object<NDK_CONNECTOR>, life));
    switch (c->phase) {
        case Connector::Phase::resolving:
        case Connector::Phase::connecting:
        case Connector::Phase::accepting:
            // The peer hears of it when the id is destroyed, once the close completed: rdma_cm
            // then sends a REJ (CONN-17, CONN-21). An explicit rdma_reject now would not do:
            // from REQ_SENT the REJ names no remote id (the peer drops it) and the REQ keeps
            // being retransmitted, and after either one rdma_destroy_id blocks for many seconds
            // (measured on rxe), holding up the worker.
            fail_connect(a, c, STATUS_CANCELLED);
            break;
        case Connector::Phase::incoming:
            if (c->id)
                rdma_reject(c->id, nullptr, 0);  // closing an unanswered request turns it down
            c->phase = Connector::Phase::failed;
            break;
        case Connector::Phase::connected_pending_complete:  // the accept is turned down
            if (c->id) rdma_reject(c->id, nullptr, 0);
            if (c->qp && c->qp->conn.load() == Conn::connecting) c->qp->conn.store(Conn::idle);
            c->phase = Connector::Phase::failed;
            break;
        case Connector::Phase::established:
            if (c->id) rdma_disconnect(c->id);
            if (c->qp) {
                move_qp_to_error(c->qp);
                c->qp->conn.store(Conn::disconnected);
            }
            c->phase = Connector::Phase::disconnected;
            break;
        case Connector::Phase::disconnecting:
            complete(a, c, STATUS_SUCCESS);  // the close finishes the disconnect
            c->phase = Connector::Phase::disconnected;
            break;
        default:
            break;
    }
}

// ================================================================ active side

NTSTATUS verbs_connect(NDK_CONNECTOR* ndk, NDK_QP* qp, const PSOCKADDR source, ULONG source_length,
                       const PSOCKADDR destination, ULONG destination_length, ULONG inbound,
                       ULONG outbound, const PVOID data, ULONG data_length,
                       NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    Connector* c = self<Connector>(ndk);
    Adapter* a = c->life.adapter;
    if (!valid(destination, destination_length)) return STATUS_INVALID_ADDRESS;
    // No source address: any local address of the destination's family, an ephemeral port.
    sockaddr_storage any{};
    const sockaddr* from = source;
    if (!source || source_length == 0) {
        any.ss_family = destination->sa_family;
        from = reinterpret_cast<sockaddr*>(&any);
        source_length = address_length(from);
    }
    if (!valid(from, source_length) || from->sa_family != destination->sa_family)
        return STATUS_INVALID_ADDRESS;  // CONN-IP-01: IPv4 and IPv6, not mixed
    return start_connect(a, c, self<Qp>(qp), from, destination, nullptr, inbound, outbound, data,
                         data_length, completion, context);
}

NTSTATUS verbs_connect_with_shared_endpoint(NDK_CONNECTOR* ndk, NDK_QP* qp,
                                            NDK_SHARED_ENDPOINT* endpoint,
                                            const PSOCKADDR destination, ULONG destination_length,
                                            ULONG inbound, ULONG outbound, const PVOID data,
                                            ULONG data_length,
                                            NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    Connector* c = self<Connector>(ndk);
    Adapter* a = c->life.adapter;
    SharedEndpoint* e = self<SharedEndpoint>(endpoint);
    if (!e || !same_adapter_ok(a, &e->life)) return STATUS_INVALID_PARAMETER;
    if (!valid(destination, destination_length)) return STATUS_INVALID_ADDRESS;
    return start_connect(a, c, self<Qp>(qp), nullptr, destination, e, inbound, outbound, data,
                         data_length, completion, context);
}

namespace {

NTSTATUS complete_connect(Connector* c, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                          NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event_ex, void* event_context) {
    Adapter* a = c->life.adapter;
    std::lock_guard lock(a->mutex);
    if (c->passive || c->phase != Connector::Phase::connected_pending_complete || !c->qp || !c->id)
        return STATUS_CONNECTION_INVALID;                        // CONN-16
    if (c->peer_disconnected) return STATUS_CONNECTION_ABORTED;  // CONN-17: the acceptor gave up
    uint32_t inbound = std::min(c->ird, c->peer_ord),
             outbound = std::min(c->ord, c->peer_ird);  // CONN-RL-02
    // CONN-17: rdma_cm refuses the QP attributes (EINVAL) and rdma_establish once the CM has
    // processed the acceptor's REJ, possibly before its event reached us: the acceptor gave up.
    auto failed = [](int e) -> NTSTATUS {
        return e == EINVAL ? STATUS_CONNECTION_ABORTED : errno_to_ntstatus(e);
    };
    if (int e = modify_qp(c->qp, c->id, IBV_QPS_RTR, inbound, outbound); e != 0) return failed(e);
    if (int e = modify_qp(c->qp, c->id, IBV_QPS_RTS, inbound, outbound); e != 0) return failed(e);
    if (rdma_establish(c->id) != 0) return failed(errno);
    c->disconnect_event = event;  // CONN-DISC-02/03
    c->disconnect_event_ex = event_ex;
    c->disconnect_context = event_context;
    c->phase = Connector::Phase::established;
    c->qp->conn.store(Conn::connected, std::memory_order_release);  // CONN-03
    return STATUS_SUCCESS;
}

}  // namespace

NTSTATUS verbs_complete_connect(NDK_CONNECTOR* ndk, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                                PVOID event_context, NDK_FN_REQUEST_COMPLETION*, PVOID) {
    return complete_connect(self<Connector>(ndk), event, nullptr, event_context);
}

NTSTATUS verbs_complete_connect_ex(NDK_CONNECTOR* ndk, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event,
                                   PVOID event_context, NDK_FN_REQUEST_COMPLETION*, PVOID) {
    return complete_connect(self<Connector>(ndk), nullptr, event, event_context);  // CONN-19
}

// ================================================================ passive side

NTSTATUS verbs_listen(NDK_LISTENER* ndk, const PSOCKADDR address, ULONG length,
                      NDK_FN_REQUEST_COMPLETION*, PVOID) {
    Listener* l = self<Listener>(ndk);
    Adapter* a = l->life.adapter;
    if (!valid(address, length)) return STATUS_INVALID_ADDRESS;
    std::lock_guard lock(a->mutex);
    if (l->id) return STATUS_INVALID_DEVICE_STATE;  // listening already (ours)
    rdma_cm_id* id = new_id(a, l);
    if (!id) return STATUS_INSUFFICIENT_RESOURCES;
    sockaddr_storage local;
    bool aliased = to_device(a, address, local);
    int error = bind_address(id, reinterpret_cast<sockaddr*>(&local));
    NTSTATUS status =
        error ? bind_status(error, port_of(address) != 0) : STATUS_SUCCESS;  // CONN-04, CONN-25
    if (status == STATUS_SUCCESS && !on_our_device(a, id)) status = STATUS_INVALID_ADDRESS;
    if (status == STATUS_SUCCESS && rdma_listen(id, 64) != 0) status = errno_to_ntstatus(errno);
    if (status != STATUS_SUCCESS) {
        VERBS_TRACE("listen refused: 0x%08x (errno %d)", static_cast<unsigned>(status),
                    error ? error : errno);
        rdma_destroy_id(id);  // no event can be outstanding for an id that never listened
        return status;
    }
    l->id = id;
    l->listening = true;
    l->alias_family = aliased ? address->sa_family : 0;
    return STATUS_SUCCESS;
}

NTSTATUS verbs_get_listener_local_address(NDK_LISTENER* ndk, PSOCKADDR address, ULONG* length) {
    Listener* l = self<Listener>(ndk);
    std::lock_guard lock(l->life.adapter->mutex);
    if (!l->id) return STATUS_INVALID_DEVICE_STATE;
    return copy_address(l->life.adapter, rdma_get_local_addr(l->id), l->alias_family, address,
                        length);  // CONN-ADDR-03, CONN-25
}

void verbs_control_connect_events(NDK_LISTENER* ndk, BOOLEAN pause) {
    Listener* l = self<Listener>(ndk);
    std::lock_guard lock(l->life.adapter->mutex);
    l->paused = pause != 0;  // CONN-CTL-01/02
}

NTSTATUS verbs_get_shared_endpoint_local_address(NDK_SHARED_ENDPOINT* ndk, PSOCKADDR address,
                                                 ULONG* length) {
    SharedEndpoint* e = self<SharedEndpoint>(ndk);
    return copy_address(e->life.adapter, reinterpret_cast<sockaddr*>(&e->address), e->alias_family,
                        address,
                        length);  // CONN-26
}

namespace {

NTSTATUS accept(Connector* c, Qp* qp, ULONG inbound, ULONG outbound, const void* data,
                ULONG data_length, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event_ex, void* event_context,
                NDK_FN_REQUEST_COMPLETION* completion, void* context) {
    Adapter* a = c->life.adapter;
    if (!qp || !same_adapter_ok(a, &qp->life)) return STATUS_INVALID_PARAMETER;
    if (data_length > a->info.MaxCalleeData || (data_length && !data))
        return STATUS_INVALID_PARAMETER;
    std::lock_guard lock(a->mutex);
    if (!c->passive || c->phase != Connector::Phase::incoming || !c->id) {
        // CONN-21: the requester gave up meanwhile
        return c->passive && c->phase == Connector::Phase::failed ? STATUS_CONNECTION_ABORTED
                                                                  : STATUS_INVALID_DEVICE_STATE;
    }
    if (qp->conn.load() != Conn::idle) return STATUS_INVALID_DEVICE_STATE;
    c->ird = std::min<uint32_t>(inbound, a->info.MaxInboundReadLimit);  // CONN-RL-01
    c->ord = std::min<uint32_t>(outbound, a->info.MaxOutboundReadLimit);
    uint32_t in = std::min(c->ird, c->peer_ord), out = std::min(c->ord, c->peer_ird);  // CONN-RL-02
    // CONN-21: rdma_cm refuses the QP attributes and rdma_accept (EINVAL) once the CM has
    // processed the requester's REJ (it gave up), possibly before its event reached us.
    auto failed = [&](int e) -> NTSTATUS {
        if (e != EINVAL) return errno_to_ntstatus(e);
        c->phase = Connector::Phase::failed;
        return STATUS_CONNECTION_ABORTED;
    };
    for (ibv_qp_state state : {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
        if (int e = modify_qp(qp, c->id, state, in, out); e != 0) {
            if (state == IBV_QPS_RTS) move_qp_to_error(qp);  // RTR cannot go back to INIT
            return failed(e);
        }
    }
    rdma_conn_param param{};
    param.private_data = data;
    param.private_data_len = static_cast<uint8_t>(data_length);
    param.responder_resources = static_cast<uint8_t>(in);
    param.initiator_depth = static_cast<uint8_t>(out);
    param.retry_count = kRetryCount;
    param.rnr_retry_count = 7;
    param.qp_num = qp->qp->qp_num;
    if (rdma_accept(c->id, &param) != 0) {
        NTSTATUS status = failed(errno);
        move_qp_to_error(qp);
        return status;
    }
    const auto* bytes = static_cast<const uint8_t*>(data);
    c->private_data.assign(bytes, bytes + data_length);
    c->disconnect_event = event;
    c->disconnect_event_ex = event_ex;
    c->disconnect_context = event_context;
    link_qp(a, c, qp);
    qp->conn.store(Conn::connecting);
    c->phase = Connector::Phase::accepting;
    start_request(c, Connector::Pending::accept, completion, context);
    return STATUS_PENDING;  // CONN-21: finishes when the active side's NdkCompleteConnect arrives
}

}  // namespace

NTSTATUS verbs_accept(NDK_CONNECTOR* ndk, NDK_QP* qp, ULONG inbound, ULONG outbound,
                      const PVOID data, ULONG data_length, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                      PVOID event_context, NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    return accept(self<Connector>(ndk), self<Qp>(qp), inbound, outbound, data, data_length, event,
                  nullptr, event_context, completion, context);
}

NTSTATUS verbs_accept_ex(NDK_CONNECTOR* ndk, NDK_QP* qp, ULONG inbound, ULONG outbound,
                         const PVOID data, ULONG data_length,
                         NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event, PVOID event_context,
                         NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    return accept(self<Connector>(ndk), self<Qp>(qp), inbound, outbound, data, data_length, nullptr,
                  event, event_context, completion, context);  // CONN-22
}

// CONN-23, CONN-24: the passive side turns down a request, or the active side the accept.
NTSTATUS verbs_reject(NDK_CONNECTOR* ndk, const PVOID data, ULONG data_length) {
    Connector* c = self<Connector>(ndk);
    Adapter* a = c->life.adapter;
    if (data_length > a->info.MaxCalleeData || (data_length && !data))
        return STATUS_INVALID_PARAMETER;
    std::lock_guard lock(a->mutex);
    bool passive_request = c->passive && c->phase == Connector::Phase::incoming;
    bool active_answer = !c->passive && c->phase == Connector::Phase::connected_pending_complete;
    if (!passive_request && !active_answer) {
        return c->phase == Connector::Phase::failed ? STATUS_CONNECTION_ABORTED
                                                    : STATUS_INVALID_DEVICE_STATE;
    }
    if (!c->id || rdma_reject(c->id, data, static_cast<uint8_t>(data_length)) != 0)
        return STATUS_CONNECTION_ABORTED;
    c->phase = Connector::Phase::failed;
    release_qp_and_endpoint(a, c);  // CONN-24: the active side's QP is no longer associated
    return STATUS_SUCCESS;
}

// CONN-PD-01..05, CONN-RL-03.
NTSTATUS verbs_get_connection_data(NDK_CONNECTOR* ndk, ULONG* inbound, ULONG* outbound, PVOID data,
                                   ULONG* length) {
    Connector* c = self<Connector>(ndk);
    std::lock_guard lock(c->life.adapter->mutex);
    if (!c->have_connection_data) return STATUS_INVALID_DEVICE_STATE;  // CONN-PD-08
    if (c->passive && c->phase == Connector::Phase::incoming) {
        // Before NdkAccept: what the requester offers (its outbound is our inbound).
        if (inbound)
            *inbound = std::min<uint32_t>(c->peer_ord, c->life.adapter->info.MaxInboundReadLimit);
        if (outbound)
            *outbound = std::min<uint32_t>(c->peer_ird, c->life.adapter->info.MaxOutboundReadLimit);
    } else {
        if (inbound) *inbound = std::min(c->ird, c->peer_ord);
        if (outbound) *outbound = std::min(c->ord, c->peer_ird);
    }
    if (!length) return STATUS_INVALID_PARAMETER;
    ULONG rds = static_cast<ULONG>(c->peer_private_data.size());
    if (!data && *length == 0) {
        *length = rds;
        return STATUS_SUCCESS;
    }
    if (!data) return STATUS_INVALID_PARAMETER;
    std::memcpy(data, c->peer_private_data.data(), std::min(*length, rds));
    NTSTATUS status = *length >= rds ? STATUS_SUCCESS : STATUS_BUFFER_TOO_SMALL;
    *length = rds;
    return status;
}

NTSTATUS verbs_get_local_address(NDK_CONNECTOR* ndk, PSOCKADDR address, ULONG* length) {
    Connector* c = self<Connector>(ndk);
    std::lock_guard lock(c->life.adapter->mutex);
    if (!c->id) return STATUS_INVALID_DEVICE_STATE;
    return copy_address(c->life.adapter, rdma_get_local_addr(c->id), c->alias_family, address,
                        length);
}

NTSTATUS verbs_get_peer_address(NDK_CONNECTOR* ndk, PSOCKADDR address, ULONG* length) {
    Connector* c = self<Connector>(ndk);
    std::lock_guard lock(c->life.adapter->mutex);
    if (!c->id) return STATUS_INVALID_DEVICE_STATE;
    return copy_address(c->life.adapter, rdma_get_peer_addr(c->id), c->alias_family, address,
                        length);
}

// CONN-DISC-01, DISC-FLUSH-01: graceful; the QP is flushed.
NTSTATUS verbs_disconnect(NDK_CONNECTOR* ndk, NDK_FN_REQUEST_COMPLETION* completion,
                          PVOID context) {
    Connector* c = self<Connector>(ndk);
    Adapter* a = c->life.adapter;
    std::lock_guard lock(a->mutex);
    if (c->phase != Connector::Phase::established || !c->id) return STATUS_INVALID_DEVICE_STATE;
    if (c->qp) {
        c->qp->conn.store(Conn::disconnected);
        move_qp_to_error(c->qp);
    }
    rdma_disconnect(c->id);
    if (c->peer_disconnected) {  // our DREP ends it: no further event comes
        c->phase = Connector::Phase::disconnected;
        return STATUS_SUCCESS;
    }
    c->phase = Connector::Phase::disconnecting;
    start_request(c, Connector::Pending::disconnect, completion, context);
    return STATUS_PENDING;
}

// ================================================================ events

namespace {

NTSTATUS event_status(const rdma_cm_event* event, NTSTATUS fallback) {
    int e = event->status < 0 ? -event->status : 0;
    if (e == ETIMEDOUT) return STATUS_IO_TIMEOUT;
    if (e == ENETUNREACH) return STATUS_NETWORK_UNREACHABLE;
    if (e == EHOSTUNREACH) return STATUS_HOST_UNREACHABLE;
    if (e == ECONNREFUSED) return STATUS_CONNECTION_REFUSED;
    return fallback;
}

void deliver_disconnect(Adapter* a, Connector* c) {  // CONN-DISC-02/03: once
    if (c->disconnect_delivered) return;
    c->disconnect_delivered = true;
    void* context = c->disconnect_context;
    if (auto* ex = c->disconnect_event_ex)
        a->schedule(&c->life, [ex, context] { ex(context, 0); });
    else if (auto* plain = c->disconnect_event)
        a->schedule(&c->life, [plain, context] { plain(context); });
}

// CONN-RL-02: the peer's read limits. The CM hands them over already turned to this side's view
// (ib_cm swaps the REQ's and REP's fields): the event's responder_resources is the peer's
// initiator depth (its outbound limit, what this side must serve) and its initiator_depth the
// peer's responder resources (its inbound limit, what this side may issue).
void take_peer_read_limits(Connector* c, const rdma_conn_param& p) {
    c->peer_ord = p.responder_resources;
    c->peer_ird = p.initiator_depth;
}

void on_connect_request(Adapter* a, Listener* l, rdma_cm_event* event,
                        std::vector<rdma_cm_id*>& destroy) {
    rdma_cm_id* child = event->id;
    // CONN-LST-03, CONN-CTL-01: closing or paused: as if nobody listened.
    if (!l || !l->listening || l->paused || l->life.closing || a->closing || !l->connect_event) {
        rdma_reject(child, nullptr, 0);
        destroy.push_back(child);
        return;
    }
    Connector* c =
        new_object<Connector>(a, Kind::connector, NdkObjectTypeConnector, &kConnectorDispatch);
    if (!c) {
        rdma_reject(child, nullptr, 0);
        destroy.push_back(child);
        return;
    }
    c->id = child;
    child->context = c;
    c->passive = true;
    c->listener = l;
    c->alias_family = l->alias_family;
    c->phase = Connector::Phase::incoming;
    copy_private_data(c->peer_private_data, event->param.conn,
                      a->info.MaxCallerData);  // CONN-27, CONN-PD-08
    take_peer_read_limits(c, event->param.conn);
    c->have_connection_data = true;
    a->adopt_locked(&c->life, {&l->life});  // LIFE-TREE-08
    auto* callback = l->connect_event;
    void* context = l->connect_event_context;
    NDK_CONNECTOR* connector = &c->ndk;
    a->schedule(&l->life,
                [callback, context, connector] { callback(context, connector); });  // CONN-20
}

}  // namespace

void Adapter::on_cm_event(rdma_cm_event* event) {
    VERBS_TRACE("cm event %s (status %d) id %p context %p", rdma_event_str(event->event),
                event->status, static_cast<void*>(event->id),
                event->id ? event->id->context : nullptr);
    std::vector<rdma_cm_id*> destroy;
    {
        std::lock_guard lock(mutex);
        if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
            void* context = event->listen_id ? event->listen_id->context : nullptr;
            Listener* l = context && life_of(context)->kind == Kind::listener
                              ? static_cast<Listener*>(context)
                              : nullptr;
            on_connect_request(this, l, event, destroy);
        } else if (void* context = event->id ? event->id->context : nullptr;
                   context && life_of(context)->kind == Kind::connector) {
            auto* c = static_cast<Connector*>(context);
            if (event->id == c->id) {  // events of abandoned attempts are ignored
                switch (event->event) {
                    case RDMA_CM_EVENT_ADDR_RESOLVED:
                        if (c->phase != Connector::Phase::resolving) break;
                        if (!on_our_device(this, c->id))
                            fail_connect(this, c, STATUS_INVALID_ADDRESS);
                        else if (rdma_resolve_route(c->id, kResolveTimeoutMs) != 0)
                            fail_connect(this, c, errno_to_ntstatus(errno));
                        break;
                    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
                        if (c->phase != Connector::Phase::resolving || !c->qp) break;
                        if (int e = modify_qp(c->qp, c->id, IBV_QPS_INIT, 0, 0); e != 0) {
                            fail_connect(this, c, errno_to_ntstatus(e));
                            break;
                        }
                        rdma_conn_param param{};
                        param.private_data =
                            c->private_data.empty() ? nullptr : c->private_data.data();
                        param.private_data_len = static_cast<uint8_t>(c->private_data.size());
                        param.responder_resources = static_cast<uint8_t>(c->ird);
                        param.initiator_depth = static_cast<uint8_t>(c->ord);
                        param.retry_count = kRetryCount;
                        param.rnr_retry_count = 7;
                        param.qp_num = c->qp->qp->qp_num;
                        if (rdma_connect(c->id, &param) != 0)
                            fail_connect(this, c, errno_to_ntstatus(errno));
                        else
                            c->phase = Connector::Phase::connecting;
                        break;
                    }
                    case RDMA_CM_EVENT_CONNECT_RESPONSE:  // CONN-15: the peer accepted
                        if (c->phase != Connector::Phase::connecting) break;
                        copy_private_data(c->peer_private_data, event->param.conn,
                                          info.MaxCalleeData);
                        take_peer_read_limits(c, event->param.conn);
                        c->have_connection_data = true;
                        c->phase = Connector::Phase::connected_pending_complete;
                        complete(this, c, STATUS_SUCCESS);
                        break;
                    case RDMA_CM_EVENT_ESTABLISHED:
                        if (c->passive && c->phase == Connector::Phase::accepting) {
                            c->phase = Connector::Phase::established;
                            if (c->qp)
                                c->qp->conn.store(Conn::connected, std::memory_order_release);
                            complete(this, c, STATUS_SUCCESS);  // CONN-21
                        }
                        break;
                    case RDMA_CM_EVENT_REJECTED:
                        if (c->phase == Connector::Phase::connecting) {
                            copy_private_data(c->peer_private_data, event->param.conn,
                                              info.MaxCalleeData);  // CONN-27
                            c->have_connection_data = true;
                            fail_connect(this, c, STATUS_CONNECTION_REFUSED);  // CONN-08
                        } else if (c->phase == Connector::Phase::accepting) {
                            fail_connect(
                                this, c,
                                STATUS_CONNECTION_ABORTED);  // CONN-21: the requester said no
                        } else if (c->phase == Connector::Phase::incoming) {
                            c->phase = Connector::Phase::failed;  // CONN-21, CONN-23: the requester
                                                                  // gave up
                        } else if (c->phase == Connector::Phase::connected_pending_complete) {
                            c->peer_disconnected = true;  // CONN-17: the acceptor gave up
                        }
                        break;
                    case RDMA_CM_EVENT_ADDR_ERROR:
                        fail_connect(this, c,
                                     event_status(event, STATUS_HOST_UNREACHABLE));  // CONN-13
                        break;
                    case RDMA_CM_EVENT_ROUTE_ERROR:
                        fail_connect(this, c, event_status(event, STATUS_NETWORK_UNREACHABLE));
                        break;
                    case RDMA_CM_EVENT_UNREACHABLE:
                    case RDMA_CM_EVENT_CONNECT_ERROR:
                        if (c->phase == Connector::Phase::incoming)
                            c->phase = Connector::Phase::failed;
                        else if (c->phase == Connector::Phase::accepting)
                            fail_connect(this, c, event_status(event, STATUS_IO_TIMEOUT));
                        else if (c->phase == Connector::Phase::resolving ||
                                 c->phase == Connector::Phase::connecting)
                            fail_connect(this, c, event_status(event, STATUS_IO_TIMEOUT));
                        else if (c->phase == Connector::Phase::connected_pending_complete)
                            c->peer_disconnected = true;
                        break;
                    case RDMA_CM_EVENT_DISCONNECTED:
                        if (c->phase == Connector::Phase::disconnecting) {
                            c->phase = Connector::Phase::disconnected;
                            complete(this, c, STATUS_SUCCESS);  // CONN-DISC-01
                        } else if (c->phase == Connector::Phase::established) {
                            // DISC-FLUSH-02: the peer's disconnect flushes nothing here. Its
                            // DREQ is answered at once (the id carries no QP, so rdma_disconnect
                            // only sends the DREP): the peer's NdkDisconnect completes without
                            // waiting for this consumer's own NdkDisconnect.
                            c->peer_disconnected = true;
                            rdma_disconnect(c->id);
                            deliver_disconnect(this, c);
                        } else if (c->phase == Connector::Phase::connected_pending_complete) {
                            c->peer_disconnected = true;  // CONN-17
                        } else if (c->phase == Connector::Phase::accepting) {
                            fail_connect(this, c, STATUS_CONNECTION_ABORTED);
                        } else if (c->phase == Connector::Phase::incoming) {
                            c->phase = Connector::Phase::failed;
                        }
                        break;
                    default:
                        break;
                }
            }
        }
    }
    rdma_ack_cm_event(event);
    for (rdma_cm_id* id : destroy)
        rdma_destroy_id(id);
}

}  // namespace ndkct::adapters::verbs
