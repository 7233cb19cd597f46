// NdkFastRegister grants remote write to every region it can (fr_flag_grant.hpp), though without
// the 0x20 bit a peer's RDMA write to it must fail (FR-FLG-05).
#include "fr_flag_grant.hpp"

namespace ndkct::faulty {
namespace {

void install(Tables& t) {
    t.qp.NdkFastRegister = fast_register_granting<NDK_OP_FLAG_ALLOW_REMOTE_WRITE>;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkFastRegister grants remote write whatever the Flags",
                   ndkct::faulty::install);
