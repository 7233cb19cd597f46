// conformance/twonode/src/wire.hpp: the side channel between node A (the split provider, which
// the harness drives) and node B (the agent): one TCP connection per adapter, framed binary
// messages, versioned. A sends requests (one per NDK call it routes to B, plus memory pushes and
// pulls); B answers each in order and streams its provider's callbacks as events. Everything B's
// calls return and every callback B's provider makes crosses here; nothing else is shared.
//
// This module is the one place that knows the encoding: switching B's stream of calls, results
// and callbacks to another record format (the trace format of spec/trace) changes this module
// and the two places that call encode/decode, nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "ndkct/ndkpi.h"

namespace ndkct::twonode {

constexpr uint32_t kMagic = 0x4E324B4E;  // "NK2N" in the hello
constexpr uint16_t kProtocolVersion = 1;
constexpr uint32_t kMaxFrame = 64u << 20;  // no message is larger (a 64 MiB arena's pull)

class WireError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

enum class FrameKind : uint16_t { request = 1, reply = 2, event = 3 };

// Requests A sends. Each has a reply, except push (ordered before the next request).
enum class Op : uint16_t {
    hello = 1,           // open B's adapter over a fresh arena of the same size
    close_adapter,       // NdkctCloseAdapter on B (blocks until its callbacks are done)
    query_adapter_info,  // NdkQueryAdapterInfo
    create_cq,
    create_pd,
    create_listener,
    create_mr,
    create_mw,
    create_srq,
    create_qp,  // with or without an SRQ
    close,      // NdkCloseObject
    register_mr,
    deregister_mr,
    initialize_fast_register_mr,
    tokens,            // an MR's local and remote token, or an MW's remote token
    privileged_token,  // NdkGetPrivilegedMemoryRegionToken
    build_lam,
    release_lam,
    resize_cq,
    arm_cq,
    poll,  // NdkGetCqResults(Ex); the reply carries the bytes B's memory changed (a pull)
    control_moderation,
    modify_srq,
    srq_receive,
    flush,
    send,
    receive,
    read,
    write,
    send_and_invalidate,
    bind,
    fast_register,
    invalidate,
    listen,
    control_connect_events,
    local_address,  // of a listener or connector
    peer_address,
    accept,  // NdkAccept / NdkAcceptEx
    reject,
    connection_data,
    disconnect,
    push,               // bytes A's copy changed in mirrored pages; no reply
    pull,               // the bytes B's copy changed
    fault,              // the fault tests: end the agent, take the link down or up
    push_acknowledged,  // as push, answered once B's memory has the bytes
};

// Events B sends (its provider's callbacks), each naming the context A gave.
enum class Event : uint16_t {
    created = 1,       // a create completed: status, handle
    request_done,      // a request completed: status
    closed,            // a close completed
    cq_notification,   // status
    srq_notification,  // status
    connect_request,   // a listener's connect event: the new connector's handle
    disconnect,        // ex flag, reason
};

enum class Fault : uint16_t {
    exit_now = 1,  // the agent's session process ends at once (SIGKILL of itself)
    link_down,     // the peer's RDMA link goes down (ip link set ... down)
    link_up,
};

// ---- Encoding ----

class Writer {
  public:
    void u8(uint8_t v) { buf_.push_back(v); }
    void u16(uint16_t v) { raw(&v, 2); }
    void u32(uint32_t v) { raw(&v, 4); }
    void u64(uint64_t v) { raw(&v, 8); }
    void i32(int32_t v) { raw(&v, 4); }
    void bytes(const void* p, size_t n) {
        u32(static_cast<uint32_t>(n));
        raw(p, n);
    }
    void str(const std::string& s) { bytes(s.data(), s.size()); }
    void raw(const void* p, size_t n) {
        if (n == 0) return;
        size_t at = buf_.size();
        buf_.resize(at + n);
        std::memcpy(buf_.data() + at, p, n);
    }
    std::vector<uint8_t>& buffer() { return buf_; }

  private:
    std::vector<uint8_t> buf_;
};

class Reader {
  public:
    Reader(const uint8_t* p, size_t n) : p_(p), end_(p + n) {}
    explicit Reader(const std::vector<uint8_t>& v) : Reader(v.data(), v.size()) {}
    // A reply read where it arrives: the reader keeps the bytes.
    explicit Reader(std::vector<uint8_t>&& v)
        : owned_(std::move(v)), p_(owned_.data()), end_(owned_.data() + owned_.size()) {}
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;
    uint8_t u8() { return get<uint8_t>(); }
    uint16_t u16() { return get<uint16_t>(); }
    uint32_t u32() { return get<uint32_t>(); }
    uint64_t u64() { return get<uint64_t>(); }
    int32_t i32() { return get<int32_t>(); }
    // A length-prefixed byte string (at most `max` bytes).
    std::vector<uint8_t> bytes(size_t max = kMaxFrame) {
        uint32_t n = u32();
        if (n > max || n > remaining()) throw WireError("a byte string runs past the message");
        std::vector<uint8_t> v(p_, p_ + n);
        p_ += n;
        return v;
    }
    std::string str() {
        auto v = bytes(1 << 20);
        return {v.begin(), v.end()};
    }
    void raw(void* out, size_t n) {
        if (n > remaining()) throw WireError("a field runs past the message");
        std::memcpy(out, p_, n);
        p_ += n;
    }
    size_t remaining() const { return static_cast<size_t>(end_ - p_); }
    const uint8_t* here() const { return p_; }
    void skip(size_t n) {
        if (n > remaining()) throw WireError("a field runs past the message");
        p_ += n;
    }

  private:
    template <typename T>
    T get() {
        T v;
        raw(&v, sizeof v);
        return v;
    }
    std::vector<uint8_t> owned_;
    const uint8_t* p_;
    const uint8_t* end_;
};

// ---- Frames over a socket ----

struct Frame {
    FrameKind kind = FrameKind::request;
    uint16_t code = 0;  // Op or Event
    uint64_t id = 0;    // request sequence number (requests, replies) or A's context (events)
    std::vector<uint8_t> payload;
};

// Writes one frame (whole, or throws WireError naming the socket error).
void send_frame(int fd, FrameKind kind, uint16_t code, uint64_t id,
                const std::vector<uint8_t>& payload);
// Reads one frame; returns false on a clean end of stream, throws WireError otherwise.
bool receive_frame(int fd, Frame& frame);

// ---- NDK values ----

// An MDL chain as bytes: for each MDL its header fields and PFN array (enough for the other
// node to build the same chain over its own arena: same PFNs, same virtual labels).
void put_mdl_chain(Writer& w, const MDL* chain);
// The PFNs a chain in wire form names (for the memory mirror), and its MDLs rebuilt.
struct WireMdls {
    std::vector<std::vector<std::byte>> storage;  // one per MDL, linked through Next
    std::vector<PFN_NUMBER> pfns;
    MDL* head() { return storage.empty() ? nullptr : reinterpret_cast<MDL*>(storage[0].data()); }
};
WireMdls get_mdl_chain(Reader& r, uint64_t page_count);

void put_sges(Writer& w, const NDK_SGE* sgl, ULONG count, bool with_bytes);
// SGEs as sent; with bytes (inline data), `inline_data` holds them and the SGEs point into it.
std::vector<NDK_SGE> get_sges(Reader& r, std::vector<std::vector<uint8_t>>& inline_data);

void put_address(Writer& w, const sockaddr* address, ULONG length);
std::vector<uint8_t> get_address(Reader& r);

const char* op_name(Op op);

}  // namespace ndkct::twonode
