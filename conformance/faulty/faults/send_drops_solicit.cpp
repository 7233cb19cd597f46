// NdkSend drops NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT: the peer's receive completes, but a
// SOLICITED arm on the peer's CQ is never satisfied (SND-04, CQ-NOT-10).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS send(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, ULONG flags) {
    return base().qp.NdkSend(qp, context, sgl, count,
                             flags & ~ULONG(NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT));  // the fault
}

void install(Tables& t) {
    t.qp.NdkSend = send;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkSend drops NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT", ndkct::faulty::install);
