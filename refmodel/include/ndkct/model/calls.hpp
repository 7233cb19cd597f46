// ndkct/model/calls.hpp: every NDKPI call as the model sees it.
//
// One struct per NDK function, members in the documented parameter order, with the provider's
// object pointers replaced by model ObjectIds, MDL chains by what a driver reads from them
// (MdlView), and callbacks by whether one was given. Contexts are kept as opaque values: they
// identify requests and completions. The harness (conformance/) and the reference provider
// (adapters/model) translate real calls into these.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ndkct/kernel_types.h"

namespace ndkct::model {

using ObjectId = uint32_t;  // 0 = no object
using Context = uint64_t;   // a consumer's PVOID context, as a value

// What a driver learns from an MDL chain for [first VA, first VA + length).
struct MdlView {
    bool present = false;     // a chain was passed
    bool contiguous = false;  // the first `length` bytes are virtually contiguous and described
    uint64_t virtual_address = 0;  // MmGetMdlVirtualAddress(first MDL): an index, never a pointer
    uint32_t first_byte_offset = 0;
    uint64_t chain_bytes = 0;      // sum of ByteCount over the whole chain
    uint32_t mdls = 0;             // MDLs in the chain (RMR-MDL-05: one or several, alike)
    std::vector<PFN_NUMBER> pfns;  // pages under the first `length` bytes, in order
    std::string problem;           // why not contiguous
    // Contiguous for the first `length` bytes, but not past them (LAM-MDL-04, RMR-MDL-04: such a
    // chain is valid; only the described range must be contiguous).
    bool broken_past_length = false;
    // RMR-VA-03, LAM-VA-01: the pages the VA maps in the consumer's memory, where they are not
    // the chain's own pages (a decoy-VA MDL); empty otherwise, and always offline (the trace
    // does not carry the consumer's address space). Only for forensics: a provider that moved
    // bytes through these pages dereferenced the VA.
    std::vector<PFN_NUMBER> va_pfns;
};

// A socket address as NDKPI passes it (SOCKADDR_IN / SOCKADDR_IN6).
struct SocketAddress {
    bool present = false;
    uint16_t family = 0;                // AF_INET or AF_INET6
    uint16_t port = 0;                  // host byte order
    std::array<uint8_t, 16> address{};  // IPv4 in the first 4 bytes
    uint32_t length = 0;                // the length the caller passed
    bool operator==(const SocketAddress&) const = default;
    std::string describe() const;
};

struct Sge {
    uint64_t address = 0;  // VirtualAddress, or LogicalAddress with the privileged token
    uint32_t length = 0;
    uint32_t token = 0;
};

namespace calls {

// ---- NDK_ADAPTER_DISPATCH ----
struct QueryAdapterInfo {
    ObjectId adapter;
    uint32_t buffer_size;
    bool has_buffer = true;
};
struct CreateCq {
    ObjectId adapter;
    uint32_t depth;
    bool has_notification = true;
    bool has_affinity = false;
};
struct CreatePd {
    ObjectId adapter;
};
struct CreateSharedEndpoint {
    ObjectId adapter;
    SocketAddress address;
};
struct CreateConnector {
    ObjectId adapter;
};
struct CreateListener {
    ObjectId adapter;
    bool has_connect_event = true;
};
struct BuildLam {
    ObjectId adapter;
    MdlView mdl;
    uint64_t length;
    bool has_completion = true;
    bool has_buffer = true;  // pNdkLAM != NULL
    uint32_t buffer_size;    // *pLAMSize on entry
};
struct ReleaseLam {
    ObjectId adapter;
    ObjectId lam;
};

// ---- NDK_CQ_DISPATCH ----
struct ResizeCq {
    ObjectId cq;
    uint32_t depth;
};
struct ArmCq {
    ObjectId cq;
    uint32_t type;
};
struct GetCqResults {
    ObjectId cq;
    uint32_t max_results;
    bool ex = false;
};
struct ControlCqInterruptModeration {
    ObjectId cq;
    uint32_t interval;
    uint32_t count;
};

// ---- NDK_MR_DISPATCH ----
struct RegisterMr {
    ObjectId mr;
    MdlView mdl;
    uint64_t length;
    uint32_t flags;
};
struct DeregisterMr {
    ObjectId mr;
};
struct InitializeFastRegisterMr {
    ObjectId mr;
    uint32_t adapter_page_count;
    bool remote_access;
};
struct GetRemoteTokenFromMr {
    ObjectId mr;
};
struct GetLocalTokenFromMr {
    ObjectId mr;
};

// ---- NDK_MW_DISPATCH ----
struct GetRemoteTokenFromMw {
    ObjectId mw;
};

// ---- NDK_SRQ_DISPATCH ----
struct ModifySrq {
    ObjectId srq;
    uint32_t depth;
    uint32_t notify_threshold;
};
struct SrqReceive {
    ObjectId srq;
    Context request_context;
    std::vector<Sge> sgl;
};

// ---- NDK_QP_DISPATCH ----
struct Flush {
    ObjectId qp;
};
// With NDK_OP_FLAG_INLINE the provider copies the bytes at the SGEs' virtual addresses during the
// call (SGE-03, SGE-06); the translator captures them into inline_payload, since the model reads
// memory only through the arena.
struct Send {
    ObjectId qp;
    Context request_context;
    std::vector<Sge> sgl;
    uint32_t flags;
    std::vector<std::byte> inline_payload;
};
struct Receive {
    ObjectId qp;
    Context request_context;
    std::vector<Sge> sgl;
};
struct Bind {
    ObjectId qp;
    Context request_context;
    ObjectId mr;
    ObjectId mw;
    uint64_t virtual_address;
    uint64_t length;
    uint32_t flags;
};
struct FastRegister {
    ObjectId qp;
    Context request_context;
    ObjectId mr;
    std::vector<uint64_t> adapter_pages;  // AdapterPageArray (AdapterPageCount entries)
    uint32_t fbo;
    uint64_t length;
    uint64_t base_virtual_address;
    uint32_t flags;
};
struct Invalidate {
    ObjectId qp;
    Context request_context;
    ObjectId target;
    uint32_t flags;
};
struct Read {
    ObjectId qp;
    Context request_context;
    std::vector<Sge> sgl;
    uint64_t remote_address;
    uint32_t remote_token;
    uint32_t flags;
};
struct Write {
    ObjectId qp;
    Context request_context;
    std::vector<Sge> sgl;
    uint64_t remote_address;
    uint32_t remote_token;
    uint32_t flags;
    std::vector<std::byte> inline_payload;
};
struct SendAndInvalidate {
    ObjectId qp;
    Context request_context;
    std::vector<Sge> sgl;
    uint32_t flags;
    uint32_t remote_token;
    std::vector<std::byte> inline_payload;
};

// ---- NDK_PD_DISPATCH ----
struct CreateMr {
    ObjectId pd;
    bool fast_register;
};
struct CreateMw {
    ObjectId pd;
};
struct CreateSrq {
    ObjectId pd;
    uint32_t depth;
    uint32_t max_receive_sge;
    uint32_t notify_threshold;
    bool has_notification = true;
};
struct CreateQp {
    ObjectId pd;
    ObjectId receive_cq;
    ObjectId initiator_cq;
    Context qp_context;
    uint32_t receive_queue_depth;
    uint32_t initiator_queue_depth;
    uint32_t max_receive_sge;
    uint32_t max_initiator_sge;
    uint32_t inline_data_size;
};
struct CreateQpWithSrq {
    ObjectId pd;
    ObjectId receive_cq;
    ObjectId initiator_cq;
    ObjectId srq;
    Context qp_context;
    uint32_t initiator_queue_depth;
    uint32_t max_initiator_sge;
    uint32_t inline_data_size;
};
struct GetPrivilegedMemoryRegionToken {
    ObjectId pd;
};

// ---- NDK_CONNECTOR_DISPATCH, NDK_LISTENER_DISPATCH, NDK_SHARED_ENDPOINT_DISPATCH ----
struct Connect {
    ObjectId connector;
    ObjectId qp;
    SocketAddress source;
    SocketAddress destination;
    uint32_t inbound_read_limit;
    uint32_t outbound_read_limit;
    uint32_t private_data_length;
};
struct ConnectWithSharedEndpoint {
    ObjectId connector;
    ObjectId qp;
    ObjectId shared_endpoint;
    SocketAddress destination;
    uint32_t inbound_read_limit;
    uint32_t outbound_read_limit;
    uint32_t private_data_length;
};
struct CompleteConnect {
    ObjectId connector;
    bool ex = false;
    bool has_disconnect_event = true;
};
struct Accept {
    ObjectId connector;
    ObjectId qp;
    uint32_t inbound_read_limit;
    uint32_t outbound_read_limit;
    uint32_t private_data_length;
    bool ex = false;
    bool has_disconnect_event = true;
};
struct Reject {
    ObjectId connector;
    uint32_t private_data_length;
};
struct GetConnectionData {
    ObjectId connector;
    bool has_buffer;
    uint32_t buffer_length;
    bool has_read_limits = true;  // pInboundReadLimit and pOutboundReadLimit given (CONN-RL-03)
};
struct GetLocalAddress {
    ObjectId object;
    uint32_t buffer_size;
};  // connector, listener, endpoint
struct GetPeerAddress {
    ObjectId connector;
    uint32_t buffer_size;
};
struct Disconnect {
    ObjectId connector;
};
struct Listen {
    ObjectId listener;
    SocketAddress address;
};
struct ControlConnectEvents {
    ObjectId listener;
    bool pause;
};

// ---- Every object ----
struct CloseObject {
    ObjectId object;
    bool has_completion = true;
};
struct QueryExtensionInterface {
    ObjectId object;
};

}  // namespace calls

using Call = std::variant<
    calls::QueryAdapterInfo, calls::CreateCq, calls::CreatePd, calls::CreateSharedEndpoint,
    calls::CreateConnector, calls::CreateListener, calls::BuildLam, calls::ReleaseLam,
    calls::ResizeCq, calls::ArmCq, calls::GetCqResults, calls::ControlCqInterruptModeration,
    calls::RegisterMr, calls::DeregisterMr, calls::InitializeFastRegisterMr,
    calls::GetRemoteTokenFromMr, calls::GetLocalTokenFromMr, calls::GetRemoteTokenFromMw,
    calls::ModifySrq, calls::SrqReceive, calls::Flush, calls::Send, calls::Receive, calls::Bind,
    calls::FastRegister, calls::Invalidate, calls::Read, calls::Write, calls::SendAndInvalidate,
    calls::CreateMr, calls::CreateMw, calls::CreateSrq, calls::CreateQp, calls::CreateQpWithSrq,
    calls::GetPrivilegedMemoryRegionToken, calls::Connect, calls::ConnectWithSharedEndpoint,
    calls::CompleteConnect, calls::Accept, calls::Reject, calls::GetConnectionData,
    calls::GetLocalAddress, calls::GetPeerAddress, calls::Disconnect, calls::Listen,
    calls::ControlConnectEvents, calls::CloseObject, calls::QueryExtensionInterface>;

// The documented NDK function name of a call ("NdkFastRegister").
std::string function_name(const Call& call);
const char* ndk_function_name(const Call& call);  // the same, as a string literal

// The call in NDK C syntax, with objects named by id ("NdkFastRegister(qp3, ctx=0x10, mr5,
// {0x1000}, 1, FBO=0, Length=4096, BaseVirtualAddress=0x0, Flags=0x8)"), for counterexamples.
std::string show(const Call& call);

}  // namespace ndkct::model
