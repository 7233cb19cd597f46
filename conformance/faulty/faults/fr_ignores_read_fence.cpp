// NdkFastRegister ignores NDK_OP_FLAG_READ_FENCE: the adapter starts a fenced fast registration
// at once, without waiting for the NdkReads posted earlier on its QP, and since a registration
// is quicker than a read its CQ entry comes ahead of theirs (FR-FENCE-01). Seen through a batch
// of NdkGetCqResults(Ex): a fenced registration's entry is moved ahead of the entries of the
// reads that were outstanding on its QP when it was posted.
#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "cq_rewrite.hpp"

namespace ndkct::faulty {
namespace {

// A fast registration posted with READ_FENCE while reads made entries still to come.
struct FencedRegistration {
    PVOID request_context;
    std::vector<PVOID> earlier_reads;  // their RequestContexts
};

std::mutex g_mutex;
std::map<NDK_QP*, std::vector<PVOID>> g_reads_outstanding;  // by QP: RequestContexts
std::vector<FencedRegistration> g_fenced;

void forget_read(PVOID request_context) {
    // NDK_RESULT names the QP by its QPContext only: the context is forgotten on every QP (a
    // context used on two QPs at once makes the fault miss one, never invent one).
    for (auto& [qp, reads] : g_reads_outstanding)
        std::erase(reads, request_context);
}

NTSTATUS read(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG n, UINT64 address, UINT32 token,
              ULONG flags) {
    NTSTATUS s = base().qp.NdkRead(qp, context, sgl, n, address, token, flags);
    // A read that succeeds silently makes no entry to overtake.
    if (s == STATUS_SUCCESS && !(flags & NDK_OP_FLAG_SILENT_SUCCESS)) {
        std::lock_guard lock(g_mutex);
        g_reads_outstanding[qp].push_back(context);
    }
    return s;
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    // Recorded before the call: its entry may be on the CQ before the call returns.
    {
        std::lock_guard lock(g_mutex);
        auto it = g_reads_outstanding.find(qp);
        if ((flags & NDK_OP_FLAG_READ_FENCE) && it != g_reads_outstanding.end() &&
            !it->second.empty())
            g_fenced.push_back({context, it->second});  // the fault: the fence is not kept
    }
    NTSTATUS s =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (s != STATUS_SUCCESS) {  // refused inline: no entry comes
        std::lock_guard lock(g_mutex);
        std::erase_if(g_fenced,
                      [&](const FencedRegistration& f) { return f.request_context == context; });
    }
    return s;
}

template <typename Result>
void overtake(Result* results, ULONG n) {
    std::lock_guard lock(g_mutex);
    for (ULONG i = 0; i < n; ++i) {
        auto fenced =
            std::find_if(g_fenced.begin(), g_fenced.end(), [&](const FencedRegistration& f) {
                return f.request_context == results[i].RequestContext;
            });
        if (fenced == g_fenced.end()) continue;
        // The first entry of this batch from one of the reads it should have waited for.
        if (results[i].Status == STATUS_SUCCESS) {
            for (ULONG j = 0; j < i; ++j)
                if (results[j].QPContext == results[i].QPContext &&
                    std::find(fenced->earlier_reads.begin(), fenced->earlier_reads.end(),
                              results[j].RequestContext) != fenced->earlier_reads.end()) {
                    move_entry_ahead(results, i, j);  // the fault
                    break;
                }
        }
        g_fenced.erase(fenced);
    }
    for (ULONG i = 0; i < n; ++i)
        forget_read(results[i].RequestContext);
}

ULONG get_results(NDK_CQ* cq, NDK_RESULT results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResults(cq, results, count);
    overtake(results, std::min(n, count));
    return n;
}

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    overtake(results, std::min(n, count));
    return n;
}

// A new QP has no reads outstanding, whatever QP had its address before (a QP closed with reads
// whose entries were never polled left them here).
void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeQp) return;
    std::lock_guard lock(g_mutex);
    g_reads_outstanding.erase(reinterpret_cast<NDK_QP*>(object));
}

void install(Tables& t) {
    t.qp.NdkRead = read;
    t.qp.NdkFastRegister = fast_register;
    t.cq.NdkGetCqResults = get_results;
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister ignores READ_FENCE: a fenced registration's entry overtakes earlier reads'",
    ndkct::faulty::install, ndkct::faulty::on_object);
