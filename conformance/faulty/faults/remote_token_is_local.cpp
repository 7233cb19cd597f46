// NdkGetRemoteTokenFromMr of a registered (NdkRegisterMr) MR returns the MR's local token, which
// does not reach the region from the peer (RMR-TOK-02): the peer's reads and writes fail.
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

UINT32 remote_token(NDK_MR* mr) {
    return base().mr.NdkGetLocalTokenFromMr(mr);  // the fault
}

void install(Tables& t) {
    t.mr.NdkGetRemoteTokenFromMr = remote_token;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkGetRemoteTokenFromMr returns the MR's local token", ndkct::faulty::install);
