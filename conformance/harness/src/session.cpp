// The harness: real NDK calls through dispatch tables, the callback contract, and the oracle.
#include "ndkct/conformance/session.hpp"

#include "ndkct/conformance/observation.hpp"
#include "ndkct/model/page_rules.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <utility>

#include "ndkct/conformance/in_flight.hpp"
#include "ndkct/model/translate.hpp"
#include "ndkct/platform/spin.hpp"
#include "ndkct/spec/hex.hpp"
#include "ndkct/spec/profile.hpp"
#include "ndkct/spec/status.hpp"
#include "session_internal.hpp"

namespace ndkct::conformance {

// ================= Callbacks: the contract of GEN-ASYNC-01/03, GEN-CB-03 =================

// (The callback records, Session::Callback and Session::EventRecord: session_internal.hpp.)

namespace session_detail {

using platform::spin_until;

thread_local int t_hook_depth = 0;  // > 0 on a provider thread running a hook

// A hook's exception must not unwind through the provider's frames: it is kept for the test.
void run_hook(Session* session, const std::function<void()>& hook) {
    if (!hook || !session->hook_starts()) return;
    ++t_hook_depth;
    try {
        hook();
    } catch (const std::exception& error) {
        session->hook_error(error.what());
    } catch (...) {
        session->hook_error("a hook threw an exception that is not a std::exception");
    }
    --t_hook_depth;
    session->hook_ends();
}

std::mutex g_live_mutex;
std::set<const void*> g_live;  // live Callback and EventRecord addresses
std::set<Session*> g_sessions;

template <typename T>
T* live(void* context) {
    std::lock_guard lock(g_live_mutex);
    return g_live.contains(context) ? static_cast<T*>(context) : nullptr;
}

// GEN-IRQL-01: a provider callback runs at up to DISPATCH_LEVEL, so a call the consumer makes
// from inside one (a hook) may not block. One that took the watchdog's time or more did.
void watch_hook_call(Session& session, milliseconds watchdog, const char* name,
                     std::chrono::steady_clock::time_point started) {
    if (!Session::in_hook()) return;
    auto took = std::chrono::steady_clock::now() - started;
    if (took < watchdog) return;
    model::Verdict v;
    v.add(blocked_in_callback(name, std::chrono::duration_cast<milliseconds>(took).count(),
                              watchdog.count()));
    session.report(std::move(v));
}

// Every NDK object has its dispatch table right after the 40-byte header. A NULL object or
// table is a step that failed before (or a provider that handed out no table): the harness
// stops the test with an exception rather than call through it.
const void* dispatch_of(const void* object) {
    if (!object) throw SessionError("an NDK call on a NULL object: an earlier step gave no object");
    const void* table = *reinterpret_cast<const void* const*>(static_cast<const char*>(object) +
                                                              offsetof(NDK_PD, Dispatch));
    if (!table) throw SessionError("an NDK call on an object whose Dispatch is NULL");
    return table;
}

// An object argument the provider would dereference: NULL means an earlier step failed.
void require(const void* object, const char* function, const char* role) {
    if (!object)
        throw SessionError(std::string(function) + " with a NULL " + role +
                           ": an earlier step gave no object (the test cannot go on)");
}

// Every MDL of a chain with its PFN array, byte for byte (LAM-REL-02).
std::vector<std::byte> snapshot_mdl_chain(const MDL* mdl) {
    std::vector<std::byte> bytes;
    for (size_t n = 0; mdl && n < 65536; mdl = mdl->Next, ++n) {
        // Size is a CSHORT; a chain a test built wrong on purpose may hold anything there.
        size_t size = mdl->Size > 0 ? std::max<size_t>(sizeof(MDL), static_cast<size_t>(mdl->Size))
                                    : sizeof(MDL);
        const auto* at = reinterpret_cast<const std::byte*>(mdl);
        bytes.insert(bytes.end(), at, at + size);
    }
    return bytes;
}

sockaddr_in ipv4(uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

// Trampolines the provider calls.

static void arrive(Session::Callback* cb, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    Session* session = cb->session;
    ++session->running_callbacks_;
    std::function<void()> hook;
    HookAt at;
    {
        std::lock_guard lock(cb->mutex);
        hook = std::move(cb->hook);
        cb->hook = nullptr;
        at = cb->hook_at;
    }
    // CLOSE-04: nothing comes for an object after its close completed.
    if (cb->kind != kClose && cb->target_closed) {
        model::Verdict late;
        late.add(violation({"CLOSE-04"}, std::string(cb->name) +
                                             ": a completion callback came after the object's "
                                             "close had completed"));
        session->report(std::move(late));
    }
    if (at == HookAt::before_arrival) run_hook(session, hook);
    int calls;
    bool inline_result;
    NTSTATUS returned;
    {
        std::lock_guard lock(cb->mutex);
        calls = ++cb->calls;
        returned = cb->returned;
        cb->status = status;
        cb->object = object;
        inline_result = cb->inline_result;
        cb->came.store(true, std::memory_order_release);
    }
    cb->arrived.notify_all();
    if (at == HookAt::after_arrival) run_hook(session, hook);
    cb->finished = true;
    --session->running_callbacks_;
    model::Verdict v;
    if (calls > 1) v.add(second_callback(cb->name));
    if (inline_result) v.add(callback_after_final_status(cb->name, returned));
    if (!v.clean()) cb->session->report(std::move(v));
}

void on_request(void* context, NTSTATUS status) {
    if (auto* cb = live<Session::Callback>(context))
        arrive(cb, status, nullptr);
    else
        Session::report_stray("NdkRequestCompletion came with a Context that no request had",
                              kRequest);
}

void on_create(void* context, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    if (auto* cb = live<Session::Callback>(context))
        arrive(cb, status, object);
    else
        Session::report_stray("NdkCreateCompletion came with a Context that no request had",
                              kCreate);
}

void on_close(void* context) {
    auto* cb = live<Session::Callback>(context);
    if (!cb)
        return Session::report_stray("NdkCloseCompletion came with a Context that no close had");
    Session* session = cb->session;
    // CLOSE-03, CLOSE-05, CLOSE-07: what must be over before a close completes.
    session->close_completed(cb->target, cb);
    {
        // CLOSE-05: while this runs, the close of an antecedent must not complete.
        std::lock_guard lock(session->running_mutex_);
        session->running_closes_.push_back({cb->target, {}});
    }
    arrive(cb, STATUS_SUCCESS, nullptr);
    std::lock_guard lock(session->running_mutex_);
    auto& running = session->running_closes_;
    for (auto it = running.begin(); it != running.end(); ++it)
        if (it->object == cb->target) {
            running.erase(it);
            break;
        }
}

static void event_arrived(Session::EventRecord* r) {
    {
        std::lock_guard lock(r->mutex);
        ++r->count;
    }
    r->arrived.notify_all();
}

// Every event trampoline: CLOSE-04 (no event after the close completed), the overlap count
// (CQ-NOT-03, CLOSE-07), the test's hook, and the CLOSE-ADP-01 count of running callbacks.
template <typename Body>
static void event_callback(Session::EventRecord* r, const char* what, Body body) {
    Session* session = r->session;
    ++session->running_callbacks_;
    int already = r->inside.fetch_add(1);
    model::Verdict v;
    if (r->closed)
        v.add(violation({"CLOSE-04", "CLOSE-CQ-01"},
                        std::string(what) + " came after the object's close had completed"));
    if (already > 0 && std::string_view(what) == "a CQ notification")
        v.add(violation({"CQ-NOT-03"}, "two notification callbacks of one CQ ran at once"));
    if (!v.clean()) session->report(std::move(v));
    body();
    event_arrived(r);
    run_hook(session, session->event_hook(r->object));
    --r->inside;
    --session->running_callbacks_;
}

void on_cq_notification(void* context, NTSTATUS status) {
    auto* r = live<Session::EventRecord>(context);
    if (!r) return Session::report_stray("a CQ notification came with a context no CQ had");
    event_callback(r, "a CQ notification", [&] {
        r->session->enqueue({model::Event::Kind::cq_notification, 0, 0, status, 0}, r);
    });
}

void on_srq_notification(void* context, NTSTATUS status) {
    auto* r = live<Session::EventRecord>(context);
    if (!r) return Session::report_stray("an SRQ notification came with a context no SRQ had");
    event_callback(r, "an SRQ notification", [&] {
        r->session->enqueue({model::Event::Kind::srq_notification, 0, 0, status, 0}, r);
    });
}

void on_connect_event(void* context, NDK_CONNECTOR* connector) {
    auto* r = live<Session::EventRecord>(context);
    if (!r) return Session::report_stray("a connect event came with a context no listener had");
    event_callback(r, "a connect event", [&] {
        r->session->enqueue({model::Event::Kind::connect_request, 0, 0, STATUS_SUCCESS, 0}, r,
                            connector);
        std::lock_guard lock(r->mutex);
        r->incoming.push_back(connector);
        r->incoming_count.fetch_add(1, std::memory_order_release);
    });
}

void on_disconnect(void* context) {
    auto* r = live<Session::EventRecord>(context);
    if (!r) return Session::report_stray("a disconnect event came with a context no connector had");
    event_callback(r, "a disconnect event", [&] {
        r->session->enqueue({model::Event::Kind::disconnect, 0, 0, STATUS_SUCCESS, 0}, r);
    });
}

// CONN-DISC-03: the Ex form, with the provider's reason (0: none given).
void on_disconnect_ex(void* context, ULONG reason) {
    auto* r = live<Session::EventRecord>(context);
    if (!r) return Session::report_stray("a disconnect event came with a context no connector had");
    event_callback(r, "a disconnect event", [&] {
        r->session->enqueue({model::Event::Kind::disconnect, 0, 0, STATUS_SUCCESS, 0}, r);
        std::lock_guard lock(r->mutex);
        r->ex_reasons.push_back(reason);
    });
}

}  // namespace session_detail

// ================= Session =================

namespace session_detail {

// A profile and the oracle's readings of it. Parsing and validating a profile's JSON was most
// of a Session's setup (the property tests open one per sequence); a shipped profile is
// compiled in and immutable, so each is parsed once per process. A profile file is read anew
// each time (it may change between runs of a long-lived process).
struct ParsedProfile {
    spec::Profile profile;
    model::Readings readings;
};

std::shared_ptr<const ParsedProfile> parsed_profile(const std::string& name_or_path) {
    auto parse = [&] {
        auto parsed = std::make_shared<ParsedProfile>();
        parsed->profile = spec::resolve_profile(name_or_path);
        parsed->readings = model::read_profile(parsed->profile);
        return parsed;
    };
    // spec::resolve_profile's test for a shipped profile's name.
    if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json"))
        return parse();
    static std::mutex mutex;
    static std::unordered_map<std::string, std::shared_ptr<const ParsedProfile>> cache;
    std::lock_guard lock(mutex);
    auto& slot = cache[name_or_path];
    if (!slot) slot = parse();  // throws (nothing cached) for an unknown name
    return slot;
}

// NDKCT_TIME_SCALE (>= 1): how much longer completions and events may take to arrive, for slow
// topologies (two emulated guests on one link: conformance/twonode sets it). Unlike
// NDKCT_PATIENCE (below) it stretches every wait, a short probe that nothing more comes too.
double time_scale() {
    static const double scale = [] {
        const char* v = std::getenv("NDKCT_TIME_SCALE");
        double x = v ? std::atof(v) : 1.0;
        return x >= 1.0 ? x : 1.0;
    }();
    return scale;
}

milliseconds stretched_for_link(milliseconds t) {
    return milliseconds(static_cast<long long>(static_cast<double>(t.count()) * time_scale()));
}

}  // namespace session_detail

// (One provider call, Session::InFlight, and Session::create and Session::request:
// session_internal.hpp.)

Session::Blocker Session::blocker() {
    Blocker b;
    {
        // A failure may be recorded while this thread holds the oracle (a test's with_oracle).
        std::unique_lock lock(oracle_mutex_, std::try_to_lock);
        if (lock.owns_lock())
            for (const auto& v : verdict_.violations) {
                if (v.warning) continue;
                if (b.what.empty()) b.what = v.describe();
                // The rule the oracle judged (the rest of its list follows from it).
                if (!v.rules.empty() &&
                    std::find(b.rules.begin(), b.rules.end(), v.rules.front()) == b.rules.end())
                    b.rules.push_back(v.rules.front());
            }
    }
    if (!b.rules.empty()) return b;
    std::lock_guard lock(blocker_mutex_);
    return unexpected_failure_;
}

Session::Blocker Session::any_blocker(Session* preferred) {
    if (preferred) {
        Blocker b = preferred->blocker();
        if (!b.rules.empty()) return b;
    }
    // Under the lock that keeps a session from being destroyed meanwhile (blocker() takes only
    // the session's own leaf locks, and the oracle's without waiting).
    std::lock_guard lock(g_live_mutex);
    for (Session* s : g_sessions) {
        if (s == preferred) continue;
        Blocker b = s->blocker();
        if (!b.rules.empty()) return b;
    }
    return {};
}

// NDKCT_PATIENCE=F (0 < F <= 1) scales how long the harness waits for what a provider owes
// (completion callbacks, completions, connect events). Below 1 only for sweeps of providers
// that lose what they owe (conformance/runner/tests/sweep.py), where the time is the cost.
static double patience_factor() {
    static const double factor = [] {
        const char* text = std::getenv("NDKCT_PATIENCE");
        double f = text ? std::strtod(text, nullptr) : 1.0;
        return f > 0 && f <= 1 ? f : 1.0;
    }();
    return factor;
}

// A wait for what the provider owes: longer on a slow link (NDKCT_TIME_SCALE), shorter for a
// sweep (NDKCT_PATIENCE); both may be set.
milliseconds Session::scaled(milliseconds full) {
    return milliseconds(
        std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(full.count()) * time_scale() *
                                                  patience_factor())));
}

milliseconds Session::patience(milliseconds full) const {
    if (patience_lost_) return std::min(scaled(full), stretched_for_link(milliseconds(200)));
    return scaled(full);
}

void Session::owed_but_missing(std::vector<std::string> rules, std::string what) {
    patience_lost_ = true;
    std::lock_guard lock(blocker_mutex_);
    unexpected_failure_ = {std::move(rules), std::move(what)};
}

void Session::hook_error(std::string what) {
    std::lock_guard lock(blocker_mutex_);
    hook_errors_.push_back(std::move(what));
}

std::vector<std::string> Session::hook_errors() {
    std::lock_guard lock(blocker_mutex_);
    return std::exchange(hook_errors_, {});
}

Session::Session(const ProviderSpec& spec, SessionOptions options)
    : spec_(spec), options_(std::move(options)) {
    entry_ = &entry_points_for(spec);  // throws ProviderSpecError with the reason
    identity_ = entry_->GetProviderIdentity();
    arena_ = options_.arena ? std::move(options_.arena)
                            : std::make_shared<platform::Arena>(options_.arena_pages, spec.seed);
    const auto parsed = parsed_profile(
        options_.profile_override.empty() ? spec.profile : options_.profile_override);
    const spec::Profile& profile = parsed->profile;
    char message[512] = {};
    NDKCT_OPEN_OPTIONS open{};
    open.Size = sizeof open;
    open.Version = NDKCT_MAKE_VERSION(profile.version.Major, 1);  // major + lowest minor (VER-02)
    open.ProfileJson = profile.json.c_str();
    open.Seed = spec.seed;
    open.DeviceName = spec.device.empty() ? nullptr : spec.device.c_str();
    open.ErrorMessage = message;
    open.ErrorMessageSize = sizeof message;
    NTSTATUS status;
    {
        in_flight::Call flight(
            "NdkctOpenAdapter", "", "ADP-OPEN-01",
            "NdkctOpenAdapter(Memory, Options{Version=" + std::to_string(open.Version.Major) + "." +
                std::to_string(open.Version.Minor) + "}, &adapter)");
        status = entry_->OpenAdapter(&arena_->host_memory(), &open, &adapter_);
    }
    if (status != STATUS_SUCCESS || !adapter_)
        throw SessionError("provider " + spec.text + " (" + identity_->Name +
                           ") did not open an adapter: " + spec::status_name(status) +
                           (message[0] ? std::string(": ") + message : ""));
    // The negotiated version decides what the oracle expects; read it once unjudged.
    ULONG size = sizeof info_;
    {
        in_flight::Call flight(
            "NdkQueryAdapterInfo", "adapter", "AI-01",
            "NdkQueryAdapterInfo(adapter, &info, *size=" + std::to_string(size) + ")");
        status = table<NDK_ADAPTER_DISPATCH>(adapter_).NdkQueryAdapterInfo(adapter_, &info_, &size);
    }
    if (status != STATUS_SUCCESS) {
        entry_->CloseAdapter(adapter_);
        throw SessionError("provider " + spec.text + ": NdkQueryAdapterInfo failed with " +
                           spec::status_name(status) + " on a full-size buffer");
    }
    // --capture: the capture library between this Session and the provider from here on.
    CaptureSettings capture;
    try {
        capture = options_.capture.value_or(CaptureSettings::from_environment());
    } catch (const std::exception& error) {  // a malformed NDKCT_CAPTURE_* setting
        entry_->CloseAdapter(adapter_);
        throw SessionError(std::string("cannot capture a trace: ") + error.what());
    }
    if (!capture.directory.empty()) {
        const std::string profile_name =
            options_.profile_override.empty() ? spec.profile : options_.profile_override;
        try {
            capture_ = std::make_unique<CaptureHost>(
                capture,
                CaptureHost::Description{
                    identity_->Name ? identity_->Name : "",
                    identity_->Version ? identity_->Version : "",
                    identity_->Description ? identity_->Description : "", spec.text, profile_name,
                    // A profile file may be gone when the trace is judged: it travels with it.
                    profile_name.find('/') != std::string::npos || profile_name.ends_with(".json")
                        ? profile.json
                        : std::string(),
                    capture_label(), spec.seed, &arena_->host_memory()});
            capture_->attach(adapter_);
        } catch (const std::exception& error) {
            entry_->CloseAdapter(adapter_);
            throw SessionError(std::string("cannot capture a trace: ") + error.what());
        }
    }
    model::Readings readings = parsed->readings;
    readings.version = info_.Version;
    readings.adapter_info = info_;
    oracle_ = std::make_unique<model::Model>(
        readings,
        model::HostMemoryView{static_cast<std::byte*>(arena_->host_memory().PhysicalBase),
                              arena_->page_count()},
        model::Mode::check);
    // The oracle's messages name objects by the provider's handles, as the test sees them.
    oracle_->name_objects([this](model::ObjectId oid) {
        std::lock_guard lock(handles_mutex_);
        auto it = handles_.find(oid);
        return it == handles_.end() ? std::string()
                                    : spec::hex(reinterpret_cast<uintptr_t>(it->second));
    });
    model::ObjectId adapter_id = oracle_->open_adapter();
    remember(adapter_, adapter_id);
    {
        std::lock_guard lock(g_live_mutex);
        g_sessions.insert(this);
    }
    size = sizeof info_;
    query_adapter_info(&info_, &size);  // judged this time
}

std::string Session::trace_path() const {
    return capture_ ? capture_->path() : std::string();
}

model::Verdict Session::expect_drained(NDK_QP* qp) {
    if (capture_) capture_->drained(qp);
    model::Verdict v =
        with_oracle([&](model::Model& m) { return m.expect_nothing_outstanding(id(qp)); });
    report(v);
    return v;
}

model::Verdict Session::expect_notification_delivered(NDK_CQ* cq, milliseconds waited,
                                                      const std::string& cq_name) {
    if (capture_) capture_->unnotified(cq, waited);
    model::Verdict v = with_oracle(
        [&](model::Model& m) { return notification_overdue(m, id(cq), waited.count(), cq_name); });
    report(v);
    return v;
}

model::Verdict Session::close_adapter() {
    close_all();
    if (adapter_) {
        if (capture_) capture_->adapter_closing();
        {
            in_flight::Call flight("NdkctCloseAdapter", "adapter", "CLOSE-ADP-01",
                                   "NdkctCloseAdapter(adapter)");
            entry_->CloseAdapter(adapter_);
        }
        if (capture_) {
            capture_->adapter_closed();
            capture_->close();
        }
        // CLOSE-ADP-01, CLOSE-05: closing the adapter blocks until every callback the provider
        // made for it, or for any object of it, has returned.
        if (int running = running_callbacks_.load(); running > 0) {
            model::Verdict v;
            v.add(violation({"CLOSE-ADP-01", "CLOSE-05"},
                            "CloseNdkAdapter returned while " + std::to_string(running) +
                                " callback(s) of the adapter's objects were still running"));
            report(std::move(v));
        }
        std::lock_guard lock(oracle_mutex_);
        verdict_.merge(oracle_->close_adapter(ids_[adapter_]));
        adapter_ = nullptr;
    }
    return verdict();
}

Session::~Session() {
    drop_hooks();
    close_adapter();
    std::lock_guard lock(g_live_mutex);
    g_sessions.erase(this);
    for (auto& cb : callbacks_)
        g_live.erase(cb.get());
    for (auto& r : events_)
        g_live.erase(r.get());
}

void Session::report(model::Verdict v) {
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(std::move(v));
}

void Session::report_stray(const std::string& what, int kind) {
    std::lock_guard lock(g_live_mutex);
    for (Session* s : g_sessions) {
        // *-CTX-01: while every request of this kind still owed its callback is of one function,
        // the wrong Context came for one of them: that function's page rule is named first.
        std::string owed;  // the one function, or "" (none, or several)
        bool several = false;
        if (kind >= 0) {
            std::lock_guard callbacks(s->callbacks_mutex_);
            for (auto& cb : s->callbacks_) {
                if (cb->kind != kind) continue;
                std::lock_guard one(cb->mutex);
                if (cb->calls > 0 || cb->inline_result) continue;
                if (owed.empty())
                    owed = cb->name;
                else if (owed != cb->name)
                    several = true;
            }
        }
        model::Violation stray = stray_callback(what);
        if (!several && !owed.empty())
            if (const char* rule = model::page_rule(owed, model::Contract::callback_context)) {
                stray.rules.insert(stray.rules.begin(), rule);
                stray.message += " (the requests still owed a callback were all " + owed + "'s)";
            }
        model::Verdict v;
        v.add(std::move(stray));
        s->report(std::move(v));
    }
}

void Session::enqueue(model::Event event, EventRecord* record, NDK_CONNECTOR* connector) {
    {
        std::lock_guard lock(queue_mutex_);
        queue_.push_back({event, record, connector});
    }
    queued_.notify_all();
}

bool Session::wait_for_event(std::chrono::steady_clock::time_point until) {
    std::unique_lock lock(queue_mutex_);
    return queued_.wait_until(lock, until, [&] { return !queue_.empty(); });
}

void Session::process_events() {
    for (;;) {
        QueuedEvent q;
        {
            std::lock_guard lock(queue_mutex_);
            if (queue_.empty()) return;
            q = queue_.front();
            queue_.pop_front();
        }
        std::lock_guard lock(oracle_mutex_);
        q.event.object = id(q.record->object);
        model::Applied a = oracle_->observe_event(q.event);
        verdict_.merge(std::move(a.verdict));
        if (q.event.kind == model::Event::Kind::connect_request) {
            model::Verdict v;
            check_object(q.connector, info_.Version, v,
                         "NdkConnectEventCallback");  // GEN-CREATE-03
            verdict_.merge(std::move(v));
            adopt(q.connector, a.created);
        }
    }
}

model::Verdict Session::verdict() {
    process_events();
    std::lock_guard lock(oracle_mutex_);
    return verdict_;
}

model::ObjectId Session::id(const void* object) const {
    if (!object) return 0;
    auto it = ids_.find(object);
    return it == ids_.end() ? 0 : it->second;
}

void Session::adopt(void* object, model::ObjectId id) {
    if (!object) return;
    // An object the oracle did not expect (a create that should have failed, and did not) is
    // unknown to it (id 0), but still the test's: close_all closes it with the rest, so the
    // provider is not charged later for what the test left open (its close is not judged).
    if (id) remember(object, id);
    open_.push_back({object, id});
}

// Both ways: ids_ for the calls, handles_ for the oracle's messages.
void Session::remember(const void* object, model::ObjectId id) {
    ids_[object] = id;
    std::lock_guard lock(handles_mutex_);
    handles_[id] = object;
}

bool Session::in_hook() {
    return t_hook_depth > 0;
}

void Session::hook_next_callback(std::function<void()> fn, HookAt at) {
    std::lock_guard lock(hooks_mutex_);
    next_hook_ = std::move(fn);
    next_hook_at_ = at;
}

std::function<void()> Session::take_hook(HookAt& at) {
    std::lock_guard lock(hooks_mutex_);
    at = next_hook_at_;
    return std::exchange(next_hook_, nullptr);
}

void Session::hook_events(const void* object, std::function<void()> fn) {
    std::lock_guard lock(hooks_mutex_);
    if (fn)
        event_hooks_[object] = std::move(fn);
    else
        event_hooks_.erase(object);
}

bool Session::hook_starts() {
    ++hooks_running_;  // before the flag is read: drop_hooks sees it or it sees the flag
    if (!hooks_dropped_) return true;
    --hooks_running_;
    return false;
}

void Session::drop_hooks() {
    {
        std::lock_guard lock(hooks_mutex_);
        hooks_dropped_ = true;
        next_hook_ = nullptr;
        event_hooks_.clear();
    }
    if (in_hook()) return;  // (never from a hook; a hook waiting for itself would not end)
    while (hooks_running_ > 0)
        std::this_thread::sleep_for(milliseconds(1));
}

std::function<void()> Session::event_hook(const void* object) {
    std::lock_guard lock(hooks_mutex_);
    auto it = event_hooks_.find(object);
    return it == event_hooks_.end() ? nullptr : it->second;
}

// CLOSE-03: the requests pending on the object have completed and their callbacks returned;
// CLOSE-07: no event callback of the object is running; CLOSE-05: no close callback of a
// successor is running. Called where a close completes (its callback, or STATUS_SUCCESS).
void Session::check_close_order(const void* object, const char* how) {
    model::Verdict v;
    {
        std::lock_guard lock(callbacks_mutex_);
        for (const auto& cb : callbacks_)
            if (cb->target == object && cb->kind == kRequest && !cb->target_closed && cb->pended &&
                !cb->finished) {
                v.add(violation({"CLOSE-03"}, std::string("the close ") + how + " while " +
                                                  cb->name +
                                                  " on the object was still pending or its "
                                                  "callback still running"));
                break;
            }
        for (const auto& r : events_)
            if (r->object == object && !r->closed && r->inside > 0)
                v.add(violation({"CLOSE-07", "CLOSE-CQ-01"},
                                std::string("the close ") + how +
                                    " while an event callback of the object was running"));
    }
    std::vector<const void*> successors_closing;
    {
        std::lock_guard lock(running_mutex_);
        for (const auto& running : running_closes_) {
            if (running.object == object) continue;
            auto successor_of = close_antecedents_.find(running.object);
            if (successor_of != close_antecedents_.end() &&
                std::find(successor_of->second.begin(), successor_of->second.end(), object) !=
                    successor_of->second.end())
                successors_closing.push_back(running.object);
        }
    }
    if (!successors_closing.empty()) {  // named by the oracle's kinds (CQP-LIFE-01, CQP-SRQ-06)
        std::lock_guard lock(oracle_mutex_);
        for (const void* successor : successors_closing)
            v.add(close_during_successor_close(*oracle_, id(object), id(successor), how));
    }
    if (!v.clean()) report(std::move(v));
}

void Session::close_completed(const void* object, Callback*) {
    check_close_order(object, "completed");
    std::lock_guard lock(callbacks_mutex_);
    for (auto& cb : callbacks_)
        if (cb->target == object && cb->kind != kClose) cb->target_closed = true;
    for (auto& r : events_)
        if (r->object == object) r->closed = true;
}

Session::Callback* Session::new_callback(int kind, const char* name, const void* target) {
    auto cb = std::make_unique<Callback>();
    cb->session = this;
    cb->kind = kind;
    cb->name = name;
    cb->target = target;
    cb->hook = take_hook(cb->hook_at);
    Callback* raw = cb.get();
    {
        std::lock_guard lock(g_live_mutex);
        g_live.insert(raw);
    }
    std::lock_guard lock(callbacks_mutex_);
    callbacks_.push_back(std::move(cb));
    return raw;
}

Session::EventRecord* Session::new_event_record() {
    auto r = std::make_unique<EventRecord>();
    r->session = this;
    EventRecord* raw = r.get();
    {
        std::lock_guard lock(g_live_mutex);
        g_live.insert(raw);
    }
    std::lock_guard lock(callbacks_mutex_);
    events_.push_back(std::move(r));
    return raw;
}

// Marks the call's return; a callback that already came after a final status is a violation.
void Session::returned(Callback* cb, NTSTATUS status) {
    bool early;
    {
        std::lock_guard lock(cb->mutex);
        cb->inline_result = status != STATUS_PENDING;
        cb->returned = status;
        cb->pended = status == STATUS_PENDING;
        early = cb->inline_result && cb->calls > 0;
    }
    if (early) {
        model::Verdict v;
        v.add(callback_before_final_status(cb->name, status));
        report(std::move(v));
    }
}

NTSTATUS Session::wait(Callback* cb) {
    in_flight::Wait waiting(cb->name, "", "GEN-ASYNC-01");
    // A provider's callback usually comes within microseconds of the call (from its worker
    // thread, on another core): waiting for it a moment without sleeping saves the thread's
    // wake-up, which costs far more than the wait.
    spin_until([cb] { return cb->came.load(std::memory_order_acquire); });
    std::unique_lock lock(cb->mutex);
    const milliseconds limit = patience(options_.callback_timeout);
    if (!cb->arrived.wait_for(lock, limit, [&] { return cb->calls > 0; })) {
        lock.unlock();
        owed_but_missing({"GEN-ASYNC-01"}, std::string(cb->name) +
                                               " returned STATUS_PENDING and its completion "
                                               "callback did not come");
        // CLOSE-08: the close of a request's object starts the request's cancellation, so once
        // that close was requested nothing else is awaited.
        bool close_requested = false;
        std::string of;  // which object: the call's name alone does not say
        if (cb->target) {
            std::lock_guard oracle_lock(oracle_mutex_);
            if (const model::Object* o = oracle_->find(id(cb->target))) {
                close_requested = cb->kind == kRequest && o->close_requested;
                of = std::string(" (") + model::kind_name(o->kind) + " " + std::to_string(o->id) +
                     ")";
            }
        }
        model::Verdict v;
        // The close requested makes CLOSE-08 the rule judged (its cancellation was owed).
        v.add(violation(close_requested
                            ? model::RuleIds{"CLOSE-08", "GEN-ASYNC-01"}
                            : model::with_page_rule(cb->name, model::Contract::callback_not_once,
                                                    {"GEN-ASYNC-01"}),
                        std::string(cb->name) + of +
                            " returned STATUS_PENDING but its completion callback did not come "
                            "within " +
                            std::to_string(limit.count()) + " ms" +
                            (close_requested ? ", though its object's close was requested (the "
                                               "close cancels it)"
                                             : "")));
        report(std::move(v));
        return STATUS_PENDING;
    }
    return cb->status;
}

NTSTATUS Session::post(const model::Call& call, NTSTATUS status) {
    Observed o;
    o.status = status;
    {
        std::lock_guard lock(oracle_mutex_);
        verdict_.merge(oracle_->apply(call, o).verdict);
    }
    process_events();
    return status;
}

// (The NDK calls by object family: session_adapter.cpp (host memory, adapter),
// session_memory.cpp (PD, MR, MW), session_queues.cpp (CQ, SRQ, QP),
// session_connections.cpp.)

// ---- Every object ----

NTSTATUS Session::query_extension_interface(void* object, const GUID& interface_id,
                                            NDK_VERSION version, NDK_EXTENSION_INTERFACE* out) {
    // Slot 0 of the adapter's table, slot 1 (after the close) of every other (GEN-DISP-01).
    InFlight flight(*this, calls::QueryExtensionInterface{id(object)}, {{object, "object"}});
    const auto* header = static_cast<NDK_OBJECT_HEADER*>(object);
    auto* const* slots = static_cast<NDK_FN_QUERY_EXTENSION_INTERFACE* const*>(dispatch_of(object));
    NDK_FN_QUERY_EXTENSION_INTERFACE* query =
        header->ObjectType == NdkObjectTypeAdapter ? slots[0] : slots[1];
    const void* const sentinel = reinterpret_cast<const void*>(uintptr_t{0x5E47141});
    out->Dispatch = sentinel;
    GUID copy = interface_id;
    NTSTATUS status = query(static_cast<NDK_OBJECT_HEADER*>(object), &copy, version, out);
    flight.record.reset();
    model::Verdict v;
    // EXT-02: a success fills *pExtensionInterface with the extension's table.
    if (status == STATUS_SUCCESS && (out->Dispatch == sentinel || out->Dispatch == nullptr))
        v.add(violation({"EXT-02"},
                        "NdkQueryExtensionInterface succeeded without filling "
                        "*pExtensionInterface"));
    Observed o;
    o.status = status;
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::QueryExtensionInterface{id(object)}, o).verdict);
    verdict_.merge(std::move(v));
    return status;
}

// ---- Hooks: calls finished on the test thread ----

std::vector<Deferred> Session::finish_deferred() {
    std::vector<DeferredCall> calls_to_finish;
    {
        std::lock_guard lock(deferred_mutex_);
        calls_to_finish.swap(deferred_);
    }
    std::vector<Deferred> out;
    for (auto& d : calls_to_finish) {
        Deferred result;
        result.name = d.name;
        result.final_status = wait(d.callback);
        if (result.final_status == STATUS_PENDING) {
            out.push_back(result);
            continue;
        }
        process_events();
        Observed later;
        later.status = result.final_status;
        if (d.outputs) d.outputs(later);
        model::Verdict v;
        if (d.create && NT_SUCCESS(result.final_status)) {
            result.object = d.callback->object;
            if (d.check) d.check(result.object, v);
        }
        {
            std::lock_guard lock(oracle_mutex_);
            model::Applied c = oracle_->complete(d.pending, result.final_status, later);
            verdict_.merge(std::move(c.verdict));
            verdict_.merge(std::move(v));
            if (result.object) adopt(result.object, c.created ? c.created : d.created);
        }
        process_events();
        out.push_back(result);
    }
    return out;
}

// ---- Close ----

NTSTATUS Session::close_async(void* object) {
    if (!object)
        throw SessionError("NdkCloseObject on a NULL object: an earlier step gave no object");
    // GEN-CREATE-07: NdkReserved left alone while the object is open.
    const auto& reserved = static_cast<const NDK_OBJECT_HEADER*>(object)->NdkReserved;
    const auto* reserved_bytes = reinterpret_cast<const std::byte*>(&reserved);
    if (std::any_of(reserved_bytes, reserved_bytes + sizeof reserved,
                    [](std::byte b) { return b != std::byte{0}; })) {
        model::Verdict v;
        v.add(violation({"GEN-CREATE-07"},
                        "Header.NdkReserved of an open object was written by the provider"));
        report(std::move(v));
    }
    // CLOSE-API-01: every table but the adapter's starts with the object's close entry.
    auto close_fn = *static_cast<NDK_FN_CLOSE_OBJECT* const*>(dispatch_of(object));
    {
        // CLOSE-05: the objects whose close must wait for this one's close callback.
        std::vector<const void*> antecedents;
        std::lock_guard lock(oracle_mutex_);
        if (const auto* o = oracle_->find(id(object)))
            for (model::ObjectId up : o->antecedents)
                for (const auto& [pointer, known] : ids_)
                    if (known == up) antecedents.push_back(pointer);
        std::lock_guard running(running_mutex_);
        close_antecedents_[object] = std::move(antecedents);
    }
    NTSTATUS status = start_async(
        calls::CloseObject{id(object), true},
        [&](void* cb) { return close_fn(static_cast<NDK_OBJECT_HEADER*>(object), on_close, cb); },
        "NdkCloseObject", kClose, pending_closes_, object);
    if (status == STATUS_SUCCESS) close_completed(object, nullptr);
    {
        std::lock_guard lock(oracle_mutex_);
        std::erase_if(open_, [&](const auto& entry) { return entry.first == object; });
    }
    process_events();
    return status;
}

Done Session::wait_close(void* object) {
    return wait_for(pending_closes_, object);
}

Done Session::close(void* object) {
    close_async(object);
    return wait_close(object);
}

void Session::close_all() {
    // Successors first: the reverse of creation order closes QPs before CQs and PDs, MWs and
    // connectors before MRs and QPs (CLOSE-02 would let any order work, but slowly).
    for (;;) {
        void* object = nullptr;
        {
            std::lock_guard lock(oracle_mutex_);
            if (open_.empty()) break;
            object = open_.back().first;
        }
        Done d = close(object);
        if (d.final_status == STATUS_PENDING) {  // a close that never completed: give up on it
            std::lock_guard lock(oracle_mutex_);
            std::erase_if(open_, [&](const auto& entry) { return entry.first == object; });
        }
    }
}

}  // namespace ndkct::conformance
