// The split provider's connectors, listeners and shared endpoints: where connections cross.
//
// A test names loopback addresses (127.0.0.1, ::1) because in one process both ends are its own.
// Split, "loopback" means the other node: a connect to 127.0.0.1:P goes to node B's address on
// the link, where the listener that listens on port P on A also listens (made there on the first
// connect to it); listeners, endpoints and connect sources on loopback use A's own address.
// Neither provider ever sees a loopback address (the verbs provider runs without its loopback
// alias here). Addresses the providers report are shown back in the consumer's loopback form,
// as a provider that served loopback itself would (CONN-ADDR-03).
#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "split.hpp"

namespace ndkct::twonode {

void materialize_qp(Adapter* ad, Qp* qp);

namespace {

std::mutex g_listeners_mutex;
std::vector<Listener*> g_listeners;  // every listening split listener of this process

uint16_t port_of(const sockaddr* a) {
    if (a->sa_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(a)->sin_port);
    if (a->sa_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(a)->sin6_port);
    return 0;
}

bool is_loopback(const sockaddr* a) {
    if (a->sa_family == AF_INET)
        return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
    if (a->sa_family == AF_INET6) {
        const in6_addr& v6 = reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr;
        return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
    }
    return false;
}

bool is_any(const sockaddr* a) {
    if (a->sa_family == AF_INET)
        return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (a->sa_family == AF_INET6)
        return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
    return false;
}

// Whether `a` is one of this adapter's nodes' link addresses; which node.
bool is_node_address(Adapter* ad, const sockaddr* a, Node* node) {
    for (int n = 0; n < 2; ++n) {
        if (a->sa_family == AF_INET && ad->have4[n] &&
            reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr == ad->addr4[n].s_addr) {
            if (node) *node = static_cast<Node>(n);
            return true;
        }
        if (a->sa_family == AF_INET6 && ad->have6[n] &&
            std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, &ad->addr6[n], 16) ==
                0) {
            if (node) *node = static_cast<Node>(n);
            return true;
        }
    }
    return false;
}

// The consumer's address as node `node` must see it: loopback becomes the node's link address
// of the same family (when known). `alias` gets the family when it substituted.
sockaddr_storage on_node(Adapter* ad, const sockaddr* in, ULONG length, Node node, int* alias) {
    sockaddr_storage out{};
    std::memcpy(&out, in, std::min<size_t>(length, sizeof out));
    if (alias) *alias = 0;
    if (!is_loopback(in)) {
        // Node A's own address named for B (a listener made again there): B's.
        Node which;
        if (node == Node::b && is_node_address(ad, in, &which) && which == Node::a) {
            if (in->sa_family == AF_INET)
                reinterpret_cast<sockaddr_in*>(&out)->sin_addr = ad->addr4[1];
            else
                reinterpret_cast<sockaddr_in6*>(&out)->sin6_addr = ad->addr6[1];
        }
        return out;
    }
    int n = static_cast<int>(node);
    if (in->sa_family == AF_INET && ad->have4[n]) {
        reinterpret_cast<sockaddr_in*>(&out)->sin_addr = ad->addr4[n];
        if (alias) *alias = AF_INET;
    } else if (in->sa_family == AF_INET6 && ad->have6[n]) {
        reinterpret_cast<sockaddr_in6*>(&out)->sin6_addr = ad->addr6[n];
        reinterpret_cast<sockaddr_in6*>(&out)->sin6_scope_id = 0;
        if (alias) *alias = AF_INET6;
    }
    return out;
}

ULONG length_of(const sockaddr* a) {
    return a->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

// A reported address in the consumer's form: a node's link address as loopback.
void to_view(Adapter* ad, PSOCKADDR address, ULONG length, int alias) {
    if (!alias || !address || length < sizeof(sockaddr_in)) return;
    if (!is_node_address(ad, address, nullptr)) return;
    if (address->sa_family == AF_INET)
        reinterpret_cast<sockaddr_in*>(address)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (length >= sizeof(sockaddr_in6))
        reinterpret_cast<sockaddr_in6*>(address)->sin6_addr = in6addr_loopback;
}

Adapter* adapter_of(NDK_ADAPTER* a) {
    return reinterpret_cast<Adapter*>(a);
}

// ---- Events of B's connectors and listeners ----

struct ConnectorEvents : Target {
    Connector* c;
    explicit ConnectorEvents(Connector* x) : c(x) {}
    void on_event(Event kind, Reader& r) override {
        if (kind != Event::disconnect) return;
        bool ex = r.u8() != 0;
        ULONG reason = r.u32();
        if (ex && c->disconnect_ex)
            c->disconnect_ex(c->disconnect_context, reason);
        else if (!ex && c->disconnect)
            c->disconnect(c->disconnect_context);
    }
};

struct ListenerEvents : Target {
    Listener* l;
    explicit ListenerEvents(Listener* x) : l(x) {}
    void on_event(Event kind, Reader& r) override {
        if (kind != Event::connect_request) return;
        uint64_t handle = r.u64();
        Adapter* ad = l->adapter;
        auto* c = ad->make<Connector>(Kind::connector, &kConnectorDispatch);
        c->node = Node::b;
        c->b = handle;
        c->alias_family = l->alias_family;
        if (l->connect_event)
            l->connect_event(l->connect_context, reinterpret_cast<NDK_CONNECTOR*>(c));
    }
};

// The listener listens on B too (the first connect to its port made on any split adapter).
void listen_on_b(Listener* l) {
    Adapter* ad = l->adapter;
    std::lock_guard lock(ad->materialize);
    if (l->b_listening) return;
    Peer& peer = ad->need_peer();
    if (!l->events) l->events = ad->keep(std::make_unique<ListenerEvents>(l));
    Waiter* made = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
    Writer w;
    w.u64(reinterpret_cast<uint64_t>(l->events));
    w.u64(reinterpret_cast<uint64_t>(static_cast<Target*>(made)));
    l->b = create_on_b(ad, Op::create_listener, w, made);
    auto* consumer = reinterpret_cast<const sockaddr*>(&l->consumer_address);
    sockaddr_storage there = on_node(ad, consumer, length_of(consumer), Node::b, nullptr);
    Waiter* done = static_cast<Waiter*>(ad->keep(std::make_unique<Waiter>()));
    Writer lw;
    lw.u64(l->b);
    put_address(lw, reinterpret_cast<sockaddr*>(&there), length_of(consumer));
    lw.u64(reinterpret_cast<uint64_t>(static_cast<Target*>(done)));
    Reader r(peer.call(Op::listen, lw, done));
    NTSTATUS st = r.i32();
    if (st == STATUS_PENDING && done->wait()) st = done->status;
    if (st != STATUS_SUCCESS) {
        split_log("the listener on port %u could not listen on node B: 0x%08x", port_of(consumer),
                  static_cast<unsigned>(st));
        return;
    }
    if (l->paused) {
        Writer pw;
        pw.u64(l->b);
        pw.u8(1);
        peer.call(Op::control_connect_events, pw);
    }
    l->b_listening = true;
    ad->crossed = true;
}

// A listener that listened on port 0 learns the port A's provider picked (CONN-25): node B's
// listener takes the same one, so that the consumer's connect to it reaches B.
void learn_port(Listener* l) {
    auto* a = reinterpret_cast<sockaddr*>(&l->consumer_address);
    if (port_of(a) != 0 || !l->a) return;
    sockaddr_storage bound{};
    ULONG length = sizeof bound;
    auto* in = inner<NDK_LISTENER>(l->a);
    if (in->Dispatch->NdkGetLocalAddress(in, reinterpret_cast<PSOCKADDR>(&bound), &length) !=
        STATUS_SUCCESS)
        return;
    uint16_t port = port_of(reinterpret_cast<sockaddr*>(&bound));
    if (a->sa_family == AF_INET)
        reinterpret_cast<sockaddr_in*>(a)->sin_port = htons(port);
    else
        reinterpret_cast<sockaddr_in6*>(a)->sin6_port = htons(port);
}

// The split listener (of any adapter of this process) that a connect to `dest` reaches.
Listener* listener_for(const sockaddr* dest) {
    uint16_t port = port_of(dest);
    std::lock_guard lock(g_listeners_mutex);
    for (Listener* l : g_listeners) {
        learn_port(l);
        auto* a = reinterpret_cast<const sockaddr*>(&l->consumer_address);
        if (port_of(a) != port) continue;
        if (a->sa_family != dest->sa_family && !is_any(a)) continue;
        return l;
    }
    return nullptr;
}

void settle_on_a(Qp* q) {
    if (!q) return;
    auto unresolved = Qp::Home::unresolved;
    if (q->home.compare_exchange_strong(unresolved, Qp::Home::a)) {
        std::lock_guard lock(q->receives_mutex);
        q->receives.clear();
        if (q->srq) {
            std::lock_guard sl(q->srq->receives_mutex);
            q->srq->receives.clear();  // the SRQ serves A: its receives stay there
        }
    }
}

// ---- Connector ----

NTSTATUS connect_common(
    Connector* c, Qp* q, const PSOCKADDR src, ULONG src_length, const PSOCKADDR dest,
    ULONG dest_length,
    const std::function<NTSTATUS(NDK_QP*, PSOCKADDR, ULONG, PSOCKADDR, ULONG)>& call) {
    Adapter* ad = c->adapter;
    if (c->node == Node::b) return STATUS_INVALID_DEVICE_REQUEST;  // B's are passive connectors
    sockaddr_storage dst{}, source{};
    PSOCKADDR dst_p = dest, src_p = src;
    if (dest && dest_length >= sizeof(sockaddr_in) && is_loopback(dest)) {
        // The other end is node B: its listener listens there too, and the connect goes there.
        try {
            ad->need_peer();
            if (Listener* l = listener_for(dest)) listen_on_b(l);
        } catch (const PeerLost& e) {
            split_log("a connect to %s port %u cannot reach node B: %s",
                      dest->sa_family == AF_INET6 ? "::1" : "127.0.0.1", port_of(dest), e.what());
            return STATUS_HOST_UNREACHABLE;
        }
        int alias = 0;
        dst = on_node(ad, dest, dest_length, Node::b, &alias);
        c->alias_family = alias;
        dst_p = reinterpret_cast<PSOCKADDR>(&dst);
        ad->crossed = true;
    }
    if (src && src_length >= sizeof(sockaddr_in) && is_loopback(src)) {
        source = on_node(ad, src, src_length, Node::a, nullptr);
        src_p = reinterpret_cast<PSOCKADDR>(&source);
    }
    settle_on_a(q);
    return call(q ? static_cast<NDK_QP*>(q->a) : nullptr, src_p, src_length, dst_p, dest_length);
}

NTSTATUS split_connect(NDK_CONNECTOR* cc, NDK_QP* qp, const PSOCKADDR src, ULONG src_length,
                       const PSOCKADDR dest, ULONG dest_length, ULONG ird, ULONG ord,
                       const PVOID data, ULONG data_length, NDK_FN_REQUEST_COMPLETION* completion,
                       PVOID context) {
    auto* c = as<Connector>(cc);
    auto* in = inner<NDK_CONNECTOR>(c->a);
    return connect_common(c, qp ? as<Qp>(qp) : nullptr, src, src_length, dest, dest_length,
                          [&](NDK_QP* q, PSOCKADDR s, ULONG sl, PSOCKADDR d, ULONG dl) {
                              return in->Dispatch->NdkConnect(in, q, s, sl, d, dl, ird, ord, data,
                                                              data_length, completion, context);
                          });
}

NTSTATUS split_connect_with_shared_endpoint(NDK_CONNECTOR* cc, NDK_QP* qp,
                                            NDK_SHARED_ENDPOINT* endpoint, const PSOCKADDR dest,
                                            ULONG dest_length, ULONG ird, ULONG ord,
                                            const PVOID data, ULONG data_length,
                                            NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    auto* c = as<Connector>(cc);
    auto* in = inner<NDK_CONNECTOR>(c->a);
    auto* e = endpoint ? inner<NDK_SHARED_ENDPOINT>(as<Obj>(endpoint)->a) : nullptr;
    return connect_common(c, qp ? as<Qp>(qp) : nullptr, nullptr, 0, dest, dest_length,
                          [&](NDK_QP* q, PSOCKADDR, ULONG, PSOCKADDR d, ULONG dl) {
                              return in->Dispatch->NdkConnectWithSharedEndpoint(
                                  in, q, e, d, dl, ird, ord, data, data_length, completion,
                                  context);
                          });
}

NTSTATUS split_complete_connect(NDK_CONNECTOR* cc, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                                PVOID event_context, NDK_FN_REQUEST_COMPLETION* completion,
                                PVOID context) {
    auto* c = as<Connector>(cc);
    if (c->node == Node::b) return STATUS_INVALID_DEVICE_REQUEST;
    auto* in = inner<NDK_CONNECTOR>(c->a);
    return in->Dispatch->NdkCompleteConnect(in, event, event_context, completion, context);
}

NTSTATUS split_complete_connect_ex(NDK_CONNECTOR* cc, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event,
                                   PVOID event_context, NDK_FN_REQUEST_COMPLETION* completion,
                                   PVOID context) {
    auto* c = as<Connector>(cc);
    if (c->node == Node::b) return STATUS_INVALID_DEVICE_REQUEST;
    auto* in = inner<NDK_CONNECTOR>(c->a);
    return in->Dispatch->NdkCompleteConnectEx(in, event, event_context, completion, context);
}

NTSTATUS accept_common(Connector* c, Qp* q, ULONG ird, ULONG ord, const PVOID data,
                       ULONG data_length, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                       NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event_ex, PVOID event_context,
                       NDK_FN_REQUEST_COMPLETION* completion, PVOID context, bool ex) {
    Adapter* ad = c->adapter;
    if (c->node == Node::a) {
        settle_on_a(q);
        auto* in = inner<NDK_CONNECTOR>(c->a);
        NDK_QP* iq = q ? static_cast<NDK_QP*>(q->a) : nullptr;
        return ex ? in->Dispatch->NdkAcceptEx(in, iq, ird, ord, data, data_length, event_ex,
                                              event_context, completion, context)
                  : in->Dispatch->NdkAccept(in, iq, ird, ord, data, data_length, event,
                                            event_context, completion, context);
    }
    // The connection came to node B: the QP that accepts it lives there from now on.
    try {
        if (!q) return STATUS_INVALID_PARAMETER;
        if (q->home.load() == Qp::Home::a) return STATUS_INVALID_DEVICE_STATE;  // in use on A
        materialize_qp(ad, q);
        c->disconnect = event;
        c->disconnect_ex = event_ex;
        c->disconnect_context = event_context;
        if (!c->events) c->events = ad->keep(std::make_unique<ConnectorEvents>(c));
        Join* join = new_join(ad, completion, nullptr, context);
        Writer w;
        w.u64(c->b);
        w.u64(q->b);
        w.u32(ird);
        w.u32(ord);
        w.bytes(data, data ? data_length : 0);
        w.u8(ex ? 1 : 0);
        w.u8((ex ? event_ex != nullptr : event != nullptr) ? 1 : 0);
        w.u64(reinterpret_cast<uint64_t>(c->events));
        w.u64(reinterpret_cast<uint64_t>(static_cast<Target*>(join)));
        ++join->left;
        Reader r(ad->need_peer().call(Op::accept, w, join));
        NTSTATUS st = r.i32();
        if (st != STATUS_PENDING) --join->left;
        return join_finish(join, st == STATUS_PENDING, st);
    } catch (const PeerLost& e) {
        split_log("NdkAccept on node B: %s", e.what());
        return STATUS_CONNECTION_ABORTED;
    }
}

NTSTATUS split_accept(NDK_CONNECTOR* cc, NDK_QP* qp, ULONG ird, ULONG ord, const PVOID data,
                      ULONG data_length, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                      PVOID event_context, NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    return accept_common(as<Connector>(cc), qp ? as<Qp>(qp) : nullptr, ird, ord, data, data_length,
                         event, nullptr, event_context, completion, context, false);
}

NTSTATUS split_accept_ex(NDK_CONNECTOR* cc, NDK_QP* qp, ULONG ird, ULONG ord, const PVOID data,
                         ULONG data_length, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event,
                         PVOID event_context, NDK_FN_REQUEST_COMPLETION* completion,
                         PVOID context) {
    return accept_common(as<Connector>(cc), qp ? as<Qp>(qp) : nullptr, ird, ord, data, data_length,
                         nullptr, event, event_context, completion, context, true);
}

NTSTATUS split_reject(NDK_CONNECTOR* cc, const PVOID data, ULONG data_length) {
    auto* c = as<Connector>(cc);
    if (c->node == Node::a) {
        auto* in = inner<NDK_CONNECTOR>(c->a);
        return in->Dispatch->NdkReject(in, data, data_length);
    }
    try {
        Writer w;
        w.u64(c->b);
        w.bytes(data, data ? data_length : 0);
        Reader r(c->adapter->need_peer().call(Op::reject, w));
        return r.i32();
    } catch (const PeerLost&) {
        return STATUS_CONNECTION_ABORTED;
    }
}

NTSTATUS split_get_connection_data(NDK_CONNECTOR* cc, ULONG* ird, ULONG* ord, PVOID data,
                                   ULONG* length) {
    auto* c = as<Connector>(cc);
    if (c->node == Node::a) {
        auto* in = inner<NDK_CONNECTOR>(c->a);
        return in->Dispatch->NdkGetConnectionData(in, ird, ord, data, length);
    }
    if (!length) return STATUS_INVALID_PARAMETER;
    try {
        Writer w;
        w.u64(c->b);
        w.u32(*length);
        w.u8(data ? 1 : 0);
        w.u8(ird && ord ? 1 : 0);
        Reader r(c->adapter->need_peer().call(Op::connection_data, w));
        NTSTATUS st = r.i32();
        ULONG out_length = r.u32();
        ULONG in_limit = r.u32(), out_limit = r.u32();
        auto bytes = r.bytes();
        if (data && !bytes.empty())
            std::memcpy(data, bytes.data(), std::min<size_t>(bytes.size(), *length));
        *length = out_length;
        if (ird) *ird = in_limit;
        if (ord) *ord = out_limit;
        return st;
    } catch (const PeerLost&) {
        return STATUS_CONNECTION_ABORTED;
    }
}

NTSTATUS address_of(Obj* o, Op op, int alias, PSOCKADDR address, ULONG* length,
                    const std::function<NTSTATUS(PSOCKADDR, ULONG*)>& on_a) {
    Adapter* ad = o->adapter;
    NTSTATUS st;
    if (o->a) {
        st = on_a(address, length);
    } else {
        if (!length) return STATUS_INVALID_PARAMETER;
        try {
            Writer w;
            w.u64(o->b);
            w.u32(*length);
            w.u8(address ? 1 : 0);
            Reader r(ad->need_peer().call(op, w));
            st = r.i32();
            ULONG n = r.u32();
            auto bytes = r.bytes();
            if (address && !bytes.empty())
                std::memcpy(address, bytes.data(), std::min<size_t>(bytes.size(), *length));
            *length = n;
        } catch (const PeerLost&) {
            return STATUS_CONNECTION_ABORTED;
        }
    }
    if (st == STATUS_SUCCESS && length) to_view(ad, address, *length, alias);
    return st;
}

NTSTATUS split_connector_local_address(NDK_CONNECTOR* cc, PSOCKADDR address, ULONG* length) {
    auto* c = as<Connector>(cc);
    return address_of(c, Op::local_address, c->alias_family, address, length,
                      [&](PSOCKADDR a, ULONG* l) {
                          auto* in = inner<NDK_CONNECTOR>(c->a);
                          return in->Dispatch->NdkGetLocalAddress(in, a, l);
                      });
}

NTSTATUS split_connector_peer_address(NDK_CONNECTOR* cc, PSOCKADDR address, ULONG* length) {
    auto* c = as<Connector>(cc);
    return address_of(c, Op::peer_address, c->alias_family, address, length,
                      [&](PSOCKADDR a, ULONG* l) {
                          auto* in = inner<NDK_CONNECTOR>(c->a);
                          return in->Dispatch->NdkGetPeerAddress(in, a, l);
                      });
}

NTSTATUS split_disconnect(NDK_CONNECTOR* cc, NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    auto* c = as<Connector>(cc);
    if (c->node == Node::a) {
        auto* in = inner<NDK_CONNECTOR>(c->a);
        return in->Dispatch->NdkDisconnect(in, completion, context);
    }
    Adapter* ad = c->adapter;
    try {
        Join* join = new_join(ad, completion, nullptr, context);
        Writer w;
        w.u64(c->b);
        w.u64(reinterpret_cast<uint64_t>(static_cast<Target*>(join)));
        ++join->left;
        Reader r(ad->need_peer().call(Op::disconnect, w, join));
        NTSTATUS st = r.i32();
        if (st != STATUS_PENDING) --join->left;
        return join_finish(join, st == STATUS_PENDING, st);
    } catch (const PeerLost&) {
        return STATUS_CONNECTION_ABORTED;
    }
}

// ---- Listener ----

void listener_event_a(void* ctx, NDK_CONNECTOR* made) {
    auto* l = static_cast<Listener*>(ctx);
    Adapter* ad = l->adapter;
    auto* c = ad->make<Connector>(Kind::connector, &kConnectorDispatch);
    c->node = Node::a;
    c->a = made;
    if (made) c->Header.Version = made->Header.Version;
    c->alias_family = l->alias_family;
    if (l->connect_event)
        l->connect_event(l->connect_context, made ? reinterpret_cast<NDK_CONNECTOR*>(c) : nullptr);
}

NTSTATUS split_listen(NDK_LISTENER* ll, const PSOCKADDR address, ULONG length,
                      NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    auto* l = as<Listener>(ll);
    Adapter* ad = l->adapter;
    auto* in = inner<NDK_LISTENER>(l->a);
    if (!address || length < sizeof(sockaddr_in))
        return in->Dispatch->NdkListen(in, address, length, completion, context);
    int alias = 0;
    sockaddr_storage here = on_node(ad, address, length, Node::a, &alias);
    NTSTATUS st = in->Dispatch->NdkListen(in, reinterpret_cast<PSOCKADDR>(&here), length,
                                          completion, context);
    if (st == STATUS_SUCCESS || st == STATUS_PENDING) {
        l->alias_family = alias;
        std::memcpy(&l->consumer_address, address,
                    std::min<size_t>(length, sizeof l->consumer_address));
        l->listening = true;
        std::lock_guard lock(g_listeners_mutex);
        g_listeners.push_back(l);
    }
    return st;
}

NTSTATUS split_listener_local_address(NDK_LISTENER* ll, PSOCKADDR address, ULONG* length) {
    auto* l = as<Listener>(ll);
    auto* in = inner<NDK_LISTENER>(l->a);
    NTSTATUS st = in->Dispatch->NdkGetLocalAddress(in, address, length);
    if (st == STATUS_SUCCESS && length) to_view(l->adapter, address, *length, l->alias_family);
    return st;
}

void split_control_connect_events(NDK_LISTENER* ll, BOOLEAN pause) {
    auto* l = as<Listener>(ll);
    l->paused = pause;
    auto* in = inner<NDK_LISTENER>(l->a);
    in->Dispatch->NdkControlConnectEvents(in, pause);
    if (l->b_listening) {
        try {
            Writer w;
            w.u64(l->b);
            w.u8(pause ? 1 : 0);
            l->adapter->need_peer().call(Op::control_connect_events, w);
        } catch (const PeerLost&) {
        }
    }
}

// ---- Shared endpoint ----

NTSTATUS split_endpoint_local_address(NDK_SHARED_ENDPOINT* ee, PSOCKADDR address, ULONG* length) {
    auto* e = as<Endpoint>(ee);
    auto* in = inner<NDK_SHARED_ENDPOINT>(e->a);
    NTSTATUS st = in->Dispatch->NdkGetLocalAddress(in, address, length);
    if (st == STATUS_SUCCESS && length) to_view(e->adapter, address, *length, e->alias_family);
    return st;
}

}  // namespace

void forget_listener(Obj* o) {
    if (o->kind != Kind::listener) return;
    std::lock_guard lock(g_listeners_mutex);
    std::erase(g_listeners, static_cast<Listener*>(o));
}

NTSTATUS split_create_shared_endpoint(NDK_ADAPTER* a, const PSOCKADDR address, ULONG length,
                                      NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                                      NDK_SHARED_ENDPOINT** out) {
    auto* ad = adapter_of(a);
    auto* e = ad->make<Endpoint>(Kind::endpoint, &kEndpointDispatch);
    sockaddr_storage here{};
    PSOCKADDR use = address;
    if (address && length >= sizeof(sockaddr_in)) {
        here = on_node(ad, address, length, Node::a, &e->alias_family);
        use = reinterpret_cast<PSOCKADDR>(&here);
    }
    return create_a(ad, e, completion, context, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return ad->a->Dispatch->NdkCreateSharedEndpoint(
                            ad->a, use, length, cb, ctx,
                            reinterpret_cast<NDK_SHARED_ENDPOINT**>(made));
                    });
}

NTSTATUS split_create_connector(NDK_ADAPTER* a, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                                NDK_CONNECTOR** out) {
    auto* ad = adapter_of(a);
    auto* c = ad->make<Connector>(Kind::connector, &kConnectorDispatch);
    return create_a(ad, c, completion, context, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return ad->a->Dispatch->NdkCreateConnector(
                            ad->a, cb, ctx, reinterpret_cast<NDK_CONNECTOR**>(made));
                    });
}

NTSTATUS split_create_listener(NDK_ADAPTER* a, NDK_FN_CONNECT_EVENT_CALLBACK* event,
                               PVOID event_context, NDK_FN_CREATE_COMPLETION* completion,
                               PVOID context, NDK_LISTENER** out) {
    auto* ad = adapter_of(a);
    auto* l = ad->make<Listener>(Kind::listener, &kListenerDispatch);
    l->connect_event = event;
    l->connect_context = event_context;
    return create_a(ad, l, completion, context, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return ad->a->Dispatch->NdkCreateListener(
                            ad->a, event ? listener_event_a : nullptr, l, cb, ctx,
                            reinterpret_cast<NDK_LISTENER**>(made));
                    });
}

// This machine's addresses on its RDMA device, from the RoCE GIDs in sysfs (::ffff:a.b.c.d is
// IPv4; any other GID that is not link-local is IPv6), for when the environment names none.
void device_addresses(std::string& v4, std::string& v6) {
    std::error_code ec;
    for (const auto& dev : std::filesystem::directory_iterator("/sys/class/infiniband", ec)) {
        for (const auto& g : std::filesystem::directory_iterator(dev.path() / "ports/1/gids", ec)) {
            std::ifstream in(g.path());
            std::string text;
            if (!(in >> text) || text.size() != 39) continue;
            std::string hex;
            for (char c : text)
                if (c != ':') hex += c;
            uint8_t raw[16];
            for (int i = 0; i < 16; ++i)
                raw[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
            static const uint8_t zero[16] = {};
            if (std::memcmp(raw, zero, 16) == 0) continue;
            char buf[INET6_ADDRSTRLEN];
            bool mapped = std::memcmp(raw, zero, 10) == 0 && raw[10] == 0xff && raw[11] == 0xff;
            if (mapped && v4.empty() && raw[12] != 127) {
                inet_ntop(AF_INET, raw + 12, buf, sizeof buf);
                v4 = buf;
            } else if (!mapped && v6.empty() && !(raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80)) {
                inet_ntop(AF_INET6, raw, buf, sizeof buf);
                v6 = buf;
            }
        }
        if (!v4.empty()) return;
    }
}

void learn_addresses(Adapter* ad, int fd, const std::string& b4, const std::string& b6) {
    auto parse4 = [](const std::string& s, in_addr& out) {
        return !s.empty() && inet_pton(AF_INET, s.c_str(), &out) == 1;
    };
    auto parse6 = [](const std::string& s, in6_addr& out) {
        return !s.empty() && inet_pton(AF_INET6, s.c_str(), &out) == 1;
    };
    if (fd < 0) {
        // Node A: this machine's address on the RDMA link, as the environment names it, else
        // as its RDMA device's GIDs do.
        std::string v4, v6;
        if (const char* v = std::getenv("NDKCT_RDMA_ADDR")) v4 = v;
        if (const char* v = std::getenv("NDKCT_RDMA_ADDR6")) v6 = v;
        if (v4.empty()) device_addresses(v4, v6);
        ad->have4[0] = parse4(v4, ad->addr4[0]);
        ad->have6[0] = parse6(v6, ad->addr6[0]);
        return;
    }
    ad->have4[1] = parse4(b4, ad->addr4[1]);
    ad->have6[1] = parse6(b6, ad->addr6[1]);
    // Without names, the side channel's own addresses (the same network as RDMA, as perftest
    // and ibv_rc_pingpong assume).
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (!ad->have4[1] && ::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 &&
        ss.ss_family == AF_INET) {
        ad->addr4[1] = reinterpret_cast<sockaddr_in*>(&ss)->sin_addr;
        ad->have4[1] = true;
    }
    len = sizeof ss;
    if (!ad->have4[0] && ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 &&
        ss.ss_family == AF_INET) {
        ad->addr4[0] = reinterpret_cast<sockaddr_in*>(&ss)->sin_addr;
        ad->have4[0] = true;
    }
    if (tracing()) {
        char a4[INET_ADDRSTRLEN] = "?", bb4[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &ad->addr4[0], a4, sizeof a4);
        inet_ntop(AF_INET, &ad->addr4[1], bb4, sizeof bb4);
        split_log("link addresses: A %s, B %s", a4, bb4);
    }
}

const NDK_CONNECTOR_DISPATCH kConnectorDispatch = {
    .NdkCloseConnector = split_close,
    .NdkQueryExtension = split_query_extension,
    .NdkConnect = split_connect,
    .NdkConnectWithSharedEndpoint = split_connect_with_shared_endpoint,
    .NdkCompleteConnect = split_complete_connect,
    .NdkAccept = split_accept,
    .NdkReject = split_reject,
    .NdkGetConnectionData = split_get_connection_data,
    .NdkGetLocalAddress = split_connector_local_address,
    .NdkGetPeerAddress = split_connector_peer_address,
    .NdkDisconnect = split_disconnect,
    .NdkCompleteConnectEx = split_complete_connect_ex,
    .NdkAcceptEx = split_accept_ex,
};

const NDK_LISTENER_DISPATCH kListenerDispatch = {
    .NdkCloseListener = split_close,
    .NdkQueryExtension = split_query_extension,
    .NdkListen = split_listen,
    .NdkGetLocalAddress = split_listener_local_address,
    .NdkControlConnectEvents = split_control_connect_events,
};

const NDK_SHARED_ENDPOINT_DISPATCH kEndpointDispatch = {
    .NdkCloseSharedEndpoint = split_close,
    .NdkQueryExtension = split_query_extension,
    .NdkGetLocalAddress = split_endpoint_local_address,
};

}  // namespace ndkct::twonode
