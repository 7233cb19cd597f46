// ndkct/conformance/session.hpp: one provider under test, its host memory, and the oracle.
//
// A Session opens an adapter of any provider over a fresh arena and offers every NDK call as a
// synchronous method. Each method calls the provider through its dispatch table (the real
// NDKPI calling convention), waits for the completion callback when the call pends, enforces
// the callback contract (exactly one callback after STATUS_PENDING, none after an inline result,
// the right RequestContext, out-parameters untouched while pending), and hands every outcome to
// a check-mode reference model: the oracle. A test can therefore fail on a rule it did not name;
// the verdict says which.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndkct/conformance/capture_host.hpp"
#include "ndkct/conformance/provider_spec.hpp"
#include "ndkct/model/model.hpp"
#include "ndkct/platform/arena.hpp"
#include "ndkct/platform/mdl.hpp"

struct sockaddr;
struct sockaddr_storage;

namespace ndkct::conformance {

using std::chrono::milliseconds;

class SessionError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct SessionOptions {
    size_t arena_pages = 16384;            // 64 MiB of host memory
    milliseconds callback_timeout{10000};  // how long a pending request may take
    // GEN-IRQL-01: how long a call the consumer makes from inside a provider callback (a hook)
    // may take before the harness counts it as blocking.
    milliseconds hook_call_watchdog{1000};
    std::string profile_override;  // a profile name or file instead of the spec's
    // Record the session into a trace (capture_host.hpp); default: NDKCT_CAPTURE_DIR.
    std::optional<CaptureSettings> capture;
    // Host memory to open the adapter over instead of a new arena of arena_pages pages for the
    // spec's seed: one the caller kept and rewound (platform::Arena::rewind), so that it is what
    // a fresh one would be (the property tests reuse arenas across sequences).
    std::shared_ptr<platform::Arena> arena;
};

// A create's outcome: the status the call returned, and the object (inline or from the
// callback), or nullptr.
template <typename T>
struct Made {
    NTSTATUS status = STATUS_PENDING;        // the call's return value
    NTSTATUS final_status = STATUS_PENDING;  // after the callback, if it pended
    T* object = nullptr;
    bool pended() const { return status == STATUS_PENDING; }
};

// A request's outcome: the inline status and, when it pended, the callback's status.
struct Done {
    NTSTATUS status = STATUS_SUCCESS;
    NTSTATUS final_status = STATUS_SUCCESS;
    bool pended() const { return status == STATUS_PENDING; }
    bool ok() const { return NT_SUCCESS(final_status) && final_status != STATUS_PENDING; }
};

struct LamResult {
    Done done;
    std::vector<std::byte> storage;       // the caller's buffer
    ULONG size_in = 0;                    // *pLAMSize passed
    ULONG size_out = 0;                   // *pLAMSize after the call
    ULONG fbo = 0xFFFFFFFF;               // *pFBO after the call
    MDL* mdl = nullptr;                   // the chain passed
    std::vector<std::byte> mdl_snapshot;  // its bytes then (LAM-REL-02)
    // release_lam() compares the chain with the snapshot (LAM-REL-02): only when the caller
    // keeps the chain alive until then.
    bool check_chain_on_release = false;
    NDK_LOGICAL_ADDRESS_MAPPING* mapping() {
        return storage.empty() ? nullptr
                               : reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(storage.data());
    }
    std::vector<NDK_LOGICAL_ADDRESS> pages();  // the mapping's AdapterPageArray
};

// A buffer registered with NdkRegisterMr: its MR, tokens and MDL.
struct Registered {
    NDK_MR* mr = nullptr;
    UINT32 local_token = 0;
    UINT32 remote_token = 0;
    platform::MdlChain chain;
    NTSTATUS status = STATUS_SUCCESS;
};

// Two QPs of one PD connected to each other through a listener and a connector.
struct LoopbackPair {
    NDK_PD* pd = nullptr;
    NDK_CQ* cq = nullptr;  // both QPs report to it
    NDK_QP* a = nullptr;
    NDK_QP* b = nullptr;
    NDK_CONNECTOR* active = nullptr;
    NDK_CONNECTOR* passive = nullptr;
    NDK_LISTENER* listener = nullptr;
    bool connected = false;
    std::string problem;  // why the connection failed
};

// NdkGetConnectionData's outcome. The harness also checks the bytes copied against the private
// data the peer's Session call sent (CONN-PD-03) and the bytes past the buffer.
struct ConnectionData {
    NTSTATUS status = STATUS_SUCCESS;
    ULONG length = 0;  // *pPrivateDataLength after the call (RDS)
    ULONG inbound_read_limit = 0, outbound_read_limit = 0;  // when asked for
    std::vector<uint8_t> data;  // the caller's buffer after the call (its given length)
};

// An address getter's outcome (NdkGetLocalAddress of a connector, NdkGetListenerLocalAddress,
// NdkGetSharedEndpointLocalAddress, NdkGetPeerAddress).
struct AddressResult {
    NTSTATUS status = STATUS_SUCCESS;
    ULONG length = 0;                    // *pAddressLength after the call
    std::array<std::byte, 128> bytes{};  // the caller's buffer (a SOCKADDR_STORAGE)
    uint16_t family() const;
    uint16_t port() const;  // host byte order
    const sockaddr* address() const { return reinterpret_cast<const sockaddr*>(bytes.data()); }
};

// How connect_pair() connects two QPs.
struct PairOptions {
    ULONG active_ird = 4, active_ord = 4, passive_ird = 4, passive_ord = 4;
    std::vector<uint8_t> connect_data, accept_data;  // private data
    bool ex = false;  // NdkCompleteConnectEx / NdkAcceptEx (NDKPI 2.1)
};

// A request, create or close the Session issued from inside a provider callback (a hook) and
// did not wait for: finish_deferred() waits for it on the test thread.
struct Deferred {
    std::string name;
    NTSTATUS final_status = STATUS_PENDING;
    void* object = nullptr;  // a create's object
};

// Where a hook runs in a completion callback: before the harness marks the callback arrived
// (the waiting test thread stays blocked until the hook returns), or after.
enum class HookAt { before_arrival, after_arrival };

struct QpShape {
    ULONG receive_depth = 64, initiator_depth = 64, receive_sge = 4, initiator_sge = 4,
          inline_size = 0;
};

class Session {
  public:
    Session(const ProviderSpec& spec, SessionOptions options = {});
    ~Session();  // closes every open object (successors first) and the adapter
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // ---- The provider and the oracle ----
    NDK_ADAPTER* adapter() const { return adapter_; }
    const NDKCT_PROVIDER_IDENTITY& identity() const { return *identity_; }
    const NDK_ADAPTER_INFO& info() const { return info_; }
    bool has_flag(ULONG flag) const { return (info_.AdapterFlags & flag) != 0; }
    NDK_VERSION version() const { return info_.Version; }
    const model::Readings& readings() const { return oracle_->readings(); }
    // What the oracle found so far: violations (failures) and warnings.
    model::Verdict verdict();
    // Runs f with the oracle locked (callbacks report to it from provider threads).
    template <typename F>
    auto with_oracle(F&& f) {
        std::lock_guard lock(oracle_mutex_);
        return f(*oracle_);
    }
    model::ObjectId id(const void* object) const;
    // Why a test could not go on (the cause of a failed setup step): the rules of the oracle's
    // violations so far, else the success rules of the last call the model held valid that
    // failed or gave no object, with what happened. Safe from any thread; empty when neither.
    struct Blocker {
        std::vector<std::string> rules;
        std::string what;  // "NdkCreatePd returned STATUS_NOT_IMPLEMENTED"
    };
    Blocker blocker();
    // The blocker of `preferred` if it has one, else of any other open session (a test may open
    // a second session with an edited profile).
    static Blocker any_blocker(Session* preferred);
    // How long to wait for something a provider owes, `full` as a test would wait: scaled by
    // NDKCT_TIME_SCALE (slow links: two nodes set it above 1) and NDKCT_PATIENCE (sweeps of
    // providers that lose what they owe set it below 1). Tests' own waiting loops use it like
    // the harness's waits do.
    static milliseconds scaled(milliseconds full);
    // Exceptions a hook threw on a provider thread (reported by the test, never thrown there).
    std::vector<std::string> hook_errors();

    // ---- Host memory ----
    platform::Arena& arena() { return *arena_; }
    platform::LockedBuffer buffer(size_t bytes,
                                  platform::Placement placement = platform::Placement::scattered);
    static NDK_SGE sge(const platform::LockedBuffer& buffer, size_t offset, ULONG length,
                       UINT32 token);

    // ---- Adapter ----
    NTSTATUS query_adapter_info(NDK_ADAPTER_INFO* info, ULONG* size);
    Made<NDK_CQ> create_cq(ULONG depth, bool with_notification = true);
    Made<NDK_PD> create_pd();
    Made<NDK_SHARED_ENDPOINT> create_shared_endpoint(const sockaddr* address, ULONG length);
    Made<NDK_CONNECTOR> create_connector();
    Made<NDK_LISTENER> create_listener();
    // NdkBuildLam with a buffer of buffer_size bytes (NULL buffer when !with_buffer).
    LamResult build_lam(MDL* mdl, SIZE_T length, ULONG buffer_size, bool with_buffer = true,
                        bool with_completion = true);
    void release_lam(LamResult& lam);

    // ---- PD ----
    Made<NDK_MR> create_mr(NDK_PD* pd, bool fast_register);
    Made<NDK_MW> create_mw(NDK_PD* pd);
    Made<NDK_SRQ> create_srq(NDK_PD* pd, ULONG depth, ULONG max_sge, ULONG threshold = 0,
                             bool with_notification = true);
    Made<NDK_QP> create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, void* qp_context,
                           const QpShape& shape);
    Made<NDK_QP> create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                                    NDK_SRQ* srq, void* qp_context, const QpShape& shape);
    UINT32 privileged_token(NDK_PD* pd);

    // ---- MR, MW ----
    Done register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags);
    Done deregister_mr(NDK_MR* mr);
    Done initialize_fast_register_mr(NDK_MR* mr, ULONG pages, bool remote_access);
    UINT32 local_token(NDK_MR* mr);
    UINT32 remote_token(NDK_MR* mr);
    UINT32 remote_token(NDK_MW* mw);
    // CreateMr + RegisterMr over [offset, offset + length) of buffer + both tokens.
    Registered register_buffer(NDK_PD* pd, const platform::LockedBuffer& buffer, ULONG flags,
                               size_t offset = 0, size_t length = 0);

    // ---- CQ ----
    Done resize_cq(NDK_CQ* cq, ULONG depth);
    void arm_cq(NDK_CQ* cq, ULONG type);
    NTSTATUS control_cq_interrupt_moderation(NDK_CQ* cq, ULONG interval, ULONG count);
    // NdkGetCqResultsEx (ex true), NdkGetCqResults (ex false), or by the adapter's version (the
    // Ex form from 1.2 on) when ex is unset.
    std::vector<NDK_RESULT_EX> poll(NDK_CQ* cq, ULONG max = 16, std::optional<bool> ex = {});
    // Polls until `count` results arrived or the time is up; returns what arrived.
    std::vector<NDK_RESULT_EX> drain(NDK_CQ* cq, size_t count,
                                     milliseconds timeout = milliseconds(5000));
    size_t notifications(NDK_CQ* cq);

    // ---- SRQ ----
    Done modify_srq(NDK_SRQ* srq, ULONG depth, ULONG threshold);
    NTSTATUS srq_receive(NDK_SRQ* srq, void* context, std::span<const NDK_SGE> sgl);

    // ---- QP ----
    NTSTATUS send(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl, ULONG flags = 0);
    NTSTATUS send_and_invalidate(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl,
                                 ULONG flags, UINT32 remote_token);
    NTSTATUS receive(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl);
    NTSTATUS read(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl, UINT64 remote_address,
                  UINT32 remote_token, ULONG flags = 0);
    NTSTATUS write(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl, UINT64 remote_address,
                   UINT32 remote_token, ULONG flags = 0);
    NTSTATUS fast_register(NDK_QP* qp, void* context, NDK_MR* mr,
                           std::span<const NDK_LOGICAL_ADDRESS> pages, ULONG fbo, SIZE_T length,
                           uint64_t base_virtual_address, ULONG flags = 0);
    NTSTATUS bind(NDK_QP* qp, void* context, NDK_MR* mr, NDK_MW* mw, uint64_t virtual_address,
                  SIZE_T length, ULONG flags = 0);
    NTSTATUS invalidate(NDK_QP* qp, void* context, void* mr_or_mw, ULONG flags = 0);
    void flush(NDK_QP* qp);

    // ---- Connections ----
    Done listen(NDK_LISTENER* listener, const sockaddr* address, ULONG length);
    Done connect(NDK_CONNECTOR* connector, NDK_QP* qp, const sockaddr* destination, ULONG length,
                 ULONG ird = 4, ULONG ord = 4, std::span<const uint8_t> private_data = {});
    // Starts a connect and returns at once (its callback is awaited by wait_connect()).
    NTSTATUS connect_async(NDK_CONNECTOR* connector, NDK_QP* qp, const sockaddr* destination,
                           ULONG length, ULONG ird = 4, ULONG ord = 4,
                           std::span<const uint8_t> private_data = {});
    Done wait_connect(NDK_CONNECTOR* connector);
    // Whether the callback of the connect (or accept) pending on the connector has come, so that
    // waiting for it returns at once.
    bool handshake_came(NDK_CONNECTOR* connector, bool accept);
    NDK_CONNECTOR* wait_connect_event(NDK_LISTENER* listener,
                                      milliseconds timeout = milliseconds(5000));
    NTSTATUS accept_async(NDK_CONNECTOR* connector, NDK_QP* qp, ULONG ird = 4, ULONG ord = 4,
                          std::span<const uint8_t> private_data = {});
    Done wait_accept(NDK_CONNECTOR* connector);
    Done complete_connect(NDK_CONNECTOR* connector);
    NTSTATUS reject(NDK_CONNECTOR* connector, std::span<const uint8_t> private_data = {});
    Done disconnect(NDK_CONNECTOR* connector);
    size_t disconnect_events(NDK_CONNECTOR* connector);
    // A PD, one CQ and two connected QPs (through 127.0.0.1 or ::1 on this adapter).
    LoopbackPair loopback_pair(const QpShape& shape = {}, ULONG cq_depth = 256);
    // Connects QP a (active) to QP b (passive) through a new listener on `address` (port 0: the
    // provider picks, learnt through NdkGetListenerLocalAddress) and a new connector; the pair
    // names the given PD and CQ. `problem` says which step failed.
    LoopbackPair connect_pair(NDK_PD* pd, NDK_CQ* cq, NDK_QP* a, NDK_QP* b, const sockaddr* address,
                              ULONG length, const PairOptions& options = {});
    // NdkConnect with a source address (NULL source: connect_async()).
    NTSTATUS connect_from_async(NDK_CONNECTOR* connector, NDK_QP* qp, const sockaddr* source,
                                ULONG source_length, const sockaddr* destination, ULONG length,
                                ULONG ird = 4, ULONG ord = 4,
                                std::span<const uint8_t> private_data = {});
    NTSTATUS connect_with_shared_endpoint_async(NDK_CONNECTOR* connector, NDK_QP* qp,
                                                NDK_SHARED_ENDPOINT* endpoint,
                                                const sockaddr* destination, ULONG length,
                                                ULONG ird = 4, ULONG ord = 4,
                                                std::span<const uint8_t> private_data = {});
    // NDKPI 2.1: the Ex forms, whose disconnect callback carries a reason.
    NTSTATUS accept_ex_async(NDK_CONNECTOR* connector, NDK_QP* qp, ULONG ird = 4, ULONG ord = 4,
                             std::span<const uint8_t> private_data = {});
    Done complete_connect_ex(NDK_CONNECTOR* connector);
    // The reasons the connector's NdkDisconnectEventCallbackEx received, and how many plain
    // NdkDisconnectEventCallback calls came.
    std::vector<ULONG> disconnect_ex_reasons(NDK_CONNECTOR* connector);
    // NdkGetConnectionData with a buffer of buffer_length bytes (NULL when !with_buffer), and
    // the read-limit pointers (NULL when !with_limits).
    ConnectionData get_connection_data(NDK_CONNECTOR* connector, ULONG buffer_length,
                                       bool with_buffer = true, bool with_limits = true);
    // The object's local address: a connector, listener or shared endpoint (by its ObjectType).
    AddressResult local_address(void* object, ULONG buffer_length = 128);
    AddressResult peer_address(NDK_CONNECTOR* connector, ULONG buffer_length = 128);
    void control_connect_events(NDK_LISTENER* listener, bool pause);
    // How many connect events the listener has had (taken or not by wait_connect_event).
    size_t connect_events(NDK_LISTENER* listener);

    // ---- Every object ----
    NTSTATUS query_extension_interface(void* object, const GUID& id, NDK_VERSION version,
                                       NDK_EXTENSION_INTERFACE* out);

    // ---- Callbacks from the provider's threads ----
    // The next request, create or close callback runs fn inside it, on the provider's thread.
    // Session calls fn makes are judged as usual but never wait: one that pends is finished
    // later by finish_deferred().
    void hook_next_callback(std::function<void()> fn, HookAt at = HookAt::before_arrival);
    // Every event callback of the object (CQ or SRQ notification, connect event, disconnect)
    // runs fn inside it, after the event is recorded. An empty fn removes the hook.
    void hook_events(const void* object, std::function<void()> fn);
    // Ends every hook: none runs after this returns (one running on a provider thread is waited
    // for). Hooks capture the test body's locals, so the body's end ends them: ProviderTest's
    // TearDown and the destructor call it before closing what the test left open, whose
    // flushes and notifications would otherwise run a hook on a dead frame.
    void drop_hooks();
    std::vector<Deferred> finish_deferred();
    static bool in_hook();  // true on a provider thread running a hook
    // Closes every object, then the adapter (CloseNdkAdapter), and returns the verdict with what
    // the close found (CLOSE-ADP-01). The destructor does nothing more.
    model::Verdict close_adapter();
    // The trace this session records into (SessionOptions::capture), or "" when it records
    // none; whole once close_adapter returned.
    std::string trace_path() const;

    // The consumer drained the QP (flushed it and polled its CQs as long as it will): every
    // completion the oracle still expects there is missing (WR-10, FLS-03, DEFER-04), reported
    // and returned; a capture records the word (NdkCaptureDrained) so that the trace is judged
    // the same.
    model::Verdict expect_drained(NDK_QP* qp);
    // The consumer waited `waited` for a notification of the CQ and none came: one the oracle
    // says the arm owes beyond doubt is missing (CQ-NOT-07, with the rule of what satisfied the
    // arm: SND-04 and CQ-NOT-10 for a solicited send's receive), reported and returned; a capture
    // records the word (NdkCaptureUnnotified). `cq_name` names the CQ in the message.
    model::Verdict expect_notification_delivered(NDK_CQ* cq, std::chrono::milliseconds waited,
                                                 const std::string& cq_name = "the CQ");

    // ---- Close ----
    Done close(void* object);  // NdkCloseObject; waits for the close completion when it pends
    // NdkCloseObject without waiting: returns the call's status; wait_close() awaits the
    // completion if it pended.
    NTSTATUS close_async(void* object);
    Done wait_close(void* object);
    void close_all();  // closes every object still open, successors first

    // ---- For the callback trampolines (session.cpp) ----
    struct Callback;     // one request's callback record (its address is the RequestContext)
    struct EventRecord;  // one CQ's, SRQ's, listener's or connector's event record
    void report(model::Verdict v);
    // GEN-CB-03, to every open session; for a request or create callback (`kind`), with the page
    // rule (*-CTX-01) of the one function whose requests are still owed a callback.
    static void report_stray(const std::string& what, int kind = -1);
    // Trampolines only queue events; the test thread hands them to the oracle in order, after
    // the call that caused them (a provider may deliver an event before that call returns).
    void enqueue(model::Event event, EventRecord* record, NDK_CONNECTOR* connector = nullptr);
    void process_events();
    // Waits until an event callback has queued an event not yet handed to the oracle (by
    // verdict() or any call), or until the time; returns whether one is queued.
    bool wait_for_event(std::chrono::steady_clock::time_point until);
    // A port for a listener of this session's, 20000..39999 and never the same twice in a row
    // of 20,000: below the tests' fixed ports and the ephemeral ports providers pick (49152..).
    uint16_t next_port();

  private:
    struct InFlight;  // one provider call: its record (in_flight.hpp), rules and outcome
    friend struct InFlight;
    struct PendingAsync {
        Callback* callback = nullptr;
        uint64_t pending = 0;
        NTSTATUS status = STATUS_SUCCESS;
        bool valid = false;  // the model expected success: a failed completion blocks the test
        std::vector<std::string> rules;
    };
    template <typename Ndk, typename Invoke>
    Made<Ndk> create(const model::Call& call, Invoke invoke, const char* name, const void* target);
    template <typename Invoke>
    Done request(const model::Call& call, Invoke invoke, const char* name,
                 const std::function<void(model::Observed&)>& outputs = {},
                 const void* target = nullptr);
    NTSTATUS post(const model::Call& call, NTSTATUS status);
    Callback* new_callback(int kind, const char* name, const void* target = nullptr);
    NTSTATUS accept_with(NDK_CONNECTOR* connector, NDK_QP* qp, ULONG ird, ULONG ord,
                         std::span<const uint8_t> private_data, bool ex);
    void remember_private_data(const void* connector, std::span<const uint8_t> data);

  public:  // for the trampolines (session.cpp)
    void close_completed(const void* object, Callback* close_callback);
    void check_close_order(const void* object, const char* how);
    struct RunningClose {
        const void* object;
        std::vector<const void*> antecedents;
    };
    std::mutex running_mutex_;
    std::vector<RunningClose> running_closes_;  // close callbacks now running
    std::atomic<int> running_callbacks_{0};     // trampolines now running (CLOSE-ADP-01)
    std::function<void()> take_hook(HookAt& at);
    std::function<void()> event_hook(const void* object);

  private:
    EventRecord* new_event_record();
    void returned(Callback* callback, NTSTATUS status);
    NTSTATUS wait(Callback* callback);
    // Issues an asynchronous call without waiting: invoke(callback context) calls the provider;
    // the outcome is judged and, if it pends, kept in `pending` under `key` for wait_for().
    template <typename Invoke>
    NTSTATUS start_async(const model::Call& call, Invoke invoke, const char* name, int kind,
                         std::unordered_map<const void*, PendingAsync>& pending, const void* key);
    Done wait_for(std::unordered_map<const void*, PendingAsync>& table, const void* key);
    void adopt(void* object, model::ObjectId id);           // caller holds oracle_mutex_
    void remember(const void* object, model::ObjectId id);  // ids_ and handles_, as adopt

    ProviderSpec spec_;
    SessionOptions options_;
    std::shared_ptr<platform::Arena> arena_;
    std::unique_ptr<CaptureHost> capture_;  // between the Session and the provider, when on
    const NDKCT_PROVIDER_ENTRY_POINTS* entry_ = nullptr;
    const NDKCT_PROVIDER_IDENTITY* identity_ = nullptr;
    NDK_ADAPTER* adapter_ = nullptr;
    NDK_ADAPTER_INFO info_{};
    std::unique_ptr<model::Model> oracle_;
    std::mutex oracle_mutex_;
    model::Verdict verdict_;  // guarded by oracle_mutex_
    std::unordered_map<const void*, model::ObjectId> ids_;
    // The other way, for the oracle's messages (Model::name_objects): read on whichever thread
    // judges, so it has a lock of its own.
    std::unordered_map<model::ObjectId, const void*> handles_;
    mutable std::mutex handles_mutex_;
    std::vector<std::pair<void*, model::ObjectId>> open_;  // in creation order
    std::deque<std::unique_ptr<Callback>> callbacks_;
    std::mutex callbacks_mutex_;
    struct QueuedEvent {
        model::Event event;
        EventRecord* record;
        NDK_CONNECTOR* connector;
    };
    std::mutex queue_mutex_;
    std::condition_variable queued_;  // an event was queued (wait_for_event)
    std::deque<QueuedEvent> queue_;
    std::unordered_map<const void*, PendingAsync> pending_connects_;  // by connector
    std::unordered_map<const void*, PendingAsync> pending_accepts_;
    std::unordered_map<const void*, PendingAsync> pending_closes_;
    std::deque<std::unique_ptr<EventRecord>> events_;
    std::unordered_map<const void*, EventRecord*> event_records_;
    uint16_t port_ = 0;
    std::mutex hooks_mutex_;
    std::function<void()> next_hook_;
    HookAt next_hook_at_ = HookAt::before_arrival;
    std::unordered_map<const void*, std::function<void()>> event_hooks_;
    struct DeferredCall {
        Callback* callback;
        uint64_t pending;
        std::string name;
        bool create;
        std::function<void(model::Observed&)> outputs;
        model::ObjectId created;
        std::function<void(void*, model::Verdict&)> check;  // a create's object check
    };
    std::mutex deferred_mutex_;
    std::vector<DeferredCall> deferred_;
    std::unordered_map<const void*, std::vector<uint8_t>> sent_private_data_;  // by connector
    std::unordered_map<const void*, std::vector<const void*>> close_antecedents_;
    std::mutex blocker_mutex_;
    Blocker unexpected_failure_;  // the last valid call that failed (InFlight::outcome)
    // Once something owed never came within the full wait (a completion callback, completions,
    // a connect event), the test has failed: later waits in this session are short, so that a
    // provider that loses what it owes costs one wait, not one per step of the test.
    std::atomic<bool> patience_lost_{false};
    // The out-parameters of NdkBuildLam calls whose completion never came (the LAM buffer,
    // *pLAMSize, *pFBO): the provider may still write them, so they live as long as the session,
    // whose adapter's close ends every request (the test gets a copy of the buffer).
    std::mutex outstanding_mutex_;
    std::vector<std::shared_ptr<void>> outstanding_outputs_;
    milliseconds patience(milliseconds full) const;
    void owed_but_missing(std::vector<std::string> rules, std::string what);
    std::vector<std::string> hook_errors_;

    std::atomic<bool> hooks_dropped_{false};
    std::atomic<int> hooks_running_{0};

  public:  // for run_hook (session.cpp)
    void hook_error(std::string what);
    // Counts the hook as running unless hooks were dropped (then it must not run).
    bool hook_starts();
    void hook_ends() { --hooks_running_; }
};

}  // namespace ndkct::conformance
