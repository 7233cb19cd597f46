// NdkBuildLam writes the range's first byte address as AdapterPageArray[0] (page + FBO) instead
// of its page's address: every entry must be PAGE_SIZE-aligned (LAM-PAGE-01).
#include "lam_output_edit.hpp"

namespace ndkct::faulty {
namespace {

void edit(NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG*, ULONG, ULONG* fbo) {
    if (lam && fbo && lam->AdapterPageCount) lam->AdapterPageArray[0].QuadPart += *fbo;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam writes the first byte's address, not its page's, as entry 0",
                   ndkct::faulty::LamOutputFault<ndkct::faulty::edit>::install);
