// ndkct/platform/spin.hpp: a short wait without sleeping.
#pragma once

#include <chrono>

namespace ndkct::platform {

// A hint to the core that this is a spin-wait loop (x86 PAUSE, ARM YIELD); nothing elsewhere.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Spins for up to `most` (20 us unless said) until done() is true. For an event expected within
// microseconds from another thread it is cheaper than a condition variable's sleep and wake-up; the
// caller still waits properly afterwards if done() is false. It never yields the core: on a loaded
// machine sched_yield() hands it to another process for a whole time slice (4-10 ms measured on the
// shared 2-core machine), a hundred times the wait it was meant to bound. Keep `most` short: a
// speculative spin (a thread looking for work that may not come) burns the core the other
// thread needs on a busy machine.
template <typename Done>
void spin_until(Done done, std::chrono::microseconds most = std::chrono::microseconds(20)) {
    const auto until = std::chrono::steady_clock::now() + most;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (done()) return;
            cpu_relax();
        }
        if (std::chrono::steady_clock::now() >= until) return;
    }
}

}  // namespace ndkct::platform
