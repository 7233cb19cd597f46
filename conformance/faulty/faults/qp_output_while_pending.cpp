// NdkCreateQp stores the new QP in *ppNdkQp although it returns STATUS_PENDING (and the QP
// arrives through CreateCompletion): after STATUS_PENDING the provider must not touch the
// output (GEN-CREATE-04, CQP-ST-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Forward {
    NDK_FN_CREATE_COMPLETION* completion;
    void* context;
    NDK_QP** out;
};

void created(void* forward, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    if (NT_SUCCESS(status) && object && f.out)
        *f.out = reinterpret_cast<NDK_QP*>(object);  // the fault
    f.completion(f.context, status, object);
}

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    auto create = [&](NDK_FN_CREATE_COMPLETION* done, void* ctx) {
        return base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                     initiator_depth, receive_sge, initiator_sge, inline_size, done,
                                     ctx, out);
    };
    if (!completion) return create(completion, context);
    auto* forward = new Forward{completion, context, out};
    NTSTATUS status = create(created, forward);
    if (status == STATUS_PENDING) return status;
    delete forward;
    if (status != STATUS_SUCCESS) return status;
    // Created inline: reported through the callback (allowed), with *ppNdkQp written (the fault).
    completion(context, status, &(*out)->Header);
    return STATUS_PENDING;
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCreateQp writes *ppNdkQp while returning STATUS_PENDING",
                   ndkct::faulty::install);
