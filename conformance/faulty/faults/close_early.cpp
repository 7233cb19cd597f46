// NdkCloseObject reports every close finished at once: STATUS_SUCCESS where the close must pend
// until the object's successors are closed (CLOSE-02); the late completion is swallowed.
#include "faulty.hpp"

namespace ndkct::faulty {
namespace {

void swallow(void*) {}

NTSTATUS close(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION*, PVOID) {
    NTSTATUS status = base_close(object)(object, swallow, nullptr);
    return status == STATUS_PENDING ? STATUS_SUCCESS : status;  // the fault
}

void install(Tables& t) {
    t.pd.NdkClosePd = close;
    t.cq.NdkCloseCq = close;
    t.mr.NdkCloseMr = close;
    t.mw.NdkCloseMw = close;
    t.qp.NdkCloseQp = close;
    t.srq.NdkCloseSrq = close;
    t.connector.NdkCloseConnector = close;
    t.listener.NdkCloseListener = close;
    t.shared_endpoint.NdkCloseSharedEndpoint = close;
}

}  // namespace
}  // namespace ndkct::faulty

NDKCT_DEFINE_FAULT("NdkCloseObject returns STATUS_SUCCESS while successors are open",
                   ndkct::faulty::install);
