#include "ndkct/model/translate.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "ndkct/platform/mdl.hpp"

namespace ndkct::model {

MdlView view_mdl(const MDL* chain, uint64_t length) {
    MdlView view;
    if (!chain) return view;
    view.present = true;
    for (const MDL* m = chain; m; m = m->Next) {
        view.chain_bytes += m->ByteCount;
        ++view.mdls;
    }
    platform::ChainPages pages = platform::chain_pages(chain, length);
    view.contiguous = pages.contiguous;
    view.problem = pages.problem;
    view.virtual_address = reinterpret_cast<uintptr_t>(pages.virtual_address);
    view.first_byte_offset = pages.first_byte_offset;
    view.pfns = std::move(pages.pfns);
    // RMR-VA-03, LAM-VA-01: what the VA maps, kept only where it differs from the PFNs.
    if (view.contiguous && !view.pfns.empty())
        if (auto behind = platform::Arena::pages_mapped_at(pages.virtual_address, length);
            behind && *behind != view.pfns)
            view.va_pfns = std::move(*behind);
    view.broken_past_length = view.contiguous && view.chain_bytes > length &&
                              !platform::chain_pages(chain, view.chain_bytes).contiguous;
    return view;
}

// SGE-13: an NDK_SGE is {VirtualAddress | LogicalAddress (8 bytes), Length, MemoryRegionToken}.
std::vector<Sge> view_sgl(const NDK_SGE* sgl, ULONG count) {
    std::vector<Sge> out;
    if (!sgl) return out;
    out.reserve(count);
    for (ULONG i = 0; i < count; ++i)
        out.push_back({static_cast<uint64_t>(sgl[i].LogicalAddress.QuadPart), sgl[i].Length,
                       sgl[i].MemoryRegionToken});
    return out;
}

std::vector<std::byte> inline_payload(const NDK_SGE* sgl, ULONG count) {
    std::vector<std::byte> out;
    if (!sgl) return out;
    for (ULONG i = 0; i < count; ++i) {
        const auto* p = static_cast<const std::byte*>(sgl[i].VirtualAddress);
        if (p && sgl[i].Length) out.insert(out.end(), p, p + sgl[i].Length);
    }
    return out;
}

SocketAddress view_address(const SOCKADDR* address, ULONG length) {
    SocketAddress a;
    if (!address) return a;
    a.present = true;
    a.length = length;
    sa_family_t family;
    std::memcpy(&family, address, sizeof family);
    a.family = family;
    if (family == AF_INET && length >= sizeof(sockaddr_in)) {
        sockaddr_in in;
        std::memcpy(&in, address, sizeof in);
        a.port = ntohs(in.sin_port);
        std::memcpy(a.address.data(), &in.sin_addr, 4);
    } else if (family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
        sockaddr_in6 in6;
        std::memcpy(&in6, address, sizeof in6);
        a.port = ntohs(in6.sin6_port);
        std::memcpy(a.address.data(), &in6.sin6_addr, 16);
    }
    return a;
}

}  // namespace ndkct::model
