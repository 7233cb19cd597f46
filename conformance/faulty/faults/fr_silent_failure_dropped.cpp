// NdkFastRegister posted with NDK_OP_FLAG_SILENT_SUCCESS is written to the hardware as an
// unsignaled work request whatever becomes of it: when it fails in the device (over a
// registration still valid, AMB-30), the error reaches no CQ (FR-SILENT-02: "requests that fail
// do generate an event in the completion queue"). Seen through NdkGetCqResults(Ex): the error
// entry of a silent fast registration is dropped from the batch (cq_rewrite.hpp); its
// successful sibling makes no entry anyway (FR-SILENT-01), and nothing else is touched.
#include <algorithm>
#include <deque>
#include <mutex>

#include "cq_rewrite.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
// The RequestContexts of silent fast registrations posted and not yet seen failing. A silent
// success leaves its context here: the list is bounded, and a context posted again without
// SILENT_SUCCESS is forgotten (ndkct gives each request a context of its own).
std::deque<PVOID> g_silent;
constexpr size_t kRemembered = 256;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    {
        // Recorded before the call: its entry may be on the CQ before the call returns.
        std::lock_guard lock(g_mutex);
        std::erase(g_silent, context);
        if (flags & NDK_OP_FLAG_SILENT_SUCCESS) {
            g_silent.push_back(context);
            if (g_silent.size() > kRemembered) g_silent.pop_front();
        }
    }
    NTSTATUS s =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (s != STATUS_SUCCESS) {  // refused inline: no entry comes
        std::lock_guard lock(g_mutex);
        std::erase(g_silent, context);
    }
    return s;
}

// NDK_RESULT_EX says what the entry is; NDK_RESULT does not (the context alone decides).
bool is_fast_register(const NDK_RESULT_EX& r) {
    return r.Type == NdkOperationTypeFastRegister;
}
bool is_fast_register(const NDK_RESULT&) {
    return true;
}

template <typename Result>
ULONG drop_silent_failures(Result* results, ULONG n) {
    std::lock_guard lock(g_mutex);
    return drop_entries(results, n, [](const Result& r) {
        auto silent = std::find(g_silent.begin(), g_silent.end(), r.RequestContext);
        if (silent == g_silent.end() || !is_fast_register(r)) return false;
        g_silent.erase(silent);
        // The fault: the failed silent registration's entry never reaches the CQ (a flush is
        // the QP's, not the request's, and still shows).
        return NT_ERROR(r.Status) && r.Status != STATUS_CANCELLED;
    });
}

ULONG get_results(NDK_CQ* cq, NDK_RESULT results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResults(cq, results, count);
    return drop_silent_failures(results, std::min(n, count));
}

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    return drop_silent_failures(results, std::min(n, count));
}

// A new adapter's CQs hold no entry of an older adapter's silent registrations: their
// RequestContexts, which a later request may carry again, are forgotten.
void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeAdapter) return;
    std::lock_guard lock(g_mutex);
    g_silent.clear();
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
    t.cq.NdkGetCqResults = get_results;
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister with SILENT_SUCCESS drops the entry of a registration that fails",
    ndkct::faulty::install, ndkct::faulty::on_object);
