// NdkRegisterMr reaches the MR's own NdkGetLocalTokenFromMr through the MR's Dispatch member
// (to see whether the MR is registered yet) instead of calling its own function: a provider that
// reads Dispatch after handing the object out (GEN-CREATE-05). It works until the consumer
// overwrites the member, as it may.
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

NTSTATUS register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                     NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    (void)mr->Dispatch->NdkGetLocalTokenFromMr(mr);  // the fault: rereads Dispatch
    return base().mr.NdkRegisterMr(mr, mdl, length, flags, completion, context);
}

void install(Tables& t) {
    t.mr.NdkRegisterMr = register_mr;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkRegisterMr calls through the MR's Dispatch member after handout",
                   ndkct::faulty::install);
