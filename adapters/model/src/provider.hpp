// The reference provider's internals: one Provider per open adapter, owning a simulating model,
// the NDK objects it hands out, and a worker thread for callbacks.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "ndkct/model/model.hpp"
#include "ndkct/model/translate.hpp"
#include "ndkct/provider.h"

namespace ndkct::adapters::reference {

using model::ObjectId;

class Provider;

// Every object this provider hands out: the NDK object (Header, Dispatch) first, so the
// consumer's pointer is ours too.
template <typename Ndk>
struct Object {
    Ndk ndk;
    Provider* provider = nullptr;
    ObjectId id = 0;
};

struct CqObject : Object<NDK_CQ> {
    NDK_FN_CQ_NOTIFICATION_CALLBACK* notify = nullptr;
    void* notify_context = nullptr;
};
struct SrqObject : Object<NDK_SRQ> {
    NDK_FN_SRQ_NOTIFICATION_CALLBACK* notify = nullptr;
    void* notify_context = nullptr;
};
struct ListenerObject : Object<NDK_LISTENER> {
    NDK_FN_CONNECT_EVENT_CALLBACK* connect_event = nullptr;
    void* connect_event_context = nullptr;
};
struct ConnectorObject : Object<NDK_CONNECTOR> {
    NDK_FN_DISCONNECT_EVENT_CALLBACK* disconnect = nullptr;
    NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* disconnect_ex = nullptr;
    void* disconnect_context = nullptr;
    std::vector<uint8_t> private_data;       // what this side sent
    std::vector<uint8_t> peer_private_data;  // what the peer sent (GetConnectionData)
};
using PdObject = Object<NDK_PD>;
using MrObject = Object<NDK_MR>;
using MwObject = Object<NDK_MW>;
using QpObject = Object<NDK_QP>;
using SharedEndpointObject = Object<NDK_SHARED_ENDPOINT>;

// A small deterministic generator (the run is reproducible from the seed).
class Rng {
  public:
    explicit Rng(uint64_t seed) : state_(seed ^ 0x6E646B6374ull) {}
    uint64_t next();
    bool percent(uint32_t p) { return p > 0 && next() % 100 < p; }

  private:
    uint64_t state_;
};

// Runs callbacks in order on one thread (CQ-NOT-03: notifications of a CQ never overlap).
class Worker {
  public:
    Worker();
    ~Worker();
    void post(std::function<void()> task);
    void drain();  // returns when everything posted so far has run
    bool idle();
    bool on_worker_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

  private:
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::deque<std::function<void()>> tasks_;
    std::atomic<size_t> queued_{0};  // tasks_.size(), read without the mutex (the spin)
    bool running_ = false;
    bool sleeping_ = false;          // waiting on wake_: post() notifies only then
    int draining_ = 0;               // threads in drain(): the worker notifies done_ only then
    std::atomic<bool> stop_{false};  // set under the mutex; read without it by the spin
    std::thread thread_;
};

// How to finish a request that returned STATUS_PENDING.
struct PendingRequest {
    enum class Kind { request, create, close } kind = Kind::request;
    NDK_FN_REQUEST_COMPLETION* request = nullptr;
    NDK_FN_CREATE_COMPLETION* create = nullptr;
    NDK_FN_CLOSE_COMPLETION* close = nullptr;
    void* context = nullptr;
    std::function<void(model::Observed&)> outputs;  // fills out-parameters at completion
    std::function<void(void*)> init;  // completes a created object (callbacks, contexts)
    ObjectId object = 0;              // close: the object being closed
    bool event_driven = false;        // finished by a model event (close, connect, accept)
    NTSTATUS final_status = STATUS_SUCCESS;
};

class Provider {
  public:
    NDK_ADAPTER ndk;  // first: the consumer's NDK_ADAPTER* is this Provider

    static NTSTATUS open(const NDKCT_HOST_MEMORY* memory, const NDKCT_OPEN_OPTIONS* options,
                         NDK_ADAPTER** adapter);
    void close();  // blocking (CLOSE-ADP-01)

    // One call: ask the model, choose an allowed outcome, apply it, deliver what follows.
    // `outputs` fills out-parameters for the status chosen; `pend` describes the callback.
    NTSTATUS run(const model::Call& call, const std::function<void(model::Observed&)>& outputs,
                 PendingRequest pend, ObjectId* created = nullptr, bool force_pend = false);
    // A call with no status (tokens, results, arm, flush): applies it and returns the observed.
    model::Observed run_void(const model::Call& call,
                             const std::function<void(model::Observed&)>& outputs);

    ObjectId id_of(const void* ndk_object) const;
    template <typename T>
    T* object(ObjectId id) const {
        return id < by_id_.size() ? static_cast<T*>(by_id_[id]) : nullptr;
    }
    NDK_OBJECT_HEADER* make_object(ObjectId id);  // the NDK object for a model object

    uint32_t new_token();
    bool coin() { return rng_.next() & 1; }  // under `mutex`: the seeded stream
    bool callbacks_idle() { return worker_.idle(); }
    uint64_t logical_address(PFN_NUMBER pfn) const;

    std::mutex mutex;  // guards the model and the object table
    model::Model model;
    ObjectId adapter_id = 0;
    const model::Readings& readings() const { return model.readings(); }

  private:
    Provider(model::Readings readings, const NDKCT_HOST_MEMORY& memory);
    void deliver_events(std::unique_lock<std::mutex>& lock);
    void finish(uint64_t pending, NTSTATUS status);
    void register_object(ObjectId id, void* object);
    void free_object(ObjectId id);

    NDKCT_HOST_MEMORY memory_;
    Rng rng_;
    Worker worker_;
    std::vector<void*> by_id_;
    std::map<uint64_t, PendingRequest> pending_;
    std::unordered_set<uint32_t> tokens_;
    uint32_t next_token_ = 0x100;
    uint64_t scramble_ = 0;
};

// The dispatch tables (dispatch.cpp).
extern const NDK_ADAPTER_DISPATCH kAdapterDispatch;
extern const NDK_PD_DISPATCH kPdDispatch;
extern const NDK_CQ_DISPATCH kCqDispatch;
extern const NDK_MR_DISPATCH kMrDispatch;
extern const NDK_MW_DISPATCH kMwDispatch;
extern const NDK_QP_DISPATCH kQpDispatch;
extern const NDK_SRQ_DISPATCH kSrqDispatch;
extern const NDK_CONNECTOR_DISPATCH kConnectorDispatch;
extern const NDK_LISTENER_DISPATCH kListenerDispatch;
extern const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch;

}  // namespace ndkct::adapters::reference
