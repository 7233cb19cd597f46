// Fast registrations complete through the vendor's memory-registration firmware path, whose
// completion records have no room for the QP's context: their CQ entries carry QPContext NULL,
// where NdkFastRegister's page says the entry of a fast registration, an initiator request,
// carries the QPContext given when the QP was created (FR-QP-01; CQP-CTX-01 is NdkCreateQp's
// rule for every request). Every other request's entry is right.
//
// NdkGetCqResultsEx says an entry's type. For the plain NdkGetCqResults the fault remembers the
// fast registrations it posted, by the QP's QPContext (learnt when the QP was created) and the
// request's RequestContext, as the vendor's driver would tell its own entries apart.
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::unordered_map<const NDK_QP*, PVOID> g_qp_context;  // each QP's QPContext
// Fast registrations posted with an entry to come, by (QPContext, RequestContext): a count, as
// a consumer may reuse a RequestContext.
std::map<std::pair<PVOID, PVOID>, unsigned> g_registrations;

// A QP created asynchronously: its QPContext is recorded when its completion hands it over.
struct Creating {
    NDK_FN_CREATE_COMPLETION* completion;
    PVOID context;
    PVOID qp_context;
};

void created(PVOID context, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    auto* c = static_cast<Creating*>(context);
    if (NT_SUCCESS(status) && object) {
        std::lock_guard lock(g_mutex);
        g_qp_context[reinterpret_cast<NDK_QP*>(object)] = c->qp_context;
    }
    NDK_FN_CREATE_COMPLETION* completion = c->completion;
    PVOID consumer_context = c->context;
    delete c;
    completion(consumer_context, status, object);
}

// After the create call returned: STATUS_PENDING leaves the record to created(); otherwise the
// QP (if any) is out now and no completion follows.
void record_created(NTSTATUS status, Creating* c, NDK_QP** out) {
    if (status == STATUS_PENDING) return;
    if (NT_SUCCESS(status) && out && *out) {
        std::lock_guard lock(g_mutex);
        g_qp_context[*out] = c->qp_context;
    }
    delete c;
}

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    auto* c = new Creating{completion, context, qp_context};
    NTSTATUS status = base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                            initiator_depth, receive_sge, initiator_sge,
                                            inline_size, created, c, out);
    record_created(status, c, out);
    return status;
}

NTSTATUS create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, NDK_SRQ* srq,
                            PVOID qp_context, ULONG initiator_depth, ULONG initiator_sge,
                            ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                            NDK_QP** out) {
    auto* c = new Creating{completion, context, qp_context};
    NTSTATUS status =
        base().pd.NdkCreateQpWithSrq(pd, receive_cq, initiator_cq, srq, qp_context, initiator_depth,
                                     initiator_sge, inline_size, created, c, out);
    record_created(status, c, out);
    return status;
}

// Takes one remembered fast registration off the table; true if the entry is one.
bool take(PVOID qp_context, PVOID request_context) {
    std::lock_guard lock(g_mutex);
    auto it = g_registrations.find({qp_context, request_context});
    if (it == g_registrations.end()) return false;
    if (--it->second == 0) g_registrations.erase(it);
    return true;
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    // A SILENT_SUCCESS registration makes an entry only if it fails: not remembered (its error
    // entry, if any, keeps its QPContext in the plain form). The others are remembered before
    // the call, since another thread may take the entry before the call returns.
    const bool entry_owed = !(flags & NDK_OP_FLAG_SILENT_SUCCESS);
    PVOID qp_context = nullptr;
    bool known = false;
    if (entry_owed) {
        std::lock_guard lock(g_mutex);
        auto it = g_qp_context.find(qp);
        if (it != g_qp_context.end()) {
            known = true;
            qp_context = it->second;
            ++g_registrations[{qp_context, context}];
        }
    }
    NTSTATUS status =
        base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
    if (known && !NT_SUCCESS(status)) take(qp_context, context);  // refused inline: no entry
    return status;
}

ULONG get_results(NDK_CQ* cq, NDK_RESULT results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResults(cq, results, count);
    for (ULONG i = 0; i < n; ++i)
        if (take(results[i].QPContext, results[i].RequestContext))
            results[i].QPContext = nullptr;  // the fault
    return n;
}

ULONG get_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    ULONG n = base().cq.NdkGetCqResultsEx(cq, results, count);
    for (ULONG i = 0; i < n; ++i)
        if (results[i].Type == NdkOperationTypeFastRegister) {
            take(results[i].QPContext, results[i].RequestContext);  // either form may follow
            results[i].QPContext = nullptr;                         // the fault
        }
    return n;
}

// A new adapter's CQs hold no entry of an older adapter's registrations: those remembered and
// never polled (the adapter closed first) are forgotten, or an entry of a later QP given the
// same QPContext and RequestContext would lose its context in their place.
void on_object(NDK_OBJECT_HEADER* object) {
    if (object->ObjectType != NdkObjectTypeAdapter) return;
    std::lock_guard lock(g_mutex);
    g_registrations.clear();
    g_qp_context.clear();
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
    t.pd.NdkCreateQpWithSrq = create_qp_with_srq;
    t.qp.NdkFastRegister = fast_register;
    t.cq.NdkGetCqResults = get_results;
    t.cq.NdkGetCqResultsEx = get_results_ex;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "fast registrations complete with QPContext NULL (the registration firmware "
    "path does not carry the QP's context)",
    ndkct::faulty::install, ndkct::faulty::on_object);
