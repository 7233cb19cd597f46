// NdkBuildLam reports *pFBO = 0 whatever the range's first byte offset (LAM-OUT-03): a buffer
// that starts inside a page is mapped, but the consumer is told it starts at the page.
#include <mutex>
#include <unordered_map>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

// A pended NdkBuildLam: the consumer's callback, its context and where its *pFBO lives.
struct Pended {
    NDK_FN_REQUEST_COMPLETION* completion;
    PVOID context;
    ULONG* fbo;
};
std::mutex lock;
std::unordered_map<PVOID, Pended> pended;  // by our context (a heap cell)

void on_done(PVOID ours, NTSTATUS status) {
    Pended p;
    {
        std::lock_guard guard(lock);
        p = pended.at(ours);
        pended.erase(ours);
    }
    delete static_cast<char*>(ours);
    if (status == STATUS_SUCCESS && p.fbo) *p.fbo = 0;  // the fault
    p.completion(p.context, status);
}

NTSTATUS build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                   NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                   NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* size, ULONG* fbo) {
    if (!completion)
        return base().adapter.NdkBuildLAM(adapter, mdl, length, completion, context, lam, size,
                                          fbo);
    PVOID ours = new char;
    {
        std::lock_guard guard(lock);
        pended[ours] = {completion, context, fbo};
    }
    NTSTATUS status =
        base().adapter.NdkBuildLAM(adapter, mdl, length, on_done, ours, lam, size, fbo);
    if (status != STATUS_PENDING) {
        {
            std::lock_guard guard(lock);
            pended.erase(ours);
        }
        delete static_cast<char*>(ours);
        if (status == STATUS_SUCCESS && fbo) *fbo = 0;  // the fault
    }
    return status;
}

void install(Tables& t) {
    t.adapter.NdkBuildLAM = build_lam;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam reports a first byte offset of 0 for every range",
                   ndkct::faulty::install);
