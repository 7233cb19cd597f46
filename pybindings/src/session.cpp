// The harness for Python: class Session (one adapter of any provider, every NDK call as a
// synchronous method judged by the oracle), NDK_RESULT_EX as Result, and NdkBuildLAM results.
//
// Handles are serial numbers of the NDK objects this adapter handed out. A method checks every
// handle it gets against the open objects and their kind (a ValueError/TypeError naming the
// argument), so Python code cannot make the harness touch a closed object.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pybind11/stl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "core.hpp"
#include "ndkct/model/model.hpp"
#include "ndkct/spec/status.hpp"

namespace ndkct::python {

using conformance::Done;
using conformance::QpShape;
using conformance::Session;

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::pd:
            return "PD";
        case Kind::cq:
            return "CQ";
        case Kind::mr:
            return "MR";
        case Kind::mw:
            return "MW";
        case Kind::srq:
            return "SRQ";
        case Kind::qp:
            return "QP";
        case Kind::connector:
            return "connector";
        case Kind::listener:
            return "listener";
        case Kind::shared_endpoint:
            return "shared endpoint";
    }
    return "object";
}

Session& Core::s() {
    if (!session) throw py::value_error("the adapter is closed");
    return *session;
}

void* Core::need(uint64_t handle, std::initializer_list<Kind> kinds, const char* what) {
    s();
    auto it = live.find(handle);
    if (it == live.end())
        throw py::value_error(std::string(what) +
                              ": not an open NDK object of this adapter (closed already, or "
                              "made by another adapter)");
    std::string wanted;
    for (Kind k : kinds) {
        if (it->second.kind == k) return it->second.object;
        wanted += (wanted.empty() ? "" : " or ") + std::string(kind_name(k));
    }
    throw py::type_error(std::string(what) + ": expected " + wanted + ", got " +
                         kind_name(it->second.kind));
}

uint64_t Core::adopt(void* object, Kind kind) {
    if (!object) return 0;
    uint64_t h = next_handle++;
    live[h] = {object, kind};
    if (trap) trap->install(object);  // GEN-CREATE-05: the consumer's table from the start
    return h;
}

void Core::close_untracked() {
    std::vector<uint64_t> handles;
    for (const auto& [h, e] : live)
        if (s().id(e.object) == 0 && !closing.contains(h)) handles.push_back(h);
    std::sort(handles.rbegin(), handles.rend());  // newest first: successors before antecedents
    for (uint64_t h : handles) {
        session->close(live[h].object);
        live.erase(h);
    }
}

void Core::report_trap(bool remove) {
    if (!trap) return;
    if (remove)
        trap.reset();  // reports, then restores the members of the objects still open
    else
        trap->report();
}

void Core::close() {
    if (!session) return;
    drop_hooks(*this);
    close_untracked();
    session->close_all();
    // LAM-REL-03: mappings go after the objects that may use them.
    for (auto& l : lams)
        if (!l->released && l->lam.done.ok()) {
            session->release_lam(l->lam);
            l->released = true;
        }
    report_trap(true);  // before the adapter goes: the trap writes Dispatch members back
    // The buffers' pages belong to the arena, which goes with the session.
    for (auto& b : buffers) {
        b->buffer = platform::LockedBuffer{};
        b->alive = false;
    }
    buffers.clear();
    lams.clear();
    chains.clear();
    live.clear();
    closing.clear();
    session.reset();  // closes the adapter (CLOSE-ADP-01)
}

void CoreDeleter::operator()(Core* c) const {
    try {
        c->close();
    } catch (...) {  // never throw from a destructor; the adapter is gone either way
    }
    delete c;
}

namespace {

uint64_t context_value(const void* p) {
    return reinterpret_cast<uint64_t>(p);
}
void* context(uint64_t value) {
    return reinterpret_cast<void*>(static_cast<uint64_t>(value));
}

py::object handle_or_none(uint64_t h) {
    return h ? py::object(py::int_(h)) : py::object(py::none());
}

template <typename T>
py::tuple made(Core& core, const conformance::Made<T>& m, Kind kind) {
    uint64_t h = core.adopt(m.object, kind);
    return py::make_tuple(status(m.status), status(m.final_status), handle_or_none(h));
}

py::tuple done(const Done& d) {
    return py::make_tuple(status(d.status), status(d.final_status));
}

void* closable(Core& c, uint64_t object) {
    return c.need(object,
                  {Kind::pd, Kind::cq, Kind::mr, Kind::mw, Kind::srq, Kind::qp, Kind::connector,
                   Kind::listener, Kind::shared_endpoint},
                  "object");
}

// NdkCloseObject, once per object: a close that pended is awaited (finish_close), never issued
// again (CLOSE-01: the object is gone for the consumer once the close was called).
NTSTATUS start_close(Core& c, uint64_t object) {
    void* p = closable(c, object);
    if (c.closing.contains(object)) return STATUS_PENDING;
    NTSTATUS st = c.s().close_async(p);
    if (st == STATUS_PENDING)
        c.closing.insert(object);
    else
        c.live.erase(object);  // finished inline
    return st;
}

Done finish_close(Core& c, uint64_t object) {
    void* p = closable(c, object);
    if (!c.closing.contains(object))
        throw py::value_error("wait_close: no close of this object is pending");
    Done d = c.s().wait_close(p);
    if (d.final_status != STATUS_PENDING) {  // completed, or given up on by the Session
        c.closing.erase(object);
        c.live.erase(object);
    }
    return d;
}

// (address, length, token) tuples: the address is a consumer VA or, for fast-registered and
// bound regions, the address label the region was given.
using SgeTuple = std::tuple<uint64_t, uint32_t, uint32_t>;
std::vector<NDK_SGE> sgl(const std::vector<SgeTuple>& list) {
    std::vector<NDK_SGE> out;
    out.reserve(list.size());
    for (const auto& [address, length, token] : list) {
        NDK_SGE s{};
        s.LogicalAddress.QuadPart = static_cast<LONG64>(address);
        s.Length = length;
        s.MemoryRegionToken = token;
        out.push_back(s);
    }
    return out;
}

struct Address {
    sockaddr_storage storage{};
    ULONG length = 0;
    const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

Address address(const std::string& host, uint16_t port) {
    Address a;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&a.storage);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
    if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        a.length = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        a.length = sizeof(sockaddr_in6);
    } else {
        throw py::value_error("'" + host + "' is not an IPv4 or IPv6 address");
    }
    return a;
}

std::span<const uint8_t> bytes_of(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

py::dict adapter_info(const NDK_ADAPTER_INFO& i) {
    py::dict d;
    d["version"] = py::make_tuple(i.Version.Major, i.Version.Minor);
    d["vendor_id"] = i.VendorId;
    d["device_id"] = i.DeviceId;
    d["max_registration_size"] = i.MaxRegistrationSize;
    d["max_window_size"] = i.MaxWindowSize;
    d["frmr_page_count"] = i.FRMRPageCount;
    d["max_initiator_request_sge"] = i.MaxInitiatorRequestSge;
    d["max_receive_request_sge"] = i.MaxReceiveRequestSge;
    d["max_read_request_sge"] = i.MaxReadRequestSge;
    d["max_transfer_length"] = i.MaxTransferLength;
    d["max_inline_data_size"] = i.MaxInlineDataSize;
    d["max_inbound_read_limit"] = i.MaxInboundReadLimit;
    d["max_outbound_read_limit"] = i.MaxOutboundReadLimit;
    d["max_receive_queue_depth"] = i.MaxReceiveQueueDepth;
    d["max_initiator_queue_depth"] = i.MaxInitiatorQueueDepth;
    d["max_srq_depth"] = i.MaxSrqDepth;
    d["max_cq_depth"] = i.MaxCqDepth;
    d["large_request_threshold"] = i.LargeRequestThreshold;
    d["max_caller_data"] = i.MaxCallerData;
    d["max_callee_data"] = i.MaxCalleeData;
    d["adapter_flags"] = i.AdapterFlags;
    d["rdma_technology"] = static_cast<int>(i.RdmaTechnology);
    return d;
}

// A connected pair as Python sees it: the handles of its objects (the PD, CQ and QPs as given),
// whether it connected, and why not.
py::dict pair_dict(Core& c, const conformance::LoopbackPair& p, uint64_t pd, uint64_t cq,
                   uint64_t a, uint64_t b) {
    py::dict d;
    d["pd"] = handle_or_none(pd);
    d["cq"] = handle_or_none(cq);
    d["a"] = handle_or_none(a);
    d["b"] = handle_or_none(b);
    d["active"] = handle_or_none(c.adopt(p.active, Kind::connector));
    d["passive"] = handle_or_none(c.adopt(p.passive, Kind::connector));
    d["listener"] = handle_or_none(c.adopt(p.listener, Kind::listener));
    d["connected"] = p.connected;
    d["problem"] = p.problem;
    return d;
}

model::ObjectId oracle_id(Core& c, uint64_t h, Kind kind, const char* what) {
    return c.s().id(c.need(h, {kind}, what));
}

}  // namespace

void bind_session(py::module_& m) {
    py::class_<NDK_RESULT_EX>(m, "Result",
                              "One completion (NDK_RESULT_EX) returned by NdkGetCqResults(Ex).")
        .def_property_readonly("status", [](const NDK_RESULT_EX& r) { return status(r.Status); })
        .def_readonly("bytes_transferred", &NDK_RESULT_EX::BytesTransferred)
        .def_property_readonly("qp_context",
                               [](const NDK_RESULT_EX& r) { return context_value(r.QPContext); })
        .def_property_readonly(
            "request_context",
            [](const NDK_RESULT_EX& r) { return context_value(r.RequestContext); })
        .def_property_readonly("type",
                               [](const NDK_RESULT_EX& r) {
                                   py::object op =
                                       py::module_::import("ndkct._ndkct").attr("OperationType");
                                   try {
                                       return op(static_cast<int>(r.Type));
                                   } catch (const py::error_already_set&) {
                                       return py::object(py::int_(static_cast<int>(r.Type)));
                                   }
                               })
        .def_readonly("provider_error_code", &NDK_RESULT_EX::ProviderErrorCode)
        .def_readonly("type_specific", &NDK_RESULT_EX::TypeSpecificCompletionOutput)
        .def("__repr__", [](const NDK_RESULT_EX& r) {
            return "<Result " + spec::status_name(r.Status) +
                   " bytes=" + std::to_string(r.BytesTransferred) +
                   " context=" + std::to_string(context_value(r.RequestContext)) + ">";
        });

    py::class_<LamState, std::shared_ptr<LamState>>(
        m, "LogicalAddressMapping",
        "The outcome of NdkBuildLAM: the adapter logical addresses of a buffer's pages, its first "
        "byte offset, and the sizes the provider wrote.")
        .def_property_readonly("status",
                               [](const LamState& l) { return status(l.lam.done.status); })
        .def_property_readonly("final_status",
                               [](const LamState& l) { return status(l.lam.done.final_status); })
        .def_property_readonly("ok", [](const LamState& l) { return l.lam.done.ok(); })
        .def_property_readonly(
            "pages",
            [](LamState& l) {
                std::vector<uint64_t> out;
                for (const auto& p : l.lam.pages())
                    out.push_back(static_cast<uint64_t>(p.QuadPart));
                return out;
            },
            "AdapterPageArray: one logical address per page.")
        .def_property_readonly(
            "fbo", [](const LamState& l) { return l.lam.fbo; },
            "*pFBO: the first byte's offset in the first page.")
        .def_property_readonly("size_in", [](const LamState& l) { return l.lam.size_in; })
        .def_property_readonly(
            "size_out", [](const LamState& l) { return l.lam.size_out; },
            "*pLAMSize after the call (the size needed when too small).")
        .def_property_readonly("released", [](const LamState& l) { return l.released; });

    SessionClass cls(
        m, "Session",
        "One adapter of a provider under test, over a fresh arena, with the oracle. Every NDK call "
        "goes through the provider's dispatch table; pending calls are awaited; the callback "
        "contract is enforced; every outcome is judged. The low layer of ndkct.Adapter: objects "
        "are handles (ints), results are tuples.");
    cls.def(py::init([](const std::string& spec, size_t arena_pages, int64_t callback_timeout_ms,
                        const std::string& profile, const std::string& capture_dir,
                        bool capture_bytes, const std::string& capture_label,
                        uint32_t capture_digest_limit) {
                auto specs = conformance::parse_provider_specs(spec);
                if (specs.size() != 1)
                    throw conformance::ProviderSpecError("provider '" + spec +
                                                         "': name one provider, not a list");
                if (specs[0].kind == "verbs") ensure_verbs_provider();
                conformance::SessionOptions options;
                options.arena_pages = arena_pages;
                options.callback_timeout = std::chrono::milliseconds(callback_timeout_ms);
                options.profile_override = profile;
                // A trace of the session (spec/TRACE.md) into capture_dir, named after the
                // label; without a folder, NDKCT_CAPTURE_DIR decides, as for every Session.
                if (!capture_dir.empty()) {
                    conformance::CaptureSettings capture;
                    capture.directory = capture_dir;
                    if (capture_bytes) capture.flags |= NDKCAP_SOURCE_BYTES | NDKCAP_LANDED_BYTES;
                    capture.digest_limit = capture_digest_limit;
                    options.capture = capture;
                }
                if (!capture_label.empty()) conformance::set_capture_label(capture_label);
                auto core = std::unique_ptr<Core, CoreDeleter>(new Core);
                core->spec = spec;
                try {
                    core->session = std::make_unique<Session>(specs[0], options);
                } catch (const conformance::SessionError& e) {
                    throw py::value_error(e.what());
                }
                core->trace_path = core->session->trace_path();
                return core;
            }),
            py::arg("provider") = "model", py::arg("arena_pages") = 4096,
            py::arg("callback_timeout_ms") = 10000, py::arg("profile") = "",
            py::arg("capture_dir") = "", py::arg("capture_bytes") = false,
            py::arg("capture_label") = "", py::arg("capture_digest_limit") = 0)
        .def_property_readonly(
            "trace_path", [](const Core& c) { return c.trace_path; },
            "The trace this session records into, or \"\" (whole once the session is closed).")
        .def("close", &Core::close, "Closes every open object, then the adapter.")
        .def(
            "close_objects",
            [](Core& c) {
                drop_hooks(c);
                c.close_untracked();
                c.s().close_all();
                for (auto& l : c.lams)  // LAM-REL-03: after the objects that may use them
                    if (!l->released && l->lam.done.ok()) {
                        c.s().release_lam(l->lam);
                        l->released = true;
                    }
                c.live.clear();
                c.closing.clear();
            },
            "Closes every open object (successors first) and releases the mappings; the "
            "adapter stays open, so the verdict can still be read.")
        .def(
            "close_adapter",
            [](Core& c) {
                drop_hooks(c);
                c.report_trap(true);    // the trap writes Dispatch members back: before the close
                c.s().close_adapter();  // closes what is left first (CLOSE-ADP-01)
                c.live.clear();
                c.closing.clear();
            },
            "CloseNdkAdapter; the session stays, so the verdict can still be read and a stray "
            "callback arriving after the close is still judged.")
        .def_property_readonly("closed", &Core::closed)
        .def_readonly("provider", &Core::spec)
        .def_property_readonly("identity",
                               [](Core& c) {
                                   const auto& i = c.s().identity();
                                   py::dict d;
                                   d["name"] = i.Name ? i.Name : "";
                                   d["version"] = i.Version ? i.Version : "";
                                   d["description"] = i.Description ? i.Description : "";
                                   d["ndk_version"] =
                                       py::make_tuple(i.NdkVersion.Major, i.NdkVersion.Minor);
                                   return d;
                               })
        .def_property_readonly(
            "info", [](Core& c) { return adapter_info(c.s().info()); },
            "NDK_ADAPTER_INFO as the adapter reported it at open.")
        .def("open_handles",
             [](Core& c) {
                 py::dict d;
                 for (const auto& [h, e] : c.live)
                     d[py::int_(h)] = kind_name(e.kind);
                 return d;
             })
        // ---- The oracle ----
        .def(
            "verdict",
            [](Core& c) {
                c.report_trap();
                return c.s().verdict();
            },
            "Everything the oracle found so far (violations and warnings).")
        .def("violation_count",
             [](Core& c) {
                 c.report_trap();
                 return c.s().verdict().violations.size();
             })
        .def(
            "object_count",
            [](Core& c) {
                return c.s().with_oracle([](model::Model& o) { return o.object_count(); });
            },
            "Objects the oracle has seen on this adapter (open or closed).")
        .def(
            "outstanding_completions",
            [](Core& c, uint64_t qp) {
                auto id = oracle_id(c, qp, Kind::qp, "qp");
                return c.s().with_oracle(
                    [&](model::Model& o) { return o.outstanding_completions(id); });
            },
            py::arg("qp"), "Completions the oracle still expects from this QP.")
        .def(
            "expect_nothing_outstanding",
            [](Core& c, uint64_t qp) {
                // WR-10: whatever is still expected is missing; a capture records the word.
                return c.s().expect_drained(static_cast<NDK_QP*>(c.need(qp, {Kind::qp}, "qp")));
            },
            py::arg("qp"),
            "Declares the QP drained: every completion the oracle still expects is missing "
            "(reported as violations, and returned); a captured session's trace records it, so "
            "that check-trace judges the same.")
        .def(
            "notification_owed",
            [](Core& c, uint64_t cq) {
                auto id = oracle_id(c, cq, Kind::cq, "cq");
                return c.s().with_oracle([&](model::Model& o) { return o.notification_owed(id); });
            },
            py::arg("cq"))
        .def(
            "expect_notification_delivered",
            [](Core& c, uint64_t cq, double waited) {
                // CQ-NOT-07: a satisfied arm is never dropped; still owed beyond doubt after the
                // wait (notification_certainly_owed, as the C++ teardown judges), it is missing,
                // under the rule of what satisfied the arm (a solicited send's receive: SND-04,
                // CQ-NOT-10). A captured session's trace records the word (UNNOTIFIED).
                if (!(waited >= 0 && waited <= 4e6))  // NaN too
                    throw py::value_error(
                        "expect_notification_delivered: waited must be 0 .. 4e6 seconds");
                return c.s().expect_notification_delivered(
                    c.need<NDK_CQ>(cq, Kind::cq, "cq"),
                    std::chrono::milliseconds(static_cast<long long>(waited * 1000)));
            },
            py::arg("cq"), py::arg("waited"),
            "Declares the wait for the CQ's owed notification over: one the oracle still says "
            "is owed is missing (reported as a violation, and returned).")
        // ---- Host memory ----
        .def(
            "buffer",
            [](Core& c, size_t bytes, bool contiguous) {
                auto state = std::make_shared<BufferState>();
                try {
                    state->buffer =
                        c.s().buffer(bytes, contiguous ? platform::Placement::contiguous
                                                       : platform::Placement::scattered);
                } catch (const std::bad_alloc&) {
                    throw py::value_error("the arena has too few free pages for " +
                                          std::to_string(bytes) + " bytes");
                }
                c.buffers.push_back(state);
                return Buffer{state};
            },
            py::arg("bytes"), py::arg("contiguous") = false,
            "A zeroed locked buffer of at least `bytes` bytes (whole pages).")
        // ---- Adapter ----
        .def(
            "query_adapter_info",
            [](Core& c, ULONG size, bool with_buffer) {
                NDK_ADAPTER_INFO info{};
                ULONG s = size;
                std::vector<std::byte> storage(std::max<size_t>(size, sizeof info));
                NTSTATUS st = c.s().query_adapter_info(
                    with_buffer ? reinterpret_cast<NDK_ADAPTER_INFO*>(storage.data()) : nullptr,
                    &s);
                py::object d = py::none();
                if (st == STATUS_SUCCESS && with_buffer) {
                    std::memcpy(&info, storage.data(), std::min<size_t>(size, sizeof info));
                    d = adapter_info(info);
                }
                return py::make_tuple(status(st), s, d);
            },
            py::arg("size") = sizeof(NDK_ADAPTER_INFO), py::arg("with_buffer") = true,
            "NdkQueryAdapterInfo with a buffer of `size` bytes: (status, *pBufferSize after, "
            "info).")
        .def(
            "create_cq",
            [](Core& c, ULONG depth, bool notify) {
                return made(c, c.s().create_cq(depth, notify), Kind::cq);
            },
            py::arg("depth"), py::arg("notifications") = true)
        .def("create_pd", [](Core& c) { return made(c, c.s().create_pd(), Kind::pd); })
        .def("create_connector",
             [](Core& c) { return made(c, c.s().create_connector(), Kind::connector); })
        .def("create_listener",
             [](Core& c) { return made(c, c.s().create_listener(), Kind::listener); })
        .def(
            "create_shared_endpoint",
            [](Core& c, const std::string& host, uint16_t port) {
                Address a = address(host, port);
                return made(c, c.s().create_shared_endpoint(a.get(), a.length),
                            Kind::shared_endpoint);
            },
            py::arg("host"), py::arg("port"))
        .def(
            "build_lam",
            [](Core& c, Chain& chain, std::optional<ULONG> buffer_size, bool with_buffer,
               bool with_completion, std::optional<size_t> length) {
                if (!chain.buffer || !chain.buffer->alive)
                    throw py::value_error("the chain's buffer is gone: its adapter was closed");
                auto state = std::make_shared<LamState>();
                const size_t bytes = length ? *length : chain.length;
                size_t pages = 0;
                if (chain.chain->head()) {
                    const MDL* mdl = chain.chain->head();
                    size_t offset =
                        reinterpret_cast<uint64_t>(MmGetMdlVirtualAddress(mdl)) % PAGE_SIZE;
                    pages = (offset + bytes + PAGE_SIZE - 1) / PAGE_SIZE;
                }
                ULONG size = buffer_size
                                 ? *buffer_size
                                 : static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages));
                state->chain = chain.chain;
                state->lam =
                    c.s().build_lam(chain.chain->head(), bytes, size, with_buffer, with_completion);
                c.lams.push_back(state);
                return state;
            },
            py::arg("chain"), py::arg("buffer_size") = py::none(), py::arg("with_buffer") = true,
            py::arg("with_completion") = true, py::arg("length") = py::none(),
            "NdkBuildLAM over a chain for `length` bytes (default: the bytes the chain "
            "describes); buffer_size defaults to the size those pages need.")
        .def(
            "release_lam",
            [](Core& c, LamState& l) {
                c.s();
                if (l.released) throw py::value_error("the mapping was released already");
                if (!l.lam.done.ok())
                    throw py::value_error("NdkBuildLAM failed: nothing to release");
                c.s().release_lam(l.lam);
                l.released = true;
            },
            py::arg("lam"))
        // ---- PD ----
        .def(
            "create_mr",
            [](Core& c, uint64_t pd, bool fast) {
                return made(c, c.s().create_mr(c.need<NDK_PD>(pd, Kind::pd, "pd"), fast), Kind::mr);
            },
            py::arg("pd"), py::arg("fast_register") = false)
        .def(
            "create_mw",
            [](Core& c, uint64_t pd) {
                return made(c, c.s().create_mw(c.need<NDK_PD>(pd, Kind::pd, "pd")), Kind::mw);
            },
            py::arg("pd"))
        .def(
            "create_srq",
            [](Core& c, uint64_t pd, ULONG depth, ULONG max_sge, ULONG threshold, bool notify) {
                return made(c,
                            c.s().create_srq(c.need<NDK_PD>(pd, Kind::pd, "pd"), depth, max_sge,
                                             threshold, notify),
                            Kind::srq);
            },
            py::arg("pd"), py::arg("depth"), py::arg("max_sge"), py::arg("threshold") = 0,
            py::arg("notifications") = true)
        .def(
            "create_qp",
            [](Core& c, uint64_t pd, uint64_t rcq, uint64_t icq, uint64_t qp_context, ULONG rd,
               ULONG id, ULONG rs, ULONG is, ULONG inl) {
                QpShape shape{rd, id, rs, is, inl};
                return made(c,
                            c.s().create_qp(c.need<NDK_PD>(pd, Kind::pd, "pd"),
                                            c.need<NDK_CQ>(rcq, Kind::cq, "receive_cq"),
                                            c.need<NDK_CQ>(icq, Kind::cq, "initiator_cq"),
                                            context(qp_context), shape),
                            Kind::qp);
            },
            py::arg("pd"), py::arg("receive_cq"), py::arg("initiator_cq"),
            py::arg("qp_context") = 1, py::arg("receive_depth") = 64,
            py::arg("initiator_depth") = 64, py::arg("receive_sge") = 4,
            py::arg("initiator_sge") = 4, py::arg("inline_size") = 0)
        .def(
            "create_qp_with_srq",
            [](Core& c, uint64_t pd, uint64_t rcq, uint64_t icq, uint64_t srq, uint64_t qp_context,
               ULONG id, ULONG is, ULONG inl) {
                QpShape shape{0, id, 0, is, inl};
                return made(c,
                            c.s().create_qp_with_srq(c.need<NDK_PD>(pd, Kind::pd, "pd"),
                                                     c.need<NDK_CQ>(rcq, Kind::cq, "receive_cq"),
                                                     c.need<NDK_CQ>(icq, Kind::cq, "initiator_cq"),
                                                     c.need<NDK_SRQ>(srq, Kind::srq, "srq"),
                                                     context(qp_context), shape),
                            Kind::qp);
            },
            py::arg("pd"), py::arg("receive_cq"), py::arg("initiator_cq"), py::arg("srq"),
            py::arg("qp_context") = 1, py::arg("initiator_depth") = 64,
            py::arg("initiator_sge") = 4, py::arg("inline_size") = 0)
        .def(
            "privileged_token",
            [](Core& c, uint64_t pd) {
                return c.s().privileged_token(c.need<NDK_PD>(pd, Kind::pd, "pd"));
            },
            py::arg("pd"))
        // ---- MR, MW ----
        .def(
            "register_mr",
            [](Core& c, uint64_t mr, Chain& chain, std::optional<size_t> length, ULONG flags) {
                if (!chain.buffer || !chain.buffer->alive)
                    throw py::value_error("the chain's buffer is gone: its adapter was closed");
                c.chains.push_back(chain.chain);
                return done(c.s().register_mr(c.need<NDK_MR>(mr, Kind::mr, "mr"),
                                              chain.chain->head(), length ? *length : chain.length,
                                              flags));
            },
            py::arg("mr"), py::arg("chain"), py::arg("length") = py::none(), py::arg("flags") = 0)
        .def(
            "deregister_mr",
            [](Core& c, uint64_t mr) {
                return done(c.s().deregister_mr(c.need<NDK_MR>(mr, Kind::mr, "mr")));
            },
            py::arg("mr"))
        .def(
            "initialize_fast_register_mr",
            [](Core& c, uint64_t mr, ULONG pages, bool remote) {
                return done(c.s().initialize_fast_register_mr(c.need<NDK_MR>(mr, Kind::mr, "mr"),
                                                              pages, remote));
            },
            py::arg("mr"), py::arg("pages"), py::arg("remote_access"))
        .def(
            "local_token",
            [](Core& c, uint64_t mr) {
                return c.s().local_token(c.need<NDK_MR>(mr, Kind::mr, "mr"));
            },
            py::arg("mr"))
        .def(
            "remote_token",
            [](Core& c, uint64_t object) {
                void* p = c.need(object, {Kind::mr, Kind::mw}, "mr_or_mw");
                return c.live[object].kind == Kind::mr
                           ? c.s().remote_token(static_cast<NDK_MR*>(p))
                           : c.s().remote_token(static_cast<NDK_MW*>(p));
            },
            py::arg("mr_or_mw"))
        // ---- CQ ----
        .def(
            "resize_cq",
            [](Core& c, uint64_t cq, ULONG depth) {
                return done(c.s().resize_cq(c.need<NDK_CQ>(cq, Kind::cq, "cq"), depth));
            },
            py::arg("cq"), py::arg("depth"))
        .def(
            "arm_cq",
            [](Core& c, uint64_t cq, ULONG type) {
                c.s().arm_cq(c.need<NDK_CQ>(cq, Kind::cq, "cq"), type);
            },
            py::arg("cq"), py::arg("type"))
        .def(
            "control_cq_interrupt_moderation",
            [](Core& c, uint64_t cq, ULONG interval, ULONG count) {
                return status(c.s().control_cq_interrupt_moderation(
                    c.need<NDK_CQ>(cq, Kind::cq, "cq"), interval, count));
            },
            py::arg("cq"), py::arg("interval"), py::arg("count"))
        .def(
            "poll",
            [](Core& c, uint64_t cq, ULONG max, std::optional<bool> ex) {
                if (max == 0 || max > 4096) throw py::value_error("poll: max must be 1..4096");
                return c.s().poll(c.need<NDK_CQ>(cq, Kind::cq, "cq"), max, ex);
            },
            py::arg("cq"), py::arg("max") = 16, py::arg("ex") = py::none(),
            "NdkGetCqResultsEx (ex True), NdkGetCqResults (ex False) or the one the adapter's "
            "version names (None): the results returned now.")
        .def(
            "drain",
            [](Core& c, uint64_t cq, size_t count, int64_t timeout_ms, std::optional<bool> ex,
               ULONG batch) {
                auto* q = c.need<NDK_CQ>(cq, Kind::cq, "cq");
                if (batch == 0 || batch > 4096)
                    throw py::value_error("drain: batch must be 1..4096");
                // Session::drain polls in batches of 64 with the version's call; here the call
                // and nResults are the caller's (CQ-RES-*: a fault may be in one call only, or
                // show only when entries are taken one at a time).
                std::vector<NDK_RESULT_EX> all;
                auto deadline =
                    std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
                while (all.size() < count) {
                    auto got = c.s().poll(
                        q, static_cast<ULONG>(std::min<size_t>(count - all.size(), batch)), ex);
                    all.insert(all.end(), got.begin(), got.end());
                    if (all.size() >= count || std::chrono::steady_clock::now() > deadline) break;
                    if (got.empty()) std::this_thread::sleep_for(std::chrono::microseconds(50));
                }
                return all;
            },
            py::arg("cq"), py::arg("count"), py::arg("timeout_ms") = 5000,
            py::arg("ex") = py::none(), py::arg("batch") = 64,
            "Polls (at most `batch` entries per call) until `count` results came or the time is "
            "up; returns what came.")
        .def(
            "notifications",
            [](Core& c, uint64_t cq) {
                return c.s().notifications(c.need<NDK_CQ>(cq, Kind::cq, "cq"));
            },
            py::arg("cq"))
        // ---- SRQ ----
        .def(
            "modify_srq",
            [](Core& c, uint64_t srq, ULONG depth, ULONG threshold) {
                return done(
                    c.s().modify_srq(c.need<NDK_SRQ>(srq, Kind::srq, "srq"), depth, threshold));
            },
            py::arg("srq"), py::arg("depth"), py::arg("threshold"))
        .def(
            "srq_receive",
            [](Core& c, uint64_t srq, uint64_t ctx, const std::vector<SgeTuple>& list) {
                auto s = sgl(list);
                return status(
                    c.s().srq_receive(c.need<NDK_SRQ>(srq, Kind::srq, "srq"), context(ctx), s));
            },
            py::arg("srq"), py::arg("context"), py::arg("sgl"))
        // ---- QP ----
        .def(
            "send",
            [](Core& c, uint64_t qp, uint64_t ctx, const std::vector<SgeTuple>& list, ULONG flags) {
                auto s = sgl(list);
                return status(
                    c.s().send(c.need<NDK_QP>(qp, Kind::qp, "qp"), context(ctx), s, flags));
            },
            py::arg("qp"), py::arg("context"), py::arg("sgl"), py::arg("flags") = 0)
        .def(
            "send_and_invalidate",
            [](Core& c, uint64_t qp, uint64_t ctx, const std::vector<SgeTuple>& list, ULONG flags,
               UINT32 token) {
                auto s = sgl(list);
                return status(c.s().send_and_invalidate(c.need<NDK_QP>(qp, Kind::qp, "qp"),
                                                        context(ctx), s, flags, token));
            },
            py::arg("qp"), py::arg("context"), py::arg("sgl"), py::arg("flags"),
            py::arg("remote_token"))
        .def(
            "receive",
            [](Core& c, uint64_t qp, uint64_t ctx, const std::vector<SgeTuple>& list) {
                auto s = sgl(list);
                return status(c.s().receive(c.need<NDK_QP>(qp, Kind::qp, "qp"), context(ctx), s));
            },
            py::arg("qp"), py::arg("context"), py::arg("sgl"))
        .def(
            "read",
            [](Core& c, uint64_t qp, uint64_t ctx, const std::vector<SgeTuple>& list,
               uint64_t remote, UINT32 token, ULONG flags) {
                auto s = sgl(list);
                return status(c.s().read(c.need<NDK_QP>(qp, Kind::qp, "qp"), context(ctx), s,
                                         remote, token, flags));
            },
            py::arg("qp"), py::arg("context"), py::arg("sgl"), py::arg("remote_address"),
            py::arg("remote_token"), py::arg("flags") = 0)
        .def(
            "write",
            [](Core& c, uint64_t qp, uint64_t ctx, const std::vector<SgeTuple>& list,
               uint64_t remote, UINT32 token, ULONG flags) {
                auto s = sgl(list);
                return status(c.s().write(c.need<NDK_QP>(qp, Kind::qp, "qp"), context(ctx), s,
                                          remote, token, flags));
            },
            py::arg("qp"), py::arg("context"), py::arg("sgl"), py::arg("remote_address"),
            py::arg("remote_token"), py::arg("flags") = 0)
        .def(
            "fast_register",
            [](Core& c, uint64_t qp, uint64_t ctx, uint64_t mr, const std::vector<uint64_t>& pages,
               ULONG fbo, SIZE_T length, uint64_t base, ULONG flags) {
                std::vector<NDK_LOGICAL_ADDRESS> list(pages.size());
                for (size_t i = 0; i < pages.size(); ++i)
                    list[i].QuadPart = static_cast<LONG64>(pages[i]);
                return status(c.s().fast_register(c.need<NDK_QP>(qp, Kind::qp, "qp"), context(ctx),
                                                  c.need<NDK_MR>(mr, Kind::mr, "mr"), list, fbo,
                                                  length, base, flags));
            },
            py::arg("qp"), py::arg("context"), py::arg("mr"), py::arg("pages"), py::arg("fbo"),
            py::arg("length"), py::arg("base_virtual_address"), py::arg("flags") = 0)
        .def(
            "bind",
            [](Core& c, uint64_t qp, uint64_t ctx, uint64_t mr, uint64_t mw, uint64_t va,
               SIZE_T length, ULONG flags) {
                return status(c.s().bind(c.need<NDK_QP>(qp, Kind::qp, "qp"), context(ctx),
                                         c.need<NDK_MR>(mr, Kind::mr, "mr"),
                                         c.need<NDK_MW>(mw, Kind::mw, "mw"), va, length, flags));
            },
            py::arg("qp"), py::arg("context"), py::arg("mr"), py::arg("mw"),
            py::arg("virtual_address"), py::arg("length"), py::arg("flags") = 0)
        .def(
            "invalidate",
            [](Core& c, uint64_t qp, uint64_t ctx, uint64_t target, ULONG flags) {
                return status(c.s().invalidate(c.need<NDK_QP>(qp, Kind::qp, "qp"), context(ctx),
                                               c.need(target, {Kind::mr, Kind::mw}, "mr_or_mw"),
                                               flags));
            },
            py::arg("qp"), py::arg("context"), py::arg("mr_or_mw"), py::arg("flags") = 0)
        .def(
            "flush", [](Core& c, uint64_t qp) { c.s().flush(c.need<NDK_QP>(qp, Kind::qp, "qp")); },
            py::arg("qp"))
        // ---- Connections ----
        .def(
            "listen",
            [](Core& c, uint64_t listener, const std::string& host, uint16_t port) {
                Address a = address(host, port);
                return done(c.s().listen(c.need<NDK_LISTENER>(listener, Kind::listener, "listener"),
                                         a.get(), a.length));
            },
            py::arg("listener"), py::arg("host"), py::arg("port"))
        .def(
            "connect_async",
            [](Core& c, uint64_t connector, uint64_t qp, const std::string& host, uint16_t port,
               ULONG ird, ULONG ord, const std::string& private_data) {
                Address a = address(host, port);
                return status(c.s().connect_async(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector"),
                    c.need<NDK_QP>(qp, Kind::qp, "qp"), a.get(), a.length, ird, ord,
                    bytes_of(private_data)));
            },
            py::arg("connector"), py::arg("qp"), py::arg("host"), py::arg("port"),
            py::arg("ird") = 4, py::arg("ord") = 4, py::arg("private_data") = "")
        .def(
            "wait_connect",
            [](Core& c, uint64_t connector) {
                return done(c.s().wait_connect(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector")));
            },
            py::arg("connector"))
        .def(
            "wait_connect_event",
            [](Core& c, uint64_t listener, int64_t timeout_ms) -> py::object {
                NDK_CONNECTOR* k = c.s().wait_connect_event(
                    c.need<NDK_LISTENER>(listener, Kind::listener, "listener"),
                    std::chrono::milliseconds(timeout_ms));
                return handle_or_none(c.adopt(k, Kind::connector));
            },
            py::arg("listener"), py::arg("timeout_ms") = 5000,
            "The connector of the next incoming connection request, or None after the timeout.")
        .def(
            "accept_async",
            [](Core& c, uint64_t connector, uint64_t qp, ULONG ird, ULONG ord,
               const std::string& private_data) {
                return status(c.s().accept_async(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector"),
                    c.need<NDK_QP>(qp, Kind::qp, "qp"), ird, ord, bytes_of(private_data)));
            },
            py::arg("connector"), py::arg("qp"), py::arg("ird") = 4, py::arg("ord") = 4,
            py::arg("private_data") = "")
        .def(
            "wait_accept",
            [](Core& c, uint64_t connector) {
                return done(c.s().wait_accept(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector")));
            },
            py::arg("connector"))
        .def(
            "complete_connect",
            [](Core& c, uint64_t connector) {
                return done(c.s().complete_connect(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector")));
            },
            py::arg("connector"))
        .def(
            "reject",
            [](Core& c, uint64_t connector, const std::string& private_data) {
                return status(
                    c.s().reject(c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector"),
                                 bytes_of(private_data)));
            },
            py::arg("connector"), py::arg("private_data") = "")
        .def(
            "disconnect",
            [](Core& c, uint64_t connector) {
                return done(c.s().disconnect(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector")));
            },
            py::arg("connector"))
        .def(
            "disconnect_events",
            [](Core& c, uint64_t connector) {
                return c.s().disconnect_events(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector"));
            },
            py::arg("connector"))
        .def(
            "loopback_pair",
            [](Core& c, ULONG rd, ULONG id, ULONG rs, ULONG is, ULONG inl, ULONG cq_depth) {
                QpShape shape{rd, id, rs, is, inl};
                auto p = c.s().loopback_pair(shape, cq_depth);
                uint64_t pd = c.adopt(p.pd, Kind::pd), cq = c.adopt(p.cq, Kind::cq);
                uint64_t a = c.adopt(p.a, Kind::qp), b = c.adopt(p.b, Kind::qp);
                return pair_dict(c, p, pd, cq, a, b);
            },
            py::arg("receive_depth") = 64, py::arg("initiator_depth") = 64,
            py::arg("receive_sge") = 4, py::arg("initiator_sge") = 4, py::arg("inline_size") = 0,
            py::arg("cq_depth") = 256,
            "A PD, one CQ and two QPs connected to each other through a listener on this adapter.")
        .def(
            "connect_pair",
            [](Core& c, uint64_t pd, uint64_t cq, uint64_t a, uint64_t b, const std::string& host,
               uint16_t port) {
                Address address_ = address(host, port);
                auto p = c.s().connect_pair(
                    c.need<NDK_PD>(pd, Kind::pd, "pd"), c.need<NDK_CQ>(cq, Kind::cq, "cq"),
                    c.need<NDK_QP>(a, Kind::qp, "a"), c.need<NDK_QP>(b, Kind::qp, "b"),
                    address_.get(), address_.length);
                return pair_dict(c, p, pd, cq, a, b);
            },
            py::arg("pd"), py::arg("cq"), py::arg("a"), py::arg("b"), py::arg("host") = "127.0.0.1",
            py::arg("port") = 0,
            "Connects QP a (active) to QP b (passive) through a new listener on host:port (port 0: "
            "the provider picks) and new connectors.")
        // ---- Close ----
        .def(
            "close_object",
            [](Core& c, uint64_t object) {
                NTSTATUS st = start_close(c, object);
                Done d{st, st};
                if (st == STATUS_PENDING) d.final_status = finish_close(c, object).final_status;
                return done(d);
            },
            py::arg("object"),
            "NdkCloseObject, awaiting the close completion when it pends (a close that pended "
            "before is awaited, not issued again).")
        .def(
            "close_async", [](Core& c, uint64_t object) { return status(start_close(c, object)); },
            py::arg("object"),
            "NdkCloseObject without waiting: the status it returned. A close that pended is "
            "awaited by wait_close(); meanwhile the object's successors can be closed (CLOSE-02).")
        .def(
            "wait_close", [](Core& c, uint64_t object) { return done(finish_close(c, object)); },
            py::arg("object"), "Awaits the completion of a close that close_async() saw pend.")
        .def(
            "get_connection_data",
            [](Core& c, uint64_t connector, ULONG buffer_length, bool with_buffer,
               bool with_limits) {
                auto d = c.s().get_connection_data(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector"), buffer_length,
                    with_buffer, with_limits);
                py::object limits = py::none();
                if (with_limits)
                    limits = py::make_tuple(d.inbound_read_limit, d.outbound_read_limit);
                return py::make_tuple(
                    status(d.status), d.length, limits,
                    py::bytes(reinterpret_cast<const char*>(d.data.data()), d.data.size()));
            },
            py::arg("connector"), py::arg("buffer_length"), py::arg("with_buffer") = true,
            py::arg("with_limits") = true,
            "NdkGetConnectionData with a buffer of buffer_length bytes (NULL when not "
            "with_buffer) and the read-limit pointers (NULL when not with_limits): (status, "
            "*pPrivateDataLength after, (inbound, outbound) or None, the buffer's bytes). The "
            "harness checks the bytes copied and the bytes past the buffer (CONN-PD-03).")
        .def(
            "accept_ex_async",
            [](Core& c, uint64_t connector, uint64_t qp, ULONG ird, ULONG ord,
               const std::string& private_data) {
                return status(c.s().accept_ex_async(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector"),
                    c.need<NDK_QP>(qp, Kind::qp, "qp"), ird, ord, bytes_of(private_data)));
            },
            py::arg("connector"), py::arg("qp"), py::arg("ird") = 4, py::arg("ord") = 4,
            py::arg("private_data") = "", "NdkAcceptEx (NDKPI 2.1) without waiting.")
        .def(
            "complete_connect_ex",
            [](Core& c, uint64_t connector) {
                return done(c.s().complete_connect_ex(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector")));
            },
            py::arg("connector"), "NdkCompleteConnectEx (NDKPI 2.1).")
        .def(
            "local_address",
            [](Core& c, uint64_t object, ULONG buffer_length) {
                auto a = c.s().local_address(
                    c.need(object, {Kind::connector, Kind::listener, Kind::shared_endpoint},
                           "object"),
                    buffer_length);
                return py::make_tuple(status(a.status), a.length, a.family(), a.port());
            },
            py::arg("object"), py::arg("buffer_length") = 128,
            "NdkGetLocalAddress of a connector, listener or shared endpoint with a "
            "buffer_length-byte buffer: (status, *pAddressLength after, family, port). The oracle "
            "judges the status, the length and the address.")
        .def(
            "peer_address",
            [](Core& c, uint64_t connector, ULONG buffer_length) {
                auto a = c.s().peer_address(
                    c.need<NDK_CONNECTOR>(connector, Kind::connector, "connector"), buffer_length);
                return py::make_tuple(status(a.status), a.length, a.family(), a.port());
            },
            py::arg("connector"), py::arg("buffer_length") = 128,
            "NdkGetPeerAddress with a buffer_length-byte buffer: (status, *pAddressLength after, "
            "family, port).")
        .def(
            "overwrite_dispatch",
            [](Core& c) {
                if (c.trap) return;
                try {
                    c.trap = std::make_unique<conformance::DispatchTrap>(c.s());
                } catch (const conformance::SessionError& e) {
                    throw py::value_error(e.what());
                }
                c.trap->install(c.s().adapter());
                for (const auto& [h, e] : c.live)
                    c.trap->install(e.object);
            },
            "GEN-CREATE-05: points the Dispatch of the adapter, of every open object and of "
            "every object handed out from now on at the harness's trap tables, as a consumer "
            "may. Calls keep working through them; a provider that reads Dispatch after handout "
            "is reported to the oracle. One adapter per process at a time.")
        .def_property_readonly("dispatch_overwritten", [](Core& c) { return c.trap != nullptr; })
        .def(
            "is_open",
            [](Core& c, uint64_t object) { return !c.closed() && c.live.contains(object); },
            py::arg("object"));
    bind_hooks(cls);
}

}  // namespace ndkct::python
