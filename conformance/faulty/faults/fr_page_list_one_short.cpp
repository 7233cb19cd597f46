// NdkFastRegister tells the device one AdapterPageArray entry fewer than AdapterPageCount for a
// page list of two or more entries: the vendor's work request carries the list's length in a
// field its firmware reads as a count, and the driver fills it in the last-index form
// (AdapterPageCount - 1) that its MR context uses (a single page goes the device's
// one-translation form, which has no count). The driver checks the count against the MR's
// initialized one and the Length against the pages before that, as it should; but the device
// reads only the first AdapterPageCount - 1 entries, and bounds the region by the translations it
// holds: an access reaching into the last entry's page fails (FR-APC-01: AdapterPageCount is the
// number of entries the provider reads, and the region's backing is those pages). The reference
// is given the shorter list and the Length cut to what those entries hold.
#include <algorithm>

#include "fr_remote_access.hpp"

namespace ndkct::faulty {
namespace {

using namespace fr_remote_access;

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    const ULONG initialized_pages = initialized(mr).pages;
    // What the driver checks with the true count (a request it must refuse is refused as the
    // reference refuses it): within the MR's pages, an FBO inside the first, a Length the pages
    // hold.
    const bool checked = pages && count >= 2 && count <= initialized_pages && fbo < PAGE_SIZE &&
                         length <= SIZE_T(count) * PAGE_SIZE - fbo;
    if (!checked)
        return base().qp.NdkFastRegister(qp, context, mr, count, pages, fbo, length, base_va,
                                         flags);
    const ULONG read = count - 1;  // the fault: the device reads one entry fewer
    const SIZE_T held = SIZE_T(read) * PAGE_SIZE - fbo;
    return base().qp.NdkFastRegister(qp, context, mr, read, pages, fbo, std::min(length, held),
                                     base_va, flags);
}

void install(Tables& t) {
    t.mr.NdkInitializeFastRegisterMr = initialize;
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister has the device read AdapterPageCount - 1 entries of a page list of two or "
    "more: the region's last page has no translation, so accesses reaching it fail",
    ndkct::faulty::install, ndkct::faulty::fr_remote_access::forget_reused);
