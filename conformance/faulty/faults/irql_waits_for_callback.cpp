// NdkRegisterMr waits for the provider's callback thread to go idle (no CQ notification
// running) before it registers. Called from inside a notification callback, where a kernel
// consumer runs at DISPATCH_LEVEL, it waits for itself: here until a 1.5 s give-up, half again
// the harness's 1 s watchdog (GEN-IRQL-01: no blocking at DISPATCH_LEVEL).
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Notification {
    NDK_FN_CQ_NOTIFICATION_CALLBACK* callback;
    void* context;
};

std::mutex g_mutex;
std::deque<Notification> g_notifications;  // one per CQ, for the process
std::atomic<int> g_running{0};             // notification callbacks now running

void notify(void* context, NTSTATUS status) {
    const auto* n = static_cast<const Notification*>(context);
    ++g_running;
    n->callback(n->context, status);
    --g_running;
}

NTSTATUS create_cq(NDK_ADAPTER* adapter, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK* callback,
                   PVOID callback_context, GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION* done,
                   PVOID context, NDK_CQ** out) {
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

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    // The fault: waits for the callback thread, which may be this very thread.
    auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    while (g_running > 0 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.adapter.NdkCreateCq = create_cq;
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr waits for the callback thread, even when called from it",
                   ndkct::faulty::install);
