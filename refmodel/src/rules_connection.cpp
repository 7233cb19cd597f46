// Connections: connectors, listeners and shared endpoints (CONN-*), on the model's own network:
// every adapter of one model can reach every other (and itself: loopback, AI-FLAG-07).
#include <algorithm>
#include <functional>

#include "ndkct/model/model.hpp"

namespace ndkct::model {

namespace {

std::string num(uint64_t v) {
    return std::to_string(v);
}

constexpr uint32_t kSockaddrIn = 16;         // sizeof(SOCKADDR_IN)
constexpr uint32_t kSockaddrIn6 = 28;        // sizeof(SOCKADDR_IN6)
constexpr uint16_t kEphemeralFirst = 49152;  // CONN-07, CONN-11, CONN-25: 49152..65535

uint32_t sockaddr_size(const SocketAddress& a) {
    return a.family == 10 ? kSockaddrIn6 : kSockaddrIn;
}

// CONN-IP-01: IPv4 (AF_INET) and IPv6 (AF_INET6) alike.
bool valid_address(const SocketAddress& a) {
    return a.present && (a.family == 2 || a.family == 10) && a.length >= sockaddr_size(a);
}

// CONN-04, CONN-06, CONN-10, CONN-13: the documentation ranges (RFC 5737 192.0.2.0/24,
// 198.51.100.0/24, 203.0.113.0/24; RFC 3849 2001:db8::/32) are never an adapter's address nor a
// reachable host: the model's network knows them as not local and unreachable.
bool documentation_address(const SocketAddress& a) {
    const auto& b = a.address;
    if (a.family == 2)
        return (b[0] == 192 && b[1] == 0 && b[2] == 2) ||
               (b[0] == 198 && b[1] == 51 && b[2] == 100) ||
               (b[0] == 203 && b[1] == 0 && b[2] == 113);
    if (a.family == 10) return b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8;
    return false;
}

bool same_endpoint(const SocketAddress& a, const SocketAddress& b) {
    return a.family == b.family && a.port == b.port && a.address == b.address;
}

// The port a provider picks for a port-0 address; the reference provider's choice.
uint16_t ephemeral_port(ObjectId id) {
    return static_cast<uint16_t>(kEphemeralFirst + id % 16384);
}

}  // namespace

// CONN-LST-01/02/04: an endpoint stays taken while a listener listens on it, a shared endpoint
// holds it, or an open connector uses it as its local address (accepted connectors hold their
// listener's). The endpoint an open object holds, with whether the provider picked its port
// (CONN-07, CONN-11, CONN-25), and a phrase naming the holder; none for other objects.
struct HeldEndpoint {
    const SocketAddress* address = nullptr;
    bool picked = false;
    const char* holder = "";
};

static HeldEndpoint held_endpoint(const Object& o) {
    if (o.life == Life::closed) return {};
    if (const auto* l = std::get_if<ListenerState>(&o.state)) {
        if (l->listening) return {&l->address, l->ephemeral, "listener "};
    } else if (const auto* s = std::get_if<SharedEndpointState>(&o.state)) {
        return {&s->address, s->ephemeral, "shared endpoint "};
    } else if (const auto* c = std::get_if<ConnectorState>(&o.state)) {
        using P = ConnectorState::Phase;
        if (c->phase != P::idle && c->phase != P::failed && c->phase != P::rejected &&
            c->local.present)
            return {&c->local, c->ephemeral_local, "connector "};
    }
    return {};
}

// The holder of `address` other than `except`, or empty. A port the provider picked and the
// model has not learnt (check mode) is taken by nobody the model knows of.
static std::string endpoint_holder(const std::vector<Object>& objects, const SocketAddress& address,
                                   ObjectId except) {
    if (address.port == 0) return {};
    for (const Object& o : objects) {
        HeldEndpoint held = held_endpoint(o);
        if (o.id != except && held.address && same_endpoint(*held.address, address))
            return held.holder + num(o.id);
    }
    return {};
}

// CONN-07, CONN-25, CONN-LST-02: in check mode the model does not learn the port a provider
// picks for a port-0 endpoint (a connector's own, a port-0 listener or shared endpoint): it holds
// port 0 here. A request for a port of the ephemeral range may therefore name one of them, and a
// refusal with STATUS_SHARING_VIOLATION is then right. Empty when no such endpoint could be it.
static std::string unlearnt_holder(const std::vector<Object>& objects, const SocketAddress& address,
                                   ObjectId except) {
    if (address.port < kEphemeralFirst) return {};
    for (const Object& o : objects) {
        HeldEndpoint held = held_endpoint(o);
        if (o.id != except && held.address && held.picked && held.address->present &&
            held.address->port == 0 && held.address->family == address.family)
            return held.holder + num(o.id);
    }
    return {};
}

// The refusal above, as an outcome the docs allow for an otherwise valid request.
static void may_be_held_unlearnt(Expectation& e, const std::vector<Object>& objects,
                                 const SocketAddress& address, ObjectId except, RuleIds rules) {
    if (std::string holder = unlearnt_holder(objects, address, except); !holder.empty())
        e.also_allowed.push_back({STATUS_SHARING_VIOLATION, rules, Strength::documented,
                                  address.describe() + " may be the ephemeral port " +
                                      "the provider picked for " + holder});
}

// ---- Creation ----

Expectation Model::expect_call(const calls::CreateConnector& c) const {
    Expectation e;
    if (!require(e, c.adapter, Kind::adapter, "pNdkAdapter")) return e;
    e.may_pend = e.may_lack_resources = true;  // CONN-01
    e.success_rules = {"CONN-01"};
    return e;
}

void Model::commit(const calls::CreateConnector& c, const Observed&, Applied& applied,
                   Stage stage) {
    create_stage(Kind::connector, c.adapter, ConnectorState{}, {}, applied, stage);
}

Expectation Model::expect_call(const calls::CreateListener& c) const {
    Expectation e;
    if (!require(e, c.adapter, Kind::adapter, "pNdkAdapter")) return e;
    e.may_pend = e.may_lack_resources = true;  // CONN-05
    e.success_rules = {"CONN-05"};
    return e;
}

void Model::commit(const calls::CreateListener& c, const Observed&, Applied& applied, Stage stage) {
    ListenerState l;
    l.has_connect_event = c.has_connect_event;
    create_stage(Kind::listener, c.adapter, l, {}, applied, stage);
}

Expectation Model::expect_call(const calls::CreateSharedEndpoint& c) const {
    Expectation e;
    if (!require(e, c.adapter, Kind::adapter, "pNdkAdapter")) return e;
    e.may_pend = e.may_lack_resources = true;  // CONN-06
    e.success_rules = {"CONN-06", "CONN-07"};
    if (!valid_address(c.address)) {
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-06"}, Strength::documented, "not a usable address");
        return e;
    }
    if (documentation_address(c.address)) {
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-06"}, Strength::documented,
               c.address.describe() + " is not an address of this adapter");
        return e;
    }
    if (std::string holder = endpoint_holder(objects_, c.address, 0); !holder.empty())
        e.fail(STATUS_SHARING_VIOLATION, {"CONN-06", "CONN-LST-04"}, Strength::documented,
               c.address.describe() + " is held by " + holder);
    else if (mode_ == Mode::check)
        may_be_held_unlearnt(e, objects_, c.address, 0, {"CONN-06", "CONN-LST-04"});
    return e;
}

void Model::commit(const calls::CreateSharedEndpoint& c, const Observed&, Applied& applied,
                   Stage stage) {
    SharedEndpointState s{c.address};
    create_stage(Kind::shared_endpoint, c.adapter, s, {}, applied, stage);
    // CONN-07: with port 0 the provider picks an ephemeral port (the reference's choice here; a
    // provider's is learnt from NdkGetSharedEndpointLocalAddress, CONN-26).
    if (c.address.port == 0 && applied.created &&
        (stage == Stage::done || stage == Stage::pending)) {
        auto* se = state_mut<SharedEndpointState>(applied.created);
        se->ephemeral = true;
        if (mode_ == Mode::simulate) se->address.port = ephemeral_port(applied.created);
    }
}

// ---- Passive side: listen, connect events, accept, reject ----

Expectation Model::expect_call(const calls::Listen& c) const {
    Expectation e;
    const Object* o = require(e, c.listener, Kind::listener, "pNdkListener");
    if (!o) return e;
    e.may_pend = e.may_lack_resources = true;  // CONN-04
    e.success_rules = {"CONN-04", "CONN-25"};
    if (!valid_address(c.address)) {
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-04"}, Strength::documented, "not a usable address");
        return e;
    }
    if (documentation_address(c.address)) {
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-04"}, Strength::documented,
               c.address.describe() + " is not an address of this adapter");
        return e;
    }
    // CONN-LST-01, CONN-LST-04: an endpoint still held (by a listener, its accepted connectors,
    // a shared endpoint or a connector) cannot be listened on.
    if (std::string holder = endpoint_holder(objects_, c.address, c.listener); !holder.empty())
        e.fail(STATUS_SHARING_VIOLATION, {"CONN-04", "CONN-LST-01"}, Strength::model_choice,
               c.address.describe() + " is held by " + holder);
    else if (mode_ == Mode::check)
        may_be_held_unlearnt(e, objects_, c.address, c.listener, {"CONN-04", "CONN-LST-01"});
    return e;
}

void Model::commit(const calls::Listen& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done && stage != Stage::completed) return;
    auto* l = state_mut<ListenerState>(c.listener);
    l->listening = true;
    l->address = c.address;
    if (l->address.port == 0) {  // CONN-25: the provider picks; learnt from the address getter
        l->ephemeral = true;
        l->address.port = mode_ == Mode::simulate ? ephemeral_port(c.listener) : 0;
    }
}

Expectation Model::expect_call(const calls::ControlConnectEvents& c) const {
    Expectation e;
    e.returns_void = true;
    require(e, c.listener, Kind::listener, "pNdkListener");
    return e;
}

void Model::commit(const calls::ControlConnectEvents& c, const Observed&, Applied&, Stage) {
    // CONN-CTL-01: paused, requests find no listener (CONN-08); CONN-CTL-02: resumed, requests
    // that arrive afterwards are delivered again.
    state_mut<ListenerState>(c.listener)->paused = c.pause;
}

// The listener that would receive a connect to `destination`, or 0 (CONN-08: refused).
// CONN-LST-03: a listener whose close was requested takes no more requests.
static ObjectId listener_for(const std::vector<Object>& objects, const SocketAddress& destination) {
    for (const Object& o : objects)
        if (o.kind == Kind::listener && o.life == Life::ready) {
            const auto& l = std::get<ListenerState>(o.state);
            if (l.listening && !l.paused && same_endpoint(l.address, destination)) return o.id;
        }
    return 0;
}

// ---- Active side: connect, complete ----

static void check_connect(const Readings& r, Expectation& e, const Object* connector,
                          const Object* qp, uint32_t private_data_length,
                          const SocketAddress& source, const SocketAddress& destination,
                          const std::vector<Object>& objects, const NDK_ADAPTER_INFO& info) {
    e.may_pend = e.may_lack_resources = true;  // CONN-02
    e.success_rules = {"CONN-02", "CONN-15"};
    // CONN-13: a connect the peer does not answer in time fails with STATUS_IO_TIMEOUT (the
    // model's network always answers, but a real one may not).
    e.also_allowed.push_back(
        {STATUS_IO_TIMEOUT, {"CONN-13"}, Strength::documented, "the connect timed out"});
    // CONN-08, CONN-23: a listener's consumer may reject (or its backlog be full).
    e.also_allowed.push_back({STATUS_CONNECTION_REFUSED,
                              {"CONN-08"},
                              Strength::documented,
                              "the peer refused the request"});
    const auto& cs = std::get<ConnectorState>(connector->state);
    const auto& q = std::get<QpState>(qp->state);
    if (cs.phase != ConnectorState::Phase::idle || q.connection != QpState::Connection::idle) {
        e.undefined = true;
        e.undefined_rules = {"CONN-02"};
        e.undefined_why = "the connector or the QP is already in use";
        return;
    }
    // MODEL-CONN-PD-01 (CONN-28 is the caller's duty): more than MaxCallerData must not succeed,
    // and the peer gets none of it.
    if (private_data_length > info.MaxCallerData)
        e.fail(STATUS_INVALID_PARAMETER, {"MODEL-CONN-PD-01"},
               r.private_data_over_limit_invalid ? Strength::reading : Strength::reading_any_error,
               "PrivateDataLength " + num(private_data_length) + " exceeds MaxCallerData " +
                   num(info.MaxCallerData));
    if (!valid_address(destination)) {
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-02"}, Strength::model_choice,
               "not a usable destination");
        return;
    }
    if (documentation_address(destination)) {
        // CONN-13: no such host answers; which of the three a provider reports is its own.
        for (NTSTATUS s : {STATUS_HOST_UNREACHABLE, STATUS_NETWORK_UNREACHABLE, STATUS_IO_TIMEOUT})
            e.fail(s, {"CONN-13"}, Strength::documented,
                   destination.describe() + " is unreachable");
        return;
    }
    if (!listener_for(objects, destination))  // CONN-08: nobody listens there
        e.fail(STATUS_CONNECTION_REFUSED, {"CONN-08"}, Strength::documented,
               "no listener on " + destination.describe());
    // CONN-12: the four-tuple of an existing connection.
    if (source.present && source.port != 0)
        for (const Object& o : objects) {
            const auto* other = std::get_if<ConnectorState>(&o.state);
            if (!other || o.life == Life::closed || o.id == connector->id) continue;
            using P = ConnectorState::Phase;
            if (other->phase == P::idle || other->phase == P::failed ||
                other->phase == P::rejected || other->phase == P::disconnected)
                continue;
            if (same_endpoint(other->local, source) && same_endpoint(other->remote, destination))
                e.fail(STATUS_ADDRESS_ALREADY_EXISTS, {"CONN-12"}, Strength::documented,
                       "connector " + num(o.id) + " already connects " + source.describe() +
                           " to " + destination.describe());
        }
}

Expectation Model::expect_call(const calls::Connect& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    const Object* qp = require(e, c.qp, Kind::qp, "pNdkQp");
    if (!co || !qp) return e;
    if (c.source.present && (!valid_address(c.source) || documentation_address(c.source))) {
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-10"}, Strength::documented,
               "not a local address");  // CONN-10
    } else if (c.source.present) {
        // CONN-09, CONN-LST-01/02/04: a local address and port in use. (CONN-11: port 0 lets
        // the provider pick a free ephemeral one.)
        if (std::string holder = endpoint_holder(objects_, c.source, c.connector); !holder.empty())
            e.fail(STATUS_SHARING_VIOLATION, {"CONN-09", "CONN-LST-01"}, Strength::documented,
                   c.source.describe() + " is held by " + holder);
        else if (mode_ == Mode::check)
            may_be_held_unlearnt(e, objects_, c.source, c.connector, {"CONN-09", "CONN-LST-01"});
    }
    check_connect(readings_, e, co, qp, c.private_data_length, c.source, c.destination, objects_,
                  adapter_info(c.connector));
    return e;
}

Expectation Model::expect_call(const calls::ConnectWithSharedEndpoint& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    const Object* qp = require(e, c.qp, Kind::qp, "pNdkQp");
    const Object* se = require(e, c.shared_endpoint, Kind::shared_endpoint, "pSharedEndpoint");
    if (!co || !qp || !se) return e;
    // CONN-14: from the endpoint's address, with NdkConnect's statuses but the local-address ones.
    const auto& endpoint = std::get<SharedEndpointState>(se->state);
    SocketAddress source = endpoint.address;
    if (endpoint.ephemeral && mode_ == Mode::check) source.port = 0;  // not learnt: not judged
    check_connect(readings_, e, co, qp, c.private_data_length, source, c.destination, objects_,
                  adapter_info(c.connector));
    return e;
}

struct Model::ConnectArgs {
    ObjectId connector, qp, shared_endpoint;
    SocketAddress source, destination;
    uint32_t ird, ord, private_data_length;
};

void Model::connect_stage(const ConnectArgs& a, Stage stage) {
    auto& cs = std::get<ConnectorState>(objects_[a.connector].state);
    switch (stage) {
        case Stage::pending:
        case Stage::done: {
            cs.phase = ConnectorState::Phase::connecting;
            cs.qp = a.qp;
            cs.shared_endpoint = a.shared_endpoint;
            cs.local = a.source;
            cs.remote = a.destination;
            if (!cs.local.present || cs.local.port == 0) {
                // CONN-11: no source, or port 0: the provider gives the connector its own
                // ephemeral endpoint (CONN-LST-02), on the destination's network here.
                cs.ephemeral_local = true;
                if (!cs.local.present) {
                    cs.local = a.destination;
                    cs.local.length = sockaddr_size(a.destination);
                }
                cs.local.port = mode_ == Mode::simulate ? ephemeral_port(a.connector) : 0;
            }
            // CONN-RL-01, AI-08: the requested read limits capped at the adapter's per-QP maxima
            // (which apply whatever the adapter-wide NDIS limits); CONN-RL-02 lowers them further
            // once the peer's are known (Accept).
            const NDK_ADAPTER_INFO& info = adapter_info(a.connector);
            cs.requested_inbound = a.ird;
            cs.requested_outbound = a.ord;
            cs.inbound_read_limit = std::min(a.ird, info.MaxInboundReadLimit);
            cs.outbound_read_limit = std::min(a.ord, info.MaxOutboundReadLimit);
            cs.sent_private_data_length = a.private_data_length;  // CONN-27
            auto& q = std::get<QpState>(objects_[a.qp].state);
            q.connection = QpState::Connection::connecting;
            q.connector = a.connector;
            // MODEL-FLS-01: a QP flushed before its first connection starts over (on verbs, from
            // RESET): connected, it works.
            if (q.flushed) q.error = q.flushed = false;
            // LIFE-TREE-06, LIFE-TREE-07: a successor of the QP (and of the shared endpoint:
            // CONN-LST-05, its close waits for this connector).
            for (ObjectId up : {a.qp, a.shared_endpoint})
                if (up) {
                    objects_[a.connector].antecedents.push_back(up);
                    ++objects_[up].open_successors;
                }
            ObjectId listener = listener_for(objects_, a.destination);
            if (listener && mode_ == Mode::simulate)
                observe_event({Event::Kind::connect_request, listener, a.connector});
            // Returned STATUS_SUCCESS: the request completed (CONN-15). In check mode the
            // provider's connect event may still be reported after it (observe_event).
            if (stage == Stage::done)
                std::get<ConnectorState>(objects_[a.connector].state).phase =
                    ConnectorState::Phase::connected_pending_complete;
            break;
        }
        case Stage::completed:
            cs.phase = ConnectorState::Phase::connected_pending_complete;  // CONN-15
            break;
        case Stage::failed: {
            cs.phase = ConnectorState::Phase::failed;
            if (auto* q = state_mut<QpState>(a.qp)) {
                q->connection = QpState::Connection::idle;
                q->connector = 0;
            }
            // LIFE-TREE-06/07: the failed connect associates nothing any more.
            remove_edge(a.connector, a.qp);
            if (a.shared_endpoint) remove_edge(a.connector, a.shared_endpoint);
            break;
        }
        case Stage::refused:
            break;
    }
}

void Model::commit(const calls::Connect& c, const Observed&, Applied&, Stage stage) {
    connect_stage({c.connector, c.qp, 0, c.source, c.destination, c.inbound_read_limit,
                   c.outbound_read_limit, c.private_data_length},
                  stage);
}

void Model::commit(const calls::ConnectWithSharedEndpoint& c, const Observed&, Applied&,
                   Stage stage) {
    // CONN-14: the shared endpoint's address is the local one (CONN-LST-04: held by it too).
    SocketAddress source = std::get<SharedEndpointState>(objects_[c.shared_endpoint].state).address;
    connect_stage({c.connector, c.qp, c.shared_endpoint, source, c.destination,
                   c.inbound_read_limit, c.outbound_read_limit, c.private_data_length},
                  stage);
}

Expectation Model::expect_call(const calls::CompleteConnect& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    if (!co) return e;
    e.may_pend = e.may_lack_resources = true;  // CONN-03; CONN-19: the Ex form alike
    e.success_rules = {"CONN-03", "CONN-19"};
    // CONN-18: establishment may time out (not a permanent fault; it ends this attempt).
    e.also_allowed.push_back(
        {STATUS_IO_TIMEOUT, {"CONN-18"}, Strength::documented, "establishment timed out"});
    if (c.ex && !readings_.version_at_least(2, 1)) {  // VER-10, VER-11
        e.undefined = true;
        e.undefined_rules = {"VER-11"};
        return e;
    }
    const auto& cs = std::get<ConnectorState>(co->state);
    if (cs.phase != ConnectorState::Phase::connected_pending_complete)  // CONN-16
        e.fail(STATUS_CONNECTION_INVALID, {"CONN-16"}, Strength::documented,
               "the connector has no completed connect request to finish");
    else if (const auto* peer = state_of<ConnectorState>(cs.peer);
             !peer || peer->phase == ConnectorState::Phase::disconnected ||
             peer->phase == ConnectorState::Phase::failed || find(cs.peer)->life != Life::ready)
        e.fail(STATUS_CONNECTION_ABORTED, {"CONN-17"}, Strength::documented,
               "the acceptor gave up");
    else if (const Object* qp = find(cs.qp); qp && qp->close_requested)
        // CLOSE-03, CLOSE-08: the QP's close starts cancelling its work; the connection it was
        // joining may go with it (the verbs provider moves the QP to error at once).
        e.also_allowed.push_back({STATUS_CONNECTION_ABORTED,
                                  {"CLOSE-03", "CLOSE-08"},
                                  Strength::documented,
                                  "the QP's close began before the connection was completed"});
    return e;
}

void Model::commit(const calls::CompleteConnect& c, const Observed& o, Applied&, Stage stage) {
    if ((stage == Stage::refused || stage == Stage::failed) &&
        (o.status == STATUS_IO_TIMEOUT || o.status == STATUS_CONNECTION_ABORTED)) {
        // CONN-18: the timeout ends establishment on this connector; so does an abort, the
        // acceptor's (CONN-17) or the QP's close (CLOSE-08).
        auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
        if (cs.phase == ConnectorState::Phase::connected_pending_complete) {
            cs.phase = ConnectorState::Phase::failed;
            if (auto* q = state_mut<QpState>(cs.qp)) q->connection = QpState::Connection::idle;
        }
        return;
    }
    if (stage != Stage::done && stage != Stage::completed) return;
    auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    cs.phase = ConnectorState::Phase::established;
    cs.has_disconnect_event = c.has_disconnect_event;
    cs.ex = c.ex;  // CONN-19, CONN-DISC-03: the peer's disconnect comes through the Ex callback
    auto* peer = state_mut<ConnectorState>(cs.peer);
    auto& q = std::get<QpState>(objects_[cs.qp].state);
    q.connection = QpState::Connection::connected;
    q.outbound_read_limit = cs.outbound_read_limit;  // RD-08: the effective limit
    if (peer) {
        peer->phase = ConnectorState::Phase::established;
        if (auto* pq = state_mut<QpState>(peer->qp)) {
            pq->connection = QpState::Connection::connected;
            pq->peer = cs.qp;
            pq->outbound_read_limit = peer->outbound_read_limit;
            q.peer = peer->qp;
        }
        // The passive side's NdkAccept finishes now that the connection is established.
        if (mode_ == Mode::simulate)
            for (const auto& [pid, p] : pending_)
                if (std::holds_alternative<calls::Accept>(p.call) && p.object == cs.peer)
                    emit({Event::Kind::request_complete, cs.peer, 0, STATUS_SUCCESS, pid});
    }
    // Requests posted before the connection now have a peer.
    run_queues(cs.qp);
    if (peer) run_queues(peer->qp);
}

Expectation Model::expect_call(const calls::Accept& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    const Object* qp = require(e, c.qp, Kind::qp, "pNdkQp");
    if (!co || !qp) return e;
    e.may_pend = e.may_lack_resources = true;  // CONN-21; CONN-22: the Ex form alike
    e.success_rules = {"CONN-21", "CONN-22"};
    // CONN-21: a peer that gave up, or never completes its side.
    e.also_allowed.push_back({STATUS_CONNECTION_ABORTED,
                              {"CONN-21"},
                              Strength::documented,
                              "the connecting peer gave up"});
    e.also_allowed.push_back({STATUS_IO_TIMEOUT,
                              {"CONN-21"},
                              Strength::documented,
                              "the peer never completed its side"});
    if (c.ex && !readings_.version_at_least(2, 1)) {
        e.undefined = true;
        e.undefined_rules = {"VER-11"};
        return e;
    }
    const auto& cs = std::get<ConnectorState>(co->state);
    const auto& q = std::get<QpState>(qp->state);
    if (cs.phase != ConnectorState::Phase::accepting_incoming ||
        q.connection != QpState::Connection::idle) {
        e.undefined = true;
        e.undefined_rules = {"CONN-21"};
        e.undefined_why = "the connector has no incoming request, or the QP is in use";
        return e;
    }
    // CONN-21: the connecting peer gave up (closed its connector, or turned the connection
    // down after its connect completed, CONN-24).
    if (const Object* active = find(cs.peer);
        active &&
        (active->life != Life::ready ||
         std::get<ConnectorState>(active->state).phase == ConnectorState::Phase::failed ||
         std::get<ConnectorState>(active->state).phase == ConnectorState::Phase::rejected)) {
        e.fail(STATUS_CONNECTION_ABORTED, {"CONN-21"}, Strength::documented,
               "the connecting peer gave up");
        e.fail(STATUS_IO_TIMEOUT, {"CONN-21"}, Strength::documented,
               "the connecting peer never completes its side");
    }
    uint32_t max = adapter_info(c.connector).MaxCalleeData;
    if (c.private_data_length > max)  // MODEL-CONN-PD-01 (CONN-28: the caller's duty)
        e.fail(STATUS_INVALID_PARAMETER, {"MODEL-CONN-PD-01"},
               readings_.private_data_over_limit_invalid ? Strength::reading
                                                         : Strength::reading_any_error,
               "PrivateDataLength " + num(c.private_data_length) + " exceeds MaxCalleeData " +
                   num(max));
    return e;
}

void Model::commit(const calls::Accept& c, const Observed&, Applied&, Stage stage) {
    auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    if (stage == Stage::pending || stage == Stage::done) {
        cs.phase = ConnectorState::Phase::accepting;
        cs.qp = c.qp;
        cs.has_disconnect_event = c.has_disconnect_event;
        cs.ex = c.ex;  // CONN-22, CONN-DISC-03
        // CONN-RL-01, AI-08: capped at the adapter's maxima; CONN-RL-02: lowered to what the
        // peer allows the other way, on both sides.
        const NDK_ADAPTER_INFO& info = adapter_info(c.connector);
        cs.requested_inbound = c.inbound_read_limit;
        cs.requested_outbound = c.outbound_read_limit;
        cs.inbound_read_limit = std::min(c.inbound_read_limit, info.MaxInboundReadLimit);
        cs.outbound_read_limit = std::min(c.outbound_read_limit, info.MaxOutboundReadLimit);
        auto& q = std::get<QpState>(objects_[c.qp].state);
        q.connection = QpState::Connection::connecting;
        q.connector = c.connector;
        // MODEL-FLS-01: a QP flushed before its first connection starts over (on verbs, from
        // RESET): connected, it works.
        if (q.flushed) q.error = q.flushed = false;
        objects_[c.connector].antecedents.push_back(c.qp);  // LIFE-TREE-06
        ++objects_[c.qp].open_successors;
        // The active side's connect request completes: the peer accepted (CONN-15).
        if (auto* active = state_mut<ConnectorState>(cs.peer)) {
            auto& passive = std::get<ConnectorState>(objects_[c.connector].state);
            passive.inbound_read_limit =
                std::min(passive.inbound_read_limit, active->outbound_read_limit);
            passive.outbound_read_limit =
                std::min(passive.outbound_read_limit, active->inbound_read_limit);
            active->inbound_read_limit =
                std::min(active->inbound_read_limit, passive.outbound_read_limit);
            active->outbound_read_limit =
                std::min(active->outbound_read_limit, passive.inbound_read_limit);
            active->private_data_length = c.private_data_length;  // CONN-27
            if (mode_ == Mode::simulate)
                for (const auto& [pid, p] : pending_)
                    if ((std::holds_alternative<calls::Connect>(p.call) ||
                         std::holds_alternative<calls::ConnectWithSharedEndpoint>(p.call)) &&
                        p.object == cs.peer)
                        emit({Event::Kind::request_complete, cs.peer, 0, STATUS_SUCCESS, pid});
        }
    }
    if (stage == Stage::failed) {
        auto& failed = std::get<ConnectorState>(objects_[c.connector].state);
        failed.phase = ConnectorState::Phase::failed;
        if (auto* q = state_mut<QpState>(c.qp)) {
            q->connection = QpState::Connection::idle;
            q->connector = 0;
        }
        remove_edge(c.connector, c.qp);  // LIFE-TREE-06: the QP is no longer associated
    }
}

Expectation Model::expect_call(const calls::Reject& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    if (!co) return e;
    e.success_rules = {"CONN-23"};
    e.no_pending_rules = {"CONN-23"};
    e.tolerated.push_back(
        {STATUS_CONNECTION_ABORTED, {"CONN-23"}, Strength::documented, "the peer gave up first"});
    const auto& cs = std::get<ConnectorState>(co->state);
    if (cs.phase != ConnectorState::Phase::accepting_incoming &&
        cs.phase != ConnectorState::Phase::connected_pending_complete) {  // CONN-23, CONN-24
        e.undefined = true;
        e.undefined_rules = {"CONN-23"};
        e.undefined_why = "nothing to reject";
        return e;
    }
    // MODEL-CONN-PD-01: a reject carries at most MaxCalleeData (inline only: no callback).
    uint32_t max = adapter_info(c.connector).MaxCalleeData;
    if (c.private_data_length > max)
        e.fail(STATUS_INVALID_PARAMETER, {"MODEL-CONN-PD-01"},
               readings_.private_data_over_limit_invalid ? Strength::reading
                                                         : Strength::reading_any_error,
               "PrivateDataLength " + num(c.private_data_length) + " exceeds MaxCalleeData " +
                   num(max));
    return e;
}

void Model::commit(const calls::Reject& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done) return;
    auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    bool active_side = cs.phase == ConnectorState::Phase::connected_pending_complete;
    cs.phase = ConnectorState::Phase::rejected;
    // CONN-24: the active side turns the connection down after its connect completed; the
    // passive side's NdkAccept fails as for a peer that gave up (CONN-21).
    if (active_side) {
        if (auto* q = state_mut<QpState>(cs.qp)) {
            q->connection = QpState::Connection::idle;
            q->connector = 0;
        }
        remove_edge(c.connector, cs.qp);
        abandon_connection(c.connector);
        return;
    }
    // CONN-08: the active side's connect request fails with STATUS_CONNECTION_REFUSED.
    if (mode_ == Mode::simulate && cs.peer)
        for (const auto& [pid, p] : pending_)
            if ((std::holds_alternative<calls::Connect>(p.call) ||
                 std::holds_alternative<calls::ConnectWithSharedEndpoint>(p.call)) &&
                p.object == cs.peer)
                emit({Event::Kind::request_complete, cs.peer, 0, STATUS_CONNECTION_REFUSED, pid});
}

// CONN-21, CONN-17, CONN-08: one side gave up (closed its connector, CLOSE-08, or rejected
// after its connect completed, CONN-24): the other side's request waiting for it fails.
void Model::abandon_connection(ObjectId connector) {
    tear_down_connection(connector);  // the connector's own QP, in both modes
    const auto* cs = state_of<ConnectorState>(connector);
    if (!cs || !cs->peer || mode_ != Mode::simulate) return;
    for (const auto& [pid, p] : pending_) {
        if (p.object != cs->peer) continue;
        if (std::holds_alternative<calls::Accept>(p.call))
            emit({Event::Kind::request_complete, cs->peer, 0, STATUS_CONNECTION_ABORTED, pid});
        else if (std::holds_alternative<calls::Connect>(p.call) ||
                 std::holds_alternative<calls::ConnectWithSharedEndpoint>(p.call))
            emit({Event::Kind::request_complete, cs->peer, 0, STATUS_CONNECTION_REFUSED, pid});
    }
}

// WR-04, DISC-FLUSH-01: closing the connector of a connected QP tears the connection
// down, as an abortive disconnect would; no page says what becomes of the QP's requests. Read
// here as a disconnect's flush (found on rxe, where the connection's end moves the QP to error):
// what is outstanding is flushed (STATUS_CANCELLED) and later posts are flushed or refused
// inline, as after NdkFlush (MODEL-FLS-01's cancelled reading).
void Model::tear_down_connection(ObjectId connector) {
    const auto* cs = state_of<ConnectorState>(connector);
    if (!cs || !cs->qp) return;
    const ObjectId qp = cs->qp;
    const auto* q = state_of<QpState>(qp);
    if (!q || q->connector != connector ||
        (q->connection != QpState::Connection::connected &&
         q->connection != QpState::Connection::disconnecting))
        return;
    flush_qp(qp);
    leave_in_error(qp);
}

// ---- Data about a connection ----

Expectation Model::expect_call(const calls::GetConnectionData& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    if (!co) return e;
    e.no_pending_rules = {"CONN-PD-01"};
    e.success_rules = {"CONN-PD-01", "CONN-PD-04"};
    const auto& cs = std::get<ConnectorState>(co->state);
    using P = ConnectorState::Phase;
    // CONN-PD-08 (AMB-34: sides as in the connection flow, not as the page words them): on the
    // passive side once the connect event delivered the connector, on the active side once the
    // connect request completed; CONN-PD-07: not after Accept / CompleteConnect.
    if (cs.phase != P::accepting_incoming && cs.phase != P::connected_pending_complete) {
        e.undefined = true;
        e.undefined_rules = {"CONN-PD-07"};
        e.undefined_why = "no connection data is available now";
        return e;
    }
    if (!c.has_buffer && c.buffer_length > 0) {  // CONN-PD-02
        e.undefined = true;
        e.undefined_rules = {"CONN-PD-02"};
        return e;
    }
    if (c.has_buffer && c.buffer_length < cs.private_data_length)  // CONN-PD-04
        e.fail(STATUS_BUFFER_TOO_SMALL, {"CONN-PD-04"}, Strength::documented,
               "the buffer is smaller than the private data");
    else if (c.has_buffer)
        e.also_allowed.push_back({STATUS_BUFFER_TOO_SMALL,
                                  {"CONN-PD-04", "CONN-PD-06"},
                                  Strength::documented,
                                  "RDS may exceed what the peer sent"});
    return e;
}

void Model::commit(const calls::GetConnectionData& c, const Observed& o, Applied& applied,
                   Stage stage) {
    if (stage != Stage::done && stage != Stage::refused) return;
    const auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    if (!o.size_out)  // CONN-PD-05
        applied.verdict.add(
            {{"CONN-PD-05"}, "NdkGetConnectionData did not store RDS in *pPrivateDataLength"});
    else if (*o.size_out < cs.private_data_length)  // CONN-27: what the peer sent is offered
        applied.verdict.add({{"CONN-PD-05", "CONN-27"},
                             "RDS " + num(*o.size_out) + " is below the " +
                                 num(cs.private_data_length) + " bytes the peer sent"});
    if (stage != Stage::done || !c.has_read_limits) return;
    // CONN-RL-03: the effective limits: never above the caps (CONN-RL-01, AI-08) nor above what
    // the peer allows the other way (CONN-RL-02). The active side's are fixed once the connect
    // completed; lower values there are allowed by the docs but unlike the min rule: a warning.
    const NDK_ADAPTER_INFO& info = adapter_info(c.connector);
    uint32_t in_cap = info.MaxInboundReadLimit, out_cap = info.MaxOutboundReadLimit;
    bool active = cs.phase == ConnectorState::Phase::connected_pending_complete;
    if (const auto* peer = state_of<ConnectorState>(cs.peer)) {
        in_cap = std::min(in_cap, peer->outbound_read_limit);
        out_cap = std::min(out_cap, peer->inbound_read_limit);
    }
    if (active) {
        in_cap = std::min(in_cap, cs.inbound_read_limit);
        out_cap = std::min(out_cap, cs.outbound_read_limit);
    }
    if (o.inbound_read_limit > in_cap || o.outbound_read_limit > out_cap) {
        // The rule judged first is the bound the values pass: the adapter's maxima (CONN-RL-01),
        // else the peer's limits (CONN-RL-02), else the active side's own request (CONN-RL-03).
        RuleIds rules;
        if (o.inbound_read_limit > info.MaxInboundReadLimit ||
            o.outbound_read_limit > info.MaxOutboundReadLimit)
            rules = {"CONN-RL-01", "CONN-RL-02", "CONN-RL-03"};
        else if (const auto* peer = state_of<ConnectorState>(cs.peer);
                 peer && (o.inbound_read_limit > peer->outbound_read_limit ||
                          o.outbound_read_limit > peer->inbound_read_limit))
            rules = {"CONN-RL-02", "CONN-RL-01", "CONN-RL-03"};
        else
            rules = {"CONN-RL-03", "CONN-RL-01", "CONN-RL-02"};
        applied.verdict.add({rules, "the effective read limits " + num(o.inbound_read_limit) + "/" +
                                        num(o.outbound_read_limit) + " exceed " + num(in_cap) +
                                        "/" + num(out_cap) +
                                        " (the adapter's maxima and the peer's limits)"});
    } else if (active && (o.inbound_read_limit < in_cap || o.outbound_read_limit < out_cap))
        applied.verdict.add({{"CONN-RL-02", "CONN-RL-03"},
                             "the effective read limits " + num(o.inbound_read_limit) + "/" +
                                 num(o.outbound_read_limit) + " are below " + num(in_cap) + "/" +
                                 num(out_cap) +
                                 ", the smaller of the requested, the adapter's "
                                 "and the peer's",
                             true});
}

// The address an object is bound to, as the model knows it (CONN-ADDR-03).
static SocketAddress local_address_of(const Object& o) {
    if (const auto* l = std::get_if<ListenerState>(&o.state)) return l->address;
    if (const auto* s = std::get_if<SharedEndpointState>(&o.state)) return s->address;
    if (const auto* c = std::get_if<ConnectorState>(&o.state)) return c->local;
    return {};
}

Expectation Model::expect_call(const calls::GetLocalAddress& c) const {
    Expectation e;
    const Object* o = find(c.object);
    if (!o || o->life != Life::ready ||
        (o->kind != Kind::connector && o->kind != Kind::listener &&
         o->kind != Kind::shared_endpoint)) {
        e.undefined = true;
        e.undefined_rules = {"CONN-ADDR-02"};
        return e;
    }
    e.no_pending_rules = {"CONN-ADDR-02"};
    e.success_rules = {"CONN-ADDR-02"};
    SocketAddress a = local_address_of(*o);
    uint32_t need = a.family == 10 ? kSockaddrIn6 : kSockaddrIn;
    if (c.buffer_size < need)  // CONN-ADDR-01
        e.fail(STATUS_BUFFER_TOO_SMALL, {"CONN-ADDR-01"}, Strength::documented,
               "*pAddressLength " + num(c.buffer_size) + " is below " + num(need));
    return e;
}

// CONN-ADDR-03: the address reported is the one bound. A port the provider picked (CONN-07,
// CONN-11, CONN-25, CONN-26) is in the ephemeral range, and in check mode it is learnt here.
static void judge_address(const SocketAddress& expected, bool picked, const Observed& o,
                          const char* what, Verdict& v, SocketAddress* learn) {
    if (!o.address || !expected.present) return;
    const SocketAddress& got = *o.address;
    if (got.family != expected.family || got.address != expected.address) {
        v.add({{"CONN-ADDR-03"},
               std::string(what) + " reported " + got.describe() + ", not " + expected.describe()});
        return;
    }
    if (picked) {
        if (got.port < kEphemeralFirst)
            v.add({{"CONN-ADDR-03", "CONN-25", "CONN-26", "CONN-07", "CONN-11"},
                   std::string(what) + " reported port " + num(got.port) +
                       ", outside the ephemeral range 49152-65535 a provider picks from"});
        else if (learn && (expected.port == 0 || expected.port != got.port))
            learn->port = got.port;
        else if (expected.port != 0 && expected.port != got.port)
            v.add({{"CONN-ADDR-03"},
                   std::string(what) + " reported port " + num(got.port) + ", not " +
                       num(expected.port)});
        return;
    }
    if (got.port != expected.port)
        v.add({{"CONN-ADDR-03"},
               std::string(what) + " reported port " + num(got.port) + ", not " +
                   num(expected.port)});
}

void Model::commit(const calls::GetLocalAddress& c, const Observed& o, Applied& applied,
                   Stage stage) {
    if (stage == Stage::refused && o.status == STATUS_BUFFER_TOO_SMALL && !o.size_out)
        applied.verdict.add({{"CONN-ADDR-01"},
                             "the address getter returned STATUS_BUFFER_TOO_SMALL "
                             "without the required size"});
    if (stage != Stage::done) return;
    Object& obj = objects_[c.object];
    bool learnable = mode_ == Mode::check;
    if (auto* l = std::get_if<ListenerState>(&obj.state))
        judge_address(l->address, l->ephemeral, o, "NdkGetListenerLocalAddress", applied.verdict,
                      learnable ? &l->address : nullptr);
    else if (auto* s = std::get_if<SharedEndpointState>(&obj.state))
        judge_address(s->address, s->ephemeral, o, "NdkGetSharedEndpointLocalAddress",
                      applied.verdict, learnable ? &s->address : nullptr);
    else if (auto* cs = std::get_if<ConnectorState>(&obj.state))
        judge_address(cs->local, cs->ephemeral_local, o, "NdkGetLocalAddress", applied.verdict,
                      learnable ? &cs->local : nullptr);
}

Expectation Model::expect_call(const calls::GetPeerAddress& c) const {
    Expectation e;
    const Object* o = require(e, c.connector, Kind::connector, "pNdkConnector");
    if (!o) return e;
    e.no_pending_rules = {"CONN-ADDR-02"};
    e.success_rules = {"CONN-ADDR-02"};
    const auto& cs = std::get<ConnectorState>(o->state);
    uint32_t need = cs.remote.family == 10 ? kSockaddrIn6 : kSockaddrIn;
    if (c.buffer_size < need)
        e.fail(STATUS_BUFFER_TOO_SMALL, {"CONN-ADDR-01"}, Strength::documented,
               "*pAddressLength is too small");
    return e;
}

void Model::commit(const calls::GetPeerAddress& c, const Observed& o, Applied& applied,
                   Stage stage) {
    if (stage == Stage::refused && o.status == STATUS_BUFFER_TOO_SMALL && !o.size_out)
        applied.verdict.add({{"CONN-ADDR-01"},
                             "NdkGetPeerAddress returned STATUS_BUFFER_TOO_SMALL "
                             "without the required size"});
    if (stage != Stage::done) return;
    // CONN-ADDR-03: the remote address; a passive connector's peer may sit on a port its
    // provider picked (learnt in check mode).
    auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    bool picked = false;
    if (const auto* peer = state_of<ConnectorState>(cs.peer)) picked = peer->ephemeral_local;
    judge_address(cs.remote, picked, o, "NdkGetPeerAddress", applied.verdict,
                  mode_ == Mode::check ? &cs.remote : nullptr);
}

// ---- Disconnect ----

Expectation Model::expect_call(const calls::Disconnect& c) const {
    Expectation e;
    const Object* o = require(e, c.connector, Kind::connector, "pNdkConnector");
    if (!o) return e;
    e.may_pend = true;  // CONN-DISC-01
    e.success_rules = {"CONN-DISC-01"};
    e.tolerated.push_back({STATUS_IO_TIMEOUT,
                           {"CONN-DISC-01"},
                           Strength::documented,
                           "the disconnect handshake timed out"});
    if (std::get<ConnectorState>(o->state).phase != ConnectorState::Phase::established) {
        e.undefined = true;
        e.undefined_rules = {"CONN-DISC-01"};
        e.undefined_why = "the connector is not connected";
    }
    return e;
}

void Model::commit(const calls::Disconnect& c, const Observed&, Applied&, Stage stage) {
    auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    if (stage == Stage::pending || stage == Stage::done) {
        cs.phase = stage == Stage::done ? ConnectorState::Phase::disconnected
                                        : ConnectorState::Phase::disconnecting;
        if (auto* q = state_mut<QpState>(cs.qp)) q->connection = QpState::Connection::disconnected;
        flush_qp(cs.qp);  // DISC-FLUSH-01: a graceful disconnect flushes the QP (CQ-CST-02)
        // ...and the QP stays in error: receives posted later are flushed too (found on rxe).
        leave_in_error(cs.qp);
        // CONN-DISC-02: the peer learns of it through its disconnect callback, once (the Ex one
        // with reason 0 when it completed with an Ex call, CONN-DISC-03); its QP is not
        // flushed for it (DISC-FLUSH-02).
        if (auto* peer = state_mut<ConnectorState>(cs.peer); peer && peer->has_disconnect_event &&
                                                             !peer->disconnect_event_delivered &&
                                                             mode_ == Mode::simulate) {
            peer->disconnect_event_delivered = true;
            emit({Event::Kind::disconnect, cs.peer, 0, STATUS_SUCCESS, 0});
        }
    }
    if (stage == Stage::completed) cs.phase = ConnectorState::Phase::disconnected;
}

// ---- Events reported by a provider (check mode), or generated here (simulate) ----

Applied Model::observe_event(const Event& event) {
    Applied applied;
    switch (event.kind) {
        case Event::Kind::cq_notification:
            observe_cq_notification(event.object, event.status, applied.verdict);
            break;
        case Event::Kind::srq_notification:
            observe_srq_notification(event.object, event.status, applied.verdict);
            break;
        case Event::Kind::connect_request: {
            // CONN-20, LIFE-TREE-08: a new passive connector, successor of the listener
            // (CONN-LST-05: the listener's close waits for it).
            ObjectId listener = event.object;
            ObjectId active = event.created;  // simulate: the active connector
            if (mode_ == Mode::check) {
                // The connect aimed at this listener's address that has no passive side yet:
                // pending, or already completed inline (a connect that returned
                // STATUS_SUCCESS).
                active = 0;
                const auto* l = state_of<ListenerState>(listener);
                for (const Object& o : objects_)
                    if (o.kind == Kind::connector && l && o.life != Life::closed) {
                        const auto& cs = std::get<ConnectorState>(o.state);
                        using P = ConnectorState::Phase;
                        if ((cs.phase == P::connecting ||
                             cs.phase == P::connected_pending_complete) &&
                            !cs.peer && same_endpoint(cs.remote, l->address))
                            active = o.id;
                    }
                if (!active) {
                    applied.verdict.add({{"CONN-20"},
                                         "a connect event came with no connect "
                                         "request aimed at the listener"});
                    break;
                }
            }
            const auto& act = std::get<ConnectorState>(objects_[active].state);
            ConnectorState passive;
            passive.phase = ConnectorState::Phase::accepting_incoming;
            passive.listener = listener;
            passive.peer = active;
            passive.private_data_length = act.sent_private_data_length;  // CONN-27
            passive.remote = act.local;
            passive.local = std::get<ListenerState>(objects_[listener].state).address;
            // CONN-RL-02: before its Accept the passive side may allow no more reads than the
            // active side offers the other way (CONN-RL-01: capped at its own maxima).
            const NDK_ADAPTER_INFO& info = adapter_info(listener);
            passive.inbound_read_limit =
                std::min(info.MaxInboundReadLimit, act.outbound_read_limit);
            passive.outbound_read_limit =
                std::min(info.MaxOutboundReadLimit, act.inbound_read_limit);
            applied.created =
                create_object(Kind::connector, objects_[listener].adapter, passive, {listener});
            ready(applied.created);
            std::get<ConnectorState>(objects_[active].state).peer = applied.created;
            if (mode_ == Mode::simulate)
                emit({Event::Kind::connect_request, listener, applied.created, STATUS_SUCCESS, 0});
            break;
        }
        case Event::Kind::disconnect: {
            auto* cs = state_mut<ConnectorState>(event.object);
            if (cs && mode_ == Mode::check) {
                // CONN-DISC-02, CONN-DISC-03: only a registered callback, and exactly once.
                if (!cs->has_disconnect_event)
                    applied.verdict.add({{"CONN-DISC-02"},
                                         "a disconnect callback came for a "
                                         "connector that registered none"});
                else if (cs->disconnect_events > 0)
                    applied.verdict.add({{"CONN-DISC-02"}, "a second disconnect callback came"});
            }
            if (cs) {
                ++cs->disconnect_events;
                cs->disconnect_event_delivered = true;
                // The peer's disconnect leaves a connected QP disconnecting (DISC-FLUSH-02: not
                // flushed for it). A QP this side already disconnected with NdkDisconnect
                // stays disconnected: initiator calls on it may fail with
                // STATUS_CONNECTION_INVALID (WR-04, CQP-STATE-01), whenever the event comes.
                if (auto* q = state_mut<QpState>(cs->qp);
                    q && q->connection == QpState::Connection::connected)
                    q->connection = QpState::Connection::disconnecting;
            }
            break;
        }
        case Event::Kind::request_complete:
            break;
    }
    return applied;
}

}  // namespace ndkct::model
