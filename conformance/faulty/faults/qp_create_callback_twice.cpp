// NdkCreateQp reports every creation through its CreateCompletion, twice: once from the
// completion path and once more from a retry path that does not know the first ran (CQP-ST-02:
// after STATUS_PENDING, CreateCompletion exactly once; GEN-ASYNC-01). *ppNdkQp is never written.
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Forward {
    NDK_FN_CREATE_COMPLETION* completion;
    void* context;
};

void twice(void* forward, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    f.completion(f.context, status, object);
    f.completion(f.context, status, object);  // the fault
}

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    if (!completion)
        return base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                     initiator_depth, receive_sge, initiator_sge, inline_size,
                                     completion, context, out);
    auto* forward = new Forward{completion, context};
    NDK_QP* made = nullptr;  // the consumer's *ppNdkQp stays untouched: the QP goes by callback
    NTSTATUS status = base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                            initiator_depth, receive_sge, initiator_sge,
                                            inline_size, twice, forward, &made);
    if (status == STATUS_PENDING) return status;
    delete forward;
    if (status != STATUS_SUCCESS) return status;
    // Created inline: reported through the callback instead (allowed), but twice (the fault).
    completion(context, status, &made->Header);
    completion(context, status, &made->Header);
    return STATUS_PENDING;
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp calls its CreateCompletion twice", ndkct::faulty::install);
