// conformance/tests/pair_support.hpp: connected QP pairs shaped by the test (own CQs per side,
// an existing PD, chosen read limits) built from Session calls, so the oracle sees every step;
// and NdkGetCqResults (the plain, 1.1 call) on any instance, judged by the oracle.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "seed_support.hpp"

namespace ndkct::conformance::pairs {

struct PairSpec {
    NDK_PD* pd = nullptr;  // nullptr: a new PD
    NDK_CQ* a_receive_cq = nullptr;
    NDK_CQ* a_initiator_cq = nullptr;
    NDK_CQ* b_receive_cq = nullptr;
    NDK_CQ* b_initiator_cq = nullptr;
    NDK_SRQ* b_srq = nullptr;  // b's receives come from this SRQ
    QpShape shape{};
    ULONG ird = 4, ord = 4;
};

// Connects a fresh QP a (active side) to a fresh QP b (passive side) as `spec` says.
inline LoopbackPair connect(Session& s, PairSpec spec) {
    LoopbackPair pair;
    auto fail = [&](std::string why) {
        pair.problem = std::move(why);
        return pair;
    };
    pair.pd = spec.pd ? spec.pd : s.create_pd().object;
    if (!pair.pd) return fail("NdkCreatePd failed");
    if (!spec.a_receive_cq) {
        pair.cq = s.create_cq(256).object;
        if (!pair.cq) return fail("NdkCreateCq failed");
    }
    auto or_shared = [&](NDK_CQ* cq) { return cq ? cq : pair.cq; };
    static int qp_a_context, qp_b_context;
    pair.a = s.create_qp(pair.pd, or_shared(spec.a_receive_cq), or_shared(spec.a_initiator_cq),
                         &qp_a_context, spec.shape)
                 .object;
    pair.b = spec.b_srq ? s.create_qp_with_srq(pair.pd, or_shared(spec.b_receive_cq),
                                               or_shared(spec.b_initiator_cq), spec.b_srq,
                                               &qp_b_context, spec.shape)
                              .object
                        : s.create_qp(pair.pd, or_shared(spec.b_receive_cq),
                                      or_shared(spec.b_initiator_cq), &qp_b_context, spec.shape)
                              .object;
    if (!pair.a || !pair.b) return fail("NdkCreateQp failed");
    pair.listener = s.create_listener().object;
    if (!pair.listener) return fail("NdkCreateListener failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    Done listening{};
    for (int attempt = 0; attempt < 8; ++attempt) {
        address.sin_port = htons(s.next_port());
        listening = s.listen(pair.listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
        if (listening.ok()) break;
    }
    if (!listening.ok())
        return fail("NdkListen failed with " + spec::status_name(listening.final_status));
    pair.active = s.create_connector().object;
    if (!pair.active) return fail("NdkCreateConnector failed");
    NTSTATUS st = s.connect_async(pair.active, pair.a, reinterpret_cast<sockaddr*>(&address),
                                  sizeof address, spec.ird, spec.ord);
    if (st != STATUS_PENDING && st != STATUS_SUCCESS)
        return fail("NdkConnect failed with " + spec::status_name(st));
    pair.passive = s.wait_connect_event(pair.listener);
    if (!pair.passive) return fail("no connect event reached the listener");
    st = s.accept_async(pair.passive, pair.b, spec.ird, spec.ord);
    if (st != STATUS_PENDING && st != STATUS_SUCCESS)
        return fail("NdkAccept failed with " + spec::status_name(st));
    Done connected = s.wait_connect(pair.active);
    if (!connected.ok())
        return fail("NdkConnect completed with " + spec::status_name(connected.final_status));
    Done completed = s.complete_connect(pair.active);
    if (!completed.ok())
        return fail("NdkCompleteConnect failed with " + spec::status_name(completed.final_status));
    Done accepted = s.wait_accept(pair.passive);
    if (!accepted.ok())
        return fail("NdkAccept completed with " + spec::status_name(accepted.final_status));
    pair.connected = true;
    return pair;
}

// NdkGetCqResults (NDK_RESULT entries) on any instance, 1.2 and later included; the oracle
// judges the removed entries as it does the session's own polls (CQ-RES-08).
inline std::vector<NDK_RESULT> poll_plain(Session& s, NDK_CQ* cq, ULONG max) {
    std::vector<NDK_RESULT> plain(max);
    ULONG n = cq->Dispatch->NdkGetCqResults(cq, plain.data(), max);
    plain.resize(std::min(n, max));
    s.process_events();
    model::Observed o;
    o.value = n;
    for (const auto& r : plain) {
        NDK_RESULT_EX ex{};
        ex.Status = r.Status;
        ex.BytesTransferred = r.BytesTransferred;
        ex.QPContext = r.QPContext;
        ex.RequestContext = r.RequestContext;
        o.results.push_back(ex);
    }
    s.report(s.with_oracle([&](model::Model& m) {
        return m.apply(model::calls::GetCqResults{s.id(cq), max, false}, o).verdict;
    }));
    return plain;
}

// Polls with NdkGetCqResults until `count` entries came or the time is up.
inline std::vector<NDK_RESULT> drain_plain(Session& s, NDK_CQ* cq, size_t count,
                                           milliseconds timeout = milliseconds(5000)) {
    std::vector<NDK_RESULT> all;
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(timeout);
    while (all.size() < count && std::chrono::steady_clock::now() < deadline) {
        auto got = poll_plain(s, cq, static_cast<ULONG>(count - all.size()));
        all.insert(all.end(), got.begin(), got.end());
        if (got.empty()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return all;
}

}  // namespace ndkct::conformance::pairs
