// NdkCloseObject of a CQ does not wait for the QPs made on it: it returns STATUS_SUCCESS at once
// while a QP still sends its completions there (CQP-LIFE-01: the CQs are the QP's antecedents,
// their close pends until the QP is closed; CLOSE-02).
#include "close_ignores_qps.hpp"

namespace ndkct::faulty {
namespace {

void install(Tables& t) {
    t.cq.NdkCloseCq = close_ignores_qps::close;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCloseObject of a CQ returns STATUS_SUCCESS while QPs on it are open",
                   ndkct::faulty::install);
