// Shared by the faults whose call waits for the provider's callback thread to go idle (no CQ
// notification running) before it does its work: called from inside a notification callback,
// where a kernel consumer runs at DISPATCH_LEVEL, it waits for itself, here until a 1.5 s give-up,
// half again the harness's 1 s watchdog (GEN-IRQL-01 and each page's *-IRQL-01: no blocking at
// DISPATCH_LEVEL). A fault installs track_notifications() and calls wait_for_callback_thread()
// first thing in the function it breaks.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include "faulty.hpp"

namespace ndkct::faulty::callback_thread {

struct Notification {
    NDK_FN_CQ_NOTIFICATION_CALLBACK* callback;
    void* context;
};

inline std::mutex g_mutex;
inline std::deque<Notification> g_notifications;  // one per CQ, for the process
inline std::atomic<int> g_running{0};             // notification callbacks now running

inline void notify(void* context, NTSTATUS status) {
    const auto* n = static_cast<const Notification*>(context);
    ++g_running;
    n->callback(n->context, status);
    --g_running;
}

inline NTSTATUS create_cq(NDK_ADAPTER* adapter, ULONG depth,
                          NDK_FN_CQ_NOTIFICATION_CALLBACK* callback, PVOID callback_context,
                          GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION* done, PVOID context,
                          NDK_CQ** out) {
    if (!callback)
        return base().adapter.NdkCreateCq(adapter, depth, callback, callback_context, affinity,
                                          done, context, out);
    Notification* n;
    {
        std::lock_guard lock(g_mutex);
        n = &g_notifications.emplace_back(Notification{callback, callback_context});
    }
    return base().adapter.NdkCreateCq(adapter, depth, notify, n, affinity, done, context, out);
}

// Counts the notification callbacks running (the CQs' callbacks go through notify()).
inline void track_notifications(Tables& t) {
    t.adapter.NdkCreateCq = create_cq;
}

// The fault: waits for the callback thread, which may be this very thread.
inline void wait_for_callback_thread() {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    while (g_running > 0 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace ndkct::faulty::callback_thread
