// NdkRegisterMr reports STATUS_INSUFFICIENT_RESOURCES for a region described by a chain of
// several MDLs but leaves the MR registered. The vendor commits the pages of each MDL as it walks
// the chain, then allocates the chained translation descriptor such a region needs; that
// allocation fails (its pool is sized for single-MDL regions only) and the failure path returns
// the status without undoing the committed pages. The status itself is allowed, inline or through
// RequestCompletion after STATUS_PENDING, but either form must leave the MR unregistered
// (RMR-ST-03): here the MR stays registered, so the consumer's next registration of it is refused
// as a second one.
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

struct Forward {
    NDK_FN_REQUEST_COMPLETION* completion;
    PVOID context;
};

// The pended registration succeeded underneath; the chained descriptor's allocation fails after
// it.
void complete(PVOID forward, NTSTATUS status) {
    Forward f = *static_cast<Forward*>(forward);
    delete static_cast<Forward*>(forward);
    f.completion(f.context, status == STATUS_SUCCESS ? STATUS_INSUFFICIENT_RESOURCES : status);
}

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    // A Length that reaches past the first MDL walks the chain.
    const bool chained = mdl && mdl->Next && length > mdl->ByteCount;
    if (!chained) return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
    if (!completion) {
        NTSTATUS s = base().mr.NdkRegisterMr(mr, mdl, length, flags, nullptr, nullptr);
        return s == STATUS_SUCCESS ? STATUS_INSUFFICIENT_RESOURCES : s;  // the fault
    }
    auto* forward = new Forward{completion, context};
    NTSTATUS s = base().mr.NdkRegisterMr(mr, mdl, length, flags, complete, forward);
    if (s == STATUS_PENDING) return s;  // complete() reports the failure (the fault)
    delete forward;
    return s == STATUS_SUCCESS ? STATUS_INSUFFICIENT_RESOURCES : s;  // the fault, inline
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkRegisterMr reports STATUS_INSUFFICIENT_RESOURCES for chains of several MDLs "
    "but leaves the MR registered",
    ndkct::faulty::install);
