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
#include <vector>

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

struct Core {
    std::string spec;
    std::unique_ptr<conformance::Session> session;
    struct Entry {
        void* object;
        Kind kind;
    };
    std::unordered_map<uint64_t, Entry> live;  // open NDK objects by handle
    uint64_t next_handle = 1;
    std::vector<std::shared_ptr<BufferState>> buffers;
    std::vector<std::shared_ptr<LamState>> lams;
    // Chains a provider was given (NdkRegisterMr): they stay valid until the adapter closes.
    std::vector<std::shared_ptr<platform::MdlChain>> chains;

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
    // Closes every open object, releases the mappings, frees the buffers, closes the adapter.
    void close();
};

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

// providers.cpp: makes "verbs" resolvable (loads libndkct_verbs_provider.so once).
void ensure_verbs_provider();

}  // namespace ndkct::python
