// Completions seen by the oracle (check mode): each entry a provider returns matched with the
// request it completes, judged for its status, type, bytes and where its bytes landed (with the
// forensics that name a misplaced page's rule), and the entries still owed.
#include <algorithm>
#include <cstring>
#include <utility>

#include "ndkct/spec/names.hpp"
#include "ndkct/spec/status.hpp"

#include "ndkct/model/model.hpp"
#include "qp_rules.hpp"

namespace ndkct::model {

using namespace qp_rules;

size_t Model::outstanding_completions(ObjectId qp) const {
    const auto* q = state_of<QpState>(qp);
    if (!q) return 0;
    if (mode_ == Mode::check) return q->initiator_pending.size() + q->receive_pending.size();
    size_t n = 0;
    for (ObjectId cq : {q->initiator_cq, q->receive_cq}) {
        if (const auto* c = state_of<CqState>(cq))
            for (const auto& e : c->entries)
                n += e.qp == qp;
        if (q->initiator_cq == q->receive_cq) break;
    }
    return n;
}

Verdict Model::expect_handed_over_completed(ObjectId qp) const {
    Verdict v;
    const auto* q = state_of<QpState>(qp);
    if (!q || q->handed_over.empty()) return v;
    // Only requests that can end on their own: one that waits on a peer in error (a device
    // retrying a request it gets no answer to) may take longer than any drain, and a flush
    // then cancels it (FLS-02), held or not.
    const auto* peer = q->peer ? state_of<QpState>(q->peer) : nullptr;
    if (q->peer_error || q->error_timing_open || q->outcome_open ||
        (peer && (peer->error || peer->flushed || peer->error_timing_open)) ||
        q->connection != QpState::Connection::connected)
        return v;
    for (const auto& done : q->initiator_pending)
        if (done.outcome != Completion::Outcome::any &&
            std::find(q->handed_over.begin(), q->handed_over.end(), done.request_context) !=
                q->handed_over.end())
            v.add({handed_over_by_fast_register(*q, done.request_context)
                       ? RuleIds{"FR-DEFER-02", "DEFER-04"}
                       : RuleIds{"DEFER-04", "FR-DEFER-02"},
                   "no completion appeared for the request with RequestContext " +
                       hex(done.request_context) + " on QP " + object_text(qp) +
                       ", posted with NDK_OP_FLAG_DEFER before a request the provider refused "
                       "inline (the refusal had to hand it to the hardware)"});
    return v;
}

namespace {

// s11frq: the page rule NdkFastRegister's page gives a missing entry (nullptr: none, or one whose
// rule is its failure's: a silent request that had to fail): any DEFER request an
// NdkFastRegister's inline refusal handed over (FR-DEFER-02), or a fast registration's own.
const char* fast_register_missing_rule(const QpState& q, const Completion& done) {
    if (done.receive_queue) return nullptr;
    if (handed_over_by_fast_register(q, done.request_context)) return "FR-DEFER-02";
    if (done.type != NdkOperationTypeFastRegister) return nullptr;
    if (done.deferred) return "FR-DEFER-01";  // DEFER is a hint: it completes all the same
    // FR-SILENT-02: a silent one that had to fail and was shown not to have taken effect owes
    // its error entry; otherwise its failure's own rule is the one (a wrongful silent success).
    if (done.silent_flag) return done.registration_refuted ? "FR-SILENT-02" : nullptr;
    return "FR-ST-01";  // STATUS_SUCCESS: an entry will be queued
}

}  // namespace

RuleIds Model::missing_entry_page_rules(ObjectId cq) const {
    RuleIds rules;
    const auto* c = state_of<CqState>(cq);
    if (!c) return rules;
    for (ObjectId qp_id : c->qps) {
        const auto* q = state_of<QpState>(qp_id);
        if (!q) continue;
        for (const auto* list : {&q->initiator_pending, &q->receive_pending})
            for (const auto& done : *list) {
                if (done.cq != cq || done.outcome == Completion::Outcome::any) continue;
                const char* rule = fast_register_missing_rule(*q, done);
                if (!rule) return {};  // another request is missing too: the generic rule
                if (std::find(rules.begin(), rules.end(), rule) == rules.end())
                    rules.push_back(rule);
            }
    }
    return rules;
}

Verdict Model::expect_nothing_outstanding(ObjectId qp) {
    Verdict v;
    auto* q = state_mut<QpState>(qp);
    if (!q) return v;
    for (auto* list : {&q->initiator_pending, &q->receive_pending}) {
        for (const auto& done : *list) {
            // WR-10, DEFER-03: an accepted request ends in exactly one entry, deferred or not.
            if (done.outcome != Completion::Outcome::any) {
                auto handed =
                    std::find(q->handed_over.begin(), q->handed_over.end(), done.request_context);
                if (!done.receive_queue && handed != q->handed_over.end())
                    v.add({handed_over_by_fast_register(*q, done.request_context)
                               ? RuleIds{"FR-DEFER-02", "DEFER-04", "WR-10"}
                               : RuleIds{"DEFER-04", "WR-10"},
                           "no completion appeared for the request with RequestContext " +
                               hex(done.request_context) + " on QP " + object_text(qp) +
                               ", posted with NDK_OP_FLAG_DEFER before a request the provider "
                               "refused inline (the refusal had to hand it to the hardware)"});
                else if (done.silent_flag && !done.rules.empty() &&
                         (done.outcome == Completion::Outcome::error ||
                          done.outcome == Completion::Outcome::any_error)) {
                    // A silent request that must fail and made no entry was taken as a
                    // success (a silent success makes none): the rule its failure comes from is
                    // the one broken (RMR-ACC-03 for an access past a region's end), beside
                    // WR-10's missing entry.
                    RuleIds rules = done.rules;
                    for (const char* r : {"WR-10", "FLS-03"})
                        if (std::find(rules.begin(), rules.end(), r) == rules.end())
                            rules.push_back(r);
                    // FR-SILENT-02: unless a failed access it would have let through showed
                    // that it did not take effect: then its error entry was dropped.
                    const bool dropped = done.registration_refuted;
                    if (dropped) rules.insert(rules.begin(), "FR-SILENT-02");
                    v.add(
                        {rules, "no completion appeared for the request with RequestContext " +
                                    hex(done.request_context) + " on QP " + object_text(qp) +
                                    ", posted with NDK_OP_FLAG_SILENT_SUCCESS, which must fail (" +
                                    done.why +
                                    (dropped ? "): an access through the region it would have "
                                               "registered failed, so it did not take effect, "
                                               "and its error entry never came"
                                             : "): it was taken as a silent success")});
                } else if (done.deferred) {  // DEFER-03: DEFER leaves the duty unchanged
                    RuleIds rules{"WR-10", "DEFER-03", "FLS-03"};
                    // FR-DEFER-01: NdkFastRegister's page says so for itself.
                    if (const char* page = fast_register_missing_rule(*q, done))
                        rules.insert(rules.begin(), page);
                    v.add({std::move(rules),
                           "no completion appeared for the request with RequestContext " +
                               hex(done.request_context) + " on QP " + object_text(qp) +
                               ", posted with NDK_OP_FLAG_DEFER"});
                } else {
                    RuleIds rules{"WR-10", "FLS-03"};
                    // FR-ST-01: an NdkFastRegister that returned STATUS_SUCCESS owes its entry.
                    if (const char* page = fast_register_missing_rule(*q, done))
                        rules.insert(rules.begin(), page);
                    v.add({std::move(rules),
                           "no completion appeared for the request with RequestContext " +
                               hex(done.request_context) + " on QP " + object_text(qp)});
                }
            }
            for (const auto& l : done.landings)
                note_landing(l, -1);
            retrieved(done);  // given up on: its slot is free again
        }
        list->clear();
    }
    return v;
}

// FR-PAGE-02 for a read's source: `landed` (the sink's bytes from byte `at` of the landing on)
// equals the bytes at the same in-page offset of a page of the source fast registration other
// than the one the expected bytes came from, and differs from the expected bytes there.
bool Model::moved_through_va(const Completion::Landing& landing) const {
    // Where the bytes are: the target's own pages, or (a decoy-VA target) the pages its VA maps.
    Extent real, through_va;
    bool target_moved = false;
    for (size_t i = 0; i < landing.at.size(); ++i) {
        auto [pfn, offset] = landing.at[i];
        real.append(pfn, offset, landing.sizes[i]);
        if (landing.va_aliases)
            for (const auto& [page, behind_va] : *landing.va_aliases)
                if (page == pfn && behind_va != pfn) {
                    pfn = behind_va;
                    target_moved = true;
                    break;
                }
        through_va.append(pfn, offset, landing.sizes[i]);
    }
    // What they should be: the bytes sent, or (a decoy-VA source) the bytes its VA maps.
    std::vector<std::byte> source_via_va;
    if (landing.source_through_va) gather(memory_, *landing.source_through_va, source_via_va);
    auto holds = [&](const Extent& where, const std::vector<std::byte>& bytes) {
        if (bytes.size() < landing.bytes.size()) return false;
        std::vector<std::byte> found;
        gather(memory_, where, found);
        return std::memcmp(found.data(), bytes.data(), found.size()) == 0;
    };
    // Any combination but the honest one (the PFNs' bytes on the PFNs' pages, which failed).
    if (target_moved && holds(through_va, landing.bytes)) return true;
    if (landing.source_through_va) {
        if (holds(real, source_via_va)) return true;
        if (target_moved && holds(through_va, source_via_va)) return true;
    }
    return false;
}

bool Model::read_from_another_source_page(const Completion::Landing& landing, size_t at,
                                          const std::byte* landed, uint32_t size) const {
    const auto& pages = *landing.source_fast_registered_pages;
    uint64_t from = uint64_t(landing.source_first_offset) + at;
    size_t expected_page = landing.source_first_page + size_t(from / PAGE_SIZE);
    uint32_t in_page = uint32_t(from % PAGE_SIZE);
    uint32_t n = std::min<uint32_t>(size, uint32_t(PAGE_SIZE - in_page));
    if (n == 0 || std::memcmp(landed, landing.bytes.data() + at, n) == 0) return false;
    for (size_t j = 0; j < pages.size(); ++j)
        if (j != expected_page && std::memcmp(memory_.page(pages[j]) + in_page, landed, n) == 0)
            return true;
    return false;
}

namespace {

// FR-MAP-01's forensics: at least half of `n` bytes differ from the expected ones, as where the
// bytes went to another page (the place keeps what it held), not where a few were lost or
// misplaced there (a short write, say), which another page's like bytes must not be taken for.
bool mostly_missing(const std::byte* found, const std::byte* expected, size_t n) {
    size_t differ = 0;
    for (size_t i = 0; i < n; ++i)
        differ += found[i] != expected[i];
    return 2 * differ >= n;
}

}  // namespace

bool Model::landed_as_run(const Completion::Landing& landing, size_t index, size_t at) const {
    const auto& pages = *landing.fast_registered_pages;
    const auto& runs = *landing.fast_registered_runs;
    const auto [page, offset] = landing.at[index];
    const std::byte* bytes = landing.bytes.data() + at;
    if (!mostly_missing(memory_.page(page) + offset, bytes, landing.sizes[index])) return false;
    for (size_t j = 0; j < pages.size() && j < runs.size(); ++j) {
        PFN_NUMBER run = runs[j];
        if (pages[j] != page || run == MrState::kNoPage || run == page) continue;
        if (std::memcmp(memory_.page(run) + offset, bytes, landing.sizes[index]) != 0) continue;
        // Bytes the landing sends to that page anyway prove nothing (page-periodic data).
        bool sent_there = false;
        size_t from = 0;
        for (size_t k = 0; k < landing.at.size() && !sent_there; ++k) {
            sent_there = landing.at[k].first == run && landing.at[k].second == offset &&
                         landing.sizes[k] == landing.sizes[index] &&
                         std::memcmp(landing.bytes.data() + from, bytes, landing.sizes[k]) == 0;
            from += landing.sizes[k];
        }
        if (!sent_there) return true;
    }
    return false;
}

bool Model::read_as_run(const Completion::Landing& landing, size_t at, const std::byte* landed,
                        uint32_t size) const {
    const auto& pages = *landing.source_fast_registered_pages;
    const auto& runs = *landing.source_fast_registered_runs;
    // The piece in source-page parts: the first part that differs from the expected bytes
    // decides (a sink page may span two pages of the source).
    for (uint32_t done = 0; done < size;) {
        uint64_t from = uint64_t(landing.source_first_offset) + at + done;
        size_t e = landing.source_first_page + size_t(from / PAGE_SIZE);
        uint32_t in_page = uint32_t(from % PAGE_SIZE);
        uint32_t n = std::min<uint32_t>(size - done, uint32_t(PAGE_SIZE - in_page));
        if (std::memcmp(landed + done, landing.bytes.data() + at + done, n) != 0) {
            if (e >= pages.size() || e >= runs.size()) return false;
            PFN_NUMBER run = runs[e];
            return run != MrState::kNoPage && run != pages[e] &&
                   mostly_missing(landed + done, landing.bytes.data() + at + done, n) &&
                   std::memcmp(memory_.page(run) + in_page, landed + done, n) == 0;
        }
        done += n;
    }
    return false;
}

namespace {

// FR-APC-01: a request's shape, one value at a time (not a secret: a collision only makes two
// shapes one witness).
uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E37'79B9'7F4A'7C15ull + (h << 6) + (h >> 2);
    return h;
}

// The most shapes a fast registration keeps witnesses for (MrState::reached_by_shape).
constexpr size_t kReachedShapes = 8;

}  // namespace

std::shared_ptr<const Completion::PageReaches> Model::page_reaches_of(
    ObjectId qp, NDK_OPERATION_TYPE type, uint32_t flags, uint32_t remote_token, ObjectId remote,
    uint64_t remote_address, uint64_t remote_bytes, const std::vector<Sge>* local, uint64_t used,
    ObjectId receiver, const std::vector<Sge>* received) const {
    Completion::PageReaches out;
    // A fast registration of two or more pages (an MR's, or a window's MR's), and the highest
    // page index of its region that [address, address + bytes) reaches.
    auto reach = [&](ObjectId id, uint64_t address, uint64_t bytes) {
        if (const auto* mw = state_of<MwState>(id)) id = mw->mr;
        const auto* mr = state_of<MrState>(id);
        if (!mr || !mr->fast_register || mr->phase != MrState::Phase::fast_registered ||
            mr->region.pages.size() < 2 || bytes == 0 || !mr->region.covers(address, bytes))
            return;
        const uint64_t last =
            (mr->region.first_byte_offset + (address - mr->region.base) + bytes - 1) / PAGE_SIZE;
        out.reaches.push_back(
            {id, mr->changes, static_cast<uint32_t>(last), uint32_t(mr->region.pages.size())});
    };
    uint64_t shape = mix(mix(mix(mix(0, qp), uint64_t(type)), flags), remote_token);
    if (remote) reach(remote, remote_address, remote_bytes);
    auto sgl = [&](ObjectId on, const std::vector<Sge>* list, uint64_t bytes) {
        if (!list) return;
        const ObjectId adapter = objects_[on].adapter;
        for (const Sge& sge : *list) {
            shape = mix(shape, sge.token);
            const uint64_t n = std::min<uint64_t>(bytes, sge.length);
            if (n) reach(object_of_token(adapter, sge.token, false), sge.address, n);
            bytes -= n;
        }
    };
    sgl(qp, local, used);
    if (received) {
        shape = mix(shape, receiver);
        sgl(receiver, received, used);
    }
    if (out.reaches.size() == 0) return nullptr;
    out.shape = shape;
    return std::make_shared<const Completion::PageReaches>(std::move(out));
}

void Model::note_pages_reached(const Completion::PageReaches& reaches) {
    for (const auto& reach : reaches.reaches) {
        auto* mr = state_mut<MrState>(reach.mr);
        if (!mr || mr->changes != reach.changes) continue;
        auto& seen = mr->reached_by_shape;
        std::erase_if(seen, [&](const auto& s) { return s.changes != reach.changes; });
        auto it = std::find_if(seen.begin(), seen.end(),
                               [&](const auto& s) { return s.shape == reaches.shape; });
        if (it != seen.end()) {
            it->last_page = std::max(it->last_page, reach.last_page);
            continue;
        }
        if (seen.size() >= kReachedShapes) seen.erase(seen.begin());
        seen.push_back({reaches.shape, reach.changes, reach.last_page});
    }
}

int Model::short_region(const Completion::PageReaches& reaches, std::string& because) const {
    int found = 0;
    for (const auto& reach : reaches.reaches) {
        const auto* mr = state_of<MrState>(reach.mr);
        if (!mr || mr->changes != reach.changes) continue;
        for (const auto& seen : mr->reached_by_shape)
            if (seen.shape == reaches.shape && seen.changes == reach.changes &&
                seen.last_page < reach.last_page) {
                because =
                    " (a request of the same shape, through the same tokens, succeeded "
                    "reaching page " +
                    num(seen.last_page) + " of a fast registration of " + num(reach.pages) +
                    " AdapterPageArray pages; this one reaches page " + num(reach.last_page) +
                    ": the region's backing ends before it, as where the provider read "
                    "fewer than AdapterPageCount entries)";
                return 2;
            }
        if (!found && reach.last_page + 1 == reach.pages) {
            found = 1;
            because = "; it reaches the last of a fast registration's " + num(reach.pages) +
                      " AdapterPageArray pages, which a provider that read fewer than "
                      "AdapterPageCount entries does not back";
        }
    }
    return found;
}

namespace {

// True when the landing sends piece `index` (its bytes from `offset` in the data) to `page` too,
// byte for byte at the same place: then finding those bytes there proves nothing (page-periodic
// data), so a misplaced page cannot be told from a short write.
bool same_bytes_sent_to(const Completion::Landing& landing, PFN_NUMBER page, size_t index,
                        size_t offset) {
    size_t at = 0;
    for (size_t j = 0; j < landing.at.size(); ++j) {
        if (landing.at[j].first == page && landing.at[j].second == landing.at[index].second &&
            landing.sizes[j] == landing.sizes[index] &&
            std::memcmp(landing.bytes.data() + at, landing.bytes.data() + offset,
                        landing.sizes[j]) == 0)
            return true;
        at += landing.sizes[j];
    }
    return false;
}

const char* outcome_rule(NDK_OPERATION_TYPE type) {
    switch (type) {
        case NdkOperationTypeReceive:
        case NdkOperationTypeReceiveAndInvalidate:
            return "RCV-03";
        case NdkOperationTypeSend:
            return "SND-01";
        case NdkOperationTypeFastRegister:
            return "FR-ST-01";
        case NdkOperationTypeBind:
            return "BND-01";
        case NdkOperationTypeInvalidate:
            return "INV-01";
        case NdkOperationTypeRead:
            return "RD-01";
        case NdkOperationTypeWrite:
            return "WRT-01";
    }
    return "CQ-CST-01";
}

}  // namespace

uint64_t Model::expected_landing_bytes(ObjectId cq, const NDK_RESULT_EX& r) const {
    const auto* cq_state = state_of<CqState>(cq);
    if (!cq_state) return 0;
    Context qp_context = reinterpret_cast<uintptr_t>(r.QPContext);
    Context request = reinterpret_cast<uintptr_t>(r.RequestContext);
    for (ObjectId qp_id : cq_state->qps) {
        const auto* q = state_of<QpState>(qp_id);
        if (!q) continue;
        for (bool receive : {false, true}) {
            if ((receive ? q->receive_cq : q->initiator_cq) != cq) continue;
            for (const Completion& c : receive ? q->receive_pending : q->initiator_pending)
                if (c.request_context == request && c.qp_context == qp_context) {
                    uint64_t bytes = 0;
                    for (const auto& l : c.landings)
                        bytes += l.bytes.size();
                    return bytes;
                }
        }
    }
    return 0;
}

Verdict Model::observe_completion(ObjectId cq, const NDK_RESULT_EX& r, bool ex, bool landing_seen) {
    Verdict v;
    Context qp_context = reinterpret_cast<uintptr_t>(r.QPContext);
    Context request = reinterpret_cast<uintptr_t>(r.RequestContext);
    // Built only for a message: most completions are right.
    auto what = [&] {
        return "a completion with RequestContext " + hex(request) + " (" +
               std::string(spec::status_name(r.Status)) + ")";
    };
    // Find the request: QPs reporting to this CQ, with this QPContext, holding this request.
    const auto* cq_state = state_of<CqState>(cq);
    static const std::vector<ObjectId> no_qps;
    for (ObjectId qp_id : cq_state ? cq_state->qps : no_qps) {
        Object& o = objects_[qp_id];
        // A closed QP is still indexed while entries of its flushed requests are due (CLOSE-03,
        // FLS-03: they stay in the CQ after the close).
        auto& q = std::get<QpState>(o.state);
        // Whatever follows matches only the QP the entry names by its QPContext (the entries a
        // QP's lists hold carry its own); another one's context is CQ-RES-02, judged below.
        if (q.qp_context != qp_context) continue;
        for (bool receive : {false, true}) {
            if ((receive ? q.receive_cq : q.initiator_cq) != cq) continue;
            auto& list = receive ? q.receive_pending : q.initiator_pending;
            auto it = std::find_if(list.begin(), list.end(), [&](const Completion& c) {
                return c.request_context == request && c.qp_context == qp_context;
            });
            if (it == list.end()) continue;
            // WR-FENCE-01, FR-FENCE-01: a request posted with READ_FENCE starts only after every
            // earlier read of its QP has completed, so its entry ahead of such a read's is a
            // failure whatever AMB-35 reads for unfenced requests.
            const bool fenced_ahead_of_read =
                it->read_fence && std::any_of(list.begin(), it, [](const Completion& e) {
                    return e.type == NdkOperationTypeRead;
                });
            if (fenced_ahead_of_read) {
                std::string reads;
                size_t count = 0;
                for (auto e = list.begin(); e != it; ++e) {
                    if (e->type != NdkOperationTypeRead) continue;
                    if (count < 4) reads += (count ? ", " : "") + hex(e->request_context);
                    ++count;
                }
                if (count > 4) reads += " and " + std::to_string(count - 4) + " more";
                const bool fast_register = it->type == NdkOperationTypeFastRegister;
                v.add({fast_register ? RuleIds{"FR-FENCE-01", "WR-FENCE-01", "AMB-35"}
                                     : RuleIds{"WR-FENCE-01", "AMB-35"},
                       what() + " of a" + (fast_register ? " fast registration" : " request") +
                           " posted with NDK_OP_FLAG_READ_FENCE arrived ahead of the entries of "
                           "reads posted earlier on its QP (" +
                           reads +
                           "): the fence lets it start only after those reads have completed"});
            } else if (it != list.begin() && !readings_.completion_order_relaxed) {  // AMB-35
                // No page promises that one queue completes in posting order; the deferred
                // processing page promises only that an accepted request "must eventually" make
                // an entry (WR-10, DEFER-03). So an entry ahead of earlier requests is the
                // in_order reading not followed, a warning; the earlier ones stay expected, and
                // one that never comes is a failure when the harness has drained the queue
                // (expect_nothing_outstanding: WR-10, DEFER-03 for a deferred one).
                std::string earlier;
                size_t count = 0;
                for (auto e = list.begin(); e != it; ++e, ++count)
                    if (count < 4) earlier += (count ? ", " : "") + hex(e->request_context);
                if (count > 4) earlier += " and " + std::to_string(count - 4) + " more";
                v.add({{"AMB-35"},
                       what() + " arrived ahead of earlier requests of the same queue (" + earlier +
                           "), out of posting order (the in_order reading); they are still "
                           "expected (WR-10)",
                       true});
            }
            if (!receive) {
                std::erase(q.handed_over, request);
                std::erase(q.handed_over_by_fast_register, request);
            }
            // Judged in place and removed at the end (CQ-GET-04: removed once), not moved out:
            // a Completion is a few hundred bytes and this is every entry's path.
            Completion& expected = *it;
            retrieved(expected);                                  // its queue slot is free again
            if (NT_ERROR(r.Status)) q.error_timing_open = false;  // the error is seen now
            // A closed QP's last entry: it leaves the CQ index (after the loop over it).
            const bool forget = o.life == Life::closed &&
                                q.initiator_pending.size() + q.receive_pending.size() == 1;
            using Out = Completion::Outcome;
            const char* rule = outcome_rule(expected.type);
            bool landed = false;
            // DESIGN section 5: the reading the profile did not choose is a warning.
            const bool succeeded = r.Status == STATUS_SUCCESS;
            const bool other_error_for_cancelled =
                !expected.other_reading.empty() && !expected.other_reading_succeeds &&
                expected.outcome == Out::cancelled && NT_ERROR(r.Status) &&
                r.Status != STATUS_CANCELLED;
            if (other_error_for_cancelled) {
                v.add({expected.other_reading,
                       what() + " failed with another status than STATUS_CANCELLED (" +
                           expected.why + "), the form the profile's reading does not choose",
                       true});
                expected.outcome = Out::any;
            } else if (!expected.other_reading.empty() &&
                       succeeded == expected.other_reading_succeeds &&
                       (succeeded
                            ? expected.outcome == Out::error || expected.outcome == Out::cancelled
                            : expected.outcome == Out::success)) {
                v.add({expected.other_reading,
                       what() + (succeeded ? " succeeded" : " failed") +
                           ", the outcome the profile's reading does not choose (" + expected.why +
                           ")",
                       true});
                expected.outcome = Out::any;
                // What it registered, bound or invalidated is unknown now.
                if (auto* mr = state_mut<MrState>(expected.target)) mr->indeterminate = true;
                if (auto* mw = state_mut<MwState>(expected.target)) mw->indeterminate = true;
                open_outcomes(qp_id);
            }
            switch (expected.outcome) {
                case Out::success:
                    if (r.Status != STATUS_SUCCESS) {
                        RuleIds rules{rule, "CQ-CST-01"};
                        std::string because;
                        if (expected.token_rule) {  // a getter's token (note_token)
                            rules.insert(rules.begin(), expected.token_rule);
                            const std::string_view hint = expected.token_rule;
                            because =
                                hint == "IFR-TOK-01"
                                    ? " (a local SGE's token is the one NdkGetLocalTokenFromMr "
                                      "returned after the MR's initialization, before this "
                                      "fast registration: the getter reports another one "
                                      "now, so the value it gave then was not the MR's "
                                      "local token)"
                                : hint == "RMR-TOK-01"
                                    ? " (a local SGE's token is the one its MR's previous "
                                      "registration had: the local token getter returned a "
                                      "stale token)"
                                : hint == "RMR-VA-01"
                                    ? " (it reaches the last ByteOffset bytes of a region "
                                      "registered from mid-page, which a region taken from "
                                      "StartVa, not MmGetMdlVirtualAddress, leaves out)"
                                : hint == "LAM-REL-01"
                                    ? " (a local SGE's logical addresses belong to a live "
                                      "LAM built before another LAM of the adapter was "
                                      "released: that release likely unmapped them too)"
                                    : " (its RemoteToken is the target MR's local token: the "
                                      "remote token getter returned the local token)";
                        } else if (!expected.grant_rules.empty()) {  // a local access granted
                            rules.insert(rules.begin(), expected.grant_rules.begin(),
                                         expected.grant_rules.end());
                            because = " (its regions' flags grant the local access it needs)";
                        }
                        // FR-APC-01: a request of its shape succeeded short of where this one
                        // reaches into a fast registration (first: the tokens, flags and grants
                        // it relies on worked there), or it reaches the registration's last
                        // page (last: any other cause above is as likely). Not a flush.
                        if (expected.page_reaches && r.Status != STATUS_CANCELLED) {
                            std::string short_by;
                            switch (short_region(*expected.page_reaches, short_by)) {
                                case 2:
                                    rules.insert(rules.begin(), "FR-APC-01");
                                    because += short_by;
                                    break;
                                case 1:
                                    rules.push_back("FR-APC-01");
                                    because += short_by;
                                    break;
                                default:
                                    break;
                            }
                        }
                        v.add({rules, what() + " should have succeeded, but its status is " +
                                          std::to_string(r.Status) + because});
                    }
                    landed = r.Status == STATUS_SUCCESS;
                    break;
                case Out::success_or_cancelled:
                    if (r.Status != STATUS_SUCCESS && r.Status != STATUS_CANCELLED)
                        v.add({{rule, "FLS-02"},
                               what() +
                                   " was flushed: it may succeed or be "
                                   "cancelled, but its status is " +
                                   std::to_string(r.Status)});
                    landed = r.Status == STATUS_SUCCESS;
                    break;
                case Out::cancelled:
                    if (r.Status != STATUS_CANCELLED)
                        v.add({{"FLS-02", "CQ-CST-02"},
                               what() + " was flushed and must complete with STATUS_CANCELLED"});
                    break;
                case Out::error:
                    if (!NT_ERROR(r.Status)) {
                        RuleIds rules = expected.rules;
                        rules.push_back("CQ-CST-03");
                        v.add({rules, what() + " must fail (" + expected.why + "), but succeeded"});
                    } else if (r.Status != expected.status) {
                        // MODEL-CQ-ERR-01 (exact): the status not chosen is a warning; under
                        // any_error any error status is right.
                        if (readings_.completion_error_status_exact)
                            v.add({{"MODEL-CQ-ERR-01"},
                                   what() + " failed with another status than ndkct's table gives",
                                   true});
                    }
                    break;
                case Out::any_error:  // MODEL-CQ-STATUS-01: it may not succeed
                    if (!NT_ERROR(r.Status))
                        v.add({expected.rules, what() +
                                                   " was posted to a QP whose CQ or SRQ had "
                                                   "failed, but completed with status " +
                                                   std::to_string(r.Status)});
                    break;
                case Out::any:
                    break;
            }
            // FR-APC-01: how far a request of this shape reached into fast registrations.
            if (r.Status == STATUS_SUCCESS && expected.page_reaches)
                note_pages_reached(*expected.page_reaches);
            // MODEL-RD-01 (fail): the provider queued a read beyond the OutboundReadLimit.
            if (expected.success_warns && r.Status == STATUS_SUCCESS)
                v.add({{"MODEL-RD-01", "RD-08"},
                       what() + " is a read beyond the OutboundReadLimit that the provider queued "
                                "instead of failing",
                       true});
            // FR-SILENT-02: this access failed where a silent fast registration that had to
            // fail would have let it through: that registration did not take effect, so if its
            // entry never comes, its error entry was dropped (expect_nothing_outstanding).
            if (expected.refutes_qp && expected.outcome == Out::error && NT_ERROR(r.Status) &&
                r.Status != STATUS_CANCELLED)
                if (auto* fq = state_mut<QpState>(expected.refutes_qp))
                    for (auto& pending : fq->initiator_pending)
                        if (pending.request_context == expected.refutes_request &&
                            pending.type == NdkOperationTypeFastRegister && pending.silent_flag &&
                            pending.outcome == Out::error)
                            pending.registration_refuted = true;
            if (ex && expected.outcome != Out::any) {
                NDK_OPERATION_TYPE want = expected.type;
                // CQ-RES-03; FR-RES-01 first for a fast registration: NdkFastRegister's page
                // names the Type its completion must carry.
                if (r.Type != want && !(r.Status == STATUS_CANCELLED))
                    v.add({want == NdkOperationTypeFastRegister ? RuleIds{"FR-RES-01", "CQ-RES-03"}
                                                                : RuleIds{"CQ-RES-03"},
                           what() + " has Type " + spec::operation_type_text(r.Type) +
                               ", expected " + spec::operation_type_text(want)});
                if (want == NdkOperationTypeReceiveAndInvalidate &&
                    static_cast<uint32_t>(r.TypeSpecificCompletionOutput) !=
                        expected.invalidated_token)
                    v.add({{"CQ-RES-07"}, what() + " does not carry the invalidated token"});
                // CQ-GET-03, VER-12, AMB-22: the Ex entry; ProviderErrorCode by the layout in
                // force.
                bool has_code =
                    readings_.result_ex_layout ==
                        Readings::ResultExLayout::with_provider_error_code ||
                    (readings_.result_ex_layout == Readings::ResultExLayout::by_version &&
                     readings_.version_at_least(2, 1));
                if (has_code && r.Status == STATUS_SUCCESS && r.ProviderErrorCode != 0)
                    v.add({{"CQ-RES-04"}, what() + " succeeded with a non-zero ProviderErrorCode"});
            }
            if (landed && receive && r.BytesTransferred != expected.bytes_transferred)
                v.add({{"CQ-RES-01"},
                       what() + " reports " + num(r.BytesTransferred) + " bytes transferred; " +
                           num(expected.bytes_transferred) + " were sent"});
            for (const auto& landing : expected.landings)
                note_landing(landing, -1);
            if (landed && landing_seen) {
                for (const auto& landing : expected.landings) {
                    if (landing.unchecked) continue;  // WR-FENCE-01: the order is open
                    size_t at = 0;
                    for (size_t i = 0; i < landing.at.size(); ++i) {
                        const std::byte* p =
                            memory_.page(landing.at[i].first) + landing.at[i].second;
                        // memcmp: std::equal over std::byte compares byte by byte (the oracle's
                        // hottest loop).
                        if (std::memcmp(p, landing.bytes.data() + at, landing.sizes[i]) != 0) {
                            // FR-MAP-01 first: the bytes sit where the run of consecutive
                            // logical pages from AdapterPageArray[0] puts them (the provider
                            // took the entries for one run), or a read from a fast registration
                            // brought that run's bytes. Looked at before the order (FR-PAGE-02):
                            // that run's page may be another of the registration's.
                            if ((landing.fast_registered_runs && landed_as_run(landing, i, at)) ||
                                (landing.source_fast_registered_runs &&
                                 read_as_run(landing, at, p, landing.sizes[i]))) {
                                v.add({{"FR-MAP-01", "FR-PAGE-02", rule},
                                       what() + " succeeded, but its bytes are where a run of "
                                                "consecutive logical pages from "
                                                "AdapterPageArray[0] puts them, not on the pages "
                                                "the array names"});
                                break;
                            }
                            // FR-PAGE-02, FR-MAP-01: the bytes sit on another page of the fast
                            // registration, at the same offset: its pages are out of order.
                            bool elsewhere = false;
                            if (landing.fast_registered_pages)
                                for (PFN_NUMBER other : *landing.fast_registered_pages)
                                    if (other != landing.at[i].first &&
                                        std::memcmp(memory_.page(other) + landing.at[i].second,
                                                    landing.bytes.data() + at,
                                                    landing.sizes[i]) == 0 &&
                                        !same_bytes_sent_to(landing, other, i, at))
                                        elsewhere = true;
                            // A read from a fast registration whose pages were taken out of
                            // order: the landed bytes are another source page's, at the offset
                            // the expected ones have in theirs.
                            if (!elsewhere && landing.source_fast_registered_pages)
                                elsewhere =
                                    read_from_another_source_page(landing, at, p, landing.sizes[i]);
                            // RMR-VA-03 (LAM-VA-01): the bytes sit on the pages the
                            // region's MDL VA maps, not on its PFNs' pages: the provider wrote
                            // through the VA. (An honest provider never lands there: the pages
                            // differ, and the decoy's bytes are not the ones sent.)
                            if (!elsewhere && (landing.va_aliases || landing.source_through_va) &&
                                moved_through_va(landing)) {
                                v.add({{landing.va_rule, rule},
                                       what() + " succeeded, but the bytes moved through the "
                                                "pages an MDL's virtual address maps, not the "
                                                "pages its PFN array lists: the provider "
                                                "dereferenced the VA"});
                                break;
                            }
                            if (elsewhere)
                                v.add({{"FR-PAGE-02", "FR-MAP-01", rule},
                                       what() + " succeeded, but its bytes landed on another page "
                                                "of the fast registration: the pages are not "
                                                "mapped in AdapterPageArray order"});
                            else {
                                // A fast registration's page order (FR-PAGE-02) is only named
                                // when the bytes are seen on its other pages; where they
                                // cannot be (a trace digests the pages the array names, not
                                // the others), the message still says where to look.
                                std::string through_fr =
                                    landing.fast_registered_pages ||
                                            landing.source_fast_registered_pages
                                        ? " (through a fast registration: its pages out of "
                                          "AdapterPageArray order, FR-PAGE-02, would do this "
                                          "too)"
                                        : "";
                                v.add({{rule},
                                       what() +
                                           " succeeded, but the bytes at the target "
                                           "are not the ones sent" +
                                           through_fr});
                            }
                            break;
                        }
                        at += landing.sizes[i];
                    }
                }
            }
            for (auto& landing : expected.landings)
                recycle_bytes(std::move(landing.bytes));
            list.erase(it);
            if (forget) forget_closed_qp(qp_id);
            return v;
        }
        // AMB-12, MODEL-CQ-ERR-01: a request of the peer failed at this QP (a remote access
        // error, say), and where that moves this QP to error too (as InfiniBand's responder
        // does), requests not yet run here are flushed. The first such entry shows it: the QP
        // is in error from now on, everything queued on it is flushed (FLS-02).
        if (q.peer_error && !q.error && q.qp_context == qp_context) {
            auto queued = [&](const std::deque<WorkRequest>& list) {
                return std::any_of(list.begin(), list.end(), [&](const WorkRequest& wr) {
                    return wr.request_context == request;
                });
            };
            if (queued(q.initiator) || queued(q.receive)) {
                // Unless an entry of this connection showed the reading the profile did not
                // choose (open_outcomes): then the model's prediction that the peer's request
                // failed (and left this one waiting) no longer holds, and the entry says only
                // that it ran (a receive that took the peer's message after a read into a
                // sink-only region landed, AMB-37). It is taken off the queue, not judged.
                const auto* other = state_of<QpState>(q.peer);
                if (q.outcome_open || (other && other->outcome_open)) {
                    for (auto* list : {&q.initiator, &q.receive})
                        std::erase_if(*list, [&](const WorkRequest& wr) {
                            return wr.request_context == request;
                        });
                    return v;
                }
                fail_qp(qp_id, true);
                return observe_completion(cq, r, ex);
            }
        }
        // Not pending: was it a request that must leave no entry?
        auto listed = [&](const auto& list) {
            return q.qp_context == qp_context &&
                   std::find(list.begin(), list.end(), request) != list.end();
        };
        if (listed(q.failed_inline)) {
            // WR-05, DEFER-03: a request refused inline, deferred or not, leaves no entry. An
            // NdkFastRegister's page says so for itself (FR-ST-04), and for its
            // STATUS_ACCESS_VIOLATION in particular (FR-ACC-04): those first.
            RuleIds rules;
            if (listed(q.failed_inline_access_violation)) rules.push_back("FR-ACC-04");
            if (listed(q.failed_inline_fast_register)) rules.push_back("FR-ST-04");
            for (const char* generic : {"WR-05", "DEFER-03"})
                rules.push_back(generic);
            v.add({std::move(rules), what() + " belongs to a request that failed inline"});
            return v;
        }
        if (listed(q.unjudged)) return v;  // accepted against the verdict: reported then
        if (listed(q.never)) {
            v.add({{"CQ-STATUS-02", "MODEL-CQ-STATUS-01"},
                   what() + " appeared on a CQ that had failed (overrun or fatal error)"});
            return v;
        }
        auto silent = std::find(q.silent_successes.begin(), q.silent_successes.end(), request);
        if (silent != q.silent_successes.end() && q.qp_context == qp_context) {
            // FLS-02, AMB-12, FR-SILENT-02: the model ran the request when it was posted, but the
            // device may not have: where the QP went to error since (a flush, a close, a peer's
            // failure that reached it), the request may have been flushed or failed, and then it
            // has an entry (an error one; success still leaves none). Once.
            if (NT_ERROR(r.Status) && (q.error || q.peer_error || q.flushed)) {
                q.silent_successes.erase(silent);
                return v;
            }
            auto hint = std::find_if(q.silent_success_hints.begin(), q.silent_success_hints.end(),
                                     [&](const auto& h) { return h.first == request; });
            if (NT_ERROR(r.Status)) {
                // A silent request the model ran as a success failed: an error entry is what
                // SILENT_SUCCESS leaves (WR-SILENT-01 suppresses success entries only), so what
                // is broken is the success it owed (CQ-CST-01), and first the rule a token
                // getter or a flag's grant breaks where the oracle knows one (as for a request
                // without the flag: Out::success in observe_completion).
                RuleIds rules;
                if (hint != q.silent_success_hints.end())
                    rules.assign(hint->second.begin(), hint->second.end());
                if (ex) rules.push_back(outcome_rule(r.Type));
                rules.push_back("CQ-CST-01");
                q.silent_successes.erase(silent);
                if (hint != q.silent_success_hints.end()) q.silent_success_hints.erase(hint);
                v.add({rules, what() +
                                  " (a request with SILENT_SUCCESS) should have succeeded, "
                                  "but its status is " +
                                  std::to_string(r.Status)});
                return v;
            }
            // The rule of the request's own call first: a fast registration's is FR-SILENT-01.
            RuleIds rules = ex && r.Type == NdkOperationTypeFastRegister
                                ? RuleIds{"FR-SILENT-01", "WR-SILENT-01", "AMB-33"}
                                : RuleIds{"WR-SILENT-01", "FR-SILENT-01", "AMB-33"};
            v.add({rules, what() + " belongs to a request with SILENT_SUCCESS that succeeded",
                   readings_.silent_success_entry_tolerated});
            return v;
        }
    }
    // CQP-CTX-01, CQ-RES-02: the right request with another QPContext than its QP was created
    // with (NdkCreateQp's page says every completion of the QP's requests echoes it).
    if (cq_state)
        for (ObjectId qp_id : cq_state->qps) {
            auto& q = std::get<QpState>(objects_[qp_id].state);
            for (auto* list : {&q.initiator_pending, &q.receive_pending})
                for (auto it = list->begin(); it != list->end(); ++it)
                    if (it->request_context == request && it->cq == cq) {
                        // The rule of the request's own call first: a fast registration's entry
                        // carries its QP's QPContext by NdkFastRegister's page (FR-QP-01).
                        RuleIds rules{"CQP-CTX-01", "CQ-RES-02"};
                        if (it->type == NdkOperationTypeFastRegister)
                            rules.insert(rules.begin(), "FR-QP-01");
                        v.add({std::move(rules), what() + " carries QPContext " + hex(qp_context) +
                                                     "; its QP was created with " +
                                                     hex(q.qp_context)});
                        Completion taken = std::move(*it);
                        list->erase(it);
                        for (const auto& l : taken.landings)
                            note_landing(l, -1);
                        retrieved(taken);
                        return v;
                    }
        }
    // CQP-OBJ-02: the right request of a QP of this CQ, with its QP's QPContext, but owed to
    // the QP's other CQ (a receive's entry on the initiator CQ, or the other way round). A QP
    // made with an SRQ has its page's own rule for its receives (CQP-SRQ-01), named first.
    if (cq_state)
        for (ObjectId qp_id : cq_state->qps) {
            auto& q = std::get<QpState>(objects_[qp_id].state);
            if (q.qp_context != qp_context) continue;
            for (auto* list : {&q.initiator_pending, &q.receive_pending})
                for (auto it = list->begin(); it != list->end(); ++it)
                    if (it->request_context == request && it->cq != cq) {
                        RuleIds rules{"CQP-OBJ-02", "CQ-RES-05"};
                        if (it->receive_queue && q.srq) rules.insert(rules.begin(), "CQP-SRQ-01");
                        // A fast registration completes on the initiator CQ (FR-QP-01).
                        if (it->type == NdkOperationTypeFastRegister)
                            rules.insert(rules.begin(), "FR-QP-01");
                        v.add({std::move(rules),
                               what() + " came on CQ " + object_text(cq) + "; its " +
                                   (it->receive_queue ? "receive" : "initiator") +
                                   " request completes on CQ " + object_text(it->cq)});
                        Completion taken = std::move(*it);
                        list->erase(it);
                        for (const auto& l : taken.landings)
                            note_landing(l, -1);
                        retrieved(taken);
                        return v;
                    }
        }
    // CQ-RES-05 judged first: the entry's RequestContext is none of an outstanding request of
    // its QP (a second delivery of an entry already retrieved, CQ-GET-04, shows the same way:
    // the model keeps no history of retrieved entries to tell them apart).
    v.add({{"CQ-RES-05", "CQ-GET-04"},
           what() + " matches no request posted and outstanding on a QP of this CQ"});
    return v;
}

}  // namespace ndkct::model
