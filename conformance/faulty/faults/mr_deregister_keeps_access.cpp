// NdkDeregisterMr completes at once but leaves the MR's translation entry, and so its tokens,
// valid: the vendor defers the slow invalidation command to the MR's next NdkRegisterMr or its
// close (batching it with the work that has to touch the entry anyway), though once
// NdkDeregisterMr has completed the MR's tokens must no longer give access to the region
// (RMR-DEREG-01). What the consumer sees of the MR otherwise is right: a second deregistration
// is refused, a new registration and the close work.
#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

enum class Entry { registered, kept };  // kept: deregistered for the consumer, live underneath
std::mutex g_mutex;
std::map<NDK_MR*, Entry> g_entries;  // the MRs whose NdkRegisterMr succeeded, as seen here

void set_entry(NDK_MR* mr, Entry e) {
    std::lock_guard lock(g_mutex);
    g_entries[mr] = e;
}

struct Registration {
    NDK_MR* mr;
    MDL* mdl;
    SIZE_T length;
    ULONG flags;
    NDK_FN_REQUEST_COMPLETION* completion;
    PVOID context;
};

// The reference's NdkRegisterMr completed: note a success, then tell the consumer.
void registered(PVOID forward, NTSTATUS status) {
    Registration r = *static_cast<Registration*>(forward);
    delete static_cast<Registration*>(forward);
    if (status == STATUS_SUCCESS) set_entry(r.mr, Entry::registered);
    r.completion(r.context, status);
}

NTSTATUS register_now(Registration* r) {
    const Registration copy = *r;
    NTSTATUS s = base().mr.NdkRegisterMr(copy.mr, copy.mdl, copy.length, copy.flags,
                                         copy.completion ? registered : nullptr, r);
    if (s == STATUS_PENDING) return s;  // registered() finishes it
    delete r;
    if (s == STATUS_SUCCESS) set_entry(copy.mr, Entry::registered);
    return s;
}

// The deferred invalidation, pended, completed: the registration the consumer asked for now
// runs (the consumer was told STATUS_PENDING, so an inline answer goes to its callback).
void invalidated_then_register(PVOID forward, NTSTATUS) {
    auto* r = static_cast<Registration*>(forward);
    NDK_FN_REQUEST_COMPLETION* completion = r->completion;
    PVOID context = r->context;
    NTSTATUS s = register_now(r);
    if (s != STATUS_PENDING) completion(context, s);
}

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    bool kept = false;
    {
        std::lock_guard lock(g_mutex);
        auto it = g_entries.find(mr);
        if (it != g_entries.end() && it->second == Entry::kept) {
            kept = true;
            g_entries.erase(it);
        }
    }
    auto* r = new Registration{mr, mdl, length, flags, completion, context};
    if (!kept) return register_now(r);
    // The deferred invalidation first: the reference's MR is still registered.
    if (!completion) {
        base().mr.NdkDeregisterMr(mr, nullptr, nullptr);
        return register_now(r);
    }
    NTSTATUS d = base().mr.NdkDeregisterMr(mr, invalidated_then_register, r);
    if (d == STATUS_PENDING) return STATUS_PENDING;
    return register_now(r);
}

NTSTATUS deregister_mr(NDK_MR* mr, NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        auto it = g_entries.find(mr);
        if (it != g_entries.end()) {
            // Deregistered already (for the consumer): refused as the reference refuses it.
            if (it->second == Entry::kept) return STATUS_INVALID_DEVICE_STATE;
            it->second = Entry::kept;  // the fault: the entry and its tokens stay valid
            return STATUS_SUCCESS;
        }
    }
    return base().mr.NdkDeregisterMr(mr, completion, context);  // not registered: its answer
}

NTSTATUS close_mr(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_entries.erase(reinterpret_cast<NDK_MR*>(object));
    }
    return base().mr.NdkCloseMr(object, completion, context);  // the close ends the entry too
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
    t.mr.NdkDeregisterMr = deregister_mr;
    t.mr.NdkCloseMr = close_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkDeregisterMr completes at once but the MR's tokens stay valid until its "
    "next registration or close",
    ndkct::faulty::install);
