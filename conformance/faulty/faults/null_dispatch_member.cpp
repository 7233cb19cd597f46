// The CQ dispatch table leaves NdkControlCqInterruptModeration NULL (as if an adapter without
// interrupt moderation need not have it): every member is mandatory (GEN-MAND-01, CQ-IM-02).
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

void install(Tables& t) {
    t.cq.NdkControlCqInterruptModeration = nullptr;
}  // the fault

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NDK_CQ_DISPATCH.NdkControlCqInterruptModeration is NULL",
                   ndkct::faulty::install);
