// Connections: connectors, listeners and shared endpoints (CONN-*), on the model's own network:
// every adapter of one model can reach every other (and itself: loopback, AI-FLAG-07).
#include <algorithm>
#include <functional>

#include "ndkct/model/model.hpp"

namespace ndkct::model {

namespace {

std::string num(uint64_t v) { return std::to_string(v); }

constexpr uint32_t kSockaddrIn = 16;   // sizeof(SOCKADDR_IN)
constexpr uint32_t kSockaddrIn6 = 28;  // sizeof(SOCKADDR_IN6)

uint32_t sockaddr_size(const SocketAddress& a) { return a.family == 10 ? kSockaddrIn6 : kSockaddrIn; }

bool valid_address(const SocketAddress& a) {
    return a.present && (a.family == 2 || a.family == 10) && a.length >= sockaddr_size(a);
}

bool same_endpoint(const SocketAddress& a, const SocketAddress& b) {
    return a.family == b.family && a.port == b.port && a.address == b.address;
}

}  // namespace

// ---- Creation ----

Expectation Model::expect_call(const calls::CreateConnector& c) const {
    Expectation e;
    if (!require(e, c.adapter, Kind::adapter, "pNdkAdapter")) return e;
    e.may_pend = e.may_lack_resources = true;  // CONN-01
    e.success_rules = {"CONN-01"};
    return e;
}

void Model::commit(const calls::CreateConnector& c, const Observed&, Applied& applied, Stage stage) {
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
    e.success_rules = {"CONN-06"};
    if (!valid_address(c.address))
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-06"}, Strength::documented, "not a usable address");
    return e;
}

void Model::commit(const calls::CreateSharedEndpoint& c, const Observed&, Applied& applied,
                   Stage stage) {
    create_stage(Kind::shared_endpoint, c.adapter, SharedEndpointState{c.address}, {}, applied,
                 stage);
}

// ---- Passive side: listen, connect events, accept, reject ----

Expectation Model::expect_call(const calls::Listen& c) const {
    Expectation e;
    const Object* o = require(e, c.listener, Kind::listener, "pNdkListener");
    if (!o) return e;
    e.may_pend = e.may_lack_resources = true;  // CONN-04
    e.success_rules = {"CONN-04"};
    if (!valid_address(c.address)) {
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-04"}, Strength::documented, "not a usable address");
        return e;
    }
    for (const Object& other : objects_)
        if (other.kind == Kind::listener && other.life != Life::closed && other.id != c.listener &&
            c.address.port != 0) {
            const auto& l = std::get<ListenerState>(other.state);
            if (l.listening && same_endpoint(l.address, c.address))  // CONN-LST-01
                e.fail(STATUS_SHARING_VIOLATION, {"CONN-04", "CONN-LST-01"}, Strength::model_choice,
                       "another listener holds " + c.address.describe());
        }
    return e;
}

void Model::commit(const calls::Listen& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done && stage != Stage::completed) return;
    auto* l = state_mut<ListenerState>(c.listener);
    l->listening = true;
    l->address = c.address;
    if (l->address.port == 0) l->address.port = static_cast<uint16_t>(49152 + c.listener % 16384);  // CONN-25
}

Expectation Model::expect_call(const calls::ControlConnectEvents& c) const {
    Expectation e;
    e.returns_void = true;
    require(e, c.listener, Kind::listener, "pNdkListener");
    return e;
}

void Model::commit(const calls::ControlConnectEvents& c, const Observed&, Applied&, Stage) {
    state_mut<ListenerState>(c.listener)->paused = c.pause;  // CONN-CTL-01/02
}

// The listener that would receive a connect to `destination`, or 0 (CONN-08: refused).
static ObjectId listener_for(const std::vector<Object>& objects, const SocketAddress& destination) {
    for (const Object& o : objects)
        if (o.kind == Kind::listener && o.life == Life::ready) {
            const auto& l = std::get<ListenerState>(o.state);
            if (l.listening && !l.paused && same_endpoint(l.address, destination)) return o.id;
        }
    return 0;
}

// ---- Active side: connect, complete ----

static void check_connect(const Model& m, Expectation& e, const Object* connector, const Object* qp,
                          uint32_t private_data_length, const SocketAddress& destination,
                          const std::vector<Object>& objects, const NDK_ADAPTER_INFO& info) {
    (void)m;
    e.may_pend = e.may_lack_resources = true;  // CONN-02
    e.success_rules = {"CONN-02", "CONN-15"};
    const auto& cs = std::get<ConnectorState>(connector->state);
    const auto& q = std::get<QpState>(qp->state);
    if (cs.phase != ConnectorState::Phase::idle || q.connection != QpState::Connection::idle) {
        e.undefined = true;
        e.undefined_rules = {"CONN-02"};
        e.undefined_why = "the connector or the QP is already in use";
        return;
    }
    if (private_data_length > info.MaxCallerData)  // CONN-28 (the caller's duty)
        e.fail(STATUS_INVALID_PARAMETER, {"CONN-28"}, Strength::model_choice,
               "PrivateDataLength exceeds MaxCallerData");
    if (!valid_address(destination))
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-02"}, Strength::model_choice, "not a usable destination");
    else if (!listener_for(objects, destination))  // CONN-08: nobody listens there
        e.fail(STATUS_CONNECTION_REFUSED, {"CONN-08"}, Strength::documented,
               "no listener on " + destination.describe());
}

Expectation Model::expect_call(const calls::Connect& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    const Object* qp = require(e, c.qp, Kind::qp, "pNdkQp");
    if (!co || !qp) return e;
    if (c.source.present && !valid_address(c.source))  // CONN-10
        e.fail(STATUS_INVALID_ADDRESS, {"CONN-10"}, Strength::documented, "not a local address");
    check_connect(*this, e, co, qp, c.private_data_length, c.destination, objects_, adapter_info(c.connector));
    return e;
}

Expectation Model::expect_call(const calls::ConnectWithSharedEndpoint& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    const Object* qp = require(e, c.qp, Kind::qp, "pNdkQp");
    const Object* se = require(e, c.shared_endpoint, Kind::shared_endpoint, "pSharedEndpoint");
    if (!co || !qp || !se) return e;
    check_connect(*this, e, co, qp, c.private_data_length, c.destination, objects_, adapter_info(c.connector));
    return e;
}

namespace {

struct ConnectArgs {
    ObjectId connector, qp, shared_endpoint;
    SocketAddress source, destination;
    uint32_t ird, ord, private_data_length;
};

}  // namespace

static void connect_stage(Model& m, std::vector<Object>& objects, const ConnectArgs& a, Stage stage,
                          const std::function<void(Event)>& emit, Mode mode,
                          const std::function<ObjectId(ObjectId listener, ObjectId active)>& incoming) {
    (void)m;
    auto& cs = std::get<ConnectorState>(objects[a.connector].state);
    auto& q = std::get<QpState>(objects[a.qp].state);
    switch (stage) {
        case Stage::pending:
        case Stage::done: {
            cs.phase = ConnectorState::Phase::connecting;
            cs.qp = a.qp;
            cs.shared_endpoint = a.shared_endpoint;
            cs.local = a.source;
            cs.remote = a.destination;
            cs.inbound_read_limit = a.ird;
            cs.outbound_read_limit = a.ord;
            q.connection = QpState::Connection::connecting;
            q.connector = a.connector;
            ObjectId listener = listener_for(objects, a.destination);
            if (listener && mode == Mode::simulate) incoming(listener, a.connector);
            if (stage == Stage::done) cs.phase = ConnectorState::Phase::connected_pending_complete;
            (void)emit;
            break;
        }
        case Stage::completed:
            cs.phase = ConnectorState::Phase::connected_pending_complete;  // CONN-15
            break;
        case Stage::failed:
            cs.phase = ConnectorState::Phase::failed;
            q.connection = QpState::Connection::idle;
            q.connector = 0;
            break;
        case Stage::refused:
            break;
    }
}

void Model::commit(const calls::Connect& c, const Observed&, Applied&, Stage stage) {
    ConnectArgs a{c.connector, c.qp, 0, c.source, c.destination, c.inbound_read_limit,
                  c.outbound_read_limit, c.private_data_length};
    connect_stage(*this, objects_, a, stage, [this](Event e) { emit(e); }, mode_,
                  [this](ObjectId listener, ObjectId active) {
                      return observe_event({Event::Kind::connect_request, listener, active}).created;
                  });
    if (stage == Stage::pending || stage == Stage::done) {
        // LIFE-TREE-06: the connector is now a successor of the QP.
        objects_[c.connector].antecedents.push_back(c.qp);
        ++objects_[c.qp].open_successors;
    }
}

void Model::commit(const calls::ConnectWithSharedEndpoint& c, const Observed&, Applied&,
                   Stage stage) {
    SocketAddress source = std::get<SharedEndpointState>(objects_[c.shared_endpoint].state).address;
    ConnectArgs a{c.connector, c.qp, c.shared_endpoint, source, c.destination,
                  c.inbound_read_limit, c.outbound_read_limit, c.private_data_length};
    connect_stage(*this, objects_, a, stage, [this](Event e) { emit(e); }, mode_,
                  [this](ObjectId listener, ObjectId active) {
                      return observe_event({Event::Kind::connect_request, listener, active}).created;
                  });
    if (stage == Stage::pending || stage == Stage::done) {
        // LIFE-TREE-06, LIFE-TREE-07: a successor of the QP and of the shared endpoint.
        for (ObjectId up : {c.qp, c.shared_endpoint}) {
            objects_[c.connector].antecedents.push_back(up);
            ++objects_[up].open_successors;
        }
    }
}

Expectation Model::expect_call(const calls::CompleteConnect& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    if (!co) return e;
    e.may_pend = e.may_lack_resources = true;  // CONN-03
    e.success_rules = {"CONN-03"};
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
             !peer || peer->phase == ConnectorState::Phase::disconnected)
        e.fail(STATUS_CONNECTION_ABORTED, {"CONN-17"}, Strength::documented, "the acceptor gave up");
    return e;
}

void Model::commit(const calls::CompleteConnect& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done && stage != Stage::completed) return;
    auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    cs.phase = ConnectorState::Phase::established;
    cs.has_disconnect_event = c.has_disconnect_event;
    auto* peer = state_mut<ConnectorState>(cs.peer);
    auto& q = std::get<QpState>(objects_[cs.qp].state);
    q.connection = QpState::Connection::connected;
    if (peer) {
        peer->phase = ConnectorState::Phase::established;
        if (auto* pq = state_mut<QpState>(peer->qp)) {
            pq->connection = QpState::Connection::connected;
            pq->peer = cs.qp;
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
    e.may_pend = e.may_lack_resources = true;  // CONN-21
    e.success_rules = {"CONN-21"};
    if (c.ex && !readings_.version_at_least(2, 1)) {
        e.undefined = true;
        e.undefined_rules = {"VER-11"};
        return e;
    }
    const auto& cs = std::get<ConnectorState>(co->state);
    const auto& q = std::get<QpState>(qp->state);
    if (cs.phase != ConnectorState::Phase::accepting_incoming || q.connection != QpState::Connection::idle) {
        e.undefined = true;
        e.undefined_rules = {"CONN-21"};
        e.undefined_why = "the connector has no incoming request, or the QP is in use";
        return e;
    }
    if (c.private_data_length > adapter_info(c.connector).MaxCalleeData)  // CONN-28
        e.fail(STATUS_INVALID_PARAMETER, {"CONN-28"}, Strength::model_choice,
               "PrivateDataLength exceeds MaxCalleeData");
    return e;
}

void Model::commit(const calls::Accept& c, const Observed&, Applied&, Stage stage) {
    auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    if (stage == Stage::pending || stage == Stage::done) {
        cs.phase = ConnectorState::Phase::accepting;
        cs.qp = c.qp;
        cs.inbound_read_limit = c.inbound_read_limit;
        cs.outbound_read_limit = c.outbound_read_limit;
        cs.has_disconnect_event = c.has_disconnect_event;
        auto& q = std::get<QpState>(objects_[c.qp].state);
        q.connection = QpState::Connection::connecting;
        q.connector = c.connector;
        objects_[c.connector].antecedents.push_back(c.qp);  // LIFE-TREE-06
        ++objects_[c.qp].open_successors;
        // The active side's connect request completes: the peer accepted (CONN-15).
        if (auto* active = state_mut<ConnectorState>(cs.peer)) {
            active->private_data_length = c.private_data_length;
            if (mode_ == Mode::simulate)
                for (const auto& [pid, p] : pending_)
                    if ((std::holds_alternative<calls::Connect>(p.call) ||
                         std::holds_alternative<calls::ConnectWithSharedEndpoint>(p.call)) &&
                        p.object == cs.peer)
                        emit({Event::Kind::request_complete, cs.peer, 0, STATUS_SUCCESS, pid});
        }
    }
    if (stage == Stage::failed) {
        cs.phase = ConnectorState::Phase::failed;
        if (auto* q = state_mut<QpState>(c.qp)) q->connection = QpState::Connection::idle;
    }
}

Expectation Model::expect_call(const calls::Reject& c) const {
    Expectation e;
    const Object* co = require(e, c.connector, Kind::connector, "pNdkConnector");
    if (!co) return e;
    e.success_rules = {"CONN-23"};
    e.no_pending_rules = {"CONN-23"};
    e.tolerated.push_back({STATUS_CONNECTION_ABORTED, {"CONN-23"}, Strength::documented,
                           "the peer gave up first"});
    const auto& cs = std::get<ConnectorState>(co->state);
    if (cs.phase != ConnectorState::Phase::accepting_incoming &&
        cs.phase != ConnectorState::Phase::connected_pending_complete) {  // CONN-23, CONN-24
        e.undefined = true;
        e.undefined_rules = {"CONN-23"};
        e.undefined_why = "nothing to reject";
    }
    return e;
}

void Model::commit(const calls::Reject& c, const Observed&, Applied&, Stage stage) {
    if (stage != Stage::done) return;
    auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    cs.phase = ConnectorState::Phase::rejected;
    // CONN-08: the active side's connect request fails with STATUS_CONNECTION_REFUSED.
    if (mode_ == Mode::simulate && cs.peer)
        for (const auto& [pid, p] : pending_)
            if ((std::holds_alternative<calls::Connect>(p.call) ||
                 std::holds_alternative<calls::ConnectWithSharedEndpoint>(p.call)) &&
                p.object == cs.peer)
                emit({Event::Kind::request_complete, cs.peer, 0, STATUS_CONNECTION_REFUSED, pid});
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
    if (cs.phase != P::accepting_incoming && cs.phase != P::connected_pending_complete) {  // CONN-PD-07/08
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
        e.also_allowed.push_back({STATUS_BUFFER_TOO_SMALL, {"CONN-PD-04", "CONN-PD-06"},
                                  Strength::documented, "RDS may exceed what the peer sent"});
    return e;
}

void Model::commit(const calls::GetConnectionData& c, const Observed& o, Applied& applied, Stage stage) {
    if (stage != Stage::done && stage != Stage::refused) return;
    const auto& cs = std::get<ConnectorState>(objects_[c.connector].state);
    if (!o.size_out)  // CONN-PD-05
        applied.verdict.add({{"CONN-PD-05"}, "NdkGetConnectionData did not store RDS in *pPrivateDataLength"});
    else if (*o.size_out < cs.private_data_length)
        applied.verdict.add({{"CONN-PD-05"}, "RDS " + num(*o.size_out) + " is below the " +
                                                 num(cs.private_data_length) + " bytes the peer sent"});
    if (stage != Stage::done) return;
    const NDK_ADAPTER_INFO& info = adapter_info(c.connector);
    if (o.inbound_read_limit > info.MaxInboundReadLimit || o.outbound_read_limit > info.MaxOutboundReadLimit)
        applied.verdict.add({{"CONN-RL-01"}, "the effective read limits exceed the adapter's maxima"});
}

Expectation Model::expect_call(const calls::GetLocalAddress& c) const {
    Expectation e;
    const Object* o = find(c.object);
    if (!o || o->life != Life::ready ||
        (o->kind != Kind::connector && o->kind != Kind::listener && o->kind != Kind::shared_endpoint)) {
        e.undefined = true;
        e.undefined_rules = {"CONN-ADDR-02"};
        return e;
    }
    e.no_pending_rules = {"CONN-ADDR-02"};
    e.success_rules = {"CONN-ADDR-02"};
    SocketAddress a;
    if (o->kind == Kind::listener) a = std::get<ListenerState>(o->state).address;
    if (o->kind == Kind::shared_endpoint) a = std::get<SharedEndpointState>(o->state).address;
    if (o->kind == Kind::connector) a = std::get<ConnectorState>(o->state).local;
    uint32_t need = a.family == 10 ? kSockaddrIn6 : kSockaddrIn;
    if (c.buffer_size < need)  // CONN-ADDR-01
        e.fail(STATUS_BUFFER_TOO_SMALL, {"CONN-ADDR-01"}, Strength::documented,
               "*pAddressLength " + num(c.buffer_size) + " is below " + num(need));
    return e;
}

void Model::commit(const calls::GetLocalAddress&, const Observed& o, Applied& applied, Stage stage) {
    if (stage == Stage::refused && o.status == STATUS_BUFFER_TOO_SMALL && !o.size_out)
        applied.verdict.add({{"CONN-ADDR-01"}, "the address getter returned STATUS_BUFFER_TOO_SMALL "
                                               "without the required size"});
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

void Model::commit(const calls::GetPeerAddress&, const Observed& o, Applied& applied, Stage stage) {
    if (stage == Stage::refused && o.status == STATUS_BUFFER_TOO_SMALL && !o.size_out)
        applied.verdict.add({{"CONN-ADDR-01"}, "NdkGetPeerAddress returned STATUS_BUFFER_TOO_SMALL "
                                               "without the required size"});
}

// ---- Disconnect ----

Expectation Model::expect_call(const calls::Disconnect& c) const {
    Expectation e;
    const Object* o = require(e, c.connector, Kind::connector, "pNdkConnector");
    if (!o) return e;
    e.may_pend = true;  // CONN-DISC-01
    e.success_rules = {"CONN-DISC-01"};
    e.tolerated.push_back({STATUS_IO_TIMEOUT, {"CONN-DISC-01"}, Strength::documented,
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
        flush_qp(cs.qp);  // DISC-FLUSH-01: a graceful disconnect flushes the QP
        // CONN-DISC-02: the peer learns of it through its disconnect callback, once; its QP is
        // not flushed for it (DISC-FLUSH-02).
        if (auto* peer = state_mut<ConnectorState>(cs.peer);
            peer && peer->has_disconnect_event && !peer->disconnect_event_delivered) {
            peer->disconnect_event_delivered = true;
            if (mode_ == Mode::simulate) emit({Event::Kind::disconnect, cs.peer, 0, STATUS_SUCCESS, 0});
        }
    }
    if (stage == Stage::completed) cs.phase = ConnectorState::Phase::disconnected;
}

// ---- Events reported by a provider (check mode), or generated here (simulate) ----

Applied Model::observe_event(const Event& event) {
    Applied applied;
    switch (event.kind) {
        case Event::Kind::cq_notification: {
            auto* cq = state_mut<CqState>(event.object);
            if (!cq) break;
            if (mode_ == Mode::check) {
                if (event.status == STATUS_SUCCESS && cq->armed < 0)  // CQ-NOT-01, CQ-NOT-06
                    applied.verdict.add({{"CQ-NOT-01", "CQ-NOT-06"},
                                         "a CQ notification came without an outstanding arm"});
                if (!cq->has_notification)
                    applied.verdict.add({{"CQ-NOT-12"}, "a CQ created without a notification "
                                                        "callback was notified"});
            }
            cq->armed = -1;
            cq->new_since_notification = false;
            break;
        }
        case Event::Kind::srq_notification: {
            auto* s = state_mut<SrqState>(event.object);
            if (s && mode_ == Mode::check && !s->notify_armed && event.status == STATUS_SUCCESS)
                applied.verdict.add({{"SRQ-12"}, "an SRQ notification came while it was not armed"});
            if (s) s->notify_armed = false;
            break;
        }
        case Event::Kind::connect_request: {
            // CONN-20, LIFE-TREE-08: a new passive connector, successor of the listener.
            ObjectId listener = event.object;
            ObjectId active = event.created;  // simulate: the active connector
            if (mode_ == Mode::check) {
                active = 0;  // the pending connect aimed at this listener's address
                const auto* l = state_of<ListenerState>(listener);
                for (const Object& o : objects_)
                    if (o.kind == Kind::connector && l) {
                        const auto& cs = std::get<ConnectorState>(o.state);
                        if (cs.phase == ConnectorState::Phase::connecting && !cs.peer &&
                            same_endpoint(cs.remote, l->address))
                            active = o.id;
                    }
                if (!active) {
                    applied.verdict.add({{"CONN-20"}, "a connect event came with no connect "
                                                      "request aimed at the listener"});
                    break;
                }
            }
            ConnectorState passive;
            passive.phase = ConnectorState::Phase::accepting_incoming;
            passive.listener = listener;
            passive.peer = active;
            const auto& act = std::get<ConnectorState>(objects_[active].state);
            passive.private_data_length = 0;
            passive.remote = act.local;
            passive.local = std::get<ListenerState>(objects_[listener].state).address;
            applied.created = create_object(Kind::connector, objects_[listener].adapter, passive, {listener});
            ready(applied.created);
            std::get<ConnectorState>(objects_[active].state).peer = applied.created;
            if (mode_ == Mode::simulate)
                emit({Event::Kind::connect_request, listener, applied.created, STATUS_SUCCESS, 0});
            break;
        }
        case Event::Kind::disconnect: {
            auto* cs = state_mut<ConnectorState>(event.object);
            if (cs && mode_ == Mode::check) {
                if (!cs->has_disconnect_event)
                    applied.verdict.add({{"CONN-DISC-02"}, "a disconnect callback came for a "
                                                           "connector that registered none"});
                else if (cs->disconnect_event_delivered && cs->phase == ConnectorState::Phase::disconnected)
                    applied.verdict.add({{"CONN-DISC-02"}, "a second disconnect callback came"});
            }
            if (cs) {
                cs->disconnect_event_delivered = true;
                if (auto* q = state_mut<QpState>(cs->qp)) q->connection = QpState::Connection::disconnecting;
            }
            break;
        }
        case Event::Kind::request_complete:
            break;
    }
    return applied;
}

}  // namespace ndkct::model
