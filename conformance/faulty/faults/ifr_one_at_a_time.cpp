// NdkInitializeFastRegisterMr programs the MR's translation table through one firmware command
// slot, completed on the provider's worker (STATUS_PENDING, then RequestCompletion a moment
// later); while one initialization holds the slot another MR's is refused as busy with
// STATUS_INVALID_DEVICE_STATE, where initializations of different MRs may be issued back to back,
// each completing on its own (IFR-CONC-01).
#include <chrono>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
int g_outstanding = 0;                                // initializations holding the command slot
unsigned g_adapter = 0;                               // which adapter opening the slot belongs to
std::unordered_map<const NDK_MR*, int> g_unreported;  // initializations not yet reported, by MR

struct Forward {
    NDK_MR* mr;
    NDK_FN_REQUEST_COMPLETION* completion;
    void* context;
    unsigned adapter;
};

void release_slot_and_complete(Forward f, NTSTATUS status) {
    {
        std::lock_guard lock(g_mutex);
        if (f.adapter == g_adapter) --g_outstanding;
    }
    f.completion(f.context, status);
    std::lock_guard lock(g_mutex);
    if (--g_unreported[f.mr] <= 0) g_unreported.erase(f.mr);
}

// The worker: the firmware command takes a moment.
void complete_later(Forward f, NTSTATUS status) {
    std::thread([f, status] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        release_slot_and_complete(f, status);
    }).detach();
}

void on_done(void* forward, NTSTATUS status) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    complete_later(f, status);
}

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* completion,
                    PVOID context) {
    if (!completion)
        return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, completion, context);
    {
        std::lock_guard lock(g_mutex);
        if (g_outstanding > 0) return STATUS_INVALID_DEVICE_STATE;  // the fault
        ++g_outstanding;
    }
    unsigned adapter;
    {
        std::lock_guard lock(g_mutex);
        adapter = g_adapter;
    }
    {
        std::lock_guard lock(g_mutex);
        ++g_unreported[mr];
    }
    auto* forward = new Forward{mr, completion, context, adapter};
    NTSTATUS s = base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, on_done, forward);
    if (s == STATUS_PENDING) return s;
    Forward f = *forward;
    delete forward;
    if (s != STATUS_SUCCESS) {
        std::lock_guard lock(g_mutex);
        if (f.adapter == g_adapter) --g_outstanding;
        if (--g_unreported[mr] <= 0) g_unreported.erase(mr);
        return s;
    }
    complete_later(f, s);  // finished at once: reported from the worker all the same
    return STATUS_PENDING;
}

// The MR's close waits (a moment: the worker's 20 ms) until its initializations were reported.
NTSTATUS close_mr(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* completion, PVOID context) {
    const auto* mr = reinterpret_cast<const NDK_MR*>(object);
    auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (std::chrono::steady_clock::now() < give_up) {
        {
            std::lock_guard lock(g_mutex);
            if (!g_unreported.contains(mr)) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return base().mr.NdkCloseMr(object, completion, context);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.mr.NdkCloseMr = close_mr;
}

// A newly opened adapter has its command slot free (one left held by an adapter closed with an
// initialization outstanding stays with that adapter).
void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeAdapter) return;
    std::lock_guard lock(g_mutex);
    ++g_adapter;
    g_outstanding = 0;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkInitializeFastRegisterMr refuses a second MR's initialization while one is pending",
    ndkct::faulty::install, ndkct::faulty::on_object);
