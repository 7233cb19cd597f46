// NdkBuildLam reports one page fewer than the range spans (AdapterPageCount - 1 for a range of
// two pages or more): the mapping must cover the whole range (LAM-PAGE-02).
#include "lam_output_edit.hpp"

namespace ndkct::faulty {
namespace {

void edit(NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG*, ULONG, ULONG*) {
    if (lam && lam->AdapterPageCount > 1) --lam->AdapterPageCount;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkBuildLam drops the last page of a range of two pages or more",
                   ndkct::faulty::LamOutputFault<ndkct::faulty::edit>::install);
