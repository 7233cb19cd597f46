#include "wire.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace ndkct::twonode {

namespace {

void write_all(int fd, const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    while (n) {
        ssize_t k = ::send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            throw WireError(std::string("the side channel failed to send: ") +
                            std::strerror(errno));
        b += k;
        n -= static_cast<size_t>(k);
    }
}

// Reads exactly n bytes; false when the stream ended before the first byte.
bool read_all(int fd, void* p, size_t n, bool first) {
    auto* b = static_cast<uint8_t*>(p);
    size_t got = 0;
    while (got < n) {
        ssize_t k = ::recv(fd, b + got, n - got, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0 && got == 0 && first) return false;
        if (k == 0) throw WireError("the side channel ended in the middle of a message");
        if (k < 0)
            throw WireError(std::string("the side channel failed to receive: ") +
                            std::strerror(errno));
        got += static_cast<size_t>(k);
    }
    return true;
}

struct Header {
    uint32_t size;
    uint16_t kind;
    uint16_t code;
    uint64_t id;
};
static_assert(sizeof(Header) == 16);

}  // namespace

void send_frame(int fd, FrameKind kind, uint16_t code, uint64_t id,
                const std::vector<uint8_t>& payload) {
    if (payload.size() > kMaxFrame)
        throw WireError("a message is larger than the side channel allows");
    Header h{static_cast<uint32_t>(payload.size()), static_cast<uint16_t>(kind), code, id};
    // One buffer, one send: frames from several threads are written under the caller's lock.
    std::vector<uint8_t> all(sizeof h + payload.size());
    std::memcpy(all.data(), &h, sizeof h);
    if (!payload.empty()) std::memcpy(all.data() + sizeof h, payload.data(), payload.size());
    write_all(fd, all.data(), all.size());
}

bool receive_frame(int fd, Frame& frame) {
    Header h{};
    if (!read_all(fd, &h, sizeof h, true)) return false;
    if (h.size > kMaxFrame)
        throw WireError("the side channel sent a message of " + std::to_string(h.size) + " bytes");
    if (h.kind < 1 || h.kind > 3)
        throw WireError("the side channel sent a message of unknown kind " +
                        std::to_string(h.kind));
    frame.kind = static_cast<FrameKind>(h.kind);
    frame.code = h.code;
    frame.id = h.id;
    frame.payload.resize(h.size);
    if (h.size) read_all(fd, frame.payload.data(), h.size, false);
    return true;
}

void put_mdl_chain(Writer& w, const MDL* chain) {
    uint32_t count = 0;
    for (const MDL* m = chain; m; m = m->Next)
        ++count;
    w.u32(count);
    for (const MDL* m = chain; m; m = m->Next) {
        w.u64(reinterpret_cast<uint64_t>(m->StartVa));
        w.u64(reinterpret_cast<uint64_t>(m->MappedSystemVa));
        w.u32(m->ByteCount);
        w.u32(m->ByteOffset);
        w.u16(static_cast<uint16_t>(m->MdlFlags));
        ULONG pages = MmGetMdlPageCount(m);
        w.u32(pages);
        w.raw(MmGetMdlPfnArrayConst(m), pages * sizeof(PFN_NUMBER));
    }
}

WireMdls get_mdl_chain(Reader& r, uint64_t page_count) {
    WireMdls out;
    uint32_t count = r.u32();
    if (count > 4096) throw WireError("an MDL chain of " + std::to_string(count) + " MDLs");
    for (uint32_t i = 0; i < count; ++i) {
        uint64_t start = r.u64(), mapped = r.u64();
        uint32_t bytes = r.u32(), offset = r.u32();
        uint16_t flags = r.u16();
        uint32_t pages = r.u32();
        if (pages > page_count) throw WireError("an MDL spans more pages than the arena has");
        std::vector<std::byte> storage(sizeof(MDL) + pages * sizeof(PFN_NUMBER));
        auto* m = reinterpret_cast<MDL*>(storage.data());
        m->Next = nullptr;
        m->Size = static_cast<CSHORT>(storage.size() > 0x7FFF ? 0x7FFF : storage.size());
        m->MdlFlags = static_cast<CSHORT>(flags);
        m->Process = nullptr;
        m->StartVa = reinterpret_cast<PVOID>(start);
        m->MappedSystemVa = reinterpret_cast<PVOID>(mapped);
        m->ByteCount = bytes;
        m->ByteOffset = offset;
        auto* pfns = MmGetMdlPfnArray(m);
        r.raw(pfns, pages * sizeof(PFN_NUMBER));
        for (uint32_t k = 0; k < pages; ++k) {
            if (pfns[k] >= page_count) throw WireError("an MDL names a page outside the arena");
            out.pfns.push_back(pfns[k]);
        }
        out.storage.push_back(std::move(storage));
    }
    for (size_t i = 0; i + 1 < out.storage.size(); ++i)
        reinterpret_cast<MDL*>(out.storage[i].data())->Next =
            reinterpret_cast<MDL*>(out.storage[i + 1].data());
    return out;
}

void put_sges(Writer& w, const NDK_SGE* sgl, ULONG count, bool with_bytes) {
    w.u32(count);
    w.u8(with_bytes ? 1 : 0);
    for (ULONG i = 0; i < count; ++i) {
        w.u64(static_cast<uint64_t>(sgl[i].LogicalAddress.QuadPart));
        w.u32(sgl[i].Length);
        w.u32(sgl[i].MemoryRegionToken);
        if (with_bytes) w.bytes(sgl[i].VirtualAddress, sgl[i].Length);
    }
}

std::vector<NDK_SGE> get_sges(Reader& r, std::vector<std::vector<uint8_t>>& inline_data) {
    uint32_t count = r.u32();
    bool with_bytes = r.u8() != 0;
    if (count > 4096) throw WireError("an SGE list of " + std::to_string(count) + " entries");
    std::vector<NDK_SGE> sges(count);
    for (auto& s : sges) {
        s.LogicalAddress.QuadPart = static_cast<LONG64>(r.u64());
        s.Length = r.u32();
        s.MemoryRegionToken = r.u32();
        if (with_bytes) {
            inline_data.push_back(r.bytes());
            s.VirtualAddress = inline_data.back().data();
        }
    }
    return sges;
}

void put_address(Writer& w, const sockaddr* address, ULONG length) {
    if (!address) {
        w.bytes(nullptr, 0);
        return;
    }
    w.bytes(address, std::min<ULONG>(length, sizeof(sockaddr_storage)));
}

std::vector<uint8_t> get_address(Reader& r) {
    return r.bytes(sizeof(sockaddr_storage));
}

const char* op_name(Op op) {
    switch (op) {
        case Op::hello:
            return "hello";
        case Op::close_adapter:
            return "close_adapter";
        case Op::query_adapter_info:
            return "NdkQueryAdapterInfo";
        case Op::create_cq:
            return "NdkCreateCq";
        case Op::create_pd:
            return "NdkCreatePd";
        case Op::create_listener:
            return "NdkCreateListener";
        case Op::create_mr:
            return "NdkCreateMr";
        case Op::create_mw:
            return "NdkCreateMw";
        case Op::create_srq:
            return "NdkCreateSrq";
        case Op::create_qp:
            return "NdkCreateQp";
        case Op::close:
            return "NdkCloseObject";
        case Op::register_mr:
            return "NdkRegisterMr";
        case Op::deregister_mr:
            return "NdkDeregisterMr";
        case Op::initialize_fast_register_mr:
            return "NdkInitializeFastRegisterMr";
        case Op::tokens:
            return "tokens";
        case Op::privileged_token:
            return "NdkGetPrivilegedMemoryRegionToken";
        case Op::build_lam:
            return "NdkBuildLAM";
        case Op::release_lam:
            return "NdkReleaseLAM";
        case Op::resize_cq:
            return "NdkResizeCq";
        case Op::arm_cq:
            return "NdkArmCq";
        case Op::poll:
            return "NdkGetCqResults";
        case Op::control_moderation:
            return "NdkControlCqInterruptModeration";
        case Op::modify_srq:
            return "NdkModifySrq";
        case Op::srq_receive:
            return "NdkSrqReceive";
        case Op::flush:
            return "NdkFlush";
        case Op::send:
            return "NdkSend";
        case Op::receive:
            return "NdkReceive";
        case Op::read:
            return "NdkRead";
        case Op::write:
            return "NdkWrite";
        case Op::send_and_invalidate:
            return "NdkSendAndInvalidate";
        case Op::bind:
            return "NdkBind";
        case Op::fast_register:
            return "NdkFastRegister";
        case Op::invalidate:
            return "NdkInvalidate";
        case Op::listen:
            return "NdkListen";
        case Op::control_connect_events:
            return "NdkControlConnectEvents";
        case Op::local_address:
            return "NdkGetLocalAddress";
        case Op::peer_address:
            return "NdkGetPeerAddress";
        case Op::accept:
            return "NdkAccept";
        case Op::reject:
            return "NdkReject";
        case Op::connection_data:
            return "NdkGetConnectionData";
        case Op::disconnect:
            return "NdkDisconnect";
        case Op::push:
            return "push";
        case Op::pull:
            return "pull";
        case Op::fault:
            return "fault";
        case Op::push_acknowledged:
            return "push";
    }
    return "unknown";
}

}  // namespace ndkct::twonode
