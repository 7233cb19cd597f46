// NdkInvalidate supports memory windows only: for an MR (a fast-registered one included) it
// returns STATUS_NOT_SUPPORTED at once, without posting anything, so a fast registration can
// never be ended and its remote token keeps granting access until the MR is closed (FR-INV-01:
// "Invalidates a fast-register NDK memory region (MR) or memory window (MW)"; INV-01).
//
// STATUS_NOT_SUPPORTED, not STATUS_INVALID_PARAMETER: the vendor's device has an
// invalidate-window work request and no invalidate-region one, so the driver answers the MR
// case as an unimplemented feature (as NDKPI does for a missing optional function), not as a
// bad argument. The target's type comes from its header (Header.ObjectType), as a provider
// that takes an NDK_OBJECT_HEADER* reads it. Flags the page does not list are checked first, as
// the reference does (INV-04 keeps its status): the fault is the MR case of a valid request.
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

constexpr ULONG kInvalidateFlags =
    NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER;

NTSTATUS invalidate(NDK_QP* qp, PVOID context, NDK_OBJECT_HEADER* mr_or_mw, ULONG flags) {
    const bool flags_valid = (flags & ~kInvalidateFlags) == 0;
    if (flags_valid && mr_or_mw != nullptr && mr_or_mw->ObjectType == NdkObjectTypeMr)
        return STATUS_NOT_SUPPORTED;  // the fault (FR-INV-01)
    return base().qp.NdkInvalidate(qp, context, mr_or_mw, flags);
}

void install(Tables& t) {
    t.qp.NdkInvalidate = invalidate;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkInvalidate supports MWs only: an MR's is refused with STATUS_NOT_SUPPORTED",
                   ndkct::faulty::install);
