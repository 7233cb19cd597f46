// conformance/twonode/src/split.hpp: the split provider's objects (see split_provider.hpp).
//
// Every object the consumer gets is a split object: the NDK layout (header, dispatch) followed
// by its part on node A (the inner provider's object, or none) and its part on node B (the
// agent's handle, or 0). Objects without a part on B pass every call straight to A with the
// consumer's own callbacks: a test that never connects runs exactly as on A's provider alone.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mirror.hpp"
#include "ndkct/provider.h"
#include "ndkct/twonode/split_provider.hpp"
#include "wire.hpp"

namespace ndkct::twonode {

enum class Node : uint8_t { a = 0, b = 1 };
enum class Kind : uint8_t { pd, cq, mr, mw, srq, qp, connector, listener, endpoint };

struct Adapter;

// Something a B event (or an A callback of a composite call) is for. Owned by its adapter
// until the adapter closes, so a late event never reaches freed memory.
struct Target {
    virtual ~Target() = default;
    virtual void on_event(Event kind, Reader& r) = 0;
    // Node B was lost before the event came: complete as the docs say for a lost peer.
    virtual void on_peer_lost() {}
    bool internal = false;  // the split's own wait: delivered by the reader at once
};

// No virtual functions here or in the kinds below: the NDK layout must start at offset 0.
struct Obj {
    NDK_OBJECT_HEADER Header;
    const void* Dispatch;
    Kind kind;
    Adapter* adapter = nullptr;
    void* a = nullptr;           // the inner provider's object on node A
    std::atomic<uint64_t> b{0};  // the agent's handle on node B
};
// Every NDK object is its header and its dispatch pointer; a split object starts the same.
static_assert(offsetof(NDK_PD, Dispatch) == sizeof(NDK_OBJECT_HEADER));

struct Pd;
struct Cq;
struct Srq;

struct Mr : Obj {
    Pd* pd = nullptr;
    bool fast = false;
    enum class State { none, registered, initialized } state = State::none;
    std::vector<uint8_t> chain;  // the registration's MDL chain in wire form
    std::vector<PFN_NUMBER> pfns;
    uint64_t length = 0;
    ULONG flags = 0;
    ULONG fr_pages = 0;
    bool fr_remote = false;
    Node token_node = Node::a;         // where the registration in force was made
    UINT32 b_local = 0, b_remote = 0;  // the tokens of the part on B
};

struct Mw : Obj {
    Pd* pd = nullptr;
    Node token_node = Node::a;
    UINT32 b_remote = 0;
};

struct Pd : Obj {
    std::vector<Mr*> mrs;
    std::vector<Mw*> mws;
    bool have_b_privileged = false;
    UINT32 b_privileged = 0;
};

struct Cq : Obj {
    Target* events = nullptr;  // B's notifications come to it
    NDK_FN_CQ_NOTIFICATION_CALLBACK* notify = nullptr;
    void* notify_context = nullptr;
    ULONG depth = 0;
    std::mutex arm_mutex;
    bool consumer_armed = false;
    ULONG consumer_type = 0;
    bool part_armed[2] = {false, false};
    ULONG part_type[2] = {0, 0};
    uint64_t generation = 0;           // the consumer's arms so far
    uint64_t part_generation[2] = {};  // the consumer's arm a part was last armed for
    size_t taken_since_arm[2] = {};    // entries of each part taken since the consumer's arm
    void notified(Node node, NTSTATUS status);
    void deliver(NTSTATUS status);  // to the consumer, one callback at a time (CQ-NOT-03)
    std::mutex deliver_mutex;
    bool delivering = false;
    std::deque<NTSTATUS> undelivered;
    std::mutex held_mutex;
    std::deque<NDK_RESULT_EX> held;  // taken from a part by a notification, not yet polled
};

void arm_part(Cq* cq, Node node, ULONG type);

struct PostedReceive {
    void* context;
    std::vector<NDK_SGE> sgl;
};

struct Srq : Obj {
    Target* events = nullptr;
    Pd* pd = nullptr;
    ULONG depth = 0, max_sge = 0, threshold = 0;
    NDK_FN_SRQ_NOTIFICATION_CALLBACK* notify = nullptr;
    void* notify_context = nullptr;
    std::atomic<Node> home{Node::a};
    std::mutex receives_mutex;
    std::vector<PostedReceive> receives;  // posted on A since its creation (moved to B)
};

struct Qp : Obj {
    Pd* pd = nullptr;
    Cq* receive_cq = nullptr;
    Cq* initiator_cq = nullptr;
    Srq* srq = nullptr;
    void* context = nullptr;  // the consumer's QPContext
    ULONG receive_depth = 0, initiator_depth = 0, receive_sge = 0, initiator_sge = 0,
          inline_size = 0;
    enum class Home : uint8_t { unresolved, a, b };
    std::atomic<Home> home{Home::unresolved};
    char a_tag = 0, b_tag = 0;  // their addresses are the QPContext each part was given
    std::mutex receives_mutex;
    std::vector<PostedReceive> receives;  // posted while unresolved, not flushed
    Node node() const { return home.load() == Home::b ? Node::b : Node::a; }
};

struct Connector : Obj {
    Target* events = nullptr;  // B's disconnect events
    Node node = Node::a;
    int alias_family = 0;  // the consumer named a loopback address of this family
    NDK_FN_DISCONNECT_EVENT_CALLBACK* disconnect = nullptr;
    NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* disconnect_ex = nullptr;
    void* disconnect_context = nullptr;
};

struct Listener : Obj {
    Target* events = nullptr;  // B's connect events
    NDK_FN_CONNECT_EVENT_CALLBACK* connect_event = nullptr;
    void* connect_context = nullptr;
    int alias_family = 0;
    sockaddr_storage consumer_address{};  // as the consumer passed it to NdkListen
    bool listening = false;
    bool paused = false;
    std::atomic<bool> b_listening{false};
};

struct Endpoint : Obj {
    int alias_family = 0;
};

// A LAM the consumer built (on A) and, once needed, its twin on B.
struct Lam {
    std::vector<uint8_t> chain;
    std::vector<PFN_NUMBER> pfns;
    uint64_t length = 0;
    std::vector<uint64_t> pages_a;
    uint64_t b = 0;
    std::vector<uint64_t> pages_b;
};

// The TCP side channel to node B's agent, with its reader and event-delivery threads.
class Peer {
  public:
    Peer(Adapter* adapter, int fd, const NDKCT_HOST_MEMORY& memory);
    ~Peer();
    // Sends a request and waits for its reply (the reply's payload). Throws PeerLost.
    std::vector<uint8_t> call(Op op, Writer& w, Target* target = nullptr);
    // Sends the bytes A's copy of mirrored pages changed: ordered before the next request to B;
    // with `acknowledged`, returns once B's memory holds them (before A's own RDMA reaches B:
    // the side channel and the RDMA link are two paths, and B's device does not wait for its
    // agent).
    void push(bool acknowledged = false);
    // Fetches and applies the bytes B's copy changed.
    void pull();
    void apply_changes(Reader& r) { mirror_.apply(r); }
    Mirror& mirror() { return mirror_; }
    bool lost() const { return lost_.load(); }
    std::string lost_reason();
    // Waits until every event B sent has been delivered (adapter close).
    void drain_events();
    void stop();

  private:
    void read_loop();
    void deliver_loop();
    void lose(const std::string& why);
    void mark_lost(const std::string& why);

    Adapter* adapter_;
    int fd_;
    Mirror mirror_;
    std::mutex mutex_;
    std::condition_variable replies_cv_, events_cv_;
    uint64_t next_seq_ = 1;
    std::unordered_map<uint64_t, std::vector<uint8_t>> replies_;
    std::unordered_set<uint64_t> waiting_;
    std::deque<Frame> events_;
    bool delivering_ = false;
    std::atomic<bool> lost_{false};
    std::string why_;
    std::atomic<bool> stopping_{false};
    std::mutex write_mutex_;
    std::thread reader_, deliverer_;
    std::unordered_set<Target*> outstanding_;
};

class PeerLost : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct SplitConfig {
    const NDKCT_PROVIDER_ENTRY_POINTS* inner = nullptr;
    std::string spec_text;
    PeerAddress peer;
};

struct Adapter {
    NDK_OBJECT_HEADER Header;
    const NDK_ADAPTER_DISPATCH* Dispatch;
    const SplitConfig* config = nullptr;
    NDK_ADAPTER* a = nullptr;
    NDKCT_HOST_MEMORY memory{};
    NDK_VERSION version{};
    std::string profile_json, device;
    uint64_t seed = 1;
    ULONG frmr_pages = 0;

    // Two locks: `mutex` guards the maps and lists below and is never held across a call to
    // either node; `materialize` serializes making parts on B (held across calls to B, whose
    // replies and the split's own waits never depend on the consumer's callbacks).
    std::recursive_mutex mutex;
    std::recursive_mutex materialize;
    std::deque<std::shared_ptr<void>> objects;  // every split object, until the adapter closes
    std::deque<std::unique_ptr<Target>> targets;
    // Every QP part's QPContext (the addresses of its a_tag and b_tag): the QP and the part.
    std::unordered_map<const void*, std::pair<Qp*, Node>> tags;
    std::unordered_map<const NDK_LOGICAL_ADDRESS_MAPPING*, Lam> lams;
    std::unordered_map<uint64_t, uint64_t> logical_a_to_b;  // page-aligned

    // Canonical tokens: the values handed to the consumer, with the object and node they name.
    struct TokenOwner {
        Obj* object;
        Node origin;
        uint8_t kind;  // 0 local, 1 remote, 2 privileged
    };
    std::unordered_map<UINT32, std::vector<TokenOwner>> tokens;

    // The link's addresses of both nodes (network byte order), when known.
    bool have4[2] = {false, false}, have6[2] = {false, false};
    in_addr addr4[2]{};
    in6_addr addr6[2]{};

    std::unique_ptr<Peer> peer;
    std::string peer_error;  // why the peer could not be reached
    std::atomic<bool> crossed{false};
    bool loss_expected = false;  // a fault test ended the agent on purpose

    template <typename T>
    T* make(Kind kind, const void* dispatch);
    Target* keep(std::unique_ptr<Target> t);
    // The peer, connected and its adapter open; throws PeerLost when it cannot be reached.
    Peer& need_peer();
    bool has_peer() const { return peer != nullptr; }
};

// ---- Shared helpers (split_adapter.cpp) ----

NTSTATUS split_query_extension(NDK_OBJECT_HEADER* object, GUID* id, NDK_VERSION version,
                               NDK_EXTENSION_INTERFACE* out);
NTSTATUS split_close(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* completion, PVOID context);

extern const NDK_ADAPTER_DISPATCH kAdapterDispatch;
extern const NDK_PD_DISPATCH kPdDispatch;
extern const NDK_CQ_DISPATCH kCqDispatch;
extern const NDK_MR_DISPATCH kMrDispatch;
extern const NDK_MW_DISPATCH kMwDispatch;
extern const NDK_SRQ_DISPATCH kSrqDispatch;
extern const NDK_QP_DISPATCH kQpDispatch;
extern const NDK_CONNECTOR_DISPATCH kConnectorDispatch;
extern const NDK_LISTENER_DISPATCH kListenerDispatch;
extern const NDK_SHARED_ENDPOINT_DISPATCH kEndpointDispatch;

template <typename T>
T* as(void* p) {
    return static_cast<T*>(reinterpret_cast<Obj*>(p));
}
template <typename T>
T* inner(void* a) {
    return static_cast<T*>(a);
}

void split_log(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Completion of one call made on several parts: the consumer's callback once all are done,
// with the first error.
struct Join : Target {
    NDK_FN_REQUEST_COMPLETION* request = nullptr;
    NDK_FN_CLOSE_COMPLETION* close = nullptr;
    void* context = nullptr;
    std::atomic<int> left{1};  // the caller's hold, plus one per part that pended
    std::atomic<NTSTATUS> status{STATUS_SUCCESS};
    std::function<void(NTSTATUS)> before;  // runs before the consumer's callback
    // Listeners: A's part closes once B's did (then the consumer's callback follows A's).
    std::function<void()> before_close_a;
    void part_done(NTSTATUS st);
    void fire();
    void on_event(Event kind, Reader& r) override;
    void on_peer_lost() override { part_done(close ? STATUS_SUCCESS : STATUS_CONNECTION_ABORTED); }
};
Join* new_join(Adapter* ad, NDK_FN_REQUEST_COMPLETION* request, NDK_FN_CLOSE_COMPLETION* close,
               void* context);
// The A part's trampolines for a Join.
void join_request_done(void* join, NTSTATUS status);
void join_close_done(void* join);
// After issuing every part: the caller's status (inline, or STATUS_PENDING once a part pended).
NTSTATUS join_finish(Join* join, bool any_pended, NTSTATUS inline_status);

// A synchronous wait for one event of B (materializations, the split's own calls).
struct Waiter : Target {
    Waiter() { internal = true; }
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    NTSTATUS status = STATUS_PENDING;
    uint64_t handle = 0;
    std::vector<uint64_t> values;
    void on_event(Event kind, Reader& r) override;
    void on_peer_lost() override;
    bool wait(int millis = 30000);
};

// Makes a B part with a create request (create_* op), waiting for it if it pends.
uint64_t create_on_b(Adapter* ad, Op op, Writer& w, Waiter* waiter);

// Tokens (split_adapter.cpp).
void note_token(Adapter* ad, Obj* object, Node origin, uint8_t kind, UINT32 value);
// At its close: the object's tokens name it no more (a later use of one passes as it is).
void forget_tokens(Adapter* ad, Obj* object);
UINT32 token_on(Adapter* ad, UINT32 value, Node node, uint8_t kind);
UINT32 canonical_of(Adapter* ad, Node node, UINT32 real);
// SGEs as node `node` must see them (tokens, logical addresses).
std::vector<NDK_SGE> sges_on(Adapter* ad, Pd* pd, const NDK_SGE* sgl, ULONG n, Node node,
                             bool inline_data);
uint64_t logical_on_b(Adapter* ad, uint64_t logical);

// Materializing on B (split_objects.cpp).
void materialize_pd(Adapter* ad, Pd* pd);
void materialize_cq(Adapter* ad, Cq* cq);
void materialize_mr(Adapter* ad, Mr* mr);
void materialize_mw(Adapter* ad, Mw* mw);
void materialize_srq(Adapter* ad, Srq* srq);
void materialize_qp(Adapter* ad, Qp* qp);
void materialize_lams(Adapter* ad);
UINT32 privileged_on_b(Adapter* ad, Pd* pd);

// Addresses (split_connect.cpp).
void learn_addresses(Adapter* ad, int fd, const std::string& b4, const std::string& b6);
void device_addresses(std::string& v4, std::string& v6);

// ---- Creates ----

// The create of a split object whose A part the inner provider makes: inline or through its
// callback, the consumer receives the split object.
struct Create : Target {
    Obj* object = nullptr;
    NDK_FN_CREATE_COMPLETION* completion = nullptr;
    void* context = nullptr;
    void on_event(Event, Reader&) override {}
};

inline void created_a(void* ctx, NTSTATUS status, NDK_OBJECT_HEADER* made) {
    auto* c = static_cast<Create*>(ctx);
    if (NT_SUCCESS(status) && made) {
        c->object->a = made;
        c->object->Header.Version = made->Version;
        c->completion(c->context, status, &c->object->Header);
    } else {
        c->completion(c->context, status, nullptr);
    }
}

// Runs an inner create for `object`; `call(completion, context, out)` makes it.
template <typename Call>
NTSTATUS create_a(Adapter* ad, Obj* object, NDK_FN_CREATE_COMPLETION* completion, void* context,
                  void** out, Call call) {
    auto c = std::make_unique<Create>();
    c->object = object;
    c->completion = completion;
    c->context = context;
    auto* rec = static_cast<Create*>(ad->keep(std::move(c)));
    void* made = nullptr;
    NTSTATUS st = call(completion ? created_a : nullptr, completion ? rec : nullptr, &made);
    if (st == STATUS_SUCCESS && made) {
        object->a = made;
        object->Header.Version = static_cast<NDK_OBJECT_HEADER*>(made)->Version;
        if (out) *out = object;
    }
    return st;
}

// A listener leaves the process's list when it closes (split_connect.cpp).
void forget_listener(Obj* o);

// NDKCT_VERBOSE-like tracing of the split's routing: NDKCT_TWONODE_TRACE=1.
bool tracing();

}  // namespace ndkct::twonode
