// NdkFastRegister refuses every remote right with STATUS_ACCESS_VIOLATION, as if no MR had been
// initialized with RemoteAccess = TRUE (FR-ACC-03: on such an MR remote flags must not yield
// STATUS_ACCESS_VIOLATION). On an MR initialized without RemoteAccess the refusal is right
// (FR-ACC-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    if (flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT))
        return STATUS_ACCESS_VIOLATION;  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister refuses remote rights with STATUS_ACCESS_VIOLATION on every MR",
                   ndkct::faulty::install);
