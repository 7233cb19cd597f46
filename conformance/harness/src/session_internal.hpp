// What session.cpp and the files of the Session's NDK calls share (session_adapter.cpp,
// session_memory.cpp, session_queues.cpp, session_connections.cpp): the callback records, a
// call's in-flight record, the trampolines the provider calls, and the templates every create
// and request goes through. Internal to conformance/harness/src.
#pragma once

#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "ndkct/conformance/in_flight.hpp"
#include "ndkct/conformance/observation.hpp"
#include "ndkct/conformance/session.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::conformance {

namespace calls = model::calls;
using model::context_of;
using model::Observed;

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

namespace session_detail {

inline model::Violation violation(model::RuleIds rules, std::string message) {
    return {std::move(rules), std::move(message), false};
}

inline NDK_OBJECT_TYPE type_of(const NDK_PD*) {
    return NdkObjectTypePd;
}
inline NDK_OBJECT_TYPE type_of(const NDK_CQ*) {
    return NdkObjectTypeCq;
}
inline NDK_OBJECT_TYPE type_of(const NDK_MR*) {
    return NdkObjectTypeMr;
}
inline NDK_OBJECT_TYPE type_of(const NDK_MW*) {
    return NdkObjectTypeMw;
}
inline NDK_OBJECT_TYPE type_of(const NDK_QP*) {
    return NdkObjectTypeQp;
}
inline NDK_OBJECT_TYPE type_of(const NDK_SRQ*) {
    return NdkObjectTypeSrq;
}
inline NDK_OBJECT_TYPE type_of(const NDK_CONNECTOR*) {
    return NdkObjectTypeConnector;
}
inline NDK_OBJECT_TYPE type_of(const NDK_LISTENER*) {
    return NdkObjectTypeListener;
}
inline NDK_OBJECT_TYPE type_of(const NDK_SHARED_ENDPOINT*) {
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

// Defined in session.cpp (what they do is said there).
void watch_hook_call(Session& session, milliseconds watchdog, const char* name,
                     std::chrono::steady_clock::time_point started);
const void* dispatch_of(const void* object);
void require(const void* object, const char* function, const char* role);
std::vector<std::byte> snapshot_mdl_chain(const MDL* mdl);
sockaddr_in ipv4(uint16_t port);
milliseconds stretched_for_link(milliseconds t);

template <typename Table>
const Table& table(const void* object) {
    return *static_cast<const Table*>(dispatch_of(object));
}

// The trampolines the provider calls (session.cpp).
void on_request(void* context, NTSTATUS status);
void on_create(void* context, NTSTATUS status, NDK_OBJECT_HEADER* object);
void on_close(void* context);
void on_cq_notification(void* context, NTSTATUS status);
void on_srq_notification(void* context, NTSTATUS status);
void on_connect_event(void* context, NDK_CONNECTOR* connector);
void on_disconnect(void* context);
void on_disconnect_ex(void* context, ULONG reason);

}  // namespace session_detail

// The session files' own helpers, unqualified (this header is theirs alone).
using namespace session_detail;

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

}  // namespace ndkct::conformance
