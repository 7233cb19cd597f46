// Shared by the NdkBuildLam output faults: the reference's NdkBuildLam, then, when it succeeds
// (inline, or through the completion callback after STATUS_PENDING), Edit changes what it wrote
// to the consumer's mapping / *pLAMSize / *pFBO. Edit(lam, size, size passed in, fbo).
#pragma once
#include <mutex>
#include <unordered_map>

#include "faulty.hpp"

namespace ndkct::faulty {

using LamEdit = void (*)(NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG size_in, ULONG* fbo);

template <LamEdit Edit>
struct LamOutputFault {
    // A pended NdkBuildLam: the consumer's callback, its context and its out-parameters.
    struct Pended {
        NDK_FN_REQUEST_COMPLETION* completion;
        PVOID context;
        NDK_LOGICAL_ADDRESS_MAPPING* lam;
        ULONG* size;
        ULONG size_in;
        ULONG* fbo;
    };
    static inline std::mutex lock;
    static inline std::unordered_map<PVOID, Pended> pended;  // by our context (a heap cell)

    static void on_done(PVOID ours, NTSTATUS status) {
        Pended p;
        {
            std::lock_guard guard(lock);
            p = pended.at(ours);
            pended.erase(ours);
        }
        delete static_cast<char*>(ours);
        if (status == STATUS_SUCCESS) Edit(p.lam, p.size, p.size_in, p.fbo);  // the fault
        p.completion(p.context, status);
    }

    static NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                              NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                              NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
        const ULONG size_in = size ? *size : 0;
        if (!completion) {
            NTSTATUS status = base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context,
                                                         lam, size, fbo);
            if (status == STATUS_SUCCESS) Edit(lam, size, size_in, fbo);  // the fault
            return status;
        }
        PVOID ours = new char;
        {
            std::lock_guard guard(lock);
            pended[ours] = {completion, context, lam, size, size_in, fbo};
        }
        NTSTATUS status =
            base().adapter.NdkBuildLAM(adapter, mdl, length, on_done, ours, lam, size, fbo);
        if (status != STATUS_PENDING) {
            {
                std::lock_guard guard(lock);
                pended.erase(ours);
            }
            delete static_cast<char*>(ours);
            if (status == STATUS_SUCCESS) Edit(lam, size, size_in, fbo);  // the fault
        }
        return status;
    }

    static void install(Tables& t) { t.adapter.NdkBuildLAM = build_lam; }
};

}  // namespace ndkct::faulty
