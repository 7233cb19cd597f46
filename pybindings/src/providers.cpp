// Provider specs ("model:seed=3", "lib:PATH", "verbs") and the verbs provider for Python.
//
// The reference provider is built in (the harness links it). The verbs provider is loaded from
// libndkct_verbs_provider.so on first use, so the module itself needs no libibverbs: the path
// is NDKCT_VERBS_PROVIDER when set, else the one this build produced (NDKCT_VERBS_PROVIDER_PATH).
#include <pybind11/stl.h>

#include <cstdlib>
#include <mutex>

#include "core.hpp"
#include "ndkct/conformance/provider_spec.hpp"
#include "ndkct/loader/provider_library.hpp"

#ifndef NDKCT_VERBS_PROVIDER_PATH
#define NDKCT_VERBS_PROVIDER_PATH ""
#endif

namespace ndkct::python {

namespace {

std::string verbs_provider_path() {
    if (const char* env = std::getenv("NDKCT_VERBS_PROVIDER"); env && *env) return env;
    return NDKCT_VERBS_PROVIDER_PATH;
}

}  // namespace

void ensure_verbs_provider() {
    static std::mutex mutex;
    static std::unique_ptr<loader::ProviderLibrary> library;
    std::lock_guard lock(mutex);
    if (library) return;
    std::string path = verbs_provider_path();
    if (path.empty())
        throw conformance::ProviderSpecError(
            "the verbs provider was not built here (no libibverbs/librdmacm development files); "
            "set NDKCT_VERBS_PROVIDER to a libndkct_verbs_provider.so");
    try {
        library = std::make_unique<loader::ProviderLibrary>(loader::ProviderLibrary::open(path));
    } catch (const loader::ProviderLoadError& error) {
        throw conformance::ProviderSpecError(std::string("verbs provider: ") + error.what());
    }
    conformance::register_builtin_provider("verbs", &library->entry_points());
}

void bind_providers(py::module_& m) {
    py::register_exception<conformance::ProviderSpecError>(m, "ProviderSpecError",
                                                           PyExc_ValueError);
    m.def(
        "parse_provider",
        [](const std::string& text) {
            auto specs = conformance::parse_provider_specs(text);
            if (specs.size() != 1)
                throw conformance::ProviderSpecError("provider '" + text +
                                                     "': name one provider, not a list");
            const auto& s = specs[0];
            py::dict d;
            d["text"] = s.text;
            d["kind"] = s.kind;
            d["path"] = s.path;
            d["device"] = s.device;
            d["profile"] = s.profile;
            d["seed"] = s.seed;
            d["label"] = s.label();
            return d;
        },
        py::arg("spec"),
        "Parses one provider spec (model[:seed=N][:profile=P], lib:PATH[:...], "
        "verbs[:device=NAME]) into a dict; ProviderSpecError names the bad part.");
    m.def("verbs_provider_path", &verbs_provider_path,
          "Where the verbs provider is loaded from (NDKCT_VERBS_PROVIDER, else this build's).");
}

}  // namespace ndkct::python
