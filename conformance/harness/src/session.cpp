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

namespace ndkct::conformance {

namespace calls = model::calls;
using model::context_of;
using model::Observed;

// ================= Callbacks: the contract of GEN-ASYNC-01/03, GEN-CB-03 =================

enum CallbackKind { kRequest = 0, kCreate = 1, kClose = 2 };

struct Session::Callback {
    Session* session = nullptr;
    int kind = kRequest;
    const char* name = "";
    const void* target = nullptr;  // the object the request or close is on, when known
    std::mutex mutex;
    std::condition_variable arrived;
    int calls = 0;
    std::atomic<bool> came{false};  // calls > 0, read without the mutex (Session::wait's spin)
    NTSTATUS status = STATUS_PENDING;
    NDK_OBJECT_HEADER* object = nullptr;
    bool inline_result = false;          // the call returned a final status: no callback may follow
    NTSTATUS returned = STATUS_PENDING;  // what the call returned
    bool pended = false;                 // the call returned STATUS_PENDING
    std::atomic<bool> finished{false};   // the trampoline has returned to the provider
    std::atomic<bool> target_closed{false};  // the target's close has completed (CLOSE-04)
    std::function<void()> hook;              // runs inside the callback (hook_next_callback)
    HookAt hook_at = HookAt::before_arrival;
};

struct Session::EventRecord {
    Session* session = nullptr;
    const void* object = nullptr;  // the CQ, listener or connector, once known
    std::mutex mutex;
    std::condition_variable arrived;
    size_t count = 0;
    std::deque<NDK_CONNECTOR*> incoming;    // listener: connectors from connect events
    std::atomic<size_t> incoming_count{0};  // incoming.size(), read without the mutex (spin)
    std::vector<ULONG> ex_reasons;          // connector: NdkDisconnectEventCallbackEx reasons
    std::atomic<int> inside{0};             // event callbacks now running (CQ-NOT-03, CLOSE-07)
    std::atomic<bool> closed{false};        // the object's close has completed (CLOSE-04)
};

namespace {

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

model::Violation violation(model::RuleIds rules, std::string message) {
    return {std::move(rules), std::move(message), false};
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

NDK_OBJECT_TYPE type_of(const NDK_PD*) {
    return NdkObjectTypePd;
}
NDK_OBJECT_TYPE type_of(const NDK_CQ*) {
    return NdkObjectTypeCq;
}
NDK_OBJECT_TYPE type_of(const NDK_MR*) {
    return NdkObjectTypeMr;
}
NDK_OBJECT_TYPE type_of(const NDK_MW*) {
    return NdkObjectTypeMw;
}
NDK_OBJECT_TYPE type_of(const NDK_QP*) {
    return NdkObjectTypeQp;
}
NDK_OBJECT_TYPE type_of(const NDK_SRQ*) {
    return NdkObjectTypeSrq;
}
NDK_OBJECT_TYPE type_of(const NDK_CONNECTOR*) {
    return NdkObjectTypeConnector;
}
NDK_OBJECT_TYPE type_of(const NDK_LISTENER*) {
    return NdkObjectTypeListener;
}
NDK_OBJECT_TYPE type_of(const NDK_SHARED_ENDPOINT*) {
    return NdkObjectTypeSharedEndpoint;
}

// GEN-CREATE-03/06, GEN-MAND-01, VER-03: a handed-out object is well formed (observation.hpp,
// the same check the trace checker makes).
template <typename Ndk>
void check_object(const Ndk* object, NDK_VERSION version, model::Verdict& v, const char* call) {
    using Table = std::remove_cv_t<std::remove_pointer_t<decltype(object->Dispatch)>>;
    v.merge(check_handed_out(view_handed_out(object, sizeof(Table) / sizeof(void*)),
                             type_of(object), version, call));
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

template <typename Table>
const Table& table(const void* object) {
    return *static_cast<const Table*>(dispatch_of(object));
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

}  // namespace

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

static void on_request(void* context, NTSTATUS status) {
    if (auto* cb = live<Session::Callback>(context))
        arrive(cb, status, nullptr);
    else
        Session::report_stray("NdkRequestCompletion came with a Context that no request had",
                              kRequest);
}

static void on_create(void* context, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    if (auto* cb = live<Session::Callback>(context))
        arrive(cb, status, object);
    else
        Session::report_stray("NdkCreateCompletion came with a Context that no request had",
                              kCreate);
}

static void on_close(void* context) {
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

static void on_cq_notification(void* context, NTSTATUS status) {
    auto* r = live<Session::EventRecord>(context);
    if (!r) return Session::report_stray("a CQ notification came with a context no CQ had");
    event_callback(r, "a CQ notification", [&] {
        r->session->enqueue({model::Event::Kind::cq_notification, 0, 0, status, 0}, r);
    });
}

static void on_srq_notification(void* context, NTSTATUS status) {
    auto* r = live<Session::EventRecord>(context);
    if (!r) return Session::report_stray("an SRQ notification came with a context no SRQ had");
    event_callback(r, "an SRQ notification", [&] {
        r->session->enqueue({model::Event::Kind::srq_notification, 0, 0, status, 0}, r);
    });
}

static void on_connect_event(void* context, NDK_CONNECTOR* connector) {
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

static void on_disconnect(void* context) {
    auto* r = live<Session::EventRecord>(context);
    if (!r) return Session::report_stray("a disconnect event came with a context no connector had");
    event_callback(r, "a disconnect event", [&] {
        r->session->enqueue({model::Event::Kind::disconnect, 0, 0, STATUS_SUCCESS, 0}, r);
    });
}

// CONN-DISC-03: the Ex form, with the provider's reason (0: none given).
static void on_disconnect_ex(void* context, ULONG reason) {
    auto* r = live<Session::EventRecord>(context);
    if (!r) return Session::report_stray("a disconnect event came with a context no connector had");
    event_callback(r, "a disconnect event", [&] {
        r->session->enqueue({model::Event::Kind::disconnect, 0, 0, STATUS_SUCCESS, 0}, r);
        std::lock_guard lock(r->mutex);
        r->ex_reasons.push_back(reason);
    });
}

// ================= Session =================

namespace {

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

}  // namespace

// ================= One provider call: its in-flight record, rules and outcome =================

// Constructed right before a provider call, destroyed (or done()) when it returned. Refuses a
// NULL object (a failed earlier step) before the provider sees it; writes the call into the
// thread's in-flight slot (function, object, NDK syntax, the rules the model judges it by); and
// when a call the model held valid fails, remembers it as what blocks the test from going on.
struct Session::InFlight {
    struct Needed {
        const void* object;
        const char* role;  // "PD", "receive CQ": for the message
    };

    Session& session;
    const char* function;
    bool valid = true;  // the model expected it to succeed
    model::RuleIds rules;
    std::optional<in_flight::Call> record;

    InFlight(Session& s, const model::Call& call, std::initializer_list<Needed> needed)
        : session(s), function(model::ndk_function_name(call)) {
        for (const auto& n : needed)
            if (!n.object)
                throw SessionError(std::string(function) + " with a NULL " + n.role +
                                   ": an earlier step gave no object (the test cannot go on)");
        in_flight::note_function(static_cast<unsigned>(call.index()), function);
        std::string object;
        {
            std::lock_guard lock(s.oracle_mutex_);
            model::Expectation e = s.oracle_->expect(call);
            valid = !e.must_fail() && !e.undefined && !e.consumer_error;
            if (valid) {
                rules = e.success_rules;
            } else {
                for (const auto& f : e.failures)
                    for (const auto& r : f.rules)
                        if (std::find(rules.begin(), rules.end(), r) == rules.end())
                            rules.push_back(r);
            }
            if (needed.size() > 0)
                if (const model::Object* o = s.oracle_->find(s.id(needed.begin()->object)))
                    object = std::string(model::kind_name(o->kind)) + " " + std::to_string(o->id);
        }
        std::string text;
        for (const auto& r : rules)
            text += (text.empty() ? "" : ",") + r;
        record.emplace(function, object, text, model::show(call));
    }

    // The call returned (its record is cleared); `status` is its outcome so far.
    void returned(NTSTATUS status, bool gave_no_object = false) {
        record.reset();
        outcome(status, gave_no_object);
    }

    // A final outcome (inline, or the callback's): a valid call that failed blocks the test.
    void outcome(NTSTATUS status, bool gave_no_object = false) {
        if (!valid || status == STATUS_PENDING) return;
        if (!NT_ERROR(status) && !(gave_no_object && NT_SUCCESS(status))) return;
        std::string what = std::string(function) +
                           (NT_ERROR(status) ? " returned " + spec::status_name(status)
                                             : std::string(" succeeded without an object"));
        std::lock_guard lock(session.blocker_mutex_);
        session.unexpected_failure_ = {rules, std::move(what)};
    }
};

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

template <typename Ndk, typename Invoke>
Made<Ndk> Session::create(const model::Call& call, Invoke invoke, const char* name,
                          const void* target) {
    Made<Ndk> made;
    InFlight flight(*this, call, {{target, "object"}});
    Callback* cb = new_callback(kCreate, name);
    Ndk* const sentinel = reinterpret_cast<Ndk*>(uintptr_t{0x5E47140});
    Ndk* out = sentinel;
    const auto started = std::chrono::steady_clock::now();
    made.status = invoke(on_create, cb, &out);
    flight.returned(made.status, made.status == STATUS_SUCCESS && (out == sentinel || !out));
    watch_hook_call(*this, options_.hook_call_watchdog, name, started);
    returned(cb, made.status);
    Observed o;
    o.status = made.status;
    o.output_written_while_pending = made.status == STATUS_PENDING && out != sentinel;
    model::Applied a;
    {
        std::lock_guard lock(oracle_mutex_);
        a = oracle_->apply(call, o);
        verdict_.merge(std::move(a.verdict));
    }
    process_events();
    if (made.status == STATUS_SUCCESS) {
        made.final_status = STATUS_SUCCESS;
        made.object = out == sentinel ? nullptr : out;
        model::Verdict v;
        check_object(made.object, info_.Version, v, name);
        std::lock_guard lock(oracle_mutex_);
        verdict_.merge(std::move(v));
        adopt(made.object, a.created);
    } else if (made.status == STATUS_PENDING && in_hook()) {
        // Inside a provider callback nothing waits (GEN-IRQL-01): finish_deferred() does.
        std::lock_guard lock(deferred_mutex_);
        deferred_.push_back({cb,
                             a.pending,
                             name,
                             true,
                             {},
                             a.created,
                             [version = info_.Version, name](void* made_object, model::Verdict& v) {
                                 check_object(static_cast<Ndk*>(made_object), version, v, name);
                             }});
        made.final_status = STATUS_PENDING;
        return made;
    } else if (made.status == STATUS_PENDING) {
        made.final_status = wait(cb);
        flight.outcome(made.final_status, NT_SUCCESS(made.final_status) && !cb->object);
        if (out != sentinel) {  // GEN-CREATE-04: written later, while the request was pending
            model::Verdict v;
            v.add(violation({"GEN-CREATE-04"},
                            std::string(name) + " wrote its output pointer although it pended"));
            report(std::move(v));
        }
        if (made.final_status == STATUS_PENDING) return made;
        model::Verdict v;
        if (NT_SUCCESS(made.final_status)) {
            made.object = reinterpret_cast<Ndk*>(cb->object);
            check_object(made.object, info_.Version, v, name);
        } else if (cb->object) {  // GEN-CREATE-02, CQP-ST-03: a failure creates nothing
            v.add(failed_create_with_object(name, made.final_status));
        }
        {
            std::lock_guard lock(oracle_mutex_);
            model::Applied c = oracle_->complete(a.pending, made.final_status);
            verdict_.merge(std::move(c.verdict));
            verdict_.merge(std::move(v));
            if (made.object) adopt(made.object, c.created ? c.created : a.created);
        }
        process_events();
    } else {
        made.final_status = made.status;
    }
    return made;
}

template <typename Invoke>
Done Session::request(const model::Call& call, Invoke invoke, const char* name,
                      const std::function<void(Observed&)>& outputs, const void* target) {
    Done done;
    InFlight flight(*this, call, {{target ? target : adapter_, "object"}});
    Callback* cb = new_callback(kRequest, name, target);
    const auto started = std::chrono::steady_clock::now();
    done.status = invoke(on_request, cb);
    flight.returned(done.status);
    watch_hook_call(*this, options_.hook_call_watchdog, name, started);
    returned(cb, done.status);
    Observed o;
    o.status = done.status;
    if (done.status != STATUS_PENDING && outputs) outputs(o);
    model::Applied a;
    {
        std::lock_guard lock(oracle_mutex_);
        a = oracle_->apply(call, o);
        verdict_.merge(std::move(a.verdict));
    }
    process_events();
    done.final_status = done.status;
    if (done.status == STATUS_PENDING && in_hook()) {
        // Inside a provider callback nothing waits (GEN-IRQL-01): finish_deferred() does.
        std::lock_guard lock(deferred_mutex_);
        deferred_.push_back({cb, a.pending, name, false, outputs, 0, {}});
        return done;
    }
    if (done.status == STATUS_PENDING) {
        done.final_status = wait(cb);
        flight.outcome(done.final_status);
        if (done.final_status == STATUS_PENDING) return done;
        process_events();  // events the request caused come before its completion
        Observed later;
        later.status = done.final_status;
        if (outputs) outputs(later);
        {
            std::lock_guard lock(oracle_mutex_);
            verdict_.merge(oracle_->complete(a.pending, done.final_status, later).verdict);
        }
        process_events();
    }
    return done;
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

// ---- Host memory ----

platform::LockedBuffer Session::buffer(size_t bytes, platform::Placement placement) {
    return arena_->allocate(bytes, placement);
}

NDK_SGE Session::sge(const platform::LockedBuffer& buffer, size_t offset, ULONG length,
                     UINT32 token) {
    NDK_SGE s{};
    s.VirtualAddress = buffer.data() + offset;
    s.Length = length;
    s.MemoryRegionToken = token;
    return s;
}

// ---- Adapter ----

NTSTATUS Session::query_adapter_info(NDK_ADAPTER_INFO* info, ULONG* size) {
    ULONG given = size ? *size : 0;
    calls::QueryAdapterInfo call{id(adapter_), given, info != nullptr};
    InFlight flight(*this, call, {{adapter_, "adapter"}});
    NTSTATUS status =
        table<NDK_ADAPTER_DISPATCH>(adapter_).NdkQueryAdapterInfo(adapter_, info, size);
    flight.returned(status);
    Observed o;
    o.status = status;
    if (size) o.size_out = *size;
    if (status == STATUS_SUCCESS && info) {
        NDK_ADAPTER_INFO copy{};
        std::memcpy(&copy, info, std::min<size_t>(given, sizeof copy));
        o.adapter_info = copy;
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(call, o).verdict);
    return status;
}

Made<NDK_CQ> Session::create_cq(ULONG depth, bool with_notification) {
    EventRecord* r = new_event_record();
    auto made = create<NDK_CQ>(
        calls::CreateCq{id(adapter_), depth, with_notification, false},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_CQ** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreateCq(
                adapter_, depth, with_notification ? on_cq_notification : nullptr, r, nullptr, done,
                ctx, out);
        },
        "NdkCreateCq", adapter_);
    r->object = made.object;
    if (made.object) event_records_[made.object] = r;
    return made;
}

Made<NDK_PD> Session::create_pd() {
    return create<NDK_PD>(
        calls::CreatePd{id(adapter_)},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_PD** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreatePd(adapter_, done, ctx, out);
        },
        "NdkCreatePd", adapter_);
}

Made<NDK_SHARED_ENDPOINT> Session::create_shared_endpoint(const sockaddr* address, ULONG length) {
    return create<NDK_SHARED_ENDPOINT>(
        calls::CreateSharedEndpoint{id(adapter_), model::view_address(address, length)},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_SHARED_ENDPOINT** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreateSharedEndpoint(
                adapter_, const_cast<sockaddr*>(address), length, done, ctx, out);
        },
        "NdkCreateSharedEndpoint", adapter_);
}

Made<NDK_CONNECTOR> Session::create_connector() {
    return create<NDK_CONNECTOR>(
        calls::CreateConnector{id(adapter_)},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_CONNECTOR** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreateConnector(adapter_, done, ctx,
                                                                            out);
        },
        "NdkCreateConnector", adapter_);
}

Made<NDK_LISTENER> Session::create_listener() {
    EventRecord* r = new_event_record();
    auto made = create<NDK_LISTENER>(
        calls::CreateListener{id(adapter_), true},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_LISTENER** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreateListener(
                adapter_, on_connect_event, r, done, ctx, out);
        },
        "NdkCreateListener", adapter_);
    r->object = made.object;
    if (made.object) event_records_[made.object] = r;
    return made;
}

std::vector<NDK_LOGICAL_ADDRESS> LamResult::pages() {
    std::vector<NDK_LOGICAL_ADDRESS> out;
    auto* m = mapping();
    if (!m || !done.ok()) return out;
    size_t room = (storage.size() - offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray)) /
                  sizeof(NDK_LOGICAL_ADDRESS);
    for (ULONG i = 0; i < m->AdapterPageCount && i < room; ++i)
        out.push_back(m->AdapterPageArray[i]);
    return out;
}

LamResult Session::build_lam(MDL* mdl, SIZE_T length, ULONG buffer_size, bool with_buffer,
                             bool with_completion) {
    LamResult lam;
    lam.size_in = buffer_size;
    if (with_buffer)
        lam.storage.assign(std::max<size_t>(buffer_size, sizeof(NDK_LOGICAL_ADDRESS_MAPPING)),
                           std::byte{0xCD});
    // Out-parameters live on the heap: a build issued from a hook is finished after this
    // returns (finish_deferred), and the provider writes them then.
    struct Outputs {
        ULONG size;
        ULONG fbo = 0xFFFFFFFF;
    };
    auto out = std::make_shared<Outputs>(Outputs{buffer_size});
    ULONG& size = out->size;
    ULONG& fbo = out->fbo;
    lam.mdl = mdl;
    lam.mdl_snapshot = snapshot_mdl_chain(mdl);
    calls::BuildLam call{id(adapter_), model::view_mdl(mdl, length),
                         length,       with_completion,
                         with_buffer,  buffer_size};
    auto outputs = [out, mapping = lam.mapping(), room_bytes = lam.storage.size(),
                    with_buffer](Observed& o) {
        o.size_out = out->size;
        if (out->fbo != 0xFFFFFFFF) o.fbo_out = out->fbo;
        if (o.status == STATUS_SUCCESS && with_buffer && mapping) {
            size_t room = (room_bytes - offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray)) /
                          sizeof(NDK_LOGICAL_ADDRESS);
            for (ULONG i = 0; i < mapping->AdapterPageCount && i < room; ++i)
                o.lam_pages.push_back(static_cast<uint64_t>(mapping->AdapterPageArray[i].QuadPart));
        }
    };
    if (with_completion) {
        lam.done = request(
            call,
            [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
                return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkBuildLAM(
                    adapter_, mdl, length, done, ctx, lam.mapping(), &size, &fbo);
            },
            "NdkBuildLam", outputs);
        if (lam.done.final_status == STATUS_PENDING && !in_hook()) {
            // The callback never came: what the provider may still write stays alive (moving a
            // vector keeps its bytes where they are); the test inspects a copy of the buffer.
            auto buffer = std::make_shared<std::vector<std::byte>>(lam.storage);
            buffer->swap(lam.storage);
            std::lock_guard lock(outstanding_mutex_);
            outstanding_outputs_.push_back(std::move(buffer));
            outstanding_outputs_.push_back(out);
        }
    } else {
        InFlight flight(*this, call, {{adapter_, "adapter"}});
        lam.done.status = lam.done.final_status = table<NDK_ADAPTER_DISPATCH>(adapter_).NdkBuildLAM(
            adapter_, mdl, length, nullptr, nullptr, lam.mapping(), &size, &fbo);
        flight.returned(lam.done.status);
        Observed o;
        o.status = lam.done.status;
        outputs(o);
        std::lock_guard lock(oracle_mutex_);
        verdict_.merge(oracle_->apply(call, o).verdict);
    }
    lam.size_out = size;
    lam.fbo = fbo;
    if (lam.done.ok() && snapshot_mdl_chain(mdl) != lam.mdl_snapshot) {  // LAM-REL-02
        model::Verdict v;
        v.add(violation({"LAM-REL-02"}, "NdkBuildLam changed the MDL chain it was given"));
        report(std::move(v));
    }
    if (lam.done.ok()) {
        // The oracle made a LAM object; remember it by the mapping's address.
        std::lock_guard lock(oracle_mutex_);
        if (model::ObjectId newest = newest_lam(*oracle_)) remember(lam.mapping(), newest);
    }
    return lam;
}

void Session::release_lam(LamResult& lam) {
    if (!lam.mapping()) return;
    model::ObjectId lam_id = id(lam.mapping());
    {
        InFlight flight(*this, calls::ReleaseLam{id(adapter_), lam_id}, {{adapter_, "adapter"}});
        table<NDK_ADAPTER_DISPATCH>(adapter_).NdkReleaseLAM(adapter_, lam.mapping());
    }
    // LAM-REL-02: building and releasing leave the chain exactly as it was passed.
    if (lam.check_chain_on_release && lam.mdl && !lam.mdl_snapshot.empty() &&
        snapshot_mdl_chain(lam.mdl) != lam.mdl_snapshot) {
        model::Verdict v;
        v.add(violation({"LAM-REL-02"},
                        "after NdkReleaseLam the MDL chain differs from the one passed to "
                        "NdkBuildLam"));
        report(std::move(v));
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::ReleaseLam{id(adapter_), lam_id}, {}).verdict);
    ids_.erase(lam.mapping());
}

// ---- PD ----

Made<NDK_MR> Session::create_mr(NDK_PD* pd, bool fast_register) {
    return create<NDK_MR>(
        calls::CreateMr{id(pd), fast_register},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_MR** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateMr(pd, fast_register, done, ctx, out);
        },
        "NdkCreateMr", pd);
}

Made<NDK_MW> Session::create_mw(NDK_PD* pd) {
    return create<NDK_MW>(
        calls::CreateMw{id(pd)},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_MW** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateMw(pd, done, ctx, out);
        },
        "NdkCreateMw", pd);
}

Made<NDK_SRQ> Session::create_srq(NDK_PD* pd, ULONG depth, ULONG max_sge, ULONG threshold,
                                  bool with_notification) {
    EventRecord* r = new_event_record();
    auto made = create<NDK_SRQ>(
        calls::CreateSrq{id(pd), depth, max_sge, threshold, with_notification},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_SRQ** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateSrq(
                pd, depth, max_sge, threshold, with_notification ? on_srq_notification : nullptr, r,
                nullptr, done, ctx, out);
        },
        "NdkCreateSrq", pd);
    r->object = made.object;
    if (made.object) event_records_[made.object] = r;
    return made;
}

Made<NDK_QP> Session::create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                                void* qp_context, const QpShape& s) {
    require(receive_cq, "NdkCreateQp", "receive CQ");
    require(initiator_cq, "NdkCreateQp", "initiator CQ");
    return create<NDK_QP>(
        calls::CreateQp{id(pd), id(receive_cq), id(initiator_cq), context_of(qp_context),
                        s.receive_depth, s.initiator_depth, s.receive_sge, s.initiator_sge,
                        s.inline_size},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_QP** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateQp(
                pd, receive_cq, initiator_cq, qp_context, s.receive_depth, s.initiator_depth,
                s.receive_sge, s.initiator_sge, s.inline_size, done, ctx, out);
        },
        "NdkCreateQp", pd);
}

Made<NDK_QP> Session::create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                                         NDK_SRQ* srq, void* qp_context, const QpShape& s) {
    require(receive_cq, "NdkCreateQpWithSrq", "receive CQ");
    require(initiator_cq, "NdkCreateQpWithSrq", "initiator CQ");
    require(srq, "NdkCreateQpWithSrq", "SRQ");
    return create<NDK_QP>(
        calls::CreateQpWithSrq{id(pd), id(receive_cq), id(initiator_cq), id(srq),
                               context_of(qp_context), s.initiator_depth, s.initiator_sge,
                               s.inline_size},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_QP** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateQpWithSrq(
                pd, receive_cq, initiator_cq, srq, qp_context, s.initiator_depth, s.initiator_sge,
                s.inline_size, done, ctx, out);
        },
        "NdkCreateQpWithSrq", pd);
}

UINT32 Session::privileged_token(NDK_PD* pd) {
    UINT32 token = 0;
    {
        InFlight flight(*this, calls::GetPrivilegedMemoryRegionToken{id(pd)}, {{pd, "PD"}});
        table<NDK_PD_DISPATCH>(pd).NdkGetPrivilegedMemoryRegionToken(pd, &token);
    }
    Observed o;
    o.value = token;
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetPrivilegedMemoryRegionToken{id(pd)}, o).verdict);
    return token;
}

// ---- MR, MW ----

Done Session::register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags) {
    return request(
        calls::RegisterMr{id(mr), model::view_mdl(mdl, length), length, flags},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_MR_DISPATCH>(mr).NdkRegisterMr(mr, mdl, length, flags, done, ctx);
        },
        "NdkRegisterMr", {}, mr);
}

Done Session::deregister_mr(NDK_MR* mr) {
    return request(
        calls::DeregisterMr{id(mr)},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_MR_DISPATCH>(mr).NdkDeregisterMr(mr, done, ctx);
        },
        "NdkDeregisterMr", {}, mr);
}

Done Session::initialize_fast_register_mr(NDK_MR* mr, ULONG pages, bool remote_access) {
    return request(
        calls::InitializeFastRegisterMr{id(mr), pages, remote_access},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_MR_DISPATCH>(mr).NdkInitializeFastRegisterMr(mr, pages, remote_access,
                                                                          done, ctx);
        },
        "NdkInitializeFastRegisterMr", {}, mr);
}

UINT32 Session::local_token(NDK_MR* mr) {
    Observed o;
    {
        InFlight flight(*this, calls::GetLocalTokenFromMr{id(mr)}, {{mr, "MR"}});
        o.value = table<NDK_MR_DISPATCH>(mr).NdkGetLocalTokenFromMr(mr);
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetLocalTokenFromMr{id(mr)}, o).verdict);
    return o.value;
}

UINT32 Session::remote_token(NDK_MR* mr) {
    Observed o;
    {
        InFlight flight(*this, calls::GetRemoteTokenFromMr{id(mr)}, {{mr, "MR"}});
        o.value = table<NDK_MR_DISPATCH>(mr).NdkGetRemoteTokenFromMr(mr);
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetRemoteTokenFromMr{id(mr)}, o).verdict);
    return o.value;
}

UINT32 Session::remote_token(NDK_MW* mw) {
    Observed o;
    {
        InFlight flight(*this, calls::GetRemoteTokenFromMw{id(mw)}, {{mw, "MW"}});
        o.value = table<NDK_MW_DISPATCH>(mw).NdkGetRemoteTokenFromMw(mw);
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetRemoteTokenFromMw{id(mw)}, o).verdict);
    return o.value;
}

Registered Session::register_buffer(NDK_PD* pd, const platform::LockedBuffer& buffer, ULONG flags,
                                    size_t offset, size_t length) {
    Registered r;
    if (length == 0) length = buffer.size() - offset;
    auto made = create_mr(pd, false);
    r.mr = made.object;
    r.status = made.final_status;
    if (!r.mr) return r;
    r.chain = platform::describe(buffer, offset, length);
    Done d = register_mr(r.mr, r.chain.head(), length, flags);
    r.status = d.final_status;
    if (!d.ok()) return r;
    r.local_token = local_token(r.mr);
    r.remote_token = remote_token(r.mr);
    return r;
}

// ---- CQ ----

Done Session::resize_cq(NDK_CQ* cq, ULONG depth) {
    return request(
        calls::ResizeCq{id(cq), depth},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_CQ_DISPATCH>(cq).NdkResizeCq(cq, depth, done, ctx);
        },
        "NdkResizeCq", {}, cq);
}

void Session::arm_cq(NDK_CQ* cq, ULONG type) {
    InFlight flight(*this, calls::ArmCq{id(cq), type}, {{cq, "CQ"}});
    process_events();  // a notification already delivered consumed the previous arm
    {
        // The arm is recorded first: a notification may come before NdkArmCq returns.
        std::lock_guard lock(oracle_mutex_);
        verdict_.merge(oracle_->apply(calls::ArmCq{id(cq), type}, {}).verdict);
    }
    table<NDK_CQ_DISPATCH>(cq).NdkArmCq(cq, type);
}

NTSTATUS Session::control_cq_interrupt_moderation(NDK_CQ* cq, ULONG interval, ULONG count) {
    calls::ControlCqInterruptModeration call{id(cq), interval, count};
    InFlight flight(*this, call, {{cq, "CQ"}});
    NTSTATUS s = table<NDK_CQ_DISPATCH>(cq).NdkControlCqInterruptModeration(cq, interval, count);
    flight.returned(s);
    return post(call, s);
}

std::vector<NDK_RESULT_EX> Session::poll(NDK_CQ* cq, ULONG max, std::optional<bool> use_ex) {
    std::vector<NDK_RESULT_EX> results(max);
    bool ex = use_ex.value_or(NDKCT_VERSION_AT_LEAST(info_.Version, 1, 2));
    ULONG n;
    std::optional<InFlight> flight;
    flight.emplace(*this, calls::GetCqResults{id(cq), max, ex},
                   std::initializer_list<InFlight::Needed>{{cq, "CQ"}});
    if (ex) {
        n = table<NDK_CQ_DISPATCH>(cq).NdkGetCqResultsEx(cq, results.data(), max);
    } else {
        std::vector<NDK_RESULT> plain(max);
        n = table<NDK_CQ_DISPATCH>(cq).NdkGetCqResults(cq, plain.data(), max);
        for (ULONG i = 0; i < n && i < max; ++i) {
            results[i] = {};
            results[i].Status = plain[i].Status;
            results[i].BytesTransferred = plain[i].BytesTransferred;
            results[i].QPContext = plain[i].QPContext;
            results[i].RequestContext = plain[i].RequestContext;
        }
    }
    flight.reset();
    results.resize(std::min(n, max));
    process_events();
    Observed o;
    o.value = n;
    o.results = results;
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetCqResults{id(cq), max, ex}, o).verdict);
    return results;
}

std::vector<NDK_RESULT_EX> Session::drain(NDK_CQ* cq, size_t count, milliseconds timeout) {
    std::vector<NDK_RESULT_EX> all;
    // A wait of a second or more is for completions that must come (WR-10); a shorter one
    // probes that nothing more does.
    const bool owed = timeout >= milliseconds(1000);
    const milliseconds limit = owed ? patience(timeout) : stretched_for_link(timeout);
    in_flight::Wait waiting("NdkGetCqResults", "", owed ? "WR-10" : "",
                            "(polling the CQ for the completions of requests posted before)");
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (all.size() < count) {
        auto got = poll(cq, static_cast<ULONG>(std::min<size_t>(count - all.size(), 64)));
        all.insert(all.end(), got.begin(), got.end());
        if (all.size() >= count) break;
        if (std::chrono::steady_clock::now() > deadline) break;
        if (got.empty()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (owed && all.size() < count) {
        // s11frq: where every request still expected there is an NdkFastRegister, its page's
        // rule first (FR-ST-01, FR-DEFER-01/02).
        model::RuleIds rules;
        {
            std::lock_guard lock(oracle_mutex_);
            rules = oracle_->missing_entry_page_rules(id(cq));
        }
        rules.push_back("WR-10");
        owed_but_missing(std::move(rules), std::to_string(count - all.size()) + " of " +
                                               std::to_string(count) +
                                               " completions did not appear "
                                               "within " +
                                               std::to_string(limit.count()) + " ms");
    }
    return all;
}

size_t Session::notifications(NDK_CQ* cq) {
    process_events();
    auto it = event_records_.find(cq);
    if (it == event_records_.end()) return 0;
    std::lock_guard lock(it->second->mutex);
    return it->second->count;
}

// ---- SRQ ----

Done Session::modify_srq(NDK_SRQ* srq, ULONG depth, ULONG threshold) {
    return request(
        calls::ModifySrq{id(srq), depth, threshold},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_SRQ_DISPATCH>(srq).NdkModifySrq(srq, depth, threshold, done, ctx);
        },
        "NdkModifySrq", {}, srq);
}

NTSTATUS Session::srq_receive(NDK_SRQ* srq, void* context, std::span<const NDK_SGE> sgl) {
    calls::SrqReceive call{id(srq), context_of(context),
                           model::view_sgl(sgl.data(), static_cast<ULONG>(sgl.size()))};
    InFlight flight(*this, call, {{srq, "SRQ"}});
    NTSTATUS s = table<NDK_SRQ_DISPATCH>(srq).NdkSrqReceive(srq, context, sgl.data(),
                                                            static_cast<ULONG>(sgl.size()));
    flight.returned(s);
    return post(call, s);
}

// ---- QP ----
// The model call is built before the provider call: inline payloads are read then (SGE-06).

NTSTATUS Session::send(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl, ULONG flags) {
    ULONG n = static_cast<ULONG>(sgl.size());
    calls::Send call{id(qp), context_of(context), model::view_sgl(sgl.data(), n), flags,
                     flags & NDK_OP_FLAG_INLINE ? model::inline_payload(sgl.data(), n)
                                                : std::vector<std::byte>{}};
    InFlight flight(*this, call, {{qp, "QP"}});
    NTSTATUS s = table<NDK_QP_DISPATCH>(qp).NdkSend(qp, context, sgl.data(), n, flags);
    flight.returned(s);
    return post(call, s);
}

NTSTATUS Session::send_and_invalidate(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl,
                                      ULONG flags, UINT32 token) {
    ULONG n = static_cast<ULONG>(sgl.size());
    calls::SendAndInvalidate call{id(qp),
                                  context_of(context),
                                  model::view_sgl(sgl.data(), n),
                                  flags,
                                  token,
                                  flags & NDK_OP_FLAG_INLINE ? model::inline_payload(sgl.data(), n)
                                                             : std::vector<std::byte>{}};
    InFlight flight(*this, call, {{qp, "QP"}});
    NTSTATUS s =
        table<NDK_QP_DISPATCH>(qp).NdkSendAndInvalidate(qp, context, sgl.data(), n, flags, token);
    flight.returned(s);
    return post(call, s);
}

NTSTATUS Session::receive(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl) {
    ULONG n = static_cast<ULONG>(sgl.size());
    calls::Receive call{id(qp), context_of(context), model::view_sgl(sgl.data(), n)};
    InFlight flight(*this, call, {{qp, "QP"}});
    NTSTATUS s = table<NDK_QP_DISPATCH>(qp).NdkReceive(qp, context, sgl.data(), n);
    flight.returned(s);
    return post(call, s);
}

NTSTATUS Session::read(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl, UINT64 address,
                       UINT32 token, ULONG flags) {
    ULONG n = static_cast<ULONG>(sgl.size());
    calls::Read call{id(qp), context_of(context), model::view_sgl(sgl.data(), n), address, token,
                     flags};
    InFlight flight(*this, call, {{qp, "QP"}});
    NTSTATUS s =
        table<NDK_QP_DISPATCH>(qp).NdkRead(qp, context, sgl.data(), n, address, token, flags);
    flight.returned(s);
    return post(call, s);
}

NTSTATUS Session::write(NDK_QP* qp, void* context, std::span<const NDK_SGE> sgl, UINT64 address,
                        UINT32 token, ULONG flags) {
    ULONG n = static_cast<ULONG>(sgl.size());
    calls::Write call{id(qp),
                      context_of(context),
                      model::view_sgl(sgl.data(), n),
                      address,
                      token,
                      flags,
                      flags & NDK_OP_FLAG_INLINE ? model::inline_payload(sgl.data(), n)
                                                 : std::vector<std::byte>{}};
    InFlight flight(*this, call, {{qp, "QP"}});
    NTSTATUS s =
        table<NDK_QP_DISPATCH>(qp).NdkWrite(qp, context, sgl.data(), n, address, token, flags);
    flight.returned(s);
    return post(call, s);
}

NTSTATUS Session::fast_register(NDK_QP* qp, void* context, NDK_MR* mr,
                                std::span<const NDK_LOGICAL_ADDRESS> pages, ULONG fbo,
                                SIZE_T length, uint64_t base, ULONG flags) {
    calls::FastRegister call{id(qp), context_of(context), id(mr), {}, fbo, length, base, flags};
    for (const auto& page : pages)
        call.adapter_pages.push_back(static_cast<uint64_t>(page.QuadPart));
    InFlight flight(*this, call, {{qp, "QP"}, {mr, "MR"}});
    const auto started = std::chrono::steady_clock::now();
    NTSTATUS s = table<NDK_QP_DISPATCH>(qp).NdkFastRegister(
        qp, context, mr, static_cast<ULONG>(pages.size()), pages.data(), fbo, length,
        reinterpret_cast<PVOID>(base), flags);
    flight.returned(s);
    // FR-IRQL-01, GEN-IRQL-01: made inside a provider callback (a hook), it may not block.
    watch_hook_call(*this, options_.hook_call_watchdog, "NdkFastRegister", started);
    return post(call, s);
}

NTSTATUS Session::bind(NDK_QP* qp, void* context, NDK_MR* mr, NDK_MW* mw, uint64_t va,
                       SIZE_T length, ULONG flags) {
    calls::Bind call{id(qp), context_of(context), id(mr), id(mw), va, length, flags};
    InFlight flight(*this, call, {{qp, "QP"}, {mr, "MR"}, {mw, "MW"}});
    NTSTATUS s = table<NDK_QP_DISPATCH>(qp).NdkBind(qp, context, mr, mw,
                                                    reinterpret_cast<PVOID>(va), length, flags);
    flight.returned(s);
    return post(call, s);
}

NTSTATUS Session::invalidate(NDK_QP* qp, void* context, void* target, ULONG flags) {
    calls::Invalidate call{id(qp), context_of(context), id(target), flags};
    InFlight flight(*this, call, {{qp, "QP"}, {target, "MR or MW"}});
    NTSTATUS s = table<NDK_QP_DISPATCH>(qp).NdkInvalidate(
        qp, context, static_cast<NDK_OBJECT_HEADER*>(target), flags);
    flight.returned(s);
    return post(call, s);
}

void Session::flush(NDK_QP* qp) {
    {
        InFlight flight(*this, calls::Flush{id(qp)}, {{qp, "QP"}});
        table<NDK_QP_DISPATCH>(qp).NdkFlush(qp);
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::Flush{id(qp)}, {}).verdict);
}

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

template <typename Invoke>
NTSTATUS Session::start_async(const model::Call& call, Invoke invoke, const char* name, int kind,
                              std::unordered_map<const void*, PendingAsync>& pending,
                              const void* key) {
    InFlight flight(*this, call, {{key, "object"}});
    // The key is the object the call is on: the callback's target is set before the record is
    // published in callbacks_, where provider threads read it under the lock (a write after
    // publication raced with check_close_order, found by ThreadSanitizer).
    Callback* cb = new_callback(kind, name, key);
    const auto started = std::chrono::steady_clock::now();
    NTSTATUS s = invoke(cb);
    flight.returned(s);
    watch_hook_call(*this, options_.hook_call_watchdog, name, started);
    returned(cb, s);
    Observed o;
    o.status = s;
    std::lock_guard lock(oracle_mutex_);
    model::Applied a = oracle_->apply(call, o);
    verdict_.merge(std::move(a.verdict));
    pending[key] = {cb, a.pending, s, flight.valid, flight.rules};
    return s;
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
