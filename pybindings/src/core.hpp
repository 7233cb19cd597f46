// pybindings/src/core.hpp: what the per-concept binding files share.
//
// The extension module `ndkct._ndkct` is a thin layer over the harness: a Core owns one
// conformance::Session (a provider's adapter, its arena, the oracle) plus the buffers and
// logical address mappings handed to Python. NDK objects cross into Python as handles (their
// addresses as integers); every handle coming back is checked against the objects this Core
// handed out and still holds open, so a closed or foreign object is a Python error, never a
// crash.
// The Pythonic object model (context managers, exceptions) is pure Python (ndkct/api.py).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ndkct/conformance/dispatch_trap.hpp"
#include "ndkct/conformance/session.hpp"
#include "ndkct/platform/arena.hpp"
#include "ndkct/platform/mdl.hpp"

namespace ndkct::python {

namespace py = pybind11;

// The NDK object kinds a handle can name.
enum class Kind { pd, cq, mr, mw, srq, qp, connector, listener, shared_endpoint };
const char* kind_name(Kind kind);

// A LockedBuffer handed to Python. Freed (and marked dead) when its adapter closes: its pages
// belong to the adapter's arena.
struct BufferState {
    platform::LockedBuffer buffer;
    bool alive = true;
};

// An NdkBuildLam result handed to Python, released at most once.
struct LamState {
    conformance::LamResult lam;
    std::shared_ptr<platform::MdlChain> chain;  // the MDLs it was built from live as long
    bool released = false;
};

struct EventHook;  // hooks.cpp: consumer code run inside an object's event callbacks

struct Core {
    std::string spec;
    std::string trace_path;  // the trace the session records into ("" when none)
    std::unique_ptr<conformance::Session> session;
    struct Entry {
        void* object;
        Kind kind;
    };
    std::unordered_map<uint64_t, Entry> live;  // open NDK objects by handle
    // Handles whose NdkCloseObject pended and has not been seen to complete: closed once only.
    std::unordered_set<uint64_t> closing;
    uint64_t next_handle = 1;
    std::vector<std::shared_ptr<BufferState>> buffers;
    std::vector<std::shared_ptr<LamState>> lams;
    // Chains a provider was given (NdkRegisterMr): they stay valid until the adapter closes.
    std::vector<std::shared_ptr<platform::MdlChain>> chains;
    // GEN-CREATE-05: once overwrite_dispatch() ran, the adapter and every object open or
    // handed out later has its Dispatch pointed at the harness's trap table.
    std::unique_ptr<conformance::DispatchTrap> trap;
    std::unordered_map<uint64_t, std::shared_ptr<EventHook>> hooks;  // by object handle

    conformance::Session& s();  // throws if closed
    bool closed() const { return !session; }
    // The object behind a handle, checked to be open and of one of the kinds.
    void* need(uint64_t handle, std::initializer_list<Kind> kinds, const char* what);
    template <typename T>
    T* need(uint64_t handle, Kind kind, const char* what) {
        return static_cast<T*>(need(handle, {kind}, what));
    }
    // A new handle for an object the provider handed out (0 for nullptr).
    uint64_t adopt(void* object, Kind kind);
    // Closes the objects the oracle does not track (a create it judged must fail, yet the
    // provider made the object), newest first: the Session's close_all() does not know them,
    // and their antecedents' closes would wait for them.
    void close_untracked();
    // Hands what the dispatch trap saw to the oracle (GEN-CREATE-05); with `remove`, restores
    // every Dispatch member and drops the trap (before the adapter closes).
    void report_trap(bool remove = false);
    // Closes every open object, releases the mappings, frees the buffers, closes the adapter.
    void close();
};

struct CoreDeleter {
    void operator()(Core* c) const;
};
using SessionClass = py::class_<Core, std::unique_ptr<Core, CoreDeleter>>;

// NTSTATUS as ndkct.Status (an IntEnum) when it has a name, else a plain int.
py::object status(NTSTATUS value);

// A locked buffer's Python face (class ndkct.Buffer).
struct Buffer {
    std::shared_ptr<BufferState> state;
    const platform::LockedBuffer& get() const;
};

// An MDL chain over a buffer (class ndkct.MdlChain).
struct Chain {
    std::shared_ptr<platform::MdlChain> chain;  // shared: registrations and mappings keep it
    std::shared_ptr<BufferState> buffer;
    size_t length = 0;  // bytes described
};

// The per-concept binding functions (one file each).
void bind_status(py::module_& m);     // status.cpp: Status, flags, NdkError names
void bind_oracle(py::module_& m);     // oracle.cpp: Verdict, Violation, catalog, profiles
void bind_memory(py::module_& m);     // memory.cpp: Buffer, MdlChain
void bind_providers(py::module_& m);  // providers.cpp: provider specs, the verbs provider
void bind_session(py::module_& m);    // session.cpp: Session (the harness), results
void bind_trace(py::module_& m);      // trace.cpp: trace files read and judged
void bind_hooks(SessionClass& cls);   // hooks.cpp: Session methods run inside callbacks
void drop_hooks(Core& core);          // hooks.cpp: releases and removes every event hook

// providers.cpp: makes "verbs" resolvable (loads libndkct_verbs_provider.so once).
void ensure_verbs_provider();

}  // namespace ndkct::python
