// The Session's NDK calls on host memory and the adapter: buffers and SGEs, NdkQueryAdapterInfo,
// the adapter's creates, NdkBuildLam and NdkReleaseLam.
#include "ndkct/conformance/session.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "ndkct/model/translate.hpp"
#include "ndkct/platform/spin.hpp"
#include "ndkct/spec/hex.hpp"
#include "ndkct/spec/status.hpp"
#include "session_internal.hpp"

namespace ndkct::conformance {

// ---- Host memory ----

platform::LockedBuffer Session::buffer(size_t bytes, platform::Placement placement) {
    return arena_->allocate(bytes, placement);
}

NDK_SGE Session::sge(const platform::LockedBuffer& buffer, size_t offset, ULONG length,
                     UINT32 token) {
    NDK_SGE s{};
    s.VirtualAddress = buffer.data() + offset;
    s.Length = length;
    s.MemoryRegionToken = token;
    return s;
}

// ---- Adapter ----

NTSTATUS Session::query_adapter_info(NDK_ADAPTER_INFO* info, ULONG* size) {
    ULONG given = size ? *size : 0;
    calls::QueryAdapterInfo call{id(adapter_), given, info != nullptr};
    InFlight flight(*this, call, {{adapter_, "adapter"}});
    NTSTATUS status =
        table<NDK_ADAPTER_DISPATCH>(adapter_).NdkQueryAdapterInfo(adapter_, info, size);
    flight.returned(status);
    Observed o;
    o.status = status;
    if (size) o.size_out = *size;
    if (status == STATUS_SUCCESS && info) {
        NDK_ADAPTER_INFO copy{};
        std::memcpy(&copy, info, std::min<size_t>(given, sizeof copy));
        o.adapter_info = copy;
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(call, o).verdict);
    return status;
}

Made<NDK_CQ> Session::create_cq(ULONG depth, bool with_notification) {
    EventRecord* r = new_event_record();
    auto made = create<NDK_CQ>(
        calls::CreateCq{id(adapter_), depth, with_notification, false},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_CQ** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreateCq(
                adapter_, depth, with_notification ? on_cq_notification : nullptr, r, nullptr, done,
                ctx, out);
        },
        "NdkCreateCq", adapter_);
    r->object = made.object;
    if (made.object) event_records_[made.object] = r;
    return made;
}

Made<NDK_PD> Session::create_pd() {
    return create<NDK_PD>(
        calls::CreatePd{id(adapter_)},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_PD** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreatePd(adapter_, done, ctx, out);
        },
        "NdkCreatePd", adapter_);
}

Made<NDK_SHARED_ENDPOINT> Session::create_shared_endpoint(const sockaddr* address, ULONG length) {
    return create<NDK_SHARED_ENDPOINT>(
        calls::CreateSharedEndpoint{id(adapter_), model::view_address(address, length)},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_SHARED_ENDPOINT** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreateSharedEndpoint(
                adapter_, const_cast<sockaddr*>(address), length, done, ctx, out);
        },
        "NdkCreateSharedEndpoint", adapter_);
}

Made<NDK_CONNECTOR> Session::create_connector() {
    return create<NDK_CONNECTOR>(
        calls::CreateConnector{id(adapter_)},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_CONNECTOR** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreateConnector(adapter_, done, ctx,
                                                                            out);
        },
        "NdkCreateConnector", adapter_);
}

Made<NDK_LISTENER> Session::create_listener() {
    EventRecord* r = new_event_record();
    auto made = create<NDK_LISTENER>(
        calls::CreateListener{id(adapter_), true},
        [&](NDK_FN_CREATE_COMPLETION* done, void* ctx, NDK_LISTENER** out) {
            return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkCreateListener(
                adapter_, on_connect_event, r, done, ctx, out);
        },
        "NdkCreateListener", adapter_);
    r->object = made.object;
    if (made.object) event_records_[made.object] = r;
    return made;
}

std::vector<NDK_LOGICAL_ADDRESS> LamResult::pages() {
    std::vector<NDK_LOGICAL_ADDRESS> out;
    auto* m = mapping();
    if (!m || !done.ok()) return out;
    size_t room = (storage.size() - offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray)) /
                  sizeof(NDK_LOGICAL_ADDRESS);
    for (ULONG i = 0; i < m->AdapterPageCount && i < room; ++i)
        out.push_back(m->AdapterPageArray[i]);
    return out;
}

LamResult Session::build_lam(MDL* mdl, SIZE_T length, ULONG buffer_size, bool with_buffer,
                             bool with_completion) {
    LamResult lam;
    lam.size_in = buffer_size;
    if (with_buffer)
        lam.storage.assign(std::max<size_t>(buffer_size, sizeof(NDK_LOGICAL_ADDRESS_MAPPING)),
                           std::byte{0xCD});
    // Out-parameters live on the heap: a build issued from a hook is finished after this
    // returns (finish_deferred), and the provider writes them then.
    struct Outputs {
        ULONG size;
        ULONG fbo = 0xFFFFFFFF;
    };
    auto out = std::make_shared<Outputs>(Outputs{buffer_size});
    ULONG& size = out->size;
    ULONG& fbo = out->fbo;
    lam.mdl = mdl;
    lam.mdl_snapshot = snapshot_mdl_chain(mdl);
    calls::BuildLam call{id(adapter_), model::view_mdl(mdl, length),
                         length,       with_completion,
                         with_buffer,  buffer_size};
    auto outputs = [out, mapping = lam.mapping(), room_bytes = lam.storage.size(),
                    with_buffer](Observed& o) {
        o.size_out = out->size;
        if (out->fbo != 0xFFFFFFFF) o.fbo_out = out->fbo;
        if (o.status == STATUS_SUCCESS && with_buffer && mapping) {
            size_t room = (room_bytes - offsetof(NDK_LOGICAL_ADDRESS_MAPPING, AdapterPageArray)) /
                          sizeof(NDK_LOGICAL_ADDRESS);
            for (ULONG i = 0; i < mapping->AdapterPageCount && i < room; ++i)
                o.lam_pages.push_back(static_cast<uint64_t>(mapping->AdapterPageArray[i].QuadPart));
        }
    };
    if (with_completion) {
        lam.done = request(
            call,
            [&](NDK_FN_REQUEST_COMPLETION* done, void* ctx) {
                return table<NDK_ADAPTER_DISPATCH>(adapter_).NdkBuildLAM(
                    adapter_, mdl, length, done, ctx, lam.mapping(), &size, &fbo);
            },
            "NdkBuildLam", outputs);
        if (lam.done.final_status == STATUS_PENDING && !in_hook()) {
            // The callback never came: what the provider may still write stays alive (moving a
            // vector keeps its bytes where they are); the test inspects a copy of the buffer.
            auto buffer = std::make_shared<std::vector<std::byte>>(lam.storage);
            buffer->swap(lam.storage);
            std::lock_guard lock(outstanding_mutex_);
            outstanding_outputs_.push_back(std::move(buffer));
            outstanding_outputs_.push_back(out);
        }
    } else {
        InFlight flight(*this, call, {{adapter_, "adapter"}});
        lam.done.status = lam.done.final_status = table<NDK_ADAPTER_DISPATCH>(adapter_).NdkBuildLAM(
            adapter_, mdl, length, nullptr, nullptr, lam.mapping(), &size, &fbo);
        flight.returned(lam.done.status);
        Observed o;
        o.status = lam.done.status;
        outputs(o);
        std::lock_guard lock(oracle_mutex_);
        verdict_.merge(oracle_->apply(call, o).verdict);
    }
    lam.size_out = size;
    lam.fbo = fbo;
    if (lam.done.ok() && snapshot_mdl_chain(mdl) != lam.mdl_snapshot) {  // LAM-REL-02
        model::Verdict v;
        v.add(violation({"LAM-REL-02"}, "NdkBuildLam changed the MDL chain it was given"));
        report(std::move(v));
    }
    if (lam.done.ok()) {
        // The oracle made a LAM object; remember it by the mapping's address.
        std::lock_guard lock(oracle_mutex_);
        if (model::ObjectId newest = newest_lam(*oracle_)) remember(lam.mapping(), newest);
    }
    return lam;
}

void Session::release_lam(LamResult& lam) {
    if (!lam.mapping()) return;
    model::ObjectId lam_id = id(lam.mapping());
    {
        InFlight flight(*this, calls::ReleaseLam{id(adapter_), lam_id}, {{adapter_, "adapter"}});
        table<NDK_ADAPTER_DISPATCH>(adapter_).NdkReleaseLAM(adapter_, lam.mapping());
    }
    // LAM-REL-02: building and releasing leave the chain exactly as it was passed.
    if (lam.check_chain_on_release && lam.mdl && !lam.mdl_snapshot.empty() &&
        snapshot_mdl_chain(lam.mdl) != lam.mdl_snapshot) {
        model::Verdict v;
        v.add(violation({"LAM-REL-02"},
                        "after NdkReleaseLam the MDL chain differs from the one passed to "
                        "NdkBuildLam"));
        report(std::move(v));
    }
    std::lock_guard lock(oracle_mutex_);
    verdict_.merge(oracle_->apply(calls::ReleaseLam{id(adapter_), lam_id}, {}).verdict);
    ids_.erase(lam.mapping());
}

}  // namespace ndkct::conformance
