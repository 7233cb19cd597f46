// The provider keeps fast registrations posted with NDK_OP_FLAG_DEFER back until a request
// without DEFER comes (allowed: DEFER is a hint), but when it refuses a fast registration inline
// (remote rights on an MR initialized without RemoteAccess) it returns at once and never hands
// the held ones to the hardware: the deferred chain is stranded, its requests never complete
// (DEFER-04, FR-DEFER-02, DEFER-06).
#include <mutex>
#include <unordered_map>
#include <vector>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Held {  // a fast registration kept back, with its own copy of the page array
    PVOID context;
    NDK_MR* mr;
    std::vector<NDK_LOGICAL_ADDRESS> pages;
    ULONG fbo;
    SIZE_T length;
    PVOID base_va;
    ULONG flags;
};
std::mutex lock;
std::unordered_map<NDK_QP*, std::vector<Held>> held;
std::unordered_map<NDK_MR*, bool> remote_access;  // as initialized

// Hands the QP's held requests to the reference (the "hardware") in posting order.
void release(NDK_QP* qp) {
    std::vector<Held> go;
    {
        std::lock_guard guard(lock);
        go.swap(held[qp]);
    }
    for (auto& h : go)
        base().qp.NdkFastRegister(qp, h.context, h.mr, static_cast<ULONG>(h.pages.size()),
                                  h.pages.data(), h.fbo, h.length, h.base_va,
                                  h.flags & ~ULONG(NDK_OP_FLAG_DEFER));
}

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote, NDK_FN_REQUEST_COMPLETION* completion,
                    PVOID context) {
    {
        std::lock_guard guard(lock);
        remote_access[mr] = remote != 0;
    }
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote, completion, context);
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    bool remote_requested =
        flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT);
    bool local_only;
    {
        std::lock_guard guard(lock);
        auto it = remote_access.find(mr);
        local_only = it != remote_access.end() && !it->second;
    }
    if (remote_requested && local_only)
        return STATUS_ACCESS_VIOLATION;  // FR-ACC-01, right; the fault: the held chain stays held
    if ((flags & NDK_OP_FLAG_DEFER) && pages) {
        std::lock_guard guard(lock);
        held[qp].push_back({context, mr, {pages, pages + count}, fbo, length, base_va, flags});
        return STATUS_SUCCESS;
    }
    release(qp);  // DEFER-07: a request without DEFER takes the chain to the hardware
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

// Every other initiator request ends a chain of held fast registrations (order is kept).
NTSTATUS send(NDK_QP* qp, PVOID c, const NDK_SGE* sgl, ULONG n, ULONG flags) {
    release(qp);
    return base().qp.NdkSend(qp, c, sgl, n, flags);
}
NTSTATUS send_and_invalidate(NDK_QP* qp, PVOID c, const NDK_SGE* sgl, ULONG n, ULONG flags,
                             UINT32 token) {
    release(qp);
    return base().qp.NdkSendAndInvalidate(qp, c, sgl, n, flags, token);
}
NTSTATUS read(NDK_QP* qp, PVOID c, const NDK_SGE* sgl, ULONG n, UINT64 address, UINT32 token,
              ULONG flags) {
    release(qp);
    return base().qp.NdkRead(qp, c, sgl, n, address, token, flags);
}
NTSTATUS write(NDK_QP* qp, PVOID c, const NDK_SGE* sgl, ULONG n, UINT64 address, UINT32 token,
               ULONG flags) {
    release(qp);
    return base().qp.NdkWrite(qp, c, sgl, n, address, token, flags);
}
NTSTATUS bind(NDK_QP* qp, PVOID c, NDK_MR* mr, NDK_MW* mw, PVOID va, SIZE_T length, ULONG flags) {
    release(qp);
    return base().qp.NdkBind(qp, c, mr, mw, va, length, flags);
}
NTSTATUS invalidate(NDK_QP* qp, PVOID c, NDK_OBJECT_HEADER* target, ULONG flags) {
    release(qp);
    return base().qp.NdkInvalidate(qp, c, target, flags);
}
VOID flush(NDK_QP* qp) {
    release(qp);  // a flush cancels what was posted, held or not
    base().qp.NdkFlush(qp);
}
NTSTATUS close_qp(NDK_OBJECT_HEADER* qp, NDK_FN_CLOSE_COMPLETION* completion, PVOID context) {
    release(reinterpret_cast<NDK_QP*>(qp));
    return base().qp.NdkCloseQp(qp, completion, context);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
    t.qp.NdkSend = send;
    t.qp.NdkSendAndInvalidate = send_and_invalidate;
    t.qp.NdkRead = read;
    t.qp.NdkWrite = write;
    t.qp.NdkBind = bind;
    t.qp.NdkInvalidate = invalidate;
    t.qp.NdkFlush = flush;
    t.qp.NdkCloseQp = close_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "an inline refusal of NdkFastRegister leaves the earlier DEFER fast registrations held forever",
    ndkct::faulty::install);
