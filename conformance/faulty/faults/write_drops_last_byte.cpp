// NdkWrite moves one byte less than its SGEs hold (an off-by-one in the last SGE) and still
// completes with success: the bytes at RemoteAddress are not the ones sent (WRT-01).
#include <vector>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS write(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, UINT64 address,
               UINT32 token, ULONG flags) {
    std::vector<NDK_SGE> copy(sgl, sgl + (sgl ? count : 0));
    if (!copy.empty() && copy.back().Length > 1) --copy.back().Length;  // the fault
    return base().qp.NdkWrite(qp, context, copy.empty() ? sgl : copy.data(), count, address, token,
                              flags);
}

void install(Tables& t) {
    t.qp.NdkWrite = write;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkWrite drops the last byte of the data and completes with success",
                   ndkct::faulty::install);
