// NdkRegisterMr reports every registration through its completion callback, twice: once from
// the completion path and once more from a retry path that does not know the first ran
// (GEN-ASYNC-01: exactly one callback after STATUS_PENDING).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Forward {
    NDK_FN_REQUEST_COMPLETION* completion;
    void* context;
};

void twice(void* forward, NTSTATUS status) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    f.completion(f.context, status);
    f.completion(f.context, status);  // the fault
}

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (!completion) return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    auto* forward = new Forward{completion, context};
    NTSTATUS status = base().mr.NdkRegisterMr(mr, mdl, length, flags, twice, forward);
    if (status == STATUS_PENDING) return status;
    delete forward;
    if (status != STATUS_SUCCESS) return status;
    // Finished inline: reported through the callback instead (allowed), but twice (the fault).
    completion(context, status);
    completion(context, status);
    return STATUS_PENDING;
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr calls its completion callback twice", ndkct::faulty::install);
