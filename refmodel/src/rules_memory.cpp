// Memory: adapter information, PDs, memory regions and their tokens, windows, logical address
// mappings, and the three memory work requests (NdkFastRegister, NdkBind, NdkInvalidate).
// Four of the five seed functions are here; NdkCreateQp is in rules_qp.cpp.
#include <algorithm>

#include "ndkct/model/model.hpp"

namespace ndkct::model {

namespace {

constexpr uint32_t kLamHeader = offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray);  // 16

uint64_t pages_spanned(uint64_t first_byte_offset, uint64_t length) {
    return (first_byte_offset + length + PAGE_SIZE - 1) / PAGE_SIZE;
}

// RMR-FLG-01, RMR-FLG-03/04: MR flag bits to rights. 0x5 carries local write; 0x4 is the
// remote-write bit (AMB-03: alone it is read as 0x5 unless the profile rejects it). Local read
// needs no bit (RMR-FLG-02: sources are resolved with no right needed); 0x8 makes a read sink
// (RMR-SINK-03).
uint32_t mr_access(uint32_t flags) {
    uint32_t access = 0;
    if (flags & (NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDKCT_MR_FLAG_REMOTE_WRITE_BIT))
        access |= kLocalWrite;
    if (flags & NDK_MR_FLAG_ALLOW_REMOTE_READ) access |= kRemoteRead;
    if (flags & NDKCT_MR_FLAG_REMOTE_WRITE_BIT) access |= kRemoteWrite;
    if (flags & NDK_MR_FLAG_RDMA_READ_SINK) access |= kReadSink;
    return access;
}

// FR-FLG-01, FR-FLG-03..05, BND-07: work-request rights. 0x30 carries 0x10; 0x20 is the remote
// bit; 0x80 makes a read sink (FR-SINK-03). Local read needs no flag (FR-FLG-02).
uint32_t op_access(uint32_t flags) {
    uint32_t access = 0;
    if (flags & (NDK_OP_FLAG_ALLOW_LOCAL_WRITE | NDKCT_OP_FLAG_REMOTE_WRITE_BIT))
        access |= kLocalWrite;
    if (flags & NDK_OP_FLAG_ALLOW_REMOTE_READ) access |= kRemoteRead;
    if (flags & NDKCT_OP_FLAG_REMOTE_WRITE_BIT) access |= kRemoteWrite;
    if (flags & NDK_OP_FLAG_RDMA_READ_SINK) access |= kReadSink;
    return access;
}

std::string num(uint64_t v) {
    return std::to_string(v);
}

}  // namespace

// ======================= NdkQueryAdapterInfo (AI-*, AMB-23) =======================

Expectation Model::expect_call(const calls::QueryAdapterInfo& c) const {
    Expectation e;
    if (!require(e, c.adapter, Kind::adapter, "pNdkAdapter")) return e;
    e.no_pending_rules = {"AI-01"};  // synchronous, blocks until done
    e.success_rules = {"AI-06"};
    if (!c.has_buffer) {
        e.undefined = true;
        e.undefined_rules = {"AI-06"};
        e.undefined_why = "pInfo is NULL";
        return e;
    }
    if (c.buffer_size < NDK_ADAPTER_INFO_V1_SIZE) {
        e.fail(STATUS_BUFFER_TOO_SMALL, {"AI-05"}, Strength::documented,
               "*pBufferSize " + num(c.buffer_size) + " is below the information's size");
    } else if (c.buffer_size < sizeof(NDK_ADAPTER_INFO)) {
        // AMB-23: a 96-byte buffer (the layout without RdmaTechnology) may or may not do.
        ExpectedFailure alt{
            STATUS_BUFFER_TOO_SMALL, {"AMB-23"}, Strength::model_choice, "a 96..103-byte buffer"};
        if (readings_.adapter_info_accepts_96) {
            e.tolerated.push_back(alt);
        } else {
            e.fail(STATUS_BUFFER_TOO_SMALL, {"AI-05", "AMB-23"}, Strength::reading,
                   "the profile requires the 104-byte layout");
        }
    }
    return e;
}

void Model::commit(const calls::QueryAdapterInfo& c, const Observed& o, Applied& applied,
                   Stage stage) {
    uint32_t full = sizeof(NDK_ADAPTER_INFO);
    if (stage == Stage::refused) {
        // AI-05: the required size is written back.
        if (o.status == STATUS_BUFFER_TOO_SMALL &&
            (!o.size_out || (*o.size_out != full && *o.size_out != NDK_ADAPTER_INFO_V1_SIZE)))
            applied.verdict.add({{"AI-05"},
                                 "NdkQueryAdapterInfo returned STATUS_BUFFER_TOO_SMALL "
                                 "without writing the required size to *pBufferSize"});
        return;
    }
    if (stage != Stage::done) return;
    uint32_t written = c.buffer_size >= full ? full : NDK_ADAPTER_INFO_V1_SIZE;
    if (o.size_out && *o.size_out != written && !(written == full && *o.size_out == full))
        applied.verdict.add({{"AI-06"},
                             "NdkQueryAdapterInfo succeeded but set *pBufferSize to " +
                                 num(*o.size_out) + ", not the " + num(written) +
                                 " bytes written"});
    if (!o.adapter_info) return;
    const NDK_ADAPTER_INFO& info = *o.adapter_info;
    if (info.FRMRPageCount < 16)  // AI-02
        applied.verdict.add(
            {{"AI-02"},
             "NDK_ADAPTER_INFO.FRMRPageCount is " + num(info.FRMRPageCount) + ", below 16"});
    // VER-02, VER-06, VER-01: the negotiated version, {Major, Minor}: the requested major at the
    // provider's highest minor (in check mode the harness reads it from this very call once, so
    // only the major is held to the profile).
    if (info.Version.Major != readings_.version.Major ||
        (mode_ == Mode::simulate && info.Version.Minor != readings_.version.Minor))
        applied.verdict.add({{"VER-02", "VER-06"},
                             "NDK_ADAPTER_INFO.Version is " + num(info.Version.Major) + "." +
                                 num(info.Version.Minor) + ", not " + num(readings_.version.Major) +
                                 "." + num(readings_.version.Minor)});
    // VER-09, AI-FLAG-05: read-with-local-invalidate is a 1.2 capability.
    if (info.Version.Major == 1 && info.Version.Minor < 2 &&
        (info.AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED))
        applied.verdict.add({{"VER-09", "AI-FLAG-05"},
                             "a 1.1 instance reports "
                             "NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED"});
    // AI-11: RdmaTechnology names one transport (1 iWARP .. 4 RoCEv2), when the buffer holds it.
    if (written == full && (info.RdmaTechnology < NdkiWarp || info.RdmaTechnology > NdkRoCEv2))
        applied.verdict.add({{"AI-11"},
                             "NDK_ADAPTER_INFO.RdmaTechnology is " +
                                 num(static_cast<uint32_t>(info.RdmaTechnology)) +
                                 ", not one of the transports 1..4"});
    // In check mode the provider's own limits are the ones its other calls are judged by.
    if (mode_ == Mode::check) {
        if (auto* a = state_mut<AdapterState>(c.adapter)) {
            a->info = info;
            if (written < full) a->info.RdmaTechnology = readings_.adapter_info.RdmaTechnology;
        }
    }
}

// ======================= NdkCreatePd, privileged token (CPD-01, PTOK-*) =======================

Expectation Model::expect_call(const calls::CreatePd& c) const {
    Expectation e;
    if (!require(e, c.adapter, Kind::adapter, "pNdkAdapter")) return e;
    e.may_pend = e.may_lack_resources = true;  // CPD-01, GEN-ASYNC-02
    e.success_rules = {"CPD-01"};
    return e;
}

void Model::commit(const calls::CreatePd& c, const Observed&, Applied& applied, Stage stage) {
    // LIFE-TREE-01: PDs, CQs, connectors, listeners, shared endpoints and LAMs are children of
    // their adapter.
    create_stage(Kind::pd, c.adapter, PdState{}, {}, applied, stage);
}

Expectation Model::expect_call(const calls::GetPrivilegedMemoryRegionToken& c) const {
    Expectation e;
    require(e, c.pd, Kind::pd, "pNdkPd");
    e.returns_void = true;  // PTOK-01: VOID, the token through *pToken
    return e;
}

void Model::commit(const calls::GetPrivilegedMemoryRegionToken& c, const Observed& o, Applied&,
                   Stage) {
    if (auto* pd = state_mut<PdState>(c.pd)) pd->privileged_token = o.value;
}

// ======================= NdkCreateMr (CMR-*) =======================

Expectation Model::expect_call(const calls::CreateMr& c) const {
    Expectation e;
    if (!require(e, c.pd, Kind::pd, "pNdkPd")) return e;
    e.may_pend = e.may_lack_resources = true;  // CMR-02
    e.success_rules = {"CMR-02"};
    return e;
}

void Model::commit(const calls::CreateMr& c, const Observed&, Applied& applied, Stage stage) {
    // LIFE-TREE-03: MRs, MWs, QPs and SRQs are children of their PD.
    MrState mr;
    mr.fast_register = c.fast_register;  // CMR-01: the kind is fixed at creation
    mr.phase = c.fast_register ? MrState::Phase::uninitialized : MrState::Phase::unregistered;
    create_stage(Kind::mr, c.pd, mr, {}, applied, stage);
}

// ======================= NdkRegisterMr (RMR-*) =======================

namespace {
// MODEL-RMR-LEN-02: a Length of 0. The docs say neither that it fails nor that it works: reject
// expects STATUS_INVALID_PARAMETER (an acceptance is a warning), accept expects success (a
// refusal is a warning). DESIGN section 5.
void zero_length_reading(Expectation& e, const Readings& r) {
    if (r.zero_length_mapping_rejected) {
        e.fail(STATUS_INVALID_PARAMETER, {"MODEL-RMR-LEN-02"}, Strength::reading, "Length is 0");
    } else if (!e.may_fail_any) {
        e.may_fail_any = e.any_failure_warns = true;
        e.any_failure_rules = {"MODEL-RMR-LEN-02"};
    }
}
}  // namespace

Expectation Model::expect_call(const calls::RegisterMr& c) const {
    Expectation e;
    const Object* o = require(e, c.mr, Kind::mr, "pNdkMr");
    if (!o) return e;
    const auto& mr = std::get<MrState>(o->state);
    e.may_pend = e.may_lack_resources = true;  // RMR-ST-02, RMR-ST-03
    // RMR-LEN-03 first: it is the rule that says a valid Length must be accepted (RMR-ST-01 says
    // what an inline success means).
    e.success_rules = {"RMR-LEN-03", "RMR-ST-01"};
    // RMR-FLG-01: any OR of the listed values is a valid Flags value; a refusal of one that is
    // not a single row of the table (0x3, 0x7, 0xF ...) breaks it before the general rules. (The
    // remote-write bit 0x4 without 0x1 is no OR of the rows: AMB-03.)
    const uint32_t documented = c.flags & NDKCT_MR_FLAGS_DOCUMENTED;
    const bool lone_remote_write_bit = (documented & NDKCT_MR_FLAG_REMOTE_WRITE_BIT) &&
                                       !(documented & NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
    const bool combined = !lone_remote_write_bit && documented != NDK_MR_FLAG_ALLOW_LOCAL_READ &&
                          documented != NDK_MR_FLAG_ALLOW_LOCAL_WRITE &&
                          documented != NDK_MR_FLAG_ALLOW_REMOTE_READ &&
                          documented != NDK_MR_FLAG_ALLOW_REMOTE_WRITE &&
                          documented != NDK_MR_FLAG_RDMA_READ_SINK;
    if (combined) e.success_rules = {"RMR-FLG-01", "RMR-LEN-03", "RMR-ST-01"};
    if (c.flags & NDK_MR_FLAG_RDMA_READ_SINK) {  // RMR-SINK-02/03: the flag is never the reason
        RuleList rules{adapter_info(c.mr).AdapterFlags &
                               NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED
                           ? "RMR-SINK-02"
                           : "RMR-SINK-03"};
        for (const char* rule : e.success_rules)
            rules.push_back(rule);
        e.success_rules = rules;
    }
    if (mr.indeterminate) {
        e.undefined = true;
        e.undefined_why = "the MR's state is unknown after an earlier consumer error";
        return e;
    }
    if (mr.fast_register) {  // RMR-PRE-01, CMR-03
        wrong_mr_state(e, "RMR-PRE-01", "the MR was created for fast registration");
        return e;
    }
    if (mr.phase != MrState::Phase::unregistered) {  // RMR-PRE-01: not registered twice
        wrong_mr_state(e, "RMR-PRE-01",
                       "the MR is already registered (or its registration "
                       "or deregistration is pending)");
        return e;
    }
    // RMR-MDL-05: a valid chain of several MDLs is accepted as one MDL over the same range is;
    // named first where the Length is whole pages, else after RMR-LEN-03 (the likelier reason
    // for a refusal of a partial page).
    if (c.mdl.present && c.mdl.mdls > 1 && c.mdl.contiguous && c.length > 0 &&
        c.length <= c.mdl.chain_bytes) {
        if (c.length % PAGE_SIZE == 0) {
            RuleList rules{"RMR-MDL-05"};
            for (const char* id : e.success_rules)
                rules.push_back(id);
            e.success_rules = rules;
        } else {
            e.success_rules.push_back("RMR-MDL-05");
        }
    }
    // RMR-MDL-04: only the first Length bytes must be contiguous; a refusal of a chain broken
    // only past them names it first where Length is whole pages (ahead of RMR-MDL-05: such a
    // chain always has several MDLs), else after RMR-LEN-03 (mr_refuses_partial_page_length's).
    if (c.mdl.present && c.mdl.broken_past_length && c.length > 0) {
        RuleList rules;
        if (c.length % PAGE_SIZE == 0) rules.push_back("RMR-MDL-04");
        for (const char* id : e.success_rules) {
            rules.push_back(id);
            if (c.length % PAGE_SIZE != 0 && std::string_view(id) == "RMR-LEN-03")
                rules.push_back("RMR-MDL-04");
        }
        e.success_rules = rules;
    }
    if (mr.lacked_resources) {  // RMR-ST-03: the failed registration left it unregistered
        RuleList rules{"RMR-ST-03"};
        for (const char* id : e.success_rules)
            rules.push_back(id);
        e.success_rules = rules;
    }
    if (!c.mdl.present) {
        e.undefined = true;
        e.undefined_rules = {"RMR-MDL-02"};
        e.undefined_why = "Mdl is NULL";
        return e;
    }
    const NDK_ADAPTER_INFO& info = adapter_info(c.mr);
    if (c.length == 0) zero_length_reading(e, readings_);  // MODEL-RMR-LEN-02
    if (c.length > info.MaxRegistrationSize)               // RMR-LEN-02, MODEL-RMR-LEN-01
        e.fail(readings_.over_max_registration_status, {"RMR-LEN-02", "MODEL-RMR-LEN-01"},
               Strength::model_choice,
               "Length " + num(c.length) + " exceeds MaxRegistrationSize " +
                   num(info.MaxRegistrationSize));
    if (c.length > c.mdl.chain_bytes) {  // RMR-LEN-01 (the caller's duty), AMB-26
        limit_exceeded(e, {"RMR-LEN-01"},
                       "Length " + num(c.length) + " exceeds the chain's " +
                           num(c.mdl.chain_bytes) + " bytes");
    } else if (!c.mdl.contiguous) {  // RMR-MDL-01: the provider must refuse
        // (RMR-MDL-04: view_mdl judges contiguity over the first Length bytes only.)
        e.fail(STATUS_INVALID_PARAMETER, {"RMR-MDL-01"}, Strength::documented, c.mdl.problem);
    }
    // RMR-SINK-02: RDMA_READ_SINK (0x8) is a documented bit and never a reason to fail.
    if (c.flags & ~NDKCT_MR_FLAGS_DOCUMENTED && readings_.unknown_flags_rejected)  // AMB-04
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-04"}, Strength::reading,
               "Flags has undocumented bits");
    if ((c.flags & NDKCT_MR_FLAG_REMOTE_WRITE_BIT) && !(c.flags & NDK_MR_FLAG_ALLOW_LOCAL_WRITE) &&
        readings_.lone_remote_write_bit_rejected)  // AMB-03
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-03"}, Strength::reading,
               "Flags has the remote-write bit 0x4 without local write 0x1");
    return e;
}

void Model::commit(const calls::RegisterMr& c, const Observed& o, Applied&, Stage stage) {
    auto* mr = state_mut<MrState>(c.mr);
    // RMR-ST-03: a lack of resources, either form, leaves the MR unregistered.
    mr->lacked_resources = (stage == Stage::failed || stage == Stage::refused) &&
                           o.status == STATUS_INSUFFICIENT_RESOURCES;
    switch (stage) {
        case Stage::pending:
            mr->phase = MrState::Phase::registering;
            break;
        case Stage::done:
        case Stage::completed:
            // RMR-VA-01: the region is [MmGetMdlVirtualAddress, + Length), an index space.
            // RMR-VA-03: the VA is only a label; bytes move through the chain's PFNs, which are
            // the same however the chain is split (RMR-MDL-05).
            mr->phase = MrState::Phase::registered;
            mr->flags = c.flags;
            mr->region = {c.mdl.virtual_address, c.length,     c.mdl.first_byte_offset, c.mdl.pfns,
                          mr_access(c.flags),    c.mdl.va_pfns};
            set_token(c.mr, false, std::nullopt);
            set_token(c.mr, true, std::nullopt);
            break;
        case Stage::failed:
            mr->phase = MrState::Phase::unregistered;
            break;
        case Stage::refused:  // RMR-ST-04: an inline failure registers nothing
            break;
    }
}

// ======================= NdkDeregisterMr (DMR-*) =======================

Expectation Model::expect_call(const calls::DeregisterMr& c) const {
    Expectation e;
    const Object* o = require(e, c.mr, Kind::mr, "pNdkMr");
    if (!o) return e;
    const auto& mr = std::get<MrState>(o->state);
    e.may_pend = true;  // DMR-01
    e.success_rules = {"DMR-01"};
    if (mr.indeterminate) {
        e.undefined = true;
        return e;
    }
    if (mr.fast_register || mr.phase != MrState::Phase::registered) {  // DMR-02
        wrong_mr_state(
            e, "DMR-02",
            mr.fast_register ? "the MR is a fast-register MR" : "the MR is not registered");
        return e;
    }
    if (!mr.bound_windows.empty() && readings_.deregister_with_bound_mw_rejected)  // AMB-31
        e.fail(STATUS_INVALID_DEVICE_STATE, {"AMB-31"}, Strength::reading,
               "windows are bound to the MR");
    return e;
}

void Model::commit(const calls::DeregisterMr& c, const Observed&, Applied&, Stage stage) {
    auto* mr = state_mut<MrState>(c.mr);
    switch (stage) {
        case Stage::pending:
            mr->phase = MrState::Phase::deregistering;
            break;
        case Stage::done:
        case Stage::completed:
            // RMR-DEREG-01: the tokens reach nothing once the deregistration completed.
            // DMR-03: the MR object stays open (unregistered), to be registered again or closed.
            if (auto* a = state_mut<AdapterState>(objects_[c.mr].adapter))
                for (const auto& token : {mr->local_token, mr->remote_token})
                    if (token) a->deregistered_tokens[*token] = c.mr;
            mr->phase = MrState::Phase::unregistered;
            mr->region = {};
            set_token(c.mr, false, std::nullopt);
            set_token(c.mr, true, std::nullopt);
            // AMB-31 (allow): windows bound to it stay bound but reach nothing.
            for (ObjectId w : mr->bound_windows)
                if (auto* mw = state_mut<MwState>(w)) mw->region.access = 0;
            break;
        case Stage::failed:
            mr->phase = MrState::Phase::registered;
            break;
        case Stage::refused:
            break;
    }
}

// ======================= NdkInitializeFastRegisterMr (IFR-*) =======================

Expectation Model::expect_call(const calls::InitializeFastRegisterMr& c) const {
    Expectation e;
    const Object* o = require(e, c.mr, Kind::mr, "pNdkMr");
    if (!o) return e;
    const auto& mr = std::get<MrState>(o->state);
    e.may_pend = e.may_lack_resources = true;  // IFR-ST-02
    // A refusal of a count up to max(16, FRMRPageCount) breaks IFR-APC-04 first (above it,
    // success_rules is replaced below); IFR-RA-02 and IFR-ST-01 follow.
    e.success_rules = {"IFR-APC-04", "IFR-RA-02", "IFR-ST-01"};
    if (mr.indeterminate) {
        e.undefined = true;
        return e;
    }
    if (!mr.fast_register) {  // IFR-PRE-01
        wrong_mr_state(e, "IFR-PRE-01", "the MR was created with FastRegister = FALSE");
        return e;
    }
    using P = MrState::Phase;
    if (mr.phase != P::uninitialized) {  // AMB-10: initializing the same MR again
        bool allowed = false;
        switch (readings_.fr_reinitialize) {
            case Readings::FrReinitialize::allow_always:
                allowed = mr.phase != P::initializing;
                break;
            case Readings::FrReinitialize::allow_when_unregistered:
                allowed = mr.phase == P::initialized || mr.phase == P::invalidated;
                break;
            case Readings::FrReinitialize::reject:
                break;
        }
        // AMB-10, INV-01: likewise an NdkInvalidate of the MR in flight: the device may already
        // have run it, and then the MR is free to be initialized again.
        if (!allowed && mode_ == Mode::check && mr.phase == P::fast_registered &&
            request_in_flight(c.mr, NdkOperationTypeInvalidate))
            e.also_allowed.push_back({STATUS_INVALID_DEVICE_STATE,  // and success
                                      {"IFR-CONC-01", "AMB-10", "INV-01"},
                                      Strength::model_choice,
                                      "an NdkInvalidate of the MR is still in flight"});
        else if (!allowed)
            e.fail(STATUS_INVALID_DEVICE_STATE, {"AMB-10"}, Strength::reading,
                   "the MR is already initialized or has a valid fast registration");
        else if (mode_ == Mode::check && request_in_flight(c.mr, NdkOperationTypeFastRegister))
            // AMB-10, FR-TOK-01: the model ran the MR's NdkFastRegister when it was posted (and
            // found it flushed, or failing); the device decides when it runs it, and until its
            // entry is retrieved the consumer cannot know whether a registration is in force.
            e.also_allowed.push_back({STATUS_INVALID_DEVICE_STATE,
                                      {"AMB-10", "FR-TOK-01"},
                                      Strength::model_choice,
                                      "a NdkFastRegister of the MR is still in flight"});
    }
    if (c.adapter_page_count == 0) {
        if (readings_.zero_adapter_page_count_rejected) {  // IFR-APC-03, AMB-09
            e.fail(STATUS_INVALID_PARAMETER, {"IFR-APC-03", "AMB-09"}, Strength::reading,
                   "AdapterPageCount is 0");
        } else if (!e.may_fail_any) {  // accept: a refusal is the reading not chosen
            e.may_fail_any = e.any_failure_warns = true;
            e.any_failure_rules = {"IFR-APC-03", "AMB-09"};
        }
        return e;
    }
    // IFR-APC-04, AI-02: up to max(16, FRMRPageCount) must work. Above it the threshold is the
    // adapter's and unadvertised (IFR-APC-02, AMB-08): STATUS_IMPLEMENTATION_LIMIT or success.
    uint32_t guaranteed = std::max<uint32_t>(16, adapter_info(c.mr).FRMRPageCount);
    if (c.adapter_page_count > guaranteed) {
        // IFR-APC-02: a count beyond what the adapter can handle is refused with the status the
        // page names for it; a shortage of resources does not explain the refusal of a count
        // (the page lists no STATUS_INSUFFICIENT_RESOURCES), so the refusal names IFR-APC-02.
        e.may_lack_resources = false;
        e.success_rules = {"IFR-APC-02", "IFR-ST-01"};
        e.also_allowed.push_back({STATUS_IMPLEMENTATION_LIMIT,
                                  {"IFR-APC-02", "AMB-08"},
                                  Strength::documented,
                                  "AdapterPageCount " + num(c.adapter_page_count) +
                                      " is beyond the guaranteed " + num(guaranteed)});
        if (c.adapter_page_count > std::max(guaranteed, readings_.max_frmr_pages))
            e.preferred = STATUS_IMPLEMENTATION_LIMIT;  // the reference provider's limit
    }
    // IFR-CONC-01: initializations of different MRs may be issued back to back; a refusal of
    // this one while another MR's is still pending breaks that rule first.
    const bool another_pending =
        std::any_of(objects_.begin(), objects_.end(), [&](const Object& x) {
            const auto* other = std::get_if<MrState>(&x.state);
            return x.id != c.mr && x.kind == Kind::mr && x.life == Life::ready && other &&
                   other->phase == P::initializing;
        });
    if (another_pending) {
        RuleList rules{"IFR-CONC-01"};
        for (const char* rule : e.success_rules)
            rules.push_back(rule);
        e.success_rules = rules;
    }
    return e;
}

void Model::commit(const calls::InitializeFastRegisterMr& c, const Observed&, Applied&,
                   Stage stage) {
    auto* mr = state_mut<MrState>(c.mr);
    switch (stage) {
        case Stage::pending:
            mr->pending_init_valid = !expect_call(c).must_fail();  // (before the state moves)
            ++mr->changes;
            mr->phase_before_init = mr->phase;
            mr->max_pages_before_init = mr->max_pages;
            mr->remote_access_before_init = mr->remote_access;
            mr->phase = MrState::Phase::initializing;
            mr->max_pages = c.adapter_page_count;
            mr->remote_access = c.remote_access;
            break;
        case Stage::done:
        case Stage::completed:
            ++mr->changes;
            mr->phase = MrState::Phase::initialized;  // IFR-POST-01: usable for NdkFastRegister
            mr->max_pages = c.adapter_page_count;
            mr->remote_access = c.remote_access;
            mr->region = {};
            mr->reinit_failed = false;
            set_token(c.mr, false, std::nullopt);
            set_token(c.mr, true, std::nullopt);
            break;
        case Stage::failed:
            // IFR-ST-03: a failed initialization initializes nothing; what it leaves of an
            // earlier one is AMB-38's reading.
            mr->phase = mr->phase_before_init;
            mr->max_pages = mr->max_pages_before_init;
            mr->remote_access = mr->remote_access_before_init;
            if (mr->pending_init_valid) initialization_failed(c.mr);
            break;
        case Stage::refused:
            // IFR-ST-03: an inline failure initializes nothing. A call that had to be refused
            // (AMB-10, AMB-16) changes nothing either; a valid one that failed is AMB-38's.
            if (!expect_call(c).must_fail() && !mr->indeterminate) initialization_failed(c.mr);
            break;
    }
}

// AMB-38: a valid initialization failed. keep_previous: an earlier initialization stays in
// force; unusable: the MR can be fast-registered only after a later one succeeds.
void Model::initialization_failed(ObjectId id) {
    auto* mr = state_mut<MrState>(id);
    using P = MrState::Phase;
    bool was_usable = mr->phase == P::initialized || mr->phase == P::fast_registered ||
                      mr->phase == P::invalidated;
    if (!was_usable) return;
    mr->reinit_failed = true;
    if (!readings_.fr_failed_init_unusable) return;
    ++mr->changes;
    mr->phase = P::uninitialized;
    mr->max_pages = 0;
    mr->region = {};
    set_token(id, false, std::nullopt);
    set_token(id, true, std::nullopt);
}

// ======================= Tokens (TOK-*, MW-02) =======================

Expectation Model::expect_call(const calls::GetLocalTokenFromMr& c) const {
    Expectation e;
    const Object* o = require(e, c.mr, Kind::mr, "pNdkMr");
    e.returns_void = true;
    if (!o) return e;
    const auto& mr = std::get<MrState>(o->state);
    using P = MrState::Phase;
    bool ready = mr.phase == P::registered || mr.phase == P::initialized ||
                 mr.phase == P::fast_registered || mr.phase == P::invalidated;
    // TOK-04: only after the registration completed: RMR-TOK-01, RMR-TOK-02 (NdkRegisterMr),
    // IFR-TOK-01, IFR-TOK-02 (NdkInitializeFastRegisterMr; the remote token's life is AMB-07).
    if (!ready || mr.indeterminate) {
        e.undefined = true;
        e.undefined_rules = {"TOK-04"};
        e.undefined_why = "the MR has no completed registration";
    }
    return e;
}

void Model::commit(const calls::GetLocalTokenFromMr& c, const Observed& o, Applied& applied,
                   Stage) {
    auto* mr = state_mut<MrState>(c.mr);
    if (mr->local_token && *mr->local_token != o.value &&
        mr->phase == MrState::Phase::registered)  // TOK-01: one token per registration
        applied.verdict.add({{"TOK-01"},
                             "NdkGetLocalTokenFromMr returned a different token for "
                             "the same registration"});
    set_token(c.mr, false, o.value);
    // IFR-TOK-01, AMB-40: read before the MR's first fast registration since its initialization.
    if (mr->phase == MrState::Phase::initialized && !mr->indeterminate) {
        mr->initialized_local_token = o.value;
        mr->initialized_local_changes = mr->changes;
        if (auto* a = state_mut<AdapterState>(objects_[c.mr].adapter))
            a->initialized_local_tokens[o.value] = c.mr;
    }
}

Expectation Model::expect_call(const calls::GetRemoteTokenFromMr& c) const {
    return expect_call(calls::GetLocalTokenFromMr{c.mr});
}

void Model::commit(const calls::GetRemoteTokenFromMr& c, const Observed& o, Applied& applied,
                   Stage) {
    auto* mr = state_mut<MrState>(c.mr);
    // AMB-07: with stable_from_initialize the value must not change across fast registrations.
    if (mr->remote_token && *mr->remote_token != o.value &&
        (mr->phase == MrState::Phase::registered || readings_.fr_token_stable_from_initialize))
        applied.verdict.add({{"TOK-02", "AMB-07"},
                             "NdkGetRemoteTokenFromMr returned a different token than before "
                             "for the same registration"});
    set_token(c.mr, true, o.value);
}

Expectation Model::expect_call(const calls::GetRemoteTokenFromMw& c) const {
    Expectation e;
    const Object* o = require(e, c.mw, Kind::mw, "pNdkMw");
    e.returns_void = true;
    if (o && !std::get<MwState>(o->state).bound) {  // MW-02: after NdkBind returned
        e.undefined = true;
        e.undefined_rules = {"MW-02"};
        e.undefined_why = "the MW was never bound";
    }
    return e;
}

void Model::commit(const calls::GetRemoteTokenFromMw& c, const Observed& o, Applied&, Stage) {
    set_token(c.mw, true, o.value);
}

// ======================= NdkCreateMw (MW-01) =======================

Expectation Model::expect_call(const calls::CreateMw& c) const {
    Expectation e;
    if (!require(e, c.pd, Kind::pd, "pNdkPd")) return e;
    e.may_pend = e.may_lack_resources = true;
    e.success_rules = {"MW-01"};
    return e;
}

void Model::commit(const calls::CreateMw& c, const Observed&, Applied& applied, Stage stage) {
    create_stage(Kind::mw, c.pd, MwState{}, {}, applied, stage);
}

// ======================= NdkBuildLam (LAM-*) =======================

Expectation Model::expect_call(const calls::BuildLam& c) const {
    Expectation e;
    if (!require(e, c.adapter, Kind::adapter, "pNdkAdapter")) return e;
    e.may_pend = c.has_completion;  // LAM-ST-02; AMB-06: never pend without a callback
    e.may_lack_resources = true;    // LAM-ST-03
    e.success_rules = {"LAM-ST-01", "LAM-MDL-04"};
    if (!c.has_completion && readings_.build_lam_null_completion_rejected)  // AMB-06
        e.fail(STATUS_INVALID_PARAMETER, {"LAM-CB-01", "AMB-06"}, Strength::reading,
               "RequestCompletion is NULL");
    if (!c.mdl.present) {
        e.undefined = true;
        e.undefined_rules = {"LAM-MDL-02"};
        e.undefined_why = "Mdl is NULL";
        return e;
    }
    if (c.length == 0) zero_length_reading(e, readings_);  // MODEL-RMR-LEN-02
    // LAM-LEN-01: the MDL chain alone bounds Length (MaxRegistrationSize bounds NdkRegisterMr,
    // not a mapping: RMR-LEN-02).
    if (c.length > c.mdl.chain_bytes) {  // LAM-LEN-01 (the caller's duty), AMB-26
        limit_exceeded(e, {"LAM-LEN-01"},
                       "Length " + num(c.length) + " exceeds the chain's " +
                           num(c.mdl.chain_bytes) + " bytes");
        return e;
    }
    if (!c.mdl.contiguous) {  // LAM-MDL-01: the provider must refuse
        e.fail(STATUS_INVALID_PARAMETER, {"LAM-MDL-01"}, Strength::documented, c.mdl.problem);
        return e;
    }
    // LAM-MDL-04: contiguous for Length bytes is enough; a refusal of such a chain broken only
    // past them breaks that rule first.
    if (c.mdl.broken_past_length) e.success_rules = {"LAM-MDL-04", "LAM-ST-01"};
    uint64_t required = kLamHeader + 8 * pages_spanned(c.mdl.first_byte_offset, c.length);
    if (!c.has_buffer) {  // LAM-SIZE-03, AMB-14
        // LAM-OUT-01: a success would have to write the mapping through pNdkLAM; how the
        // refusal is made is the reading.
        if (readings_.build_lam_null_buffer_probe)
            e.fail(STATUS_BUFFER_TOO_SMALL, {"LAM-OUT-01", "LAM-SIZE-03", "AMB-14"},
                   Strength::model_choice, "pNdkLAM is NULL (a size probe)");
        else
            e.fail(STATUS_INVALID_PARAMETER, {"LAM-OUT-01", "LAM-SIZE-03", "AMB-14"},
                   Strength::model_choice, "pNdkLAM is NULL");
    } else if (c.buffer_size < required) {  // LAM-SIZE-01 (the required size does: LAM-SIZE-05)
        e.fail(
            STATUS_BUFFER_TOO_SMALL, {"LAM-SIZE-01"}, Strength::documented,
            "*pLAMSize " + num(c.buffer_size) + " is below the " + num(required) + " bytes needed");
    } else {  // LAM-SIZE-05: a buffer of the required size (the one reported) is never too small
        e.refused_with = STATUS_BUFFER_TOO_SMALL;
        e.refused_with_rules = {"LAM-SIZE-05"};
        // LAM-ERR-01, LAM-ST-03: no shortage can explain a refusal here; failed requests
        // (their partial mappings) kept what a success found free.
        if (RuleList leak = lam_refusal_rules(c); !leak.empty()) {
            e.may_lack_resources = false;
            for (const char* id : e.success_rules)
                leak.push_back(id);
            e.success_rules = leak;
        }
    }
    return e;
}

// LAM-ERR-01, LAM-ST-03. A request that fails must release what it built; one that fails for
// want of resources leaves no mapping behind. A leak shows only as a later shortage, so the
// model keeps one witness (lam_witness_): an NdkBuildLam of P pages that succeeded while
// nothing else was pending. While only failed NdkBuildLam requests and NdkReleaseLam calls
// follow it, the mappings live are a subset of those live at that success once its own mapping
// is released too; the adapter then has at least the room it had then, whatever its allocator
// (pages, entries, contiguous ranges, a count of mappings). A refusal with
// STATUS_INSUFFICIENT_RESOURCES of at most P pages is then owed to what the failed requests
// in between kept: LAM-ERR-01, and LAM-ST-03 first when one of them had itself failed for want
// of resources. Sound only within that window, so it ends with any other call or callback, on
// any adapter (another adapter may share the device; an object created, a completion
// delivered, may take the same resources), and is not judged while a request is pending or
// before any request failed (a release that kept its pages is LAM-REL-01's, not these rules').
// The shortage is taken to be the adapter's own: a provider's transient system allocation
// failure inside the window would look the same (the suite runs with no such pressure).
RuleList Model::lam_refusal_rules(const calls::BuildLam& c) const {
    const LamWitness& w = lam_witness_;
    if (w.adapter == 0 || w.adapter != c.adapter || w.failures == 0 || !c.mdl.present ||
        pages_spanned(c.mdl.first_byte_offset, c.length) > w.pages || !pending_.empty())
        return {};
    if (const Object* built = find(w.mapping); built && built->life == Life::ready) return {};
    if (w.lacked_resources > 0) return {"LAM-ST-03", "LAM-ERR-01"};
    return {"LAM-ERR-01"};
}

void Model::commit(const calls::BuildLam& c, const Observed& o, Applied& applied, Stage stage) {
    uint64_t pages = c.mdl.present ? pages_spanned(c.mdl.first_byte_offset, c.length) : 0;
    uint64_t required = kLamHeader + 8 * pages;
    if (stage == Stage::pending) {
        // AMB-15: with inline_only, a too-small buffer should have been refused inline.
        if (c.has_buffer && c.buffer_size < required && !readings_.build_lam_size_check_async)
            applied.verdict.add({{"AMB-15"},
                                 "NdkBuildLam pended for a buffer too small to hold "
                                 "the mapping instead of refusing it inline",
                                 true});
        return;
    }
    // LAM-ST-04, LAM-ERR-01: a failure leaves no mapping behind (one is created on success only).
    if (stage == Stage::refused || stage == Stage::failed) {
        if (lam_witness_.adapter == c.adapter) {  // LAM-ERR-01, LAM-ST-03 (lam_refusal_rules)
            ++lam_witness_.failures;
            if (o.status == STATUS_INSUFFICIENT_RESOURCES) ++lam_witness_.lacked_resources;
        }
        // LAM-SIZE-04, LAM-SIZE-02: BUFFER_TOO_SMALL writes a size that will do.
        if (o.status == STATUS_BUFFER_TOO_SMALL) {
            // LAM-SIZE-04: a size left as the caller passed it (below the need) was not written.
            if (!o.size_out || (*o.size_out == c.buffer_size && *o.size_out < required))
                applied.verdict.add({{"LAM-SIZE-04"},
                                     "NdkBuildLam returned STATUS_BUFFER_TOO_SMALL "
                                     "without writing the required size (*pLAMSize "
                                     "is still the " +
                                         num(c.buffer_size) + " passed in)"});
            else if (*o.size_out < required)
                applied.verdict.add({{"LAM-SIZE-02"},
                                     "NdkBuildLam reported a required size of " + num(*o.size_out) +
                                         " bytes, below the " + num(required) + " a mapping of " +
                                         num(pages) + " pages needs"});
        }
        return;
    }
    // Success: check the mapping the provider wrote (LAM-OUT-01), then keep it.
    size_t count = o.lam_pages.size();
    if (count == 0 && pages > 0 && c.has_buffer)  // LAM-OUT-01: no entries given at all
        applied.verdict.add({{"LAM-OUT-01", "LAM-PAGE-02"},
                             "the mapping's AdapterPageCount is 0: it gives none of the " +
                                 num(pages) + " pages the range spans"});
    else if (count < pages)  // LAM-PAGE-02
        applied.verdict.add({{"LAM-PAGE-02"},
                             "the mapping has " + num(count) +
                                 " pages; the range "
                                 "spans " +
                                 num(pages)});
    for (size_t i = 0; i < count; ++i)
        if (o.lam_pages[i] % PAGE_SIZE != 0) {  // LAM-PAGE-01
            applied.verdict.add({{"LAM-PAGE-01"},
                                 "AdapterPageArray[" + num(i) + "] = " + num(o.lam_pages[i]) +
                                     " is not PAGE_SIZE-aligned"});
            break;
        }
    // LAM-OUT-02: the bytes written hold at least the header and the pages (the page says
    // only "the number of bytes written"; a provider may write more, up to the buffer's size).
    if (o.size_out && *o.size_out < kLamHeader + 8 * count)
        applied.verdict.add({{"LAM-OUT-02"},
                             "*pLAMSize is " + num(*o.size_out) + " after success, below the " +
                                 num(kLamHeader + 8 * count) + " bytes of the mapping written"});
    if (o.size_out && *o.size_out > c.buffer_size)
        applied.verdict.add({{"LAM-OUT-02"}, "*pLAMSize grew past the buffer size passed in"});
    if (o.fbo_out && *o.fbo_out != c.mdl.first_byte_offset)  // LAM-OUT-03
        applied.verdict.add({{"LAM-OUT-03"},
                             "*pFBO is " + num(*o.fbo_out) + ", not " +
                                 num(c.mdl.first_byte_offset) +
                                 " (the first byte's offset in its page)"});
    // Two pages of live mappings at one logical address would alias memory.
    if (const auto* a = state_of<AdapterState>(c.adapter))
        for (size_t j = 0; j < count && j < c.mdl.pfns.size(); ++j) {
            auto it = a->logical_pages.find(o.lam_pages[j]);
            if (it == a->logical_pages.end()) continue;
            for (const auto& [lam_id, index] : it->second) {
                const Object& other = objects_[lam_id];
                if (other.life != Life::ready) continue;
                if (std::get<LamState>(other.state).pfns[index] != c.mdl.pfns[j])
                    applied.verdict.add({{"LAM-PAGE-02"},
                                         "logical address " + num(o.lam_pages[j]) +
                                             " already maps another page in LAM " + num(other.id)});
            }
        }
    // LAM-VA-01: the VA is kept as a label; the mapping reaches memory through the PFNs only.
    LamState lam{c.mdl.virtual_address, c.length, c.mdl.first_byte_offset, c.mdl.pfns,
                 std::vector<uint64_t>(o.lam_pages.begin(),
                                       o.lam_pages.begin() + std::min(count, c.mdl.pfns.size()))};
    if (const auto* a = state_of<AdapterState>(c.adapter)) lam.releases_before = a->lam_releases;
    if (c.mdl.va_pfns.size() == c.mdl.pfns.size()) lam.va_pfns = c.mdl.va_pfns;  // LAM-VA-01
    applied.created = create_object(Kind::lam, c.adapter, std::move(lam));
    ready(applied.created);
    // LAM-ERR-01, LAM-ST-03: a success with nothing else pending is the new witness of the room
    // the adapter has (lam_refusal_rules).
    lam_witness_ = {};
    if (pending_.empty()) lam_witness_ = {c.adapter, applied.created, pages, 0, 0};
}

Expectation Model::expect_call(const calls::ReleaseLam& c) const {
    Expectation e;
    e.returns_void = true;  // RLAM-01
    const Object* o = find(c.lam);
    if (!o || o->kind != Kind::lam || o->life != Life::ready || o->adapter != c.adapter) {
        e.undefined = true;  // RLAM-02
        e.undefined_rules = {"RLAM-02"};
        e.undefined_why = "not a live mapping of this adapter";
    }
    return e;
}

void Model::commit(const calls::ReleaseLam& c, const Observed&, Applied&, Stage) {
    const Object* o = find(c.lam);
    if (o && o->kind == Kind::lam && o->life == Life::ready)
        if (auto* a = state_mut<AdapterState>(o->adapter)) ++a->lam_releases;
    destroy(c.lam);  // LAM-REL-01: its logical addresses reach nothing from now on
}

// LAM-REL-01: some SGE with the QP's PD's privileged token reaches a page through a live LAM
// built before another mapping of the adapter was released. If such a request fails where the
// model has it succeed, that release taking this LAM's pages with it is the likely reason.
bool Model::through_lam_outliving_release(ObjectId qp, const std::vector<Sge>& sgl) const {
    const Object& qo = objects_[qp];
    const auto* pd = state_of<PdState>(std::get<QpState>(qo.state).pd);
    const auto* a = state_of<AdapterState>(qo.adapter);
    if (!pd || !pd->privileged_token || !a || a->lam_releases == 0) return false;
    for (const Sge& sge : sgl) {
        if (sge.token != *pd->privileged_token || sge.length == 0) continue;
        uint64_t first = sge.address & ~uint64_t(PAGE_SIZE - 1);
        for (uint64_t page = first; page < sge.address + sge.length; page += PAGE_SIZE) {
            auto it = a->logical_pages.find(page);
            if (it == a->logical_pages.end()) continue;
            for (const auto& [lam_id, index] : it->second)  // the mapping pfn_of_logical uses
                if (objects_[lam_id].life == Life::ready) {
                    if (std::get<LamState>(objects_[lam_id].state).releases_before <
                        a->lam_releases)
                        return true;
                    break;
                }
        }
    }
    return false;
}

// LAM-REL-01: a logical address maps its page while its LAM is live (until NdkReleaseLam).
bool Model::request_in_flight(ObjectId target, NDK_OPERATION_TYPE type) const {
    for (ObjectId id : qps_) {  // every QP, closed ones included; not every object
        const auto& q = std::get<QpState>(objects_[id].state);
        for (const Completion& done : q.initiator_pending)
            if (done.type == type && done.target == target) return true;
        for (const WorkRequest& wr : q.initiator) {
            if (const auto* fr = std::get_if<calls::FastRegister>(&wr.call))
                if (type == NdkOperationTypeFastRegister && fr->mr == target) return true;
            if (const auto* inv = std::get_if<calls::Invalidate>(&wr.call))
                if (type == NdkOperationTypeInvalidate && inv->target == target) return true;
            if (const auto* bind = std::get_if<calls::Bind>(&wr.call))
                if (type == NdkOperationTypeBind && bind->mw == target) return true;
        }
    }
    return false;
}

std::optional<PFN_NUMBER> Model::pfn_of_logical(ObjectId adapter, uint64_t logical) const {
    uint64_t page = logical & ~uint64_t(PAGE_SIZE - 1);
    const auto* a = state_of<AdapterState>(adapter);
    if (!a) return std::nullopt;
    auto it = a->logical_pages.find(page);
    if (it == a->logical_pages.end()) return std::nullopt;
    for (const auto& [lam_id, index] : it->second)  // the oldest live mapping of the page
        if (objects_[lam_id].life == Life::ready)
            return std::get<LamState>(objects_[lam_id].state).pfns[index];
    return std::nullopt;
}

// ======================= NdkFastRegister (FR-*) =======================

namespace {

// The lowest address no x86-64 or arm64 user-space pointer has (bit 47 set, 48-bit virtual
// addresses): a fast-registered region's BaseVirtualAddress there is still only a label.
constexpr uint64_t kBeyondEveryPointer = uint64_t{1} << 47;

// The argument problems whose status the docs leave open (AMB-29, AMB-08, AMB-09, AMB-05).
std::vector<ExpectedFailure> fast_register_argument_problems(const calls::FastRegister& c,
                                                             const MrState& mr, const Readings& r) {
    std::vector<ExpectedFailure> problems;
    auto bad = [&](RuleIds rules, std::string why, Strength strength = Strength::model_choice) {
        rules.push_back("AMB-29");
        problems.push_back({STATUS_INVALID_PARAMETER, std::move(rules), strength, std::move(why)});
    };
    uint64_t pages = c.adapter_pages.size();
    if (pages == 0 && r.zero_adapter_page_count_rejected)  // AMB-09: the docs do not say
        bad({"AMB-09"}, "AdapterPageCount is 0", Strength::reading);
    if (pages > mr.max_pages)  // FR-APC-02, AMB-08 (up to max_pages is supported: IFR-APC-01)
        bad({"FR-APC-02", "AMB-08"}, "AdapterPageCount " + num(pages) +
                                         " exceeds the MR's initialized " + num(mr.max_pages));
    if (c.fbo >= PAGE_SIZE)  // FR-FBO-02 (FR-FBO-01: 0..PAGE_SIZE-1 are all valid)
        bad({"FR-FBO-02"}, "FBO " + num(c.fbo) + " is not an offset inside a page");
    else if (c.fbo > pages * PAGE_SIZE ||
             c.length > pages * PAGE_SIZE - c.fbo)  // FR-LEN-02 (no wrap-around)
        bad({"FR-LEN-02"}, "Length " + num(c.length) + " exceeds AdapterPageCount * PAGE_SIZE (" +
                               num(pages * PAGE_SIZE) + ") - FBO (" + num(c.fbo) + ")");
    if (c.length == 0 && r.zero_length_mapping_rejected)  // MODEL-RMR-LEN-02: nor here
        bad({"MODEL-RMR-LEN-02"}, "Length is 0", Strength::reading);
    if (c.base_virtual_address % PAGE_SIZE != c.fbo % PAGE_SIZE || c.fbo >= PAGE_SIZE) {
        // FR-ALIGN-03 first: it is the rule of exactly this request ("must not result in a
        // successful registration"); FR-ALIGN-01 states the congruence. With BaseVirtualAddress 0
        // and FBO != 0 it is FR-ALIGN-02 too.
        RuleIds rules{"FR-ALIGN-03", "FR-ALIGN-01"};
        if (c.base_virtual_address == 0) rules.push_back("FR-ALIGN-02");
        bad(rules, "BaseVirtualAddress mod PAGE_SIZE is " +
                       num(c.base_virtual_address % PAGE_SIZE) + ", FBO is " + num(c.fbo));
    }
    if (c.base_virtual_address == 0 && r.zero_base_va_rejected)  // AMB-05
        bad({"AMB-05"}, "BaseVirtualAddress is 0", Strength::reading);
    return problems;
}

}  // namespace

Expectation Model::expect_call(const calls::FastRegister& c) const {
    Expectation e;
    e.no_pending_rules = {"FR-ST-03", "WR-04"};
    e.success_rules = {"FR-ST-01",    "FR-APC-03", "FR-LEN-01",
                       "FR-ALIGN-01", "FR-ACC-02", "FR-ACC-03"};
    const QpState* qp = require_connected_qp(e, c.qp, "FR-ST-02");
    const Object* o = require(e, c.mr, Kind::mr, "pMr");
    if (!qp || !o) return e;
    const auto& mr = std::get<MrState>(o->state);
    using P = MrState::Phase;
    if (mr.indeterminate) {
        e.undefined = true;
        return e;
    }
    bool initialized = mr.phase == P::initialized || mr.phase == P::fast_registered ||
                       mr.phase == P::invalidated ||
                       (mr.phase == P::initializing && readings_.fr_usable_at_return);  // AMB-11
    if (!mr.fast_register || !initialized) {  // FR-MR-01, IFR-POST-01
        wrong_mr_state(e, "FR-MR-01",
                       !mr.fast_register  ? "the MR is not a fast-register MR"
                       : mr.reinit_failed ? "the MR's last initialization failed (AMB-38)"
                                          : "the MR's initialization has not completed");
        if (mr.reinit_failed) e.failures.back().rules.push_back("AMB-38");
        return e;
    }
    // IFR-POST-01: an MR whose initialization completed (and that holds no registration yet)
    // takes fast registrations; a refusal with the status of an MR not initialized (AMB-16's)
    // says the provider does not see the initialization, and breaks that rule first.
    if (mr.phase == P::initialized) {
        e.refused_with = readings_.mr_wrong_state_status;
        e.refused_with_rules = {"IFR-POST-01"};
        // IFR-TOK-02: NdkGetRemoteTokenFromMr may be called once the initialization completed.
        // The model forgets an MR's tokens when an initialization completes, so a remote token
        // known here was read since: a provider that took that read for a registration refuses
        // this one the same way, and the read is then what broke the MR.
        // A request that must fail for another reason, refused with that status instead, points
        // at the read too.
        if (mr.remote_token) {
            const auto* a = find(o->adapter);
            const auto* adapter = a ? std::get_if<AdapterState>(&a->state) : nullptr;
            // First when this provider was seen taking a first registration without the read:
            // then the read is what differs (else the two readings of the refusal are equal).
            if (adapter && adapter->took_first_registration_unread)
                e.refused_with_rules = {"IFR-TOK-02", "IFR-POST-01"};
            else
                e.refused_with_rules.push_back("IFR-TOK-02");
            e.mismatch_status = readings_.mr_wrong_state_status;
            e.mismatch_rules = {"IFR-TOK-02"};
        }
    }
    // The rules a refusal of this valid request breaks first: the initialization's promise of
    // every count up to the one initialized (IFR-APC-01) where only that promise covers the
    // count (first: a count beyond max(16, FRMRPageCount) is what a device may not hold), then
    // the read-sink flag's (FR-SINK-02/03), which is never a reason to fail.
    {
        RuleList rules;
        // FR-ALIGN-02: BaseVirtualAddress 0 with FBO 0 is an ordinary start address (unless the
        // profile reads AMB-05 as refusing it: then the refusal is expected, not judged here);
        // the one argument no other rule's boundary reaches, so named first.
        // FR-ALIGN-01: "small or large", every congruent value is a start address. One at or
        // past 2^47 is beyond every canonical user pointer: a provider that validates it as a
        // pointer refuses it, and only FR-ALIGN-01's "large" reaches that boundary.
        if (c.base_virtual_address >= kBeyondEveryPointer) rules.push_back("FR-ALIGN-01");
        if (c.base_virtual_address == 0 && c.fbo == 0 && !readings_.zero_base_va_rejected) {
            rules.push_back("FR-ALIGN-02");
            // ...and where the call must fail for another reason (FR-ACC-01), a refusal with
            // STATUS_INVALID_PARAMETER points at that address, not at the rights.
            e.mismatch_status = STATUS_INVALID_PARAMETER;
            e.mismatch_rules = {"FR-ALIGN-02"};
        }
        if (c.adapter_pages.size() > std::max<uint32_t>(16, adapter_info(c.mr).FRMRPageCount))
            rules.push_back("IFR-APC-01");
        if (c.flags & NDK_OP_FLAG_RDMA_READ_SINK)
            rules.push_back(adapter_info(c.mr).AdapterFlags &
                                    NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED
                                ? "FR-SINK-02"
                                : "FR-SINK-03");
        // FR-FLG-01: any OR of the page's documented flags is valid; SILENT_SUCCESS, READ_FENCE
        // and DEFER change how the request completes, not what it may do, so a refusal of a
        // request carrying them breaks the flag table first (the rights have FR-ACC-02/03).
        if (c.flags & (NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER))
            rules.push_back("FR-FLG-01");
        // FR-FBO-01: every offset inside the first page is valid; a refusal of a request with a
        // non-zero FBO breaks it before the Length and count boundaries (which a refused FBO
        // shrinks towards).
        if (c.fbo != 0 && c.fbo < PAGE_SIZE) rules.push_back("FR-FBO-01");
        // FR-LEN-01 names its largest Length (the region ends exactly at the last page's end):
        // a refusal of exactly that Length breaks FR-LEN-01 before the general rules.
        if (!c.adapter_pages.empty() && c.fbo < c.adapter_pages.size() * PAGE_SIZE &&
            c.length == c.adapter_pages.size() * PAGE_SIZE - c.fbo)
            rules.push_back("FR-LEN-01");
        // FR-APC-03 names its largest count (every page the MR was initialized for): a refusal
        // of exactly that count breaks it before the general rules.
        if (c.adapter_pages.size() == mr.max_pages) rules.push_back("FR-APC-03");
        for (const char* rule : e.success_rules)
            if (std::find(rules.begin(), rules.end(), std::string_view(rule)) == rules.end())
                rules.push_back(rule);
        e.success_rules = rules;
    }
    // Flags (FR-FLG-01): the documented set, 0x80 per AMB-01, DEFER from 1.2.
    uint32_t listed = NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                      NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE |
                      NDK_OP_FLAG_DEFER;
    // FR-SINK-02/03: 0x80 is accepted whatever the adapter's RDMA_READ_SINK_NOT_REQUIRED.
    if (readings_.fr_read_sink_flag_listed) listed |= NDK_OP_FLAG_RDMA_READ_SINK;
    check_op_flags(e, c.flags, listed, "NdkFastRegister", "FR-FLG-01");
    if ((c.flags & NDKCT_OP_FLAG_REMOTE_WRITE_BIT) && !(c.flags & NDK_OP_FLAG_ALLOW_LOCAL_WRITE) &&
        readings_.lone_remote_write_bit_rejected)  // AMB-03
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-03"}, Strength::reading,
               "Flags has the remote-write bit 0x20 without local write 0x10");
    // FR-ACC-01: remote rights (the 0x8 or 0x20 bit, never 0x10 alone: FR-ACC-02) on an MR
    // initialized without RemoteAccess fail inline with STATUS_ACCESS_VIOLATION.
    if (!mr.remote_access &&
        (c.flags & (NDK_OP_FLAG_ALLOW_REMOTE_READ | NDKCT_OP_FLAG_REMOTE_WRITE_BIT)))
        e.fail(STATUS_ACCESS_VIOLATION, {"FR-ACC-01"}, Strength::documented,
               "remote rights requested on an MR initialized with RemoteAccess = FALSE");
    // AMB-30: whether (and how) a fast registration over a valid one fails is undocumented;
    // the form the profile does not read is a warning.
    if (mr.phase == P::fast_registered &&
        readings_.fr_over_valid == Readings::FrOverValid::inline_error)
        e.fail(STATUS_INVALID_DEVICE_STATE, {"AMB-30"}, Strength::reading,
               "the MR's previous fast registration was not invalidated");
    else if (mr.phase == P::fast_registered && !e.may_fail_any) {
        e.may_fail_any = e.any_failure_warns = true;
        e.any_failure_rules = {"FR-INV-01", "AMB-30"};
    }
    // AMB-38 (keep_previous): the MR's last initialization failed after an earlier one had
    // succeeded; a provider reading the MR as unusable now refuses, which is a warning.
    if (mr.reinit_failed && !e.may_fail_any) {
        e.may_fail_any = e.any_failure_warns = true;
        e.any_failure_rules = {"IFR-ST-04", "AMB-38"};
    }
    if (o->parent != find(c.qp)->parent && readings_.foreign_objects_all_inline)  // AMB-28
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-28"}, Strength::reading,
               "the MR belongs to another PD than the QP");
    for (auto& problem : fast_register_argument_problems(c, mr, readings_)) {
        if (readings_.fr_bad_request_inline) {
            e.failures.push_back(std::move(problem));
            e.failure_may_surface_in_completion = true;
        } else {
            e.tolerated.push_back(std::move(problem));  // AMB-29: the form not chosen is a warning
        }
    }
    // CQP-DEPTH-02, MODEL-WR-DEPTH-01: a memory request is an initiator request too (the
    // deferred-processing page's chain of "initiator requests" starts with fast registers):
    // past InitiatorQueueDepth it may be refused, and the reference provider refuses it
    // (accepted, its entry could overrun a CQ sized to the QP's depths: DEFER-04, WR-10).
    check_depth(e, qp->initiator_outstanding, qp->initiator_depth, "CQP-DEPTH-02");
    check_usable(e, *qp);  // MODEL-CQ-STATUS-01
    // IFR-APC-01: where only the initialization's promise covers the count, a refusal with
    // another status than the one expected may be the count refused, so it names that too.
    const size_t pages = c.adapter_pages.size();
    if (pages > std::max<uint32_t>(16, adapter_info(c.mr).FRMRPageCount) && pages <= mr.max_pages)
        for (auto& failure : e.failures)
            failure.rules.push_back("IFR-APC-01");
    // FR-PAGE-01: each entry is a page's aligned start; that is the caller's duty, and no page
    // gives the provider a check or a status: a consumer error (any outcome is a warning).
    for (size_t i = 0; i < c.adapter_pages.size(); ++i)
        if (c.adapter_pages[i] % PAGE_SIZE != 0) {
            e.fail(STATUS_INVALID_PARAMETER, {"FR-PAGE-01"}, Strength::model_choice,
                   "AdapterPageArray[" + num(i) + "] is not page-aligned");
            e.consumer_error = true;
            break;
        }
    // Pages that no live LAM produced reach unknown memory (FR-LAM-01, the caller's duty).
    for (uint64_t page : c.adapter_pages)
        if (!pfn_of_logical(o->adapter, page)) {
            e.undefined = true;
            e.undefined_rules = {"FR-LAM-01"};
            e.undefined_why = "AdapterPageArray holds an address no live LAM produced";
            break;
        }
    return e;
}

void Model::commit(const calls::FastRegister& c, const Observed& observed, Applied&, Stage stage) {
    if (stage == Stage::refused) {
        // FR-ST-04, FR-ACC-04: not posted, so no entry may appear for it and nothing is
        // registered; FR-DEFER-02, DEFER-06: earlier DEFER requests reach the hardware first.
        refuse_post(c.qp, c.request_context, observed.status);
        return;
    }
    if (stage != Stage::done) return;
    auto* mr = state_mut<MrState>(c.mr);
    const Object* qp = find(c.qp);
    Completion done =
        initiator_completion(c.qp, c.request_context, NdkOperationTypeFastRegister, c.mr);
    std::shared_ptr<const WorkRequest::Undo> undo_info;
    auto problems = fast_register_argument_problems(c, *mr, readings_);
    // IFR-TOK-02's evidence: a valid first registration taken with no remote token read since
    // the initialization.
    if (mr->phase == MrState::Phase::initialized && !mr->remote_token && problems.empty())
        if (auto* a = state_mut<AdapterState>(objects_[c.mr].adapter))
            a->took_first_registration_unread = true;
    if (std::get<QpState>(qp->state).error) {
        // FLS-02: the QP is in error, so the request is flushed (STATUS_CANCELLED, decided by
        // the engine) and registers nothing.
    } else if (!problems.empty()) {
        // AMB-29 (completion_error), or a provider that accepted what the profile refuses
        // inline: the request completes with an error and registers nothing.
        done.outcome = Completion::Outcome::error;
        done.status = STATUS_INVALID_PARAMETER;
        done.rules = problems.front().rules;
        done.why = problems.front().why;
        // AMB-09, MODEL-RMR-LEN-02: where the docs do not say the request fails at all, its
        // success is the reading not chosen.
        if (std::all_of(problems.begin(), problems.end(),
                        [](const auto& p) { return p.strength == Strength::reading; })) {
            done.other_reading = done.rules;
            done.other_reading_succeeds = true;
        }
    } else if (mr->phase == MrState::Phase::fast_registered &&
               readings_.fr_over_valid == Readings::FrOverValid::completion_error) {  // AMB-30
        done.outcome = Completion::Outcome::error;
        done.status = STATUS_INVALID_DEVICE_STATE;
        done.rules = {"FR-INV-01", "AMB-30"};
        done.why = "the previous fast registration was not invalidated";
        done.other_reading = done.rules;  // the allow reading
        done.other_reading_succeeds = true;
        // AMB-30, INV-01 (check mode): an NdkInvalidate of the MR in flight (the model flushed
        // it) may have run by the time the device runs this one (found on rxe).
        if (mode_ == Mode::check && request_in_flight(c.mr, NdkOperationTypeInvalidate))
            done.outcome = Completion::Outcome::any;
    } else if (find(c.mr)->parent != qp->parent) {  // AMB-28: another PD, a protection error
        done.outcome = Completion::Outcome::error;
        done.status = STATUS_ACCESS_VIOLATION;
        done.rules = {"AMB-28"};
        done.why = "the MR belongs to another PD";
    } else {
        // FR-MAP-01, FR-TOK-01: the mapping is in force once the call returned. FR-APC-01,
        // FR-PAGE-02: one page per AdapterPageArray entry, in array order (logical order does not
        // matter); FR-FBO-01: the region starts FBO bytes into the first. Flushed before it runs
        // (a QP error behind DEFER or a waiting send), it is undone (Model::undo).
        const bool over_valid = mr->phase == MrState::Phase::fast_registered;
        const bool after_failed_init = mr->reinit_failed;
        auto u = std::make_shared<WorkRequest::Undo>();
        u->mr = c.mr;
        u->mr_state = *mr;
        undo_info = std::move(u);
        std::vector<PFN_NUMBER> pfns;
        for (uint64_t page : c.adapter_pages)
            pfns.push_back(*pfn_of_logical(qp->adapter, page));
        // FR-MAP-01 (forensics for the data path, Model::landed_as_run): where the pages are
        // not one run of consecutive logical pages, the pages that run from entry 0 would give.
        mr->run_from_first_entry = nullptr;
        bool one_run = true;
        for (size_t i = 1; i < c.adapter_pages.size() && one_run; ++i)
            one_run = c.adapter_pages[i] == c.adapter_pages[0] + i * PAGE_SIZE;
        if (!one_run) {
            std::vector<PFN_NUMBER> run;
            for (size_t i = 0; i < c.adapter_pages.size(); ++i)
                run.push_back(pfn_of_logical(qp->adapter, c.adapter_pages[0] + i * PAGE_SIZE)
                                  .value_or(MrState::kNoPage));
            mr->run_from_first_entry = std::make_shared<const std::vector<PFN_NUMBER>>(run);
        }
        ++mr->changes;
        mr->phase = MrState::Phase::fast_registered;
        mr->region = {c.base_virtual_address, c.length, c.fbo, std::move(pfns), op_access(c.flags)};
        if (!readings_.fr_token_stable_from_initialize)
            set_token(c.mr, true, std::nullopt);  // AMB-07
        // The readings not chosen may refuse it in its completion: AMB-30 over a valid
        // registration, AMB-38 after a failed re-initialization.
        if (over_valid) {
            done.other_reading = {"FR-INV-01", "AMB-30"};
            done.why = "a fast registration over one not invalidated";
        } else if (after_failed_init) {
            done.other_reading = {"IFR-ST-04", "AMB-38"};
            done.why = "the MR's last initialization failed";
        }
    }
    // FR-SILENT-01, FR-SILENT-02: silent only if it succeeds. FR-QP-01: on the initiator queue.
    done.silent_flag = c.flags & NDK_OP_FLAG_SILENT_SUCCESS;
    done.silent = done.silent_flag && done.outcome == Completion::Outcome::success;
    // FR-SILENT-02: a silent one that must fail owes an error entry; what it would have
    // registered is kept, so that an access it would have let through, failing, shows that it
    // did not take effect (a missing entry is then a dropped error entry, not a silent success).
    mr = state_mut<MrState>(c.mr);
    if (done.silent_flag && done.outcome == Completion::Outcome::error)
        mr->failed_silent = MrState::FailedSilentRegistration{
            c.qp, c.request_context, mr->changes,
            Region{c.base_virtual_address, c.length, 0, {}, op_access(c.flags)}};
    else
        mr->failed_silent.reset();
    post(c.qp, call_of(c), c.request_context, c.flags, false, std::move(done),
         std::move(undo_info));
}

// ======================= NdkBind (BND-*) =======================

namespace {

// Bind arguments the profile reads as refused: a window longer than MaxWindowSize (BND-09 only
// promises binds up to it; MODEL-BND-01). The docs do not say such a bind fails: its success is
// the reading not chosen, a warning.
std::vector<ExpectedFailure> bind_argument_problems(const calls::Bind& c,
                                                    const NDK_ADAPTER_INFO& info,
                                                    const Readings& r) {
    std::vector<ExpectedFailure> problems;
    if (c.length > info.MaxWindowSize)
        problems.push_back(
            {STATUS_INVALID_PARAMETER,
             {"MODEL-BND-01"},
             r.over_max_window_invalid ? Strength::reading : Strength::reading_any_error,
             "Length " + num(c.length) + " exceeds MaxWindowSize " + num(info.MaxWindowSize)});
    return problems;
}

}  // namespace

Expectation Model::expect_call(const calls::Bind& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"BND-01", "BND-09"};
    const QpState* qp = require_connected_qp(e, c.qp, "BND-05");
    const Object* mro = require(e, c.mr, Kind::mr, "pMr");
    const Object* mwo = require(e, c.mw, Kind::mw, "pMw");
    if (!qp || !mro || !mwo) return e;
    const auto& mr = std::get<MrState>(mro->state);
    if (mr.indeterminate) {
        e.undefined = true;
        return e;
    }
    bool registered =
        mr.phase == MrState::Phase::registered || mr.phase == MrState::Phase::fast_registered;
    if (!registered) {
        wrong_mr_state(e, "BND-02", "the MR has no valid registration");
        return e;
    }
    check_op_flags(e, c.flags,
                   NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE |
                       NDK_OP_FLAG_ALLOW_REMOTE_READ | NDK_OP_FLAG_ALLOW_REMOTE_WRITE |
                       NDK_OP_FLAG_DEFER,
                   "NdkBind", "BND-07");
    // BND-06; an MR that lets the bind succeed acts as if it had local write, which its
    // registration did not grant: RMR-ACC-02 / FR-FLG-03 follow.
    if ((c.flags & NDKCT_OP_FLAG_REMOTE_WRITE_BIT) && !(mr.region.access & kLocalWrite))
        e.fail(STATUS_ACCESS_VIOLATION, {"BND-06", mr.fast_register ? "FR-FLG-03" : "RMR-ACC-02"},
               Strength::documented, "a remote-write window on an MR without local write");
    if ((c.flags & NDK_OP_FLAG_ALLOW_REMOTE_READ) && !(mr.region.access & kRemoteRead) &&
        readings_.mw_remote_read_needs_mr_right)  // AMB-20
        e.fail(STATUS_ACCESS_VIOLATION, {"AMB-20"}, Strength::reading,
               "a remote-read window on an MR without remote read");
    // BND-09: up to MaxWindowSize must be accepted; beyond it MODEL-BND-01 (refused inline, or
    // accepted and failed in its completion; a success is a warning).
    for (auto& problem : bind_argument_problems(c, adapter_info(c.qp), readings_)) {
        e.failures.push_back(std::move(problem));
        e.failure_may_surface_in_completion = true;
    }
    if ((mro->parent != find(c.qp)->parent || mwo->parent != find(c.qp)->parent) &&
        readings_.foreign_objects_all_inline)  // AMB-28
        e.fail(STATUS_INVALID_PARAMETER, {"AMB-28"}, Strength::reading,
               "the MR or MW belongs to another PD than the QP");
    // BND-02, AMB-20: the bound range lies inside the MR's; that is the caller's duty, with no
    // status: a consumer error (any outcome is a warning, and the window's state is unknown).
    if (!mr.region.covers(c.virtual_address, c.length)) {
        e.fail(STATUS_INVALID_PARAMETER, {"BND-02", "AMB-20"}, Strength::model_choice,
               "[VirtualAddress, +Length) is not inside the MR's registered range");
        e.consumer_error = true;
    }
    // CQP-DEPTH-02, MODEL-WR-DEPTH-01: a memory request is an initiator request too (the
    // deferred-processing page's chain of "initiator requests" starts with fast registers):
    // past InitiatorQueueDepth it may be refused, and the reference provider refuses it
    // (accepted, its entry could overrun a CQ sized to the QP's depths: DEFER-04, WR-10).
    check_depth(e, qp->initiator_outstanding, qp->initiator_depth, "CQP-DEPTH-02");
    check_usable(e, *qp);  // MODEL-CQ-STATUS-01
    return e;
}

void Model::commit(const calls::Bind& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) {
        refuse_post(c.qp, c.request_context);  // WR-05, DEFER-04
        return;
    }
    if (stage != Stage::done) return;
    Completion done = initiator_completion(c.qp, c.request_context, NdkOperationTypeBind, c.mw);
    const Object* qp = find(c.qp);
    std::shared_ptr<const WorkRequest::Undo> undo_info;
    auto problems = bind_argument_problems(c, adapter_info(c.qp), readings_);
    if (std::get<QpState>(qp->state).error) {
        // FLS-02: flushed (STATUS_CANCELLED): the window is not bound.
    } else if (!problems.empty()) {
        // Accepted although the profile refuses it inline (MODEL-BND-01): the profile reads it
        // as binding nothing, its completion reporting the error; a success is the reading not
        // chosen.
        done.outcome = Completion::Outcome::error;
        done.status = STATUS_INVALID_PARAMETER;
        done.rules = problems.front().rules;
        done.why = problems.front().why;
        done.other_reading = done.rules;
        done.other_reading_succeeds = true;
    } else if (find(c.mr)->parent != qp->parent || find(c.mw)->parent != qp->parent) {  // AMB-28
        done.outcome = Completion::Outcome::error;
        done.status = STATUS_ACCESS_VIOLATION;
        done.rules = {"AMB-28"};
        done.why = "the MR or MW belongs to another PD";
    } else {
        // BND-01, MW-02: the window is bound, and its token readable, once the call returned
        // (undone if flushed before it runs). BND-03, BND-04: VirtualAddress is only an index;
        // remote addresses into the window are its bound virtual range (resolve_remote).
        auto u = std::make_shared<WorkRequest::Undo>();
        u->mw = c.mw;
        u->mw_state = std::get<MwState>(find(c.mw)->state);
        u->window_mr = c.mr;
        u->window_mr_windows = std::get<MrState>(find(c.mr)->state).bound_windows;
        auto* mw = state_mut<MwState>(c.mw);
        const auto& q = std::get<QpState>(qp->state);
        ++mw->changes;
        mw->bound = true;
        mw->mr = c.mr;
        mw->qp = c.qp;
        mw->edge_uncertain = mode_ == Mode::check && (q.peer_error || q.error_timing_open);
        mw->region = {
            c.virtual_address, c.length, 0, {}, op_access(c.flags) & (kRemoteRead | kRemoteWrite)};
        set_token(c.mw, true, std::nullopt);
        auto* mr = state_mut<MrState>(c.mr);
        if (std::find(mr->bound_windows.begin(), mr->bound_windows.end(), c.mw) ==
            mr->bound_windows.end())
            mr->bound_windows.push_back(c.mw);
        Object& w = objects_[c.mw];
        if (std::find(w.antecedents.begin(), w.antecedents.end(), c.mr) == w.antecedents.end()) {
            w.antecedents.push_back(c.mr);  // LIFE-TREE-04: the MR now waits for the MW's close
            ++objects_[c.mr].open_successors;
        }
        auto& per_mr = std::get<MwState>(w.state).binds_per_mr;
        auto count = std::find_if(per_mr.begin(), per_mr.end(),
                                  [&](const auto& entry) { return entry.first == c.mr; });
        if (count == per_mr.end())
            per_mr.emplace_back(c.mr, 1);
        else
            ++count->second;
        u->bound_mr = c.mr;
        undo_info = std::move(u);
    }
    done.silent_flag = c.flags & NDK_OP_FLAG_SILENT_SUCCESS;
    done.silent = done.silent_flag && done.outcome == Completion::Outcome::success;
    post(c.qp, call_of(c), c.request_context, c.flags, false, std::move(done),
         std::move(undo_info));
}

// ======================= NdkInvalidate (INV-*) =======================

Expectation Model::expect_call(const calls::Invalidate& c) const {
    Expectation e;
    e.no_pending_rules = {"WR-04"};
    e.success_rules = {"INV-01"};
    const QpState* qp = require_connected_qp(e, c.qp, "INV-03");
    const Object* target = find(c.target);
    if (!qp) return e;
    if (!target || target->life != Life::ready ||
        (target->kind != Kind::mr && target->kind != Kind::mw)) {
        e.undefined = true;
        e.undefined_rules = {"INV-02"};
        e.undefined_why = "pNdkMrOrMw is not an open MR or MW";
        return e;
    }
    check_op_flags(e, c.flags,
                   NDK_OP_FLAG_SILENT_SUCCESS | NDK_OP_FLAG_READ_FENCE | NDK_OP_FLAG_DEFER,
                   "NdkInvalidate", "INV-04");
    bool valid = false;
    if (target->kind == Kind::mr) {
        const auto& mr = std::get<MrState>(target->state);
        if (mr.indeterminate) {
            e.undefined = true;
            return e;
        }
        if (!mr.fast_register) {  // INV-02: NdkRegisterMr regions are deregistered instead
            wrong_mr_state(e, "INV-02", "the MR was registered with NdkRegisterMr");
            return e;
        }
        valid = mr.phase == MrState::Phase::fast_registered;
        // FR-INV-01: NdkInvalidate is how a fast registration ends; a provider that refuses
        // it for a fast-registered MR (say, one that invalidates only MWs) breaks that first.
        if (valid) e.success_rules = {"FR-INV-01", "INV-01"};
    } else {
        valid = std::get<MwState>(target->state).bound;
    }
    // CQP-DEPTH-02, MODEL-WR-DEPTH-01: a memory request is an initiator request too (the
    // deferred-processing page's chain of "initiator requests" starts with fast registers):
    // past InitiatorQueueDepth it may be refused, and the reference provider refuses it
    // (accepted, its entry could overrun a CQ sized to the QP's depths: DEFER-04, WR-10).
    check_depth(e, qp->initiator_outstanding, qp->initiator_depth, "CQP-DEPTH-02");
    check_usable(e, *qp);  // MODEL-CQ-STATUS-01
    if (!valid) {          // CQ-RI-03, AMB-32: inline or by completion, the docs do not say
        ExpectedFailure inline_failure{STATUS_INVALID_DEVICE_STATE,
                                       {"CQ-RI-03", "AMB-32"},
                                       Strength::model_choice,
                                       "the token is no longer valid"};
        if (readings_.invalidate_invalid_token_inline) {
            e.failures.push_back(inline_failure);
            e.failure_may_surface_in_completion = true;
        } else {
            e.tolerated.push_back(inline_failure);
        }
    }
    return e;
}

void Model::commit(const calls::Invalidate& c, const Observed&, Applied&, Stage stage) {
    if (stage == Stage::refused) {
        refuse_post(c.qp, c.request_context);  // WR-05, DEFER-04
        return;
    }
    if (stage != Stage::done) return;
    Completion done =
        initiator_completion(c.qp, c.request_context, NdkOperationTypeInvalidate, c.target);
    const Object* target = find(c.target);
    bool valid = target->kind == Kind::mr
                     ? std::get<MrState>(target->state).phase == MrState::Phase::fast_registered
                     : std::get<MwState>(target->state).bound;
    std::shared_ptr<const WorkRequest::Undo> undo_info;
    if (std::get<QpState>(objects_[c.qp].state).error) {
        // FLS-02: flushed (STATUS_CANCELLED): the token stays as it was.
    } else if (valid) {
        // INV-01: in force once the call returned, undone if flushed before it runs.
        auto u = std::make_shared<WorkRequest::Undo>();
        if (target->kind == Kind::mr) {
            u->mr = c.target;
            u->mr_state = std::get<MrState>(target->state);
        } else {
            u->mw = c.target;
            u->mw_state = std::get<MwState>(target->state);
            u->window_mr = u->mw_state->mr;
            if (const auto* owner = state_of<MrState>(u->window_mr))
                u->window_mr_windows = owner->bound_windows;
            else
                u->window_mr = 0;
        }
        undo_info = std::move(u);
        invalidate_token_of(c.target);
    } else {  // CQ-RI-03, AMB-32: reported by the completion
        done.outcome = Completion::Outcome::error;
        done.status = STATUS_INVALID_DEVICE_STATE;
        done.rules = {"CQ-RI-03", "AMB-32"};
        done.why = "the token was no longer valid";
        // AMB-32, FLS-03 (check mode): not bound because the model flushed its NdkBind, whose
        // entry the consumer has not seen yet: the provider may not know either, and may find
        // the window bound (found on rxe).
        if (mode_ == Mode::check && request_in_flight(c.target, NdkOperationTypeBind))
            done.outcome = Completion::Outcome::any;
    }
    done.silent_flag = c.flags & NDK_OP_FLAG_SILENT_SUCCESS;
    done.silent = done.silent_flag && done.outcome == Completion::Outcome::success;
    post(c.qp, call_of(c), c.request_context, c.flags, false, std::move(done),
         std::move(undo_info));
}

void Model::invalidate_token_of(ObjectId object) {
    if (auto* mr = state_mut<MrState>(object)) {
        ++mr->changes;
        if (mr->phase == MrState::Phase::fast_registered) mr->phase = MrState::Phase::invalidated;
        mr->region.access = 0;
    } else if (auto* mw = state_mut<MwState>(object)) {
        ++mw->changes;
        mw->bound = false;
        mw->region = {};
        if (auto* owner = state_mut<MrState>(mw->mr)) std::erase(owner->bound_windows, object);
    }
}

}  // namespace ndkct::model
