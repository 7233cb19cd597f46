// Fuzz target: a rule catalog file (spec/rules/catalog/*.json, `ndkct-spec check-catalog`).
// The loader must list every problem it finds (CatalogLoad::problems) and never throw, crash
// or loop, whatever the file holds. The input is one catalog file loaded beside the schemas and
// page list compiled into the build.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ndkct/spec/catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const ndkct::spec::CatalogContext context = ndkct::spec::builtin_catalog_context();
    ndkct::spec::CatalogSource file{"fuzz.json",
                                    std::string_view(reinterpret_cast<const char*>(data), size)};
    (void)ndkct::spec::load_catalog({&file, 1}, context);
    return 0;
}
