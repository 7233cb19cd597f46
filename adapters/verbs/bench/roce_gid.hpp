// The raw libibverbs rigs' RoCE addressing (the bench's RawSide, the smoke test's RawPair): which
// GID a loopback pair uses, and its move to RTR. One place, because both rigs met the same race.
//
// Why it is more than "the first IPv4-mapped GID": in one CI boot in about a dozen, the rig's
// RTR was refused with ENETUNREACH on a GID the table no longer held in that form when the
// address was resolved. guest-init waits until the IPv4 GID sits at the index it records
// (NDKCT_RDMA_GID_INDEX), so the rig takes that index, and a refusal that a table still settling
// explains (ENETUNREACH, EAGAIN) is retried for a bounded time with the table read afresh.
#pragma once

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace ndkct::adapters::verbs::bench {

// ::ffff:a.b.c.d, the GID rdma_cm resolves an IPv4 address to on RoCE v2.
inline bool ipv4_mapped(const ibv_gid& gid) {
    static const uint8_t zero[10] = {};
    return std::memcmp(gid.raw, zero, 10) == 0 && gid.raw[10] == 0xff && gid.raw[11] == 0xff;
}

struct RoceGid {
    int index = -1;
    ibv_gid gid{};
};

// The IPv4-mapped GID on port 1: the index guest-init recorded when it holds one, else the
// first in the table (a host with a real device and no guest-init). index < 0: none.
inline RoceGid find_ipv4_gid(ibv_context* context, int table_length) {
    RoceGid found;
    if (const char* recorded = std::getenv("NDKCT_RDMA_GID_INDEX")) {
        char* end = nullptr;
        long k = std::strtol(recorded, &end, 10);
        if (end != recorded && *end == '\0' && k >= 0 && k < table_length &&
            ibv_query_gid(context, 1, static_cast<int>(k), &found.gid) == 0 &&
            ipv4_mapped(found.gid)) {
            found.index = static_cast<int>(k);
            return found;
        }
    }
    for (int k = 0; k < table_length; ++k) {
        if (ibv_query_gid(context, 1, k, &found.gid) != 0) break;
        if (ipv4_mapped(found.gid)) {
            found.index = k;
            return found;
        }
    }
    found.index = -1;
    return found;
}

inline std::string describe(const RoceGid& g) {
    char text[INET6_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET6, g.gid.raw, text, sizeof text);
    return "GID index " + std::to_string(g.index) + ", " + text;
}

// ibv_modify_qp to RTR towards `g` itself (a loopback pair), with `attr` filled but for the
// address. Returns 0 or the last errno value; `g` is updated to the GID the last try used.
inline int modify_to_rtr(ibv_qp* qp, ibv_qp_attr attr, int mask, ibv_context* context,
                         int table_length, RoceGid& g,
                         std::chrono::milliseconds patience = std::chrono::milliseconds(5000)) {
    auto deadline = std::chrono::steady_clock::now() + patience;
    for (;;) {
        attr.ah_attr.is_global = 1;
        attr.ah_attr.grh.dgid = g.gid;
        attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(g.index);
        attr.ah_attr.grh.hop_limit = 1;
        attr.ah_attr.port_num = 1;
        int rc = ibv_modify_qp(qp, &attr, mask | IBV_QP_AV);
        bool settling = rc == ENETUNREACH || rc == EAGAIN || rc == EHOSTUNREACH;
        if (rc == 0 || !settling || std::chrono::steady_clock::now() >= deadline) return rc;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        RoceGid again = find_ipv4_gid(context, table_length);
        if (again.index >= 0) g = again;
    }
}

}  // namespace ndkct::adapters::verbs::bench
