// The provider gives the PD's privileged token local write only (it took logical addresses for
// receive buffers alone): NdkSend refuses an SGE that carries it with STATUS_ACCESS_VIOLATION,
// where logical addresses of a live mapping with that token are local sources as well as
// targets (LAM-USE-02).
#include <mutex>
#include <unordered_set>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::unordered_set<UINT32> g_privileged;  // every privileged token handed out

void privileged_token(NDK_PD* pd, UINT32* token) {
    base().pd.NdkGetPrivilegedMemoryRegionToken(pd, token);
    std::lock_guard lock(g_mutex);
    g_privileged.insert(*token);
}

NTSTATUS send(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, ULONG flags) {
    if (!(flags & NDK_OP_FLAG_INLINE)) {
        std::lock_guard lock(g_mutex);
        for (ULONG i = 0; sgl && i < count; ++i)
            if (g_privileged.contains(sgl[i].MemoryRegionToken))
                return STATUS_ACCESS_VIOLATION;  // the fault: no local read with it
    }
    return base().qp.NdkSend(qp, context, sgl, count, flags);
}

// A new adapter's privileged tokens are its own: an older adapter's, which one of its ordinary
// regions may have now, are forgotten.
void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeAdapter) return;
    std::lock_guard lock(g_mutex);
    g_privileged.clear();
}

void install(Tables& t) {
    t.pd.NdkGetPrivilegedMemoryRegionToken = privileged_token;
    t.qp.NdkSend = send;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkSend refuses SGEs that carry the PD's privileged token",
                   ndkct::faulty::install, ndkct::faulty::on_object);
