// Replaying a trace against another provider through a Session (replay.hpp).
#include "ndkct/trace/replay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unordered_map>

#include "ndkct/conformance/session.hpp"
#include "ndkct/spec/hex.hpp"
#include "ndkct/spec/names.hpp"
#include "ndkct/spec/status.hpp"
#include "ndkct/trace/decode.hpp"
#include "ndkct/trace/mdl_chain.hpp"

namespace ndkct::trace {

namespace {

using conformance::Done;
using conformance::Session;

std::string status_text(NTSTATUS s) {
    return spec::status_name(s);
}

// Every record of the file, kept (the replay looks ahead for recorded final statuses).
struct Loaded {
    Header header;
    std::vector<uint8_t> bytes;
    std::vector<Record> records;
    std::optional<Problem> problem;
};

Loaded load(const std::string& path) {
    Loaded l;
    std::string why;
    if (!read_file(path, l.bytes, why)) {
        l.problem = Problem{Problem::Kind::io, 0, why};
        return l;
    }
    Reader reader;
    reader.feed(l.bytes.data(), l.bytes.size());
    reader.finish();
    Record r;
    Reader::Next next;
    while ((next = reader.next(r)) == Reader::Next::record) {
        r.body = l.bytes.data() + r.offset + NDKT_RECORD_HEADER_BYTES;  // the file's own bytes
        l.records.push_back(r);
    }
    if (reader.has_header()) l.header = reader.header();
    if (next == Reader::Next::error) l.problem = reader.problem();
    return l;
}

bool moves_bytes(const Decoded& d) {
    switch (d.function) {
        case NDKT_FN_SEND:
        case NDKT_FN_SEND_AND_INVALIDATE:
        case NDKT_FN_WRITE:
            return !(d.op_flags & NDK_OP_FLAG_INLINE);
        case NDKT_FN_READ:
            return true;
        default:
            return false;
    }
}

uint64_t sgl_bytes(const std::vector<Sge>& sgl) {
    uint64_t n = 0;
    for (const auto& s : sgl)
        n += s.length;
    return n;
}

class Replayer {
  public:
    Replayer(const Loaded& loaded, const ReplayOptions& options) : in_(loaded), options_(options) {}

    ReplayResult run() {
        if (in_.problem && in_.records.empty()) return refuse(in_.problem->describe());
        if (in_.problem)
            out_.notes.push_back("the trace is damaged (" + in_.problem->describe() +
                                 "): the records before the damage are replayed");
        if (!prepare()) return out_;
        conformance::SessionOptions so;
        so.arena_pages = in_.header.pfn_space ? in_.header.pfn_space : 16384;
        so.profile_override = !options_.profile.empty() ? options_.profile : in_.header.profile;
        if (options_.profile.empty() && !in_.header.profile_json.empty()) {
            // The recording's profile was a file: it travels in the header.
            profile_file_ = std::filesystem::temp_directory_path() /
                            ("ndkct-replay-" + std::to_string(::getpid()) + ".json");
            std::ofstream(profile_file_) << in_.header.profile_json;
            so.profile_override = profile_file_.string();
        }
        so.capture = conformance::CaptureSettings{};  // never capture a replay
        try {
            session_ = std::make_unique<Session>(
                conformance::parse_provider_specs(options_.provider).at(0), so);
        } catch (const std::exception& error) {
            return refuse(std::string("cannot open the provider: ") + error.what());
        }
        out_.provider_name = session_->identity().Name ? session_->identity().Name : "";
        for (const Record& r : in_.records) {
            current_ = &r;
            if (!step(r)) break;
        }
        out_.verdict = session_->close_adapter();
        if (!profile_file_.empty()) std::filesystem::remove(profile_file_);
        for (auto& [cq, list] : queued_)
            if (!list.empty())
                difference(0, "NdkGetCqResults",
                           std::to_string(list.size()) +
                               " completion(s) the recording does not have came from the provider");
        return out_;
    }

  private:
    ReplayResult refuse(std::string why) {
        out_.refused = true;
        out_.refusal = std::move(why);
        return out_;
    }

    void difference(uint64_t record, const std::string& call, std::string what) {
        out_.differences.push_back({record, call, std::move(what)});
    }
    void difference(const std::string& what) {
        difference(current_ ? current_->index : 0, function_name(d_.function), what);
    }

    // A first pass: recorded final statuses and objects of pended requests, and whether every
    // request's bytes are in the trace.
    bool prepare() {
        Decoded d;
        std::string why;
        for (const Record& r : in_.records) {
            if (NDKT_KIND_CLASS(r.head.kind) == 0) continue;
            if (!decode(r, d, why)) continue;
            if (NDKT_KIND_CLASS(r.head.kind) == NDKT_KIND_CALLBACK) {
                if (d.function == NDKT_CB_REQUEST_COMPLETION ||
                    d.function == NDKT_CB_CREATE_COMPLETION) {
                    final_.try_emplace(d.request, d.status);
                    if (d.function == NDKT_CB_CREATE_COMPLETION)
                        made_.try_emplace(d.request, d.made.handle);
                    if (d.has_lam_out) lam_pages_.try_emplace(d.request, d.lam_out.pages);
                }
                continue;
            }
            if (r.head.flags & NDKT_FLAG_NESTED) continue;
            if (options_.require_bytes && moves_bytes(d) && sgl_bytes(d.sgl) > 0) {
                bool have =
                    d.source && d.source->resolved() && d.source->bytes.size() == d.source->length;
                if (!d.source || !d.source->resolved()) {
                    // The capture could not reach them (a region it does not know: the request
                    // is likely refused anyway); nothing to restore, and landings may then
                    // differ from the recording's without the provider being at fault.
                    landings_comparable_ = false;
                    out_.notes.push_back("record #" + std::to_string(r.index) + " (" +
                                         function_name(d.function) +
                                         "): the trace does not show the bytes it reads");
                    continue;
                }
                if (!have) {
                    refuse("record #" + std::to_string(r.index) + " (" + function_name(d.function) +
                           ") moves " + std::to_string(sgl_bytes(d.sgl)) +
                           " bytes the trace carries only the digest of: the replay cannot "
                           "restore them. Capture with the source bytes "
                           "(NDKCT_CAPTURE_BYTES=1, or NDKCAP_SOURCE_BYTES in the capture "
                           "library), or replay with --without-data");
                    return false;
                }
                for (const Piece p : d.source->pieces)
                    if (in_.header.pfn_space && p.pfn >= in_.header.pfn_space) {
                        refuse("record #" + std::to_string(r.index) +
                               " names a page beyond the trace's PFN space");
                        return false;
                    }
            }
        }
        return true;
    }

    template <typename T = void>
    T* obj(uint64_t handle) {
        auto it = objects_.find(handle);
        return it == objects_.end() ? nullptr : static_cast<T*>(it->second);
    }

    NTSTATUS recorded_final(const Decoded& d) const {
        if (d.status != STATUS_PENDING || !d.request) return d.status;
        auto it = final_.find(d.request);
        return it == final_.end() ? STATUS_PENDING : it->second;
    }

    // A request that pended in the recording is compared by its final status (from its
    // callback); a call without a completion routine (a post) by the status it returned.
    void compare(NTSTATUS recorded, NTSTATUS live) {
        if (!d_.has_outcome) return;  // the call never returned in the recording
        if (recorded == STATUS_PENDING && d_.request) return;  // its callback never came
        if (recorded != live)
            difference("recorded " + status_text(recorded) + ", replayed " + status_text(live));
    }

    template <typename T>
    void created(const conformance::Made<T>& made) {
        compare(recorded_final(d_), made.final_status);
        uint64_t handle = d_.status == STATUS_SUCCESS ? d_.made.handle : 0;
        if (d_.status == STATUS_PENDING)
            if (auto it = made_.find(d_.request); it != made_.end()) handle = it->second;
        if (handle && made.object) objects_[handle] = made.object;
    }

    // ---- Arguments, remapped ----
    // Kept alive in chains_: a provider may hold a registered chain until it is deregistered.
    const MDL* mdl_of(const MdlChainRecord& chain) {
        return rebuild_mdl_chain(chain, chains_.emplace_back(), [](uint64_t pfn) { return pfn; });
    }

    uint64_t logical_of(uint64_t recorded) const {
        auto it = logical_.find(recorded & ~uint64_t{PAGE_SIZE - 1});
        return it == logical_.end() ? recorded : it->second + (recorded & (PAGE_SIZE - 1));
    }

    uint32_t local_token_of(uint32_t recorded) const {
        auto it = local_tokens_.find(recorded);
        return it == local_tokens_.end() ? recorded : it->second;
    }
    uint32_t remote_token_of(uint32_t recorded) const {
        auto it = remote_tokens_.find(recorded);
        return it == remote_tokens_.end() ? recorded : it->second;
    }

    std::vector<NDK_SGE> sges_of(const std::vector<Sge>& sgl) {
        std::vector<NDK_SGE> out(sgl.size());
        for (size_t i = 0; i < sgl.size(); ++i) {
            bool privileged = privileged_.contains(sgl[i].token);
            out[i].LogicalAddress.QuadPart =
                static_cast<LONG64>(privileged ? logical_of(sgl[i].address) : sgl[i].address);
            out[i].Length = sgl[i].length;
            out[i].MemoryRegionToken = local_token_of(sgl[i].token);
        }
        return out;
    }

    // NDK_OP_FLAG_INLINE: the SGEs point at readable bytes (the recorded payload).
    std::vector<NDK_SGE> inline_sges() {
        auto& bytes = inline_buffers_.emplace_back(d_.inline_payload.bytes.begin(),
                                                   d_.inline_payload.bytes.end());
        std::vector<NDK_SGE> out(d_.sgl.size());
        size_t at = 0;
        for (size_t i = 0; i < d_.sgl.size(); ++i) {
            out[i].VirtualAddress = bytes.data() + std::min(at, bytes.size());
            out[i].Length = d_.sgl[i].length;
            out[i].MemoryRegionToken = local_token_of(d_.sgl[i].token);
            at += d_.sgl[i].length;
        }
        return out;
    }

    // What the request reads, into P's arena (the recorded pages: the arenas have one layout).
    void restore_source() {
        if (!d_.source || d_.source->bytes.size() != d_.source->length) return;
        size_t at = 0;
        for (const Piece p : d_.source->pieces) {
            if (p.pfn >= session_->arena().page_count() || p.offset + p.size > PAGE_SIZE) continue;
            std::memcpy(session_->arena().physical_page(p.pfn) + p.offset,
                        d_.source->bytes.data() + at, p.size);
            at += p.size;
        }
    }

    std::array<std::byte, 128> sockaddr_of(const Address& a, bool remap_port) const {
        std::array<std::byte, 128> raw{};
        std::memcpy(raw.data(), a.bytes.data(), std::min<size_t>(a.bytes.size(), raw.size()));
        if (remap_port) {
            auto* sa = reinterpret_cast<sockaddr*>(raw.data());
            uint16_t* port = sa->sa_family == AF_INET6
                                 ? &reinterpret_cast<sockaddr_in6*>(raw.data())->sin6_port
                                 : &reinterpret_cast<sockaddr_in*>(raw.data())->sin_port;
            if (auto it = ports_.find(ntohs(*port)); it != ports_.end()) *port = htons(it->second);
        }
        return raw;
    }

    std::span<const uint8_t> private_of() const {
        return d_.private_data.present ? d_.private_data.bytes : std::span<const uint8_t>{};
    }

    // ---- Completions ----
    void results(bool ex) {
        auto* cq = obj<NDK_CQ>(d_.object);
        if (!cq) return;
        auto& queue = queued_[cq];
        auto take = [&](const Result& want) {
            for (auto it = queue.begin(); it != queue.end(); ++it)
                if (reinterpret_cast<uint64_t>(it->RequestContext) == want.request_context &&
                    reinterpret_cast<uint64_t>(it->QPContext) == want.qp_context) {
                    NDK_RESULT_EX got = *it;
                    queue.erase(it);
                    return std::optional<NDK_RESULT_EX>(got);
                }
            return std::optional<NDK_RESULT_EX>();
        };
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        for (size_t index = 0; index < d_.results.size(); ++index) {
            const Result& want = d_.results[index];
            std::optional<NDK_RESULT_EX> got = take(want);
            while (!got && std::chrono::steady_clock::now() < deadline) {
                auto polled = session_->poll(cq, 64, ex);
                queue.insert(queue.end(), polled.begin(), polled.end());
                got = take(want);
                if (!got && polled.empty())
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            std::string which =
                "the completion of request context " + spec::hex(want.request_context);
            if (!got) {
                difference(which + " (recorded " + status_text(want.status) + ") did not come");
                continue;
            }
            if (got->Status != want.status)
                difference(which + ": recorded " + status_text(want.status) + ", replayed " +
                           status_text(got->Status));
            else if (ex && want.status == STATUS_SUCCESS && got->Type != want.type)
                difference(which + ": recorded Type " + spec::operation_type_text(want.type) +
                           ", replayed " + spec::operation_type_text(got->Type));
            else if (want.status == STATUS_SUCCESS &&
                     (want.type == NdkOperationTypeReceive || want.type == 0) &&
                     got->BytesTransferred != want.bytes_transferred &&
                     (got->Type == NdkOperationTypeReceive ||
                      got->Type == NdkOperationTypeReceiveAndInvalidate))
                difference(which + ": recorded " + std::to_string(want.bytes_transferred) +
                           " bytes transferred, replayed " + std::to_string(got->BytesTransferred));
            else if (want.status == STATUS_SUCCESS)
                compare_landings(index, which);
        }
        if (d_.results.empty()) {  // the recording found nothing: look once, keep what comes
            auto polled = session_->poll(cq, std::max<ULONG>(d_.max_results, 1), ex);
            queue.insert(queue.end(), polled.begin(), polled.end());
        }
    }

    // The bytes of the recorded result's landings (where its request's bytes went, spec/
    // TRACE.md "Data digests"), as the replayed provider left them at the same pages, against
    // the recording's digests. Only when every source was restored: otherwise the bytes sent
    // were not the recording's.
    void compare_landings(size_t index, const std::string& which) {
        if (!options_.require_bytes || !landings_comparable_) return;
        for (const Landing& l : d_.landings) {
            if (l.result_index != index || !l.data.resolved() || l.data.pieces.empty()) continue;
            std::vector<uint8_t> landed;
            landed.reserve(l.data.length);
            bool reachable = true;
            for (const Piece p : l.data.pieces) {
                if (p.pfn >= session_->arena().page_count() || p.offset + p.size > PAGE_SIZE) {
                    reachable = false;
                    break;
                }
                const auto* page =
                    reinterpret_cast<const uint8_t*>(session_->arena().physical_page(p.pfn));
                landed.insert(landed.end(), page + p.offset, page + p.offset + p.size);
            }
            if (!reachable || landed.size() != l.data.length) continue;
            uint64_t replayed = digest(landed);
            if (replayed == l.data.digest) continue;
            const Piece first = l.data.pieces[0];
            difference(which + ": the " + std::to_string(l.data.length) +
                       " bytes that landed differ from the recording's (from PFN " +
                       spec::hex(first.pfn) + " offset " + std::to_string(first.offset) +
                       "; digest recorded " + spec::hex(l.data.digest, 16) + ", replayed " +
                       spec::hex(replayed, 16) + ")");
        }
    }

    // ---- One record ----
    bool step(const Record& r) {
        std::string why;
        uint16_t cls = NDKT_KIND_CLASS(r.head.kind);
        if (cls == 0) {
            if (r.head.kind == NDKT_META_ADAPTER_CLOSE) {
                Body b(r);
                b.u64();
                if (b.u32() == 0) return false;  // the recording closes the adapter: so do we
            }
            return true;
        }
        if (!decode(r, d_, why)) {
            out_.notes.push_back("record #" + std::to_string(r.index) + " is malformed (" + why +
                                 "): the replay stops there");
            return false;
        }
        if (cls == NDKT_KIND_CALLBACK) {
            callback();
            return true;
        }
        if (r.head.flags & NDKT_FLAG_NESTED) {  // the provider's own call: not the consumer's
            ++out_.skipped;
            return true;
        }
        if (r.head.flags & NDKT_FLAG_IN_CALLBACK) ++out_.moved_out_of_callbacks;
        ++out_.calls;
        try {
            call();
        } catch (const std::exception& error) {
            difference(std::string("the replay of this call failed: ") + error.what());
        }
        return true;
    }

    void callback() {
        switch (d_.function) {
            case NDKT_CB_CONNECT_EVENT: {
                auto* listener = obj<NDK_LISTENER>(d_.object);
                NDK_CONNECTOR* c = listener ? session_->wait_connect_event(listener) : nullptr;
                if (!c)
                    difference(current_->index, "NdkConnectEventCallback",
                               "the recorded connect event did not come");
                else
                    objects_[d_.made.handle] = c;
                break;
            }
            case NDKT_CB_REQUEST_COMPLETION:
            case NDKT_CB_CLOSE_COMPLETION: {
                auto it = async_.find(d_.request);
                if (it == async_.end()) break;
                auto [function, object] = it->second;
                async_.erase(it);
                Done done;
                if (function == NDKT_FN_CLOSE)
                    done = session_->wait_close(object);
                else if (function == NDKT_FN_ACCEPT || function == NDKT_FN_ACCEPT_EX)
                    done = session_->wait_accept(static_cast<NDK_CONNECTOR*>(object));
                else
                    done = session_->wait_connect(static_cast<NDK_CONNECTOR*>(object));
                if (function != NDKT_FN_CLOSE && done.final_status != d_.status)
                    difference(current_->index, function_name(function),
                               "recorded " + status_text(d_.status) + ", replayed " +
                                   status_text(done.final_status));
                break;
            }
            default:
                break;
        }
    }

    void asynchronous(NTSTATUS status, void* object) {
        compare(d_.status == STATUS_PENDING ? STATUS_PENDING : d_.status,
                status == STATUS_PENDING ? STATUS_PENDING : status);
        if (status != STATUS_PENDING) return;
        if (d_.status == STATUS_PENDING && d_.request) {
            async_[d_.request] = {d_.function, object};
            return;
        }
        // P pended where the recording did not: wait now.
        Done done = d_.function == NDKT_FN_CLOSE ? session_->wait_close(object)
                    : (d_.function == NDKT_FN_ACCEPT || d_.function == NDKT_FN_ACCEPT_EX)
                        ? session_->wait_accept(static_cast<NDK_CONNECTOR*>(object))
                        : session_->wait_connect(static_cast<NDK_CONNECTOR*>(object));
        compare(d_.status, done.final_status);
    }

    void call() {
        Session& s = *session_;
        switch (d_.function) {
            case NDKT_FN_QUERY_EXTENSION: {
                GUID g;
                std::memcpy(&g, d_.guid, sizeof g);
                NDK_EXTENSION_INTERFACE ext{};
                if (void* o = obj(d_.object))
                    compare(d_.status, s.query_extension_interface(o, g, d_.version, &ext));
                break;
            }
            case NDKT_FN_QUERY_ADAPTER_INFO: {
                NDK_ADAPTER_INFO info{};
                ULONG size = d_.size_in;
                compare(d_.status, s.query_adapter_info(d_.has_buffer ? &info : nullptr,
                                                        d_.has_size ? &size : nullptr));
                break;
            }
            case NDKT_FN_CREATE_CQ:
                created(s.create_cq(d_.depth, d_.has_notification));
                break;
            case NDKT_FN_CREATE_PD:
                created(s.create_pd());
                break;
            case NDKT_FN_CREATE_SHARED_ENDPOINT: {
                auto raw = sockaddr_of(d_.address, false);
                created(s.create_shared_endpoint(
                    d_.address.present ? reinterpret_cast<const sockaddr*>(raw.data()) : nullptr,
                    d_.address.length));
                break;
            }
            case NDKT_FN_CREATE_CONNECTOR:
                created(s.create_connector());
                break;
            case NDKT_FN_CREATE_LISTENER:
                created(s.create_listener());
                break;
            case NDKT_FN_CREATE_MR:
                if (auto* pd = obj<NDK_PD>(d_.object)) created(s.create_mr(pd, d_.fast_register));
                break;
            case NDKT_FN_CREATE_MW:
                if (auto* pd = obj<NDK_PD>(d_.object)) created(s.create_mw(pd));
                break;
            case NDKT_FN_CREATE_SRQ:
                if (auto* pd = obj<NDK_PD>(d_.object))
                    created(
                        s.create_srq(pd, d_.depth, d_.max_sge, d_.threshold, d_.has_notification));
                break;
            case NDKT_FN_CREATE_QP:
                if (auto* pd = obj<NDK_PD>(d_.object))
                    created(s.create_qp(pd, obj<NDK_CQ>(d_.receive_cq),
                                        obj<NDK_CQ>(d_.initiator_cq),
                                        reinterpret_cast<void*>(d_.qp_context),
                                        {d_.receive_depth, d_.initiator_depth, d_.receive_sge,
                                         d_.initiator_sge, d_.inline_size}));
                break;
            case NDKT_FN_CREATE_QP_WITH_SRQ:
                if (auto* pd = obj<NDK_PD>(d_.object))
                    created(s.create_qp_with_srq(
                        pd, obj<NDK_CQ>(d_.receive_cq), obj<NDK_CQ>(d_.initiator_cq),
                        obj<NDK_SRQ>(d_.srq), reinterpret_cast<void*>(d_.qp_context),
                        {0, d_.initiator_depth, 0, d_.initiator_sge, d_.inline_size}));
                break;
            case NDKT_FN_BUILD_LAM: {
                const MDL* mdl = mdl_of(d_.mdl);
                conformance::LamResult lam = s.build_lam(
                    const_cast<MDL*>(mdl), d_.length, d_.size_in, d_.has_buffer, d_.request != 0);
                compare(recorded_final(d_), lam.done.final_status);
                std::vector<uint64_t> recorded = d_.lam_out.pages;
                if (d_.status == STATUS_PENDING)
                    if (auto it = lam_pages_.find(d_.request); it != lam_pages_.end())
                        recorded = it->second;
                auto live = lam.pages();
                for (size_t i = 0; i < recorded.size() && i < live.size(); ++i)
                    logical_[recorded[i] & ~uint64_t{PAGE_SIZE - 1}] =
                        static_cast<uint64_t>(live[i].QuadPart) & ~uint64_t{PAGE_SIZE - 1};
                lams_[d_.lam] = std::move(lam);
                break;
            }
            case NDKT_FN_RELEASE_LAM:
                if (auto it = lams_.find(d_.lam); it != lams_.end()) {
                    s.release_lam(it->second);
                    lams_.erase(it);
                }
                break;
            case NDKT_FN_CLOSE:
                if (void* o = obj(d_.object)) asynchronous(s.close_async(o), o);
                break;
            case NDKT_FN_RESIZE_CQ:
                if (auto* cq = obj<NDK_CQ>(d_.object))
                    compare(recorded_final(d_), s.resize_cq(cq, d_.depth).final_status);
                break;
            case NDKT_FN_ARM_CQ:
                if (auto* cq = obj<NDK_CQ>(d_.object)) s.arm_cq(cq, d_.type);
                break;
            case NDKT_FN_GET_CQ_RESULTS:
            case NDKT_FN_GET_CQ_RESULTS_EX:
                results(d_.function == NDKT_FN_GET_CQ_RESULTS_EX);
                break;
            case NDKT_FN_CONTROL_CQ_INTERRUPT_MODERATION:
                if (auto* cq = obj<NDK_CQ>(d_.object))
                    compare(d_.status,
                            s.control_cq_interrupt_moderation(cq, d_.interval, d_.count));
                break;
            case NDKT_FN_REGISTER_MR:
                if (auto* mr = obj<NDK_MR>(d_.object))
                    compare(recorded_final(d_), s.register_mr(mr, const_cast<MDL*>(mdl_of(d_.mdl)),
                                                              d_.length, d_.mr_flags)
                                                    .final_status);
                break;
            case NDKT_FN_DEREGISTER_MR:
                if (auto* mr = obj<NDK_MR>(d_.object))
                    compare(recorded_final(d_), s.deregister_mr(mr).final_status);
                break;
            case NDKT_FN_INITIALIZE_FAST_REGISTER_MR:
                if (auto* mr = obj<NDK_MR>(d_.object))
                    compare(recorded_final(d_),
                            s.initialize_fast_register_mr(mr, d_.page_count, d_.remote_access)
                                .final_status);
                break;
            case NDKT_FN_GET_LOCAL_TOKEN_FROM_MR:
                if (auto* mr = obj<NDK_MR>(d_.object)) local_tokens_[d_.token] = s.local_token(mr);
                break;
            case NDKT_FN_GET_REMOTE_TOKEN_FROM_MR:
                if (auto* mr = obj<NDK_MR>(d_.object))
                    remote_tokens_[d_.token] = s.remote_token(mr);
                break;
            case NDKT_FN_GET_REMOTE_TOKEN_FROM_MW:
                if (auto* mw = obj<NDK_MW>(d_.object))
                    remote_tokens_[d_.token] = s.remote_token(mw);
                break;
            case NDKT_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN:
                if (auto* pd = obj<NDK_PD>(d_.object)) {
                    uint32_t live = s.privileged_token(pd);
                    local_tokens_[d_.token] = live;
                    privileged_.insert(d_.token);
                }
                break;
            case NDKT_FN_MODIFY_SRQ:
                if (auto* srq = obj<NDK_SRQ>(d_.object))
                    compare(recorded_final(d_),
                            s.modify_srq(srq, d_.depth, d_.threshold).final_status);
                break;
            case NDKT_FN_SRQ_RECEIVE:
                if (auto* srq = obj<NDK_SRQ>(d_.object)) {
                    auto sgl = sges_of(d_.sgl);
                    compare(d_.status,
                            s.srq_receive(srq, reinterpret_cast<void*>(d_.context), sgl));
                }
                break;
            case NDKT_FN_FLUSH:
                if (auto* qp = obj<NDK_QP>(d_.object)) s.flush(qp);
                break;
            case NDKT_FN_RECEIVE:
                if (auto* qp = obj<NDK_QP>(d_.object)) {
                    auto sgl = sges_of(d_.sgl);
                    compare(d_.status, s.receive(qp, reinterpret_cast<void*>(d_.context), sgl));
                }
                break;
            case NDKT_FN_SEND:
            case NDKT_FN_SEND_AND_INVALIDATE:
            case NDKT_FN_WRITE:
            case NDKT_FN_READ:
                if (auto* qp = obj<NDK_QP>(d_.object)) {
                    bool inline_data =
                        (d_.op_flags & NDK_OP_FLAG_INLINE) && d_.function != NDKT_FN_READ;
                    auto sgl = inline_data ? inline_sges() : sges_of(d_.sgl);
                    restore_source();
                    void* ctx = reinterpret_cast<void*>(d_.context);
                    NTSTATUS st;
                    if (d_.function == NDKT_FN_SEND)
                        st = s.send(qp, ctx, sgl, d_.op_flags);
                    else if (d_.function == NDKT_FN_SEND_AND_INVALIDATE)
                        st = s.send_and_invalidate(qp, ctx, sgl, d_.op_flags,
                                                   remote_token_of(d_.remote_token));
                    else if (d_.function == NDKT_FN_WRITE)
                        st = s.write(qp, ctx, sgl, d_.remote_address,
                                     remote_token_of(d_.remote_token), d_.op_flags);
                    else
                        st = s.read(qp, ctx, sgl, d_.remote_address,
                                    remote_token_of(d_.remote_token), d_.op_flags);
                    compare(d_.status, st);
                }
                break;
            case NDKT_FN_BIND:
                if (auto* qp = obj<NDK_QP>(d_.object))
                    compare(d_.status,
                            s.bind(qp, reinterpret_cast<void*>(d_.context), obj<NDK_MR>(d_.mr),
                                   obj<NDK_MW>(d_.mw), d_.virtual_address, d_.length, d_.op_flags));
                break;
            case NDKT_FN_FAST_REGISTER:
                if (auto* qp = obj<NDK_QP>(d_.object)) {
                    std::vector<NDK_LOGICAL_ADDRESS> pages(d_.pages.size());
                    for (size_t i = 0; i < pages.size(); ++i)
                        pages[i].QuadPart = static_cast<LONG64>(logical_of(d_.pages[i]));
                    compare(d_.status, s.fast_register(qp, reinterpret_cast<void*>(d_.context),
                                                       obj<NDK_MR>(d_.mr), pages, d_.fbo, d_.length,
                                                       d_.base_virtual_address, d_.op_flags));
                }
                break;
            case NDKT_FN_INVALIDATE:
                if (auto* qp = obj<NDK_QP>(d_.object))
                    compare(d_.status, s.invalidate(qp, reinterpret_cast<void*>(d_.context),
                                                    obj(d_.target), d_.op_flags));
                break;
            case NDKT_FN_GET_LOCAL_ADDRESS:
                if (void* o = obj(d_.object)) {
                    auto a = s.local_address(o, d_.length_in);
                    compare(d_.status, a.status);
                    // A listener's port (the provider picks it for port 0): later connects to the
                    // recorded port go to this one.
                    if (a.status == STATUS_SUCCESS && d_.status == STATUS_SUCCESS &&
                        static_cast<const NDK_OBJECT_HEADER*>(o)->ObjectType ==
                            NdkObjectTypeListener) {
                        auto raw = sockaddr_of(d_.address_out, false);
                        auto* sa = reinterpret_cast<const sockaddr*>(raw.data());
                        uint16_t recorded =
                            ntohs(sa->sa_family == AF_INET6
                                      ? reinterpret_cast<const sockaddr_in6*>(sa)->sin6_port
                                      : reinterpret_cast<const sockaddr_in*>(sa)->sin_port);
                        ports_[recorded] = a.port();
                    }
                }
                break;
            case NDKT_FN_GET_PEER_ADDRESS:
                if (auto* c = obj<NDK_CONNECTOR>(d_.object))
                    compare(d_.status, s.peer_address(c, d_.length_in).status);
                break;
            case NDKT_FN_CONNECT:
                if (auto* c = obj<NDK_CONNECTOR>(d_.object)) {
                    auto to = sockaddr_of(d_.destination, true);
                    auto from = sockaddr_of(d_.source_address, false);
                    NTSTATUS st = s.connect_from_async(
                        c, obj<NDK_QP>(d_.qp),
                        d_.source_address.present ? reinterpret_cast<const sockaddr*>(from.data())
                                                  : nullptr,
                        d_.source_address.length, reinterpret_cast<const sockaddr*>(to.data()),
                        d_.destination.length, d_.inbound_read_limit, d_.outbound_read_limit,
                        private_of());
                    asynchronous(st, c);
                }
                break;
            case NDKT_FN_CONNECT_WITH_SHARED_ENDPOINT:
                if (auto* c = obj<NDK_CONNECTOR>(d_.object)) {
                    auto to = sockaddr_of(d_.destination, true);
                    NTSTATUS st = s.connect_with_shared_endpoint_async(
                        c, obj<NDK_QP>(d_.qp), obj<NDK_SHARED_ENDPOINT>(d_.shared_endpoint),
                        reinterpret_cast<const sockaddr*>(to.data()), d_.destination.length,
                        d_.inbound_read_limit, d_.outbound_read_limit, private_of());
                    asynchronous(st, c);
                }
                break;
            case NDKT_FN_COMPLETE_CONNECT:
                if (auto* c = obj<NDK_CONNECTOR>(d_.object))
                    compare(recorded_final(d_), s.complete_connect(c).final_status);
                break;
            case NDKT_FN_COMPLETE_CONNECT_EX:
                if (auto* c = obj<NDK_CONNECTOR>(d_.object))
                    compare(recorded_final(d_), s.complete_connect_ex(c).final_status);
                break;
            case NDKT_FN_ACCEPT:
            case NDKT_FN_ACCEPT_EX:
                if (auto* c = obj<NDK_CONNECTOR>(d_.object)) {
                    NTSTATUS st =
                        d_.function == NDKT_FN_ACCEPT
                            ? s.accept_async(c, obj<NDK_QP>(d_.qp), d_.inbound_read_limit,
                                             d_.outbound_read_limit, private_of())
                            : s.accept_ex_async(c, obj<NDK_QP>(d_.qp), d_.inbound_read_limit,
                                                d_.outbound_read_limit, private_of());
                    asynchronous(st, c);
                }
                break;
            case NDKT_FN_REJECT:
                if (auto* c = obj<NDK_CONNECTOR>(d_.object))
                    compare(d_.status, s.reject(c, private_of()));
                break;
            case NDKT_FN_GET_CONNECTION_DATA:
                if (auto* c = obj<NDK_CONNECTOR>(d_.object)) {
                    auto got = s.get_connection_data(c, d_.length_in, d_.has_buffer,
                                                     d_.limit_pointers == 3);
                    compare(d_.status, got.status);
                    if (got.status == d_.status && got.length != d_.length_out)
                        difference("recorded private data length " + std::to_string(d_.length_out) +
                                   ", replayed " + std::to_string(got.length));
                    if (got.status == STATUS_SUCCESS && d_.status == STATUS_SUCCESS &&
                        d_.limit_pointers == 3 &&
                        (got.inbound_read_limit != d_.ird_out ||
                         got.outbound_read_limit != d_.ord_out))
                        difference("recorded read limits " + std::to_string(d_.ird_out) + "/" +
                                   std::to_string(d_.ord_out) + ", replayed " +
                                   std::to_string(got.inbound_read_limit) + "/" +
                                   std::to_string(got.outbound_read_limit));
                }
                break;
            case NDKT_FN_DISCONNECT:
                if (auto* c = obj<NDK_CONNECTOR>(d_.object))
                    compare(recorded_final(d_), s.disconnect(c).final_status);
                break;
            case NDKT_FN_LISTEN:
                if (auto* l = obj<NDK_LISTENER>(d_.object)) {
                    auto raw = sockaddr_of(d_.address, false);
                    compare(
                        recorded_final(d_),
                        s.listen(l,
                                 d_.address.present ? reinterpret_cast<const sockaddr*>(raw.data())
                                                    : nullptr,
                                 d_.address.length)
                            .final_status);
                }
                break;
            case NDKT_FN_CONTROL_CONNECT_EVENTS:
                if (auto* l = obj<NDK_LISTENER>(d_.object)) s.control_connect_events(l, d_.pause);
                break;
        }
    }

    const Loaded& in_;
    ReplayOptions options_;
    std::filesystem::path profile_file_;
    ReplayResult out_;
    bool landings_comparable_ = true;  // every source the trace names was restored
    std::unique_ptr<Session> session_;
    const Record* current_ = nullptr;
    Decoded d_;
    std::unordered_map<uint64_t, NTSTATUS> final_;
    std::unordered_map<uint64_t, uint64_t> made_;
    std::unordered_map<uint64_t, std::vector<uint64_t>> lam_pages_;
    std::unordered_map<uint64_t, void*> objects_;
    std::unordered_map<uint32_t, uint32_t> local_tokens_, remote_tokens_;
    std::set<uint32_t> privileged_;
    std::unordered_map<uint64_t, uint64_t> logical_;
    std::unordered_map<uint16_t, uint16_t> ports_;
    std::unordered_map<uint64_t, conformance::LamResult> lams_;
    std::deque<std::vector<uint64_t>> chains_;
    std::deque<std::vector<uint8_t>> inline_buffers_;
    std::unordered_map<NDK_CQ*, std::deque<NDK_RESULT_EX>> queued_;
    std::unordered_map<uint64_t, std::pair<uint32_t, void*>> async_;
};

}  // namespace

ReplayResult replay_file(const std::string& path, const ReplayOptions& options) {
    Loaded loaded = load(path);
    Replayer r(loaded, options);
    return r.run();
}

int replay_main(int argc, char** argv) {
    ReplayOptions options;
    std::string path, json_path;
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--provider" && i + 1 < argc)
            options.provider = argv[++i];
        else if (a == "--profile" && i + 1 < argc)
            options.profile = argv[++i];
        else if (a == "--json" && i + 1 < argc)
            json_path = argv[++i];
        else if (a == "--without-data")
            options.require_bytes = false;
        else if (a.starts_with("--") || !path.empty()) {
            std::cerr << "ndkct-trace replay: unknown argument " << a << "\n";
            return 2;
        } else
            path = a;
    }
    if (path.empty() || options.provider.empty()) {
        std::cerr << "usage: ndkct-trace replay FILE --provider SPEC [--profile P] "
                     "[--without-data] [--json OUT]\n";
        return 2;
    }
    ReplayResult r = replay_file(path, options);
    nlohmann::json j;
    j["file"] = path;
    j["provider"] = options.provider;
    j["provider_name"] = r.provider_name;
    j["refused"] = r.refused;
    j["refusal"] = r.refusal;
    j["calls"] = r.calls;
    j["skipped"] = r.skipped;
    j["moved_out_of_callbacks"] = r.moved_out_of_callbacks;
    j["notes"] = r.notes;
    nlohmann::json diffs = nlohmann::json::array();
    for (const auto& d : r.differences)
        diffs.push_back({{"record", d.record}, {"call", d.call}, {"what", d.what}});
    j["differences"] = diffs;
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& v : r.verdict.violations)
        findings.push_back({{"rules", v.rules}, {"message", v.message}, {"warning", v.warning}});
    j["findings"] = findings;
    if (!json_path.empty()) {
        std::ofstream out(json_path);
        out << j.dump() << "\n";
    }
    if (r.refused) {
        std::cerr << "ndkct-trace replay: " << path << ": refused: " << r.refusal << "\n";
        return 2;
    }
    std::cout << path << ": replayed " << r.calls << " calls against " << options.provider << " ("
              << r.provider_name << ")";
    if (r.skipped) std::cout << ", skipped " << r.skipped << " made by the provider itself";
    if (r.moved_out_of_callbacks)
        std::cout << ", " << r.moved_out_of_callbacks << " made outside the callbacks they were in";
    std::cout << "\n";
    for (const auto& n : r.notes)
        std::cout << "  note: " << n << "\n";
    for (const auto& d : r.differences)
        std::cout << "  differs at record #" << d.record << " (" << d.call << "): " << d.what
                  << "\n";
    for (const auto& v : r.verdict.violations)
        std::cout << "  " << (v.warning ? "warning" : "oracle") << ": " << v.describe() << "\n";
    bool failed = !r.differences.empty() || !r.verdict.ok();
    std::cout << (failed ? "DIFFERS" : "SAME") << "\n";
    return failed ? 1 : 0;
}

}  // namespace ndkct::trace
