// The property commands of connections: listeners, connectors, the handshake and its end.
#include "commands.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "ndkct/spec/hex.hpp"

namespace ndkct::properties {

using conformance::Done;
using spec::hex;
namespace gen = rc::gen;

// ================= Connections =================

HandshakeSide HandshakeSide::any(const NDK_ADAPTER_INFO& info, uint32_t max_private_data) {
    auto limit = [](uint32_t max) {
        return *gen::weightedOneOf<uint32_t>({{6, gen::inRange<uint32_t>(0, max + 1)},
                                              {1, gen::just(max + 1)},
                                              {1, gen::inRange<uint32_t>(max + 1, 100'001)}});
    };
    HandshakeSide side;
    side.inbound_read_limit = limit(info.MaxInboundReadLimit);
    side.outbound_read_limit = limit(info.MaxOutboundReadLimit);
    const uint32_t max = max_private_data;
    side.private_data = *gen::weightedOneOf<uint32_t>(
        {{2, gen::just<uint32_t>(0)},
         {6, gen::inRange<uint32_t>(std::min<uint32_t>(1, max), max + 1)},
         {1, gen::just(max)},
         {1, gen::just(max + 1)}});  // CONN-28: more than the adapter takes
    return side;
}

std::vector<uint8_t> HandshakeSide::bytes(uint8_t salt) const {
    std::vector<uint8_t> data(private_data);
    for (size_t i = 0; i < data.size(); ++i)
        data[i] = uint8_t(i * 13 + salt);
    return data;
}

std::ostream& operator<<(std::ostream& os, const HandshakeSide& side) {
    return os << "InboundReadLimit=" << side.inbound_read_limit
              << ", OutboundReadLimit=" << side.outbound_read_limit
              << ", PrivateData=" << side.private_data << " bytes";
}

namespace {

constexpr uint8_t kConnectSalt = 0xC0, kAcceptSalt = 0xA0;  // whose private data it is

// What Connect and StartConnect begin with: NdkCreateListener, NdkListen on a fresh loopback
// port, NdkCreateConnector and NdkConnect, and then the listener's connect event. The objects go
// to the slots from listener_slot on (listener, active connector, passive connector); `steps`
// gets the log. Returns the passive connector (nullptr when a step failed or no event came);
// `connecting` says whether the connect was started.
NDK_CONNECTOR* start_handshake(Sut& sut, int listener_slot, NDK_QP* qp, const HandshakeSide& side,
                               std::string& steps, NDK_CONNECTOR*& active_out, bool& connecting) {
    Session& s = sut.session;
    connecting = false;
    active_out = nullptr;
    auto listener = s.create_listener();
    sut.place(listener_slot, listener.object);
    steps = "NdkCreateListener " + answer(listener, Kind::listener, listener_slot);
    if (!listener.object) return nullptr;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(sut.next_port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    auto* sa = reinterpret_cast<const sockaddr*>(&address);
    Done listening = s.listen(listener.object, sa, sizeof address);
    steps += ", NdkListen " + answer(listening);
    if (!listening.ok()) return nullptr;
    auto active = s.create_connector();
    sut.place(listener_slot + 1, active.object);
    steps += ", NdkCreateConnector " + answer(active, Kind::connector, listener_slot + 1);
    if (!active.object) return nullptr;
    active_out = active.object;
    const auto data = side.bytes(kConnectSalt);
    NTSTATUS c = s.connect_async(active.object, qp, sa, sizeof address, side.inbound_read_limit,
                                 side.outbound_read_limit, data);
    steps += ", NdkConnect " + answer(c);
    if (c != STATUS_PENDING && c != STATUS_SUCCESS) return nullptr;
    connecting = true;
    NDK_CONNECTOR* passive = s.wait_connect_event(listener.object, sut.options.drain_timeout);
    sut.place(listener_slot + 2, passive);
    if (passive) steps += ", connect event: " + slot_name(Kind::connector, listener_slot + 2);
    return passive;
}

}  // namespace

Connect::Connect(const World& w) {
    auto free = w.open_of(Kind::qp, [](const Slot& s) { return !s.connected; });
    RC_PRE(free.size() >= 2);
    active_qp = *gen::elementOf(free);
    passive_qp = *gen::elementOf(free);
    RC_PRE(active_qp != passive_qp);
    active_side = HandshakeSide::any(*w.info, w.info->MaxCallerData);
    passive_side = HandshakeSide::any(*w.info, w.info->MaxCalleeData);
}

void Connect::run(const World& w, Sut& sut) const {
    int listener_slot = int(w.slots.size());
    sut.place(listener_slot + 2, nullptr);
    auto* a = sut.object<NDK_QP>(active_qp);
    auto* b = sut.object<NDK_QP>(passive_qp);
    if (!a || !b) return skipped(sut, *this, "a QP was never created");
    Session& s = sut.session;
    std::string steps;
    auto done = [&](const std::string& last) { finish(sut, *this, steps + last); };
    NDK_CONNECTOR* active = nullptr;
    bool connecting = false;
    NDK_CONNECTOR* passive =
        start_handshake(sut, listener_slot, a, active_side, steps, active, connecting);
    if (!connecting) return done("");
    if (!passive) {
        Done connected = s.wait_connect(active);
        return done(", no connect event; NdkConnect completed with " +
                    spec::status_name(connected.final_status));
    }
    const auto data = passive_side.bytes(kAcceptSalt);
    NTSTATUS accept = s.accept_async(passive, b, passive_side.inbound_read_limit,
                                     passive_side.outbound_read_limit, data);
    steps += ", NdkAccept " + answer(accept);
    if (accept != STATUS_PENDING && accept != STATUS_SUCCESS) {
        // Refused (e.g. too much private data): the connect still waits for an answer, which
        // nobody gives; the active connector's close cancels it, and is awaited then.
        sut.handshakes.push_back({listener_slot + 1, active, false});
        return done("");
    }
    Done connected = s.wait_connect(active);
    steps += ", NdkConnect completed with " + spec::status_name(connected.final_status);
    if (connected.ok()) steps += ", NdkCompleteConnect " + answer(s.complete_connect(active));
    Done accepted = s.wait_accept(passive);
    steps += ", NdkAccept completed with " + spec::status_name(accepted.final_status);
    done("");
}

StartConnect::StartConnect(const World& w)
    : qp(w.pick(Kind::qp, [](const Slot& s) { return !s.connected; })),
      side(HandshakeSide::any(*w.info, w.info->MaxCallerData)) {}

void StartConnect::apply(World& w) const {
    w.slots[qp].connected = true;
    const int listener = w.add({Kind::listener});
    Slot active{Kind::connector};
    active.handshake = Handshake::connecting;
    active.peer = int16_t(listener + 2);
    w.add(active);
    Slot passive{Kind::connector};
    passive.handshake = Handshake::incoming;
    passive.peer = int16_t(listener + 1);
    passive.peer_data = side.private_data;
    w.add(passive);
}

void StartConnect::run(const World& w, Sut& sut) const {
    int listener_slot = int(w.slots.size());
    sut.place(listener_slot + 2, nullptr);
    auto* q = sut.object<NDK_QP>(qp);
    if (!q) return skipped(sut, *this, "the QP was never created");
    std::string steps;
    NDK_CONNECTOR* active = nullptr;
    bool connecting = false;
    NDK_CONNECTOR* passive =
        start_handshake(sut, listener_slot, q, side, steps, active, connecting);
    // The connect stays pending: Accept awaits it, or the active connector's close does.
    if (connecting) sut.handshakes.push_back({listener_slot + 1, active, false});
    if (connecting && !passive) steps += ", no connect event";
    finish(sut, *this, steps);
}

Accept::Accept(const World& w)
    : connector(w.pick(Kind::connector,
                       [](const Slot& s) { return s.handshake == Handshake::incoming; })),
      qp(w.pick(Kind::qp, [](const Slot& s) { return !s.connected; })),
      side(HandshakeSide::any(*w.info, w.info->MaxCalleeData)) {}

void Accept::apply(World& w) const {
    w.slots[qp].connected = true;
    if (w.two_nodes) w.slots[qp].node = 1;  // the accepting QP is made on node B
    w.slots[connector].handshake = Handshake::accepted;
    const int peer = w.slots[connector].peer;
    if (w.is(peer, Kind::connector) && w.slots[peer].handshake == Handshake::connecting) {
        w.slots[peer].handshake = Handshake::connected;
        w.slots[peer].peer_data = side.private_data;
    }
}

void Accept::run(const World& w, Sut& sut) const {
    auto* c = sut.object<NDK_CONNECTOR>(connector);
    auto* q = sut.object<NDK_QP>(qp);
    if (!c || !q) return skipped(sut, *this, "its connector or QP was never created");
    const auto data = side.bytes(kAcceptSalt);
    NTSTATUS s =
        sut.session.accept_async(c, q, side.inbound_read_limit, side.outbound_read_limit, data);
    std::string a = answer(s);
    if (s == STATUS_PENDING || s == STATUS_SUCCESS) {
        // The accept stays pending until the peer's NdkCompleteConnect; the peer's connect
        // completes now.
        sut.handshakes.push_back({connector, c, true});
        if (std::string peer = sut.await_handshake(w.slots[connector].peer); !peer.empty())
            a += ", " + peer;
    }
    finish(sut, *this, a);
}

CompleteConnect::CompleteConnect(const World& w)
    : connector(w.pick(Kind::connector,
                       [](const Slot& s) { return s.handshake == Handshake::connected; })) {}

void CompleteConnect::apply(World& w) const {
    w.slots[connector].handshake = Handshake::none;
    const int peer = w.slots[connector].peer;
    if (w.is(peer, Kind::connector) && w.slots[peer].handshake == Handshake::accepted)
        w.slots[peer].handshake = Handshake::none;
}

void CompleteConnect::run(const World& w, Sut& sut) const {
    auto* c = sut.object<NDK_CONNECTOR>(connector);
    if (!c) return skipped(sut, *this, "the connector was never created");
    Done d = sut.session.complete_connect(c);
    std::string a = answer(d);
    if (d.ok())  // the peer's accept completes now
        if (std::string peer = sut.await_handshake(w.slots[connector].peer); !peer.empty())
            a += ", " + peer;
    finish(sut, *this, a);
}

GetConnectionData::GetConnectionData(const World& w)
    : connector(w.pick(Kind::connector, [](const Slot& s) {
          return s.handshake == Handshake::incoming || s.handshake == Handshake::connected;
      })) {
    with_buffer = *gen::weightedOneOf<bool>({{3, gen::just(true)}, {1, gen::just(false)}});
    with_limits = *gen::weightedOneOf<bool>({{3, gen::just(true)}, {1, gen::just(false)}});
    const uint32_t sent = w.slots[connector].peer_data;
    buffer_length = 0;  // the probe: NULL buffer, *pPrivateDataLength 0 (CONN-PD-02)
    if (with_buffer)
        buffer_length = *gen::weightedOneOf<uint32_t>(
            {{3, gen::inRange<uint32_t>(0, std::max<uint32_t>(sent, 1))},  // short: CONN-PD-04
             {2, gen::just(sent)},
             {1, gen::inRange<uint32_t>(sent, sent + 65)}});
}

void GetConnectionData::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CONNECTOR>(connector);
    if (!c) return skipped(sut, *this, "the connector was never created");
    auto got = sut.session.get_connection_data(c, buffer_length, with_buffer, with_limits);
    std::string a = answer(got.status) + ", *pPrivateDataLength=" + std::to_string(got.length);
    if (with_limits)
        a += ", InboundReadLimit=" + std::to_string(got.inbound_read_limit) +
             ", OutboundReadLimit=" + std::to_string(got.outbound_read_limit);
    finish(sut, *this, a);
}

void Disconnect::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CONNECTOR>(connector);
    if (!c) return skipped(sut, *this, "the connector was never created");
    finish(sut, *this, answer(sut.session.disconnect(c)));
}

}  // namespace ndkct::properties
