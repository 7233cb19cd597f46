// NdkRegisterMr checks every joint of the MDL chain, not only those of the first Length bytes: a
// chain contiguous for Length bytes but broken after them (a hole, a misaligned joint past the
// registered range) is refused with STATUS_INVALID_PARAMETER, where it must be registered
// (RMR-MDL-04: contiguity is required only for the first Length bytes).
#include "broken_chain.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (broken_only_past_length(mdl, length)) return STATUS_INVALID_PARAMETER;  // the fault
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr refuses a chain broken only past Length bytes",
                   ndkct::faulty::install);
