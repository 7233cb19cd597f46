// The main of a fuzz target built without libFuzzer: runs every file named on the command line
// (and every file inside every folder named) through LLVMFuzzerTestOneInput once, so that the
// checked-in seed corpus and regression inputs are tested by every build (ctest fuzz.*.replay).
// A crash, a sanitizer report or an uncaught exception ends the run as it would under libFuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool run_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
        return false;
    }
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // A copy of exactly the input's size, as libFuzzer gives it: a read past the end is a finding.
    std::vector<uint8_t> input(bytes.begin(), bytes.end());
    static uint8_t empty;
    LLVMFuzzerTestOneInput(input.empty() ? &empty : input.data(), input.size());
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    size_t count = 0;
    bool ok = true;
    for (int i = 1; i < argc; ++i) {
        std::filesystem::path arg(argv[i]);
        std::error_code error;
        if (std::filesystem::is_directory(arg, error)) {
            std::vector<std::filesystem::path> files;
            for (const auto& entry : std::filesystem::recursive_directory_iterator(arg))
                if (entry.is_regular_file()) files.push_back(entry.path());
            std::sort(files.begin(), files.end());
            for (const auto& file : files) {
                ok = run_file(file) && ok;
                ++count;
            }
        } else {
            ok = run_file(arg) && ok;
            ++count;
        }
    }
    std::printf("replay: %zu inputs ran without a finding\n", count);
    return ok ? 0 : 1;
}
