// The Session's NDK calls on a PD, an MR and an MW: their creates, the privileged token,
// registration and fast-register initialization, and the tokens.
#include "ndkct/conformance/session.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "ndkct/model/translate.hpp"
#include "ndkct/platform/spin.hpp"
#include "ndkct/spec/hex.hpp"
#include "ndkct/spec/status.hpp"
#include "session_internal.hpp"

namespace ndkct::conformance {

// ---- PD ----

Made<NDK_MR> Session::create_mr(NDK_PD* pd, bool fast_register) {
    return create<NDK_MR>(
        calls::CreateMr{id(pd), fast_register},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_MR** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateMr(pd, fast_register, done, ctx, out);
        },
        "NdkCreateMr", pd);
}

Made<NDK_MW> Session::create_mw(NDK_PD* pd) {
    return create<NDK_MW>(
        calls::CreateMw{id(pd)},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_MW** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateMw(pd, done, ctx, out);
        },
        "NdkCreateMw", pd);
}

Made<NDK_SRQ> Session::create_srq(NDK_PD* pd, ULONG depth, ULONG max_sge, ULONG threshold,
                                  bool with_notification) {
    EventRecord* r = new_event_record();
    auto made = create<NDK_SRQ>(
        calls::CreateSrq{id(pd), depth, max_sge, threshold, with_notification},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_SRQ** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateSrq(
                pd, depth, max_sge, threshold, with_notification ? on_srq_notification : nullptr, r,
                nullptr, done, ctx, out);
        },
        "NdkCreateSrq", pd);
    r->object = made.object;
    if (made.object) event_records_[made.object] = r;
    return made;
}

Made<NDK_QP> Session::create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                                void* qp_context, const QpShape& s) {
    require(receive_cq, "NdkCreateQp", "receive CQ");
    require(initiator_cq, "NdkCreateQp", "initiator CQ");
    return create<NDK_QP>(
        calls::CreateQp{id(pd), id(receive_cq), id(initiator_cq), context_of(qp_context),
                        s.receive_depth, s.initiator_depth, s.receive_sge, s.initiator_sge,
                        s.inline_size},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_QP** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateQp(
                pd, receive_cq, initiator_cq, qp_context, s.receive_depth, s.initiator_depth,
                s.receive_sge, s.initiator_sge, s.inline_size, done, ctx, out);
        },
        "NdkCreateQp", pd);
}

Made<NDK_QP> Session::create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                                         NDK_SRQ* srq, void* qp_context, const QpShape& s) {
    require(receive_cq, "NdkCreateQpWithSrq", "receive CQ");
    require(initiator_cq, "NdkCreateQpWithSrq", "initiator CQ");
    require(srq, "NdkCreateQpWithSrq", "SRQ");
    return create<NDK_QP>(
        calls::CreateQpWithSrq{id(pd), id(receive_cq), id(initiator_cq), id(srq),
                               context_of(qp_context), s.initiator_depth, s.initiator_sge,
                               s.inline_size},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_QP** out) {
            return table<NDK_PD_DISPATCH>(pd).NdkCreateQpWithSrq(
                pd, receive_cq, initiator_cq, srq, qp_context, s.initiator_depth, s.initiator_sge,
                s.inline_size, done, ctx, out);
        },
        "NdkCreateQpWithSrq", pd);
}

UINT32 Session::privileged_token(NDK_PD* pd) {
    UINT32 token = 0;
    {
        InFlight flight(*this, calls::GetPrivilegedMemoryRegionToken{id(pd)}, {{pd, "PD"}});
        table<NDK_PD_DISPATCH>(pd).NdkGetPrivilegedMemoryRegionToken(pd, &token);
    }
    Observed o;
    o.value = token;
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetPrivilegedMemoryRegionToken{id(pd)}, o).verdict);
    return token;
}

// ---- MR, MW ----

Done Session::register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags) {
    return request(
        calls::RegisterMr{id(mr), model::view_mdl(mdl, length), length, flags},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_MR_DISPATCH>(mr).NdkRegisterMr(mr, mdl, length, flags, done, ctx);
        },
        "NdkRegisterMr", {}, mr);
}

Done Session::deregister_mr(NDK_MR* mr) {
    return request(
        calls::DeregisterMr{id(mr)},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_MR_DISPATCH>(mr).NdkDeregisterMr(mr, done, ctx);
        },
        "NdkDeregisterMr", {}, mr);
}

Done Session::initialize_fast_register_mr(NDK_MR* mr, ULONG pages, bool remote_access) {
    return request(
        calls::InitializeFastRegisterMr{id(mr), pages, remote_access},
        [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
            return table<NDK_MR_DISPATCH>(mr).NdkInitializeFastRegisterMr(mr, pages, remote_access,
                                                                          done, ctx);
        },
        "NdkInitializeFastRegisterMr", {}, mr);
}

UINT32 Session::local_token(NDK_MR* mr) {
    Observed o;
    {
        InFlight flight(*this, calls::GetLocalTokenFromMr{id(mr)}, {{mr, "MR"}});
        o.value = table<NDK_MR_DISPATCH>(mr).NdkGetLocalTokenFromMr(mr);
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetLocalTokenFromMr{id(mr)}, o).verdict);
    return o.value;
}

UINT32 Session::remote_token(NDK_MR* mr) {
    Observed o;
    {
        InFlight flight(*this, calls::GetRemoteTokenFromMr{id(mr)}, {{mr, "MR"}});
        o.value = table<NDK_MR_DISPATCH>(mr).NdkGetRemoteTokenFromMr(mr);
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetRemoteTokenFromMr{id(mr)}, o).verdict);
    return o.value;
}

UINT32 Session::remote_token(NDK_MW* mw) {
    Observed o;
    {
        InFlight flight(*this, calls::GetRemoteTokenFromMw{id(mw)}, {{mw, "MW"}});
        o.value = table<NDK_MW_DISPATCH>(mw).NdkGetRemoteTokenFromMw(mw);
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::GetRemoteTokenFromMw{id(mw)}, o).verdict);
    return o.value;
}

Registered Session::register_buffer(NDK_PD* pd, const platform::LockedBuffer& buffer, ULONG flags,
                                    size_t offset, size_t length) {
    Registered r;
    if (length == 0) length = buffer.size() - offset;
    auto made = create_mr(pd, false);
    r.mr = made.object;
    r.status = made.final_status;
    if (!r.mr) return r;
    r.chain = platform::describe(buffer, offset, length);
    Done d = register_mr(r.mr, r.chain.head(), length, flags);
    r.status = d.final_status;
    if (!d.ok()) return r;
    r.local_token = local_token(r.mr);
    r.remote_token = remote_token(r.mr);
    return r;
}

}  // namespace ndkct::conformance
