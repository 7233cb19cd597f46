// NdkFastRegister refuses a request that uses every page the MR was initialized for, when that
// is more than one (an off-by-one in the page-list bound: >= instead of >, unseen by a vendor
// whose own tests register one page at a time), with STATUS_INVALID_PARAMETER; a request with
// AdapterPageCount up to the initialized count must not fail because of its page count
// (FR-APC-03).
#include <map>
#include <mutex>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Initialized {
    ULONG pages = 0;
    bool remote_access = false;
};
std::mutex g_mutex;
std::map<const NDK_MR*, Initialized> g_initialized;  // as each MR was last initialized

NTSTATUS initialize(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                    NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    {
        std::lock_guard lock(g_mutex);
        g_initialized[mr] = {pages, remote_access != 0};
    }
    return base().mr.NdkInitializeFastRegisterMr(mr, pages, remote_access, completion, context);
}

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    Initialized init;
    {
        std::lock_guard lock(g_mutex);
        if (auto it = g_initialized.find(mr); it != g_initialized.end()) init = it->second;
    }
    // The rights are checked first, as the reference does (FR-ACC-01 keeps its status): the
    // fault is the page count alone, refused where the request is otherwise valid.
    const bool rights_refused =
        !init.remote_access &&
        (flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT));
    if (!rights_refused && init.pages > 1 && count >= init.pages)
        return STATUS_INVALID_PARAMETER;  // the fault: the last page of the list is refused
    return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va, flags);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister refuses AdapterPageCount equal to the MR's initialized count (above one)",
    ndkct::faulty::install);
