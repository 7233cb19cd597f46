// Access checks: the MR or MW a token names, and a request's local SGEs and remote range resolved
// into pages through them, with the rights and bounds each must have.
#include <algorithm>
#include <cstring>
#include <utility>

#include "ndkct/model/model.hpp"
#include "qp_rules.hpp"

namespace ndkct::model {

using namespace qp_rules;

ObjectId Model::object_of_token(ObjectId adapter, uint32_t token, bool remote) const {
    const auto* a = state_of<AdapterState>(adapter);
    if (!a) return 0;
    const auto& index = remote ? a->remote_tokens : a->local_tokens;
    auto it = index.find(token);
    if (it == index.end()) return remote ? 0 : initialized_token_holder(adapter, token);
    // The holders of this value, oldest first: the first whose registration or binding is live.
    for (ObjectId id : it->second) {
        const Object& o = objects_[id];
        if (o.life == Life::closed) continue;
        if (const auto* mr = std::get_if<MrState>(&o.state)) {
            if (mr->phase == MrState::Phase::registered ||
                mr->phase == MrState::Phase::fast_registered)
                return id;
        } else if (const auto* mw = std::get_if<MwState>(&o.state)) {
            if (remote && mw->bound) return id;
        }
    }
    return remote ? 0 : initialized_token_holder(adapter, token);
}

ObjectId Model::initialized_token_holder(ObjectId adapter, uint32_t token) const {
    const auto* a = state_of<AdapterState>(adapter);
    if (!a) return 0;
    auto it = a->initialized_local_tokens.find(token);
    if (it == a->initialized_local_tokens.end()) return 0;
    const Object* o = find(it->second);
    const auto* mr = o && o->life != Life::closed ? std::get_if<MrState>(&o->state) : nullptr;
    // The first fast registration after the reading (nothing else changed the MR since), and
    // the getter reported another token for it: the model knows both values.
    if (!mr || mr->phase != MrState::Phase::fast_registered || mr->indeterminate ||
        mr->initialized_local_token != token || mr->changes != mr->initialized_local_changes + 1 ||
        mr->local_token == token)
        return 0;
    return it->second;
}

void Model::note_initialized_local_token(ObjectId qp, const std::vector<Sge>& sgl,
                                         Completion& done) const {
    if (done.token_rule) return;
    const ObjectId adapter = objects_[qp].adapter;
    for (const Sge& sge : sgl) {
        if (sge.length == 0 || !initialized_token_holder(adapter, sge.token)) continue;
        if (readings_.fr_local_token_from_initialize) {
            done.token_rule = "IFR-TOK-01";
        } else if (done.other_reading.empty()) {  // AMB-40 after_fast_register_returns
            done.other_reading = {"IFR-TOK-01", "AMB-40"};
            done.why =
                "a local SGE's token was read after the MR's initialization, before its "
                "fast registration, and the getter reports another one now";
        }
        return;
    }
}

namespace {

// Adds [address, address + bytes) of a region to an extent. FR-MAP-01, RMR-VA-01: byte k of a
// region (address base + k) is byte (FBO + k) % PAGE_SIZE of its page (FBO + k) / PAGE_SIZE.
void map_region(const Region& region, uint64_t address, uint64_t bytes, Extent& out) {
    uint64_t offset = region.first_byte_offset + (address - region.base);
    out.reserve((offset % PAGE_SIZE + bytes + PAGE_SIZE - 1) / PAGE_SIZE);
    while (bytes > 0) {
        uint64_t page = offset / PAGE_SIZE;
        uint32_t in_page = static_cast<uint32_t>(offset % PAGE_SIZE);
        uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(bytes, PAGE_SIZE - in_page));
        out.append(region.pages[page], in_page, n);
        offset += n;
        bytes -= n;
    }
}

}  // namespace

bool Model::resolve_local(ObjectId qp, const std::vector<Sge>& sgl, uint32_t need, Extent& out,
                          std::string& why, RuleIds& rules) const {
    const Object& qo = objects_[qp];
    const auto& q = std::get<QpState>(qo.state);
    const auto* pd = state_of<PdState>(q.pd);
    for (size_t i = 0; i < sgl.size(); ++i) {
        const Sge& sge = sgl[i];
        if (sge.length == 0) continue;
        if (pd && pd->privileged_token && sge.token == *pd->privileged_token) {
            // SGE-01, PTOK-01, LAM-USE-02: logical addresses of live LAMs, local read/write.
            // AI-FLAG-02, PTOK-03: read sinks too where the adapter needs no sink right.
            bool sink_ok =
                adapter_info(qp).AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
            if ((need & kReadSink) && !sink_ok) {
                why = "SGE " + num(i) + " uses the privileged token as a read sink";
                rules = {"LAM-USE-03", "PTOK-03"};
                return false;
            }
            uint64_t address = sge.address, left = sge.length;
            while (left > 0) {
                auto pfn = pfn_of_logical(qo.adapter, address);
                if (!pfn) {
                    why = "SGE " + num(i) + " names logical address " + num(address) +
                          " that no live LAM maps";
                    rules = {"SGE-01", "LAM-USE-02"};
                    return false;
                }
                uint32_t in_page = static_cast<uint32_t>(address % PAGE_SIZE);
                uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(left, PAGE_SIZE - in_page));
                out.append(*pfn, in_page, n);
                address += n;
                left -= n;
            }
            continue;
        }
        ObjectId mr_id = object_of_token(qo.adapter, sge.token, false);
        const auto* mr = state_of<MrState>(mr_id);
        if (!mr) {
            why = "SGE " + num(i) + " has token " + num(sge.token) + ", no valid local token";
            rules = {"SGE-05", "MODEL-CQ-ERR-01"};
            if (const auto* a = state_of<AdapterState>(qo.adapter);
                a && a->deregistered_tokens.count(sge.token)) {  // RMR-DEREG-01, named first
                why += " (a token of MR " + num(a->deregistered_tokens.at(sge.token)) +
                       ", whose NdkDeregisterMr completed)";
                rules = {"RMR-DEREG-01", "SGE-05"};
            }
            return false;
        }
        if (find(mr_id)->parent != q.pd) {  // AMB-28: an MR of another PD
            why = "SGE " + num(i) + " names an MR of another PD";
            rules = {"AMB-28"};
            return false;
        }
        // RMR-ACC-03, FR-LEN-03; FR-TOK-02: the local token with addresses inside the region.
        if (!mr->region.covers(sge.address, sge.length)) {
            why = "SGE " + num(i) + " reaches outside its region";
            rules = {mr->fast_register ? "FR-LEN-03" : "RMR-ACC-03"};
            return false;
        }
        // RMR-ACC-02, FR-FLG-03; AMB-37: under sink_flag_suffices the read-sink right lets a
        // read's data land without local write.
        bool writable = (mr->region.access & kLocalWrite) ||
                        ((need & kWriteBySink) && (mr->region.access & kReadSink));
        if ((need & (kLocalWrite | kWriteBySink)) && !writable) {
            why = "SGE " + num(i) + " needs local write, which its region lacks";
            rules = {mr->fast_register ? "FR-FLG-03" : "RMR-ACC-02"};
            return false;
        }
        if ((need & kReadSink) && !(mr->region.access & kReadSink)) {  // RMR-SINK-01, FR-SINK-01
            why = "SGE " + num(i) + " is a read sink without the read-sink right";
            rules = {mr->fast_register ? "FR-SINK-01" : "RMR-SINK-01"};
            return false;
        }
        map_region(mr->region, sge.address, sge.length, out);
    }
    return true;
}

RuleList Model::local_grant_rules(ObjectId qp, const std::vector<Sge>& sgl, uint32_t need) const {
    const Object& qo = objects_[qp];
    for (const Sge& sge : sgl) {
        if (sge.length == 0) continue;
        const auto* mr = state_of<MrState>(object_of_token(qo.adapter, sge.token, false));
        if (!mr) continue;  // the privileged token
        const uint32_t rights = mr->region.access & (kLocalWrite | kRemoteRead | kRemoteWrite);
        if (mr->fast_register) {
            // FR-TOK-02: the local token with addresses inside [BaseVirtualAddress, + Length)
            // works; FR-FLG-03: 0x10 (or 0x30) grants local write (its own fault, a write let
            // through without it, is judged by resolve_local); FR-FLG-02: local read needs no
            // flag, named first where the region has no other right.
            if (need & kLocalWrite) return {"FR-TOK-02", "FR-FLG-03"};
            if (rights == 0) return {"FR-FLG-02", "FR-TOK-02"};
            return {"FR-TOK-02"};
        }
        // RMR-FLG-03: 0x5 carries local write; RMR-FLG-02: local read needs no flag.
        if ((need & kLocalWrite) && (mr->region.access & kRemoteWrite)) return {"RMR-FLG-03"};
        if (!(need & kLocalWrite) && rights == 0) return {"RMR-FLG-02"};
    }
    return {};
}

void Model::note_refuted_registration(ObjectId qp, uint32_t token, uint64_t address, uint64_t bytes,
                                      uint32_t need, Completion& done) const {
    if (mode_ != Mode::check || done.outcome != Completion::Outcome::error) return;
    const auto& q = std::get<QpState>(objects_[qp].state);
    const Object* peer = find(q.peer);
    if (!peer || peer->life == Life::closed) return;
    const auto* a = state_of<AdapterState>(peer->adapter);
    if (!a) return;
    auto holders = a->remote_tokens.find(token);
    if (holders == a->remote_tokens.end()) return;
    const auto& pq = std::get<QpState>(peer->state);
    for (ObjectId id : holders->second) {
        const Object& o = objects_[id];
        const auto* mr = std::get_if<MrState>(&o.state);
        if (!mr || o.life == Life::closed || !mr->failed_silent || mr->indeterminate) continue;
        const auto& failed = *mr->failed_silent;
        // The token is the one the provider reported for the MR after that registration was
        // posted (FR-TOK-01: it reaches the new region), the MR is in the peer QP's PD (AMB-28),
        // and the registration would have granted this access over this range: only its not
        // having taken effect makes the access fail.
        if (failed.changes != mr->changes || mr->remote_token != token || o.parent != pq.pd ||
            !(failed.requested.access & need) || !failed.requested.covers(address, bytes))
            continue;
        done.refutes_qp = failed.qp;
        done.refutes_request = failed.request_context;
        return;
    }
}

bool Model::resolve_remote(ObjectId qp, uint32_t token, uint64_t address, uint64_t bytes,
                           uint32_t need, Extent& out, std::string& why, RuleIds& rules,
                           ObjectId* target) const {
    const auto& q = std::get<QpState>(objects_[qp].state);
    const Object* peer = find(q.peer);
    if (!peer || peer->life == Life::closed) {
        why = "the peer QP is gone";
        rules = {"MODEL-CQ-ERR-01"};
        return false;
    }
    const auto& pq = std::get<QpState>(peer->state);
    if (const auto* pd = state_of<PdState>(pq.pd);
        pd && pd->privileged_token && *pd->privileged_token == token) {
        why = "RemoteToken is the peer's privileged token";  // PTOK-02
        rules = {"PTOK-02"};
        return false;
    }
    ObjectId id = object_of_token(peer->adapter, token, true);
    if (target) *target = id;
    const char* right = need & kRemoteWrite ? "remote write" : "remote read";
    if (const auto* mr = state_of<MrState>(id)) {
        // (A literal: a RuleIds is built only on the failure path.)
        const char* access_rule = mr->fast_register
                                      ? (need & kRemoteWrite ? "FR-FLG-05" : "FR-FLG-04")
                                      : (need & kRemoteWrite ? "RMR-FLG-04" : "RMR-ACC-01");
        if (find(id)->parent != pq.pd) {
            why = "the remote token names an MR of another PD than the peer QP's";
            rules = {"AMB-28"};
            return false;
        }
        // RMR-VA-02, FR-ZBVA-01: remote addresses are VAs inside [base, base + length), never
        // offsets from 0.
        if (!mr->region.covers(address, bytes)) {
            why =
                "the access [" + num(address) + ", +" + num(bytes) + ") reaches beyond the region";
            rules = {mr->fast_register ? "FR-LEN-03" : "RMR-ACC-03"};
            // FR-ZBVA-01, RMR-VA-02: an address below the region's start that is an offset
            // inside it is the zero-based form either page rules out, judged first.
            if (mr->region.base != 0 && address < mr->region.base && bytes <= mr->region.length &&
                address <= mr->region.length - bytes)
                rules = mr->fast_register ? RuleIds{"FR-ZBVA-01", "FR-LEN-03"}
                                          : RuleIds{"RMR-VA-02", "RMR-ACC-03"};
            // RMR-VA-01: an access inside [StartVa, StartVa + Length), the span a region taken
            // from its first page's start (ByteOffset left out) would have, is named first.
            else if (const uint64_t fbo = mr->region.first_byte_offset;
                     !mr->fast_register && fbo > 0 && address < mr->region.base &&
                     address >= mr->region.base - fbo && bytes <= mr->region.length &&
                     address - (mr->region.base - fbo) <= mr->region.length - bytes)
                rules = {"RMR-VA-01", "RMR-ACC-03"};
            return false;
        }
        if (!(mr->region.access & need)) {
            why = std::string("the region does not grant ") + right;
            rules = {access_rule};
            return false;
        }
        map_region(mr->region, address, bytes, out);
        return true;
    }
    if (const auto* mw = state_of<MwState>(id)) {
        const auto* mr = state_of<MrState>(mw->mr);
        if (!mw->region.covers(address, bytes)) {  // BND-08
            why = "the access reaches beyond the window";
            rules = {"BND-08"};
            return false;
        }
        if (!(mw->region.access & need) || !mr ||
            !(mr->region.access & (kLocalWrite | kRemoteRead | kRemoteWrite))) {
            if (!(mw->region.access & need)) {
                why = std::string("the window does not grant ") + right;
                rules = {"BND-08"};
                return false;
            }
        }
        if (!mr || mr->region.pages.empty() || !mr->region.covers(address, bytes)) {
            why = "the window's MR no longer maps the range";  // AMB-31
            rules = {"AMB-31"};
            return false;
        }
        map_region(mr->region, address, bytes, out);
        return true;
    }
    why = "RemoteToken " + num(token) + " is not a valid token at the peer";
    rules = {"TOK-03", "INV-01"};
    if (const auto* a = state_of<AdapterState>(peer->adapter);
        a && a->deregistered_tokens.count(token)) {  // RMR-DEREG-01, named first
        why = "RemoteToken " + num(token) + " is a token of MR " +
              num(a->deregistered_tokens.at(token)) + ", whose NdkDeregisterMr completed";
        rules = {"RMR-DEREG-01", "TOK-03"};
    } else if (a) {
        // FR-INV-01: the token of a fast-register MR whose registration an invalidation ended
        // (NdkInvalidate; likewise a peer's NdkSendAndInvalidate or a read's local invalidate)
        // grants nothing until its next NdkFastRegister: an access the provider lets through
        // breaks that rule first.
        if (auto it = a->remote_tokens.find(token); it != a->remote_tokens.end())
            for (ObjectId holder : it->second)
                if (const auto* mr = std::get_if<MrState>(&objects_[holder].state);
                    mr && objects_[holder].life != Life::closed && mr->fast_register &&
                    mr->phase == MrState::Phase::invalidated) {
                    why = "RemoteToken " + num(token) + " is the token of MR " + num(holder) +
                          ", whose fast registration an invalidation ended";
                    rules = {"FR-INV-01", "TOK-03", "INV-01"};
                    break;
                }
    }
    return false;
}

}  // namespace ndkct::model
