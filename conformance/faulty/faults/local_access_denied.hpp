// Shared by the faults whose provider turns a region's Flags into device rights wrongly and so
// denies a local access the Flags grant (RMR-FLG-02, RMR-FLG-03, FR-FLG-02). The wrapper keeps
// the MRs whose registration the fault's mapping leaves without the right; a request that uses
// one's local token for that access reaches the device with a token that has no such right (the
// token spoiled), so the reference fails it in its completion, a local protection error, as the
// device of such a provider would.
#pragma once
#include <mutex>
#include <set>
#include <vector>

#include "faulty.hpp"

namespace ndkct::faulty::local_access {

// Which SGEs the fault spoils: the sources of sends and writes, the targets of receives and reads.
enum Use : unsigned { source = 1, target = 2, both = 3 };

struct Denied {
    std::mutex mutex;
    std::set<NDK_MR*> mrs;
};

inline Denied& denied() {
    static Denied d;
    return d;
}

// The MR's registration now lacks the right (deny) or has it.
inline void remember(NDK_MR* mr, bool deny) {
    std::lock_guard lock(denied().mutex);
    if (deny)
        denied().mrs.insert(mr);
    else
        denied().mrs.erase(mr);
}

// The SGEs as the device gets them: a local token of a denied MR spoiled.
inline std::vector<NDK_SGE> spoiled(const NDK_SGE* sgl, ULONG count) {
    std::vector<NDK_SGE> sges(sgl, sgl + (sgl ? count : 0));
    std::lock_guard lock(denied().mutex);
    for (NDK_MR* mr : denied().mrs) {
        const UINT32 token = base().mr.NdkGetLocalTokenFromMr(mr);
        for (NDK_SGE& sge : sges)
            if (sge.MemoryRegionToken == token) sge.MemoryRegionToken = ~token;
    }
    return sges;
}

inline const NDK_SGE* data_or(const std::vector<NDK_SGE>& sges, const NDK_SGE* given) {
    return sges.empty() ? given : sges.data();
}

template <unsigned U>
NTSTATUS send(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, ULONG flags) {
    if (!(U & source) || (flags & NDK_OP_FLAG_INLINE))
        return base().qp.NdkSend(qp, context, sgl, count, flags);
    auto sges = spoiled(sgl, count);
    return base().qp.NdkSend(qp, context, data_or(sges, sgl), count, flags);
}

template <unsigned U>
NTSTATUS send_and_invalidate(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count,
                             ULONG flags, UINT32 remote_token) {
    if (!(U & source) || (flags & NDK_OP_FLAG_INLINE))
        return base().qp.NdkSendAndInvalidate(qp, context, sgl, count, flags, remote_token);
    auto sges = spoiled(sgl, count);
    return base().qp.NdkSendAndInvalidate(qp, context, data_or(sges, sgl), count, flags,
                                          remote_token);
}

template <unsigned U>
NTSTATUS write(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, UINT64 address,
               UINT32 token, ULONG flags) {
    if (!(U & source) || (flags & NDK_OP_FLAG_INLINE))
        return base().qp.NdkWrite(qp, context, sgl, count, address, token, flags);
    auto sges = spoiled(sgl, count);
    return base().qp.NdkWrite(qp, context, data_or(sges, sgl), count, address, token, flags);
}

template <unsigned U>
NTSTATUS read(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, UINT64 address,
              UINT32 token, ULONG flags) {
    if (!(U & target)) return base().qp.NdkRead(qp, context, sgl, count, address, token, flags);
    auto sges = spoiled(sgl, count);
    return base().qp.NdkRead(qp, context, data_or(sges, sgl), count, address, token, flags);
}

template <unsigned U>
NTSTATUS receive(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count) {
    if (!(U & target)) return base().qp.NdkReceive(qp, context, sgl, count);
    auto sges = spoiled(sgl, count);
    return base().qp.NdkReceive(qp, context, data_or(sges, sgl), count);
}

template <unsigned U>
NTSTATUS srq_receive(NDK_SRQ* srq, PVOID context, const NDK_SGE* sgl, ULONG count) {
    if (!(U & target)) return base().srq.NdkSrqReceive(srq, context, sgl, count);
    auto sges = spoiled(sgl, count);
    return base().srq.NdkSrqReceive(srq, context, data_or(sges, sgl), count);
}

inline NTSTATUS deregister_mr(NDK_MR* mr, NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    remember(mr, false);
    return base().mr.NdkDeregisterMr(mr, completion, context);
}

inline NTSTATUS close_mr(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* completion,
                         PVOID context) {
    remember(reinterpret_cast<NDK_MR*>(object), false);
    return base().mr.NdkCloseMr(object, completion, context);
}

// The data path with `U`'s SGEs spoiled where they name a denied MR, and the MR's end forgotten.
template <unsigned U>
void install_data_path(Tables& t) {
    t.qp.NdkSend = send<U>;
    t.qp.NdkSendAndInvalidate = send_and_invalidate<U>;
    t.qp.NdkWrite = write<U>;
    t.qp.NdkRead = read<U>;
    t.qp.NdkReceive = receive<U>;
    t.srq.NdkSrqReceive = srq_receive<U>;
    t.mr.NdkDeregisterMr = deregister_mr;
    t.mr.NdkCloseMr = close_mr;
}

}  // namespace ndkct::faulty::local_access
