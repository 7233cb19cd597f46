// The engine: posted requests executed in order on their QP, every access checked, bytes moved
// (simulate) or where they must land recorded (check), and what becomes of a request: its
// completion delivered, cancelled, flushed with a QP in error, or undone.
#include <algorithm>
#include <cstring>
#include <utility>

#include "ndkct/spec/status.hpp"

#include "ndkct/model/model.hpp"
#include "qp_rules.hpp"

namespace ndkct::model {

using namespace qp_rules;

namespace qp_rules {

// The byte buffers of landings already checked (check mode) or placed (simulate), kept for the
// next request's bytes (gather_expected) instead of a heap buffer allocated and freed for every
// request (the oracle's largest malloc/free, refmodel/bench). Per thread, not per Model: the
// property tests make a new Model for every sequence, which then starts with the last one's
// buffers. Bounded: at most kSpareBuffers buffers of at most kSpareBufferBytes each (1 MiB a
// thread); a larger transfer allocates its own, as before.
namespace {
constexpr size_t kSpareBuffers = 16, kSpareBufferBytes = size_t{64} << 10;
thread_local std::vector<std::vector<std::byte>> spare_bytes;
}  // namespace

void recycle_bytes(std::vector<std::byte>&& bytes) {
    if (spare_bytes.size() < kSpareBuffers && bytes.capacity() != 0 &&
        bytes.capacity() <= kSpareBufferBytes)
        spare_bytes.push_back(std::move(bytes));
}

void gather_into(const HostMemoryView& memory, const Extent& extent, std::vector<std::byte>& out) {
    if (out.capacity() == 0 && !spare_bytes.empty()) {
        out = std::move(spare_bytes.back());
        spare_bytes.pop_back();
    }
    gather(memory, extent, out);
}

}  // namespace qp_rules

namespace {
// A failure the profile's reading predicts where the other reading succeeds (DESIGN section 5:
// the reading not chosen is a warning, e.g. AMB-37's read into a sink-only region): until its
// entry shows which one the provider follows, whether the QP went to error is open, so what is
// flushed behind it may have run (as error_timing_open says for FLS-03). Without this, an
// entry of a later request retrieved first (another CQ) was judged flushed: FLS-02 against a
// provider following the other reading.
bool contested_failure(const Completion& done) {
    return !done.other_reading.empty() && done.other_reading_succeeds;
}
}  // namespace

namespace {

// Completion::target: the MR or MW a memory request acts on (request_in_flight).
ObjectId target_of(const Call& call) {
    if (const auto* fr = std::get_if<calls::FastRegister>(&call)) return fr->mr;
    if (const auto* bind = std::get_if<calls::Bind>(&call)) return bind->mw;
    if (const auto* inv = std::get_if<calls::Invalidate>(&call)) return inv->target;
    return 0;
}

}  // namespace

Completion Model::initiator_completion(ObjectId qp, Context request_context,
                                       NDK_OPERATION_TYPE type, ObjectId target) const {
    const auto& q = std::get<QpState>(objects_[qp].state);
    Completion done;
    done.qp = qp;
    done.cq = q.initiator_cq;  // CQP-OBJ-02, FR-QP-01, WR-01: initiator requests complete here
    done.qp_context = q.qp_context;  // CQP-CTX-01
    // FR-RES-01 and its siblings: `type` is what NDK_RESULT_EX.Type must say.
    done.request_context = request_context;
    done.type = type;
    done.target = target;
    return done;
}

void Model::post(ObjectId qp, const Call& call, Context request_context, uint32_t flags,
                 bool receive_queue, std::optional<Completion> decided,
                 std::shared_ptr<const WorkRequest::Undo> undo_info) {
    auto& q = std::get<QpState>(objects_[qp].state);
    // The call is copied into the request only when it is queued (a receive, or a request that
    // cannot run now); one that runs as it is posted uses the caller's.
    WorkRequest wr;
    wr.sequence = q.next_sequence++;
    wr.request_context = request_context;
    wr.flags = flags;
    wr.decided = std::move(decided);
    wr.undo = std::move(undo_info);
    const bool is_read = std::holds_alternative<calls::Read>(call);
    if (receive_queue) {
        ++q.receive_outstanding;
    } else {
        ++q.initiator_outstanding;
        if (flags & NDK_OP_FLAG_DEFER)
            q.deferred_posted.push_back(request_context);
        else
            q.deferred_posted.clear();  // DEFER-07: the chain's doorbell
    }
    if (is_read) {
        // MODEL-RD-01 (fail): a read beyond the effective OutboundReadLimit that was accepted.
        wr.over_read_limit = readings_.outbound_read_overflow_fails && q.outbound_read_limit &&
                             q.reads_outstanding >= q.outbound_read_limit;
        ++q.reads_outstanding;
    }
    if (q.unusable) {
        // MODEL-CQ-STATUS-01: accepted on a QP whose CQ or SRQ failed, it does not succeed: it is
        // flushed (cancelled_completion) or fails with any error status (any_error), on its CQ
        // if that CQ still works. None may appear on the failed CQ (CQ-STATUS-02/03).
        wr.call = call;
        Completion done = cancelled(qp, wr, receive_queue);
        done.rules = {"MODEL-CQ-STATUS-01", "FLS-02"};
        done.other_reading.clear();
        if (!readings_.post_after_cq_error_cancelled) {
            done.outcome = Completion::Outcome::any_error;
        } else {  // another error is the any_error reading
            done.other_reading = {"MODEL-CQ-STATUS-01"};
            done.other_reading_succeeds = false;
            done.why = "posted after its CQ or SRQ failed";
        }
        const auto* cq = state_of<CqState>(done.cq);
        if (!cq || cq->failed) {  // CQ-STATUS-02, CQ-STATUS-03
            if (mode_ == Mode::check) remember(q.never, request_context);
            return;
        }
        deliver(std::move(done));
        return;
    }
    if (receive_queue) {
        wr.call = call;
        if (q.error) {  // FLS-02, MODEL-CQ-ERR-01: a QP in error flushes what is posted to it
            deliver(cancelled(qp, wr, true));
            return;
        }
        q.receive.push_back(std::move(wr));
        if (q.peer) run_queues(q.peer);  // a send waiting on this receive may go on
        return;
    }
    // DEFER-02, FR-DEFER-01: a hint. The reference provider holds such requests back until one
    // without it (exercising DEFER-04/05); in check mode timing is the provider's, outcomes are
    // the same. DEFER-03: a deferred request completes like any other.
    bool hold = (flags & NDK_OP_FLAG_DEFER) && readings_.version_at_least(1, 2) &&
                mode_ == Mode::simulate && readings_.reference.hold_deferred;
    wr.deferred = hold;
    posting_qp_ = qp;
    posting_sequence_ = wr.sequence;
    if (!hold && !q.error && q.initiator.empty()) {
        // Nothing ahead of it and no error: it runs now, as run_queues would run it.
        const bool late = reached_at_unknown_moment(q, qp, wr);
        Completion done;
        if (!execute(qp, wr, call, done)) {  // waiting (a send without a receive at the peer)
            wr.call = call;
            std::get<QpState>(objects_[qp].state).initiator.push_back(std::move(wr));
        } else {
            done.deferred = wr.flags & NDK_OP_FLAG_DEFER;
            done.read_fence = (wr.flags & NDK_OP_FLAG_READ_FENCE) && !NT_ERROR(done.status);
            if ((late || contested_failure(done)) && done.outcome != Completion::Outcome::success)
                std::get<QpState>(objects_[qp].state).error_timing_open = true;
            deliver(std::move(done));
            // MODEL-CQ-ERR-01: what is behind a failed request is flushed (run_queues).
            if (std::get<QpState>(objects_[qp].state).error) fail_qp(qp, false);
        }
        posting_qp_ = 0;
        return;
    }
    wr.call = call;
    q.initiator.push_back(std::move(wr));
    if (!hold) {
        // DEFER-07: a request without DEFER takes every earlier deferred one to the hardware.
        for (auto& queued : q.initiator)
            queued.deferred = false;
        run_queues(qp);
    }
    posting_qp_ = 0;
}

void Model::refuse_post(ObjectId qp, Context request_context,
                        std::optional<NTSTATUS> fast_register_status) {
    if (auto* q = state_mut<QpState>(qp)) {
        remember(q->failed_inline, request_context);
        // A context used again: what is remembered is its latest refusal's.
        std::erase(q->failed_inline_fast_register, request_context);
        std::erase(q->failed_inline_access_violation, request_context);
        if (fast_register_status) {
            remember(q->failed_inline_fast_register, request_context);  // FR-ST-04
            if (*fast_register_status == STATUS_ACCESS_VIOLATION)
                remember(q->failed_inline_access_violation, request_context);  // FR-ACC-04
            for (Context held : q->deferred_posted)                            // FR-DEFER-02
                remember(q->handed_over_by_fast_register, held);
        } else {
            for (Context held : q->deferred_posted)
                std::erase(q->handed_over_by_fast_register, held);
        }
        // DEFER-04: the refusal hands the chain so far to the hardware.
        q->handed_over.insert(q->handed_over.end(), q->deferred_posted.begin(),
                              q->deferred_posted.end());
        q->deferred_posted.clear();
    }
    release_deferred(qp);
}

void Model::release_deferred(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q) return;
    bool any = false;
    for (auto& wr : q->initiator)
        any |= std::exchange(wr.deferred, false);
    if (any) run_queues(qp);  // DEFER-04: earlier DEFER requests reach the hardware first
}

bool Model::reached_at_unknown_moment(const QpState& q, ObjectId qp, const WorkRequest& wr) const {
    if (mode_ != Mode::check) return false;
    // A request that waited (a send for a receive at the peer, or one behind it) runs when the
    // device retries.
    if (!(qp == posting_qp_ && wr.sequence == posting_sequence_)) return true;
    // One behind others of its QP that have not completed yet is reached after them. Found
    // across two nodes: qp2's stray-token send behind two reads failed only after the peer's
    // sends had landed in qp2's receives (and then one of those failed first).
    return !q.initiator_pending.empty();
}

void Model::run_queues(ObjectId qp) {
    Object* o = find_mutable(qp);
    if (!o || o->kind != Kind::qp) return;
    for (;;) {
        auto& q = std::get<QpState>(objects_[qp].state);
        // Requests run one at a time in posting order, so READ_FENCE (FR-FENCE-01) always holds.
        if (q.initiator.empty() || q.initiator.front().deferred) return;
        if (q.error) {  // FLS-02: behind an error everything is flushed (undone in reverse)
            fail_qp(qp, false);
            return;
        }
        // Taken off the queue first: a failing request must not be flushed with those behind it.
        WorkRequest wr = std::move(q.initiator.front());
        q.initiator.pop_front();
        bool was_error = q.error;
        const bool late = reached_at_unknown_moment(q, qp, wr);
        Completion done;
        if (!execute(qp, wr, wr.call, done)) {  // waiting (a send without a receive at the peer)
            std::get<QpState>(objects_[qp].state).initiator.push_front(std::move(wr));
            return;
        }
        done.deferred = wr.flags & NDK_OP_FLAG_DEFER;
        done.read_fence = (wr.flags & NDK_OP_FLAG_READ_FENCE) && !NT_ERROR(done.status);
        if ((late || contested_failure(done)) && done.outcome != Completion::Outcome::success)
            std::get<QpState>(objects_[qp].state).error_timing_open = true;
        deliver(std::move(done));
        // MODEL-CQ-ERR-01: the failed request's entry comes first, then what is behind it is
        // flushed (STATUS_CANCELLED).
        if (!was_error && std::get<QpState>(objects_[qp].state).error) fail_qp(qp, false);
    }
}

namespace {
bool overlay(const Completion::Landing& l, const Extent& source, std::vector<std::byte>* out);

// Every landing a QP still owes: its pending entries' (both queues) and its silent requests'.
// `q` const or not: `visit` gets the landings alike.
template <typename Qp, typename Visit>
void for_each_pending_landing(Qp& q, Visit&& visit) {
    for (auto* list : {&q.initiator_pending, &q.receive_pending})
        for (auto& done : *list)
            for (auto& l : done.landings)
                visit(l);
    for (auto& l : q.silent_landings)
        visit(l);
}
}  // namespace

bool Model::on_landing_pages(const Extent& bytes) const {
    return !landing_pages_.empty() &&
           std::any_of(bytes.pages.begin(), bytes.pages.end(),
                       [&](PFN_NUMBER pfn) { return landing_pages_.contains(pfn); });
}

template <typename Visit>
void Model::for_each_landing_qp(Visit&& visit) {
    for (size_t i = 0; i < landing_qps_.size();) {
        ObjectId id = landing_qps_[i];
        auto* q = state_mut<QpState>(id);
        auto holds = [](const Fifo<Completion>& list) {
            return std::any_of(list.begin(), list.end(),
                               [](const Completion& c) { return !c.landings.empty(); });
        };
        if (!q || (q->silent_landings.empty() && !holds(q->initiator_pending) &&
                   !holds(q->receive_pending))) {
            landing_qps_[i] = landing_qps_.back();
            landing_qps_.pop_back();
            continue;
        }
        visit(*q, id);
        ++i;
    }
}

void Model::record_landing(Completion& done, const Extent& target, std::vector<std::byte> bytes) {
    if (mode_ == Mode::simulate) {
        scatter(memory_, target, bytes.data(), bytes.size());
        recycle_bytes(std::move(bytes));
        return;
    }
    Completion::Landing landing;
    landing.at.reserve(target.pages.size());
    landing.sizes.reserve(target.pages.size());
    for (size_t i = 0; i < target.pages.size(); ++i) {
        landing.at.push_back({target.pages[i], target.offsets[i]});
        landing.sizes.push_back(target.sizes[i]);
    }
    landing.bytes = std::move(bytes);
    landing.unchecked = !landings_observable_;
    // RD-01, RCV-03: pieces of one target that overlap (two sink SGEs naming the same bytes)
    // get whichever piece the device wrote last, an order no page fixes.
    if (target.pages.size() > 1) {
        SmallVector<std::tuple<PFN_NUMBER, uint32_t, uint32_t>, 4> pieces;
        for (size_t i = 0; i < target.pages.size(); ++i)
            pieces.push_back({target.pages[i], target.offsets[i], target.sizes[i]});
        std::sort(pieces.begin(), pieces.end());
        for (size_t i = 1; i < pieces.size(); ++i)
            if (std::get<0>(pieces[i]) == std::get<0>(pieces[i - 1]) &&
                std::get<1>(pieces[i]) < std::get<1>(pieces[i - 1]) + std::get<2>(pieces[i - 1]))
                landing.unchecked = true;
    }
    // RD-01, RCV-03, WRT-01: bytes an earlier request landed and this one lands on again may be
    // overwritten before that request's entry is retrieved, where its landing is checked: it is
    // not checked then (the provider may well have placed it right).
    if (on_landing_pages(target))
        for_each_landing_qp([&](QpState& q, ObjectId) {
            for_each_pending_landing(q, [&](Completion::Landing& l) {
                if (!l.unchecked && overlay(l, target, nullptr)) l.unchecked = true;
            });
        });
    done.landings.push_back(std::move(landing));
    note_landing(done.landings.back(), +1);
}

void Model::remote_failure(ObjectId qp, Completion& done, NTSTATUS status, RuleIds rules,
                           std::string why) {
    done.outcome = Completion::Outcome::error;
    done.status = status;
    done.rules = std::move(rules);
    done.why = std::move(why);
    // An error completion moves the QP to the error state (later requests are flushed); what
    // becomes of the peer is open (AMB-12, MODEL-CQ-ERR-01), so its completions are not judged.
    auto& q = std::get<QpState>(objects_[qp].state);
    if (auto* peer = state_mut<QpState>(q.peer)) peer->peer_error = true;
}

bool Model::execute(ObjectId qp, WorkRequest& wr, const Call& call, Completion& done) {
    auto& q = std::get<QpState>(objects_[qp].state);
    // FR-PAGE-02: the pages of the fast registrations a local SGL names (a receive's or a
    // read's sink), where bytes a wrong page order misplaced are looked for; null when none.
    auto fast_registered_pages_of =
        [this](ObjectId adapter,
               const std::vector<Sge>& sgl) -> std::shared_ptr<const std::vector<PFN_NUMBER>> {
        std::vector<PFN_NUMBER> pages;
        for (const Sge& sge : sgl)
            if (const auto* mr = state_of<MrState>(object_of_token(adapter, sge.token, false));
                mr && mr->fast_register)
                pages.insert(pages.end(), mr->region.pages.begin(), mr->region.pages.end());
        if (pages.empty()) return nullptr;
        return std::make_shared<const std::vector<PFN_NUMBER>>(std::move(pages));
    };
    // FR-MAP-01: parallel to fast_registered_pages_of, the pages of each registration's run
    // from its first entry (its own pages where that run is the array); null when no
    // registration differs from its run.
    auto fast_registered_runs_of =
        [this](ObjectId adapter,
               const std::vector<Sge>& sgl) -> std::shared_ptr<const std::vector<PFN_NUMBER>> {
        std::vector<PFN_NUMBER> runs;
        bool differs = false;
        for (const Sge& sge : sgl)
            if (const auto* mr = state_of<MrState>(object_of_token(adapter, sge.token, false));
                mr && mr->fast_register) {
                const auto& run = mr->run_from_first_entry;
                differs |= run != nullptr;
                runs.insert(runs.end(), run ? run->begin() : mr->region.pages.begin(),
                            run ? run->end() : mr->region.pages.end());
            }
        if (!differs) return nullptr;
        return std::make_shared<const std::vector<PFN_NUMBER>>(std::move(runs));
    };
    // RMR-VA-03: the regions a landing's bytes go to whose MDL's VA maps other pages than its
    // PFNs (decoy-VA MDLs), each PFN with the page its VA maps; null when none.
    auto va_aliases_of = [](const std::vector<const MrState*>& mrs, Completion::Landing& into) {
        std::vector<std::pair<PFN_NUMBER, PFN_NUMBER>> pairs;
        for (const MrState* mr : mrs)
            if (mr && !mr->fast_register && mr->region.va_pages.size() == mr->region.pages.size())
                for (size_t i = 0; i < mr->region.pages.size(); ++i)
                    pairs.emplace_back(mr->region.pages[i], mr->region.va_pages[i]);
        if (pairs.empty()) return;
        into.va_aliases = std::make_shared<const std::vector<std::pair<PFN_NUMBER, PFN_NUMBER>>>(
            std::move(pairs));
        into.va_rule = "RMR-VA-03";
    };
    // ...and for a source extent of such regions: the extent the VA would have read.
    auto note_source_through_va = [](const std::vector<const MrState*>& mrs, const Extent& source,
                                     Completion::Landing& into) {
        bool moved = false;
        Extent through_va;
        for (size_t i = 0; i < source.pages.size(); ++i) {
            PFN_NUMBER page = source.pages[i];
            for (const MrState* mr : mrs)
                if (mr && !mr->fast_register &&
                    mr->region.va_pages.size() == mr->region.pages.size())
                    for (size_t k = 0; k < mr->region.pages.size() && page == source.pages[i]; ++k)
                        if (mr->region.pages[k] == page && mr->region.va_pages[k] != page) {
                            page = mr->region.va_pages[k];
                            moved = true;
                        }
            through_va.append(page, source.offsets[i], source.sizes[i]);
        }
        if (!moved) return;
        into.source_through_va = std::make_shared<const Extent>(std::move(through_va));
        into.va_rule = "RMR-VA-03";
    };
    auto sgl_regions = [this](ObjectId adapter, const std::vector<Sge>& sgl) {
        std::vector<const MrState*> mrs;
        for (const Sge& sge : sgl)
            mrs.push_back(state_of<MrState>(object_of_token(adapter, sge.token, false)));
        return mrs;
    };
    // LAM-VA-01: the pages of decoy-VA mappings (NdkBuildLam over an MDL whose VA maps other
    // pages than its PFNs) an SGL reaches through the privileged token, each PFN with the page
    // its VA maps; empty when none.
    auto lam_va_pairs = [this](ObjectId on_qp, const std::vector<Sge>& sgl) {
        std::vector<std::pair<PFN_NUMBER, PFN_NUMBER>> pairs;
        const Object& qo = objects_[on_qp];
        const auto* pd = state_of<PdState>(std::get<QpState>(qo.state).pd);
        const auto* a = state_of<AdapterState>(qo.adapter);
        if (!pd || !pd->privileged_token || !a) return pairs;
        for (const Sge& sge : sgl) {
            if (sge.token != *pd->privileged_token || sge.length == 0) continue;
            uint64_t first = sge.address & ~uint64_t(PAGE_SIZE - 1);
            for (uint64_t page = first; page < sge.address + sge.length; page += PAGE_SIZE) {
                auto it = a->logical_pages.find(page);
                if (it == a->logical_pages.end()) continue;
                for (const auto& [lam_id, index] : it->second)  // the mapping pfn_of_logical uses
                    if (objects_[lam_id].life == Life::ready) {
                        const auto& lam = std::get<LamState>(objects_[lam_id].state);
                        if (index < lam.va_pfns.size() && lam.va_pfns[index] != lam.pfns[index])
                            pairs.emplace_back(lam.pfns[index], lam.va_pfns[index]);
                        break;
                    }
            }
        }
        return pairs;
    };
    // ...a landing into such pages (a receive, a read's sink)
    auto lam_va_aliases = [&](ObjectId on_qp, const std::vector<Sge>& sgl,
                              Completion::Landing& into) {
        if (into.va_aliases) return;  // (a decoy-VA region already named RMR-VA-03)
        auto pairs = lam_va_pairs(on_qp, sgl);
        if (pairs.empty()) return;
        into.va_aliases = std::make_shared<const std::vector<std::pair<PFN_NUMBER, PFN_NUMBER>>>(
            std::move(pairs));
        into.va_rule = "LAM-VA-01";
    };
    // ...and a source extent from them (a send, a write): the extent the VA would have read.
    auto lam_source_through_va = [&](ObjectId on_qp, const std::vector<Sge>& sgl,
                                     const Extent& source, Completion::Landing& into) {
        if (into.source_through_va) return;
        auto pairs = lam_va_pairs(on_qp, sgl);
        if (pairs.empty()) return;
        Extent through_va;
        for (size_t i = 0; i < source.pages.size(); ++i) {
            PFN_NUMBER page = source.pages[i];
            for (const auto& [pfn, behind_va] : pairs)
                if (pfn == page) {
                    page = behind_va;
                    break;
                }
            through_va.append(page, source.offsets[i], source.sizes[i]);
        }
        into.source_through_va = std::make_shared<const Extent>(std::move(through_va));
        if (!into.va_rule) into.va_rule = "LAM-VA-01";
    };
    bool silent_flag = wr.flags & NDK_OP_FLAG_SILENT_SUCCESS;
    if (wr.decided) {
        done = std::move(*wr.decided);  // (it runs now: the request is not queued again)
        if (q.error) {                  // flushed before it ran: what it did at posting is undone
            undo(wr);
            done = cancelled(qp, wr, false);
        }
        return true;
    }
    if (q.error) {  // a request after an error is flushed (MODEL-CQ-ERR-01, FLS-02)
        done = cancelled(qp, wr, false);
        return true;
    }
    const bool is_send = std::holds_alternative<calls::Send>(call) ||
                         std::holds_alternative<calls::SendAndInvalidate>(call);
    NDK_OPERATION_TYPE type = is_send                                     ? NdkOperationTypeSend
                              : std::holds_alternative<calls::Read>(call) ? NdkOperationTypeRead
                                                                          : NdkOperationTypeWrite;
    done = initiator_completion(qp, wr.request_context, type, 0);
    // MODEL-CQ-ERR-01, AMB-12: a peer QP in error answers nothing, so a send, read or write
    // fails (on InfiniBand when its transport retries run out: STATUS_IO_TIMEOUT), and this QP
    // goes to error with it.
    if (const auto* peer = state_of<QpState>(q.peer); peer && peer->error) {
        remote_failure(qp, done, STATUS_IO_TIMEOUT, {"MODEL-CQ-ERR-01", "AMB-12"},
                       "the peer QP is in error");
        done.outcome = Completion::Outcome::any_error;
        auto& self = std::get<QpState>(objects_[qp].state);
        self.error = true;
        // FLS-03: unless the peer's error came at a moment nobody knows yet: then this request
        // may still have found the peer working.
        if (peer->error_timing_open) {
            done.outcome = Completion::Outcome::any;
            self.error_timing_open = true;
        }
        return true;
    }
    std::string why;
    RuleIds rules;
    // WR-FENCE-01, FR-FENCE-01: requests run one at a time in posting order here, so a fenced
    // one always starts after the reads before it. In check mode the bytes it reads are fixed
    // only as far as the docs order it after earlier requests (gather_expected).
    const bool fenced = wr.flags & NDK_OP_FLAG_READ_FENCE;
    bool determined = true;

    if (is_send) {
        const std::vector<Sge>& sgl = std::holds_alternative<calls::Send>(call)
                                          ? as<calls::Send>(call).sgl
                                          : as<calls::SendAndInvalidate>(call).sgl;
        const std::vector<std::byte>& inline_payload =
            std::holds_alternative<calls::Send>(call)
                ? as<calls::Send>(call).inline_payload
                : as<calls::SendAndInvalidate>(call).inline_payload;
        bool is_inline = wr.flags & NDK_OP_FLAG_INLINE;
        std::vector<std::byte> payload;
        Extent source;
        if (is_inline) {
            payload = inline_payload;  // SGE-03, SGE-06: taken during the call
        } else {
            if (!resolve_local(qp, sgl, 0, source, why, rules)) {
                remote_failure(qp, done, STATUS_ACCESS_VIOLATION, rules, why);  // local protection
                q.error = true;
                return true;
            }
            done.grant_rules = local_grant_rules(qp, sgl, 0);  // RMR-FLG-02, FR-FLG-02, FR-TOK-02
            if (through_lam_outliving_release(qp, sgl)) done.token_rule = "LAM-REL-01";
            note_initialized_local_token(qp, sgl, done);  // IFR-TOK-01
            determined = gather_expected(qp, source, fenced, payload);
        }
        // RCV-03: the next receive at the peer (its receive queue or its SRQ) takes the send.
        auto* peer = state_mut<QpState>(q.peer);
        if (!peer) {  // MODEL-CQ-ERR-01: a transport failure
            remote_failure(qp, done, STATUS_CONNECTION_RESET, {"MODEL-CQ-ERR-01"},
                           "the peer QP is gone");
            q.error = true;
            return true;
        }
        std::optional<WorkRequest> receive;
        ObjectId from_srq = peer->srq;
        if (from_srq) {  // RCV-02: any QP of the SRQ may consume its receives
            auto* s = state_mut<SrqState>(from_srq);
            if (!s || s->receives.empty()) return false;
            receive = std::move(s->receives.front());
            s->receives.pop_front();
            srq_check_threshold(from_srq);  // SRQ-10: the count may drop below the threshold
            peer = state_mut<QpState>(q.peer);
        } else {
            if (peer->receive.empty()) return false;  // waits, as with an infinite RNR retry
            receive = std::move(peer->receive.front());
            peer->receive.pop_front();
        }
        ObjectId peer_id = q.peer;
        const std::vector<Sge>& rsgl = std::holds_alternative<calls::Receive>(receive->call)
                                           ? as<calls::Receive>(receive->call).sgl
                                           : as<calls::SrqReceive>(receive->call).sgl;
        Completion got;
        got.qp = peer_id;
        got.cq = peer->receive_cq;  // CQP-OBJ-02
        got.receive_queue = true;
        got.qp_context = peer->qp_context;  // CQP-CTX-01
        got.request_context = receive->request_context;
        got.type = NdkOperationTypeReceive;
        got.sequence = receive->sequence;
        got.srq = from_srq;
        Extent target;
        std::string rwhy;
        RuleIds rrules;
        // TOK-03, SGE-05 (as for a zero-byte Read or Write): the receive's SGEs the message does
        // not reach are not looked at, so a zero-byte message lands with any token (found on
        // rxe, which checks a token when it places bytes there). A message longer than all of
        // them together is checked against all.
        std::vector<Sge> reached;
        uint64_t unplaced = payload.size();
        for (const Sge& sge : rsgl) {
            if (unplaced == 0) break;
            reached.push_back(sge);
            unplaced -= std::min<uint64_t>(unplaced, sge.length);
        }
        if (unplaced > 0) reached = rsgl;
        if (!payload.empty() &&
            !resolve_local(peer_id, reached, kLocalWrite, target, rwhy, rrules)) {
            got.outcome = Completion::Outcome::error;
            got.status = STATUS_ACCESS_VIOLATION;
            got.rules = rrules;
            got.why = rwhy;
            remote_failure(qp, done, STATUS_ACCESS_VIOLATION, {"MODEL-CQ-ERR-01"},
                           "the peer's receive buffer is not writable: " + rwhy);
        } else if (target.bytes() < payload.size()) {
            got.outcome = Completion::Outcome::error;
            got.status = STATUS_BUFFER_TOO_SMALL;
            got.rules = {"RCV-03", "MODEL-CQ-ERR-01"};
            got.why = "the receive buffer holds " + num(target.bytes()) + " bytes, the send " +
                      num(payload.size());
            remote_failure(qp, done, STATUS_BUFFER_TOO_SMALL, {"MODEL-CQ-ERR-01"},
                           "the peer's receive buffer is too small");
        } else {
            // RMR-FLG-03, FR-FLG-03: the grant of the receive's local write; the sender's entry
            // fails with it where the receive does.
            if (!payload.empty())
                got.grant_rules = local_grant_rules(peer_id, reached, kLocalWrite);
            if (!got.grant_rules.empty()) {  // the source's grant first, then the receive's
                RuleList both = done.grant_rules;
                for (const char* rule : got.grant_rules)
                    if (std::find(both.begin(), both.end(), std::string_view(rule)) == both.end())
                        both.push_back(rule);
                done.grant_rules = both;
            }
            // FR-APC-01 (check mode): the fast registrations the send reaches (its source and
            // the receive's buffer), how far, and its shape; the receive's own.
            if (mode_ == Mode::check && !payload.empty()) {
                const uint32_t invalidating = std::holds_alternative<calls::SendAndInvalidate>(call)
                                                  ? as<calls::SendAndInvalidate>(call).remote_token
                                                  : 0;
                done.page_reaches =
                    page_reaches_of(qp, NdkOperationTypeSend, wr.flags, invalidating, 0, 0, 0,
                                    is_inline ? nullptr : &sgl, payload.size(), peer_id, &reached);
                got.page_reaches = page_reaches_of(peer_id, NdkOperationTypeReceive, 0, 0, 0, 0, 0,
                                                   &reached, payload.size());
            }
            Extent used;
            uint64_t left = payload.size();
            for (size_t i = 0; i < target.pages.size() && left > 0; ++i) {
                uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(left, target.sizes[i]));
                used.append(target.pages[i], target.offsets[i], n);
                left -= n;
            }
            got.bytes_transferred = static_cast<uint32_t>(payload.size());  // CQ-RES-01
            record_landing(got, used, std::move(payload));                  // (not read after this)
            if (!got.landings.empty()) {  // FR-PAGE-02: a receive into a fast registration
                got.landings.back().fast_registered_pages =
                    fast_registered_pages_of(objects_[peer_id].adapter, reached);
                got.landings.back().fast_registered_runs =  // FR-MAP-01
                    fast_registered_runs_of(objects_[peer_id].adapter, reached);
            }
            if (!got.landings.empty()) {  // RMR-VA-03: a receive into a decoy-VA region
                va_aliases_of(sgl_regions(objects_[peer_id].adapter, reached), got.landings.back());
                // ...or a send from one
                if (!is_inline)
                    note_source_through_va(sgl_regions(objects_[qp].adapter, sgl), source,
                                           got.landings.back());
                // LAM-VA-01: the same through a LAM's logical addresses (privileged token)
                lam_va_aliases(peer_id, reached, got.landings.back());
                if (!is_inline) lam_source_through_va(qp, sgl, source, got.landings.back());
            }
            if (!determined) got.landings.back().unchecked = true;
            // RCV-03: a source that overlaps the target may have been written by the transfer
            // itself before it is read here (check mode reads it after the provider ran).
            if (!is_inline && !got.landings.empty() &&
                overlay(got.landings.back(), source, nullptr))
                got.landings.back().unchecked = true;
            if (std::holds_alternative<calls::SendAndInvalidate>(call)) {
                // SAI-01: the peer invalidates the token; SAI-02: a bad token aborts there.
                // CQ-RES-06: the sender's own entry stays a Send (initiator_completion above).
                uint32_t token = as<calls::SendAndInvalidate>(call).remote_token;
                ObjectId victim = object_of_token(objects_[peer_id].adapter, token, true);
                // RMR-TOK-02, FR-TOK-01: a token to invalidate that is the MR's local token came
                // from a remote token getter that returned the local one; if the peer then
                // refuses it, that getter broke its rule (named first, as for reads and writes).
                // Only on an adapter whose keys were seen to differ: where they are one (rxe:
                // lkey == rkey), a refused invalidation is SAI-01's finding, not the getter's.
                if (const auto* mr = state_of<MrState>(victim);
                    mr && mr->local_token && *mr->local_token == token) {
                    const auto* adapter = state_of<AdapterState>(objects_[peer_id].adapter);
                    if (adapter && adapter->tokens_differ)
                        got.token_rule = done.token_rule =
                            mr->fast_register ? "FR-TOK-01" : "RMR-TOK-02";
                }
                if (victim) {
                    // CQ-RI-01, CQ-RI-02: retrieved with NdkGetCqResults too, the entry is an
                    // ordinary receive, and the token is invalidated all the same.
                    invalidate_token_of(victim);
                    got.type = NdkOperationTypeReceiveAndInvalidate;  // CQ-RES-07
                    got.invalidated = true;
                    got.invalidated_token = token;
                } else {
                    // SAI-02: the peer aborts the connection. How each side's entry reports it
                    // is the transport's (open when checking), but the connection is gone:
                    // both QPs fail whatever comes after. The reference provider fails both.
                    got.outcome = Completion::Outcome::error;
                    got.status = STATUS_CONNECTION_RESET;
                    got.rules = {"SAI-02"};
                    got.why = "the token to invalidate is not valid here";
                    remote_failure(qp, done, STATUS_CONNECTION_RESET, {"SAI-02"},
                                   "the token to invalidate is not valid at the peer");
                    if (mode_ == Mode::check) {
                        got.outcome = Completion::Outcome::any;
                        done.outcome = Completion::Outcome::any;
                    }
                    q.error = true;
                    peer->error = true;
                }
            }
        }
        bool solicited = wr.flags & NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT;  // SND-04
        got.solicited = solicited;
        const bool receive_failed = got.outcome == Completion::Outcome::error;
        // Deliver the receive first: by the time the sender completes, the data is there.
        deliver(std::move(got));
        // FLS-02, MODEL-CQ-ERR-01: the failed receive moves the peer to error; the receives
        // queued behind it are flushed (found on rxe).
        if (receive_failed) {
            fail_qp(peer_id, true);
            peer = state_mut<QpState>(peer_id);
            // FLS-03: neither side knows when: the receiver fails as the message lands, the
            // sender when the peer's answer comes back (on rxe after a receiver-not-ready wait);
            // meanwhile either side's receives may still take the other's messages.
            if (mode_ == Mode::check) peer->error_timing_open = q.error_timing_open = true;
        }
        if (solicited) notify_cq(peer->receive_cq, false, true);
        if (done.outcome == Completion::Outcome::error) q.error = true;
        done.silent_flag = silent_flag;
        done.silent = silent_flag && done.outcome == Completion::Outcome::success;
        return true;
    }

    // Read and Write.
    bool is_read = type == NdkOperationTypeRead;
    const auto& sgl = is_read ? as<calls::Read>(call).sgl : as<calls::Write>(call).sgl;
    uint64_t remote_address =
        is_read ? as<calls::Read>(call).remote_address : as<calls::Write>(call).remote_address;
    uint32_t remote_token =
        is_read ? as<calls::Read>(call).remote_token : as<calls::Write>(call).remote_token;
    uint64_t bytes = total_length(sgl);
    bool is_inline = !is_read && (wr.flags & NDK_OP_FLAG_INLINE);
    Extent local;
    uint32_t local_need = is_read ? static_cast<uint32_t>(kLocalWrite) : 0u;
    bool sink_ok = adapter_info(qp).AdapterFlags & NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
    if (is_read && !sink_ok) local_need |= kReadSink;  // RD-03, RMR-SINK-01, FR-SINK-01
    bool resolved = is_inline || resolve_local(qp, sgl, local_need, local, why, rules);
    // AMB-37: a sink holding the read-sink right but not local write. The docs only say the
    // flag lets a provider give a sink what it needs; real RDMA hardware writes read data into
    // a sink only with local write (local_write_and_sink), sink_flag_suffices reads the flag as
    // enough. The reading not chosen is a warning either way.
    bool contested = false;
    if (!resolved && is_read && !sink_ok) {
        Extent lenient;
        std::string lenient_why;
        RuleIds lenient_rules;
        contested =
            resolve_local(qp, sgl, kReadSink | kWriteBySink, lenient, lenient_why, lenient_rules);
        if (contested && readings_.read_sink_flag_suffices) {
            local = std::move(lenient);
            resolved = true;
        }
    }
    if (!resolved) {
        bool sink_only =
            is_read && !sink_ok && resolve_local(qp, sgl, kLocalWrite, local, why, rules);
        remote_failure(qp, done, STATUS_ACCESS_VIOLATION, rules, why);
        if (sink_only) done.outcome = Completion::Outcome::any;  // RD-03 is the caller's duty
        if (contested) {  // AMB-37 (local_write_and_sink): the data may land all the same
            done.rules.push_back("AMB-37");
            done.other_reading = done.rules;
            done.other_reading_succeeds = true;
        }
        q.error = true;
        return true;
    }
    if (contested) {  // AMB-37 (sink_flag_suffices): the provider may still refuse the sink
        // (`rules` and `why` still say why the strict resolution failed: nothing has changed
        // them since; copied here only, not on every read and write.)
        RuleIds contested_rules = rules;
        contested_rules.push_back("AMB-37");
        done.other_reading = std::move(contested_rules);
        done.why = why + " (the read-sink right alone lets it land under the profile)";
    }
    // RMR-FLG-02/03, FR-FLG-02/03, FR-TOK-02: the grant of the local access it relies on.
    if (!is_inline) done.grant_rules = local_grant_rules(qp, sgl, is_read ? kLocalWrite : 0u);
    Extent remote;
    ObjectId target = 0;
    auto note_token = [&] {  // RMR-TOK-02, FR-TOK-01: a remote token that is the local one
        if (const auto* mr = state_of<MrState>(target);
            mr && mr->local_token && *mr->local_token == remote_token)
            done.token_rule = mr->fast_register ? "FR-TOK-01" : "RMR-TOK-02";
        // RMR-TOK-01: a local SGE's token that its MR's previous registration had (its
        // NdkDeregisterMr completed), reported by NdkGetLocalTokenFromMr for the new one: if the
        // request then fails, that getter broke its rule (named first).
        if (done.token_rule || is_inline) return;
        note_initialized_local_token(qp, sgl, done);  // IFR-TOK-01, before RMR-TOK-01
        if (done.token_rule) return;
        const ObjectId adapter = objects_[qp].adapter;
        if (const auto* a = state_of<AdapterState>(adapter))
            for (const auto& sge : sgl)
                if (auto it = a->deregistered_tokens.find(sge.token);
                    it != a->deregistered_tokens.end() &&
                    object_of_token(adapter, sge.token, false) == it->second) {
                    done.token_rule = "RMR-TOK-01";
                    return;
                }
        // RMR-VA-01: a range reaching into the last ByteOffset bytes of a region registered
        // from mid-page, which a region taken from StartVa (ByteOffset left out) does not
        // hold: if the request then fails, that is the likely reason (named first).
        auto in_tail = [](const MrState* mr, uint64_t address, uint64_t length) {
            if (!mr || mr->fast_register || mr->region.first_byte_offset == 0 || length == 0)
                return false;
            const uint64_t end = mr->region.base + mr->region.length;
            return address + length > end - mr->region.first_byte_offset && address < end;
        };
        bool tail = in_tail(state_of<MrState>(target), remote_address, bytes);
        for (const auto& sge : sgl)
            tail = tail || in_tail(state_of<MrState>(object_of_token(adapter, sge.token, false)),
                                   sge.address, sge.length);
        if (tail) done.token_rule = "RMR-VA-01";
    };
    // TOK-03 for an empty transfer: the docs are silent on whether a Read or Write of zero bytes
    // checks its RemoteToken; InfiniBand and RoCE do not validate the R_Key of a zero-length
    // RDMA operation, so the model reads it as touching nothing remote (and succeeding).
    if (bytes > 0 &&
        !resolve_remote(qp, remote_token, remote_address, bytes,
                        is_read ? kRemoteRead : kRemoteWrite, remote, why, rules, &target)) {
        bool beyond = why.find("beyond") != std::string::npos;
        NTSTATUS status = is_read && beyond ? STATUS_REMOTE_RESOURCES : STATUS_ACCESS_VIOLATION;
        if (is_read && beyond) rules.push_back("RD-05");
        remote_failure(qp, done, status, rules, why);
        note_refuted_registration(qp, remote_token, remote_address, bytes,
                                  is_read ? kRemoteRead : kRemoteWrite, done);  // FR-SILENT-02
        q.error = true;
        return true;
    }
    note_token();
    if (!done.token_rule && !is_inline && through_lam_outliving_release(qp, sgl))
        done.token_rule = "LAM-REL-01";
    // The local grant is named first only where the remote side is a region: a window's reach
    // is where hardware families differ (a verbs type-2 window answers only through the QP
    // that bound it, rxe's BND-01 finding), so a failure through one may be the window's.
    if (state_of<MwState>(target)) done.grant_rules = {};
    // FR-APC-01 (check mode): the fast registrations it reaches, how far, and its shape.
    if (mode_ == Mode::check)
        done.page_reaches =
            page_reaches_of(qp, type, wr.flags, remote_token, target, remote_address, bytes,
                            is_inline ? nullptr : &sgl, bytes);
    if (is_read) {
        std::vector<std::byte> data;
        determined = gather_expected(qp, remote, fenced, data);
        record_landing(done, local, std::move(data));  // RD-01
        if (!done.landings.empty()) {
            done.landings.back().from_read = true;
            // FR-PAGE-02: a read into a fast registration
            done.landings.back().fast_registered_pages =
                fast_registered_pages_of(objects_[qp].adapter, sgl);
            done.landings.back().fast_registered_runs =  // FR-MAP-01
                fast_registered_runs_of(objects_[qp].adapter, sgl);
            // RMR-VA-03: a read into a decoy-VA region, or from one
            va_aliases_of(sgl_regions(objects_[qp].adapter, sgl), done.landings.back());
            note_source_through_va({state_of<MrState>(target)}, remote, done.landings.back());
            lam_va_aliases(qp, sgl, done.landings.back());  // LAM-VA-01: a LAM sink
            // ...and a read from one (the peer's region, reached through its remote token)
            if (const auto* mr = state_of<MrState>(target);
                mr && mr->fast_register && !remote.pages.empty()) {
                done.landings.back().source_fast_registered_pages =
                    std::make_shared<const std::vector<PFN_NUMBER>>(mr->region.pages.begin(),
                                                                    mr->region.pages.end());
                done.landings.back().source_fast_registered_runs = mr->run_from_first_entry;
                done.landings.back().source_first_offset = remote.offsets[0];
                auto first =
                    std::find(mr->region.pages.begin(), mr->region.pages.end(), remote.pages[0]);
                done.landings.back().source_first_page = uint32_t(first - mr->region.pages.begin());
            }
            done.landings.back().unchecked |= !determined;
            // RD-01: a remote source overlapping the local target (a loopback onto itself) may
            // have been written by the transfer itself before it is read here.
            done.landings.back().unchecked |= overlay(done.landings.back(), remote, nullptr);
        }
        done.success_warns = wr.over_read_limit;  // MODEL-RD-01 (fail): queued, not failed
        // RD-02, AI-FLAG-05: on success the first SGE's token is invalidated where the adapter
        // supports it; RD-07: without the flag the token stays valid.
        if ((wr.flags & readings_.read_local_invalidate_flag) &&
            (adapter_info(qp).AdapterFlags &
             NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED) &&
            !sgl.empty())
            if (ObjectId victim = object_of_token(objects_[qp].adapter, sgl[0].token, false))
                invalidate_token_of(victim);
    } else {
        std::vector<std::byte> data;
        if (is_inline)
            data = as<calls::Write>(call).inline_payload;  // SGE-06
        else
            determined = gather_expected(qp, local, fenced, data);
        record_landing(done, remote, std::move(data));  // WRT-01
        if (!done.landings.empty()) {  // RMR-VA-03: a write into a decoy-VA region, or from one
            va_aliases_of({state_of<MrState>(target)}, done.landings.back());
            if (!is_inline)
                note_source_through_va(sgl_regions(objects_[qp].adapter, sgl), local,
                                       done.landings.back());
            if (!is_inline)  // LAM-VA-01: from a LAM's logical addresses
                lam_source_through_va(qp, sgl, local, done.landings.back());
        }
        if (!done.landings.empty())
            if (const auto* mr = state_of<MrState>(target); mr && mr->fast_register) {
                done.landings.back().fast_registered_pages =
                    std::make_shared<const std::vector<PFN_NUMBER>>(mr->region.pages);
                done.landings.back().fast_registered_runs = mr->run_from_first_entry;  // FR-MAP-01
            }
        // FR-PAGE-02 for a write from a fast registration (one SGE through its local token): the
        // bytes that land may be another source page's, as for a read from one.
        if (!done.landings.empty() && !is_inline && sgl.size() == 1 && !local.pages.empty())
            if (const auto* mr =
                    state_of<MrState>(object_of_token(objects_[qp].adapter, sgl[0].token, false));
                mr && mr->fast_register) {
                auto first =
                    std::find(mr->region.pages.begin(), mr->region.pages.end(), local.pages[0]);
                if (first != mr->region.pages.end()) {
                    auto& landing = done.landings.back();
                    landing.source_fast_registered_pages =
                        std::make_shared<const std::vector<PFN_NUMBER>>(mr->region.pages.begin(),
                                                                        mr->region.pages.end());
                    landing.source_fast_registered_runs = mr->run_from_first_entry;  // FR-MAP-01
                    landing.source_first_offset = local.offsets[0];
                    landing.source_first_page = uint32_t(first - mr->region.pages.begin());
                }
            }
        if (!done.landings.empty()) {
            done.landings.back().unchecked |= !determined;
            // WRT-01: so may a local source overlapping the remote target.
            if (!is_inline)
                done.landings.back().unchecked |= overlay(done.landings.back(), local, nullptr);
        }
    }
    done.silent = done.silent_flag = silent_flag;
    return true;
}

Completion Model::cancelled(ObjectId qp, const WorkRequest& wr, bool receive_queue) const {
    const auto& q = std::get<QpState>(objects_[qp].state);
    Completion done;
    done.qp = qp;
    done.cq = receive_queue ? q.receive_cq : q.initiator_cq;
    done.receive_queue = receive_queue;
    done.qp_context = q.qp_context;
    done.request_context = wr.request_context;
    done.sequence = wr.sequence;
    done.deferred = wr.flags & NDK_OP_FLAG_DEFER;
    done.outcome = Completion::Outcome::cancelled;  // FLS-02, CQ-CST-02
    // FLS-03: flushed before the consumer could know its QP had gone to error, a request may
    // have run first (a receive may have taken a message), with whatever outcome that gave it.
    if (q.error_timing_open || q.outcome_open) done.outcome = Completion::Outcome::any;
    done.status = STATUS_CANCELLED;
    done.rules = {"FLS-02"};
    if (q.flushed && !q.unusable) {  // MODEL-FLS-01 (cancelled): posted after NdkFlush
        done.other_reading = {"MODEL-FLS-01"};
        done.other_reading_succeeds = true;
        done.why = "posted after NdkFlush; the QP may still work (the usable reading)";
    }
    std::visit(
        [&](const auto& c) {
            using T = std::decay_t<decltype(c)>;
            if constexpr (std::is_same_v<T, calls::Receive> || std::is_same_v<T, calls::SrqReceive>)
                done.type = NdkOperationTypeReceive;
            else if constexpr (std::is_same_v<T, calls::Read>)
                done.type = NdkOperationTypeRead;
            else if constexpr (std::is_same_v<T, calls::Write>)
                done.type = NdkOperationTypeWrite;
            else if constexpr (std::is_same_v<T, calls::FastRegister>)
                done.type = NdkOperationTypeFastRegister;
            else if constexpr (std::is_same_v<T, calls::Bind>)
                done.type = NdkOperationTypeBind;
            else if constexpr (std::is_same_v<T, calls::Invalidate>)
                done.type = NdkOperationTypeInvalidate;
            else
                done.type = NdkOperationTypeSend;
        },
        wr.call);
    done.target = target_of(wr.call);
    return done;
}

void Model::fail_qp(ObjectId qp, bool flush_receives) {
    error_reaches_peer(qp);
    auto& q = std::get<QpState>(objects_[qp].state);
    q.error = true;
    (void)flush_receives;
    // Requests behind the failed one are flushed (they complete with STATUS_CANCELLED); what
    // they did when posted is undone, newest first.
    std::deque<WorkRequest> rest;
    rest.swap(q.initiator);
    for (auto it = rest.rbegin(); it != rest.rend(); ++it)
        undo(*it);
    for (const auto& wr : rest)
        deliver(cancelled(qp, wr, false));
    auto& q2 = std::get<QpState>(objects_[qp].state);
    std::deque<WorkRequest> receives;
    receives.swap(q2.receive);
    for (const auto& wr : receives)
        deliver(cancelled(qp, wr, true));
}

void Model::flush_qp(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q) return;
    // FLS-01..03: everything not yet done completes with STATUS_CANCELLED. In check mode a
    // request the model has already executed may still be in the provider's hands: it may
    // complete normally or be cancelled.
    for (auto& done : q->initiator_pending)
        if (done.outcome == Completion::Outcome::success)
            done.outcome = Completion::Outcome::success_or_cancelled;
    for (auto& done : q->receive_pending)
        if (done.outcome == Completion::Outcome::success)
            done.outcome = Completion::Outcome::success_or_cancelled;
    std::deque<WorkRequest> initiator, receive;
    initiator.swap(q->initiator);
    receive.swap(q->receive);
    // A FastRegister, Bind or Invalidate flushed before it ran leaves no effect (FR-TOK-01 made
    // it visible at posting; undone newest first).
    for (auto it = initiator.rbegin(); it != initiator.rend(); ++it)
        undo(*it);
    for (const auto& wr : initiator)
        deliver(cancelled(qp, wr, false));
    for (const auto& wr : receive)
        deliver(cancelled(qp, wr, true));
}

void Model::undo(const WorkRequest& wr) {
    if (!wr.undo) return;
    const WorkRequest::Undo& u = *wr.undo;
    auto open = [&](ObjectId id) {
        const Object* o = find(id);
        return o && o->life != Life::closed;
    };
    // Only while nothing changed the object after this request: a later bind, registration or
    // invalidation stands (the request's one change is the last: `changes` is one more).
    if (u.mr_state && open(u.mr) && state_of<MrState>(u.mr)->changes == u.mr_state->changes + 1) {
        set_token(u.mr, false, u.mr_state->local_token);
        set_token(u.mr, true, u.mr_state->remote_token);
        *state_mut<MrState>(u.mr) = *u.mr_state;
    }
    if (u.mw_state && open(u.mw) && state_of<MwState>(u.mw)->changes == u.mw_state->changes + 1) {
        set_token(u.mw, true, u.mw_state->remote_token);
        auto* mw = state_mut<MwState>(u.mw);
        auto per_mr = std::move(mw->binds_per_mr);
        *mw = *u.mw_state;
        mw->binds_per_mr = std::move(per_mr);
        if (u.window_mr && open(u.window_mr))
            state_mut<MrState>(u.window_mr)->bound_windows = u.window_mr_windows;
    }
    // LIFE-TREE-04: the MR stops being the MW's antecedent once no bind to it stands, whatever
    // else happened to the MW since.
    if (u.bound_mr && open(u.mw)) {
        auto& per_mr = state_mut<MwState>(u.mw)->binds_per_mr;
        auto count = std::find_if(per_mr.begin(), per_mr.end(),
                                  [&](const auto& entry) { return entry.first == u.bound_mr; });
        if (count != per_mr.end() && --count->second == 0) {
            per_mr.erase(count);
            remove_edge(u.mw, u.bound_mr);
        }
    }
}

void Model::make_unusable(ObjectId qp) {
    auto* q = state_mut<QpState>(qp);
    if (!q || q->unusable) return;
    q->unusable = true;
    fail_qp(qp, true);  // what is queued is flushed
    q = state_mut<QpState>(qp);
    // Nothing more is reported for it: entries still expected may never come.
    for (auto* list : {&q->initiator_pending, &q->receive_pending})
        for (auto& done : *list)
            done.outcome = Completion::Outcome::any;
    for (const auto& l : q->silent_landings)
        note_landing(l, -1);
    q->silent_landings.clear();
}

void Model::fail_cq(ObjectId cq_id, NTSTATUS status) {
    auto* cq = state_mut<CqState>(cq_id);
    if (!cq || cq->failed) return;
    // CQ-STATUS-02 (overrun, STATUS_BUFFER_OVERFLOW), CQ-STATUS-03 (fatal, STATUS_INTERNAL_ERROR):
    // the CQ reports no further completions, and every QP using it is unusable.
    cq->failed = true;
    cq->overrun = status == STATUS_BUFFER_OVERFLOW;
    cq->failure = status;
    std::vector<ObjectId> qps = cq->qps;
    for (ObjectId qp : qps)
        make_unusable(qp);
    cq = state_mut<CqState>(cq_id);
    if (mode_ != Mode::simulate) return;
    cq->entries.clear();
    // CQ-NOT-07: an outstanding arm of any type is satisfied by the CQ's error (CQ-NOT-05).
    if (cq->armed >= 0 && cq->has_notification) {
        cq->armed = -1;
        emit({Event::Kind::cq_notification, cq_id, 0, status, 0});
    }
}

void Model::fail_srq(ObjectId srq_id) {
    auto* s = state_mut<SrqState>(srq_id);
    if (!s || s->failed) return;
    // SRQ-15: the SRQ and every QP attached to it are unusable; no further completions.
    s->failed = true;
    s->notify_armed = false;
    s->receives.clear();
    std::vector<ObjectId> qps = s->qps;
    for (ObjectId qp : qps)
        make_unusable(qp);
}

void Model::retrieved(const Completion& done) {
    auto* q = state_mut<QpState>(done.qp);
    if (!q) return;
    auto drop = [](uint32_t& n, uint32_t k) { n = n > k ? n - k : 0; };
    if (done.receive_queue) {
        if (auto* s = state_mut<SrqState>(done.srq))
            drop(s->outstanding, 1);
        else
            drop(q->receive_outstanding, 1);
        return;
    }
    // Completions of one queue come in order: silent successes before this entry are done too.
    drop(q->initiator_outstanding, 1 + q->initiator_silent);
    drop(q->reads_outstanding, (done.type == NdkOperationTypeRead ? 1u : 0u) + q->reads_silent);
    q->initiator_silent = q->reads_silent = 0;
}

void Model::note_landing(const Completion::Landing& l, int delta) {
    if (mode_ != Mode::check) return;
    for (const auto& [pfn, offset] : l.at) {
        if (delta > 0)
            landing_pages_.add(pfn);
        else
            landing_pages_.remove(pfn);
    }
}

namespace {

// Copies the bytes a landing puts into [the pieces of `source`] into `out` (laid out as the
// source's pieces), and says whether they overlap at all.
bool overlay(const Completion::Landing& l, const Extent& source, std::vector<std::byte>* out) {
    bool overlaps = false;
    size_t at = 0;
    for (size_t i = 0; i < l.at.size(); ++i) {
        auto [pfn, offset] = l.at[i];
        size_t out_at = 0;
        for (size_t j = 0; j < source.pages.size(); ++j) {
            if (source.pages[j] == pfn) {
                uint32_t lo = std::max(offset, source.offsets[j]);
                uint32_t hi = std::min(offset + l.sizes[i], source.offsets[j] + source.sizes[j]);
                if (lo < hi) {
                    overlaps = true;
                    if (out)
                        std::memcpy(out->data() + out_at + (lo - source.offsets[j]),
                                    l.bytes.data() + at + (lo - offset), hi - lo);
                }
            }
            out_at += source.sizes[j];
        }
        at += l.sizes[i];
    }
    return overlaps;
}

}  // namespace

bool Model::gather_expected(ObjectId qp, const Extent& source, bool fenced,
                            std::vector<std::byte>& out) {
    gather_into(memory_, source, out);
    if (mode_ != Mode::check || !on_landing_pages(source)) return true;
    // WR-FENCE-01 (check mode): the provider runs this request later than the model did, and
    // bytes that earlier requests still have to place may not be there yet when it reads. A
    // fenced request starts only after every earlier read of its QP completed, so those reads'
    // bytes are what it reads. Any other overlap (an unfenced request, a write or a receive
    // into the memory, another QP's request) is an order the docs leave open.
    bool determined = true;
    for_each_landing_qp([&](const QpState& q, ObjectId id) {
        if (objects_[id].life == Life::closed) return;
        for_each_pending_landing(q, [&](const Completion::Landing& l) {
            if (id == qp && fenced && l.from_read)
                overlay(l, source, &out);
            else if (overlay(l, source, nullptr))
                determined = false;
        });
    });
    return determined;
}

bool Model::landing_expected_within(const Extent& bytes) {
    if (!on_landing_pages(bytes)) return false;
    bool overlapped = false;
    for_each_landing_qp([&](const QpState& q, ObjectId) {
        for_each_pending_landing(q, [&](const Completion::Landing& l) {
            if (!overlapped && overlay(l, bytes, nullptr)) overlapped = true;
        });
    });
    return overlapped;
}

void Model::deliver(Completion&& done) {
    auto* q = state_mut<QpState>(done.qp);
    if (!q) return;
    bool initiator = !done.receive_queue;
    // Queue slots are free again once the entry is retrieved (retrieved()): the consumer's view
    // of the depth (CQP-DEPTH-01/02).
    if ((q->peer_error || q->outcome_open) && done.outcome == Completion::Outcome::success)
        done.outcome = Completion::Outcome::any;  // the peer's failure may reach this QP
    // MODEL-FLS-01 (usable): posted after NdkFlush; a provider that left the QP in error
    // flushes it, the reading not chosen.
    if (q->flushed_usable && done.outcome == Completion::Outcome::success &&
        done.other_reading.empty()) {
        done.other_reading = {"MODEL-FLS-01"};
        done.why = "posted after NdkFlush; the QP may be in error (the cancelled reading)";
    }
    if (done.silent) {
        // WR-SILENT-01: no entry; the slot frees with the queue's next entry. Check mode: the
        // bytes are checked with that entry.
        ++q->initiator_silent;
        if (done.type == NdkOperationTypeRead) ++q->reads_silent;
        if (mode_ == Mode::check) {
            remember(q->silent_successes, done.request_context);
            if (done.token_rule || !done.grant_rules.empty()) {
                RuleList hints;
                if (done.token_rule) hints.push_back(done.token_rule);
                for (const char* rule : done.grant_rules)
                    hints.push_back(rule);
                q->silent_success_hints.emplace_back(done.request_context, hints);
                if (q->silent_success_hints.size() > kRememberedContexts)
                    q->silent_success_hints.erase(q->silent_success_hints.begin());
            }
            for (auto& l : done.landings)
                q->silent_landings.push_back(std::move(l));
            if (!done.landings.empty()) note_landing_qp(done.qp);
        }
        return;
    }
    auto* cq = state_mut<CqState>(done.cq);
    if (!cq || cq->failed) return;  // CQ-STATUS-02/03: a failed CQ reports nothing more
    bool error_entry = done.outcome == Completion::Outcome::error ||
                       done.outcome == Completion::Outcome::cancelled ||
                       done.outcome == Completion::Outcome::any_error;
    ObjectId cq_id = done.cq;
    if (mode_ == Mode::check) {
        if (initiator) {
            for (auto& l : q->silent_landings)
                done.landings.push_back(std::move(l));
            q->silent_landings.clear();
        }
        bool uncertain = done.outcome == Completion::Outcome::any;
        if (!done.landings.empty()) note_landing_qp(done.qp);
        (initiator ? q->initiator_pending : q->receive_pending).push_back(std::move(done));
        if (uncertain)
            cq->uncertain_since_notification = true;
        else
            notify_cq(cq_id, error_entry, false);  // what the arm may now be satisfied by
        return;
    }
    // Simulate: the entry goes on the CQ. CQ-CREATE-04, CQ-RESIZE-04: up to the depth fits; one
    // more overruns it (CQ-STATUS-02).
    if (cq->entries.size() >= cq->depth) {
        fail_cq(cq_id, STATUS_BUFFER_OVERFLOW);
        return;
    }
    cq->entries.push_back(std::move(done));
    notify_cq(cq_id, error_entry, false);
}

}  // namespace ndkct::model
