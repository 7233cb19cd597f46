// Names and NDK-syntax printing of model calls (for counterexamples and traces).
#include <sstream>

#include "ndkct/model/calls.hpp"
#include "ndkct/spec/hex.hpp"

namespace ndkct::model {

namespace {

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

using spec::hex;

std::string obj(const char* kind, ObjectId id) {
    return id ? std::string(kind) + std::to_string(id) : std::string("NULL");
}

std::string sgl(const std::vector<Sge>& list) {
    std::string out = "{";
    for (size_t i = 0; i < list.size(); ++i) {
        out += (i ? ", " : "") + std::string("{") + hex(list[i].address) + ", " +
               std::to_string(list[i].length) + ", token " + hex(list[i].token) + "}";
    }
    return out + "}, " + std::to_string(list.size());
}

std::string mdl(const MdlView& view, uint64_t length) {
    if (!view.present) return "Mdl=NULL, Length=" + std::to_string(length);
    return "Mdl{va " + hex(view.virtual_address) + ", " + std::to_string(view.chain_bytes) +
           " bytes" + (view.contiguous ? "" : ", not contiguous") +
           "}, Length=" + std::to_string(length);
}

std::string ctx(Context c) {
    return "ctx " + hex(c);
}

}  // namespace

std::string SocketAddress::describe() const {
    if (!present) return "NULL";
    std::ostringstream out;
    if (family == 2) {
        out << int(address[0]) << '.' << int(address[1]) << '.' << int(address[2]) << '.'
            << int(address[3]) << ':' << port;
    } else {
        out << '[';
        for (int i = 0; i < 16; i += 2)
            out << (i ? ":" : "") << std::hex << (address[i] << 8 | address[i + 1]);
        out << std::dec << "]:" << port;
    }
    return out.str();
}

std::string function_name(const Call& call) {
    return ndk_function_name(call);
}

const char* ndk_function_name(const Call& call) {
    return std::visit(
        Overloaded{
            [](const calls::QueryAdapterInfo&) { return "NdkQueryAdapterInfo"; },
            [](const calls::CreateCq&) { return "NdkCreateCq"; },
            [](const calls::CreatePd&) { return "NdkCreatePd"; },
            [](const calls::CreateSharedEndpoint&) { return "NdkCreateSharedEndpoint"; },
            [](const calls::CreateConnector&) { return "NdkCreateConnector"; },
            [](const calls::CreateListener&) { return "NdkCreateListener"; },
            [](const calls::BuildLam&) { return "NdkBuildLam"; },
            [](const calls::ReleaseLam&) { return "NdkReleaseLam"; },
            [](const calls::ResizeCq&) { return "NdkResizeCq"; },
            [](const calls::ArmCq&) { return "NdkArmCq"; },
            [](const calls::GetCqResults& c) {
                return c.ex ? "NdkGetCqResultsEx" : "NdkGetCqResults";
            },
            [](const calls::ControlCqInterruptModeration&) {
                return "NdkControlCqInterruptModeration";
            },
            [](const calls::RegisterMr&) { return "NdkRegisterMr"; },
            [](const calls::DeregisterMr&) { return "NdkDeregisterMr"; },
            [](const calls::InitializeFastRegisterMr&) { return "NdkInitializeFastRegisterMr"; },
            [](const calls::GetRemoteTokenFromMr&) { return "NdkGetRemoteTokenFromMr"; },
            [](const calls::GetLocalTokenFromMr&) { return "NdkGetLocalTokenFromMr"; },
            [](const calls::GetRemoteTokenFromMw&) { return "NdkGetRemoteTokenFromMw"; },
            [](const calls::ModifySrq&) { return "NdkModifySrq"; },
            [](const calls::SrqReceive&) { return "NdkSrqReceive"; },
            [](const calls::Flush&) { return "NdkFlush"; },
            [](const calls::Send&) { return "NdkSend"; },
            [](const calls::Receive&) { return "NdkReceive"; },
            [](const calls::Bind&) { return "NdkBind"; },
            [](const calls::FastRegister&) { return "NdkFastRegister"; },
            [](const calls::Invalidate&) { return "NdkInvalidate"; },
            [](const calls::Read&) { return "NdkRead"; },
            [](const calls::Write&) { return "NdkWrite"; },
            [](const calls::SendAndInvalidate&) { return "NdkSendAndInvalidate"; },
            [](const calls::CreateMr&) { return "NdkCreateMr"; },
            [](const calls::CreateMw&) { return "NdkCreateMw"; },
            [](const calls::CreateSrq&) { return "NdkCreateSrq"; },
            [](const calls::CreateQp&) { return "NdkCreateQp"; },
            [](const calls::CreateQpWithSrq&) { return "NdkCreateQpWithSrq"; },
            [](const calls::GetPrivilegedMemoryRegionToken&) {
                return "NdkGetPrivilegedMemoryRegionToken";
            },
            [](const calls::Connect&) { return "NdkConnect"; },
            [](const calls::ConnectWithSharedEndpoint&) { return "NdkConnectWithSharedEndpoint"; },
            [](const calls::CompleteConnect& c) {
                return c.ex ? "NdkCompleteConnectEx" : "NdkCompleteConnect";
            },
            [](const calls::Accept& c) { return c.ex ? "NdkAcceptEx" : "NdkAccept"; },
            [](const calls::Reject&) { return "NdkReject"; },
            [](const calls::GetConnectionData&) { return "NdkGetConnectionData"; },
            [](const calls::GetLocalAddress&) { return "NdkGetLocalAddress"; },
            [](const calls::GetPeerAddress&) { return "NdkGetPeerAddress"; },
            [](const calls::Disconnect&) { return "NdkDisconnect"; },
            [](const calls::Listen&) { return "NdkListen"; },
            [](const calls::ControlConnectEvents&) { return "NdkControlConnectEvents"; },
            [](const calls::CloseObject&) { return "NdkCloseObject"; },
            [](const calls::QueryExtensionInterface&) { return "NdkQueryExtensionInterface"; },
        },
        call);
}

std::string show(const Call& call) {
    std::string args = std::visit(
        Overloaded{
            [](const calls::QueryAdapterInfo& c) {
                return obj("adapter", c.adapter) +
                       ", &info, *size=" + std::to_string(c.buffer_size);
            },
            [](const calls::CreateCq& c) {
                return obj("adapter", c.adapter) + ", CqDepth=" + std::to_string(c.depth);
            },
            [](const calls::CreatePd& c) { return obj("adapter", c.adapter); },
            [](const calls::CreateSharedEndpoint& c) {
                return obj("adapter", c.adapter) + ", " + c.address.describe();
            },
            [](const calls::CreateConnector& c) { return obj("adapter", c.adapter); },
            [](const calls::CreateListener& c) { return obj("adapter", c.adapter); },
            [](const calls::BuildLam& c) {
                return obj("adapter", c.adapter) + ", " + mdl(c.mdl, c.length) +
                       (c.has_completion ? "" : ", RequestCompletion=NULL") +
                       (c.has_buffer ? ", pNdkLAM" : ", pNdkLAM=NULL") +
                       ", *pLAMSize=" + std::to_string(c.buffer_size);
            },
            [](const calls::ReleaseLam& c) {
                return obj("adapter", c.adapter) + ", " + obj("lam", c.lam);
            },
            [](const calls::ResizeCq& c) {
                return obj("cq", c.cq) + ", CqDepth=" + std::to_string(c.depth);
            },
            [](const calls::ArmCq& c) {
                return obj("cq", c.cq) + ", Type=" + std::to_string(c.type);
            },
            [](const calls::GetCqResults& c) {
                return obj("cq", c.cq) + ", results, " + std::to_string(c.max_results);
            },
            [](const calls::ControlCqInterruptModeration& c) {
                return obj("cq", c.cq) + ", ModerationInterval=" + std::to_string(c.interval) +
                       ", ModerationCount=" + std::to_string(c.count);
            },
            [](const calls::RegisterMr& c) {
                return obj("mr", c.mr) + ", " + mdl(c.mdl, c.length) + ", Flags=" + hex(c.flags);
            },
            [](const calls::DeregisterMr& c) { return obj("mr", c.mr); },
            [](const calls::InitializeFastRegisterMr& c) {
                return obj("mr", c.mr) +
                       ", AdapterPageCount=" + std::to_string(c.adapter_page_count) +
                       ", RemoteAccess=" + (c.remote_access ? "TRUE" : "FALSE");
            },
            [](const calls::GetRemoteTokenFromMr& c) { return obj("mr", c.mr); },
            [](const calls::GetLocalTokenFromMr& c) { return obj("mr", c.mr); },
            [](const calls::GetRemoteTokenFromMw& c) { return obj("mw", c.mw); },
            [](const calls::ModifySrq& c) {
                return obj("srq", c.srq) + ", SrqDepth=" + std::to_string(c.depth) +
                       ", NotifyThreshold=" + std::to_string(c.notify_threshold);
            },
            [](const calls::SrqReceive& c) {
                return obj("srq", c.srq) + ", " + ctx(c.request_context) + ", " + sgl(c.sgl);
            },
            [](const calls::Flush& c) { return obj("qp", c.qp); },
            [](const calls::Send& c) {
                return obj("qp", c.qp) + ", " + ctx(c.request_context) + ", " + sgl(c.sgl) +
                       ", Flags=" + hex(c.flags);
            },
            [](const calls::Receive& c) {
                return obj("qp", c.qp) + ", " + ctx(c.request_context) + ", " + sgl(c.sgl);
            },
            [](const calls::Bind& c) {
                return obj("qp", c.qp) + ", " + ctx(c.request_context) + ", " + obj("mr", c.mr) +
                       ", " + obj("mw", c.mw) + ", VirtualAddress=" + hex(c.virtual_address) +
                       ", Length=" + std::to_string(c.length) + ", Flags=" + hex(c.flags);
            },
            [](const calls::FastRegister& c) {
                std::string pages = "{";
                for (size_t i = 0; i < c.adapter_pages.size(); ++i)
                    pages += (i ? ", " : "") + hex(c.adapter_pages[i]);
                return obj("qp", c.qp) + ", " + ctx(c.request_context) + ", " + obj("mr", c.mr) +
                       ", AdapterPageCount=" + std::to_string(c.adapter_pages.size()) +
                       ", AdapterPageArray=" + pages + "}, FBO=" + std::to_string(c.fbo) +
                       ", Length=" + std::to_string(c.length) +
                       ", BaseVirtualAddress=" + hex(c.base_virtual_address) +
                       ", Flags=" + hex(c.flags);
            },
            [](const calls::Invalidate& c) {
                return obj("qp", c.qp) + ", " + ctx(c.request_context) + ", object" +
                       std::to_string(c.target) + ", Flags=" + hex(c.flags);
            },
            [](const calls::Read& c) {
                return obj("qp", c.qp) + ", " + ctx(c.request_context) + ", " + sgl(c.sgl) +
                       ", RemoteAddress=" + hex(c.remote_address) +
                       ", RemoteToken=" + hex(c.remote_token) + ", Flags=" + hex(c.flags);
            },
            [](const calls::Write& c) {
                return obj("qp", c.qp) + ", " + ctx(c.request_context) + ", " + sgl(c.sgl) +
                       ", RemoteAddress=" + hex(c.remote_address) +
                       ", RemoteToken=" + hex(c.remote_token) + ", Flags=" + hex(c.flags);
            },
            [](const calls::SendAndInvalidate& c) {
                return obj("qp", c.qp) + ", " + ctx(c.request_context) + ", " + sgl(c.sgl) +
                       ", Flags=" + hex(c.flags) + ", RemoteToken=" + hex(c.remote_token);
            },
            [](const calls::CreateMr& c) {
                return obj("pd", c.pd) + ", FastRegister=" + (c.fast_register ? "TRUE" : "FALSE");
            },
            [](const calls::CreateMw& c) { return obj("pd", c.pd); },
            [](const calls::CreateSrq& c) {
                return obj("pd", c.pd) + ", SrqDepth=" + std::to_string(c.depth) +
                       ", MaxReceiveRequestSge=" + std::to_string(c.max_receive_sge) +
                       ", NotifyThreshold=" + std::to_string(c.notify_threshold);
            },
            [](const calls::CreateQp& c) {
                return obj("pd", c.pd) + ", " + obj("cq", c.receive_cq) + ", " +
                       obj("cq", c.initiator_cq) + ", " + ctx(c.qp_context) +
                       ", ReceiveQueueDepth=" + std::to_string(c.receive_queue_depth) +
                       ", InitiatorQueueDepth=" + std::to_string(c.initiator_queue_depth) +
                       ", MaxReceiveRequestSge=" + std::to_string(c.max_receive_sge) +
                       ", MaxInitiatorRequestSge=" + std::to_string(c.max_initiator_sge) +
                       ", InlineDataSize=" + std::to_string(c.inline_data_size);
            },
            [](const calls::CreateQpWithSrq& c) {
                return obj("pd", c.pd) + ", " + obj("cq", c.receive_cq) + ", " +
                       obj("cq", c.initiator_cq) + ", " + obj("srq", c.srq) + ", " +
                       ctx(c.qp_context) +
                       ", InitiatorQueueDepth=" + std::to_string(c.initiator_queue_depth) +
                       ", MaxInitiatorRequestSge=" + std::to_string(c.max_initiator_sge) +
                       ", InlineDataSize=" + std::to_string(c.inline_data_size);
            },
            [](const calls::GetPrivilegedMemoryRegionToken& c) {
                return obj("pd", c.pd) + ", &token";
            },
            [](const calls::Connect& c) {
                return obj("connector", c.connector) + ", " + obj("qp", c.qp) + ", " +
                       c.source.describe() + ", " + c.destination.describe() +
                       ", IRD=" + std::to_string(c.inbound_read_limit) +
                       ", ORD=" + std::to_string(c.outbound_read_limit) +
                       ", PrivateDataLength=" + std::to_string(c.private_data_length);
            },
            [](const calls::ConnectWithSharedEndpoint& c) {
                return obj("connector", c.connector) + ", " + obj("qp", c.qp) + ", " +
                       obj("endpoint", c.shared_endpoint) + ", " + c.destination.describe() +
                       ", IRD=" + std::to_string(c.inbound_read_limit) +
                       ", ORD=" + std::to_string(c.outbound_read_limit);
            },
            [](const calls::CompleteConnect& c) { return obj("connector", c.connector); },
            [](const calls::Accept& c) {
                return obj("connector", c.connector) + ", " + obj("qp", c.qp) +
                       ", IRD=" + std::to_string(c.inbound_read_limit) +
                       ", ORD=" + std::to_string(c.outbound_read_limit) +
                       ", PrivateDataLength=" + std::to_string(c.private_data_length);
            },
            [](const calls::Reject& c) {
                return obj("connector", c.connector) +
                       ", PrivateDataLength=" + std::to_string(c.private_data_length);
            },
            [](const calls::GetConnectionData& c) {
                return obj("connector", c.connector) + ", &ird, &ord, " +
                       (c.has_buffer ? "buffer" : "NULL") +
                       ", *len=" + std::to_string(c.buffer_length);
            },
            [](const calls::GetLocalAddress& c) {
                return "object" + std::to_string(c.object) +
                       ", &addr, *size=" + std::to_string(c.buffer_size);
            },
            [](const calls::GetPeerAddress& c) {
                return obj("connector", c.connector) +
                       ", &addr, *size=" + std::to_string(c.buffer_size);
            },
            [](const calls::Disconnect& c) { return obj("connector", c.connector); },
            [](const calls::Listen& c) {
                return obj("listener", c.listener) + ", " + c.address.describe();
            },
            [](const calls::ControlConnectEvents& c) {
                return obj("listener", c.listener) + (c.pause ? ", TRUE" : ", FALSE");
            },
            [](const calls::CloseObject& c) { return "object" + std::to_string(c.object); },
            [](const calls::QueryExtensionInterface& c) {
                return "object" + std::to_string(c.object) + ", &guid";
            },
        },
        call);
    return function_name(call) + "(" + args + ")";
}

}  // namespace ndkct::model
