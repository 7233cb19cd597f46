// The reference provider's dispatch tables: every NDKPI function, each a thin translation of
// its arguments into a model call (ndkct/model/translate.hpp) run by Provider::run.
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "provider.hpp"

namespace ndkct::adapters::reference {

namespace calls = model::calls;
using model::context_of;
using model::Observed;

namespace {

template <typename T>
T* self(const void* ndk_object) {
    return const_cast<T*>(static_cast<const T*>(ndk_object));
}

Provider* provider_of(const void* ndk_object) {
    return static_cast<const Object<NDK_PD>*>(ndk_object)->provider;
}

Provider* adapter_of(NDK_ADAPTER* adapter) {
    return reinterpret_cast<Provider*>(adapter);
}

ObjectId id_in(Provider* p, const void* ndk_object) {
    return p->id_of(ndk_object);
}

PendingRequest request(NDK_FN_REQUEST_COMPLETION* completion, void* context) {
    PendingRequest pend;
    pend.kind = PendingRequest::Kind::request;
    pend.request = completion;
    pend.context = context;
    return pend;
}

PendingRequest create(NDK_FN_CREATE_COMPLETION* completion, void* context,
                      std::function<void(void*)> init = {}) {
    PendingRequest pend;
    pend.kind = PendingRequest::Kind::create;
    pend.create = completion;
    pend.context = context;
    pend.init = std::move(init);
    return pend;
}

// GEN-CREATE-01: *ppObject is written only on inline success; AMB-17 says how it looks otherwise.
template <typename Ndk>
NTSTATUS finish_create(Provider* p, NTSTATUS status, ObjectId created, Ndk** out) {
    if (status == STATUS_SUCCESS && created) {
        *out = &p->object<Object<Ndk>>(created)->ndk;
    } else if (status != STATUS_PENDING && p->readings().failed_create_sets_null && out) {
        *out = nullptr;
    }
    return status;
}

// ---- Every object ----

NTSTATUS model_close_object(NDK_OBJECT_HEADER* object, NDK_FN_CLOSE_COMPLETION* completion,
                            PVOID context) {
    Provider* p = provider_of(object);
    PendingRequest pend;
    pend.kind = PendingRequest::Kind::close;
    pend.close = completion;
    pend.context = context;
    pend.event_driven = true;  // CLOSE-02/03: the model says when the close may finish
    pend.object = p->id_of(object);
    // CLOSE-04/07: close inline only when no callback of ours is queued or running.
    bool force = !p->callbacks_idle();
    return p->run(calls::CloseObject{pend.object, completion != nullptr}, nullptr, std::move(pend),
                  nullptr, force);
}

NTSTATUS model_query_extension(NDK_OBJECT_HEADER* object, GUID*, NDK_VERSION,
                               NDK_EXTENSION_INTERFACE*) {
    Provider* p = object->ObjectType == NdkObjectTypeAdapter ? reinterpret_cast<Provider*>(object)
                                                             : provider_of(object);
    return p->run(calls::QueryExtensionInterface{p->id_of(object)}, nullptr, {});  // EXT-01
}

// ---- NDK_ADAPTER_DISPATCH ----

NTSTATUS model_query_adapter_info(NDK_ADAPTER* adapter, NDK_ADAPTER_INFO* info, ULONG* size) {
    Provider* p = adapter_of(adapter);
    if (!size) return STATUS_INVALID_PARAMETER;
    ULONG given = *size;
    return p->run(calls::QueryAdapterInfo{p->adapter_id, given, info != nullptr},
                  [&](Observed& o) {
                      const NDK_ADAPTER_INFO& full =
                          p->model.state_of<model::AdapterState>(p->adapter_id)->info;
                      if (o.status == STATUS_BUFFER_TOO_SMALL) {
                          *size = sizeof(NDK_ADAPTER_INFO);  // AI-05
                      } else if (o.status == STATUS_SUCCESS) {
                          ULONG written = given >= sizeof(NDK_ADAPTER_INFO)
                                              ? sizeof(NDK_ADAPTER_INFO)
                                              : NDK_ADAPTER_INFO_V1_SIZE;
                          std::memcpy(info, &full, written);  // AI-06, AMB-23
                          *size = written;
                          o.adapter_info = full;
                      }
                      o.size_out = *size;
                  },
                  {});
}

NTSTATUS model_create_cq(NDK_ADAPTER* adapter, ULONG depth, NDK_FN_CQ_NOTIFICATION_CALLBACK* notify,
                         PVOID notify_context, GROUP_AFFINITY* affinity,
                         NDK_FN_CREATE_COMPLETION* completion, PVOID context, NDK_CQ** out) {
    Provider* p = adapter_of(adapter);
    ObjectId created = 0;
    NTSTATUS s = p->run(
        calls::CreateCq{p->adapter_id, depth, notify != nullptr, affinity != nullptr}, nullptr,
        create(completion, context,
               [=](void* o) {
                   auto* cq = static_cast<CqObject*>(o);
                   cq->notify = notify;  // CQ-NOT-12
                   cq->notify_context = notify_context;
               }),
        &created);
    return finish_create(p, s, created, out);
}

NTSTATUS model_create_pd(NDK_ADAPTER* adapter, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                         NDK_PD** out) {
    Provider* p = adapter_of(adapter);
    ObjectId created = 0;
    NTSTATUS s =
        p->run(calls::CreatePd{p->adapter_id}, nullptr, create(completion, context), &created);
    return finish_create(p, s, created, out);
}

NTSTATUS model_create_shared_endpoint(NDK_ADAPTER* adapter, const PSOCKADDR address, ULONG length,
                                      NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                                      NDK_SHARED_ENDPOINT** out) {
    Provider* p = adapter_of(adapter);
    ObjectId created = 0;
    NTSTATUS s =
        p->run(calls::CreateSharedEndpoint{p->adapter_id, model::view_address(address, length)},
               nullptr, create(completion, context), &created);
    return finish_create(p, s, created, out);
}

NTSTATUS model_create_connector(NDK_ADAPTER* adapter, NDK_FN_CREATE_COMPLETION* completion,
                                PVOID context, NDK_CONNECTOR** out) {
    Provider* p = adapter_of(adapter);
    ObjectId created = 0;
    NTSTATUS s = p->run(calls::CreateConnector{p->adapter_id}, nullptr, create(completion, context),
                        &created);
    return finish_create(p, s, created, out);
}

NTSTATUS model_create_listener(NDK_ADAPTER* adapter, NDK_FN_CONNECT_EVENT_CALLBACK* event,
                               PVOID event_context, NDK_FN_CREATE_COMPLETION* completion,
                               PVOID context, NDK_LISTENER** out) {
    Provider* p = adapter_of(adapter);
    ObjectId created = 0;
    NTSTATUS s = p->run(calls::CreateListener{p->adapter_id, event != nullptr}, nullptr,
                        create(completion, context,
                               [=](void* o) {
                                   auto* l = static_cast<ListenerObject*>(o);
                                   l->connect_event = event;
                                   l->connect_event_context = event_context;
                               }),
                        &created);
    return finish_create(p, s, created, out);
}

NTSTATUS model_build_lam(NDK_ADAPTER* adapter, MDL* mdl, SIZE_T length,
                         NDK_FN_REQUEST_COMPLETION* completion, PVOID context,
                         NDK_LOGICAL_ADDRESS_MAPPING* lam, ULONG* lam_size, ULONG* fbo) {
    Provider* p = adapter_of(adapter);
    if (!lam_size) return STATUS_INVALID_PARAMETER;
    calls::BuildLam call{p->adapter_id,  model::view_mdl(mdl, length),
                         length,         completion != nullptr,
                         lam != nullptr, *lam_size};
    uint64_t pages = call.mdl.pfns.size();
    ULONG required = static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages));
    // The mapping is written when the request succeeds (inline, or just before the callback).
    auto write = [=](Observed& o) {
        if (o.status == STATUS_BUFFER_TOO_SMALL) {  // LAM-SIZE-01, LAM-SIZE-04
            *lam_size = required;
            o.size_out = required;
            if (p->readings().reference.write_fbo_on_buffer_too_small && fbo)
                *fbo = call.mdl.first_byte_offset;
            return;
        }
        if (o.status != STATUS_SUCCESS && o.status != STATUS_PENDING) return;
        lam->AdapterContext = nullptr;
        lam->AdapterPageCount = static_cast<ULONG>(pages);
        for (uint64_t i = 0; i < pages; ++i) {
            lam->AdapterPageArray[i].QuadPart =
                static_cast<LONG64>(p->logical_address(call.mdl.pfns[i]));
            o.lam_pages.push_back(static_cast<uint64_t>(lam->AdapterPageArray[i].QuadPart));
        }
        *lam_size = required;                        // LAM-OUT-02
        if (fbo) *fbo = call.mdl.first_byte_offset;  // LAM-OUT-03
        o.size_out = required;
        o.fbo_out = call.mdl.first_byte_offset;
    };
    PendingRequest pend = request(completion, context);
    pend.outputs = [write](Observed& o) {
        o.status = STATUS_SUCCESS;
        write(o);
    };
    return p->run(call, write, std::move(pend));
}

VOID model_release_lam(NDK_ADAPTER* adapter, NDK_LOGICAL_ADDRESS_MAPPING* lam) {
    Provider* p = adapter_of(adapter);
    if (!lam || lam->AdapterPageCount == 0) return;
    // Find the LAM by its whole page array: a logical address names a page, so two live LAMs
    // over the same page share it (the first page alone once released the wrong one). LAMs
    // with equal arrays are interchangeable.
    ObjectId id = 0;
    {
        std::lock_guard lock(p->mutex);
        auto same_pages = [&](const model::LamState& state) {
            if (state.logical_pages.size() != lam->AdapterPageCount) return false;
            for (ULONG k = 0; k < lam->AdapterPageCount; ++k)
                if (state.logical_pages[k] !=
                    static_cast<uint64_t>(lam->AdapterPageArray[k].QuadPart))
                    return false;
            return true;
        };
        for (ObjectId i = 1; i < p->model.object_count() + 1 && id == 0; ++i) {
            const auto* state = p->model.state_of<model::LamState>(i);
            const model::Object* o = p->model.find(i);
            if (state && o->life == model::Life::ready && same_pages(*state)) id = i;
        }
    }
    p->run_void(calls::ReleaseLam{p->adapter_id, id}, nullptr);  // RLAM-01
}

// ---- NDK_CQ_DISPATCH ----

NTSTATUS model_resize_cq(NDK_CQ* cq, ULONG depth, NDK_FN_REQUEST_COMPLETION* completion,
                         PVOID context) {
    Provider* p = provider_of(cq);
    return p->run(calls::ResizeCq{id_in(p, cq), depth}, nullptr, request(completion, context));
}

VOID model_arm_cq(NDK_CQ* cq, ULONG type) {
    Provider* p = provider_of(cq);
    p->run_void(calls::ArmCq{id_in(p, cq), type}, nullptr);
}

template <typename Result>
ULONG get_results(NDK_CQ* cq, Result* results, ULONG count, bool ex) {
    Provider* p = provider_of(cq);
    ObjectId id = id_in(p, cq);
    Observed o = p->run_void(calls::GetCqResults{id, count, ex}, [&](Observed& out) {
        const auto& entries = p->model.cq_entries(id);
        ULONG n = static_cast<ULONG>(std::min<size_t>(count, entries.size()));
        std::vector<ULONG> order(n);
        for (ULONG i = 0; i < n; ++i)
            order[i] = i;
        // reference_provider.completion_order = relaxed (AMB-35: no page promises one queue's
        // posting order): neighbours of one queue in this batch trade places on a seeded coin,
        // so a consumer that assumes the order shows it. Never around a READ_FENCE request
        // (FR-FENCE-01, WR-FENCE-01 are documented orders). The batch holds the same entries.
        if (p->readings().reference.relaxed_completion_order)
            for (ULONG i = 1; i < n; ++i) {
                const model::Completion& a = entries[order[i - 1]];
                const model::Completion& b = entries[order[i]];
                if (a.qp == b.qp && a.receive_queue == b.receive_queue && !a.read_fence &&
                    !b.read_fence && p->coin())
                    std::swap(order[i - 1], order[i]);
            }
        for (ULONG i = 0; i < n; ++i) {
            const model::Completion& c = entries[order[i]];
            Result& r = results[i];
            r = Result{};
            r.Status = c.outcome == model::Completion::Outcome::success ? STATUS_SUCCESS : c.status;
            r.BytesTransferred = c.bytes_transferred;                 // CQ-RES-01
            r.QPContext = model::pointer_of(c.qp_context);            // CQ-RES-02
            r.RequestContext = model::pointer_of(c.request_context);  // CQ-RES-05
            if constexpr (std::is_same_v<Result, NDK_RESULT_EX>) {
                r.Type = c.type;          // CQ-RES-03
                r.ProviderErrorCode = 0;  // CQ-RES-04
                r.TypeSpecificCompletionOutput =
                    c.invalidated ? c.invalidated_token : 0;  // CQ-RES-07
            }
        }
        out.value = n;
    });
    return o.value;
}

ULONG model_get_cq_results(NDK_CQ* cq, NDK_RESULT results[], ULONG count) {
    return get_results(cq, results, count, false);
}

ULONG model_get_cq_results_ex(NDK_CQ* cq, NDK_RESULT_EX results[], ULONG count) {
    return get_results(cq, results, count, true);
}

NTSTATUS model_control_cq_interrupt_moderation(NDK_CQ* cq, ULONG interval, ULONG count) {
    Provider* p = provider_of(cq);
    return p->run(calls::ControlCqInterruptModeration{id_in(p, cq), interval, count}, nullptr, {});
}

// ---- NDK_MR_DISPATCH ----

NTSTATUS model_register_mr(NDK_MR* mr, MDL* mdl, SIZE_T length, ULONG flags,
                           NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    Provider* p = provider_of(mr);
    return p->run(calls::RegisterMr{id_in(p, mr), model::view_mdl(mdl, length), length, flags},
                  nullptr, request(completion, context));
}

NTSTATUS model_deregister_mr(NDK_MR* mr, NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    Provider* p = provider_of(mr);
    return p->run(calls::DeregisterMr{id_in(p, mr)}, nullptr, request(completion, context));
}

NTSTATUS model_initialize_fast_register_mr(NDK_MR* mr, ULONG pages, BOOLEAN remote_access,
                                           NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    Provider* p = provider_of(mr);
    return p->run(calls::InitializeFastRegisterMr{id_in(p, mr), pages, remote_access != 0}, nullptr,
                  request(completion, context));
}

UINT32 mr_token(NDK_MR* mr, bool remote) {
    Provider* p = provider_of(mr);
    ObjectId id = id_in(p, mr);
    auto fill = [&](Observed& o) {
        const auto* state = p->model.state_of<model::MrState>(id);
        const auto& known = remote ? state->remote_token : state->local_token;
        o.value = known ? *known : p->new_token();  // TOK-01/02: stable per registration
    };
    if (remote) return p->run_void(calls::GetRemoteTokenFromMr{id}, fill).value;
    return p->run_void(calls::GetLocalTokenFromMr{id}, fill).value;
}

UINT32 model_get_remote_token_from_mr(NDK_MR* mr) {
    return mr_token(mr, true);
}
UINT32 model_get_local_token_from_mr(NDK_MR* mr) {
    return mr_token(mr, false);
}

// ---- NDK_MW_DISPATCH ----

UINT32 model_get_remote_token_from_mw(NDK_MW* mw) {
    Provider* p = provider_of(mw);
    ObjectId id = id_in(p, mw);
    return p
        ->run_void(calls::GetRemoteTokenFromMw{id},
                   [&](Observed& o) {
                       const auto* state = p->model.state_of<model::MwState>(id);
                       o.value =
                           state->remote_token ? *state->remote_token : p->new_token();  // MW-02
                   })
        .value;
}

// ---- NDK_SRQ_DISPATCH ----

NTSTATUS model_modify_srq(NDK_SRQ* srq, ULONG depth, ULONG threshold,
                          NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    Provider* p = provider_of(srq);
    return p->run(calls::ModifySrq{id_in(p, srq), depth, threshold}, nullptr,
                  request(completion, context));
}

NTSTATUS model_srq_receive(NDK_SRQ* srq, PVOID context, const NDK_SGE* sgl, ULONG count) {
    Provider* p = provider_of(srq);
    return p->run(
        calls::SrqReceive{id_in(p, srq), context_of(context), model::view_sgl(sgl, count)}, nullptr,
        {});
}

// ---- NDK_QP_DISPATCH ----

VOID model_flush(NDK_QP* qp) {
    Provider* p = provider_of(qp);
    p->run_void(calls::Flush{id_in(p, qp)}, nullptr);  // FLS-01
}

std::vector<std::byte> payload_if_inline(const NDK_SGE* sgl, ULONG count, ULONG flags) {
    return flags & NDK_OP_FLAG_INLINE ? model::inline_payload(sgl, count)
                                      : std::vector<std::byte>{};
}

NTSTATUS model_send(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, ULONG flags) {
    Provider* p = provider_of(qp);
    return p->run(calls::Send{id_in(p, qp), context_of(context), model::view_sgl(sgl, count), flags,
                              payload_if_inline(sgl, count, flags)},
                  nullptr, {});
}

NTSTATUS model_receive(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count) {
    Provider* p = provider_of(qp);
    return p->run(calls::Receive{id_in(p, qp), context_of(context), model::view_sgl(sgl, count)},
                  nullptr, {});
}

NTSTATUS model_bind(NDK_QP* qp, PVOID context, NDK_MR* mr, NDK_MW* mw, PVOID va, SIZE_T length,
                    ULONG flags) {
    Provider* p = provider_of(qp);
    return p->run(calls::Bind{id_in(p, qp), context_of(context), id_in(p, mr), id_in(p, mw),
                              context_of(va), length, flags},
                  nullptr, {});
}

NTSTATUS model_fast_register(NDK_QP* qp, PVOID context, NDK_MR* mr, ULONG count,
                             const NDK_LOGICAL_ADDRESS* pages, ULONG fbo, SIZE_T length, PVOID base,
                             ULONG flags) {
    Provider* p = provider_of(qp);
    calls::FastRegister call{id_in(p, qp), context_of(context), id_in(p, mr), {}, fbo,
                             length,       context_of(base),    flags};
    if (pages)
        for (ULONG i = 0; i < count; ++i)
            call.adapter_pages.push_back(static_cast<uint64_t>(pages[i].QuadPart));
    return p->run(call, nullptr, {});
}

NTSTATUS model_invalidate(NDK_QP* qp, PVOID context, NDK_OBJECT_HEADER* target, ULONG flags) {
    Provider* p = provider_of(qp);
    return p->run(calls::Invalidate{id_in(p, qp), context_of(context), id_in(p, target), flags},
                  nullptr, {});
}

NTSTATUS model_read(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, UINT64 address,
                    UINT32 token, ULONG flags) {
    Provider* p = provider_of(qp);
    return p->run(calls::Read{id_in(p, qp), context_of(context), model::view_sgl(sgl, count),
                              address, token, flags},
                  nullptr, {});
}

NTSTATUS model_write(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count, UINT64 address,
                     UINT32 token, ULONG flags) {
    Provider* p = provider_of(qp);
    return p->run(calls::Write{id_in(p, qp), context_of(context), model::view_sgl(sgl, count),
                               address, token, flags, payload_if_inline(sgl, count, flags)},
                  nullptr, {});
}

NTSTATUS model_send_and_invalidate(NDK_QP* qp, PVOID context, const NDK_SGE* sgl, ULONG count,
                                   ULONG flags, UINT32 token) {
    Provider* p = provider_of(qp);
    return p->run(
        calls::SendAndInvalidate{id_in(p, qp), context_of(context), model::view_sgl(sgl, count),
                                 flags, token, payload_if_inline(sgl, count, flags)},
        nullptr, {});
}

// ---- NDK_PD_DISPATCH ----

NTSTATUS model_create_mr(NDK_PD* pd, BOOLEAN fast_register, NDK_FN_CREATE_COMPLETION* completion,
                         PVOID context, NDK_MR** out) {
    Provider* p = provider_of(pd);
    ObjectId created = 0;
    NTSTATUS s = p->run(calls::CreateMr{id_in(p, pd), fast_register != 0}, nullptr,
                        create(completion, context), &created);
    return finish_create(p, s, created, out);
}

NTSTATUS model_create_mw(NDK_PD* pd, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                         NDK_MW** out) {
    Provider* p = provider_of(pd);
    ObjectId created = 0;
    NTSTATUS s =
        p->run(calls::CreateMw{id_in(p, pd)}, nullptr, create(completion, context), &created);
    return finish_create(p, s, created, out);
}

NTSTATUS model_create_srq(NDK_PD* pd, ULONG depth, ULONG max_sge, ULONG threshold,
                          NDK_FN_SRQ_NOTIFICATION_CALLBACK* notify, PVOID notify_context,
                          GROUP_AFFINITY*, NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                          NDK_SRQ** out) {
    Provider* p = provider_of(pd);
    ObjectId created = 0;
    NTSTATUS s = p->run(
        calls::CreateSrq{id_in(p, pd), depth, max_sge, threshold, notify != nullptr}, nullptr,
        create(completion, context,
               [=](void* o) {
                   auto* srq = static_cast<SrqObject*>(o);
                   srq->notify = notify;
                   srq->notify_context = notify_context;
               }),
        &created);
    return finish_create(p, s, created, out);
}

NTSTATUS model_create_qp(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq, PVOID qp_context,
                         ULONG receive_depth, ULONG initiator_depth, ULONG max_receive_sge,
                         ULONG max_initiator_sge, ULONG inline_size,
                         NDK_FN_CREATE_COMPLETION* completion, PVOID context, NDK_QP** out) {
    Provider* p = provider_of(pd);
    ObjectId created = 0;
    NTSTATUS s = p->run(calls::CreateQp{id_in(p, pd), id_in(p, receive_cq), id_in(p, initiator_cq),
                                        context_of(qp_context), receive_depth, initiator_depth,
                                        max_receive_sge, max_initiator_sge, inline_size},
                        nullptr, create(completion, context), &created);
    return finish_create(p, s, created, out);
}

NTSTATUS model_create_qp_with_srq(NDK_PD* pd, NDK_CQ* receive_cq, NDK_CQ* initiator_cq,
                                  NDK_SRQ* srq, PVOID qp_context, ULONG initiator_depth,
                                  ULONG max_initiator_sge, ULONG inline_size,
                                  NDK_FN_CREATE_COMPLETION* completion, PVOID context,
                                  NDK_QP** out) {
    Provider* p = provider_of(pd);
    ObjectId created = 0;
    NTSTATUS s =
        p->run(calls::CreateQpWithSrq{id_in(p, pd), id_in(p, receive_cq), id_in(p, initiator_cq),
                                      id_in(p, srq), context_of(qp_context), initiator_depth,
                                      max_initiator_sge, inline_size},
               nullptr, create(completion, context), &created);
    return finish_create(p, s, created, out);
}

VOID model_get_privileged_memory_region_token(NDK_PD* pd, UINT32* token) {
    Provider* p = provider_of(pd);
    ObjectId id = id_in(p, pd);
    Observed o = p->run_void(calls::GetPrivilegedMemoryRegionToken{id}, [&](Observed& out) {
        const auto* state = p->model.state_of<model::PdState>(id);
        out.value = state->privileged_token ? *state->privileged_token : p->new_token();  // PTOK-01
    });
    if (token) *token = o.value;
}

// ---- Addresses ----

NTSTATUS write_address(const model::SocketAddress& a, PSOCKADDR out, ULONG* length, Observed& o) {
    ULONG need = a.family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    if (!length) return STATUS_INVALID_PARAMETER;
    if (o.status == STATUS_BUFFER_TOO_SMALL || *length < need) {
        *length = need;  // CONN-ADDR-01
        o.size_out = need;
        return STATUS_BUFFER_TOO_SMALL;
    }
    if (a.family == AF_INET6) {
        sockaddr_in6 in6{};
        in6.sin6_family = AF_INET6;
        in6.sin6_port = htons(a.port);
        std::memcpy(&in6.sin6_addr, a.address.data(), 16);
        std::memcpy(out, &in6, sizeof in6);
    } else {
        sockaddr_in in{};
        in.sin_family = AF_INET;
        in.sin_port = htons(a.port);
        std::memcpy(&in.sin_addr, a.address.data(), 4);
        std::memcpy(out, &in, sizeof in);
    }
    *length = need;  // CONN-ADDR-02
    o.size_out = need;
    o.address = a;
    return STATUS_SUCCESS;
}

model::SocketAddress address_of(Provider* p, ObjectId id) {
    if (const auto* l = p->model.state_of<model::ListenerState>(id)) return l->address;
    if (const auto* s = p->model.state_of<model::SharedEndpointState>(id)) return s->address;
    if (const auto* c = p->model.state_of<model::ConnectorState>(id)) return c->local;
    return {};
}

NTSTATUS get_local_address(const void* object, PSOCKADDR address, ULONG* length) {
    Provider* p = provider_of(object);
    ObjectId id = id_in(p, object);
    if (!length) return STATUS_INVALID_PARAMETER;
    return p->run(calls::GetLocalAddress{id, *length},
                  [&](Observed& o) { write_address(address_of(p, id), address, length, o); }, {});
}

NTSTATUS model_get_shared_endpoint_local_address(NDK_SHARED_ENDPOINT* e, PSOCKADDR a, ULONG* l) {
    return get_local_address(e, a, l);
}
NTSTATUS model_get_listener_local_address(NDK_LISTENER* e, PSOCKADDR a, ULONG* l) {
    return get_local_address(e, a, l);
}
NTSTATUS model_get_local_address(NDK_CONNECTOR* e, PSOCKADDR a, ULONG* l) {
    return get_local_address(e, a, l);
}

NTSTATUS model_get_peer_address(NDK_CONNECTOR* connector, PSOCKADDR address, ULONG* length) {
    Provider* p = provider_of(connector);
    ObjectId id = id_in(p, connector);
    if (!length) return STATUS_INVALID_PARAMETER;
    return p->run(calls::GetPeerAddress{id, *length},
                  [&](Observed& o) {
                      write_address(p->model.state_of<model::ConnectorState>(id)->remote, address,
                                    length, o);
                  },
                  {});
}

// ---- NDK_CONNECTOR_DISPATCH ----

void keep_private_data(ConnectorObject* c, const void* data, ULONG length) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    c->private_data.assign(bytes, bytes ? bytes + length : bytes);
}

NTSTATUS model_connect(NDK_CONNECTOR* connector, NDK_QP* qp, const PSOCKADDR source,
                       ULONG source_length, const PSOCKADDR destination, ULONG destination_length,
                       ULONG ird, ULONG ord, const PVOID private_data, ULONG private_length,
                       NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    Provider* p = provider_of(connector);
    keep_private_data(self<ConnectorObject>(connector), private_data, private_length);
    PendingRequest pend = request(completion, context);
    pend.event_driven = true;  // completes when the peer accepts or rejects
    return p->run(calls::Connect{id_in(p, connector), id_in(p, qp),
                                 model::view_address(source, source_length),
                                 model::view_address(destination, destination_length), ird, ord,
                                 private_length},
                  nullptr, std::move(pend), nullptr, true);
}

NTSTATUS model_connect_with_shared_endpoint(NDK_CONNECTOR* connector, NDK_QP* qp,
                                            NDK_SHARED_ENDPOINT* endpoint,
                                            const PSOCKADDR destination, ULONG destination_length,
                                            ULONG ird, ULONG ord, const PVOID private_data,
                                            ULONG private_length,
                                            NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    Provider* p = provider_of(connector);
    keep_private_data(self<ConnectorObject>(connector), private_data, private_length);
    PendingRequest pend = request(completion, context);
    pend.event_driven = true;
    return p->run(
        calls::ConnectWithSharedEndpoint{id_in(p, connector), id_in(p, qp), id_in(p, endpoint),
                                         model::view_address(destination, destination_length), ird,
                                         ord, private_length},
        nullptr, std::move(pend), nullptr, true);
}

NTSTATUS complete_connect(NDK_CONNECTOR* connector, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                          NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event_ex, PVOID event_context,
                          NDK_FN_REQUEST_COMPLETION* completion, PVOID context, bool ex) {
    Provider* p = provider_of(connector);
    auto* c = self<ConnectorObject>(connector);
    c->disconnect = event;
    c->disconnect_ex = event_ex;
    c->disconnect_context = event_context;
    return p->run(calls::CompleteConnect{id_in(p, connector), ex, event || event_ex}, nullptr,
                  request(completion, context));
}

NTSTATUS model_complete_connect(NDK_CONNECTOR* c, NDK_FN_DISCONNECT_EVENT_CALLBACK* e, PVOID ec,
                                NDK_FN_REQUEST_COMPLETION* r, PVOID rc) {
    return complete_connect(c, e, nullptr, ec, r, rc, false);
}

NTSTATUS model_complete_connect_ex(NDK_CONNECTOR* c, NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* e,
                                   PVOID ec, NDK_FN_REQUEST_COMPLETION* r, PVOID rc) {
    return complete_connect(c, nullptr, e, ec, r, rc, true);
}

NTSTATUS accept(NDK_CONNECTOR* connector, NDK_QP* qp, ULONG ird, ULONG ord, const PVOID data,
                ULONG length, NDK_FN_DISCONNECT_EVENT_CALLBACK* event,
                NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* event_ex, PVOID event_context,
                NDK_FN_REQUEST_COMPLETION* completion, PVOID context, bool ex) {
    Provider* p = provider_of(connector);
    auto* c = self<ConnectorObject>(connector);
    c->disconnect = event;
    c->disconnect_ex = event_ex;
    c->disconnect_context = event_context;
    keep_private_data(c, data, length);
    {
        std::lock_guard lock(p->mutex);
        const auto* state = p->model.state_of<model::ConnectorState>(c->id);
        if (state)
            if (auto* active = p->object<ConnectorObject>(state->peer))
                active->peer_private_data = c->private_data;
    }
    PendingRequest pend = request(completion, context);
    pend.event_driven = true;  // completes when the active side completes the connection
    return p->run(
        calls::Accept{id_in(p, connector), id_in(p, qp), ird, ord, length, ex, event || event_ex},
        nullptr, std::move(pend), nullptr, true);
}

NTSTATUS model_accept(NDK_CONNECTOR* c, NDK_QP* q, ULONG ird, ULONG ord, const PVOID d, ULONG l,
                      NDK_FN_DISCONNECT_EVENT_CALLBACK* e, PVOID ec, NDK_FN_REQUEST_COMPLETION* r,
                      PVOID rc) {
    return accept(c, q, ird, ord, d, l, e, nullptr, ec, r, rc, false);
}

NTSTATUS model_accept_ex(NDK_CONNECTOR* c, NDK_QP* q, ULONG ird, ULONG ord, const PVOID d, ULONG l,
                         NDK_FN_DISCONNECT_EVENT_CALLBACK_EX* e, PVOID ec,
                         NDK_FN_REQUEST_COMPLETION* r, PVOID rc) {
    return accept(c, q, ird, ord, d, l, nullptr, e, ec, r, rc, true);
}

NTSTATUS model_reject(NDK_CONNECTOR* connector, const PVOID data, ULONG length) {
    Provider* p = provider_of(connector);
    keep_private_data(self<ConnectorObject>(connector), data, length);
    return p->run(calls::Reject{id_in(p, connector), length}, nullptr, {});
}

NTSTATUS model_get_connection_data(NDK_CONNECTOR* connector, ULONG* ird, ULONG* ord, PVOID data,
                                   ULONG* length) {
    Provider* p = provider_of(connector);
    auto* c = self<ConnectorObject>(connector);
    if (!length) return STATUS_INVALID_PARAMETER;
    ULONG given = *length;
    return p->run(
        calls::GetConnectionData{c->id, data != nullptr, given},
        [&](Observed& o) {
            ULONG rds = static_cast<ULONG>(c->peer_private_data.size());
            // No private data: nothing to copy (and an empty vector's data() may be NULL, which
            // memcpy must not get even for 0 bytes; UBSan stopped every property run on it).
            if (data && rds > 0)
                std::memcpy(data, c->peer_private_data.data(), std::min(given, rds));  // CONN-PD-03
            *length = rds;                                                             // CONN-PD-05
            o.size_out = rds;
            const auto* state = p->model.state_of<model::ConnectorState>(c->id);
            const NDK_ADAPTER_INFO& info =
                p->model.state_of<model::AdapterState>(p->adapter_id)->info;
            ULONG in = std::min<ULONG>(state ? state->inbound_read_limit : 0,
                                       info.MaxInboundReadLimit);  // CONN-RL-01
            ULONG out =
                std::min<ULONG>(state ? state->outbound_read_limit : 0, info.MaxOutboundReadLimit);
            if (ird) *ird = in;
            if (ord) *ord = out;
            o.inbound_read_limit = in;
            o.outbound_read_limit = out;
        },
        {});
}

NTSTATUS model_disconnect(NDK_CONNECTOR* connector, NDK_FN_REQUEST_COMPLETION* completion,
                          PVOID context) {
    Provider* p = provider_of(connector);
    return p->run(calls::Disconnect{id_in(p, connector)}, nullptr, request(completion, context));
}

// ---- NDK_LISTENER_DISPATCH ----

NTSTATUS model_listen(NDK_LISTENER* listener, const PSOCKADDR address, ULONG length,
                      NDK_FN_REQUEST_COMPLETION* completion, PVOID context) {
    Provider* p = provider_of(listener);
    return p->run(calls::Listen{id_in(p, listener), model::view_address(address, length)}, nullptr,
                  request(completion, context));
}

VOID model_control_connect_events(NDK_LISTENER* listener, BOOLEAN pause) {
    Provider* p = provider_of(listener);
    p->run_void(calls::ControlConnectEvents{id_in(p, listener), pause != 0}, nullptr);
}

}  // namespace

// ---- The tables (GEN-MAND-01: every member set) ----

const NDK_ADAPTER_DISPATCH kAdapterDispatch = {
    .NdkQueryExtension = model_query_extension,
    .NdkQueryAdapterInfo = model_query_adapter_info,
    .NdkCreateCq = model_create_cq,
    .NdkCreatePd = model_create_pd,
    .NdkCreateSharedEndpoint = model_create_shared_endpoint,
    .NdkCreateConnector = model_create_connector,
    .NdkCreateListener = model_create_listener,
    .NdkBuildLAM = model_build_lam,
    .NdkReleaseLAM = model_release_lam,
};

const NDK_PD_DISPATCH kPdDispatch = {
    .NdkClosePd = model_close_object,
    .NdkQueryExtension = model_query_extension,
    .NdkCreateMr = model_create_mr,
    .NdkCreateMw = model_create_mw,
    .NdkCreateSrq = model_create_srq,
    .NdkCreateQp = model_create_qp,
    .NdkCreateQpWithSrq = model_create_qp_with_srq,
    .NdkGetPrivilegedMemoryRegionToken = model_get_privileged_memory_region_token,
};

const NDK_CQ_DISPATCH kCqDispatch = {
    .NdkCloseCq = model_close_object,
    .NdkQueryExtension = model_query_extension,
    .NdkResizeCq = model_resize_cq,
    .NdkArmCq = model_arm_cq,
    .NdkGetCqResults = model_get_cq_results,
    .NdkControlCqInterruptModeration = model_control_cq_interrupt_moderation,
    .NdkGetCqResultsEx = model_get_cq_results_ex,
};

const NDK_MR_DISPATCH kMrDispatch = {
    .NdkCloseMr = model_close_object,
    .NdkQueryExtension = model_query_extension,
    .NdkRegisterMr = model_register_mr,
    .NdkDeregisterMr = model_deregister_mr,
    .NdkInitializeFastRegisterMr = model_initialize_fast_register_mr,
    .NdkGetRemoteTokenFromMr = model_get_remote_token_from_mr,
    .NdkGetLocalTokenFromMr = model_get_local_token_from_mr,
};

const NDK_MW_DISPATCH kMwDispatch = {
    .NdkCloseMw = model_close_object,
    .NdkQueryExtension = model_query_extension,
    .NdkGetRemoteTokenFromMw = model_get_remote_token_from_mw,
};

const NDK_QP_DISPATCH kQpDispatch = {
    .NdkCloseQp = model_close_object,
    .NdkQueryExtension = model_query_extension,
    .NdkFlush = model_flush,
    .NdkSend = model_send,
    .NdkReceive = model_receive,
    .NdkBind = model_bind,
    .NdkFastRegister = model_fast_register,
    .NdkInvalidate = model_invalidate,
    .NdkRead = model_read,
    .NdkWrite = model_write,
    .NdkSendAndInvalidate = model_send_and_invalidate,
};

const NDK_SRQ_DISPATCH kSrqDispatch = {
    .NdkCloseSrq = model_close_object,
    .NdkQueryExtension = model_query_extension,
    .NdkModifySrq = model_modify_srq,
    .NdkSrqReceive = model_srq_receive,
};

const NDK_CONNECTOR_DISPATCH kConnectorDispatch = {
    .NdkCloseConnector = model_close_object,
    .NdkQueryExtension = model_query_extension,
    .NdkConnect = model_connect,
    .NdkConnectWithSharedEndpoint = model_connect_with_shared_endpoint,
    .NdkCompleteConnect = model_complete_connect,
    .NdkAccept = model_accept,
    .NdkReject = model_reject,
    .NdkGetConnectionData = model_get_connection_data,
    .NdkGetLocalAddress = model_get_local_address,
    .NdkGetPeerAddress = model_get_peer_address,
    .NdkDisconnect = model_disconnect,
    .NdkCompleteConnectEx = model_complete_connect_ex,
    .NdkAcceptEx = model_accept_ex,
};

const NDK_LISTENER_DISPATCH kListenerDispatch = {
    .NdkCloseListener = model_close_object,
    .NdkQueryExtension = model_query_extension,
    .NdkListen = model_listen,
    .NdkGetLocalAddress = model_get_listener_local_address,
    .NdkControlConnectEvents = model_control_connect_events,
};

const NDK_SHARED_ENDPOINT_DISPATCH kSharedEndpointDispatch = {
    .NdkCloseSharedEndpoint = model_close_object,
    .NdkQueryExtension = model_query_extension,
    .NdkGetLocalAddress = model_get_shared_endpoint_local_address,
};

}  // namespace ndkct::adapters::reference
