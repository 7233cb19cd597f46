// The oracle over a trace: records in, the live harness's verdicts out (judge.hpp).
#include "ndkct/trace/judge.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ndkct/conformance/observation.hpp"
#include "ndkct/model/model.hpp"
#include "ndkct/model/page_rules.hpp"
#include "ndkct/model/translate.hpp"
#include "ndkct/spec/hex.hpp"
#include "ndkct/spec/profile.hpp"
#include "ndkct/spec/status.hpp"
#include "ndkct/trace/decode.hpp"
#include "ndkct/trace/mdl_chain.hpp"

namespace ndkct::trace {

namespace calls = model::calls;
using conformance::HandedOut;
using model::ObjectId;
using model::Observed;

bool Verdicts::failed() const {
    return std::any_of(findings.begin(), findings.end(),
                       [](const Finding& f) { return !f.violation.warning; });
}

// The rule each failing finding judged (its first), as the live runner takes an oracle line's
// (execute.py, outcome_rules): the rules after it follow from it (the form AMB-29 chose, the
// limit AI-07 advertised...) and stay in the message.
model::RuleIds Verdicts::failed_rules() const {
    model::RuleIds out;
    for (const auto& f : findings)
        if (!f.violation.warning && !f.violation.rules.empty()) {
            const auto& judged = f.violation.rules.front();
            if (std::find(out.begin(), out.end(), judged) == out.end()) out.push_back(judged);
        }
    return out;
}

namespace {

// The pages a trace names, each given a page of shadow memory on first sight (PFNs of a
// Windows host are sparse and large; the oracle wants an arena).
class Shadow {
  public:
    explicit Shadow(uint64_t pages_hint) {
        // The announced PFN space, and room for pages outside it and the scratch page (a small
        // arena, 64 pages, must still get a shadow: the loop below needs 1024 at least).
        uint64_t want = pages_hint ? std::min<uint64_t>(pages_hint + 1024, kMaxPages) : kMaxPages;
        for (capacity_ = want; capacity_ >= 1024; capacity_ /= 2) {
            void* p = mmap(nullptr, capacity_ * PAGE_SIZE, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (p != MAP_FAILED) {
                base_ = static_cast<std::byte*>(p);
                return;
            }
        }
        throw std::runtime_error("cannot reserve shadow memory for the trace's pages");
    }
    ~Shadow() {
        if (base_) munmap(base_, capacity_ * PAGE_SIZE);
    }
    Shadow(const Shadow&) = delete;
    Shadow& operator=(const Shadow&) = delete;

    model::HostMemoryView view() const { return {base_, capacity_}; }
    // The shadow page of a PFN; capacity_ - 1 (a scratch page) when full.
    uint64_t page(uint64_t pfn) {
        if (pfn < direct_ && direct_ <= capacity_) return pfn;  // small PFNs map to themselves
        auto [it, fresh] = map_.try_emplace(pfn, next_);
        if (fresh) {
            if (next_ + 1 >= capacity_) {
                full_ = true;
                it->second = capacity_ - 1;
            } else {
                ++next_;
            }
        }
        return it->second;
    }
    std::byte* at(uint64_t pfn, uint32_t offset) { return base_ + page(pfn) * PAGE_SIZE + offset; }
    bool full() const { return full_; }
    // PFNs below `direct` (a PFN space the header announced) are their own shadow pages.
    void set_direct(uint64_t direct) {
        if (direct && direct < capacity_) {
            direct_ = direct;
            next_ = direct;
        }
    }

  private:
    static constexpr uint64_t kMaxPages = uint64_t{1} << 20;  // 4 GiB of address space
    std::byte* base_ = nullptr;
    uint64_t capacity_ = 0;
    uint64_t direct_ = 0;
    uint64_t next_ = 0;
    bool full_ = false;
    std::unordered_map<uint64_t, uint64_t> map_;
};

uint32_t expected_type(uint32_t function) {
    switch (function) {
        case NDKT_FN_CREATE_CQ:
            return NdkObjectTypeCq;
        case NDKT_FN_CREATE_PD:
            return NdkObjectTypePd;
        case NDKT_FN_CREATE_SHARED_ENDPOINT:
            return NdkObjectTypeSharedEndpoint;
        case NDKT_FN_CREATE_CONNECTOR:
            return NdkObjectTypeConnector;
        case NDKT_FN_CREATE_LISTENER:
            return NdkObjectTypeListener;
        case NDKT_FN_CREATE_MR:
            return NdkObjectTypeMr;
        case NDKT_FN_CREATE_MW:
            return NdkObjectTypeMw;
        case NDKT_FN_CREATE_SRQ:
            return NdkObjectTypeSrq;
        default:
            return NdkObjectTypeQp;
    }
}

const char* type_phrase(uint32_t type) {
    switch (type) {
        case NdkObjectTypeAdapter:
            return "the adapter";
        case NdkObjectTypePd:
            return "a PD";
        case NdkObjectTypeCq:
            return "a CQ";
        case NdkObjectTypeMr:
            return "an MR";
        case NdkObjectTypeMw:
            return "an MW";
        case NdkObjectTypeQp:
            return "a QP";
        case NdkObjectTypeSrq:
            return "an SRQ";
        case NdkObjectTypeConnector:
            return "a connector";
        case NdkObjectTypeListener:
            return "a listener";
        case NdkObjectTypeSharedEndpoint:
            return "a shared endpoint";
        default:
            return "an object of unknown type";
    }
}

HandedOut handed_out(const ObjRecord& o) {
    HandedOut h;
    h.present = o.handle != 0;
    h.object_type = o.object_type;
    h.version = o.version;
    h.reserved_zero = !o.reserved_nonzero;
    h.has_dispatch = !o.dispatch_null;
    h.null_member = o.null_member == NDKT_NO_MEMBER ? -1 : o.null_member;
    return h;
}

model::Violation violation(model::RuleIds rules, std::string message) {
    return {std::move(rules), std::move(message), false};
}

bool is_create(uint32_t f) {
    switch (f) {
        case NDKT_FN_CREATE_CQ:
        case NDKT_FN_CREATE_PD:
        case NDKT_FN_CREATE_SHARED_ENDPOINT:
        case NDKT_FN_CREATE_CONNECTOR:
        case NDKT_FN_CREATE_LISTENER:
        case NDKT_FN_CREATE_MR:
        case NDKT_FN_CREATE_MW:
        case NDKT_FN_CREATE_SRQ:
        case NDKT_FN_CREATE_QP:
        case NDKT_FN_CREATE_QP_WITH_SRQ:
            return true;
        default:
            return false;
    }
}

}  // namespace

struct Judge::Impl {
    Header header;
    JudgeOptions options;
    Verdicts out;
    Shadow shadow;
    std::unique_ptr<model::Model> oracle;
    ObjectId adapter = 0;
    bool digests = false;  // the trace carries DATA blocks
    bool stopped = false;
    const Record* current = nullptr;

    // Handles (the provider's object pointers) and what the oracle calls them.
    std::unordered_map<uint64_t, ObjectId> ids;
    std::unordered_map<ObjectId, uint64_t> handles;
    std::unordered_map<uint64_t, uint32_t> types;  // handle -> Header.ObjectType at handout

    // Requests that asked for a completion, by the id their callback carries.
    struct Request {
        uint32_t function = 0;
        uint64_t object = 0;  // the call's object
        uint64_t target = 0;  // the object whose close must not pass it (CLOSE-03/04), or 0
        uint64_t lam = 0;     // NdkBuildLam: the LAM's handle
        NTSTATUS status = STATUS_PENDING;
        uint64_t pending = 0;  // the oracle's request to complete()
        ObjectId created = 0;
        int callbacks = 0;
        uint64_t callback_end = 0;  // the seq its (first) callback returned at
        uint64_t time = 0;          // when the call was entered (ticks)
        uint64_t end_seq = 0;       // the writer's count when the call returned
        bool abandoned = false;     // its callback came too late (the live harness gave up)
        bool object_busy = false;   // a close: requests of the object were pending at the call
        uint64_t record = 0, offset = 0;  // the call's record (a callback never came: named there)
    };
    std::unordered_map<uint64_t, Request> requests;
    // Callbacks that came before their call's record (NDKT_FLAG_CALL_PENDING), by request id.
    std::unordered_map<uint64_t, std::vector<std::vector<uint8_t>>> early;
    // Calls written before they returned (NDKT_FLAG_EXPIRED), by seq, awaiting their RETURN.
    std::unordered_map<uint64_t, std::vector<uint8_t>> expired;

    // Callbacks as intervals of the writer's event counter (CLOSE-05/07, CQ-NOT-03, CLOSE-ADP-01).
    struct Running {
        uint64_t start, end;
        uint16_t kind;
        uint64_t object;
    };
    std::vector<Running> running;
    std::unordered_map<uint64_t, uint64_t> closed;        // handle -> seq its close completed at
    std::unordered_map<uint64_t, uint64_t> close_called;  // handle -> time its close was called
    std::unordered_map<uint64_t, std::vector<uint64_t>> close_antecedents;
    std::unordered_map<uint64_t, std::vector<uint8_t>> sent_private_data;  // by connector

    // Posts racing another thread's call: posts are written when entered, so a post that
    // another thread's close (or NdkDisconnect) of its QP's connector, or NdkFlush of its QP,
    // overtook inside the provider stands before that call in the trace, though it saw its
    // effect. The post's refusal is then judged as if that call came first: the findings of a
    // refused post wait here for such a call from another thread, entered before the post
    // returned; those no call explains are reported at the end.
    //  - WR-04: STATUS_CONNECTION_INVALID once the QP's connector is being closed or
    //    disconnected;
    //  - MODEL-FLS-01: any failure once the QP is flushed (a warning under the reading that a
    //    flushed QP stays usable, as the model judges a post after the flush).
    struct HeldPost {
        uint64_t qp = 0;
        uint64_t connector = 0;  // with STATUS_CONNECTION_INVALID: a close of it explains it
        uint32_t thread = 0;
        uint64_t return_seq = 0;
        std::vector<Finding> findings;
    };
    std::vector<HeldPost> held_posts;
    // A request or create completion whose Context no request had (GEN-CB-03), held until the
    // end of the trace: the live harness names *-CTX-01 from every request then owed its
    // callback, and one still inside its call (return-recorded, so written after the stray
    // with a smaller seq) was owed one too. Its record comes later; the stray waits for it.
    struct HeldStray {
        const char* what = nullptr;
        uint32_t kind = 0;
        uint64_t seq = 0;
        uint64_t record = 0, offset = 0;
        std::vector<std::string> owed;  // the functions owed a callback of its kind
    };
    std::vector<HeldStray> held_strays;
    size_t posts_behind_a_close = 0, posts_behind_a_flush = 0;

    Decoded d;                       // reused
    std::vector<bool> seen, broken;  // get_results's, reused
    std::vector<uint64_t> shown;
    // The last stand-in expanded (a workload that moves the same bytes again reuses it).
    uint64_t last_digest = 0;
    std::vector<std::byte> last_stand_in;
    std::vector<uint64_t> mdl_storage;
    // Bytes the trace shows outright (inline payloads, DATA blocks with their bytes), by digest:
    // a landing whose digest matches gets those bytes in the shadow, not a stand-in.
    std::unordered_map<uint64_t, std::vector<uint8_t>> known_bytes;

    void know(std::span<const uint8_t> bytes) {
        if (bytes.empty() || bytes.size() > 65536) return;
        if (known_bytes.size() > 4096) known_bytes.clear();
        known_bytes.try_emplace(trace::digest(bytes), bytes.begin(), bytes.end());
    }

    Impl(const Header& h, JudgeOptions o) : header(h), options(std::move(o)), shadow(h.pfn_space) {
        shadow.set_direct(h.pfn_space);
        std::string profile_name = !options.profile.empty()
                                       ? options.profile
                                       : (!h.profile.empty() ? h.profile : std::string("default"));
        spec::Profile profile;
        try {
            // The profile the capture ran under travels in the header when it was a file.
            if (options.profile.empty() && !h.profile_json.empty())
                profile =
                    spec::load_profile(h.profile_json, "the trace header (" + h.profile + ")");
            else
                profile = spec::resolve_profile(profile_name);
        } catch (const std::exception& error) {
            throw std::runtime_error("cannot load the profile '" + profile_name +
                                     "': " + error.what());
        }
        model::Readings readings = model::read_profile(profile);
        if (h.ndk_version.Major) readings.version = h.ndk_version;
        if (h.adapter_info) {
            readings.adapter_info = *h.adapter_info;
        } else {
            readings.adapter_info.Version = readings.version;
            out.notes.push_back("the trace has no NDK_ADAPTER_INFO: the profile's limits apply");
        }
        digests = h.capture_flags & NDKT_CAPTURE_DIGESTS;
        oracle = std::make_unique<model::Model>(readings, shadow.view(), model::Mode::check);
        // The oracle's messages name objects by the trace's handles, as its dump shows them.
        oracle->name_objects([this](ObjectId oid) {
            auto it = handles.find(oid);
            return it == handles.end() ? std::string() : spec::hex(it->second);
        });
        adapter = oracle->open_adapter();
        adopt(h.adapter, adapter, NdkObjectTypeAdapter);
        if (!digests) {
            oracle->set_landings_observable(false);
            out.notes.push_back(
                "the trace carries no data digests: where bytes landed is not judged");
        }
    }

    // ---- Small helpers ----
    ObjectId id(uint64_t handle) const {
        if (!handle) return 0;
        auto it = ids.find(handle);
        return it == ids.end() ? 0 : it->second;
    }
    void adopt(uint64_t handle, ObjectId oid, uint32_t type) {
        if (!handle || !oid) return;
        ids[handle] = oid;
        handles[oid] = handle;
        types[handle] = type;
        closed.erase(handle);  // a new object at an address a closed one had
        close_called.erase(handle);
    }
    void report(model::Violation v) {
        out.findings.push_back(
            {std::move(v), current ? current->index : 0, current ? current->offset : 0});
    }
    void report(model::Verdict v) {
        for (auto& x : v.violations)
            report(std::move(x));
    }
    // Judging stops at the record being judged (or, stop_at, where the reader got to).
    void stop(const std::string& why) {
        stop_at(current ? current->index : 0, current ? current->offset : 0, why);
    }
    void stop_at(uint64_t record, uint64_t offset, const std::string& why) {
        if (stopped) return;
        stopped = true;
        out.stopped_record = record;
        out.stopped_offset = offset;
        // Said as the reader says its problems: where, then what.
        out.stopped = "offset " + std::to_string(offset) + ": " + why;
    }
    std::string name_of(uint32_t function) const { return function_name(function); }

    // ---- Raw arguments rebuilt, then the same translations the live harness uses ----
    const MDL* build_mdl(const MdlChainRecord& chain) {
        return rebuild_mdl_chain(chain, mdl_storage,
                                 [this](uint64_t pfn) { return shadow.page(pfn); });
    }

    std::vector<NDK_SGE> raw_sges;  // reused
    std::vector<model::Sge> sgl_of(const std::vector<Sge>& sgl) {
        raw_sges.resize(sgl.size());
        for (size_t i = 0; i < sgl.size(); ++i) {
            raw_sges[i].LogicalAddress.QuadPart = static_cast<LONG64>(sgl[i].address);
            raw_sges[i].Length = sgl[i].length;
            raw_sges[i].MemoryRegionToken = sgl[i].token;
        }
        return model::view_sgl(raw_sges.data(), static_cast<ULONG>(raw_sges.size()));
    }

    // The socket address as the writer's platform numbered its families, on this one's.
    model::SocketAddress address_of(const Address& a) const {
        if (!a.present) return {};
        std::array<uint8_t, 128> raw{};
        std::memcpy(raw.data(), a.bytes.data(), std::min<size_t>(a.bytes.size(), raw.size()));
        uint16_t family;
        std::memcpy(&family, raw.data(), 2);
        if (family == header.af_inet6 && header.af_inet6 != AF_INET6) family = AF_INET6;
        if (family == header.af_inet && header.af_inet != AF_INET) family = AF_INET;
        std::memcpy(raw.data(), &family, 2);
        return model::view_address(reinterpret_cast<const SOCKADDR*>(raw.data()), a.length);
    }

    static std::vector<std::byte> bytes_of(const Blob& b) {
        std::vector<std::byte> v(b.bytes.size());
        if (!v.empty()) std::memcpy(v.data(), b.bytes.data(), v.size());
        return v;
    }

    // ---- Shadow memory ----
    void fill(const Data& data) {
        if (!data.resolved() || data.pieces.empty()) return;
        std::span<const uint8_t> real = data.bytes;
        if (real.size() != data.length)
            if (auto it = known_bytes.find(data.digest);
                it != known_bytes.end() && it->second.size() == data.length)
                real = it->second;
        if (real.size() == data.length) {
            know(real);
        } else {
            // A stand-in for the bytes, expanded from the digest (equal digests, equal bytes):
            // word i is a mix of (digest, i).
            if (last_digest != data.digest || last_stand_in.size() != data.length) {
                last_digest = data.digest;
                last_stand_in.resize(data.length);
                for (size_t i = 0; i < data.length; i += 8) {
                    uint64_t w = (data.digest ^ ((i / 8 + 1) * 0x9E3779B97F4A7C15ull)) *
                                 0xBF58476D1CE4E5B9ull;
                    w ^= w >> 31;
                    std::memcpy(last_stand_in.data() + i, &w, std::min<size_t>(8, data.length - i));
                }
            }
            real = {reinterpret_cast<const uint8_t*>(last_stand_in.data()), last_stand_in.size()};
        }
        size_t at = 0;
        for (const Piece p : data.pieces) {
            if (p.offset >= PAGE_SIZE || p.size > PAGE_SIZE - p.offset) continue;
            size_t n = std::min<size_t>(p.size, real.size() - std::min(at, real.size()));
            std::memcpy(shadow.at(p.pfn, p.offset), real.data() + at, n);
            at += p.size;
        }
    }

    // Pieces that share bytes (two SGEs naming the same memory, as SGE lists may).
    static bool pieces_overlap(const Pieces& pieces) {
        std::vector<Piece> sorted;
        sorted.reserve(pieces.size());
        for (const Piece p : pieces)
            sorted.push_back(p);
        std::sort(sorted.begin(), sorted.end(), [](const Piece& a, const Piece& b) {
            return a.pfn != b.pfn ? a.pfn < b.pfn : a.offset < b.offset;
        });
        for (size_t i = 1; i < sorted.size(); ++i)
            if (sorted[i].pfn == sorted[i - 1].pfn &&
                sorted[i].offset < uint64_t{sorted[i - 1].offset} + sorted[i - 1].size)
                return true;
        return false;
    }

    // Digest-only: a source that overlaps bytes still landing cannot be composed from stand-ins,
    // nor one whose pieces overlap one another: its real bytes repeat where they do, which no
    // stand-in expanded from the digest does (written piece by piece, the later piece's bytes
    // stay, the gather then reads bytes the digest never covered, and the write's landing, the
    // stand-in itself, looked like other bytes than were sent: a false WRT-01).
    bool composes(const Data& source) {
        if (source.bytes.size() == source.length) return true;
        if (auto it = known_bytes.find(source.digest);
            it != known_bytes.end() && it->second.size() == source.length)
            return true;
        if (source.pieces.size() > 1 && pieces_overlap(source.pieces)) return false;
        // To the byte: a source beside bytes still landing on its page composes.
        model::Extent bytes;
        bytes.reserve(source.pieces.size());
        for (const Piece p : source.pieces)
            bytes.append(shadow.page(p.pfn), p.offset, p.size);
        return !oracle->landing_expected_within(bytes);
    }

    // ---- Applying ----
    model::Applied apply(const model::Call& call, const Observed& o) {
        model::Applied a = oracle->apply(call, o);
        report(std::move(a.verdict));
        a.verdict = {};
        return a;
    }

    void remember(uint64_t request, Request r) {
        if (!request) return;
        r.time = current ? current->head.time : 0;
        r.end_seq = current ? current->head.seq + current->head.return_delta : 0;
        r.record = current ? current->index : 0;
        r.offset = current ? current->offset : 0;
        requests[request] = r;
    }

    // A request that may complete through a callback: judged, remembered, early callbacks
    // replayed.
    void request_call(const model::Call& call, const Observed& o, uint64_t target,
                      uint64_t lam = 0) {
        model::Applied a = apply(call, o);
        Request r;
        r.function = d.function;
        r.object = d.object;
        r.target = target;
        r.lam = lam;
        r.status = d.status;
        r.pending = a.pending;
        r.created = a.created;
        uint64_t request = d.request;
        remember(request, r);
        replay_early(request);
    }

    void replay_early(uint64_t request) {
        auto it = early.find(request);
        if (it == early.end()) return;
        auto records = std::move(it->second);
        early.erase(it);
        Decoded saved = d;
        for (auto& bytes : records) {
            Record r;
            r.head.kind = static_cast<uint16_t>(bytes[0] | bytes[1] << 8);
            r.head.flags = bytes[2];
            std::memcpy(&r.head.seq, bytes.data() + 16, 8);
            std::memcpy(&r.head.return_delta, bytes.data() + 32, 4);
            r.body = bytes.data() + NDKT_RECORD_HEADER_BYTES;
            r.body_size = static_cast<uint32_t>(bytes.size() - NDKT_RECORD_HEADER_BYTES);
            r.offset = current ? current->offset : 0;
            r.index = current ? current->index : 0;
            std::string why;
            if (decode(r, d, why)) on_completion(r);
        }
        d = saved;
    }

    // ---- Calls ----
    void on_call(const Record& r) {
        ++out.calls;
        uint32_t f = d.function;
        if (!held_strays.empty()) calls_inside_at_strays();
        // GEN-CREATE-05: an entry reached while the same thread was inside another call is the
        // provider calling through a Dispatch it handed out (the consumer's own calls from a
        // callback carry NDKT_FLAG_IN_CALLBACK instead). The oracle never hears of it.
        if (r.head.flags & NDKT_FLAG_NESTED) {
            auto t = types.find(d.object);
            report(violation({"GEN-CREATE-05"},
                             std::string("provider called through the object's Dispatch after "
                                         "handout: ") +
                                 name_of(f) + " of " +
                                 type_phrase(t == types.end() ? 0u : t->second) +
                                 ", from inside the consumer's " +
                                 (r.head.parent ? kind_name(r.head.parent) : "call")));
            return;
        }
        // GEN-IRQL-01: a call from inside a provider callback that took the watchdog's time.
        if ((r.head.flags & NDKT_FLAG_IN_CALLBACK) && header.ticks_per_second) {
            long long ms = static_cast<long long>(r.head.duration * 1000.0 /
                                                  static_cast<double>(header.ticks_per_second));
            if (ms >= options.watchdog_ms)
                report(conformance::blocked_in_callback(name_of(f), ms, options.watchdog_ms));
        }
        Observed o;
        o.status = d.status;
        const bool may_be_overtaken = refused_post_another_call_may_explain(f);
        const size_t findings_before = out.findings.size();
        dispatch_call(f, o);
        if (may_be_overtaken && out.findings.size() > findings_before) hold(findings_before);
    }

    // A post refused where the oracle's current state says it must succeed, on a QP whose
    // connector is open or not yet flushed: a call of another thread may explain it.
    bool refused_post_another_call_may_explain(uint32_t f) const {
        switch (f) {
            case NDKT_FN_SEND:
            case NDKT_FN_SEND_AND_INVALIDATE:
            case NDKT_FN_WRITE:
            case NDKT_FN_READ:
            case NDKT_FN_BIND:
            case NDKT_FN_FAST_REGISTER:
            case NDKT_FN_INVALIDATE:
            case NDKT_FN_RECEIVE:
                break;
            default:
                return false;
        }
        if (!NT_ERROR(d.status) || (current->head.flags & NDKT_FLAG_EXPIRED) ||
            !current->head.return_delta)
            return false;
        const auto* q = oracle->state_of<model::QpState>(id(d.object));
        return q && !q->flushed && !q->flushed_usable;
    }

    void hold(size_t findings_before) {
        HeldPost held;
        held.qp = d.object;
        held.thread = current->head.thread;
        held.return_seq = current->head.seq + current->head.return_delta;
        if (d.status == STATUS_CONNECTION_INVALID)
            if (const auto* q = oracle->state_of<model::QpState>(id(d.object)); q && q->connector)
                if (const auto* c = oracle->find(q->connector); c && c->life == model::Life::ready)
                    if (auto handle = handles.find(q->connector); handle != handles.end())
                        held.connector = handle->second;
        held.findings.assign(std::make_move_iterator(out.findings.begin() + findings_before),
                             std::make_move_iterator(out.findings.end()));
        out.findings.resize(findings_before);
        held_posts.push_back(std::move(held));
    }

    // Whether the current record, a call of another thread than the held post's, was entered
    // before that post returned.
    bool overtook(const HeldPost& h) const {
        return h.thread != current->head.thread && current->head.seq < h.return_seq;
    }

    // A close or NdkDisconnect of `connector` (the current record): the held posts it explains.
    void close_overtook_posts(uint64_t connector) {
        std::erase_if(held_posts, [&](const HeldPost& h) {
            bool explained = h.connector == connector && overtook(h);
            posts_behind_a_close += explained;
            return explained;
        });
    }

    // NdkFlush of `qp` (the current record, already applied): the held posts it explains.
    void flush_overtook_posts(uint64_t qp) {
        const auto* q = oracle->state_of<model::QpState>(id(qp));
        if (!q || !(q->flushed || q->flushed_usable)) return;
        std::erase_if(held_posts, [&](HeldPost& h) {
            if (h.qp != qp || !overtook(h)) return false;
            ++posts_behind_a_flush;
            if (!q->flushed_usable) return true;
            for (auto& finding : h.findings) {  // the other reading's refusal: a warning
                finding.violation.warning = true;
                finding.violation.rules.push_back("MODEL-FLS-01");
                finding.violation.message += " (another thread's NdkFlush of the QP overtook it)";
                put_back(std::move(finding));
            }
            return true;
        });
    }

    // A held finding back among the others, behind the last one made at or before its record.
    void put_back(Finding finding) {
        auto at = out.findings.end();
        while (at != out.findings.begin() && std::prev(at)->record > finding.record)
            --at;
        out.findings.insert(at, std::move(finding));
    }

    void report_held_posts() {
        for (auto& h : held_posts)
            for (auto& finding : h.findings)
                put_back(std::move(finding));
        held_posts.clear();
        if (posts_behind_a_close)
            out.notes.push_back(std::to_string(posts_behind_a_close) +
                                " post(s) failed with STATUS_CONNECTION_INVALID while another "
                                "thread was closing or disconnecting their QP's connector: "
                                "judged after that call (WR-04)");
        if (posts_behind_a_flush)
            out.notes.push_back(std::to_string(posts_behind_a_flush) +
                                " post(s) failed while another thread was flushing their QP: "
                                "judged after that NdkFlush (MODEL-FLS-01)");
        posts_behind_a_close = posts_behind_a_flush = 0;
    }

    void dispatch_call(uint32_t f, Observed& o) {
        switch (f) {
            case NDKT_FN_QUERY_EXTENSION:
                // EXT-02: a success fills *pExtensionInterface with the extension's table.
                if (d.status == STATUS_SUCCESS && d.has_out && !d.filled)
                    report(violation({"EXT-02"},
                                     "NdkQueryExtensionInterface succeeded without filling "
                                     "*pExtensionInterface"));
                apply(calls::QueryExtensionInterface{id(d.object)}, o);
                break;
            case NDKT_FN_QUERY_ADAPTER_INFO:
                if (d.has_size) o.size_out = d.size_out;
                if (d.status == STATUS_SUCCESS && d.has_buffer) {
                    NDK_ADAPTER_INFO info{};
                    std::memcpy(&info, d.info.bytes.data(),
                                std::min<size_t>(d.info.bytes.size(), sizeof info));
                    o.adapter_info = info;
                }
                apply(calls::QueryAdapterInfo{id(d.object), d.size_in, d.has_buffer}, o);
                break;
            case NDKT_FN_CREATE_CQ:
                create(calls::CreateCq{id(d.object), d.depth, d.has_notification, d.has_affinity});
                break;
            case NDKT_FN_CREATE_PD:
                create(calls::CreatePd{id(d.object)});
                break;
            case NDKT_FN_CREATE_SHARED_ENDPOINT:
                create(calls::CreateSharedEndpoint{id(d.object), address_of(d.address)});
                break;
            case NDKT_FN_CREATE_CONNECTOR:
                create(calls::CreateConnector{id(d.object)});
                break;
            case NDKT_FN_CREATE_LISTENER:
                create(calls::CreateListener{id(d.object), d.has_event});
                break;
            case NDKT_FN_CREATE_MR:
                create(calls::CreateMr{id(d.object), d.fast_register});
                break;
            case NDKT_FN_CREATE_MW:
                create(calls::CreateMw{id(d.object)});
                break;
            case NDKT_FN_CREATE_SRQ:
                create(calls::CreateSrq{id(d.object), d.depth, d.max_sge, d.threshold,
                                        d.has_notification});
                break;
            case NDKT_FN_CREATE_QP:
                create(calls::CreateQp{id(d.object), id(d.receive_cq), id(d.initiator_cq),
                                       d.qp_context, d.receive_depth, d.initiator_depth,
                                       d.receive_sge, d.initiator_sge, d.inline_size});
                break;
            case NDKT_FN_CREATE_QP_WITH_SRQ:
                create(calls::CreateQpWithSrq{id(d.object), id(d.receive_cq), id(d.initiator_cq),
                                              id(d.srq), d.qp_context, d.initiator_depth,
                                              d.initiator_sge, d.inline_size});
                break;
            case NDKT_FN_BUILD_LAM:
                build_lam(o);
                break;
            case NDKT_FN_RELEASE_LAM:
                apply(calls::ReleaseLam{id(d.object), id(d.lam)}, {});
                ids.erase(d.lam);
                break;
            case NDKT_FN_CLOSE:
                close(o);
                break;
            case NDKT_FN_RESIZE_CQ:
                request_call(calls::ResizeCq{id(d.object), d.depth}, o, d.object);
                break;
            case NDKT_FN_ARM_CQ:
                apply(calls::ArmCq{id(d.object), d.type}, {});
                break;
            case NDKT_FN_GET_CQ_RESULTS:
            case NDKT_FN_GET_CQ_RESULTS_EX:
                get_results(f == NDKT_FN_GET_CQ_RESULTS_EX);
                break;
            case NDKT_FN_CONTROL_CQ_INTERRUPT_MODERATION:
                apply(calls::ControlCqInterruptModeration{id(d.object), d.interval, d.count}, o);
                break;
            case NDKT_FN_REGISTER_MR: {
                const MDL* mdl = build_mdl(d.mdl);
                request_call(calls::RegisterMr{id(d.object), model::view_mdl(mdl, d.length),
                                               d.length, d.mr_flags},
                             o, d.object);
                break;
            }
            case NDKT_FN_DEREGISTER_MR:
                request_call(calls::DeregisterMr{id(d.object)}, o, d.object);
                break;
            case NDKT_FN_INITIALIZE_FAST_REGISTER_MR:
                request_call(
                    calls::InitializeFastRegisterMr{id(d.object), d.page_count, d.remote_access}, o,
                    d.object);
                break;
            case NDKT_FN_GET_REMOTE_TOKEN_FROM_MR:
                o.value = d.token;
                apply(calls::GetRemoteTokenFromMr{id(d.object)}, o);
                break;
            case NDKT_FN_GET_LOCAL_TOKEN_FROM_MR:
                o.value = d.token;
                apply(calls::GetLocalTokenFromMr{id(d.object)}, o);
                break;
            case NDKT_FN_GET_REMOTE_TOKEN_FROM_MW:
                o.value = d.token;
                apply(calls::GetRemoteTokenFromMw{id(d.object)}, o);
                break;
            case NDKT_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN:
                o.value = d.token;
                apply(calls::GetPrivilegedMemoryRegionToken{id(d.object)}, o);
                break;
            case NDKT_FN_MODIFY_SRQ:
                request_call(calls::ModifySrq{id(d.object), d.depth, d.threshold}, o, d.object);
                break;
            case NDKT_FN_SRQ_RECEIVE:
                apply(calls::SrqReceive{id(d.object), d.context, sgl_of(d.sgl)}, o);
                break;
            case NDKT_FN_FLUSH:
                apply(calls::Flush{id(d.object)}, {});
                flush_overtook_posts(d.object);
                break;
            case NDKT_FN_RECEIVE:
                apply(calls::Receive{id(d.object), d.context, sgl_of(d.sgl)}, o);
                break;
            case NDKT_FN_SEND:
                with_source([&] {
                    apply(calls::Send{id(d.object), d.context, sgl_of(d.sgl), d.op_flags,
                                      inline_of()},
                          o);
                });
                break;
            case NDKT_FN_SEND_AND_INVALIDATE:
                with_source([&] {
                    apply(calls::SendAndInvalidate{id(d.object), d.context, sgl_of(d.sgl),
                                                   d.op_flags, d.remote_token, inline_of()},
                          o);
                });
                break;
            case NDKT_FN_WRITE:
                with_source([&] {
                    apply(calls::Write{id(d.object), d.context, sgl_of(d.sgl), d.remote_address,
                                       d.remote_token, d.op_flags, inline_of()},
                          o);
                });
                break;
            case NDKT_FN_READ:
                with_source([&] {
                    apply(calls::Read{id(d.object), d.context, sgl_of(d.sgl), d.remote_address,
                                      d.remote_token, d.op_flags},
                          o);
                });
                break;
            case NDKT_FN_BIND:
                apply(calls::Bind{id(d.object), d.context, id(d.mr), id(d.mw), d.virtual_address,
                                  d.length, d.op_flags},
                      o);
                break;
            case NDKT_FN_FAST_REGISTER:
                apply(calls::FastRegister{id(d.object), d.context, id(d.mr), d.pages, d.fbo,
                                          d.length, d.base_virtual_address, d.op_flags},
                      o);
                break;
            case NDKT_FN_INVALIDATE:
                apply(calls::Invalidate{id(d.object), d.context, id(d.target), d.op_flags}, o);
                break;
            case NDKT_FN_GET_LOCAL_ADDRESS:
            case NDKT_FN_GET_PEER_ADDRESS:
                o.size_out = d.length_out;
                if (d.status == STATUS_SUCCESS) o.address = address_of(d.address_out);
                if (f == NDKT_FN_GET_LOCAL_ADDRESS)
                    apply(calls::GetLocalAddress{id(d.object), d.length_in}, o);
                else
                    apply(calls::GetPeerAddress{id(d.object), d.length_in}, o);
                break;
            case NDKT_FN_CONNECT:
                sent(d.object, d.private_data);
                request_call(calls::Connect{id(d.object), id(d.qp), address_of(d.source_address),
                                            address_of(d.destination), d.inbound_read_limit,
                                            d.outbound_read_limit, d.private_data.length},
                             o, d.object);
                break;
            case NDKT_FN_CONNECT_WITH_SHARED_ENDPOINT:
                sent(d.object, d.private_data);
                request_call(
                    calls::ConnectWithSharedEndpoint{
                        id(d.object), id(d.qp), id(d.shared_endpoint), address_of(d.destination),
                        d.inbound_read_limit, d.outbound_read_limit, d.private_data.length},
                    o, d.object);
                break;
            case NDKT_FN_COMPLETE_CONNECT:
            case NDKT_FN_COMPLETE_CONNECT_EX:
                request_call(calls::CompleteConnect{id(d.object), f == NDKT_FN_COMPLETE_CONNECT_EX,
                                                    d.has_event},
                             o, d.object);
                break;
            case NDKT_FN_ACCEPT:
            case NDKT_FN_ACCEPT_EX:
                sent(d.object, d.private_data);
                request_call(calls::Accept{id(d.object), id(d.qp), d.inbound_read_limit,
                                           d.outbound_read_limit, d.private_data.length,
                                           f == NDKT_FN_ACCEPT_EX, d.has_event},
                             o, d.object);
                break;
            case NDKT_FN_REJECT:
                sent(d.object, d.private_data);
                apply(calls::Reject{id(d.object), d.private_data.length}, o);
                break;
            case NDKT_FN_GET_CONNECTION_DATA:
                connection_data(o);
                break;
            case NDKT_FN_DISCONNECT:
                close_overtook_posts(d.object);
                request_call(calls::Disconnect{id(d.object)}, o, d.object);
                break;
            case NDKT_FN_LISTEN:
                request_call(calls::Listen{id(d.object), address_of(d.address)}, o, d.object);
                break;
            case NDKT_FN_CONTROL_CONNECT_EVENTS:
                apply(calls::ControlConnectEvents{id(d.object), d.pause}, {});
                break;
        }
    }

    std::vector<std::byte> inline_of() {
        if (!(d.op_flags & NDK_OP_FLAG_INLINE)) return {};
        know(d.inline_payload.bytes);
        return bytes_of(d.inline_payload);
    }

    // The source's bytes into the shadow before the oracle reads them; where the trace cannot
    // show them (or, from digests, they would not compose), the landings go unjudged.
    template <typename Apply>
    void with_source(Apply&& apply_call) {
        bool observable = digests;
        if (digests && !(d.op_flags & NDK_OP_FLAG_INLINE && d.function != NDKT_FN_READ)) {
            if (!d.source || !d.source->resolved() ||
                (d.source->pieces.empty() && d.source->length))
                observable = false;
            else if (!composes(*d.source))
                observable = false;
            else
                fill(*d.source);
        }
        if (!observable && digests) {
            // A refused post lands nothing: only an accepted one goes unjudged.
            if (d.status == STATUS_SUCCESS) ++out.unjudged_posts;
            oracle->set_landings_observable(false);
        }
        apply_call();
        if (!observable && digests) oracle->set_landings_observable(true);
    }

    void create(const model::Call& call) {
        Observed o;
        o.status = d.status;
        o.output_written_while_pending =
            d.status == STATUS_PENDING && (d.create_flags & NDKT_CREATE_OUTPUT_WHILE_PENDING);
        model::Applied a = apply(call, o);
        std::string name = name_of(d.function);
        if (d.status == STATUS_SUCCESS) {
            report(conformance::check_handed_out(handed_out(d.made), expected_type(d.function),
                                                 header.ndk_version, name));
            adopt(d.made.handle, a.created, expected_type(d.function));
        } else if (d.status == STATUS_PENDING && o.output_written_while_pending) {
            // GEN-CREATE-04: written with STATUS_PENDING, so written while the request pends.
            report(violation({"GEN-CREATE-04"}, name + " wrote its output pointer although it "
                                                       "pended"));
        }
        Request r;
        r.function = d.function;
        r.object = d.object;
        r.status = d.status;
        r.pending = a.pending;
        r.created = a.created;
        remember(d.request, r);
        replay_early(d.request);
    }

    void build_lam(Observed& o) {
        const MDL* mdl = build_mdl(d.mdl);
        calls::BuildLam call{id(d.object), model::view_mdl(mdl, d.length),
                             d.length,     d.request != 0,
                             d.has_buffer, d.size_in};
        if (d.status != STATUS_PENDING) lam_outputs(o, d.lam_out, d.status);
        if (d.request) {
            request_call(call, o, 0, d.lam);
        } else {
            apply(call, o);
        }
        if (d.status == STATUS_SUCCESS) {
            if (ObjectId lam = conformance::newest_lam(*oracle)) adopt(d.lam, lam, 0);
            if (d.lam_out.chain_changed)
                report(violation({"LAM-REL-02"}, "NdkBuildLam changed the MDL chain it was given"));
        }
    }

    void lam_outputs(Observed& o, const LamOut& lam, NTSTATUS status) const {
        o.size_out = lam.size_out;
        if (lam.fbo_out != 0xFFFFFFFFu) o.fbo_out = lam.fbo_out;
        if (status == STATUS_SUCCESS && d.has_buffer) o.lam_pages = lam.pages;
    }

    void close(Observed& o) {
        close_overtook_posts(d.object);
        // GEN-CREATE-07: NdkReserved left alone while the object is open.
        if (d.reserved_nonzero)
            report(violation({"GEN-CREATE-07"},
                             "Header.NdkReserved of an open object was written by the provider"));
        // CLOSE-05: the objects whose close must wait for this one's close callback.
        std::vector<uint64_t> antecedents;
        if (const auto* object = oracle->find(id(d.object)))
            for (ObjectId up : object->antecedents)
                if (auto it = handles.find(up); it != handles.end())
                    antecedents.push_back(it->second);
        close_antecedents[d.object] = std::move(antecedents);
        close_called.try_emplace(d.object, current->head.time);
        model::Applied a = apply(calls::CloseObject{id(d.object), d.request != 0}, o);
        Request r;
        r.function = NDKT_FN_CLOSE;
        r.object = d.object;
        r.status = d.status;
        r.pending = a.pending;
        for (const auto& [other, p] : requests)
            if (p.object == d.object && p.function != NDKT_FN_CLOSE && p.status == STATUS_PENDING &&
                p.callbacks == 0)
                r.object_busy = true;
        uint64_t request = d.request;
        uint64_t object = d.object;
        if (d.status == STATUS_SUCCESS)
            close_completed(object, current->head.seq + current->head.return_delta);
        remember(request, r);
        replay_early(request);
    }

    void connection_data(Observed& o) {
        o.size_out = d.length_out;
        bool limits = d.limit_pointers == 3;
        o.inbound_read_limit = limits ? d.ird_out : 0;
        o.outbound_read_limit = limits ? d.ord_out : 0;
        // CONN-PD-03: min(*pPrivateDataLength, RDS) bytes of what the peer sent are copied.
        if (d.has_buffer && (d.status == STATUS_SUCCESS || d.status == STATUS_BUFFER_TOO_SMALL))
            if (const auto* cs = oracle->state_of<model::ConnectorState>(id(d.object)))
                if (auto peer = handles.find(cs->peer); cs->peer && peer != handles.end())
                    if (auto s = sent_private_data.find(peer->second);
                        s != sent_private_data.end()) {
                        size_t n = std::min<size_t>(
                            {d.length_in, d.length_out, s->second.size(), d.data_out.bytes.size()});
                        if (!std::equal(s->second.begin(), s->second.begin() + n,
                                        d.data_out.bytes.begin()))
                            report(violation({"CONN-PD-03"},
                                             "NdkGetConnectionData copied bytes that differ from "
                                             "the " +
                                                 std::to_string(s->second.size()) +
                                                 " bytes of private data the peer sent"));
                    }
        calls::GetConnectionData call{id(d.object), d.has_buffer, d.length_in};
        call.has_read_limits = limits;
        apply(call, o);
    }

    void sent(uint64_t connector, const Blob& data) {
        sent_private_data[connector].assign(data.bytes.begin(), data.bytes.end());
    }

    Observed results_observed;  // get_results's, reused (its vectors keep their capacity)
    void get_results(bool ex) {
        Observed& o = results_observed;
        o.status = STATUS_SUCCESS;
        o.landings_unseen.clear();
        o.value = d.results_returned;
        o.results.resize(d.results.size());
        for (size_t i = 0; i < d.results.size(); ++i) {
            const Result& r = d.results[i];
            NDK_RESULT_EX& x = o.results[i];
            x = {};
            x.Status = r.status;
            x.BytesTransferred = r.bytes_transferred;
            x.QPContext = reinterpret_cast<PVOID>(r.qp_context);
            x.RequestContext = reinterpret_cast<PVOID>(r.request_context);
            x.Type = static_cast<NDK_OPERATION_TYPE>(r.type);
            x.ProviderErrorCode = r.provider_error_code;
            x.TypeSpecificCompletionOutput = static_cast<ULONG_PTR>(r.type_specific);
        }
        out.completions += d.results.size();
        // What landed, into the shadow; results the trace shows no landing for go unjudged.
        seen.assign(d.results.size(), false);
        broken.assign(d.results.size(), false);
        for (const auto& l : d.landings) {
            if (l.result_index >= d.results.size()) continue;
            if (!l.data.resolved()) {
                broken[l.result_index] = true;
                continue;
            }
            seen[l.result_index] = true;
            fill(l.data);
        }
        // A landing the trace shows over another length than the request moved (a completion
        // that misreports BytesTransferred, say) cannot be compared: the oracle judges the count.
        shown.assign(d.results.size(), 0);
        for (const auto& l : d.landings)
            if (l.result_index < d.results.size()) shown[l.result_index] += l.data.length;
        for (uint32_t i = 0; i < d.results.size(); ++i)
            if (seen[i] && !broken[i] &&
                shown[i] != oracle->expected_landing_bytes(id(d.object), o.results[i]))
                broken[i] = true;
        for (uint32_t i = 0; i < d.results.size(); ++i)
            if (!digests || broken[i] || !seen[i]) {
                o.landings_unseen.push_back(i);
                if (digests && broken[i]) ++out.unjudged_landings;
            }
        apply(calls::GetCqResults{id(d.object), d.max_results, ex}, o);
    }

    // ---- Callbacks ----
    void on_callback(const Record& r) {
        ++out.callbacks;
        uint64_t end = r.head.seq + r.head.return_delta;
        switch (d.function) {
            case NDKT_CB_REQUEST_COMPLETION:
            case NDKT_CB_CREATE_COMPLETION:
            case NDKT_CB_CLOSE_COMPLETION: {
                auto it = requests.find(d.request);
                if (it == requests.end()) {
                    // Its call is recorded when it returns and that record follows (the writer
                    // gives completions only for requests it saw): held until then.
                    std::vector<uint8_t> copy(NDKT_RECORD_HEADER_BYTES + r.body_size);
                    std::memcpy(copy.data(), r.body - NDKT_RECORD_HEADER_BYTES, copy.size());
                    early[d.request].push_back(std::move(copy));
                    return;
                }
                uint64_t target = it->second.target                        ? it->second.target
                                  : d.function == NDKT_CB_CLOSE_COMPLETION ? it->second.object
                                                                           : 0;
                running.push_back({r.head.seq, end, r.head.kind, target});
                on_completion(r);
                return;
            }
            case NDKT_CB_CQ_NOTIFICATION:
            case NDKT_CB_SRQ_NOTIFICATION:
            case NDKT_CB_CONNECT_EVENT:
            case NDKT_CB_DISCONNECT_EVENT:
            case NDKT_CB_DISCONNECT_EVENT_EX:
                on_event(r);
                running.push_back({r.head.seq, end, r.head.kind, d.object});
                return;
            case NDKT_CB_STRAY: {
                static const char* const what[NDKT_CB_COUNT] = {
                    "a callback came with a context no object or request had",
                    "NdkRequestCompletion came with a Context that no request had",
                    "NdkCreateCompletion came with a Context that no request had",
                    "NdkCloseCompletion came with a Context that no close had",
                    "a CQ notification came with a context no CQ had",
                    "an SRQ notification came with a context no SRQ had",
                    "a connect event came with a context no listener had",
                    "a disconnect event came with a context no connector had",
                    "a disconnect event came with a context no connector had",
                    "a callback came with a context no object or request had"};
                const uint32_t kind = d.stray_callback;
                const char* says = what[kind < NDKT_CB_COUNT ? kind : 0];
                if (kind != NDKT_CB_REQUEST_COMPLETION && kind != NDKT_CB_CREATE_COMPLETION) {
                    report(conformance::stray_callback(says));
                    return;
                }
                if (held_strays.size() >= kMaxHeldStrays) release_strays();
                HeldStray held{says, kind, r.head.seq, r.index, r.offset, {}};
                for (const auto& [id, q] : requests)
                    if (q.callbacks == 0 && q.status == STATUS_PENDING) owe_to(held, q.function);
                held_strays.push_back(std::move(held));
                return;
            }
        }
    }

    static constexpr size_t kMaxHeldStrays = 4096;  // a provider that strays at every callback

    // Whether `function`'s completion is `kind`'s (NDK_FN_CREATE_COMPLETION for the creates).
    void owe_to(HeldStray& h, uint32_t function) const {
        std::string name = name_of(function);
        bool create = name.rfind("NdkCreate", 0) == 0;
        if (create == (h.kind == NDKT_CB_CREATE_COMPLETION)) h.owed.push_back(std::move(name));
    }

    // A call (the current record) that was entered before a held stray came and returned after
    // it: its request was owed a callback then too.
    void calls_inside_at_strays() {
        if (!d.request || (current->head.flags & NDKT_FLAG_NESTED)) return;
        const uint64_t entered = current->head.seq;
        const uint64_t returned = entered + current->head.return_delta;
        for (auto& h : held_strays)
            if (entered < h.seq && (!current->head.return_delta || returned > h.seq))
                owe_to(h, d.function);
    }

    void release_strays() {
        for (auto& h : held_strays)
            put_back({stray_naming_the_page(h.what, h.owed), h.record, h.offset});
        held_strays.clear();
    }

    // *-CTX-01, as the live harness judges it (Session::report_stray): while every request
    // still owed a callback of this kind is of one function, the wrong Context came for one of
    // them, and that function's page rule is named first.
    static model::Violation stray_naming_the_page(const char* what,
                                                  const std::vector<std::string>& functions) {
        model::Violation stray = conformance::stray_callback(what);
        std::string owed;
        bool several = false;
        for (const auto& name : functions)
            if (owed.empty())
                owed = name;
            else if (owed != name)
                several = true;
        if (!several && !owed.empty())
            if (const char* rule = model::page_rule(owed, model::Contract::callback_context)) {
                stray.rules.insert(stray.rules.begin(), rule);
                stray.message += " (the requests still owed a callback were all " + owed + "'s)";
            }
        return stray;
    }

    void on_completion(const Record& r) {
        Request& q = requests[d.request];
        std::string name = name_of(q.function);
        ++q.callbacks;
        bool first = q.callbacks == 1;
        if (!first) {
            report(conformance::second_callback(name));
        } else if (q.status != STATUS_PENDING) {
            if (r.head.seq < q.end_seq)  // it came before its call returned
                report(conformance::callback_before_final_status(name, q.status));
            else
                report(conformance::callback_after_final_status(name, q.status));
        }
        // CLOSE-04: nothing comes for an object after its close completed.
        if (q.function != NDKT_FN_CLOSE && q.target && closed.contains(q.target))
            report(conformance::late_callback(
                name + ": a completion callback came after the object's close had completed"));
        if (first) q.callback_end = r.head.seq + r.head.return_delta;
        if (!first || q.status != STATUS_PENDING) return;
        // GEN-ASYNC-01 as the live harness sees it: a callback later than its wait gives up on.
        if (header.ticks_per_second && r.head.time > q.time) {
            double ms = static_cast<double>(r.head.time - q.time) * 1000.0 /
                        static_cast<double>(header.ticks_per_second);
            if (ms >= static_cast<double>(options.callback_timeout_ms)) {
                q.abandoned = true;
                report_late(q, static_cast<long long>(ms));
                return;
            }
        }
        Observed later;
        later.status = d.status;
        if (q.function == NDKT_FN_BUILD_LAM && d.has_lam_out) {
            d.has_buffer = true;
            lam_outputs(later, d.lam_out, d.status);
        }
        model::Applied c = oracle->complete(q.pending, d.status, later);
        report(std::move(c.verdict));
        if (is_create(q.function) && NT_SUCCESS(d.status)) {
            report(conformance::check_handed_out(handed_out(d.made), expected_type(q.function),
                                                 header.ndk_version, name));
            adopt(d.made.handle, c.created ? c.created : q.created, expected_type(q.function));
        } else if (is_create(q.function) && d.made.handle) {  // GEN-CREATE-02, CQP-ST-03
            model::Verdict v;
            v.add(conformance::failed_create_with_object(name, d.status));
            report(std::move(v));
        }
        if (q.function == NDKT_FN_BUILD_LAM && d.status == STATUS_SUCCESS)
            if (ObjectId lam = conformance::newest_lam(*oracle)) adopt(q.lam, lam, 0);
        if (q.function == NDKT_FN_CLOSE) close_completed(q.object, r.head.seq);
    }

    // The live harness's words for a callback that did not come in time (Session::wait), and
    // CLOSE-08 for a close that waited on a request of its object instead of cancelling it.
    // Whether the object's close had been asked for by the time the live harness gave up
    // waiting for the request (CLOSE-08: the close would have cancelled it).
    bool close_requested_in_time(const Request& q) const {
        auto it = close_called.find(q.object);
        if (q.function == NDKT_FN_CLOSE || it == close_called.end()) return false;
        if (!header.ticks_per_second) return true;
        double timeout = static_cast<double>(options.callback_timeout_ms) / 1000.0 *
                         static_cast<double>(header.ticks_per_second);
        return static_cast<double>(it->second) <= static_cast<double>(q.time) + timeout;
    }

    std::string object_of(const Request& q) const {
        if (const model::Object* o = oracle->find(id(q.object)))
            return std::string(" (") + model::kind_name(o->kind) + " " + std::to_string(o->id) +
                   ")";
        return "";
    }

    void report_late(const Request& q, long long ms) {
        std::string of = object_of(q);
        bool close_requested = close_requested_in_time(q);
        report(violation(close_requested ? model::RuleIds{"GEN-ASYNC-01", "CLOSE-08"}
                                         : model::RuleIds{"GEN-ASYNC-01"},
                         name_of(q.function) + of +
                             " returned STATUS_PENDING but its completion callback did not come "
                             "within " +
                             std::to_string(options.callback_timeout_ms) + " ms (it came after " +
                             std::to_string(ms) + " ms)" +
                             (close_requested ? ", though its object's close was requested (the "
                                                "close cancels it)"
                                              : "")));
        if (q.function == NDKT_FN_CLOSE && q.object_busy) {
            auto t = types.find(q.object);
            report(violation({"CLOSE-08"},
                             std::string("the close of ") +
                                 type_phrase(t == types.end() ? 0u : t->second) +
                                 " did not complete in time: it waits for a pending request of "
                                 "the object instead of cancelling it"));
        }
    }

    bool running_at(const Running& x, uint64_t at) const { return x.start < at && at < x.end; }

    // CLOSE-03, CLOSE-05, CLOSE-07 where a close completes (the live harness's check_close_order).
    void close_completed(uint64_t object, uint64_t at) {
        for (const auto& [request, q] : requests)
            if (q.target == object && q.function != NDKT_FN_CLOSE && q.status == STATUS_PENDING &&
                (q.callbacks == 0 || q.callback_end > at)) {
                report(violation({"CLOSE-03"},
                                 "the close completed while " + name_of(q.function) +
                                     " on the object was still pending or its callback still "
                                     "running"));
                break;
            }
        for (const auto& x : running)
            if (x.object == object && NDKT_KIND_CLASS(x.kind) == NDKT_KIND_CALLBACK &&
                (x.kind & 0xFF) >= NDKT_CB_CQ_NOTIFICATION && running_at(x, at))
                report(violation({"CLOSE-07", "CLOSE-CQ-01"},
                                 "the close completed while an event callback of the object was "
                                 "running"));
        for (const auto& x : running)
            if ((x.kind & 0xFF) == NDKT_CB_CLOSE_COMPLETION && x.object != object &&
                running_at(x, at)) {
                auto s = close_antecedents.find(x.object);
                if (s != close_antecedents.end() &&
                    std::find(s->second.begin(), s->second.end(), object) != s->second.end())
                    report(conformance::close_during_successor_close(*oracle, id(object),
                                                                     id(x.object), "completed"));
            }
        closed[object] = at;
    }

    void on_event(const Record& r) {
        static const char* const what[] = {"",
                                           "",
                                           "",
                                           "",
                                           "a CQ notification",
                                           "an SRQ notification",
                                           "a connect event",
                                           "a disconnect event",
                                           "a disconnect event"};
        std::string event = what[d.function];
        if (closed.contains(d.object))
            report(violation({"CLOSE-04", "CLOSE-CQ-01"},
                             event + " came after the object's close had completed"));
        if (d.function == NDKT_CB_CQ_NOTIFICATION)
            for (const auto& x : running)
                if (x.kind == r.head.kind && x.object == d.object && running_at(x, r.head.seq)) {
                    report(violation({"CQ-NOT-03"},
                                     "two notification callbacks of one CQ ran at once"));
                    break;
                }
        model::Event e{};
        e.object = id(d.object);
        e.status = d.status;
        switch (d.function) {
            case NDKT_CB_CQ_NOTIFICATION:
                e.kind = model::Event::Kind::cq_notification;
                break;
            case NDKT_CB_SRQ_NOTIFICATION:
                e.kind = model::Event::Kind::srq_notification;
                break;
            case NDKT_CB_CONNECT_EVENT:
                e.kind = model::Event::Kind::connect_request;
                e.status = STATUS_SUCCESS;
                break;
            default:
                e.kind = model::Event::Kind::disconnect;
                e.status = STATUS_SUCCESS;
        }
        model::Applied a = oracle->observe_event(e);
        report(std::move(a.verdict));
        if (d.function == NDKT_CB_CONNECT_EVENT) {
            report(conformance::check_handed_out(handed_out(d.made), NdkObjectTypeConnector,
                                                 header.ndk_version, "NdkConnectEventCallback"));
            adopt(d.made.handle, a.created, NdkObjectTypeConnector);
        }
    }

    void prune_running(uint64_t seq) {
        if (running.size() < 64) return;
        std::erase_if(running, [&](const Running& x) { return x.end < seq && x.end > x.start; });
    }

    // ---- Meta records ----
    // A meta record's body read to its end: else judging stops there, naming it (a verdict from
    // the zeros a short body reads as would be made up).
    bool whole(const Body& b, const Record& r, size_t expected) {
        if (b.ok()) return true;
        stop("record #" + std::to_string(r.index) + " (" + kind_name(r.head.kind) + ") at offset " +
             std::to_string(r.offset) + " is malformed: its body is " +
             std::to_string(r.body_size) + " bytes, " + std::to_string(expected) + " expected");
        return false;
    }

    void on_meta(const Record& r) {
        Body b(r);
        switch (r.head.kind) {
            case NDKT_META_LOSS: {
                uint64_t n = b.u64();
                stop("the capture lost " + std::to_string(n) +
                     " record(s) here (its ring was full); what follows cannot be judged");
                break;
            }
            case NDKT_META_ADAPTER_CLOSE: {
                b.u64();
                uint32_t phase = b.u32();
                if (phase != 1) break;
                // CLOSE-ADP-01, CLOSE-05: CloseNdkAdapter returns after every callback returned.
                int still = 0;
                for (const auto& x : running)
                    if (running_at(x, r.head.seq)) ++still;
                if (still)
                    report(violation({"CLOSE-ADP-01", "CLOSE-05"},
                                     "CloseNdkAdapter returned while " + std::to_string(still) +
                                         " callback(s) of the adapter's objects were still "
                                         "running"));
                report(oracle->close_adapter(adapter));
                break;
            }
            case NDKT_META_RETURN: {
                uint64_t call_seq = b.u64();
                uint32_t function = b.u32();
                b.u32();
                auto it = expired.find(call_seq);
                if (it == expired.end()) break;
                std::vector<uint8_t> bytes = std::move(it->second);
                expired.erase(it);
                Record call;
                std::memcpy(&call.head.kind, bytes.data(), 2);
                call.head.flags = bytes[2];
                std::memcpy(&call.head.seq, bytes.data() + 16, 8);
                call.head.return_delta = static_cast<uint32_t>(r.head.seq - call_seq);
                call.body = bytes.data() + NDKT_RECORD_HEADER_BYTES;
                call.body_size = static_cast<uint32_t>(bytes.size() - NDKT_RECORD_HEADER_BYTES);
                call.offset = r.offset;
                call.index = r.index;
                std::string why;
                if (!decode(call, d, why)) {
                    stop("record #" + std::to_string(r.index) + ": " + why);
                    break;
                }
                decode_outcome(function, b, d);
                d.has_outcome = true;
                if (NDKT_KIND_CLASS(call.head.kind) == NDKT_KIND_CALL) on_call(call);
                break;
            }
            case NDKT_META_END:
                out.ended = true;
                break;
            case NDKT_META_DRAINED: {
                // The consumer drained the QP (NdkCaptureDrained): what is still owed there is
                // missing, as the live oracle finds after a drain (WR-10, FLS-03, DEFER-04).
                uint64_t qp = b.u64();
                if (ObjectId q = id(qp)) report(oracle->expect_nothing_outstanding(q));
                break;
            }
            case NDKT_META_OVERDUE: {
                // The consumer gave up waiting for completions it was owed (NdkCaptureOverdue):
                // the rest are missing, named as the live harness names them when its wait runs
                // out (Session::drain): the fast registration's page rule where every entry still
                // owed on the CQ is one (FR-ST-01, FR-DEFER-01/02, FR-SILENT-02), and WR-10.
                uint64_t cq = b.u64();
                uint32_t expected = b.u32(), arrived = b.u32(), waited_ms = b.u32();
                if (!whole(b, r, 24) || arrived >= expected) break;
                model::Violation missing =
                    conformance::completions_overdue(*oracle, id(cq), expected, arrived, waited_ms);
                missing.message += " (the consumer's word: an OVERDUE record)";
                report(std::move(missing));
                break;
            }
            case NDKT_META_UNNOTIFIED: {
                // The consumer gave up waiting for a notification (NdkCaptureUnnotified): one the
                // arm owes beyond doubt is missing (CQ-NOT-07), as the live oracle judges after
                // the same wait (Session::expect_notification_delivered).
                uint64_t cq = b.u64();
                uint32_t waited_ms = b.u32();
                if (!whole(b, r, 16)) break;
                model::Verdict missing =
                    conformance::notification_overdue(*oracle, id(cq), waited_ms, "the CQ");
                for (auto& v : missing.violations)
                    v.message += " (the consumer's word: an UNNOTIFIED record)";
                report(std::move(missing));
                break;
            }
            default:
                break;
        }
    }

    bool record(const Record& r) {
        if (stopped) return false;
        current = &r;
        ++out.records;
        uint16_t cls = NDKT_KIND_CLASS(r.head.kind);
        if (cls == 0) {
            on_meta(r);
        } else if (cls == NDKT_KIND_CALL || cls == NDKT_KIND_CALLBACK) {
            uint32_t n = r.head.kind & 0xFF;
            if ((cls == NDKT_KIND_CALL && (n == 0 || n >= NDKT_FN_COUNT)) ||
                (cls == NDKT_KIND_CALLBACK && (n == 0 || n >= NDKT_CB_COUNT))) {
                ++out.unknown_records;
            } else {
                std::string why;
                if (!decode(r, d, why)) {
                    stop("record #" + std::to_string(r.index) + " (" + kind_name(r.head.kind) +
                         ") at offset " + std::to_string(r.offset) + " is malformed: " + why);
                } else if (!d.has_outcome) {
                    // Written before it returned: judged when its RETURN record comes.
                    std::vector<uint8_t> copy(NDKT_RECORD_HEADER_BYTES + r.body_size);
                    std::memcpy(copy.data(), r.body - NDKT_RECORD_HEADER_BYTES, copy.size());
                    copy[2] &= static_cast<uint8_t>(~NDKT_FLAG_EXPIRED);
                    if (cls == NDKT_KIND_CALLBACK) {
                        on_callback(r);
                    } else {
                        expired[r.head.seq] = std::move(copy);
                    }
                } else if (cls == NDKT_KIND_CALL) {
                    on_call(r);
                } else {
                    on_callback(r);
                }
            }
        } else {
            ++out.unknown_records;
        }
        if (shadow.full() && !stopped)
            stop("the trace names more distinct pages than the checker can shadow");
        prune_running(r.head.seq);
        current = nullptr;
        return !stopped;
    }

    void finish(const Reader& reader) {
        report_held_posts();
        release_strays();
        // Nothing silently unjudged: data the trace could not show is said, with why.
        if (out.unjudged_posts || out.unjudged_landings)
            out.notes.push_back(
                "not judged where bytes landed: " +
                (out.unjudged_posts ? std::to_string(out.unjudged_posts) +
                                          " post(s) whose source the trace does not show"
                                    : std::string()) +
                (out.unjudged_posts && out.unjudged_landings ? ", " : "") +
                (out.unjudged_landings ? std::to_string(out.unjudged_landings) +
                                             " completion(s) whose landing it does not show"
                                       : std::string()) +
                " (pages the capture could not read, blocks over its digest limit, or sources "
                "that overlap bytes still landing; ./ndkct trace dump shows which)");
        if (reader.problem() && !stopped) {
            stopped = true;
            out.stopped = reader.problem()->describe();
            out.stopped_record = reader.records();
            out.stopped_offset = reader.problem()->offset;
        }
        if (stopped || !out.ended) {
            if (!out.ended)
                stop_at(reader.records(), reader.consumed(),
                        "the trace ends without its END record (the capture was not closed): "
                        "pending requests are not judged");
            return;
        }
        // GEN-ASYNC-01: every STATUS_PENDING request completes through its callback.
        for (const auto& [request, q] : requests)
            if (q.status == STATUS_PENDING && q.callbacks == 0 && !q.abandoned) {
                bool close_requested = close_requested_in_time(q);
                std::string of = object_of(q);
                put_back({violation(close_requested ? model::RuleIds{"GEN-ASYNC-01", "CLOSE-08"}
                                                    : model::RuleIds{"GEN-ASYNC-01"},
                                    name_of(q.function) + of +
                                        " returned STATUS_PENDING but its completion callback "
                                        "never came (the trace ends without it)" +
                                        (close_requested ? ", though its object's close was "
                                                           "requested (the close cancels it)"
                                                         : "")),
                          q.record, q.offset});
            }
        if (!expired.empty())
            out.notes.push_back(std::to_string(expired.size()) +
                                " call(s) never returned before the trace ended");
        for (const auto& [request, records] : early)
            report(conformance::stray_callback(
                std::to_string(records.size()) +
                " completion callback(s) came for a request the trace does not show"));
    }
};

Judge::Judge(const Header& header, JudgeOptions options)
    : impl_(std::make_unique<Impl>(header, std::move(options))) {}
Judge::~Judge() = default;

bool Judge::record(const Record& r) {
    return impl_->record(r);
}

void Judge::finish(const Reader& reader) {
    impl_->finish(reader);
}

const Verdicts& Judge::verdicts() const {
    return impl_->out;
}

namespace {

// Reads and judges as the bytes come: `pump(reader)` feeds the next piece or finishes.
template <typename Pump>
Verdicts judge_stream(Pump pump, const JudgeOptions& options, Header* header) {
    Reader reader;
    Record r;
    std::unique_ptr<Judge> judge;
    bool judging = true;
    try {
        for (;;) {
            Reader::Next next = reader.next(r);
            if (next == Reader::Next::more) {
                pump(reader);
                continue;
            }
            if (!judge && reader.has_header()) {
                if (header) *header = reader.header();
                try {
                    judge = std::make_unique<Judge>(reader.header(), options);
                } catch (const std::exception& error) {
                    Verdicts v;
                    v.stopped = error.what();
                    return v;
                }
            }
            if (next != Reader::Next::record) break;
            // Once judging stopped, read on for what the reader would say of the rest.
            if (judging) judging = judge->record(r);
        }
    } catch (const std::exception& error) {
        Verdicts v = judge ? judge->verdicts() : Verdicts{};
        v.stopped = std::string("the checker failed: ") + error.what();
        return v;
    }
    if (!judge) {
        Verdicts v;
        v.stopped = reader.problem() ? reader.problem()->describe() : "no trace header";
        v.stopped_offset = reader.problem() ? reader.problem()->offset : 0;
        return v;
    }
    judge->finish(reader);
    return judge->verdicts();
}

constexpr size_t kChunk = size_t{1} << 20;

}  // namespace

Verdicts check(std::span<const uint8_t> bytes, const JudgeOptions& options, Header* header) {
    bool given = false;
    return judge_stream(
        [&](Reader& reader) {
            if (!given) reader.borrow(bytes);  // read in place: no copy
            given = true;
        },
        options, header);
}

Verdicts check_file(const std::string& path, const JudgeOptions& options, Header* header) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        Verdicts v;
        v.stopped = "cannot read " + path + ": " + std::strerror(errno);
        return v;
    }
    // A regular file is mapped and read in place (its pages are the page cache's: memory stays
    // bounded by what the kernel keeps); anything else (a pipe, a device) is read in chunks.
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        size_t size = static_cast<size_t>(st.st_size);
        void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            ::close(fd);
            ::madvise(map, size, MADV_SEQUENTIAL);
            Verdicts v;
            try {
                v = check({static_cast<const uint8_t*>(map), size}, options, header);
            } catch (...) {
                ::munmap(map, size);
                throw;
            }
            ::munmap(map, size);
            return v;
        }
    }
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(::fdopen(fd, "rb"), &std::fclose);
    if (!file) {
        ::close(fd);
        Verdicts v;
        v.stopped = "cannot read " + path + ": " + std::strerror(errno);
        return v;
    }
    std::vector<uint8_t> chunk(kChunk);
    return judge_stream(
        [&](Reader& reader) {
            size_t n = std::fread(chunk.data(), 1, chunk.size(), file.get());
            if (n > 0)
                reader.feed(chunk.data(), n);
            else
                reader.finish();
        },
        options, header);
}

}  // namespace ndkct::trace
