// A recorded NDK call trace: a mixed workload run in simulate mode (the model is the provider),
// kept as the calls and the outcomes observed, then replayed through a fresh check-mode model that
// judges every outcome. Shared by the oracle benchmark and the refmodel tests (a simulated run
// must check clean: the model agrees with itself).
//
// The workload is data-idempotent: sources are filled once and never written, and every transfer
// copies source offset o to target offset o, so the arena after recording holds, at every target,
// the bytes every completion of the trace expects there. Replaying over the same arena therefore
// checks real landings without re-enacting the DMA.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "ndkct/model/model.hpp"
#include "ndkct/model/translate.hpp"
#include "ndkct/platform/arena.hpp"
#include "ndkct/platform/mdl.hpp"

namespace ndkct::model::trace {

struct Step {
    enum class Kind : uint8_t { apply, complete, event } kind = Kind::apply;
    Call call = calls::CreatePd{0};    // apply
    Observed observed;                 // apply: the outcome; complete: the callback's outputs
    size_t origin = 0;                 // complete: the apply step that returned STATUS_PENDING
    NTSTATUS status = STATUS_SUCCESS;  // complete
    Event event{};                     // event (check mode reports it with observe_event)
};

struct Trace {
    std::vector<Step> steps;
    size_t calls = 0;        // apply steps
    size_t completions = 0;  // CQ entries returned by NdkGetCqResultsEx
    std::vector<ObjectId> qps;
    // The setup (objects, the many live ones included) is steps [0, setup_steps), setup_calls of
    // the calls; the mixed workload follows.
    size_t setup_steps = 0, setup_calls = 0;
};

class Recorder {
  public:
    // `live_mrs` / `live_lams` / `live_qps`: extra registered MRs (each with its own tokens), LAMs
    // and QPs (on the workload's two CQs, with their own QPContexts) created during setup and
    // left open, so that lookups over many live objects are measured.
    Recorder(platform::Arena& arena, Readings readings, uint64_t seed, size_t live_mrs = 0,
             size_t live_lams = 0, size_t live_qps = 0)
        : arena_(arena),
          live_mrs_(live_mrs),
          live_lams_(live_lams),
          live_qps_(live_qps),
          model_(std::move(readings),
                 {static_cast<std::byte*>(arena.host_memory().PhysicalBase),
                  arena.host_memory().PageCount},
                 Mode::simulate),
          rng_(seed) {
        adapter_ = model_.open_adapter();
    }

    // Records setup, then `operations` data-path operations (writes, reads, sends, fast
    // registrations with a write through them and an invalidate), draining the CQs as it goes.
    Trace record(size_t operations) {
        setup();
        trace_.setup_steps = trace_.steps.size();
        trace_.setup_calls = trace_.calls;
        for (size_t i = 0; i < operations; ++i) {
            switch (rng_() % 8) {
                case 0:
                case 1:
                case 2:
                    write();
                    break;
                case 3:
                case 4:
                    read();
                    break;
                case 5:
                case 6:
                    send();
                    break;
                case 7:
                    fast_register_cycle();
                    break;
            }
            if (i % 4 == 3) drain();
        }
        drain();
        trace_.qps = {qp_a_, qp_b_};
        return std::move(trace_);
    }

  private:
    static constexpr uint32_t kBytes = 4 * PAGE_SIZE;  // each buffer
    static constexpr uint64_t kFrBase = 0x40000000;

    Applied apply(const Call& call, Observed observed = {}) {
        Applied a = model_.apply(call, observed);
        if (!a.verdict.ok())
            throw std::logic_error("recording: " + show(call) + ": " + a.verdict.describe());
        Step s;
        s.kind = Step::Kind::apply;
        s.call = call;
        s.observed = std::move(observed);
        trace_.steps.push_back(std::move(s));
        ++trace_.calls;
        if (a.pending) origin_[a.pending] = trace_.steps.size() - 1;
        follow_events();
        return a;
    }
    // Applies a call that may pend: half the time it pends and completes at once.
    Applied maybe_pending(const Call& call, Observed outputs = {}) {
        if (rng_() % 2) return apply(call, outputs);
        Observed p;
        p.status = STATUS_PENDING;
        Applied a = apply(call, p);
        complete(a.pending, STATUS_SUCCESS, outputs);
        a.created = a.created;
        return a;
    }
    void complete(uint64_t pending, NTSTATUS status, Observed outputs = {}) {
        Applied done = model_.complete(pending, status, outputs);
        if (!done.verdict.ok())
            throw std::logic_error("recording: completion: " + done.verdict.describe());
        Step s;
        s.kind = Step::Kind::complete;
        s.origin = origin_.at(pending);
        s.status = status;
        s.observed = std::move(outputs);
        trace_.steps.push_back(std::move(s));
        follow_events();
    }
    // Simulate mode: the model's events. Connect requests become event steps (check mode reports
    // them); request completions are completed (closes, connects, accepts).
    void follow_events() {
        for (const Event& e : model_.take_events()) {
            if (e.kind == Event::Kind::connect_request) {
                Step s;
                s.kind = Step::Kind::event;
                s.event = {Event::Kind::connect_request, e.object};
                trace_.steps.push_back(s);
                last_connect_event_ = e.created;
            } else if (e.kind == Event::Kind::request_complete) {
                deferred_completions_.push_back({e.pending, e.status});
            }
        }
        while (!deferred_completions_.empty() && !completing_) {
            completing_ = true;
            auto [pending, status] = deferred_completions_.front();
            deferred_completions_.erase(deferred_completions_.begin());
            complete(pending, status);
            completing_ = false;
        }
    }
    ObjectId create(const Call& call) { return maybe_pending(call).created; }
    uint32_t token() { return next_token_++; }

    struct Reg {
        ObjectId mr;
        uint32_t local, remote;
        uint64_t va;
    };
    Reg reg(const platform::LockedBuffer& b, uint32_t flags) {
        Reg r;
        r.mr = create(calls::CreateMr{pd_, false});
        platform::MdlChain chain = platform::describe(b, 0, kBytes);
        MdlView view = view_mdl(chain.head(), kBytes);
        r.va = view.virtual_address;
        maybe_pending(calls::RegisterMr{r.mr, view, kBytes, flags});
        Observed t;
        t.value = r.local = token();
        apply(calls::GetLocalTokenFromMr{r.mr}, t);
        t.value = r.remote = token();
        apply(calls::GetRemoteTokenFromMr{r.mr}, t);
        return r;
    }

    void setup() {
        pd_ = create(calls::CreatePd{adapter_});
        for (auto* b : {&src_, &dst_, &sink_, &rbuf_, &fbuf_})
            *b = arena_.allocate(kBytes);
        platform::MdlChain chain = platform::describe(fbuf_, 0, kBytes);
        MdlView view = view_mdl(chain.head(), kBytes);
        // Many live objects, created first so that every lookup meets them: registrations of the
        // source buffer (each with its own tokens) and mappings of fbuf (each at its own logical
        // addresses), all left open.
        for (size_t i = 0; i < live_mrs_; ++i)
            reg(src_, 0);
        for (size_t i = 0; i < live_lams_; ++i) {
            Observed more;
            for (PFN_NUMBER pfn : view.pfns)
                more.lam_pages.push_back((uint64_t{2 + i} << 40) + pfn * PAGE_SIZE);
            more.size_out =
                static_cast<uint32_t>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(more.lam_pages.size()));
            more.fbo_out = 0;
            maybe_pending(calls::BuildLam{adapter_, view, kBytes, true, true, 4096}, more);
        }
        cq_a_ = create(calls::CreateCq{adapter_, 4096});
        cq_b_ = create(calls::CreateCq{adapter_, 4096});
        qp_a_ = create(calls::CreateQp{pd_, cq_a_, cq_a_, 0xA, 1024, 1024, 4, 4, 128});
        qp_b_ = create(calls::CreateQp{pd_, cq_b_, cq_b_, 0xB, 1024, 1024, 4, 4, 128});
        for (size_t i = 0; i < live_qps_; ++i) {
            ObjectId cq = i % 2 ? cq_b_ : cq_a_;
            create(calls::CreateQp{pd_, cq, cq, 0x10000 + i, 16, 16, 1, 1, 0});
        }
        // Connection: listener on B's side, connector for A (as the reference provider does).
        SocketAddress at;
        at.present = true;
        at.family = 2;
        at.port = 4791;
        at.address = {127, 0, 0, 1};
        at.length = 16;
        SocketAddress from = at;
        from.port = 4792;
        ObjectId listener = create(calls::CreateListener{adapter_});
        maybe_pending(calls::Listen{listener, at});
        ObjectId active = create(calls::CreateConnector{adapter_});
        Observed p;
        p.status = STATUS_PENDING;
        apply(calls::Connect{active, qp_a_, from, at, 4, 4, 0}, p);  // completes at Accept
        ObjectId passive = last_connect_event_;
        apply(calls::Accept{passive, qp_b_, 4, 4, 0}, p);  // completes at CompleteConnect
        apply(calls::CompleteConnect{active});

        auto bytes = src_.bytes();
        for (size_t i = 0; i < bytes.size(); ++i)
            bytes[i] = std::byte(static_cast<uint8_t>(i * 31 + 7));
        src_a_ = reg(src_, 0xF);  // read source for B's reads of A... and A's local source
        dst_b_ = reg(dst_, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
        sink_a_ = reg(sink_, NDK_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_MR_FLAG_RDMA_READ_SINK);
        rbuf_b_ = reg(rbuf_, NDK_MR_FLAG_ALLOW_LOCAL_WRITE);
        // A LAM over fbuf for fast registrations on B's side.
        Observed lam;
        for (PFN_NUMBER pfn : view.pfns)
            lam.lam_pages.push_back((uint64_t{1} << 40) + pfn * PAGE_SIZE);
        lam.size_out =
            static_cast<uint32_t>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(lam.lam_pages.size()));
        lam.fbo_out = 0;
        lam_pages_ = lam.lam_pages;
        maybe_pending(calls::BuildLam{adapter_, view, kBytes, true, true, 4096}, lam);
        fr_mr_ = create(calls::CreateMr{pd_, true});
        maybe_pending(calls::InitializeFastRegisterMr{fr_mr_, 4, true});
    }

    // A span [o, o + n) inside one buffer, at most `max` bytes.
    std::pair<uint32_t, uint32_t> span(uint32_t max = 2 * PAGE_SIZE) {
        uint32_t n = 1 + static_cast<uint32_t>(rng_() % max);
        uint32_t o = static_cast<uint32_t>(rng_() % (kBytes - n + 1));
        return {o, n};
    }
    uint32_t flags() { return rng_() % 4 == 0 ? NDK_OP_FLAG_SILENT_SUCCESS : 0; }

    void write() {
        auto [o, n] = span();
        apply(calls::Write{qp_a_,
                           ctx_++,
                           {{src_a_.va + o, n, src_a_.local}},
                           dst_b_.va + o,
                           dst_b_.remote,
                           flags(),
                           {}});
    }
    void read() {
        auto [o, n] = span();
        apply(calls::Read{qp_a_,
                          ctx_++,
                          {{sink_a_.va + o, n, sink_a_.local}},
                          src_a_.va + o,
                          src_a_.remote,
                          flags()});
    }
    void send() {
        auto [o, n] = span(1024);
        apply(calls::Receive{qp_b_, ctx_++, {{rbuf_b_.va + o, n, rbuf_b_.local}}});
        apply(calls::Send{qp_a_, ctx_++, {{src_a_.va + o, n, src_a_.local}}, flags(), {}});
    }
    void fast_register_cycle() {
        apply(calls::FastRegister{qp_b_, ctx_++, fr_mr_, lam_pages_, 0, kBytes, kFrBase,
                                  NDK_OP_FLAG_ALLOW_REMOTE_WRITE});
        Observed t;
        t.value = token();
        apply(calls::GetRemoteTokenFromMr{fr_mr_}, t);
        auto [o, n] = span();
        apply(calls::Write{
            qp_a_, ctx_++, {{src_a_.va + o, n, src_a_.local}}, kFrBase + o, t.value, flags(), {}});
        apply(calls::Invalidate{qp_b_, ctx_++, fr_mr_, flags()});
    }

    void drain() {
        for (ObjectId cq : {cq_a_, cq_b_}) {
            const auto& entries = model_.cq_entries(cq);
            if (entries.empty()) continue;
            Observed o;
            for (const Completion& c : entries) {
                NDK_RESULT_EX r{};
                r.Status = c.outcome == Completion::Outcome::success ? STATUS_SUCCESS : c.status;
                r.BytesTransferred = c.bytes_transferred;
                r.QPContext = pointer_of(c.qp_context);
                r.RequestContext = pointer_of(c.request_context);
                r.Type = c.type;
                r.TypeSpecificCompletionOutput = c.invalidated ? c.invalidated_token : 0;
                o.results.push_back(r);
            }
            o.value = static_cast<uint32_t>(o.results.size());
            trace_.completions += o.results.size();
            // NdkGetCqResultsEx is 1.2 and later (VER-11).
            apply(calls::GetCqResults{cq, 4096, model_.readings().version_at_least(1, 2)}, o);
        }
    }

    platform::Arena& arena_;
    size_t live_mrs_ = 0, live_lams_ = 0, live_qps_ = 0;
    Model model_;
    std::mt19937_64 rng_;
    Trace trace_;
    std::map<uint64_t, size_t> origin_;
    std::vector<std::pair<uint64_t, NTSTATUS>> deferred_completions_;
    bool completing_ = false;
    ObjectId adapter_ = 0, pd_ = 0, cq_a_ = 0, cq_b_ = 0, qp_a_ = 0, qp_b_ = 0, fr_mr_ = 0;
    ObjectId last_connect_event_ = 0;
    platform::LockedBuffer src_, dst_, sink_, rbuf_, fbuf_;
    Reg src_a_{}, dst_b_{}, sink_a_{}, rbuf_b_{};
    std::vector<uint64_t> lam_pages_;
    uint32_t next_token_ = 0x5000;
    Context ctx_ = 0x1000;

  public:
    // The buffers must outlive replays over the same arena (their pages hold the landings).
    Model& model() { return model_; }
};

struct Replayed {
    Verdict verdict;
    size_t steps = 0;
};

// Replays steps [begin, end) of a trace through `check` (a fresh model in Mode::check over the
// same arena; its first open_adapter() must give the recording's adapter id), in pieces: one
// Replayer carries the pending requests from one piece to the next. Every verdict is merged.
class Replayer {
  public:
    Replayer(const Trace& trace, Model& check)
        : trace_(trace), check_(check), pending_of_(trace.steps.size(), 0) {}
    Replayed run(size_t begin, size_t end);

  private:
    const Trace& trace_;
    Model& check_;
    std::vector<uint64_t> pending_of_;
};

inline Replayed replay(const Trace& trace, Model& check) {
    return Replayer(trace, check).run(0, trace.steps.size());
}

inline Replayed Replayer::run(size_t begin, size_t end) {
    const Trace& trace = trace_;
    Model& check = check_;
    std::vector<uint64_t>& pending_of = pending_of_;
    Replayed out;
    for (size_t i = begin; i < end; ++i) {
        const Step& s = trace.steps[i];
        switch (s.kind) {
            case Step::Kind::apply: {
                Applied a = check.apply(s.call, s.observed);
                pending_of[i] = a.pending;
                if (!a.verdict.clean()) out.verdict.merge(std::move(a.verdict));
                break;
            }
            case Step::Kind::complete: {
                Applied a = check.complete(pending_of[s.origin], s.status, s.observed);
                if (!a.verdict.clean()) out.verdict.merge(std::move(a.verdict));
                break;
            }
            case Step::Kind::event: {
                Applied a = check.observe_event(s.event);
                if (!a.verdict.clean()) out.verdict.merge(std::move(a.verdict));
                break;
            }
        }
        ++out.steps;
    }
    return out;
}

}  // namespace ndkct::model::trace
