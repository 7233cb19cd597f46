// The Session's NDK calls on connectors and listeners: listen, connect and accept (the
// asynchronous forms and their waits), the handshake's end, disconnects and their events,
// connection data and addresses, and the loopback pairs the tests build on.
#include "ndkct/conformance/session.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "ndkct/model/translate.hpp"
#include "ndkct/platform/spin.hpp"
#include "ndkct/spec/hex.hpp"
#include "ndkct/spec/status.hpp"
#include "session_internal.hpp"

namespace ndkct::conformance {

using platform::spin_until;

// ---- Connections ----

Done Session::listen(NDK_LISTENER* listener, const sockaddr* address, ULONG length) {
    return request(
        calls::Listen{id(listener), model::view_address(address, length)},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_LISTENER_DISPATCH>(listener).NdkListen(
                listener, const_cast<sockaddr*>(address), length, done, ctx);
        },
        "NdkListen", {}, listener);
}

NTSTATUS Session::connect_async(NDK_CONNECTOR* connector, NDK_QP* qp, const sockaddr* destination,
                                ULONG length, ULONG ird, ULONG ord,
                                std::span<const uint8_t> private_data) {
    calls::Connect call{id(connector),
                        id(qp),
                        {},
                        model::view_address(destination, length),
                        ird,
                        ord,
                        static_cast<uint32_t>(private_data.size())};
    remember_private_data(connector, private_data);
    // Events it causes are processed by the caller's next step.
    return start_async(
        call,
        [&](void* cb) {
            return table<NDK_CONNECTOR_DISPATCH>(connector).NdkConnect(
                connector, qp, nullptr, 0, const_cast<sockaddr*>(destination), length, ird, ord,
                const_cast<uint8_t*>(private_data.data()), static_cast<ULONG>(private_data.size()),
                on_request, cb);
        },
        "NdkConnect", kRequest, pending_connects_, connector);
}

Done Session::wait_for(std::unordered_map<const void*, PendingAsync>& table_of, const void* key) {
    Done done;
    PendingAsync p;
    {
        std::lock_guard lock(oracle_mutex_);
        auto it = table_of.find(key);
        if (it == table_of.end()) {
            done.status = done.final_status = STATUS_INVALID_DEVICE_STATE;
            return done;
        }
        p = it->second;
        table_of.erase(it);
    }
    done.status = done.final_status = p.status;
    if (p.status != STATUS_PENDING) return done;
    done.final_status = wait(p.callback);
    if (p.valid && NT_ERROR(done.final_status)) {
        std::lock_guard lock(blocker_mutex_);
        unexpected_failure_ = {p.rules, std::string(p.callback->name) + " completed with " +
                                            spec::status_name(done.final_status)};
    }
    if (done.final_status == STATUS_PENDING) return done;
    process_events();
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->complete(p.pending, done.final_status).verdict);
    return done;
}

Done Session::wait_connect(NDK_CONNECTOR* connector) {
    return wait_for(pending_connects_, connector);
}
bool Session::handshake_came(NDK_CONNECTOR* connector, bool accept) {
    std::lock_guard lock(oracle_mutex_);
    const auto& table_of = accept ? pending_accepts_ : pending_connects_;
    auto it = table_of.find(connector);
    return it != table_of.end() && it->second.callback &&
           it->second.callback->came.load(std::memory_order_acquire);
}
Done Session::wait_accept(NDK_CONNECTOR* connector) {
    return wait_for(pending_accepts_, connector);
}

Done Session::connect(NDK_CONNECTOR* connector, NDK_QP* qp, const sockaddr* destination,
                      ULONG length, ULONG ird, ULONG ord, std::span<const uint8_t> private_data) {
    connect_async(connector, qp, destination, length, ird, ord, private_data);
    return wait_connect(connector);
}

NDK_CONNECTOR* Session::wait_connect_event(NDK_LISTENER* listener, milliseconds timeout) {
    auto it = event_records_.find(listener);
    if (it == event_records_.end()) return nullptr;
    EventRecord* r = it->second;
    in_flight::Wait waiting("NdkConnectEventCallback", "",
                            timeout >= milliseconds(1000) ? "CONN-20" : "",
                            "(waiting for a connect event on the listener)");
    spin_until([r] { return r->incoming_count.load(std::memory_order_acquire) > 0; });
    std::unique_lock lock(r->mutex);
    const milliseconds limit =
        timeout >= milliseconds(1000) ? patience(timeout) : stretched_for_link(timeout);
    if (!r->arrived.wait_for(lock, limit, [&] { return !r->incoming.empty(); })) {
        lock.unlock();
        if (timeout >= milliseconds(1000))
            owed_but_missing({"CONN-20"}, "no connect event reached the listener within " +
                                              std::to_string(limit.count()) + " ms");
        return nullptr;
    }
    NDK_CONNECTOR* c = r->incoming.front();
    r->incoming.pop_front();
    r->incoming_count.fetch_sub(1, std::memory_order_relaxed);
    lock.unlock();
    process_events();  // the oracle learns of the new connector
    return c;
}

NTSTATUS Session::accept_async(NDK_CONNECTOR* connector, NDK_QP* qp, ULONG ird, ULONG ord,
                               std::span<const uint8_t> private_data) {
    return accept_with(connector, qp, ird, ord, private_data, false);
}

NTSTATUS Session::accept_with(NDK_CONNECTOR* connector, NDK_QP* qp, ULONG ird, ULONG ord,
                              std::span<const uint8_t> private_data, bool ex) {
    remember_private_data(connector, private_data);
    EventRecord* r = new_event_record();
    r->object = connector;
    event_records_[connector] = r;
    calls::Accept call{
        id(connector), id(qp), ird, ord, static_cast<uint32_t>(private_data.size()), ex, true};
    return start_async(
        call,
        [&](void* cb) {
            auto* data = const_cast<uint8_t*>(private_data.data());
            auto size = static_cast<ULONG>(private_data.size());
            auto& t = table<NDK_CONNECTOR_DISPATCH>(connector);
            return ex ? t.NdkAcceptEx(connector, qp, ird, ord, data, size, on_disconnect_ex, r,
                                      on_request, cb)
                      : t.NdkAccept(connector, qp, ird, ord, data, size, on_disconnect, r,
                                    on_request, cb);
        },
        ex ? "NdkAcceptEx" : "NdkAccept", kRequest, pending_accepts_, connector);
}

Done Session::complete_connect(NDK_CONNECTOR* connector) {
    EventRecord* r = new_event_record();
    r->object = connector;
    event_records_[connector] = r;
    return request(
        calls::CompleteConnect{id(connector), false, true},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_CONNECTOR_DISPATCH>(connector).NdkCompleteConnect(
                connector, on_disconnect, r, done, ctx);
        },
        "NdkCompleteConnect", {}, connector);
}

NTSTATUS Session::reject(NDK_CONNECTOR* connector, std::span<const uint8_t> private_data) {
    remember_private_data(connector, private_data);
    calls::Reject call{id(connector), static_cast<uint32_t>(private_data.size())};
    InFlight flight(*this, call, {{connector, "connector"}});
    NTSTATUS s = table<NDK_CONNECTOR_DISPATCH>(connector).NdkReject(
        connector, const_cast<uint8_t*>(private_data.data()),
        static_cast<ULONG>(private_data.size()));
    flight.returned(s);
    return post(call, s);
}

Done Session::disconnect(NDK_CONNECTOR* connector) {
    return request(
        calls::Disconnect{id(connector)},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_CONNECTOR_DISPATCH>(connector).NdkDisconnect(connector, done, ctx);
        },
        "NdkDisconnect", {}, connector);
}

size_t Session::disconnect_events(NDK_CONNECTOR* connector) {
    process_events();
    auto it = event_records_.find(connector);
    if (it == event_records_.end()) return 0;
    std::lock_guard lock(it->second->mutex);
    return it->second->count;
}

uint16_t Session::next_port() {
    // 20000..39999, starting where the process and session say: below the tests' fixed ports
    // (40000..49151, seed::test_port) and the ephemeral ports providers pick (49152.., CONN-25).
    if (port_ == 0)
        port_ = static_cast<uint16_t>(
            20000 + (getpid() * 131 + reinterpret_cast<uintptr_t>(this) / 64) % 20000);
    uint16_t port = port_;
    port_ = port_ == 39999 ? 20000 : static_cast<uint16_t>(port_ + 1);
    return port;
}

LoopbackPair Session::loopback_pair(const QpShape& shape, ULONG cq_depth) {
    LoopbackPair pair;
    auto fail = [&](std::string why) {
        pair.problem = std::move(why);
        return pair;
    };
    pair.pd = create_pd().object;
    if (!pair.pd) return fail("NdkCreatePd failed");
    pair.cq = create_cq(cq_depth).object;
    if (!pair.cq) return fail("NdkCreateCq failed");
    static int qp_a_context, qp_b_context;
    pair.a = create_qp(pair.pd, pair.cq, pair.cq, &qp_a_context, shape).object;
    pair.b = create_qp(pair.pd, pair.cq, pair.cq, &qp_b_context, shape).object;
    if (!pair.a || !pair.b) return fail("NdkCreateQp failed");
    pair.listener = create_listener().object;
    if (!pair.listener) return fail("NdkCreateListener failed");
    sockaddr_in address = ipv4(next_port());
    Done listening = listen(pair.listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
    if (!listening.ok())
        return fail("NdkListen failed with " + spec::status_name(listening.final_status));
    pair.active = create_connector().object;
    if (!pair.active) return fail("NdkCreateConnector failed");
    NTSTATUS s =
        connect_async(pair.active, pair.a, reinterpret_cast<sockaddr*>(&address), sizeof address);
    if (s != STATUS_PENDING && s != STATUS_SUCCESS)
        return fail("NdkConnect failed with " + spec::status_name(s));
    pair.passive = wait_connect_event(pair.listener);
    if (!pair.passive) return fail("no connect event reached the listener");
    s = accept_async(pair.passive, pair.b);
    if (s != STATUS_PENDING && s != STATUS_SUCCESS)
        return fail("NdkAccept failed with " + spec::status_name(s));
    Done connected = wait_connect(pair.active);
    if (!connected.ok())
        return fail("NdkConnect completed with " + spec::status_name(connected.final_status));
    Done completed = complete_connect(pair.active);
    if (!completed.ok())
        return fail("NdkCompleteConnect failed with " + spec::status_name(completed.final_status));
    Done accepted = wait_accept(pair.passive);
    if (!accepted.ok())
        return fail("NdkAccept completed with " + spec::status_name(accepted.final_status));
    pair.connected = true;
    return pair;
}

// ---- Connections: the rest of the connector's and listener's tables ----

uint16_t AddressResult::family() const {
    return reinterpret_cast<const sockaddr*>(bytes.data())->sa_family;
}

uint16_t AddressResult::port() const {
    if (family() == AF_INET6)
        return ntohs(reinterpret_cast<const sockaddr_in6*>(bytes.data())->sin6_port);
    return ntohs(reinterpret_cast<const sockaddr_in*>(bytes.data())->sin_port);
}

void Session::remember_private_data(const void* connector, std::span<const uint8_t> data) {
    std::lock_guard lock(callbacks_mutex_);
    sent_private_data_[connector].assign(data.begin(), data.end());
}

NTSTATUS Session::connect_from_async(NDK_CONNECTOR* connector, NDK_QP* qp, const sockaddr* source,
                                     ULONG source_length, const sockaddr* destination, ULONG length,
                                     ULONG ird, ULONG ord, std::span<const uint8_t> private_data) {
    remember_private_data(connector, private_data);
    calls::Connect call{
        id(connector),
        id(qp),
        source ? model::view_address(source, source_length) : model::SocketAddress{},
        model::view_address(destination, length),
        ird,
        ord,
        static_cast<uint32_t>(private_data.size())};
    return start_async(
        call,
        [&](void* cb) {
            return table<NDK_CONNECTOR_DISPATCH>(connector).NdkConnect(
                connector, qp, const_cast<sockaddr*>(source), source ? source_length : 0,
                const_cast<sockaddr*>(destination), length, ird, ord,
                const_cast<uint8_t*>(private_data.data()), static_cast<ULONG>(private_data.size()),
                on_request, cb);
        },
        "NdkConnect", kRequest, pending_connects_, connector);
}

NTSTATUS Session::connect_with_shared_endpoint_async(NDK_CONNECTOR* connector, NDK_QP* qp,
                                                     NDK_SHARED_ENDPOINT* endpoint,
                                                     const sockaddr* destination, ULONG length,
                                                     ULONG ird, ULONG ord,
                                                     std::span<const uint8_t> private_data) {
    remember_private_data(connector, private_data);
    calls::ConnectWithSharedEndpoint call{id(connector),
                                          id(qp),
                                          id(endpoint),
                                          model::view_address(destination, length),
                                          ird,
                                          ord,
                                          static_cast<uint32_t>(private_data.size())};
    return start_async(
        call,
        [&](void* cb) {
            return table<NDK_CONNECTOR_DISPATCH>(connector).NdkConnectWithSharedEndpoint(
                connector, qp, endpoint, const_cast<sockaddr*>(destination), length, ird, ord,
                const_cast<uint8_t*>(private_data.data()), static_cast<ULONG>(private_data.size()),
                on_request, cb);
        },
        "NdkConnectWithSharedEndpoint", kRequest, pending_connects_, connector);
}

NTSTATUS Session::accept_ex_async(NDK_CONNECTOR* connector, NDK_QP* qp, ULONG ird, ULONG ord,
                                  std::span<const uint8_t> private_data) {
    return accept_with(connector, qp, ird, ord, private_data, true);
}

Done Session::complete_connect_ex(NDK_CONNECTOR* connector) {
    EventRecord* r = new_event_record();
    r->object = connector;
    event_records_[connector] = r;
    return request(
        calls::CompleteConnect{id(connector), true, true},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_CONNECTOR_DISPATCH>(connector).NdkCompleteConnectEx(
                connector, on_disconnect_ex, r, done, ctx);
        },
        "NdkCompleteConnectEx", {}, connector);
}

std::vector<ULONG> Session::disconnect_ex_reasons(NDK_CONNECTOR* connector) {
    process_events();
    auto it = event_records_.find(connector);
    if (it == event_records_.end()) return {};
    std::lock_guard lock(it->second->mutex);
    return it->second->ex_reasons;
}

size_t Session::connect_events(NDK_LISTENER* listener) {
    process_events();
    auto it = event_records_.find(listener);
    if (it == event_records_.end()) return 0;
    std::lock_guard lock(it->second->mutex);
    return it->second->count;
}

ConnectionData Session::get_connection_data(NDK_CONNECTOR* connector, ULONG buffer_length,
                                            bool with_buffer, bool with_limits) {
    constexpr size_t kGuard = 64;  // bytes past the buffer the provider must not write
    ConnectionData out;
    std::vector<uint8_t> buffer(with_buffer ? buffer_length + kGuard : 0, 0xEE);
    ULONG length = buffer_length;
    ULONG ird = 0xFFFFFFFF, ord = 0xFFFFFFFF;
    calls::GetConnectionData call{id(connector), with_buffer, buffer_length};
    call.has_read_limits = with_limits;
    {
        InFlight flight(*this, call, {{connector, "connector"}});
        out.status = table<NDK_CONNECTOR_DISPATCH>(connector).NdkGetConnectionData(
            connector, with_limits ? &ird : nullptr, with_limits ? &ord : nullptr,
            with_buffer ? buffer.data() : nullptr, &length);
        flight.returned(out.status);
    }
    out.length = length;
    out.inbound_read_limit = ird;
    out.outbound_read_limit = ord;
    if (with_buffer) out.data.assign(buffer.begin(), buffer.begin() + buffer_length);
    Observed o;
    o.status = out.status;
    o.size_out = length;
    o.inbound_read_limit = with_limits ? ird : 0;
    o.outbound_read_limit = with_limits ? ord : 0;
    model::Verdict v;
    {
        std::lock_guard lock(oracle_mutex_);
        // CONN-PD-03: min(*pPrivateDataLength, RDS) bytes of what the peer sent are copied, and
        // nothing past the buffer is written. The peer's bytes are what its Session call sent.
        const void* peer = nullptr;
        if (const auto* cs = oracle_->state_of<model::ConnectorState>(id(connector)))
            for (const auto& [pointer, known] : ids_)
                if (cs->peer && known == cs->peer) peer = pointer;
        if (with_buffer &&
            (out.status == STATUS_SUCCESS || out.status == STATUS_BUFFER_TOO_SMALL)) {
            std::lock_guard sent_lock(callbacks_mutex_);
            auto sent = sent_private_data_.find(peer);
            if (sent != sent_private_data_.end()) {
                size_t n = std::min<size_t>({buffer_length, length, sent->second.size()});
                if (!std::equal(sent->second.begin(), sent->second.begin() + n, buffer.begin()))
                    v.add(violation({"CONN-PD-03"},
                                    "NdkGetConnectionData copied bytes that differ from the " +
                                        std::to_string(sent->second.size()) +
                                        " bytes of private data the peer sent"));
            }
            if (std::any_of(buffer.begin() + buffer_length, buffer.end(),
                            [](uint8_t b) { return b != 0xEE; }))
                v.add(violation({"CONN-PD-03"}, "NdkGetConnectionData wrote past the " +
                                                    std::to_string(buffer_length) +
                                                    "-byte buffer"));
        }
        verdict_.merge(oracle_->apply(call, o).verdict);
        verdict_.merge(std::move(v));
    }
    process_events();
    return out;
}

AddressResult Session::local_address(void* object, ULONG buffer_length) {
    AddressResult out;
    ULONG length = std::min<ULONG>(buffer_length, out.bytes.size());
    auto* address = reinterpret_cast<sockaddr*>(out.bytes.data());
    std::optional<InFlight> flight;
    flight.emplace(*this, calls::GetLocalAddress{id(object), buffer_length},
                   std::initializer_list<InFlight::Needed>{{object, "object"}});
    switch (static_cast<NDK_OBJECT_HEADER*>(object)->ObjectType) {
        case NdkObjectTypeListener:
            out.status = table<NDK_LISTENER_DISPATCH>(object).NdkGetLocalAddress(
                static_cast<NDK_LISTENER*>(object), address, &length);
            break;
        case NdkObjectTypeSharedEndpoint:
            out.status = table<NDK_SHARED_ENDPOINT_DISPATCH>(object).NdkGetLocalAddress(
                static_cast<NDK_SHARED_ENDPOINT*>(object), address, &length);
            break;
        default:
            out.status = table<NDK_CONNECTOR_DISPATCH>(object).NdkGetLocalAddress(
                static_cast<NDK_CONNECTOR*>(object), address, &length);
            break;
    }
    flight->returned(out.status);
    out.length = length;
    Observed o;
    o.status = out.status;
    o.size_out = length;
    if (out.status == STATUS_SUCCESS) o.address = model::view_address(address, length);
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetLocalAddress{id(object), buffer_length}, o).verdict);
    return out;
}

AddressResult Session::peer_address(NDK_CONNECTOR* connector, ULONG buffer_length) {
    AddressResult out;
    ULONG length = std::min<ULONG>(buffer_length, out.bytes.size());
    auto* address = reinterpret_cast<sockaddr*>(out.bytes.data());
    {
        InFlight flight(*this, calls::GetPeerAddress{id(connector), buffer_length},
                        {{connector, "connector"}});
        out.status =
            table<NDK_CONNECTOR_DISPATCH>(connector).NdkGetPeerAddress(connector, address, &length);
        flight.returned(out.status);
    }
    out.length = length;
    Observed o;
    o.status = out.status;
    o.size_out = length;
    if (out.status == STATUS_SUCCESS) o.address = model::view_address(address, length);
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetPeerAddress{id(connector), buffer_length}, o).verdict);
    return out;
}

void Session::control_connect_events(NDK_LISTENER* listener, bool pause) {
    InFlight flight(*this, calls::ControlConnectEvents{id(listener), pause},
                    {{listener, "listener"}});
    {
        // Recorded first: requests that arrive once the call took effect are judged by it.
        std::lock_guard lock(oracle_mutex_);
        verdict_.merge(
            oracle_->apply(calls::ControlConnectEvents{id(listener), pause}, {}).verdict);
    }
    table<NDK_LISTENER_DISPATCH>(listener).NdkControlConnectEvents(listener, pause ? TRUE : FALSE);
}

LoopbackPair Session::connect_pair(NDK_PD* pd, NDK_CQ* cq, NDK_QP* a, NDK_QP* b,
                                   const sockaddr* address, ULONG length,
                                   const PairOptions& options) {
    LoopbackPair pair;
    pair.pd = pd;
    pair.cq = cq;
    pair.a = a;
    pair.b = b;
    auto fail = [&](std::string why) {
        pair.problem = std::move(why);
        return pair;
    };
    pair.listener = create_listener().object;
    if (!pair.listener) return fail("NdkCreateListener failed");
    Done listening = listen(pair.listener, address, length);
    if (!listening.ok())
        return fail("NdkListen failed with " + spec::status_name(listening.final_status));
    // The address connected to: the listener's own, which names the port it picked for port 0.
    AddressResult bound = local_address(pair.listener);
    if (bound.status != STATUS_SUCCESS)
        return fail("NdkGetListenerLocalAddress failed with " + spec::status_name(bound.status));
    std::array<std::byte, 128> destination{};
    std::memcpy(destination.data(), address, std::min<size_t>(length, destination.size()));
    auto* d = reinterpret_cast<sockaddr*>(destination.data());
    if (d->sa_family == AF_INET6)
        reinterpret_cast<sockaddr_in6*>(d)->sin6_port = htons(bound.port());
    else
        reinterpret_cast<sockaddr_in*>(d)->sin_port = htons(bound.port());
    pair.active = create_connector().object;
    if (!pair.active) return fail("NdkCreateConnector failed");
    NTSTATUS s = connect_async(pair.active, a, d, length, options.active_ird, options.active_ord,
                               options.connect_data);
    if (s != STATUS_PENDING && s != STATUS_SUCCESS)
        return fail("NdkConnect failed with " + spec::status_name(s));
    pair.passive = wait_connect_event(pair.listener);
    if (!pair.passive) return fail("no connect event reached the listener");
    s = options.ex ? accept_ex_async(pair.passive, b, options.passive_ird, options.passive_ord,
                                     options.accept_data)
                   : accept_async(pair.passive, b, options.passive_ird, options.passive_ord,
                                  options.accept_data);
    if (s != STATUS_PENDING && s != STATUS_SUCCESS)
        return fail("NdkAccept failed with " + spec::status_name(s));
    Done connected = wait_connect(pair.active);
    if (!connected.ok())
        return fail("NdkConnect completed with " + spec::status_name(connected.final_status));
    Done completed = options.ex ? complete_connect_ex(pair.active) : complete_connect(pair.active);
    if (!completed.ok())
        return fail("NdkCompleteConnect failed with " + spec::status_name(completed.final_status));
    Done accepted = wait_accept(pair.passive);
    if (!accepted.ok())
        return fail("NdkAccept completed with " + spec::status_name(accepted.final_status));
    pair.connected = true;
    return pair;
}

}  // namespace ndkct::conformance
