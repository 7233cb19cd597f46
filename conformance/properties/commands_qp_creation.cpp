#include "commands_qp_creation.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <array>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ndkct::properties {

namespace gen = rc::gen;
using conformance::Done;
using conformance::QpShape;
using Limit = QpWithItsAntecedents::Limit;
using First = QpWithItsAntecedents::First;

namespace {

const char* limit_name(Limit l) {
    switch (l) {
        case Limit::none:
            return "none";
        case Limit::initiator_depth:
            return "InitiatorQueueDepth";
        case Limit::initiator_sge:
            return "MaxInitiatorRequestSge";
        case Limit::inline_size:
            return "InlineDataSize";
    }
    return "?";
}

ULONG maximum_of(const NDK_ADAPTER_INFO& info, Limit l) {
    switch (l) {
        case Limit::initiator_depth:
            return info.MaxInitiatorQueueDepth;
        case Limit::initiator_sge:
            return info.MaxInitiatorRequestSge;
        case Limit::inline_size:
            return info.MaxInlineDataSize;
        case Limit::none:
            break;
    }
    return 0;
}

const char* first_name(First f) {
    switch (f) {
        case First::qp:
            return "qp";
        case First::srq:
            return "srq";
        case First::cq:
            return "cq";
        case First::pd:
            return "pd";
    }
    return "?";
}

// The QP's sizes: small ones, with the limit (if any) at its maximum or one past it.
QpShape shape_of(const NDK_ADAPTER_INFO& info, Limit limit, bool past) {
    QpShape shape{0, std::min<ULONG>(8, info.MaxInitiatorQueueDepth), 0,
                  std::min<ULONG>(1, info.MaxInitiatorRequestSge), 0};
    const ULONG value = maximum_of(info, limit) + (past ? 1 : 0);
    switch (limit) {
        case Limit::initiator_depth:
            shape.initiator_depth = value;
            break;
        case Limit::initiator_sge:
            shape.initiator_sge = value;
            break;
        case Limit::inline_size:
            shape.inline_size = value;
            break;
        case Limit::none:
            break;
    }
    return shape;
}

// A create's answer: "STATUS_PENDING then STATUS_SUCCESS: a QP" (these QPs have no slot).
std::string made_qp(const conformance::Made<NDK_QP>& made) {
    std::string s = spec::status_name(made.status);
    if (made.pended()) s += " then " + spec::status_name(made.final_status);
    return made.object ? s + ": a QP" : s;
}

}  // namespace

QpWithItsAntecedents::QpWithItsAntecedents(const World& w) {
    const NDK_ADAPTER_INFO& info = *w.info;
    with_srq = info.MaxSrqDepth > 0 && *gen::weightedElement<bool>({{3, true}, {1, false}});
    if (with_srq) {
        limit = *gen::element(Limit::none, Limit::initiator_depth, Limit::initiator_sge,
                              Limit::inline_size);
        // CQP-SRQ-02..04: the maximum is within the limit, one past it is not (none past
        // ULONG_MAX).
        past =
            maximum_of(info, limit) != ULONG_MAX && limit != Limit::none && *gen::arbitrary<bool>();
        first = *gen::weightedElement<First>(
            {{3, First::qp}, {2, First::srq}, {1, First::cq}, {1, First::pd}});
    } else {
        first = *gen::weightedElement<First>({{2, First::qp}, {1, First::cq}, {1, First::pd}});
    }
}

void QpWithItsAntecedents::show(std::ostream& os) const {
    os << "NdkCreatePd, NdkCreateCq(CqDepth=16), ";
    if (with_srq) {
        os << "NdkCreateSrq(pd, 16, 1), NdkCreateQpWithSrq(pd, cq, cq, srq";
        if (limit != Limit::none)
            os << ", " << limit_name(limit) << "=" << (past ? "the maximum + 1" : "the maximum");
        os << ")";
    } else {
        os << "NdkCreateQp(pd, cq, cq)";
    }
    os << ", then NdkCloseObject of the " << first_name(first) << " first";
}

void QpWithItsAntecedents::run(const World&, Sut& sut) const {
    Session& s = sut.session;
    const NDK_ADAPTER_INFO& info = s.info();
    NDK_PD* pd = s.create_pd().object;
    NDK_CQ* cq = pd ? s.create_cq(16).object : nullptr;
    NDK_SRQ* srq = cq && with_srq ? s.create_srq(pd, std::min<ULONG>(16, info.MaxSrqDepth),
                                                 std::min<ULONG>(1, info.MaxReceiveRequestSge))
                                        .object
                                  : nullptr;
    std::string a;
    NDK_QP* qp = nullptr;
    if (!pd || !cq || (with_srq && !srq)) {
        a = "a PD, CQ or SRQ was not created";
    } else {
        const QpShape shape = shape_of(info, limit, past);
        auto made =
            with_srq ? s.create_qp_with_srq(pd, cq, cq, srq, nullptr, shape)
                     : s.create_qp(pd, cq, cq, nullptr, QpShape{4, shape.initiator_depth, 1, 1, 0});
        qp = made.object;
        a = std::string(with_srq ? "NdkCreateQpWithSrq " : "NdkCreateQp ") + made_qp(made);
    }
    // The closes: the chosen antecedent first (without waiting), the QP, then the rest.
    void* early = nullptr;
    switch (first) {
        case First::srq:
            early = srq;
            break;
        case First::cq:
            early = cq;
            break;
        case First::pd:
            early = pd;
            break;
        case First::qp:
            break;
    }
    NTSTATUS early_status = STATUS_SUCCESS;
    if (qp && early) {
        early_status = s.close_async(early);
        a += std::string(", ") + first_name(first) + " close " + answer(early_status);
    }
    if (qp) a += ", qp close " + answer(s.close(qp));
    // The PD's close waits for the SRQ too: it goes before the PD's is awaited.
    auto close_rest = [&](void* object, const char* name) {
        if (!object || (qp && object == early)) return;
        a += std::string(", ") + name + " close " + answer(s.close(object));
    };
    close_rest(srq, "srq");
    if (qp && early && early_status == STATUS_PENDING)
        a += std::string(", ") + first_name(first) + " close then " +
             spec::status_name(s.wait_close(early).final_status);
    close_rest(cq, "cq");
    close_rest(pd, "pd");
    finish(sut, *this, a);
}

CreateQpFromNotification::CreateQpFromNotification(const World& w) {
    const NDK_ADAPTER_INFO& info = *w.info;
    type = *gen::weightedElement<uint32_t>({{3, NDK_CQ_NOTIFY_ANY}, {1, NDK_CQ_NOTIFY_ERRORS}});
    shape = QpShape{*gen::inRange<ULONG>(0, 5), *gen::inRange<ULONG>(0, 5),
                    std::min<ULONG>(1, info.MaxReceiveRequestSge),
                    std::min<ULONG>(1, info.MaxInitiatorRequestSge), 0};
}

void CreateQpFromNotification::show(std::ostream& os) const {
    os << "NdkCreatePd, NdkCreateCq(CqDepth=16), NdkCreateQp(pd, cq, cq), NdkReceive, NdkFlush, "
          "NdkArmCq(cq, TriggerType="
       << type << "), from its notification callback: NdkCreateQp(pd, cq, cq, ReceiveQueueDepth="
       << shape.receive_depth << ", InitiatorQueueDepth=" << shape.initiator_depth << ")";
}

void CreateQpFromNotification::run(const World&, Sut& sut) const {
    Session& s = sut.session;
    NDK_PD* pd = s.create_pd().object;
    NDK_CQ* cq = pd ? s.create_cq(16).object : nullptr;
    NDK_QP* qp = cq ? s.create_qp(pd, cq, cq, nullptr, QpShape{1, 1, 1, 1, 0}).object : nullptr;
    std::string a;
    NDK_QP* inner = nullptr;
    if (!qp) {
        a = "a PD, CQ or QP was not created";
    } else {
        s.receive(qp, sut.next_context(), {});
        s.flush(qp);  // the cancelled receive: an entry for the arm
        struct Shared {
            std::mutex mutex;
            std::condition_variable called;
            bool waiting = true, ran = false;
            conformance::Made<NDK_QP> made;
        };
        auto shared = std::make_shared<Shared>();
        auto create = [&s, pd, cq, shape = shape] {
            return s.create_qp(pd, cq, cq, nullptr, shape);
        };
        s.hook_events(cq, [shared, create] {
            std::lock_guard lock(shared->mutex);
            if (!shared->waiting) return;
            shared->waiting = false;
            shared->made = create();
            shared->ran = true;
            shared->called.notify_all();
        });
        s.arm_cq(cq, type);
        const model::ObjectId id = s.id(cq);
        // CQ-NOT-02: the entry came since the last notification and is still in the CQ: the arm
        // fires at once. (Otherwise it may never fire: no waiting.)
        const bool owed = s.with_oracle([&](model::Model& m) {
            const auto* q = m.state_of<model::CqState>(id);
            return q && q->armed_with_entries && m.notification_owed(id);
        });
        bool ran;
        {
            std::unique_lock lock(shared->mutex);
            if (owed)
                shared->called.wait_for(lock, sut.options.drain_timeout,
                                        [&] { return shared->ran; });
            shared->waiting = false;
            ran = shared->ran;
        }
        s.hook_events(cq, nullptr);
        auto made = ran ? shared->made : create();
        inner = made.object;
        a = "NdkCreateQp " + made_qp(made) +
            (ran    ? " (in the callback)"
             : owed ? " (no notification came: called after it)"
                    : " (no notification owed: called after the arm)");
        for (const auto& d : s.finish_deferred()) {  // what pended inside the callback
            a += ", " + d.name + " completed with " + spec::status_name(d.final_status);
            if (d.name == "NdkCreateQp" && d.final_status == STATUS_SUCCESS)
                inner = static_cast<NDK_QP*>(d.object);
        }
        s.poll(cq);
    }
    for (void* object : {static_cast<void*>(inner), static_cast<void*>(qp), static_cast<void*>(cq),
                         static_cast<void*>(pd)})
        if (object) s.close(object);
    finish(sut, *this, a);
}

QueuesOnTheirOwnCqs::QueuesOnTheirOwnCqs(const World& w)
    : with_srq(w.info->MaxSrqDepth > 0 && *gen::arbitrary<bool>()) {}

void QueuesOnTheirOwnCqs::show(std::ostream& os) const {
    os << "NdkCreatePd, 4 x NdkCreateCq(CqDepth=16), NdkCreateQp(pd, cq0, cq1) as a, "
       << (with_srq ? "NdkCreateSrq(pd, 16, 1), NdkCreateQpWithSrq(pd, cq2, cq3, srq) as b"
                    : "NdkCreateQp(pd, cq2, cq3) as b")
       << ", a connected to b, " << (with_srq ? "NdkSrqReceive(srq" : "NdkReceive(b")
       << ", nSge=0), NdkSend(a, nSge=0), every CQ polled";
}

void QueuesOnTheirOwnCqs::run(const World&, Sut& sut) const {
    Session& s = sut.session;
    NDK_PD* pd = s.create_pd().object;
    std::array<NDK_CQ*, 4> cqs{};
    bool made = pd != nullptr;
    for (auto& cq : cqs)
        if (made) made = (cq = s.create_cq(16).object) != nullptr;
    const QpShape shape{2, 2, 1, 1, 0};
    const NDK_ADAPTER_INFO& info = s.info();
    NDK_SRQ* srq = made && with_srq ? s.create_srq(pd, std::min<ULONG>(16, info.MaxSrqDepth),
                                                   std::min<ULONG>(1, info.MaxReceiveRequestSge))
                                          .object
                                    : nullptr;
    NDK_QP* a = made && (srq || !with_srq) ? s.create_qp(pd, cqs[0], cqs[1], nullptr, shape).object
                                           : nullptr;
    NDK_QP* b = !a         ? nullptr
                : with_srq ? s.create_qp_with_srq(pd, cqs[2], cqs[3], srq, nullptr, shape).object
                           : s.create_qp(pd, cqs[2], cqs[3], nullptr, shape).object;
    std::string answer_text;
    conformance::LoopbackPair pair;
    if (!b) {
        answer_text = "a PD, CQ, SRQ or QP was not created";
    } else {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // port 0: the provider picks
        pair = s.connect_pair(pd, cqs[0], a, b, reinterpret_cast<const sockaddr*>(&address),
                              sizeof address);
        if (!pair.connected) {
            answer_text = "not connected: " + pair.problem;
        } else {
            const NTSTATUS received = srq ? s.srq_receive(srq, sut.next_context(), {})
                                          : s.receive(b, sut.next_context(), {});
            const NTSTATUS sent = s.send(a, sut.next_context(), {});
            answer_text = std::string(srq ? "NdkSrqReceive " : "NdkReceive ") + answer(received) +
                          ", NdkSend " + answer(sent);
            const size_t owed = (received == STATUS_SUCCESS) + (sent == STATUS_SUCCESS);
            std::array<size_t, 4> got{};
            size_t total = 0;
            const auto deadline = std::chrono::steady_clock::now() + sut.options.drain_timeout;
            while (total < owed && std::chrono::steady_clock::now() < deadline) {
                for (size_t k = 0; k < cqs.size(); ++k) {
                    const size_t n = s.poll(cqs[k]).size();
                    got[k] += n;
                    total += n;
                }
                if (total < owed) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            answer_text += ", entries on cq0..cq3: " + std::to_string(got[0]) + " " +
                           std::to_string(got[1]) + " " + std::to_string(got[2]) + " " +
                           std::to_string(got[3]);
        }
    }
    // The connectors and the listener first (a connected QP's close waits for its connector's).
    for (void* object :
         {static_cast<void*>(pair.active), static_cast<void*>(pair.passive),
          static_cast<void*>(pair.listener), static_cast<void*>(b), static_cast<void*>(a),
          static_cast<void*>(srq), static_cast<void*>(cqs[0]), static_cast<void*>(cqs[1]),
          static_cast<void*>(cqs[2]), static_cast<void*>(cqs[3]), static_cast<void*>(pd)})
        if (object) s.close(object);
    finish(sut, *this, answer_text);
}

}  // namespace ndkct::properties
