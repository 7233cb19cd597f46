// NdkFastRegister maps the pages of AdapterPageArray in reverse order (it walks its page list
// from the end), so the region's bytes land on the wrong pages (FR-PAGE-02, FR-MAP-01).
#include <algorithm>
#include <vector>

#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                       const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base_va,
                       ULONG flags) {
    std::vector<NDK_LOGICAL_ADDRESS> reversed(pages, pages + (pages ? count : 0));
    std::reverse(reversed.begin(), reversed.end());  // the fault
    return base().qp.NdkFastRegister(qp, context, mr, count,
                                     reversed.empty() ? pages : reversed.data(), fbo, length,
                                     base_va, flags);
}

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister maps AdapterPageArray in reverse order",
                   ndkct::faulty::install);
