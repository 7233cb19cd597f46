// NdkFastRegister grants remote read to every region it can (fr_flag_grant.hpp), though without
// NDK_OP_FLAG_ALLOW_REMOTE_READ a peer's RDMA read of it must fail (FR-FLG-04).
#include "fr_flag_grant.hpp"

namespace ndkct::faulty {
namespace {

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register_granting<NDK_OP_FLAG_ALLOW_REMOTE_READ>;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister grants remote read whatever the Flags", ndkct::faulty::install);
