// Shared by the NdkBuildLam faults that leak mapping resources (LAM-ERR-01, LAM-ST-03). The
// vendor's adapter has a translation table of TableEntries entries, one per mapped page. A
// request takes its range's entries before building the page list and gives them back when it
// fails; a mapping's entries come back at its NdkReleaseLam. A request the table has no room
// for is refused with STATUS_INSUFFICIENT_RESOURCES (inline, either form being allowed). The
// fault (Leak) is a path that does not give entries back:
//   failed_request:     a request that fails after taking its entries (a buffer too small for
//                       the page list, say) returns without freeing them (LAM-ERR-01);
//   resource_shortfall: a request too large for what is left takes entries one at a time until
//                       the table runs out, then fails without giving them back (LAM-ST-03).
// Either way the leaked entries are gone for the adapter's life, so requests the table had room
// for are later refused with STATUS_INSUFFICIENT_RESOURCES.
#pragma once
#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "faulty.hpp"

namespace ndkct::faulty {

enum class LamLeak { failed_request, resource_shortfall };

template <LamLeak Leak, ULONG TableEntries>
struct LamLeakFault {
    struct Table {
        ULONG in_use = 0;  // entries of live mappings and of requests under way
        ULONG leaked = 0;  // entries the fault never gave back
    };
    struct Pended {
        NDK_FN_REQUEST_COMPLETION* completion;
        PVOID context;
        NDK_ADAPTER* adapter;
        ULONG taken;
        NDK_LOGICAL_ADDRESS_MAPPING* lam;
    };
    static inline std::mutex lock;
    static inline std::unordered_map<NDK_ADAPTER*, Table> tables;

    static ULONG entries_for(const MDL* mdl, SIZE_T length) {
        if (!mdl) return 0;
        return static_cast<ULONG>((MmGetMdlByteOffset(mdl) + length + PAGE_SIZE - 1) / PAGE_SIZE);
    }

    // Takes `entries` of the adapter's table; false when they are not there.
    static bool take(NDK_ADAPTER* adapter, ULONG entries) {
        std::lock_guard guard(lock);
        Table& t = tables[adapter];
        const ULONG free = TableEntries - std::min(TableEntries, t.in_use + t.leaked);
        if (entries <= free) {
            t.in_use += entries;
            return true;
        }
        if constexpr (Leak == LamLeak::resource_shortfall) t.leaked += free;  // the fault
        return false;
    }

    // The request that took `taken` entries finished with `status`.
    static void finish(NDK_ADAPTER* adapter, ULONG taken, NTSTATUS status,
                       const NDK_LOGICAL_ADDRESS_MAPPING* lam) {
        std::lock_guard guard(lock);
        Table& t = tables[adapter];
        t.in_use -= std::min(t.in_use, taken);
        if (status == STATUS_SUCCESS) {
            t.in_use += lam ? lam->AdapterPageCount : taken;  // the mapping keeps its entries
            return;
        }
        if constexpr (Leak == LamLeak::failed_request) t.leaked += taken;  // the fault
    }

    static void on_done(PVOID ours, NTSTATUS status) {
        Pended* p = static_cast<Pended*>(ours);
        Pended copy = *p;
        delete p;
        finish(copy.adapter, copy.taken, status, copy.lam);
        copy.completion(copy.context, status);
    }

    static NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                              NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                              NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
        const ULONG taken = entries_for(mdl, length);
        if (!take(adapter, taken)) return STATUS_INSUFFICIENT_RESOURCES;
        if (!completion) {
            NTSTATUS status = base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context,
                                                         lam, size, fbo);
            finish(adapter, taken, status, lam);
            return status;
        }
        auto* ours = new Pended{completion, context, adapter, taken, lam};
        NTSTATUS status =
            base().adapter.NdkBuildLAM(adapter, mdl, length, on_done, ours, lam, size, fbo);
        if (status != STATUS_PENDING) {
            delete ours;
            finish(adapter, taken, status, lam);
        }
        return status;
    }

    static VOID release_lam(NDK_ADAPTER* adapter, NDK_LOGICAL_ADDRESS_MAPPING* lam) {
        if (lam) {
            std::lock_guard guard(lock);
            Table& t = tables[adapter];
            t.in_use -= std::min(t.in_use, lam->AdapterPageCount);
        }
        base().adapter.NdkReleaseLAM(adapter, lam);
    }

    // A newly opened adapter starts with an empty table (one at the address of a closed one
    // included).
    static void on_object(NDK_OBJECT_HEADER* object) {
        if (object->ObjectType != NdkObjectTypeAdapter) return;
        std::lock_guard guard(lock);
        tables.erase(reinterpret_cast<NDK_ADAPTER*>(object));
    }

    static void install(Tables& t) {
        t.adapter.NdkBuildLAM = build_lam;
        t.adapter.NdkReleaseLAM = release_lam;
    }
};

}  // namespace ndkct::faulty
