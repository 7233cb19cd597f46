// NdkWrite ignores NDK_OP_FLAG_SILENT_SUCCESS: a successful silent write still makes a CQ entry
// (WR-SILENT-01).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS write(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, UINT64 address,
               UINT32 token, ULONG flags) {
    return base().qp.NdkWrite(qp, context, sgl, count, address, token,
                              flags & ~NDK_OP_FLAG_SILENT_SUCCESS);  // the fault
}

void install(Tables& t) {
    t.qp.NdkWrite = write;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkWrite ignores SILENT_SUCCESS (a successful silent write makes an entry)",
                   ndkct::faulty::install);
