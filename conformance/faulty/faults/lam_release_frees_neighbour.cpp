// NdkReleaseLam frees one mapping too many: the vendor hands its translation table back as a
// range from the released mapping's first entry to the end of the next allocation (an
// off-by-one in the range's end), so the mapping built right after the released one, if it is
// still live, goes too. Its logical addresses reach nothing from then on, though the consumer never
// released it (LAM-REL-01: a LAM lives until NdkReleaseLam releases it; releasing one leaves the
// adapter's other LAMs as they were). The consumer's own later NdkReleaseLam of that mapping finds
// nothing and returns.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

// A mapping the reference built, as it was written into the consumer's buffer.
struct Mapping {
    const NDK_LOGICAL_ADDRESS_MAPPING* consumer = nullptr;  // the consumer's buffer (identity)
    std::vector<LONG64> pages;                              // a copy: ours to release with
    bool freed_with_neighbour = false;  // released in the reference by the fault
};

std::mutex g_mutex;
std::unordered_map<NDK_ADAPTER*, std::vector<Mapping>> g_built;  // per adapter, in build order

std::vector<LONG64> pages_of(const NDK_LOGICAL_ADDRESS_MAPPING* lam) {
    std::vector<LONG64> pages(lam->AdapterPageCount);
    for (ULONG i = 0; i < lam->AdapterPageCount; ++i)
        pages[i] = lam->AdapterPageArray[i].QuadPart;
    return pages;
}

void remember(NDK_ADAPTER* adapter, NDK_LOGICAL_ADDRESS_MAPPING* lam) {
    if (!lam || lam->AdapterPageCount == 0) return;
    std::lock_guard lock(g_mutex);
    g_built[adapter].push_back({lam, pages_of(lam)});
}

// A pended build is remembered when it completes successfully.
struct PendedBuild {
    NDK_FN_REQUEST_COMPLETION* completion;
    PVOID context;
    NDK_ADAPTER* adapter;
    NDK_LOGICAL_ADDRESS_MAPPING* lam;
};

VOID build_done(PVOID context, NTSTATUS status) {
    std::unique_ptr<PendedBuild> b(static_cast<PendedBuild*>(context));
    if (status == STATUS_SUCCESS) remember(b->adapter, b->lam);
    b->completion(b->context, status);
}

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    if (!completion)
        return base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size,
                                          fbo);
    auto* pended = new PendedBuild{completion, context, adapter, lam};
    NTSTATUS s =
        base().adapter.NdkBuildLAM(adapter, mdl, length, build_done, pended, lam, size, fbo);
    if (s == STATUS_PENDING) return s;  // build_done owns it
    delete pended;
    if (s == STATUS_SUCCESS) remember(adapter, lam);
    return s;
}

VOID release_lam(NDK_ADAPTER* adapter, NDK_LOGICAL_ADDRESS_MAPPING* lam) {
    if (!lam) return base().adapter.NdkReleaseLAM(adapter, lam);
    std::vector<LONG64> neighbour;
    {
        std::lock_guard lock(g_mutex);
        auto& built = g_built[adapter];
        auto pages = pages_of(lam);
        auto it = std::find_if(built.begin(), built.end(), [&](const Mapping& m) {
            return m.consumer == lam && m.pages == pages;
        });
        if (it != built.end()) {
            if (it->freed_with_neighbour) {  // already gone with the one before it
                built.erase(it);
                return;
            }
            auto next = std::find_if(std::next(it), built.end(),
                                     [](const Mapping& m) { return !m.freed_with_neighbour; });
            if (next != built.end()) {  // the fault: the next mapping goes too
                next->freed_with_neighbour = true;
                neighbour = next->pages;
            }
            built.erase(it);
        }
    }
    base().adapter.NdkReleaseLAM(adapter, lam);
    if (neighbour.empty()) return;
    // The reference finds a mapping by its page array: release the neighbour through a copy.
    std::vector<std::byte> storage(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(neighbour.size()));
    auto* copy = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(storage.data());
    copy->AdapterContext = nullptr;
    copy->AdapterPageCount = static_cast<ULONG>(neighbour.size());
    for (size_t i = 0; i < neighbour.size(); ++i)
        copy->AdapterPageArray[i].QuadPart = neighbour[i];
    base().adapter.NdkReleaseLAM(adapter, copy);
}

// A newly opened adapter starts with no mappings (one at the address of a closed one included).
void forget_mappings_of_new_adapter(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeAdapter) return;
    std::lock_guard lock(g_mutex);
    g_built.erase(reinterpret_cast<NDK_ADAPTER*>(object));
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
    t.adapter.NdkReleaseLAM = release_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkReleaseLam also releases the live mapping built right after the released one",
    ndkct::faulty::install, ndkct::faulty::forget_mappings_of_new_adapter);
