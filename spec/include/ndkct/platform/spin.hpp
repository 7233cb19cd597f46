// ndkct/platform/spin.hpp: a short wait without sleeping.
#pragma once

#include <chrono>
#include <thread>

namespace ndkct::platform {

// Spins (yielding the core) for up to 50 us until done() is true. For an event expected within
// microseconds from another thread it is cheaper than a condition variable's sleep and wake-up;
// the caller still waits properly afterwards if done() is false.
template <typename Done>
void spin_until(Done done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (!done() && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
}

}  // namespace ndkct::platform
