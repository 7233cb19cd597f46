// The split provider: entry points, the adapter's table, the side channel to node B, tokens.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "split.hpp"

namespace ndkct::twonode {

bool tracing() {
    static const bool on = [] {
        const char* v = std::getenv("NDKCT_TWONODE_TRACE");
        return v && *v && *v != '0';
    }();
    return on;
}

void split_log(const char* format, ...) {
    char line[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    std::fprintf(stderr, "two-node: %s\n", line);
}

// ---- Peer address ----

std::optional<PeerAddress> parse_peer(const std::string& text, std::string& error) {
    PeerAddress p;
    p.text = text;
    std::string port;
    if (!text.empty() && text[0] == '[') {
        auto close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            error = "'" + text + "' is not [IPv6]:PORT";
            return std::nullopt;
        }
        p.host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        auto colon = text.rfind(':');
        if (colon == std::string::npos || colon == 0) {
            error = "'" + text + "' is not HOST:PORT";
            return std::nullopt;
        }
        p.host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    char* end = nullptr;
    unsigned long n = std::strtoul(port.c_str(), &end, 10);
    if (port.empty() || *end || n == 0 || n > 65535) {
        error = "'" + text + "': the port must be 1-65535";
        return std::nullopt;
    }
    p.port = static_cast<uint16_t>(n);
    return p;
}

std::optional<PeerAddress> peer_from_environment() {
    const char* v = std::getenv("NDKCT_PEER");
    if (!v || !*v) return std::nullopt;
    std::string error;
    auto p = parse_peer(v, error);
    if (!p) throw std::invalid_argument("NDKCT_PEER: " + error);
    return p;
}

// ---- Targets ----

void Join::part_done(NTSTATUS st) {
    if (!NT_SUCCESS(st)) {
        NTSTATUS expected = STATUS_SUCCESS;
        status.compare_exchange_strong(expected, st);
    }
    if (left.load() == 1 && before_close_a) {
        // The last part is done: the deferred A part closes now, holding the join open.
        auto next = std::move(before_close_a);
        before_close_a = nullptr;
        next();
    }
    if (--left == 0) fire();
}

void Join::fire() {
    NTSTATUS st = status.load();
    if (before) before(st);
    if (close) {
        if (close) close(context);
    } else if (request) {
        request(context, st);
    }
}

void Join::on_event(Event kind, Reader& r) {
    if (kind == Event::closed) {
        part_done(STATUS_SUCCESS);
    } else if (kind == Event::request_done) {
        part_done(r.i32());
    }
}

Join* new_join(Adapter* ad, NDK_FN_REQUEST_COMPLETION* request, NDK_FN_CLOSE_COMPLETION* close,
               void* context) {
    auto j = std::make_unique<Join>();
    j->request = request;
    j->close = close;
    j->context = context;
    return static_cast<Join*>(ad->keep(std::move(j)));
}

void join_request_done(void* join, NTSTATUS status) {
    static_cast<Join*>(join)->part_done(status);
}

void join_close_done(void* join) {
    static_cast<Join*>(join)->part_done(STATUS_SUCCESS);
}

NTSTATUS join_finish(Join* join, bool any_pended, NTSTATUS inline_status) {
    if (!any_pended) {
        // No part pended: nothing will call back; the caller answers inline.
        return inline_status;
    }
    if (!NT_SUCCESS(inline_status)) {
        NTSTATUS expected = STATUS_SUCCESS;
        join->status.compare_exchange_strong(expected, inline_status);
    }
    join->part_done(STATUS_SUCCESS);
    return STATUS_PENDING;
}

void Waiter::on_event(Event kind, Reader& r) {
    std::lock_guard lock(m);
    if (kind == Event::created) {
        status = r.i32();
        handle = r.u64();
    } else if (kind == Event::request_done) {
        status = r.i32();
        if (r.remaining() >= 4) {
            uint32_t n = r.u32();
            for (uint32_t i = 0; i < n; ++i)
                values.push_back(r.u64());
        }
    } else if (kind == Event::closed) {
        status = STATUS_SUCCESS;
    }
    done = true;
    cv.notify_all();
}

void Waiter::on_peer_lost() {
    std::lock_guard lock(m);
    status = STATUS_CONNECTION_ABORTED;
    done = true;
    cv.notify_all();
}

bool Waiter::wait(int millis) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, std::chrono::milliseconds(millis), [&] { return done; });
}

uint64_t create_on_b(Adapter* ad, Op op, Writer& w, Waiter* waiter) {
    Reader r(ad->need_peer().call(op, w, waiter));
    NTSTATUS st = r.i32();
    uint64_t handle = r.u64();
    if (st == STATUS_PENDING) {
        if (!waiter->wait())
            throw PeerLost(std::string(op_name(op)) + " on node B never completed");
        st = waiter->status;
        handle = waiter->handle;
    }
    if (st != STATUS_SUCCESS || !handle)
        throw PeerLost(std::string(op_name(op)) + " failed on node B with " +
                       std::to_string(static_cast<uint32_t>(st)));
    return handle;
}

// ---- The adapter ----

template <typename T>
T* Adapter::make(Kind kind, const void* dispatch) {
    auto p = std::make_shared<T>();
    p->Header = {};
    p->Header.Version = version;
    static const NDK_OBJECT_TYPE types[] = {
        NdkObjectTypePd,        NdkObjectTypeCq,       NdkObjectTypeMr,
        NdkObjectTypeMw,        NdkObjectTypeSrq,      NdkObjectTypeQp,
        NdkObjectTypeConnector, NdkObjectTypeListener, NdkObjectTypeSharedEndpoint};
    p->Header.ObjectType = types[static_cast<int>(kind)];
    p->Dispatch = dispatch;
    p->kind = kind;
    p->adapter = this;
    T* raw = p.get();
    std::lock_guard lock(mutex);
    objects.push_back(std::move(p));
    return raw;
}

template Pd* Adapter::make<Pd>(Kind, const void*);
template Cq* Adapter::make<Cq>(Kind, const void*);
template Mr* Adapter::make<Mr>(Kind, const void*);
template Mw* Adapter::make<Mw>(Kind, const void*);
template Srq* Adapter::make<Srq>(Kind, const void*);
template Qp* Adapter::make<Qp>(Kind, const void*);
template Connector* Adapter::make<Connector>(Kind, const void*);
template Listener* Adapter::make<Listener>(Kind, const void*);
template Endpoint* Adapter::make<Endpoint>(Kind, const void*);

Target* Adapter::keep(std::unique_ptr<Target> t) {
    std::lock_guard lock(mutex);
    targets.push_back(std::move(t));
    return targets.back().get();
}

namespace {

int connect_tcp(const PeerAddress& peer, std::string& error) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    int rc = ::getaddrinfo(peer.host.c_str(), std::to_string(peer.port).c_str(), &hints, &list);
    if (rc != 0) {
        error = std::string("cannot resolve ") + peer.host + ": " + gai_strerror(rc);
        return -1;
    }
    int fd = -1;
    for (addrinfo* ai = list; ai && fd < 0; ai = ai->ai_next) {
        fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            error = std::string("cannot connect to the agent at ") + peer.text + ": " +
                    std::strerror(errno);
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(list);
    if (fd >= 0) {
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        // A peer that vanishes without a word (its machine stopped) is noticed: keepalives after
        // 3 s of silence, and data unacknowledged for 30 s ends the connection. A link that
        // comes back within that time loses nothing (TCP's retransmissions back off: after a
        // few seconds' drop the next one may come seconds after the link is back).
        int idle = 3, interval = 1, count = 5;
        unsigned user_timeout_ms = 30000;
        ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
        ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
    }
    return fd;
}

}  // namespace

Peer& Adapter::need_peer() {
    std::lock_guard lock(materialize);
    if (peer) {
        if (peer->lost()) throw PeerLost("node B is lost: " + peer->lost_reason());
        return *peer;
    }
    if (!peer_error.empty()) throw PeerLost(peer_error);
    // The agent may still be starting (its guest boots beside ours): retry for a while.
    int wait_s = 60;
    if (const char* v = std::getenv("NDKCT_PEER_WAIT")) wait_s = std::atoi(v);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
    std::string error;
    int fd = -1;
    for (;;) {
        fd = connect_tcp(config->peer, error);
        if (fd >= 0 || std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    if (fd < 0) {
        peer_error = error + " (is `ndkct agent --listen " + std::to_string(config->peer.port) +
                     "` running there?)";
        split_log("%s", peer_error.c_str());
        throw PeerLost(peer_error);
    }
    peer = std::make_unique<Peer>(this, fd, memory);
    Writer w;
    w.u32(kMagic);
    w.u16(kProtocolVersion);
    w.u64(memory.PageCount);
    w.u16(version.Major);
    w.u16(version.Minor);
    w.str(profile_json);
    w.str(device);
    w.str(config->spec_text);
    w.u64(seed);
    try {
        Reader r(peer->call(Op::hello, w));
        NTSTATUS st = r.i32();
        std::string message = r.str();
        std::string name = r.str(), b4 = r.str(), b6 = r.str();
        if (st != STATUS_SUCCESS) {
            peer_error = "node B could not open its adapter (" +
                         std::to_string(static_cast<uint32_t>(st)) + "): " + message;
            throw PeerLost(peer_error);
        }
        learn_addresses(this, fd, b4, b6);
        if (tracing())
            split_log("peer %s: adapter of '%s' open on node B", config->peer.text.c_str(),
                      name.c_str());
    } catch (const std::exception& e) {
        if (peer_error.empty()) peer_error = e.what();
        split_log("%s", peer_error.c_str());
        peer->stop();
        peer.reset();
        throw PeerLost(peer_error);
    }
    return *peer;
}

// ---- The side channel ----

Peer::Peer(Adapter* adapter, int fd, const NDKCT_HOST_MEMORY& memory)
    : adapter_(adapter), fd_(fd), mirror_(memory) {
    reader_ = std::thread([this] { read_loop(); });
    deliverer_ = std::thread([this] { deliver_loop(); });
}

Peer::~Peer() {
    stop();
}

void Peer::stop() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    {
        std::lock_guard lock(mutex_);
        events_cv_.notify_all();
        replies_cv_.notify_all();
    }
    if (reader_.joinable()) reader_.join();
    if (deliverer_.joinable()) deliverer_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

std::string Peer::lost_reason() {
    std::lock_guard lock(mutex_);
    return why_;
}

std::vector<uint8_t> Peer::call(Op op, Writer& w, Target* target) {
    uint64_t seq;
    {
        std::lock_guard lock(mutex_);
        if (lost_) throw PeerLost("node B is lost: " + why_);
        seq = next_seq_++;
        waiting_.insert(seq);
        if (target) {
            outstanding_.insert(target);
        }
    }
    try {
        std::lock_guard lock(write_mutex_);
        send_frame(fd_, FrameKind::request, static_cast<uint16_t>(op), seq, w.buffer());
    } catch (const WireError& e) {
        mark_lost(e.what());
    }
    std::unique_lock lock(mutex_);
    replies_cv_.wait(lock, [&] { return replies_.count(seq) || lost_; });
    waiting_.erase(seq);
    auto it = replies_.find(seq);
    if (it == replies_.end())
        throw PeerLost(std::string("node B is lost (") + op_name(op) + "): " + why_);
    auto payload = std::move(it->second);
    replies_.erase(it);
    if (payload.empty() || payload[0] != 1)
        throw PeerLost(std::string("node B could not do ") + op_name(op) + ": " +
                       std::string(payload.begin() + (payload.empty() ? 0 : 1), payload.end()));
    payload.erase(payload.begin());
    return payload;
}

void Peer::push(bool acknowledged) {
    Writer w;
    size_t changed = mirror_.take_changes(w);
    if (tracing())
        split_log("push: %zu bytes changed on A in %zu mirrored pages", changed,
                  mirror_.page_count());
    if (changed == 0) return;
    if (acknowledged) {
        try {
            call(Op::push_acknowledged, w);
        } catch (const PeerLost&) {
        }
        return;
    }
    std::lock_guard lock(write_mutex_);
    if (lost_) return;
    try {
        send_frame(fd_, FrameKind::request, static_cast<uint16_t>(Op::push), 0, w.buffer());
    } catch (const WireError& e) {
        mark_lost(e.what());
    }
}

void Peer::pull() {
    Writer w;
    Reader r(call(Op::pull, w));
    mirror_.apply(r);
}

void Peer::mark_lost(const std::string& why) {
    std::lock_guard lock(mutex_);
    if (lost_) return;
    why_ = why;
    lost_ = true;
    replies_cv_.notify_all();
    events_cv_.notify_all();
}

// The reader's end: B is gone. Requests that waited for B complete as NDKPI has outstanding
// requests complete when the connection breaks, in error: after the events B did send.
void Peer::lose(const std::string& why) {
    mark_lost(why);
    if (!stopping_)
        split_log(
            "node B (%s) is lost: %s; what was pending there completes with "
            "STATUS_CONNECTION_ABORTED",
            adapter_->config->peer.text.c_str(), lost_reason().c_str());
    std::vector<Target*> orphans;
    {
        std::unique_lock lock(mutex_);
        events_cv_.wait(lock, [&] { return (events_.empty() && !delivering_) || stopping_; });
        orphans.assign(outstanding_.begin(), outstanding_.end());
        outstanding_.clear();
    }
    for (Target* t : orphans)
        t->on_peer_lost();
}

void Peer::read_loop() {
    Frame f;
    try {
        while (receive_frame(fd_, f)) {
            if (f.kind == FrameKind::reply) {
                std::lock_guard lock(mutex_);
                replies_[f.id] = std::move(f.payload);
                replies_cv_.notify_all();
            } else if (f.kind == FrameKind::event) {
                auto* target = reinterpret_cast<Target*>(f.id);
                if (target && target->internal) {
                    // The split's own waits end here, never behind the consumer's callbacks.
                    auto kind = static_cast<Event>(f.code);
                    {
                        std::lock_guard lock(mutex_);
                        outstanding_.erase(target);
                    }
                    Reader r(f.payload);
                    target->on_event(kind, r);
                } else {
                    std::lock_guard lock(mutex_);
                    events_.push_back(std::move(f));
                    events_cv_.notify_all();
                }
            } else {
                throw WireError("node B sent a request");
            }
            f = Frame{};
        }
        if (!stopping_) lose("the agent closed the side channel");
    } catch (const WireError& e) {
        if (!stopping_) lose(e.what());
    }
    if (stopping_) {
        std::lock_guard lock(mutex_);
        lost_ = true;
        if (why_.empty()) why_ = "the adapter closed";
        replies_cv_.notify_all();
        events_cv_.notify_all();
    }
}

void Peer::deliver_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
        events_cv_.wait(lock, [&] { return !events_.empty() || stopping_; });
        if (events_.empty()) break;
        Frame f = std::move(events_.front());
        events_.pop_front();
        delivering_ = true;
        auto* target = reinterpret_cast<Target*>(f.id);
        auto kind = static_cast<Event>(f.code);
        // A request's completion ends its wait; notifications and connection events do not.
        if (kind == Event::created || kind == Event::request_done || kind == Event::closed)
            outstanding_.erase(target);
        lock.unlock();
        try {
            Reader r(f.payload);
            if (target) target->on_event(kind, r);
        } catch (const WireError& e) {
            split_log("a malformed event from node B: %s", e.what());
        }
        lock.lock();
        delivering_ = false;
        events_cv_.notify_all();
    }
}

void Peer::drain_events() {
    std::unique_lock lock(mutex_);
    events_cv_.wait(lock, [&] { return (events_.empty() && !delivering_) || stopping_; });
}

// ---- Tokens ----

void note_token(Adapter* ad, Obj* object, Node origin, uint8_t kind, UINT32 value) {
    std::lock_guard lock(ad->mutex);
    // One canonical value per (object, kind): drop what the object had before.
    for (auto it = ad->tokens.begin(); it != ad->tokens.end();) {
        auto& owners = it->second;
        std::erase_if(owners, [&](const Adapter::TokenOwner& o) {
            return o.object == object && o.kind == kind;
        });
        it = owners.empty() ? ad->tokens.erase(it) : std::next(it);
    }
    ad->tokens[value].push_back({object, origin, kind});
}

// A closed object's tokens must not lead token_on to it: its part on A is gone (its tokens
// would be asked of a destroyed object), and making its part on B then would leave that part
// open under the PD's part there, whose close would wait for it forever (CLOSE-02; found by
// ndk.property.memory_registration across two guests: two fast-register MRs had the token 0,
// the closed one came first, and the PD's close never completed).
void forget_tokens(Adapter* ad, Obj* object) {
    std::lock_guard lock(ad->mutex);
    for (auto it = ad->tokens.begin(); it != ad->tokens.end();) {
        auto& owners = it->second;
        std::erase_if(owners, [&](const Adapter::TokenOwner& o) { return o.object == object; });
        it = owners.empty() ? ad->tokens.erase(it) : std::next(it);
    }
}

namespace {

UINT32 mr_token(Adapter* ad, Mr* mr, Node node, bool remote) {
    if (node == Node::a) {
        auto* m = inner<NDK_MR>(mr->a);
        return remote ? m->Dispatch->NdkGetRemoteTokenFromMr(m)
                      : m->Dispatch->NdkGetLocalTokenFromMr(m);
    }
    materialize_mr(ad, mr);
    return remote ? mr->b_remote : mr->b_local;
}

UINT32 mw_token(Adapter* ad, Mw* mw, Node node) {
    if (node == Node::a) {
        auto* m = inner<NDK_MW>(mw->a);
        return m->Dispatch->NdkGetRemoteTokenFromMw(m);
    }
    materialize_mw(ad, mw);
    return mw->b_remote;
}

}  // namespace

UINT32 token_on(Adapter* ad, UINT32 value, Node node, uint8_t kind) {
    Adapter::TokenOwner other{nullptr, Node::a, 0};
    {
        std::lock_guard lock(ad->mutex);
        auto it = ad->tokens.find(value);
        if (it == ad->tokens.end()) return value;  // not one the consumer got: as it is
        bool found = false;
        for (const auto& o : it->second) {
            bool same_kind = o.kind == kind || (kind == 0 && o.kind == 2);
            if (!same_kind) continue;
            if (o.origin == node) return value;  // valid there as it is
            if (!found) other = o, found = true;
        }
        if (!found) return value;
    }
    try {
        switch (other.object->kind) {
            case Kind::mr:
                return mr_token(ad, static_cast<Mr*>(other.object), node, kind == 1);
            case Kind::mw:
                return mw_token(ad, static_cast<Mw*>(other.object), node);
            case Kind::pd:
                return node == Node::b ? privileged_on_b(ad, static_cast<Pd*>(other.object))
                                       : value;
            default:
                return value;
        }
    } catch (const PeerLost&) {
        return value;
    }
}

UINT32 canonical_of(Adapter* ad, Node node, UINT32 real) {
    std::lock_guard lock(ad->mutex);
    for (auto& [value, owners] : ad->tokens)
        for (const auto& o : owners) {
            if (o.kind != 1) continue;
            if (o.origin == node && value == real) return value;
            if (o.origin != node && o.object->kind == Kind::mr && node == Node::b &&
                static_cast<Mr*>(o.object)->b_remote == real)
                return value;
            if (o.origin != node && o.object->kind == Kind::mw && node == Node::b &&
                static_cast<Mw*>(o.object)->b_remote == real)
                return value;
        }
    return real;
}

uint64_t logical_on_b(Adapter* ad, uint64_t logical) {
    materialize_lams(ad);
    std::lock_guard lock(ad->mutex);
    uint64_t page = logical & ~uint64_t(PAGE_SIZE - 1);
    auto it = ad->logical_a_to_b.find(page);
    if (it == ad->logical_a_to_b.end()) return logical;
    return it->second | (logical & (PAGE_SIZE - 1));
}

std::vector<NDK_SGE> sges_on(Adapter* ad, Pd* pd, const NDK_SGE* sgl, ULONG n, Node node,
                             bool inline_data) {
    (void)pd;
    std::vector<NDK_SGE> out(sgl, sgl + (sgl ? n : 0));
    if (inline_data) return out;  // the bytes travel; tokens are ignored (SGE-06)
    for (auto& s : out) {
        bool privileged = false;
        {
            std::lock_guard lock(ad->mutex);
            auto it = ad->tokens.find(s.MemoryRegionToken);
            if (it != ad->tokens.end())
                for (const auto& o : it->second)
                    if (o.kind == 2) privileged = true;
        }
        UINT32 t = token_on(ad, s.MemoryRegionToken, node, 0);
        if (privileged && node == Node::b)
            s.LogicalAddress.QuadPart = static_cast<LONG64>(
                logical_on_b(ad, static_cast<uint64_t>(s.LogicalAddress.QuadPart)));
        s.MemoryRegionToken = t;
    }
    return out;
}

// ---- The adapter's dispatch table ----

namespace {

Adapter* adapter_of(NDK_ADAPTER* a) {
    return reinterpret_cast<Adapter*>(a);
}

NTSTATUS split_query_adapter_info(NDK_ADAPTER* a, NDK_ADAPTER_INFO* info, ULONG* size) {
    auto* ad = adapter_of(a);
    return ad->a->Dispatch->NdkQueryAdapterInfo(ad->a, info, size);
}

void cq_notified_a(void* ctx, NTSTATUS status) {
    static_cast<Cq*>(ctx)->notified(Node::a, status);
}

}  // namespace

namespace {

NTSTATUS split_create_cq(NDK_ADAPTER* a, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK* notify,
                         PVOID notify_context, GROUP_AFFINITY* affinity,
                         NDK_FN_CREATE_COMPLETION* completion, PVOID context, NDK_CQ** out) {
    auto* ad = adapter_of(a);
    auto* cq = ad->make<Cq>(Kind::cq, &kCqDispatch);
    cq->notify = notify;
    cq->notify_context = notify_context;
    cq->depth = depth;
    return create_a(ad, cq, completion, context, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return ad->a->Dispatch->NdkCreateCq(
                            ad->a, depth, notify ? cq_notified_a : nullptr, cq, affinity, cb, ctx,
                            reinterpret_cast<NDK_CQ**>(made));
                    });
}

NTSTATUS split_create_pd(NDK_ADAPTER* a, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                         NDK_PD** out) {
    auto* ad = adapter_of(a);
    auto* pd = ad->make<Pd>(Kind::pd, &kPdDispatch);
    return create_a(ad, pd, completion, context, reinterpret_cast<void**>(out),
                    [&](NDK_FN_CREATE_COMPLETION* cb, void* ctx, void** made) {
                        return ad->a->Dispatch->NdkCreatePd(ad->a, cb, ctx,
                                                            reinterpret_cast<NDK_PD**>(made));
                    });
}

}  // namespace

// split_connect.cpp
NTSTATUS split_create_shared_endpoint(NDK_ADAPTER* a, const PSOCKADDR address, ULONG length,
                                      NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                                      NDK_SHARED_ENDPOINT** out);
NTSTATUS split_create_connector(NDK_ADAPTER* a, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                                NDK_CONNECTOR** out);
NTSTATUS split_create_listener(NDK_ADAPTER* a, NDK_FN_CONNECT_EVENT_CALLBACK* event,
                               PVOID event_context, NDK_FN_CREATE_COMPLETION* completion,
                               PVOID context, NDK_LISTENER** out);

namespace {

// NdkBuildLAM: passed through; a LAM that succeeds is remembered (its chain and pages) so that
// node B can build its twin when a fast registration there needs the logical addresses.
struct LamBuild : Target {
    Adapter* ad = nullptr;
    NDK_LOGICAL_ADDRESS_MAPPING* lam = nullptr;
    std::vector<uint8_t> chain;
    std::vector<PFN_NUMBER> pfns;
    uint64_t length = 0;
    NDK_FN_REQUEST_COMPLETION* completion = nullptr;
    void* context = nullptr;
    void remember() {
        Lam l;
        l.chain = chain;
        l.pfns = pfns;
        l.length = length;
        for (ULONG i = 0; i < lam->AdapterPageCount; ++i)
            l.pages_a.push_back(static_cast<uint64_t>(lam->AdapterPageArray[i].QuadPart));
        std::lock_guard lock(ad->mutex);
        ad->lams[lam] = std::move(l);
    }
    void on_event(Event, Reader&) override {}
};

void lam_built(void* ctx, NTSTATUS status) {
    auto* b = static_cast<LamBuild*>(ctx);
    if (status == STATUS_SUCCESS && b->lam) b->remember();
    if (b->completion) b->completion(b->context, status);
}

std::vector<PFN_NUMBER> chain_pfns(const MDL* chain) {
    std::vector<PFN_NUMBER> pfns;
    for (const MDL* m = chain; m; m = m->Next) {
        ULONG pages = MmGetMdlPageCount(m);
        const PFN_NUMBER* p = MmGetMdlPfnArrayConst(m);
        pfns.insert(pfns.end(), p, p + pages);
    }
    return pfns;
}

NTSTATUS split_build_lam(NDK_ADAPTER* a, MDL* mdl, SIZE_T length,
                         NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                         NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    auto* ad = adapter_of(a);
    if (!mdl || !lam || !size) {
        // Nothing to remember: the call as it is (its refusal is the provider's).
        return ad->a->Dispatch->NdkBuildLAM(ad->a, mdl, length, completion, context, lam, size,
                                            fbo);
    }
    auto b = std::make_unique<LamBuild>();
    b->ad = ad;
    b->lam = lam;
    Writer w;
    put_mdl_chain(w, mdl);
    b->chain = std::move(w.buffer());
    b->pfns = chain_pfns(mdl);
    b->length = length;
    b->completion = completion;
    b->context = context;
    auto* rec = static_cast<LamBuild*>(ad->keep(std::move(b)));
    NTSTATUS st = ad->a->Dispatch->NdkBuildLAM(ad->a, mdl, length, completion ? lam_built : nullptr,
                                               completion ? rec : nullptr, lam, size, fbo);
    if (st == STATUS_SUCCESS) rec->remember();
    return st;
}

void split_release_lam(NDK_ADAPTER* a, NDK_LOGICAL_ADDRESS_MAPPING* lam) {
    auto* ad = adapter_of(a);
    uint64_t b = 0;
    {
        std::lock_guard lock(ad->mutex);
        auto it = ad->lams.find(lam);
        if (it != ad->lams.end()) {
            b = it->second.b;
            for (size_t i = 0; i < it->second.pages_a.size(); ++i)
                ad->logical_a_to_b.erase(it->second.pages_a[i]);
            ad->lams.erase(it);
        }
    }
    ad->a->Dispatch->NdkReleaseLAM(ad->a, lam);
    if (b && ad->peer && !ad->peer->lost()) {
        try {
            Writer w;
            w.u64(b);
            ad->peer->call(Op::release_lam, w);
        } catch (const PeerLost&) {
        }
    }
}

}  // namespace

NTSTATUS split_query_extension(NDK_OBJECT_HEADER* object, GUID* id, NDK_VERSION version,
                               NDK_EXTENSION_INTERFACE* out) {
    auto* o = reinterpret_cast<Obj*>(object);
    if (object->ObjectType == NdkObjectTypeAdapter) {
        auto* ad = reinterpret_cast<Adapter*>(object);
        return ad->a->Dispatch->NdkQueryExtension(&ad->a->Header, id, version, out);
    }
    if (!o->a) return STATUS_NOT_SUPPORTED;  // a part on B only: no extensions are defined
    // Every table's second entry is NdkQueryExtension.
    struct Any {
        NDK_OBJECT_HEADER Header;
        const struct {
            NDK_FN_CLOSE_OBJECT* close;
            NDK_FN_QUERY_EXTENSION_INTERFACE* query;
        } * Dispatch;
    };
    auto* inner_object = static_cast<Any*>(o->a);
    return inner_object->Dispatch->query(&inner_object->Header, id, version, out);
}

const NDK_ADAPTER_DISPATCH kAdapterDispatch = {
    .NdkQueryExtension = split_query_extension,
    .NdkQueryAdapterInfo = split_query_adapter_info,
    .NdkCreateCq = split_create_cq,
    .NdkCreatePd = split_create_pd,
    .NdkCreateSharedEndpoint = split_create_shared_endpoint,
    .NdkCreateConnector = split_create_connector,
    .NdkCreateListener = split_create_listener,
    .NdkBuildLAM = split_build_lam,
    .NdkReleaseLAM = split_release_lam,
};

// ---- Entry points ----

namespace {

constexpr int kSlots = 16;
std::array<SplitConfig, kSlots> g_slots;
int g_used = 0;
std::mutex g_slots_mutex;

std::mutex g_adapters_mutex;
std::unordered_set<const void*> g_adapters;

NTSTATUS open_split(const SplitConfig& config, const NDKCT_HOST_MEMORY* memory,
                    const NDKCT_OPEN_OPTIONS* options, NDK_ADAPTER** out) {
    if (!memory || !options || !out) return STATUS_INVALID_PARAMETER;
    auto ad = std::make_unique<Adapter>();
    ad->config = &config;
    NTSTATUS st = config.inner->OpenAdapter(memory, options, &ad->a);
    if (st != STATUS_SUCCESS) return st;
    ad->Header = {};
    ad->Header.Version = ad->a->Header.Version;
    ad->Header.ObjectType = NdkObjectTypeAdapter;
    ad->Dispatch = &kAdapterDispatch;
    ad->memory = *memory;
    ad->version = ad->a->Header.Version;
    if (options->ProfileJson) ad->profile_json = options->ProfileJson;
    if (options->DeviceName) ad->device = options->DeviceName;
    ad->seed = options->Seed;
    learn_addresses(ad.get(), -1, "", "");
    {
        std::lock_guard lock(g_adapters_mutex);
        g_adapters.insert(ad.get());
    }
    *out = reinterpret_cast<NDK_ADAPTER*>(ad.release());
    return STATUS_SUCCESS;
}

void close_split(NDK_ADAPTER* a) {
    auto* ad = adapter_of(a);
    {
        std::lock_guard lock(g_adapters_mutex);
        g_adapters.erase(ad);
    }
    ad->config->inner->CloseAdapter(ad->a);
    if (ad->peer) {
        if (!ad->peer->lost()) {
            try {
                Writer w;
                ad->peer->call(Op::close_adapter, w);
            } catch (const PeerLost&) {
            }
        }
        ad->peer->drain_events();
        ad->peer->stop();
        ad->peer.reset();
    }
    delete ad;
}

template <int I>
NTSTATUS open_slot(const NDKCT_HOST_MEMORY* memory, const NDKCT_OPEN_OPTIONS* options,
                   NDK_ADAPTER** out) {
    return open_split(g_slots[I], memory, options, out);
}
template <int I>
const NDKCT_PROVIDER_IDENTITY* identity_slot() {
    return g_slots[I].inner->GetProviderIdentity();
}

template <size_t... I>
std::array<NDKCT_PROVIDER_ENTRY_POINTS, kSlots> make_tables(std::index_sequence<I...>) {
    return {NDKCT_PROVIDER_ENTRY_POINTS{open_slot<I>, close_split, identity_slot<I>}...};
}

std::array<NDKCT_PROVIDER_ENTRY_POINTS, kSlots> g_tables =
    make_tables(std::make_index_sequence<kSlots>{});

}  // namespace

const NDKCT_PROVIDER_ENTRY_POINTS& split_entry_points(const NDKCT_PROVIDER_ENTRY_POINTS& inner,
                                                      const std::string& spec_text,
                                                      const PeerAddress& peer) {
    std::lock_guard lock(g_slots_mutex);
    for (int i = 0; i < g_used; ++i)
        if (g_slots[i].inner == &inner && g_slots[i].spec_text == spec_text &&
            g_slots[i].peer.text == peer.text)
            return g_tables[i];
    if (g_used == kSlots) throw std::runtime_error("more than 16 providers split across nodes");
    g_slots[g_used] = SplitConfig{&inner, spec_text, peer};
    return g_tables[g_used++];
}

bool is_split_adapter(const NDK_ADAPTER* adapter) {
    std::lock_guard lock(g_adapters_mutex);
    return g_adapters.count(adapter) != 0;
}

bool crossed_nodes(const NDK_ADAPTER* adapter) {
    if (!is_split_adapter(adapter)) return false;
    return reinterpret_cast<const Adapter*>(adapter)->crossed.load();
}

bool inject_fault(NDK_ADAPTER* adapter, PeerFault fault, uint32_t millis, std::string& error) {
    if (!is_split_adapter(adapter)) {
        error = "the adapter is not split across two nodes (no --peer)";
        return false;
    }
    auto* ad = adapter_of(adapter);
    if (!ad->peer) {
        error = "the adapter has made nothing on node B yet";
        return false;
    }
    Writer w;
    w.u16(
        static_cast<uint16_t>(fault == PeerFault::kill_agent ? Fault::exit_now : Fault::link_down));
    w.u32(millis);
    if (fault == PeerFault::kill_agent) {
        // No reply comes: the agent ends. The side channel's end is how A learns it; the loss
        // is the test's own doing, not a finding.
        ad->loss_expected = true;
        ad->peer->push();
        std::vector<uint8_t> ignored;
        try {
            ad->peer->call(Op::fault, w);
        } catch (const PeerLost&) {
        }
        return true;
    }
    try {
        Reader r(ad->peer->call(Op::fault, w));
        NTSTATUS st = r.i32();
        if (st != STATUS_SUCCESS) {
            error = "node B refused the fault";
            return false;
        }
    } catch (const PeerLost& e) {
        error = e.what();
        return false;
    }
    return true;
}

void* part_on_a(void* split_object) {
    return split_object ? reinterpret_cast<Obj*>(split_object)->a : nullptr;
}

UINT32 token_on_peer(NDK_ADAPTER* adapter, UINT32 token, bool remote) {
    if (!is_split_adapter(adapter)) return token;
    return token_on(adapter_of(adapter), token, Node::b, remote ? 1 : 0);
}

void expect_peer_loss(NDK_ADAPTER* adapter) {
    if (is_split_adapter(adapter)) adapter_of(adapter)->loss_expected = true;
}

bool peer_lost(const NDK_ADAPTER* adapter) {
    if (!is_split_adapter(adapter)) return false;
    auto* ad = reinterpret_cast<const Adapter*>(adapter);
    return ad->peer && ad->peer->lost();
}

std::string peer_lost_reason(const NDK_ADAPTER* adapter) {
    if (!is_split_adapter(adapter)) return "";
    auto* ad = reinterpret_cast<const Adapter*>(adapter);
    if (ad->loss_expected) return "";
    if (!ad->peer) return ad->peer_error;
    return ad->peer->lost() ? ad->peer->lost_reason() : "";
}

}  // namespace ndkct::twonode
