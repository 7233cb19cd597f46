// Fuzz target: a profile file (spec/profiles, --profile FILE). The loader parses, checks the
// schema, applies defaults and flattens; the model reads its knobs. Any input must end in a
// Profile or a ProfileError naming the problem: never a crash, an exception of another kind,
// or memory growing with the square of the input (nesting, PR 18).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ndkct/model/readings.hpp"
#include "ndkct/spec/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        auto profile = ndkct::spec::load_profile(text, "fuzz.json");
        (void)ndkct::model::read_profile(profile);
    } catch (const ndkct::spec::ProfileError&) {
        // the documented outcome for bad input: an error that names the problem
    }
    return 0;
}
