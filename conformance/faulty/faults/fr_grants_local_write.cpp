// NdkFastRegister gives a region whose Flags name no right local write by default (a default
// access mask), though without NDK_OP_FLAG_ALLOW_LOCAL_WRITE no receive or read may write into it
// (FR-FLG-03; fr_flag_grant.hpp's request, with the grant only where Flags hold no right).
#include "fr_flag_grant.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    constexpr ULONG rights = NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDK_OP_FLAG_ALLOW_REMOTE_READ |
                             NDK_OP_FLAG_ALLOW_REMOTE_WRITE | NDK_OP_FLAG_RDMA_READ_SINK;
    if (flags & rights)
        return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va,
                                         flags);
    return fast_register_granting<NDK_OP_FLAG_ALLOW_LOCAL_WRITE>(qp, context, mr, count, pages, fbo,
                                                                 length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister grants local write where Flags name no right",
                   ndkct::faulty::install);
