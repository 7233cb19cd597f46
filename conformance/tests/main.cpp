// The directed conformance tests' main: --provider=SPEC[,SPEC...] chooses the providers
// (default: NDKCT_PROVIDERS, else the reference provider under three seeds).
#include <cstring>
#include <iostream>

#include "conformance.hpp"

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--provider=", 11) == 0) {
            try {
                ndkct::conformance::providers_under_test() =
                    ndkct::conformance::parse_provider_specs(argv[i] + 11);
            } catch (const std::exception& error) {
                std::cerr << "ndkct: " << error.what() << "\n";
                return 2;
            }
        }
    }
    try {
        (void)ndkct::conformance::providers_under_test();
    } catch (const std::exception& error) {
        std::cerr << "ndkct: NDKCT_PROVIDERS: " << error.what() << "\n";
        return 2;
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
