// Node B's agent: one connection, one adapter, every NDK call A routes here made on B's provider.
#include "agent.hpp"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "mirror.hpp"
#include "ndkct/platform/arena.hpp"
#include "wire.hpp"

namespace ndkct::twonode {

namespace {

// Every NDK object starts with its header and its dispatch table, whose first entry closes it.
struct AnyObject {
    NDK_OBJECT_HEADER Header;
    NDK_FN_CLOSE_OBJECT* const* Dispatch;
};

class Agent;

// The context of one callback B's provider will make: A's context value and what it is for.
struct Context {
    Agent* agent = nullptr;
    uint64_t a_context = 0;
    uint64_t handle = 0;  // closes: the object; LAMs: the LAM
    Op op = Op::hello;
};

struct Lam {
    std::vector<std::byte> storage;
    WireMdls mdls;
};

class Agent {
  public:
    Agent(int fd, const AgentOptions& options, ProviderOpener opener)
        : fd_(fd), options_(options), opener_(opener) {}
    ~Agent() { shut_down(); }

    int run();

    // ---- Callbacks (provider threads) ----
    void event(Event kind, uint64_t a_context, const Writer& w) {
        std::lock_guard lock(write_mutex_);
        if (broken_) return;
        try {
            send_frame(fd_, FrameKind::event, static_cast<uint16_t>(kind), a_context,
                       const_cast<Writer&>(w).buffer());
        } catch (const WireError&) {
            broken_ = true;
        }
    }
    uint64_t adopt(void* object) {
        std::lock_guard lock(objects_mutex_);
        uint64_t h = next_handle_++;
        objects_[h] = object;
        return h;
    }
    void forget(uint64_t handle) {
        std::lock_guard lock(objects_mutex_);
        objects_.erase(handle);
    }
    Lam* lam(uint64_t handle) {
        std::lock_guard lock(objects_mutex_);
        auto it = lams_.find(handle);
        return it == lams_.end() ? nullptr : it->second.get();
    }

  private:
    template <typename T = void>
    T* object(uint64_t handle) {
        std::lock_guard lock(objects_mutex_);
        auto it = objects_.find(handle);
        if (it == objects_.end())
            throw WireError("no object with handle " + std::to_string(handle) + " on node B");
        return static_cast<T*>(it->second);
    }
    template <typename T>
    T* optional_object(uint64_t handle) {
        return handle ? object<T>(handle) : nullptr;
    }
    Context* context(uint64_t a_context, Op op, uint64_t handle = 0) {
        std::lock_guard lock(objects_mutex_);
        contexts_.push_back(std::make_unique<Context>());
        auto* c = contexts_.back().get();
        c->agent = this;
        c->a_context = a_context;
        c->op = op;
        c->handle = handle;
        return c;
    }
    // A reply starts with 1 and the outputs, or 0 and why B could not do the request.
    void reply(uint64_t seq, bool ok, const std::vector<uint8_t>& payload) {
        std::vector<uint8_t> all;
        all.reserve(payload.size() + 1);
        all.push_back(ok ? 1 : 0);
        all.insert(all.end(), payload.begin(), payload.end());
        std::lock_guard lock(write_mutex_);
        send_frame(fd_, FrameKind::reply, 1, seq, all);
    }
    void handle(const Frame& frame);
    void execute(Op op, Reader& r, Writer& w);
    void hello(Reader& r, Writer& w);
    void shut_down();
    void fault(Fault kind, uint32_t millis);

    int fd_;
    AgentOptions options_;
    ProviderOpener opener_;
    std::mutex write_mutex_;
    bool broken_ = false;
    std::unique_ptr<platform::Arena> arena_;
    std::unique_ptr<Mirror> mirror_;
    const NDKCT_PROVIDER_ENTRY_POINTS* entry_ = nullptr;
    NDK_ADAPTER* adapter_ = nullptr;
    std::mutex objects_mutex_;
    std::unordered_map<uint64_t, void*> objects_;
    std::unordered_map<uint64_t, std::unique_ptr<Lam>> lams_;
    uint64_t next_handle_ = 1;
    std::deque<std::unique_ptr<Context>> contexts_;  // live until the adapter closes
    std::deque<WireMdls> kept_mdls_;
    std::vector<std::thread> helpers_;
};

// ---- Trampolines: B's provider calls these; each becomes an event to A ----

void on_created(PVOID ctx, NTSTATUS status, NDK_OBJECT_HEADER* object) {
    auto* c = static_cast<Context*>(ctx);
    Writer w;
    w.i32(status);
    w.u64(NT_SUCCESS(status) && object ? c->agent->adopt(object) : 0);
    c->agent->event(Event::created, c->a_context, w);
}

void on_done(PVOID ctx, NTSTATUS status) {
    auto* c = static_cast<Context*>(ctx);
    Writer w;
    w.i32(status);
    if (c->op == Op::build_lam) {
        // The LAM's outputs, written by the time the callback runs.
        Lam* lam = c->agent->lam(c->handle);
        auto* m =
            lam ? reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam->storage.data()) : nullptr;
        uint32_t pages = m && NT_SUCCESS(status) ? m->AdapterPageCount : 0;
        w.u32(pages);
        for (uint32_t i = 0; i < pages; ++i)
            w.u64(static_cast<uint64_t>(m->AdapterPageArray[i].QuadPart));
    }
    c->agent->event(Event::request_done, c->a_context, w);
}

void on_closed(PVOID ctx) {
    auto* c = static_cast<Context*>(ctx);
    c->agent->forget(c->handle);
    c->agent->event(Event::closed, c->a_context, Writer{});
}

void on_cq(PVOID ctx, NTSTATUS status) {
    auto* c = static_cast<Context*>(ctx);
    Writer w;
    w.i32(status);
    c->agent->event(Event::cq_notification, c->a_context, w);
}

void on_srq(PVOID ctx, NTSTATUS status) {
    auto* c = static_cast<Context*>(ctx);
    Writer w;
    w.i32(status);
    c->agent->event(Event::srq_notification, c->a_context, w);
}

void on_connect(PVOID ctx, NDK_CONNECTOR* connector) {
    auto* c = static_cast<Context*>(ctx);
    Writer w;
    w.u64(connector ? c->agent->adopt(connector) : 0);
    c->agent->event(Event::connect_request, c->a_context, w);
}

void on_disconnect(PVOID ctx) {
    auto* c = static_cast<Context*>(ctx);
    Writer w;
    w.u8(0);
    w.u32(0);
    c->agent->event(Event::disconnect, c->a_context, w);
}

void on_disconnect_ex(PVOID ctx, ULONG reason) {
    auto* c = static_cast<Context*>(ctx);
    Writer w;
    w.u8(1);
    w.u32(reason);
    c->agent->event(Event::disconnect, c->a_context, w);
}

template <typename T>
const auto* table(T* object) {
    return object->Dispatch;
}

int Agent::run() {
    Frame frame;
    try {
        while (receive_frame(fd_, frame)) {
            if (frame.kind != FrameKind::request)
                throw WireError("node A sent something other than a request");
            handle(frame);
        }
    } catch (const WireError& error) {
        std::fprintf(stderr, "ndkct-agent: %s\n", error.what());
        shut_down();
        return 1;
    }
    shut_down();
    return 0;
}

void Agent::shut_down() {
    if (adapter_) {
        entry_->CloseAdapter(adapter_);
        adapter_ = nullptr;
    }
    for (auto& t : helpers_)
        if (t.joinable()) t.join();
    helpers_.clear();
}

void Agent::hello(Reader& r, Writer& w) {
    if (r.u32() != kMagic) throw WireError("node A does not speak the ndkct two-node protocol");
    uint16_t version = r.u16();
    uint64_t pages = r.u64();
    NDK_VERSION ndk{};
    ndk.Major = r.u16();
    ndk.Minor = r.u16();
    std::string profile = r.str(), device = r.str(), spec = r.str();
    uint64_t seed = r.u64();
    auto answer = [&](NTSTATUS status, const std::string& message) {
        w.i32(status);
        w.str(message);
    };
    if (version != kProtocolVersion) {
        answer(STATUS_INVALID_PARAMETER,
               "protocol version " + std::to_string(version) + " from node A, this agent speaks " +
                   std::to_string(kProtocolVersion) + " (build both nodes from one tree)");
        return;
    }
    if (adapter_) {
        answer(STATUS_INVALID_DEVICE_STATE, "this connection already has an adapter");
        return;
    }
    if (!options_.provider.empty()) spec = options_.provider;
    if (!options_.device.empty()) device = options_.device;
    std::string error;
    entry_ = opener_(spec, error);
    if (!entry_) {
        answer(STATUS_INVALID_PARAMETER, "node B cannot open provider '" + spec + "': " + error);
        return;
    }
    try {
        arena_ = std::make_unique<platform::Arena>(pages, seed);
    } catch (const std::exception& e) {
        answer(STATUS_INSUFFICIENT_RESOURCES,
               "node B cannot make an arena of " + std::to_string(pages) + " pages: " + e.what());
        return;
    }
    mirror_ = std::make_unique<Mirror>(arena_->host_memory());
    char message[512] = {};
    NDKCT_OPEN_OPTIONS open{};
    open.Size = sizeof open;
    open.Version = ndk;
    open.ProfileJson = profile.empty() ? nullptr : profile.c_str();
    open.Seed = seed;
    open.DeviceName = device.c_str();
    open.ErrorMessage = message;
    open.ErrorMessageSize = sizeof message;
    NTSTATUS status = entry_->OpenAdapter(&arena_->host_memory(), &open, &adapter_);
    if (status != STATUS_SUCCESS) adapter_ = nullptr;
    answer(status, message);
    const NDKCT_PROVIDER_IDENTITY* id = entry_->GetProviderIdentity();
    w.str(id && id->Name ? id->Name : "");
    w.str(options_.address4);
    w.str(options_.address6);
    if (options_.verbose)
        std::fprintf(stderr, "ndkct-agent: adapter of '%s' opened: 0x%08x %s\n", spec.c_str(),
                     static_cast<unsigned>(status), message);
}

void Agent::fault(Fault kind, uint32_t millis) {
    if (kind == Fault::exit_now) {
        std::fprintf(stderr, "ndkct-agent: ending this session at once, as node A asked\n");
        std::fflush(stderr);
        ::kill(::getpid(), SIGKILL);
    }
    std::string name = options_.interface;
    if (name.empty()) {
        // The interface that holds the link address.
        std::string cmd = "ip -o addr show to " + options_.address4 + " 2>/dev/null";
        if (FILE* p = ::popen(cmd.c_str(), "r")) {
            char line[512];
            if (std::fgets(line, sizeof line, p)) {
                char ifname[IF_NAMESIZE + 1] = {};
                if (std::sscanf(line, "%*d: %16s", ifname) == 1) name = ifname;
            }
            ::pclose(p);
        }
    }
    if (name.empty()) throw WireError("node B cannot find its link's interface for the fault");
    // One shell: the outage is `millis` plus one `ip` run, whatever starting a program costs
    // here. The reply leaves first; the link goes down 100 ms later.
    std::string command = "ip link set dev " + name + " down";
    if (millis)
        command += " && sleep " + std::to_string(millis / 1000) + "." +
                   std::to_string(1000 + millis % 1000).substr(1) + "; ip link set dev " + name +
                   " up";
    bool verbose = options_.verbose;
    helpers_.emplace_back([command, verbose] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (verbose) std::fprintf(stderr, "ndkct-agent: %s\n", command.c_str());
        if (std::system(command.c_str()) != 0)
            std::fprintf(stderr, "ndkct-agent: '%s' failed\n", command.c_str());
    });
    (void)kind;
}

void Agent::handle(const Frame& frame) {
    Reader r(frame.payload);
    Writer w;
    auto op = static_cast<Op>(frame.code);
    if (op == Op::push) {
        if (!mirror_) throw WireError("a memory push before the adapter was opened");
        mirror_->apply(r);
        return;
    }
    // A request B cannot make sense of (an unknown handle, a short message) is answered with
    // the reason; the session goes on.
    try {
        if (op == Op::hello)
            hello(r, w);
        else
            execute(op, r, w);
    } catch (const WireError& error) {
        std::string why = error.what();
        if (options_.verbose)
            std::fprintf(stderr, "ndkct-agent: %s: %s\n", op_name(op), why.c_str());
        reply(frame.id, false, std::vector<uint8_t>(why.begin(), why.end()));
        return;
    }
    reply(frame.id, true, w.buffer());
}

void Agent::execute(Op op, Reader& r, Writer& w) {
    if (!adapter_) throw WireError(std::string(op_name(op)) + " before the adapter was opened");
    auto* adapter = adapter_;
    auto* ad = adapter->Dispatch;
    switch (op) {
        case Op::close_adapter: {
            entry_->CloseAdapter(adapter_);
            adapter_ = nullptr;
            w.i32(STATUS_SUCCESS);
            break;
        }
        case Op::query_adapter_info: {
            NDK_ADAPTER_INFO info{};
            ULONG size = sizeof info;
            NTSTATUS st = ad->NdkQueryAdapterInfo(adapter, &info, &size);
            w.i32(st);
            w.bytes(&info, sizeof info);
            break;
        }
        case Op::create_cq: {
            ULONG depth = r.u32();
            uint64_t notify = r.u64(), create = r.u64();
            NDK_CQ* cq = nullptr;
            NTSTATUS st = ad->NdkCreateCq(adapter, depth, on_cq, context(notify, op), nullptr,
                                          on_created, context(create, op), &cq);
            w.i32(st);
            w.u64(st == STATUS_SUCCESS && cq ? adopt(cq) : 0);
            break;
        }
        case Op::create_pd: {
            uint64_t create = r.u64();
            NDK_PD* pd = nullptr;
            NTSTATUS st = ad->NdkCreatePd(adapter, on_created, context(create, op), &pd);
            w.i32(st);
            w.u64(st == STATUS_SUCCESS && pd ? adopt(pd) : 0);
            break;
        }
        case Op::create_listener: {
            uint64_t events = r.u64(), create = r.u64();
            NDK_LISTENER* l = nullptr;
            NTSTATUS st = ad->NdkCreateListener(adapter, on_connect, context(events, op),
                                                on_created, context(create, op), &l);
            w.i32(st);
            w.u64(st == STATUS_SUCCESS && l ? adopt(l) : 0);
            break;
        }
        case Op::create_mr: {
            auto* pd = object<NDK_PD>(r.u64());
            bool fast = r.u8() != 0;
            uint64_t create = r.u64();
            NDK_MR* mr = nullptr;
            NTSTATUS st = pd->Dispatch->NdkCreateMr(pd, fast, on_created, context(create, op), &mr);
            w.i32(st);
            w.u64(st == STATUS_SUCCESS && mr ? adopt(mr) : 0);
            break;
        }
        case Op::create_mw: {
            auto* pd = object<NDK_PD>(r.u64());
            uint64_t create = r.u64();
            NDK_MW* mw = nullptr;
            NTSTATUS st = pd->Dispatch->NdkCreateMw(pd, on_created, context(create, op), &mw);
            w.i32(st);
            w.u64(st == STATUS_SUCCESS && mw ? adopt(mw) : 0);
            break;
        }
        case Op::create_srq: {
            auto* pd = object<NDK_PD>(r.u64());
            ULONG depth = r.u32(), sge = r.u32(), threshold = r.u32();
            uint64_t notify = r.u64(), create = r.u64();
            NDK_SRQ* srq = nullptr;
            NTSTATUS st =
                pd->Dispatch->NdkCreateSrq(pd, depth, sge, threshold, on_srq, context(notify, op),
                                           nullptr, on_created, context(create, op), &srq);
            w.i32(st);
            w.u64(st == STATUS_SUCCESS && srq ? adopt(srq) : 0);
            break;
        }
        case Op::create_qp: {
            auto* pd = object<NDK_PD>(r.u64());
            auto* rcq = object<NDK_CQ>(r.u64());
            auto* icq = object<NDK_CQ>(r.u64());
            auto* srq = optional_object<NDK_SRQ>(r.u64());
            auto qp_context = reinterpret_cast<PVOID>(r.u64());
            ULONG rd = r.u32(), id = r.u32(), rs = r.u32(), is = r.u32(), inl = r.u32();
            uint64_t create = r.u64();
            NDK_QP* qp = nullptr;
            NTSTATUS st =
                srq ? pd->Dispatch->NdkCreateQpWithSrq(pd, rcq, icq, srq, qp_context, id, is, inl,
                                                       on_created, context(create, op), &qp)
                    : pd->Dispatch->NdkCreateQp(pd, rcq, icq, qp_context, rd, id, rs, is, inl,
                                                on_created, context(create, op), &qp);
            w.i32(st);
            w.u64(st == STATUS_SUCCESS && qp ? adopt(qp) : 0);
            break;
        }
        case Op::close: {
            uint64_t h = r.u64(), ctx = r.u64();
            auto* o = object<AnyObject>(h);
            NTSTATUS st = (*o->Dispatch)(&o->Header, on_closed, context(ctx, op, h));
            if (st != STATUS_PENDING) forget(h);
            w.i32(st);
            break;
        }
        case Op::register_mr: {
            auto* mr = object<NDK_MR>(r.u64());
            // The chain lives as long as the session (a registration may read it later).
            kept_mdls_.push_back(get_mdl_chain(r, arena_->page_count()));
            WireMdls& mdls = kept_mdls_.back();
            uint64_t length = r.u64();
            ULONG flags = r.u32();
            uint64_t ctx = r.u64();
            mirror_->add(mdls.pfns);
            w.i32(mr->Dispatch->NdkRegisterMr(mr, mdls.head(), length, flags, on_done,
                                              context(ctx, op)));
            break;
        }
        case Op::deregister_mr: {
            auto* mr = object<NDK_MR>(r.u64());
            uint64_t ctx = r.u64();
            w.i32(mr->Dispatch->NdkDeregisterMr(mr, on_done, context(ctx, op)));
            break;
        }
        case Op::initialize_fast_register_mr: {
            auto* mr = object<NDK_MR>(r.u64());
            ULONG pages = r.u32();
            bool remote = r.u8() != 0;
            uint64_t ctx = r.u64();
            w.i32(mr->Dispatch->NdkInitializeFastRegisterMr(mr, pages, remote, on_done,
                                                            context(ctx, op)));
            break;
        }
        case Op::tokens: {
            uint64_t h = r.u64();
            bool is_mw = r.u8() != 0;
            if (is_mw) {
                auto* mw = object<NDK_MW>(h);
                w.u32(0);
                w.u32(mw->Dispatch->NdkGetRemoteTokenFromMw(mw));
            } else {
                auto* mr = object<NDK_MR>(h);
                w.u32(mr->Dispatch->NdkGetLocalTokenFromMr(mr));
                w.u32(mr->Dispatch->NdkGetRemoteTokenFromMr(mr));
            }
            break;
        }
        case Op::privileged_token: {
            auto* pd = object<NDK_PD>(r.u64());
            UINT32 token = 0;
            pd->Dispatch->NdkGetPrivilegedMemoryRegionToken(pd, &token);
            w.u32(token);
            break;
        }
        case Op::build_lam: {
            auto lam = std::make_unique<Lam>();
            lam->mdls = get_mdl_chain(r, arena_->page_count());
            uint64_t length = r.u64();
            ULONG size = r.u32();
            uint64_t ctx = r.u64();
            mirror_->add(lam->mdls.pfns);
            lam->storage.resize(std::max<size_t>(size, sizeof(NDK_LOGICAL_ADDRESS_MAPPING)));
            auto* m = reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam->storage.data());
            MDL* head = lam->mdls.head();
            uint64_t h;
            {
                std::lock_guard lock(objects_mutex_);
                h = next_handle_++;
                lams_[h] = std::move(lam);
            }
            ULONG fbo = 0;
            NTSTATUS st = ad->NdkBuildLAM(adapter, head, length, on_done, context(ctx, op, h), m,
                                          &size, &fbo);
            w.i32(st);
            w.u64(h);
            w.u32(size);
            w.u32(fbo);
            uint32_t pages = st == STATUS_SUCCESS ? m->AdapterPageCount : 0;
            w.u32(pages);
            for (uint32_t i = 0; i < pages; ++i)
                w.u64(static_cast<uint64_t>(m->AdapterPageArray[i].QuadPart));
            break;
        }
        case Op::release_lam: {
            uint64_t h = r.u64();
            Lam* lam = this->lam(h);
            if (!lam) throw WireError("no LAM with handle " + std::to_string(h) + " on node B");
            ad->NdkReleaseLAM(adapter,
                              reinterpret_cast<NDK_LOGICAL_ADDRESS_MAPPING*>(lam->storage.data()));
            w.i32(STATUS_SUCCESS);
            break;
        }
        case Op::resize_cq: {
            auto* cq = object<NDK_CQ>(r.u64());
            ULONG depth = r.u32();
            uint64_t ctx = r.u64();
            w.i32(cq->Dispatch->NdkResizeCq(cq, depth, on_done, context(ctx, op)));
            break;
        }
        case Op::arm_cq: {
            auto* cq = object<NDK_CQ>(r.u64());
            cq->Dispatch->NdkArmCq(cq, r.u32());
            w.i32(STATUS_SUCCESS);
            break;
        }
        case Op::poll: {
            auto* cq = object<NDK_CQ>(r.u64());
            ULONG max = std::min<ULONG>(r.u32(), 4096);
            bool ex = r.u8() != 0;
            std::vector<NDK_RESULT_EX> results(max);
            ULONG n;
            if (ex) {
                n = cq->Dispatch->NdkGetCqResultsEx(cq, results.data(), max);
            } else {
                std::vector<NDK_RESULT> plain(max);
                n = cq->Dispatch->NdkGetCqResults(cq, plain.data(), max);
                for (ULONG i = 0; i < std::min(n, max); ++i) {
                    results[i] = {};
                    results[i].Status = plain[i].Status;
                    results[i].BytesTransferred = plain[i].BytesTransferred;
                    results[i].QPContext = plain[i].QPContext;
                    results[i].RequestContext = plain[i].RequestContext;
                }
            }
            w.u32(n);
            for (ULONG i = 0; i < std::min(n, max); ++i)
                w.raw(&results[i], sizeof(NDK_RESULT_EX));
            mirror_->take_changes(w);
            break;
        }
        case Op::control_moderation: {
            auto* cq = object<NDK_CQ>(r.u64());
            ULONG interval = r.u32(), count = r.u32();
            w.i32(cq->Dispatch->NdkControlCqInterruptModeration(cq, interval, count));
            break;
        }
        case Op::modify_srq: {
            auto* srq = object<NDK_SRQ>(r.u64());
            ULONG depth = r.u32(), threshold = r.u32();
            uint64_t ctx = r.u64();
            w.i32(srq->Dispatch->NdkModifySrq(srq, depth, threshold, on_done, context(ctx, op)));
            break;
        }
        case Op::srq_receive: {
            auto* srq = object<NDK_SRQ>(r.u64());
            auto ctx = reinterpret_cast<PVOID>(r.u64());
            std::vector<std::vector<uint8_t>> bytes;
            auto sges = get_sges(r, bytes);
            w.i32(srq->Dispatch->NdkSrqReceive(srq, ctx, sges.data(),
                                               static_cast<ULONG>(sges.size())));
            break;
        }
        case Op::flush: {
            auto* qp = object<NDK_QP>(r.u64());
            qp->Dispatch->NdkFlush(qp);
            w.i32(STATUS_SUCCESS);
            break;
        }
        case Op::send:
        case Op::receive:
        case Op::read:
        case Op::write:
        case Op::send_and_invalidate: {
            auto* qp = object<NDK_QP>(r.u64());
            auto ctx = reinterpret_cast<PVOID>(r.u64());
            std::vector<std::vector<uint8_t>> bytes;
            auto sges = get_sges(r, bytes);
            ULONG n = static_cast<ULONG>(sges.size());
            const NDK_SGE* sgl = sges.empty() ? nullptr : sges.data();
            uint64_t address = r.u64();
            UINT32 token = r.u32();
            ULONG flags = r.u32();
            const auto* q = qp->Dispatch;
            NTSTATUS st;
            switch (op) {
                case Op::send:
                    st = q->NdkSend(qp, ctx, sgl, n, flags);
                    break;
                case Op::receive:
                    st = q->NdkReceive(qp, ctx, sgl, n);
                    break;
                case Op::read:
                    st = q->NdkRead(qp, ctx, sgl, n, address, token, flags);
                    break;
                case Op::write:
                    st = q->NdkWrite(qp, ctx, sgl, n, address, token, flags);
                    break;
                default:
                    st = q->NdkSendAndInvalidate(qp, ctx, sgl, n, flags, token);
                    break;
            }
            w.i32(st);
            break;
        }
        case Op::bind: {
            auto* qp = object<NDK_QP>(r.u64());
            auto ctx = reinterpret_cast<PVOID>(r.u64());
            auto* mr = object<NDK_MR>(r.u64());
            auto* mw = object<NDK_MW>(r.u64());
            uint64_t va = r.u64(), length = r.u64();
            ULONG flags = r.u32();
            NTSTATUS st =
                qp->Dispatch->NdkBind(qp, ctx, mr, mw, reinterpret_cast<PVOID>(va), length, flags);
            w.i32(st);
            w.u32(mw->Dispatch->NdkGetRemoteTokenFromMw(mw));
            break;
        }
        case Op::fast_register: {
            auto* qp = object<NDK_QP>(r.u64());
            auto ctx = reinterpret_cast<PVOID>(r.u64());
            auto* mr = object<NDK_MR>(r.u64());
            uint32_t n = r.u32();
            if (n > arena_->page_count()) throw WireError("a fast registration of too many pages");
            std::vector<NDK_LOGICAL_ADDRESS> pages(n);
            for (auto& p : pages)
                p.QuadPart = static_cast<LONG64>(r.u64());
            ULONG fbo = r.u32();
            uint64_t length = r.u64(), base = r.u64();
            ULONG flags = r.u32();
            NTSTATUS st = qp->Dispatch->NdkFastRegister(qp, ctx, mr, n, pages.data(), fbo, length,
                                                        reinterpret_cast<PVOID>(base), flags);
            w.i32(st);
            w.u32(mr->Dispatch->NdkGetLocalTokenFromMr(mr));
            w.u32(mr->Dispatch->NdkGetRemoteTokenFromMr(mr));
            break;
        }
        case Op::invalidate: {
            auto* qp = object<NDK_QP>(r.u64());
            auto ctx = reinterpret_cast<PVOID>(r.u64());
            auto* target = object<NDK_OBJECT_HEADER>(r.u64());
            ULONG flags = r.u32();
            w.i32(qp->Dispatch->NdkInvalidate(qp, ctx, target, flags));
            break;
        }
        case Op::listen: {
            auto* l = object<NDK_LISTENER>(r.u64());
            auto address = get_address(r);
            uint64_t ctx = r.u64();
            w.i32(l->Dispatch->NdkListen(l, reinterpret_cast<PSOCKADDR>(address.data()),
                                         static_cast<ULONG>(address.size()), on_done,
                                         context(ctx, op)));
            break;
        }
        case Op::control_connect_events: {
            auto* l = object<NDK_LISTENER>(r.u64());
            l->Dispatch->NdkControlConnectEvents(l, r.u8());
            w.i32(STATUS_SUCCESS);
            break;
        }
        case Op::local_address:
        case Op::peer_address: {
            auto* o = object<AnyObject>(r.u64());
            ULONG length = std::min<ULONG>(r.u32(), sizeof(sockaddr_storage));
            bool with_buffer = r.u8() != 0;  // the consumer's buffer may be NULL (a size query)
            sockaddr_storage a{};
            auto* to = with_buffer ? reinterpret_cast<PSOCKADDR>(&a) : nullptr;
            NTSTATUS st;
            if (op == Op::peer_address) {
                auto* c = reinterpret_cast<NDK_CONNECTOR*>(o);
                st = c->Dispatch->NdkGetPeerAddress(c, to, &length);
            } else if (o->Header.ObjectType == NdkObjectTypeListener) {
                auto* l = reinterpret_cast<NDK_LISTENER*>(o);
                st = l->Dispatch->NdkGetLocalAddress(l, to, &length);
            } else {
                auto* c = reinterpret_cast<NDK_CONNECTOR*>(o);
                st = c->Dispatch->NdkGetLocalAddress(c, to, &length);
            }
            w.i32(st);
            w.u32(length);
            w.bytes(&a, std::min<size_t>(length, sizeof a));
            break;
        }
        case Op::accept: {
            auto* c = object<NDK_CONNECTOR>(r.u64());
            auto* qp = object<NDK_QP>(r.u64());
            ULONG ird = r.u32(), ord = r.u32();
            auto data = r.bytes(1 << 16);
            bool ex = r.u8() != 0;
            bool with_events = r.u8() != 0;
            uint64_t events = r.u64(), ctx = r.u64();
            PVOID pd = data.empty() ? nullptr : data.data();
            auto n = static_cast<ULONG>(data.size());
            NTSTATUS st = ex ? c->Dispatch->NdkAcceptEx(
                                   c, qp, ird, ord, pd, n, with_events ? on_disconnect_ex : nullptr,
                                   context(events, op), on_done, context(ctx, op))
                             : c->Dispatch->NdkAccept(
                                   c, qp, ird, ord, pd, n, with_events ? on_disconnect : nullptr,
                                   context(events, op), on_done, context(ctx, op));
            w.i32(st);
            break;
        }
        case Op::reject: {
            auto* c = object<NDK_CONNECTOR>(r.u64());
            auto data = r.bytes(1 << 16);
            w.i32(c->Dispatch->NdkReject(c, data.empty() ? nullptr : data.data(),
                                         static_cast<ULONG>(data.size())));
            break;
        }
        case Op::connection_data: {
            auto* c = object<NDK_CONNECTOR>(r.u64());
            ULONG length = std::min<ULONG>(r.u32(), 1 << 16);
            bool with_buffer = r.u8() != 0, with_limits = r.u8() != 0;
            // A buffer of length 0 is still a buffer (CONN-PD-04: too small, not a size query).
            std::vector<uint8_t> data(std::max<ULONG>(length, 1));
            ULONG ird = 0, ord = 0;
            NTSTATUS st = c->Dispatch->NdkGetConnectionData(
                c, with_limits ? &ird : nullptr, with_limits ? &ord : nullptr,
                with_buffer ? data.data() : nullptr, &length);
            w.i32(st);
            w.u32(length);
            w.u32(ird);
            w.u32(ord);
            w.bytes(data.data(), std::min<size_t>(data.size(), length));
            break;
        }
        case Op::disconnect: {
            auto* c = object<NDK_CONNECTOR>(r.u64());
            uint64_t ctx = r.u64();
            w.i32(c->Dispatch->NdkDisconnect(c, on_done, context(ctx, op)));
            break;
        }
        case Op::pull:
            mirror_->take_changes(w);
            break;
        case Op::push_acknowledged:
            mirror_->apply(r);
            w.i32(STATUS_SUCCESS);
            break;
        case Op::fault: {
            auto kind = static_cast<Fault>(r.u16());
            uint32_t millis = r.u32();
            fault(kind, millis);
            w.i32(STATUS_SUCCESS);
            break;
        }
        default:
            throw WireError("node A asked for an unknown operation " +
                            std::to_string(static_cast<unsigned>(op)));
    }
}

}  // namespace

int serve_connection(int fd, const AgentOptions& options, ProviderOpener opener) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Agent agent(fd, options, opener);
    int status = agent.run();
    ::close(fd);
    return status;
}

}  // namespace ndkct::twonode
