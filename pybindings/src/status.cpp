// NTSTATUS values as ndkct.Status (an IntEnum named like ntstatus.h) and the NDKPI flag constants
// as plain ints (so that a printed Hypothesis step shows a value Python can run again).
#include <pybind11/stl.h>

#include "core.hpp"
#include "ndkct/ndkinfo.h"
#include "ndkct/ndkpi.h"
#include "ndkct/spec/status.hpp"

namespace ndkct::python {

namespace {
py::object* g_status_enum = nullptr;  // ndkct.Status, kept for the life of the interpreter
}

py::object status(NTSTATUS value) {
    if (g_status_enum) {
        try {
            return (*g_status_enum)(static_cast<int32_t>(value));
        } catch (const py::error_already_set&) {  // a value without a name
        }
    }
    return py::int_(static_cast<int32_t>(value));
}

void bind_status(py::module_& m) {
    py::list members;
#define NDKCT_STATUS_MEMBER(name, value) \
    members.append(py::make_tuple(#name, static_cast<int32_t>(static_cast<NTSTATUS>(value##u))));
    NDKCT_NTSTATUS_TABLE(NDKCT_STATUS_MEMBER)
#undef NDKCT_STATUS_MEMBER
    py::object int_enum = py::module_::import("enum").attr("IntEnum");
    py::object status_enum = int_enum("Status", members, py::arg("module") = "ndkct");
    status_enum.attr("__doc__") =
        "An NTSTATUS value, named as in ntstatus.h (error statuses are negative, as the signed "
        "32-bit NTSTATUS is). Statuses ndkct has no name for stay plain ints.";
    m.attr("Status") = status_enum;
    g_status_enum = new py::object(status_enum);  // never freed: lives as long as the module

    m.def(
        "status_name",
        [](int64_t value) { return spec::status_name(static_cast<NTSTATUS>(value)); },
        py::arg("status"),
        "The name of an NTSTATUS value (\"STATUS_PENDING\"), or its hex spelling "
        "(\"0xC0001234\").");
    m.def(
        "nt_success", [](int64_t value) { return NT_SUCCESS(static_cast<NTSTATUS>(value)); },
        py::arg("status"), "NT_SUCCESS(status): true for success and informational statuses.");

    py::list op_types;
    op_types.append(py::make_tuple("RECEIVE", int(NdkOperationTypeReceive)));
    op_types.append(
        py::make_tuple("RECEIVE_AND_INVALIDATE", int(NdkOperationTypeReceiveAndInvalidate)));
    op_types.append(py::make_tuple("SEND", int(NdkOperationTypeSend)));
    op_types.append(py::make_tuple("FAST_REGISTER", int(NdkOperationTypeFastRegister)));
    op_types.append(py::make_tuple("BIND", int(NdkOperationTypeBind)));
    op_types.append(py::make_tuple("INVALIDATE", int(NdkOperationTypeInvalidate)));
    op_types.append(py::make_tuple("READ", int(NdkOperationTypeRead)));
    op_types.append(py::make_tuple("WRITE", int(NdkOperationTypeWrite)));
    py::object op_enum = int_enum("OperationType", op_types, py::arg("module") = "ndkct");
    op_enum.attr("__doc__") = "NDK_OPERATION_TYPE: what a completion (NDK_RESULT_EX.Type) is for.";
    m.attr("OperationType") = op_enum;

    // NDK_MR_FLAG_* (NdkRegisterMr), NDK_OP_FLAG_* (work requests), NDK_CQ_NOTIFY_* (NdkArmCq),
    // NDK_ADAPTER_FLAG_* (NDK_ADAPTER_INFO.AdapterFlags), without the NDK_ prefix.
#define NDKCT_CONSTANT(name) m.attr(#name + 4) = static_cast<uint32_t>(name);
    NDKCT_CONSTANT(NDK_MR_FLAG_ALLOW_LOCAL_READ)
    NDKCT_CONSTANT(NDK_MR_FLAG_ALLOW_LOCAL_WRITE)
    NDKCT_CONSTANT(NDK_MR_FLAG_ALLOW_REMOTE_READ)
    NDKCT_CONSTANT(NDK_MR_FLAG_ALLOW_REMOTE_WRITE)
    NDKCT_CONSTANT(NDK_MR_FLAG_RDMA_READ_SINK)
    NDKCT_CONSTANT(NDK_OP_FLAG_SILENT_SUCCESS)
    NDKCT_CONSTANT(NDK_OP_FLAG_READ_FENCE)
    NDKCT_CONSTANT(NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT)
    NDKCT_CONSTANT(NDK_OP_FLAG_ALLOW_REMOTE_READ)
    NDKCT_CONSTANT(NDK_OP_FLAG_ALLOW_LOCAL_WRITE)
    NDKCT_CONSTANT(NDK_OP_FLAG_ALLOW_REMOTE_WRITE)
    NDKCT_CONSTANT(NDK_OP_FLAG_INLINE)
    NDKCT_CONSTANT(NDK_OP_FLAG_RDMA_READ_SINK)
    NDKCT_CONSTANT(NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE)
    NDKCT_CONSTANT(NDK_OP_FLAG_DEFER)
    NDKCT_CONSTANT(NDK_CQ_NOTIFY_ERRORS)
    NDKCT_CONSTANT(NDK_CQ_NOTIFY_ANY)
    NDKCT_CONSTANT(NDK_CQ_NOTIFY_SOLICITED)
    NDKCT_CONSTANT(NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED)
    NDKCT_CONSTANT(NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED)
    NDKCT_CONSTANT(NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED)
    NDKCT_CONSTANT(NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED)
    NDKCT_CONSTANT(NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED)
    NDKCT_CONSTANT(NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED)
    NDKCT_CONSTANT(NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED)
#undef NDKCT_CONSTANT
    m.attr("PAGE_SIZE") = static_cast<size_t>(PAGE_SIZE);
    m.attr("ADAPTER_INFO_SIZE") = sizeof(NDK_ADAPTER_INFO);
    m.attr("ADAPTER_INFO_V1_SIZE") = static_cast<size_t>(NDK_ADAPTER_INFO_V1_SIZE);
    m.def(
        "lam_size", [](size_t pages) { return NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages); },
        py::arg("pages"),
        "NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages): the NdkBuildLam buffer size for that many "
        "pages.");
}

}  // namespace ndkct::python
