// CQ notifications reach the consumer from a worker thread the provider's close does not track:
// the reference's notification returns at once, so a CQ's close completes while the consumer's
// notification callback is still running (CLOSE-07).
#include <condition_variable>
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

// One worker for the process (leaked on purpose: it may still run at exit).
class Worker {
  public:
    Worker() {
        std::thread([this] { run(); }).detach();
    }
    void post(Notification n, NTSTATUS status) {
        {
            std::lock_guard lock(mutex_);
            queue_.push_back({n, status});
        }
        ready_.notify_one();
    }

  private:
    void run() {
        for (;;) {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [&] { return !queue_.empty(); });
            auto [n, status] = queue_.front();
            queue_.pop_front();
            lock.unlock();
            n.callback(n.context, status);
        }
    }
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<std::pair<Notification, NTSTATUS>> queue_;
};

Worker& worker() {
    static Worker* w = new Worker;
    return *w;
}

std::mutex g_mutex;
std::deque<Notification> g_notifications;  // one per CQ, for the process

void hand_off(void* context, NTSTATUS status) {
    worker().post(*static_cast<Notification*>(context), status);  // the fault: not waited for
}

NTSTATUS create_cq(NDK_ADAPTER* adapter, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK* notify,
                   PVOID notify_context, GROUP_AFFINITY* affinity, NDK_FN_CREATE_COMPLETION* done,
                   PVOID context, NDK_CQ** out) {
    if (!notify)
        return base().adapter.NdkCreateCq(adapter, depth, notify, notify_context, affinity, done,
                                          context, out);
    Notification* n;
    {
        std::lock_guard lock(g_mutex);
        n = &g_notifications.emplace_back(Notification{notify, notify_context});
    }
    return base().adapter.NdkCreateCq(adapter, depth, hand_off, n, affinity, done, context, out);
}

void install(Tables& t) {
    t.adapter.NdkCreateCq = create_cq;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("a CQ's close completes while its notification callback is still running",
                   ndkct::faulty::install);
