// The extension module ndkct._ndkct: one binding file per concept (status.cpp, oracle.cpp,
// memory.cpp, providers.cpp, session.cpp, hooks.cpp, trace.cpp). The Pythonic layer is the ndkct
// package around it.
#include "core.hpp"

PYBIND11_MODULE(_ndkct, m) {
    m.doc() =
        "ndkct's harness, oracle and providers for Python (low layer; use the ndkct package).";
    ndkct::python::bind_status(m);
    ndkct::python::bind_oracle(m);
    ndkct::python::bind_memory(m);
    ndkct::python::bind_providers(m);
    ndkct::python::bind_session(m);
    ndkct::python::bind_trace(m);
}
