// NdkFastRegister takes AdapterPageArray for one run of consecutive logical pages whenever its
// ends say so: the vendor's contiguity shortcut (one large-page translation entry instead of a
// page list) compares only the last entry with the first, and when AdapterPageArray[N-1] is
// AdapterPageArray[0] + (N-1) * PAGE_SIZE it maps entry i as AdapterPageArray[0] + i * PAGE_SIZE,
// whatever the entries between say. Entries between the ends that are not consecutive (pages
// the consumer took from two places) are then mapped wrong (FR-MAP-01: byte k of the region is
// on page AdapterPageArray[(FBO + k) / PAGE_SIZE]; the entries need not be consecutive).
#include <vector>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    std::vector<NDK_LOGICAL_ADDRESS> run;
    if (pages && count > 2 &&
        pages[count - 1].QuadPart ==
            pages[0].QuadPart + LONG64(count - 1) * LONG64(PAGE_SIZE)) {  // the ends only
        run.assign(pages, pages + count);
        for (ULONG i = 1; i + 1 < count; ++i)  // the fault: the middle is taken from the ends
            run[i].QuadPart = pages[0].QuadPart + LONG64(i) * LONG64(PAGE_SIZE);
    }
    return base().qp.NdkFastRegister(qp, context, mr, count, run.empty() ? pages : run.data(), fbo,
                                     length, base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkFastRegister maps AdapterPageArray as one run from entry 0 when its last "
    "entry follows on from its first",
    ndkct::faulty::install);
