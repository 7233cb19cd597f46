// NdkRegisterMr refuses a Length that is not a whole number of pages with
// STATUS_INVALID_PARAMETER, though any Length from 1 up to the chain's byte count (and
// MaxRegistrationSize) must be accepted (RMR-LEN-03).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    if (length % PAGE_SIZE) return STATUS_INVALID_PARAMETER;  // the fault
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr refuses a Length that is not a whole number of pages",
                   ndkct::faulty::install);
