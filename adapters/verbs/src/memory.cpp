// Protection domains, memory regions, memory windows and tokens (CPD-*, CMR-*, RMR-*, DMR-*,
// IFR-*, TOK-*, PTOK-*, MW-*). The work requests that act on them (NdkFastRegister, NdkBind,
// NdkInvalidate) are in queues.cpp with the other posts.
#include <algorithm>
#include <cerrno>
#include <utility>

#include "ndkct/platform/mdl.hpp"
#include "verbs.hpp"

namespace ndkct::adapters::verbs {

// ================================================================ PD

namespace {

// The marker window and the region its binds name (Pd::marker_window); without them markers are
// zero-length writes.
unsigned char g_marker_bytes[64];

void alloc_marker(Pd* pd) {
    pd->marker_region = ibv_reg_mr(pd->pd, g_marker_bytes, sizeof g_marker_bytes,
                                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
    if (pd->marker_region) pd->marker_window = ibv_alloc_mw(pd->pd, IBV_MW_TYPE_1);
    if (!pd->marker_window && pd->marker_region) {
        ibv_dereg_mr(pd->marker_region);
        pd->marker_region = nullptr;
    }
}

}  // namespace

NTSTATUS verbs_create_pd(NDK_ADAPTER* ndk, NDK_FN_CREATE_COMPLETION*, PVOID, NDK_PD** out) {
    auto* a = reinterpret_cast<Adapter*>(ndk);
    Pd* pd = new_object<Pd>(a, Kind::pd, NdkObjectTypePd, &kPdDispatch);
    if (!pd) return STATUS_INSUFFICIENT_RESOURCES;
    pd->pd = ibv_alloc_pd(a->context);
    if (!pd->pd) {
        delete pd;
        return STATUS_INSUFFICIENT_RESOURCES;  // CPD-01
    }
    alloc_marker(pd);
    a->adopt(&pd->life, {});
    *out = &pd->ndk;  // GEN-CREATE-01: finished inline
    return STATUS_SUCCESS;
}

void destroy_pd(Pd* pd) {
    if (pd->arena_mr) ibv_dereg_mr(pd->arena_mr);
    if (pd->marker_window) ibv_dealloc_mw(pd->marker_window);
    if (pd->marker_region) ibv_dereg_mr(pd->marker_region);
    if (pd->pd) ibv_dealloc_pd(pd->pd);
    delete pd;
}

// PTOK-01: the lkey of the whole arena registered in this PD at iova kLogicalBase, so that the
// logical addresses of every LAM are valid SGE addresses with it. Local read and write only:
// the registration has no remote right, so a peer naming it fails (PTOK-02). Registered at the
// first request (registering the whole arena takes a while; most PDs never need it).
void verbs_get_privileged_memory_region_token(NDK_PD* ndk, UINT32* token) {
    Pd* pd = self<Pd>(ndk);
    Adapter* a = pd->life.adapter;
    std::call_once(pd->arena_once, [&] {
        pd->arena_mr =
            ibv_reg_mr_iova(pd->pd, a->memory.PhysicalBase, a->memory.PageCount * PAGE_SIZE,
                            Adapter::kLogicalBase, IBV_ACCESS_LOCAL_WRITE);
    });
    if (token) *token = pd->arena_mr ? pd->arena_mr->lkey : 0;
}

// ================================================================ MR

NTSTATUS verbs_create_mr(NDK_PD* ndk, BOOLEAN fast_register, NDK_FN_CREATE_COMPLETION*, PVOID,
                         NDK_MR** out) {
    Pd* pd = self<Pd>(ndk);
    Adapter* a = pd->life.adapter;
    Mr* mr = new_object<Mr>(a, Kind::mr, NdkObjectTypeMr, &kMrDispatch);
    if (!mr) return STATUS_INSUFFICIENT_RESOURCES;
    mr->pd = pd;
    mr->fast_register = fast_register != 0;  // CMR-01
    if (mr->fast_register) {
        // The window that exposes its fast registrations remotely, where enabled (see
        // Mr::fr_window). Without one the region's own key is its remote token, which a peer
        // cannot invalidate.
        if (a->fr_windows) mr->fr_window = ibv_alloc_mw(pd->pd, IBV_MW_TYPE_2);
        // The fast-registration cache: a token slot and the type 1 window of the remote token.
        // Without either (slots exhausted, no window) the MR registers at every NdkFastRegister.
        if (a->fr_cache) mr->cache_window = ibv_alloc_mw(pd->pd, IBV_MW_TYPE_1);
        std::lock_guard lock(a->mutex);
        if (mr->cache_window && !a->fr_free_slots.empty()) {
            mr->token_slot = a->fr_free_slots.back();
            a->fr_free_slots.pop_back();
            a->fr_tokens[mr->token_slot].store(0, std::memory_order_release);
        }
        pd->fast_mrs.push_back(mr);
    }
    a->adopt(&mr->life, {&pd->life});  // LIFE-TREE-03
    *out = &mr->ndk;
    return STATUS_SUCCESS;  // CMR-02
}

void destroy_mr(Mr* mr) {
    if (mr->fast_register) {
        Adapter* a = mr->life.adapter;
        std::lock_guard lock(a->mutex);
        std::erase(mr->pd->fast_mrs, mr);
        if (mr->cached()) {
            a->fr_tokens[mr->token_slot].store(0, std::memory_order_release);
            a->fr_free_slots.push_back(mr->token_slot);
            mr->token_slot = Mr::kNoTokenSlot;
        }
    }
    // The cache's window first: the device refuses to deregister a region with a bound window.
    if (mr->cache_window) ibv_dealloc_mw(mr->cache_window);
    mr->cache_window = nullptr;
    delete std::exchange(mr->parked, nullptr);
    if (mr->fr_window) {
        // Deallocation invalidates a bound window; the device refuses to deregister a region
        // that still has one.
        ibv_dealloc_mw(mr->fr_window);
        mr->fr_window = nullptr;
    }
    unbind_windows_of(mr);
    delete mr->current.exchange(nullptr);
    delete mr;
}

NTSTATUS verbs_register_mr(NDK_MR* ndk, MDL* mdl, SIZE_T length, ULONG flags,
                           NDK_FN_REQUEST_COMPLETION*, PVOID) {
    Mr* mr = self<Mr>(ndk);
    Adapter* a = mr->life.adapter;
    // AMB-16: NdkRegisterMr on a fast-register MR or on a registered one is the consumer's
    // error; refused with the profile's default code, STATUS_INVALID_DEVICE_STATE (ours).
    if (mr->fast_register || mr->phase.load() != Mr::Phase::created)
        return STATUS_INVALID_DEVICE_STATE;
    if (!mdl || length == 0) return STATUS_INVALID_PARAMETER;                   // MODEL-RMR-LEN-02
    if (length > a->info.MaxRegistrationSize) return STATUS_INVALID_PARAMETER;  // RMR-LEN-02
    // RMR-MDL-01/04/05: the first Length bytes must be virtually contiguous (also: the chain
    // holds at least Length bytes, RMR-LEN-01). Only the PFNs are read (RMR-VA-03).
    platform::ChainPages pages = platform::chain_pages(mdl, length);
    if (!pages.contiguous) return STATUS_INVALID_PARAMETER;
    for (PFN_NUMBER pfn : pages.pfns)
        if (pfn >= a->memory.PageCount) return STATUS_INVALID_PARAMETER;
    // RMR-VA-01/02: the region is [VA, VA + Length), addressed by VA (iova = VA), never by offset.
    uint64_t va = reinterpret_cast<uint64_t>(pages.virtual_address);
    Registration* r = register_pages(
        a, mr->pd->pd, pages.pfns.data(), pages.pfns.size(), pages.first_byte_offset, length, va,
        mr_access(flags, a->attr.orig_attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW));
    // RMR-ST-03: the MDL, its pages and the length were checked above, so a refusal by the
    // device (whatever its errno) means it cannot take the registration now.
    if (!r) return STATUS_INSUFFICIENT_RESOURCES;
    mr->flags = flags;
    mr->current.store(r);
    mr->lkey.store(r->mr->lkey);  // RMR-TOK-01
    mr->rkey.store(r->mr->rkey);  // RMR-TOK-02
    mr->phase.store(Mr::Phase::registered);
    return STATUS_SUCCESS;  // RMR-ST-01: finished inline, RequestCompletion is not called
}

NTSTATUS verbs_deregister_mr(NDK_MR* ndk, NDK_FN_REQUEST_COMPLETION*, PVOID) {
    Mr* mr = self<Mr>(ndk);
    if (mr->fast_register || mr->phase.load() != Mr::Phase::registered)
        return STATUS_INVALID_DEVICE_STATE;  // DMR-02, AMB-16
    // AMB-31 (allowed): windows bound to the MR stay bound in NDK terms but reach nothing. The
    // device refuses to deregister a region with bound windows, so they are reallocated first.
    unbind_windows_of(mr);
    delete mr->current.exchange(nullptr);  // RMR-DEREG-01: the tokens reach nothing now
    mr->lkey.store(0);
    mr->rkey.store(0);
    mr->phase.store(Mr::Phase::created);  // DMR-03: the MR stays open
    return STATUS_SUCCESS;
}

NTSTATUS verbs_initialize_fast_register_mr(NDK_MR* ndk, ULONG pages, BOOLEAN remote_access,
                                           NDK_FN_REQUEST_COMPLETION*, PVOID) {
    Mr* mr = self<Mr>(ndk);
    Adapter* a = mr->life.adapter;
    if (!mr->fast_register) return STATUS_INVALID_DEVICE_STATE;  // IFR-PRE-01, AMB-16
    // AMB-10: re-initialization while a fast registration is in force is refused (ours).
    if (mr->phase.load() == Mr::Phase::fast_registered) return STATUS_INVALID_DEVICE_STATE;
    if (pages == 0) return STATUS_INVALID_PARAMETER;  // AMB-09 (profile: reject)
    // IFR-APC-02: beyond what can be registered at all. Every count up to that works
    // (IFR-APC-04: FRMRPageCount is far below it).
    if (uint64_t{pages} * PAGE_SIZE > a->info.MaxRegistrationSize)
        return STATUS_IMPLEMENTATION_LIMIT;
    // The range every NdkFastRegister of this MR maps its pages into (FastAlias).
    if (!mr->alias.reserve(pages)) {
        // IFR-APC-02: past the counts every adapter supports, a count the host cannot back is
        // one the adapter does not support, with the status the page names for that.
        bool guaranteed = pages <= std::max<ULONG>(16, a->info.FRMRPageCount);
        return guaranteed ? STATUS_INSUFFICIENT_RESOURCES : STATUS_IMPLEMENTATION_LIMIT;
    }
    mr->max_pages = pages;
    mr->remote_access = remote_access != 0;  // IFR-RA-01/02
    // IFR-TOK-01 (AMB-40 from_initialize): the local token read from now on is the one the next
    // NdkFastRegister's region answers to. A cached MR's is the provider token of the next
    // generation (fast_register_cached takes it); an uncached MR's lkey exists only once
    // NdkFastRegister registered the pages, so it reports 0 until then (a known gap: README).
    if (mr->cached()) mr->lkey.store(Adapter::fr_token(mr->token_slot, uint8_t(mr->token_gen + 1)));
    mr->phase.store(Mr::Phase::initialized);
    return STATUS_SUCCESS;  // IFR-ST-01: inline; nothing on the device until NdkFastRegister
}

// TOK-01/02, FR-TOK-01: the keys of the registration in force. A fast-register MR gets new keys
// with every NdkFastRegister (AMB-07: read after the call returned).
UINT32 verbs_get_local_token_from_mr(NDK_MR* ndk) {
    return self<Mr>(ndk)->lkey.load();
}
UINT32 verbs_get_remote_token_from_mr(NDK_MR* ndk) {
    return self<Mr>(ndk)->rkey.load();
}

// ================================================================ MW

NTSTATUS verbs_create_mw(NDK_PD* ndk, NDK_FN_CREATE_COMPLETION*, PVOID, NDK_MW** out) {
    Pd* pd = self<Pd>(ndk);
    Adapter* a = pd->life.adapter;
    Mw* mw = new_object<Mw>(a, Kind::mw, NdkObjectTypeMw, &kMwDispatch);
    if (!mw) return STATUS_INSUFFICIENT_RESOURCES;
    mw->pd = pd;
    // Type 2 windows are bound by a work request on the QP (NdkBind is one), and can be
    // invalidated locally and remotely (NdkInvalidate, NdkSendAndInvalidate).
    mw->mw = ibv_alloc_mw(pd->pd, a->mw_type2 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
    if (!mw->mw) {
        delete mw;
        return STATUS_INSUFFICIENT_RESOURCES;  // MW-01
    }
    mw->rkey.store(mw->mw->rkey);
    {
        std::lock_guard lock(a->mutex);
        pd->windows.push_back(mw);
    }
    a->adopt(&mw->life, {&pd->life});
    *out = &mw->ndk;
    return STATUS_SUCCESS;
}

void destroy_mw(Mw* mw) {
    Adapter* a = mw->life.adapter;
    {
        std::lock_guard lock(a->mutex);
        std::erase(mw->pd->windows, mw);
        if (mw->bound_mr) --mw->bound_mr->bound_windows;
    }
    if (mw->mw) ibv_dealloc_mw(mw->mw);  // invalidates a bound window
    delete mw;
}

UINT32 verbs_get_remote_token_from_mw(NDK_MW* ndk) {
    return self<Mw>(ndk)->rkey.load();
}  // MW-02

namespace {

// Replaces the device window with a fresh, unbound one: deallocating invalidates the old one and
// drops its references to the QP and the MR. The NDK window keeps its state ("bound, reaching
// nothing", AMB-31) until it is invalidated, rebound or closed.
void reallocate(Mw* mw) {
    Adapter* a = mw->life.adapter;
    if (!mw->bound.load()) return;
    if (mw->mw) ibv_dealloc_mw(mw->mw);
    mw->mw = ibv_alloc_mw(mw->pd->pd, a->mw_type2 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
    if (mw->mw) mw->rkey.store(mw->mw->rkey);
    mw->bound_qp.store(nullptr);
    mw->orphaned.store(true);
}

}  // namespace

void unbind_windows_of(Qp* qp) {
    Adapter* a = qp->life.adapter;
    std::lock_guard lock(a->mutex);
    for (Mw* mw : qp->pd->windows)
        if (mw->bound_qp.load() == qp) reallocate(mw);
    // The windows of fast registrations made through this QP too: the region stays registered
    // (its local token works), its remote token reaches nothing now (it was reachable through
    // this QP only: type 2B), and a later NdkInvalidate needs no device request.
    for (Mr* mr : qp->pd->fast_mrs)
        if (mr->fr_window_qp.load() == qp && mr->fr_window_bound.exchange(false)) {
            ibv_dealloc_mw(mr->fr_window);
            mr->fr_window = ibv_alloc_mw(qp->pd->pd, IBV_MW_TYPE_2);
            mr->fr_window_qp.store(nullptr);
        }
}

void orphan_window_bound_elsewhere(Mw* mw, const Qp* qp) {
    if (!mw->bound.load() || mw->orphaned.load() || mw->bound_qp.load() == qp) return;
    std::lock_guard lock(mw->life.adapter->mutex);
    reallocate(mw);
}

void unbind_windows_of(Mr* mr) {
    Adapter* a = mr->life.adapter;
    std::lock_guard lock(a->mutex);
    for (Mw* mw : mr->pd->windows)
        if (mw->bound_mr == mr && !mw->orphaned.load()) reallocate(mw);
}

}  // namespace ndkct::adapters::verbs
