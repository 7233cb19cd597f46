// NdkCreateQp's last step fails for resources after the QP is made (here: the fourth QP of a PD,
// a stand-in for a per-PD doorbell page of three QPs the device has run out of): the provider
// reports STATUS_INSUFFICIENT_RESOURCES through CreateCompletion, but its error path passes the
// QP it made as pNdkObject instead of NULL and never destroys it (CQP-ST-03: a resource failure,
// inline or through the callback, creates no QP; GEN-CREATE-02).
#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

std::mutex g_mutex;
std::map<const NDK_PD*, unsigned> g_qps_made;  // by PD, until its close

struct Forward {
    NDK_FN_CREATE_COMPLETION* completion;
    void* context;
    const NDK_PD* pd;
};

// The QP made, then the last step: it fails for the fourth QP of the PD (and every fourth after).
void made(void* forward, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    if (status == STATUS_SUCCESS && object) {
        std::lock_guard lock(g_mutex);
        if (++g_qps_made[f.pd] % 4 == 0)
            status = STATUS_INSUFFICIENT_RESOURCES;  // the fault: object is still passed on
    }
    f.completion(f.context, status, object);
}

NTSTATUS create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                   ULONG receive_depth, ULONG initiator_depth, ULONG receive_sge,
                   ULONG initiator_sge, ULONG inline_size, NDK_FN_CREATE_COMPLETION* completion,
                   PVOID context, NDK_QP** out) {
    if (!completion)
        return base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                     initiator_depth, receive_sge, initiator_sge, inline_size,
                                     completion, context, out);
    auto* forward = new Forward{completion, context, pd};
    NDK_QP* qp = nullptr;  // the consumer's *ppNdkQp stays untouched: the QP goes by callback
    NTSTATUS status = base().pd.NdkCreateQp(pd, receive_cq, initiator_cq, qp_context, receive_depth,
                                            initiator_depth, receive_sge, initiator_sge,
                                            inline_size, made, forward, &qp);
    if (status == STATUS_PENDING) return status;
    if (status != STATUS_SUCCESS) {
        delete forward;
        return status;
    }
    // Made inline: the last step runs as for a pended create, its result by the callback.
    made(forward, status, &qp->Header);
    return STATUS_PENDING;
}

// A PD's count ends with it (a new PD may get its address).
NTSTATUS close_pd(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_qps_made.erase(reinterpret_cast<const NDK_PD*>(object));
    }
    return base().pd.NdkClosePd(object, completion, context);
}

void install(Tables& t) {
    t.pd.NdkCreateQp = create_qp;
    t.pd.NdkClosePd = close_pd;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkCreateQp's CreateCompletion reports STATUS_INSUFFICIENT_RESOURCES for every fourth QP of "
    "a PD and still passes the QP it made",
    ndkct::faulty::install);
