// NdkCloseObject of an SRQ does not wait for the QPs made with it (NdkCreateQpWithSrq): it
// returns STATUS_SUCCESS at once while a QP still takes its receives from it (CQP-SRQ-06: the SRQ
// is an antecedent of its QPs, its close pends until they are closed; CLOSE-02).
#include "close_ignores_qps.hpp"

namespace ndkct::faulty {
namespace {

void install(Tables& t) {
    t.srq.NdkCloseSrq = close_ignores_qps::close;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT(
    "NdkCloseObject of an SRQ returns STATUS_SUCCESS while QPs made with it are open",
    ndkct::faulty::install);
