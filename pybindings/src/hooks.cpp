// Consumer code inside the provider's event callbacks, for Python: a hook on an object's event
// callbacks (a CQ notification, a connect event) that stays there until released, and makes NDK
// calls there.
//
// A kernel consumer's callbacks run at DISPATCH_LEVEL: the calls it makes there may not block
// (GEN-IRQL-01: the Session times every call made in a hook), and an object's close must wait
// for its running event callback (CLOSE-07: the Session checks every close). The hook runs on the
// provider's thread, in C++ only (it never takes the GIL: the Python thread waiting for it may hold
// it). The calls it makes go through the Session, judged as usual, and never wait there: one that
// pends is finished by finish_deferred() on the Python thread.
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::python {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

// One NDK call to make inside the callback, its objects resolved on the Python thread.
struct InCall {
    std::string name;  // the Session method
    void* object = nullptr;
    void* second = nullptr;  // create_qp: the CQ
    std::shared_ptr<platform::MdlChain> chain;
    size_t length = 0;
    ULONG flags = 0;
    ULONG pages = 0;
    bool remote = false;
    std::shared_ptr<LamState> lam;  // build_lam: its result, kept by the Core (released at close)
    // fast_register (FR-IRQL-01): object is the QP, second the MR.
    uint64_t context = 0;
    std::vector<NDK_LOGICAL_ADDRESS> page_list;
    ULONG fbo = 0;
    uint64_t base = 0;
};

struct InResult {
    std::string call;  // the NDK function
    NTSTATUS status = STATUS_PENDING;
    milliseconds took{0};
    void* made = nullptr;
    Kind kind = Kind::mr;
};

}  // namespace

struct EventHook {
    void* object = nullptr;
    milliseconds hold{0};  // how long the callback waits for release_hook()
    std::vector<InCall> calls;
    std::mutex mutex;
    std::condition_variable changed;
    bool entered = false, released = false, done = false;
    std::vector<InResult> results;  // written by the hook before `done`
    std::atomic<bool> fired{false};
};

namespace {

// The NDK function a Session method calls.
const char* ndk_name(const std::string& call) {
    if (call == "register_mr") return "NdkRegisterMr";
    if (call == "initialize_fast_register_mr") return "NdkInitializeFastRegisterMr";
    if (call == "create_qp") return "NdkCreateQp";
    if (call == "build_lam") return "NdkBuildLam";
    if (call == "fast_register") return "NdkFastRegister";
    return "NdkCreateMr";
}

// On the provider's thread: the calls, each timed.
void run_calls(conformance::Session& s, EventHook& h) {
    for (const InCall& c : h.calls) {
        InResult r;
        r.call = ndk_name(c.name);
        auto t0 = Clock::now();
        if (c.name == "register_mr") {
            r.status =
                s.register_mr(static_cast<NDK_MR*>(c.object), c.chain->head(), c.length, c.flags)
                    .status;
        } else if (c.name == "initialize_fast_register_mr") {
            r.status =
                s.initialize_fast_register_mr(static_cast<NDK_MR*>(c.object), c.pages, c.remote)
                    .status;
        } else if (c.name == "fast_register") {
            r.status = s.fast_register(
                static_cast<NDK_QP*>(c.object), reinterpret_cast<void*>(c.context),
                static_cast<NDK_MR*>(c.second), c.page_list, c.fbo, c.length, c.base, c.flags);
        } else if (c.name == "create_qp") {
            static int qp_context;
            auto* cq = static_cast<NDK_CQ*>(c.second);
            auto made = s.create_qp(static_cast<NDK_PD*>(c.object), cq, cq, &qp_context,
                                    conformance::QpShape{});
            r.status = made.status;
            r.made = made.object;
            r.kind = Kind::qp;
        } else if (c.name == "build_lam") {  // LAM-IRQL-01; a build that pends finishes later
            c.lam->lam = s.build_lam(c.chain->head(), c.length, c.lam->lam.size_in);
            r.status = c.lam->lam.done.status;
        } else {  // create_mr
            auto made = s.create_mr(static_cast<NDK_PD*>(c.object), c.remote);
            r.status = made.status;
            r.made = made.object;
            r.kind = Kind::mr;
        }
        r.took = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
        h.results.push_back(r);
    }
}

EventHook& hook_of(Core& c, uint64_t object) {
    auto it = c.hooks.find(object);
    if (it == c.hooks.end()) throw py::value_error("no hook on this object");
    return *it->second;
}

InCall parse_call(Core& c, const py::tuple& t) {
    if (t.size() < 2) throw py::value_error("a call is (name, object, ...)");
    InCall call;
    call.name = t[0].cast<std::string>();
    if (call.name == "build_lam" && t.size() == 2) {  // the mapping buffer the pages need
        auto& chain = t[1].cast<Chain&>();
        if (!chain.buffer || !chain.buffer->alive)
            throw py::value_error("the chain's buffer is gone: its adapter was closed");
        c.chains.push_back(chain.chain);
        call.chain = chain.chain;
        call.length = chain.length;
        call.lam = std::make_shared<LamState>();
        call.lam->chain = chain.chain;
        size_t pages = 0;
        if (const MDL* mdl = chain.chain->head()) {
            size_t offset = reinterpret_cast<uint64_t>(MmGetMdlVirtualAddress(mdl)) % PAGE_SIZE;
            pages = (offset + chain.length + PAGE_SIZE - 1) / PAGE_SIZE;
        }
        call.lam->lam.size_in = static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages));
        c.lams.push_back(call.lam);
        return call;
    }
    uint64_t h = t[1].cast<uint64_t>();
    if (call.name == "register_mr" && t.size() == 4) {
        call.object = c.need(h, {Kind::mr}, "mr");
        auto& chain = t[2].cast<Chain&>();
        if (!chain.buffer || !chain.buffer->alive)
            throw py::value_error("the chain's buffer is gone: its adapter was closed");
        c.chains.push_back(chain.chain);
        call.chain = chain.chain;
        call.length = chain.length;
        call.flags = t[3].cast<ULONG>();
    } else if (call.name == "initialize_fast_register_mr" && t.size() == 4) {
        call.object = c.need(h, {Kind::mr}, "mr");
        call.pages = t[2].cast<ULONG>();
        call.remote = t[3].cast<bool>();
    } else if (call.name == "create_qp" && t.size() == 3) {
        call.object = c.need(h, {Kind::pd}, "pd");
        call.second = c.need(t[2].cast<uint64_t>(), {Kind::cq}, "cq");
    } else if (call.name == "create_mr" && t.size() == 3) {
        call.object = c.need(h, {Kind::pd}, "pd");
        call.remote = t[2].cast<bool>();  // fast register
    } else if (call.name == "fast_register" && t.size() == 9) {
        call.object = c.need(h, {Kind::qp}, "qp");
        call.context = t[2].cast<uint64_t>();
        call.second = c.need(t[3].cast<uint64_t>(), {Kind::mr}, "mr");
        for (uint64_t page : t[4].cast<std::vector<uint64_t>>()) {
            NDK_LOGICAL_ADDRESS a{};
            a.QuadPart = static_cast<LONG64>(page);
            call.page_list.push_back(a);
        }
        call.fbo = t[5].cast<ULONG>();
        call.length = t[6].cast<size_t>();
        call.base = t[7].cast<uint64_t>();
        call.flags = t[8].cast<ULONG>();
    } else {
        throw py::value_error(
            "('" + call.name + "' with " + std::to_string(t.size() - 1) +
            " arguments) is not a call this hook can make; calls inside a callback: "
            "('register_mr', mr, chain, flags), "
            "('initialize_fast_register_mr', mr, pages, remote_access), ('create_qp', pd, cq), "
            "('create_mr', pd, fast_register), ('build_lam', chain), ('fast_register', qp, "
            "context, mr, pages, fbo, length, base_virtual_address, flags)");
    }
    return call;
}

}  // namespace

void drop_hooks(Core& c) {  // before the objects close: a held callback would hold them
    if (!c.session) return;
    for (auto& [handle, hook] : c.hooks) {
        {
            std::lock_guard lock(hook->mutex);
            hook->released = true;  // a held callback goes back to the provider now
        }
        hook->changed.notify_all();
        c.session->hook_events(hook->object, nullptr);
    }
    c.hooks.clear();
}

void bind_hooks(SessionClass& cls) {
    cls.def(
           "hook_events",
           [](Core& c, uint64_t object, const std::vector<py::tuple>& calls, int64_t hold_ms) {
               void* p =
                   c.need(object, {Kind::cq, Kind::srq, Kind::listener, Kind::connector}, "object");
               auto hook = std::make_shared<EventHook>();
               hook->object = p;
               hook->hold = milliseconds(hold_ms);
               for (const auto& t : calls)
                   hook->calls.push_back(parse_call(c, t));
               conformance::Session* s = &c.s();
               s->hook_events(p, [hook, s] {
                   if (hook->fired.exchange(true)) return;  // the first event only
                   std::unique_lock lock(hook->mutex);
                   hook->entered = true;
                   hook->changed.notify_all();
                   // Held until the Python thread says go (the harness's wait, not the
                   // provider's): it judges what caused this event first, or closes the object
                   // while its callback runs.
                   hook->changed.wait_for(lock, hook->hold, [&] { return hook->released; });
                   lock.unlock();
                   run_calls(*s, *hook);
                   lock.lock();
                   hook->done = true;
                   hook->changed.notify_all();
               });
               c.hooks[object] = hook;
           },
           py::arg("object"), py::arg("calls") = std::vector<py::tuple>{},
           py::arg("hold_ms") = 5000,
           "Runs consumer code inside the object's next event callback (a CQ or SRQ "
           "notification, a connect event, a disconnect), on the provider's thread: the callback "
           "is held until release_hook() (at most hold_ms), then makes the NDK `calls` (tuples: "
           "('register_mr', mr, chain, flags), ('initialize_fast_register_mr', mr, pages, "
           "remote_access), ('create_qp', pd, cq), ('create_mr', pd, fast_register), "
           "('build_lam', chain): the chain's bytes, into a buffer of the size they need, "
           "('fast_register', qp, context, mr, pages, fbo, length, base_virtual_address, "
           "flags)).")
        .def(
            "release_hook",
            [](Core& c, uint64_t object) {
                EventHook& h = hook_of(c, object);
                std::lock_guard lock(h.mutex);
                h.released = true;
                h.changed.notify_all();
            },
            py::arg("object"), "Lets the hook's calls go: what caused the event has been judged.")
        .def(
            "wait_hook",
            [](Core& c, uint64_t object, const std::string& until, int64_t timeout_ms) {
                EventHook& h = hook_of(c, object);
                bool done_wanted = until == "done";
                if (!done_wanted && until != "entered")
                    throw py::value_error("until: 'entered' or 'done'");
                py::gil_scoped_release unlocked;  // nothing below needs Python
                std::unique_lock lock(h.mutex);
                return h.changed.wait_for(lock, milliseconds(timeout_ms),
                                          [&] { return done_wanted ? h.done : h.entered; });
            },
            py::arg("object"), py::arg("until") = "done", py::arg("timeout_ms") = 5000,
            "Waits until the hook entered the callback (or finished); False after the timeout.")
        .def(
            "unhook_events",
            [](Core& c, uint64_t object) {
                auto it = c.hooks.find(object);
                if (it == c.hooks.end()) throw py::value_error("no hook on this object");
                auto hook = it->second;
                c.s().hook_events(hook->object, nullptr);
                c.hooks.erase(it);
                py::list out;
                std::unique_lock lock(hook->mutex);
                if (!hook->done) return out;  // never ran, or still running: nothing to say
                // GEN-IRQL-01: the Session itself reports a call that blocked in the hook.
                for (const InResult& r : hook->results) {
                    uint64_t made = r.made ? c.adopt(r.made, r.kind) : 0;
                    out.append(py::make_tuple(r.call, status(r.status), r.took.count(),
                                              made ? py::object(py::int_(made)) : py::none()));
                }
                return out;
            },
            py::arg("object"),
            "Removes the hook; returns (NDK call, status it returned, ms it took, object handle "
            "or None) for each call the hook made. (A call that blocked inside the callback is "
            "the Session's verdict, GEN-IRQL-01.)")
        .def(
            "finish_deferred",
            [](Core& c) {
                py::list out;
                for (const conformance::Deferred& d : c.s().finish_deferred()) {
                    // A create that pended inside the callback: its object is adopted here,
                    // as the kind its call makes.
                    Kind kind = d.name == "NdkCreateQp" ? Kind::qp : Kind::mr;
                    uint64_t made = d.object ? c.adopt(d.object, kind) : 0;
                    out.append(py::make_tuple(d.name, status(d.final_status),
                                              made ? py::object(py::int_(made)) : py::none()));
                }
                return out;
            },
            "Waits for the calls made inside callbacks that pended: (NDK call, final status, "
            "object handle or None) each.");
}

}  // namespace ndkct::python
