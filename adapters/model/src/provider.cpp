// The reference provider's engine: choose an allowed outcome, apply it to the model, deliver
// callbacks without holding the lock.
#include "provider.hpp"

#include <cstring>
#include <unordered_map>

#include "ndkct/platform/spin.hpp"
#include "ndkct/spec/profile.hpp"

namespace ndkct::adapters::reference {

// ---- Rng, Worker ----

using platform::spin_until;

uint64_t Rng::next() {  // splitmix64
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

Worker::Worker()
    : thread_([this] {
          std::unique_lock lock(mutex_);
          for (;;) {
              if (tasks_.empty() && !stop_) {
                  // A consumer waiting for a callback posts the next call's within microseconds:
                  // looking for it a moment (spin_until's 20 us, never yielding the core) before
                  // sleeping spares both threads a wake-up. Without it, on a loaded machine the
                  // worker's wake-up lags by milliseconds, and the property teardown's first poll
                  // misses the entries a faulty provider adds (silent_write_entry's bite failed
                  // in 3 of 5 runs at load 11-13); with a 50 us spin it cost 1.5-2 ms of CPU per
                  // property sequence.
                  lock.unlock();
                  spin_until([this] {
                      return queued_.load(std::memory_order_acquire) > 0 ||
                             stop_.load(std::memory_order_relaxed);
                  });
                  lock.lock();
              }
              sleeping_ = true;
              wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
              sleeping_ = false;
              if (tasks_.empty() && stop_) return;
              auto task = std::move(tasks_.front());
              tasks_.pop_front();
              queued_.fetch_sub(1, std::memory_order_relaxed);
              running_ = true;
              lock.unlock();
              task();
              lock.lock();
              running_ = false;
              if (tasks_.empty() && draining_ > 0) done_.notify_all();
          }
      }) {}

Worker::~Worker() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void Worker::post(std::function<void()> task) {
    bool sleeping;
    {
        std::lock_guard lock(mutex_);
        tasks_.push_back(std::move(task));
        queued_.fetch_add(1, std::memory_order_release);
        sleeping = sleeping_;
    }
    if (sleeping) wake_.notify_one();  // else it is running or spinning: it will look
}

void Worker::drain() {
    std::unique_lock lock(mutex_);
    ++draining_;
    done_.wait(lock, [this] { return tasks_.empty() && !running_; });
    --draining_;
}

bool Worker::idle() {
    std::lock_guard lock(mutex_);
    return tasks_.empty() && !running_;
}

// ---- Opening and closing ----

Provider::Provider(model::Readings readings, const NDKCT_HOST_MEMORY& memory)
    : model(std::move(readings), {static_cast<std::byte*>(memory.PhysicalBase), memory.PageCount},
            model::Mode::simulate),
      memory_(memory),
      rng_(model.readings().reference.seed) {
    ndk.Header.Version = model.readings().version;
    ndk.Header.ObjectType = NdkObjectTypeAdapter;
    std::memset(&ndk.Header.NdkReserved, 0, sizeof ndk.Header.NdkReserved);
    ndk.Dispatch = &kAdapterDispatch;
    adapter_id = model.open_adapter();
    by_id_.resize(adapter_id + 1, nullptr);
    by_id_[adapter_id] = this;
    scramble_ = rng_.next() & 0xFFFFF;
}

namespace {

void explain(const NDKCT_OPEN_OPTIONS* options, const std::string& why) {
    if (!options || !options->ErrorMessage || options->ErrorMessageSize == 0) return;
    std::strncpy(options->ErrorMessage, why.c_str(), options->ErrorMessageSize - 1);
    options->ErrorMessage[options->ErrorMessageSize - 1] = '\0';
}

// The readings of a profile's JSON text (NULL: the shipped default). Parsing and validating
// the JSON was most of an adapter's open (a conformance Session opens one per property
// sequence); the same text always reads the same, so each text is parsed once per process.
model::Readings readings_of(const char* json) {
    static std::mutex mutex;
    static std::unordered_map<std::string, model::Readings> cache;
    std::string key = json ? json : "";
    {
        std::lock_guard lock(mutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    model::Readings readings =
        model::read_profile(json ? spec::load_profile(json, "the profile given to NdkctOpenAdapter")
                                 : spec::builtin_profile("default"));  // throws: nothing cached
    std::lock_guard lock(mutex);
    cache.emplace(std::move(key), readings);
    return readings;
}

}  // namespace

NTSTATUS Provider::open(const NDKCT_HOST_MEMORY* memory, const NDKCT_OPEN_OPTIONS* options,
                        NDK_ADAPTER** adapter) {
    if (!memory || !adapter || memory->Size < sizeof(NDKCT_HOST_MEMORY) || !memory->PhysicalBase) {
        explain(options, "ndkct-model: no host memory given");
        return STATUS_INVALID_PARAMETER;
    }
    model::Readings readings;
    try {
        readings = readings_of(options && options->ProfileJson ? options->ProfileJson : nullptr);
    } catch (const std::exception& error) {
        explain(options, error.what());
        return STATUS_INVALID_PARAMETER;
    }
    // VER-02, VER-04, VER-05: the consumer names a major and its lowest minor; the provider
    // serves that major at its highest minor, or refuses.
    if (options && options->Version.Major != 0) {
        if (options->Version.Major != readings.version.Major ||
            options->Version.Minor > readings.version.Minor) {
            explain(options, "ndkct-model: NDKPI " + std::to_string(options->Version.Major) + "." +
                                 std::to_string(options->Version.Minor) +
                                 " is not offered (the profile's version is " +
                                 std::to_string(readings.version.Major) + "." +
                                 std::to_string(readings.version.Minor) + ")");
            return NDIS_STATUS_BAD_VERSION;
        }
    }
    if (options && options->Seed != 0) readings.reference.seed = options->Seed;
    *adapter = &(new Provider(std::move(readings), *memory))->ndk;
    return STATUS_SUCCESS;
}

void Provider::close() {
    // CLOSE-ADP-01: every callback has returned when this returns.
    worker_.drain();
    {
        std::lock_guard lock(mutex);
        model.close_adapter(adapter_id);
        for (ObjectId id = 0; id < by_id_.size(); ++id)
            if (id != adapter_id) free_object(id);
        pending_.clear();
    }
    worker_.drain();
    delete this;
}

// ---- Objects ----

ObjectId Provider::id_of(const void* ndk_object) const {
    if (!ndk_object) return 0;
    // Every object of ours starts with the NDK object, followed by the provider and the id.
    const auto* header = static_cast<const Object<NDK_PD>*>(ndk_object);
    if (ndk_object == &ndk) return adapter_id;
    if (header->provider != this) return 0;  // not ours: an object of another adapter
    return header->id;
}

void Provider::register_object(ObjectId id, void* object) {
    if (by_id_.size() <= id) by_id_.resize(id + 1, nullptr);
    by_id_[id] = object;
}

namespace {

template <typename T, typename Dispatch>
T* make(Provider* provider, ObjectId id, NDK_OBJECT_TYPE type, const Dispatch* dispatch) {
    auto* object = new T{};
    // GEN-CREATE-03, GEN-CREATE-06/07, VER-03: type, negotiated version, zeroed reserved block,
    // dispatch set before the object is handed out.
    object->ndk.Header.Version = provider->readings().version;
    object->ndk.Header.ObjectType = type;
    object->ndk.Dispatch = dispatch;
    object->provider = provider;
    object->id = id;
    return object;
}

}  // namespace

NDK_OBJECT_HEADER* Provider::make_object(ObjectId id) {
    const model::Object* o = model.find(id);
    if (!o) return nullptr;
    void* object = nullptr;
    NDK_OBJECT_HEADER* header = nullptr;
    switch (o->kind) {
        case model::Kind::pd: {
            auto* p = make<PdObject>(this, id, NdkObjectTypePd, &kPdDispatch);
            object = p;
            header = &p->ndk.Header;
            break;
        }
        case model::Kind::cq: {
            auto* p = make<CqObject>(this, id, NdkObjectTypeCq, &kCqDispatch);
            object = p;
            header = &p->ndk.Header;
            break;
        }
        case model::Kind::qp: {
            auto* p = make<QpObject>(this, id, NdkObjectTypeQp, &kQpDispatch);
            object = p;
            header = &p->ndk.Header;
            break;
        }
        case model::Kind::srq: {
            auto* p = make<SrqObject>(this, id, NdkObjectTypeSrq, &kSrqDispatch);
            object = p;
            header = &p->ndk.Header;
            break;
        }
        case model::Kind::mr: {
            auto* p = make<MrObject>(this, id, NdkObjectTypeMr, &kMrDispatch);
            object = p;
            header = &p->ndk.Header;
            break;
        }
        case model::Kind::mw: {
            auto* p = make<MwObject>(this, id, NdkObjectTypeMw, &kMwDispatch);
            object = p;
            header = &p->ndk.Header;
            break;
        }
        case model::Kind::connector: {
            auto* p = make<ConnectorObject>(this, id, NdkObjectTypeConnector, &kConnectorDispatch);
            object = p;
            header = &p->ndk.Header;
            break;
        }
        case model::Kind::listener: {
            auto* p = make<ListenerObject>(this, id, NdkObjectTypeListener, &kListenerDispatch);
            object = p;
            header = &p->ndk.Header;
            break;
        }
        case model::Kind::shared_endpoint: {
            auto* p = make<SharedEndpointObject>(this, id, NdkObjectTypeSharedEndpoint,
                                                 &kSharedEndpointDispatch);
            object = p;
            header = &p->ndk.Header;
            break;
        }
        case model::Kind::adapter:
        case model::Kind::lam:
            return nullptr;
    }
    register_object(id, object);
    return header;
}

void Provider::free_object(ObjectId id) {
    if (id >= by_id_.size() || !by_id_[id] || id == adapter_id) return;
    const model::Object* o = model.find(id);
    void* p = by_id_[id];
    by_id_[id] = nullptr;
    switch (o ? o->kind : model::Kind::lam) {
        case model::Kind::cq:
            delete static_cast<CqObject*>(p);
            break;
        case model::Kind::srq:
            delete static_cast<SrqObject*>(p);
            break;
        case model::Kind::listener:
            delete static_cast<ListenerObject*>(p);
            break;
        case model::Kind::connector:
            delete static_cast<ConnectorObject*>(p);
            break;
        case model::Kind::pd:
            delete static_cast<PdObject*>(p);
            break;
        case model::Kind::mr:
            delete static_cast<MrObject*>(p);
            break;
        case model::Kind::mw:
            delete static_cast<MwObject*>(p);
            break;
        case model::Kind::qp:
            delete static_cast<QpObject*>(p);
            break;
        case model::Kind::shared_endpoint:
            delete static_cast<SharedEndpointObject*>(p);
            break;
        default:
            break;
    }
}

uint32_t Provider::new_token() {
    for (;;) {
        uint32_t token = readings().reference.sequential_tokens
                             ? next_token_++
                             : static_cast<uint32_t>(rng_.next());
        if (token != 0 && tokens_.insert(token).second) return token;
    }
}

uint64_t Provider::logical_address(PFN_NUMBER pfn) const {
    // Logical addresses are ours (LAM-PAGE-01): page-aligned, far from the arena's physical
    // numbering so that a consumer using PFN * PAGE_SIZE instead is caught (LAM-USE-01).
    uint64_t page = readings().reference.contiguous_logical_addresses ? pfn : (pfn ^ scramble_);
    return (uint64_t{1} << 44) + page * PAGE_SIZE;
}

// ---- Calls ----

namespace {

bool is_post(const model::Call& call) {
    return std::visit(
        [](const auto& c) {
            using T = std::decay_t<decltype(c)>;
            namespace k = model::calls;
            return std::is_same_v<T, k::Send> || std::is_same_v<T, k::SendAndInvalidate> ||
                   std::is_same_v<T, k::Read> || std::is_same_v<T, k::Write> ||
                   std::is_same_v<T, k::FastRegister> || std::is_same_v<T, k::Bind> ||
                   std::is_same_v<T, k::Invalidate> || std::is_same_v<T, k::Receive> ||
                   std::is_same_v<T, k::SrqReceive>;
        },
        call);
}

}  // namespace

NTSTATUS Provider::run(const model::Call& call,
                       const std::function<void(model::Observed&)>& outputs, PendingRequest pend,
                       ObjectId* created, bool force_pend) {
    std::unique_lock lock(mutex);
    model::Expectation e = model.expect(call);
    if (e.undefined) {
        // A broken consumer duty: refuse without touching anything (robustness, not a rule).
        deliver_events(lock);
        return STATUS_INVALID_DEVICE_STATE;
    }
    const auto& ref = readings().reference;
    NTSTATUS status = e.model_status();
    // Work requests: MODEL-WR-RES-01 lets a provider refuse a valid post for want of resources,
    // but the reference provider never does (its queues hold their depth): injected there, a
    // resource failure would make every data path under resource pressure a lottery.
    bool inject = status == STATUS_SUCCESS && e.may_lack_resources && !is_post(call) &&
                  rng_.percent(ref.resource_failure_percent);  // GEN-ASYNC-02
    bool pend_it = false;
    if (e.may_pend && (status == STATUS_SUCCESS || inject)) {
        pend_it =
            force_pend || e.must_pend || pend.event_driven || rng_.percent(ref.pending_percent);
        if (inject) pend_it = rng_.percent(ref.resource_failure_async_percent);
    }
    if (e.must_pend) pend_it = true;
    // CLOSE-05, CLOSE-07, CLOSE-CQ-01, GEN-CB-04: a close does not complete while a callback is
    // running (an object's event callback, a successor's close callback, or the very callback
    // this close is called from); queued behind it on the worker, its completion comes after.
    if (e.may_pend && status == STATUS_SUCCESS &&
        std::holds_alternative<model::calls::CloseObject>(call) && !worker_.idle())
        pend_it = true;
    if (inject && !pend_it) status = STATUS_INSUFFICIENT_RESOURCES;

    model::Observed observed;
    observed.status = pend_it ? STATUS_PENDING : status;
    if (!pend_it && outputs) outputs(observed);
    model::Applied applied = model.apply(call, observed);
    if (applied.created && observed.status == STATUS_SUCCESS &&
        pend.kind == PendingRequest::Kind::create) {
        make_object(applied.created);
        if (pend.init) pend.init(by_id_[applied.created]);
        if (created) *created = applied.created;
    }
    bool finish_now = false;
    if (pend_it) {
        pend.final_status = inject ? STATUS_INSUFFICIENT_RESOURCES : status;
        bool event_driven = pend.event_driven;
        pending_.emplace(applied.pending, std::move(pend));
        if (!event_driven) {
            using CT = model::Readings::ReferenceProvider::CallbackThread;
            bool inline_thread = ref.callback_thread == CT::inline_thread ||
                                 (ref.callback_thread == CT::mixed && rng_.percent(50));
            if (inline_thread) {
                finish_now = true;
            } else {
                uint64_t id = applied.pending;
                NTSTATUS final_status = pending_.at(id).final_status;
                worker_.post([this, id, final_status] { finish(id, final_status); });
            }
        }
    } else if (std::holds_alternative<model::calls::CloseObject>(call) &&
               observed.status == STATUS_SUCCESS) {
        free_object(std::get<model::calls::CloseObject>(call).object);
    }
    uint64_t pending_id = applied.pending;
    NTSTATUS final_status = pend_it ? pending_.at(pending_id).final_status : status;
    deliver_events(lock);
    lock.unlock();
    // inline_thread: the callback runs before the call returns STATUS_PENDING (allowed).
    if (finish_now) finish(pending_id, final_status);
    return observed.status;
}

model::Observed Provider::run_void(const model::Call& call,
                                   const std::function<void(model::Observed&)>& outputs) {
    std::unique_lock lock(mutex);
    model::Observed observed;
    model::Expectation e = model.expect(call);
    if (e.undefined) {
        deliver_events(lock);
        return observed;
    }
    if (outputs) outputs(observed);
    model.apply(call, observed);
    deliver_events(lock);
    return observed;
}

void Provider::finish(uint64_t id, NTSTATUS status) {
    std::unique_lock lock(mutex);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    PendingRequest request = std::move(it->second);
    pending_.erase(it);
    model::Observed outputs;
    if (NT_SUCCESS(status) && request.outputs) request.outputs(outputs);
    model::Applied applied = model.complete(id, status, outputs);
    NDK_OBJECT_HEADER* object = nullptr;
    if (request.kind == PendingRequest::Kind::create && applied.created && NT_SUCCESS(status)) {
        object = make_object(applied.created);
        if (request.init) request.init(by_id_[applied.created]);
    }
    if (request.kind == PendingRequest::Kind::close) free_object(request.object);
    deliver_events(lock);
    lock.unlock();
    switch (request.kind) {
        case PendingRequest::Kind::request:
            if (request.request) request.request(request.context, status);
            break;
        case PendingRequest::Kind::create:
            // GEN-CREATE-01: the object arrives here; AMB-17: NULL on failure.
            if (request.create) request.create(request.context, status, object);
            break;
        case PendingRequest::Kind::close:
            if (request.close) request.close(request.context);
            break;
    }
}

void Provider::deliver_events(std::unique_lock<std::mutex>&) {
    for (const model::Event& event : model.take_events()) {
        switch (event.kind) {
            case model::Event::Kind::cq_notification:
                if (auto* cq = object<CqObject>(event.object); cq && cq->notify)
                    worker_.post(
                        [f = cq->notify, c = cq->notify_context, s = event.status] { f(c, s); });
                break;
            case model::Event::Kind::srq_notification:
                if (auto* srq = object<SrqObject>(event.object); srq && srq->notify)
                    worker_.post(
                        [f = srq->notify, c = srq->notify_context, s = event.status] { f(c, s); });
                break;
            case model::Event::Kind::connect_request: {
                auto* listener = object<ListenerObject>(event.object);
                auto* passive = reinterpret_cast<ConnectorObject*>(make_object(event.created));
                const auto* state = model.state_of<model::ConnectorState>(event.created);
                if (passive && state)
                    if (auto* active = object<ConnectorObject>(state->peer))
                        passive->peer_private_data = active->private_data;
                if (listener && listener->connect_event && passive)
                    worker_.post([f = listener->connect_event, c = listener->connect_event_context,
                                  p = &passive->ndk] { f(c, p); });
                break;
            }
            case model::Event::Kind::disconnect:
                if (auto* connector = object<ConnectorObject>(event.object)) {
                    if (connector->disconnect_ex)
                        worker_.post([f = connector->disconnect_ex,
                                      c = connector->disconnect_context] { f(c, 0); });
                    else if (connector->disconnect)
                        worker_.post([f = connector->disconnect,
                                      c = connector->disconnect_context] { f(c); });
                }
                break;
            case model::Event::Kind::request_complete:
                worker_.post([this, id = event.pending, s = event.status] { finish(id, s); });
                break;
        }
    }
}

}  // namespace ndkct::adapters::reference
