// Decoding call and callback records into Decoded, field by field in the format's order
// (spec/trace/trace-format.json; the definition test checks the two agree on real traces).
#include "ndkct/trace/decode.hpp"

#include <cstring>

namespace ndkct::trace {

namespace {

void status_pad(Body& b, Decoded& d) {
    d.status = b.i32();
    b.u32();
}

void create_outcome(Body& b, Decoded& d) {
    d.status = b.i32();
    d.create_flags = b.u32();
    d.made = read_obj(b);
}

void results(Body& b, Decoded& d) {
    d.results_returned = b.u32();
    uint32_t kept = b.u32();
    uint32_t landings = b.u32();
    b.u32();
    if (static_cast<size_t>(kept) * 40 > b.left()) {
        b.skip(b.left() + 1);
        return;
    }
    d.results.resize(kept);
    for (auto& r : d.results) {
        r.status = b.i32();
        r.bytes_transferred = b.u32();
        r.qp_context = b.u64();
        r.request_context = b.u64();
        r.type = b.u32();
        r.provider_error_code = b.u32();
        r.type_specific = b.u64();
    }
    if (static_cast<size_t>(landings) * 24 > b.left()) {
        b.skip(b.left() + 1);
        return;
    }
    d.landings.resize(landings);
    for (auto& l : d.landings) {
        l.result_index = b.u32();
        b.u32();
        l.data = read_data(b);
    }
}

}  // namespace

bool decode_outcome(uint32_t function, Body& b, Decoded& d) {
    switch (function) {
        case NDKT_FN_QUERY_EXTENSION:
            d.status = b.i32();
            d.filled = b.u32();
            break;
        case NDKT_FN_QUERY_ADAPTER_INFO:
            d.status = b.i32();
            d.size_out = b.u32();
            d.info = read_blob(b);
            break;
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
            create_outcome(b, d);
            break;
        case NDKT_FN_BUILD_LAM:
            d.status = b.i32();
            b.u32();
            d.lam_out = read_lamout(b);
            d.has_lam_out = true;
            break;
        case NDKT_FN_RELEASE_LAM:
        case NDKT_FN_ARM_CQ:
        case NDKT_FN_FLUSH:
        case NDKT_FN_CONTROL_CONNECT_EVENTS:
            break;
        case NDKT_FN_GET_CQ_RESULTS:
        case NDKT_FN_GET_CQ_RESULTS_EX:
            results(b, d);
            break;
        case NDKT_FN_GET_REMOTE_TOKEN_FROM_MR:
        case NDKT_FN_GET_LOCAL_TOKEN_FROM_MR:
        case NDKT_FN_GET_REMOTE_TOKEN_FROM_MW:
            d.token = b.u32();
            b.u32();
            break;
        case NDKT_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN:
            d.token = b.u32();
            d.written = b.u32();
            break;
        case NDKT_FN_GET_LOCAL_ADDRESS:
        case NDKT_FN_GET_PEER_ADDRESS:
            d.status = b.i32();
            d.length_out = b.u32();
            d.address_out = read_address(b);
            break;
        case NDKT_FN_GET_CONNECTION_DATA:
            d.status = b.i32();
            d.length_out = b.u32();
            d.ird_out = b.u32();
            d.ord_out = b.u32();
            d.data_out = read_blob(b);
            break;
        default:
            status_pad(b, d);
    }
    return b.ok();
}

bool decode(const Record& r, Decoded& d, std::string& why) {
    Body b(r);
    d.kind = r.head.kind;
    d.has_outcome = !(r.head.flags & NDKT_FLAG_EXPIRED);
    d.request = d.context = d.lam = 0;
    d.sgl.clear();
    d.pages.clear();
    d.results.clear();
    d.landings.clear();
    d.source.reset();
    d.has_lam_out = false;
    d.status = 0;
    uint32_t n = r.head.kind & 0xFF;
    d.function = n;
    if (NDKT_KIND_CLASS(r.head.kind) == NDKT_KIND_CALLBACK) {
        d.object = 0;
        switch (n) {
            case NDKT_CB_REQUEST_COMPLETION: {
                d.request = b.u64();
                d.status = b.i32();
                uint32_t lam = b.u32();
                if (lam > 1) b.skip(b.left() + 1);
                if (lam == 1) {
                    d.lam_out = read_lamout(b);
                    d.has_lam_out = true;
                }
                break;
            }
            case NDKT_CB_CREATE_COMPLETION:
                d.request = b.u64();
                d.status = b.i32();
                b.u32();
                d.made = read_obj(b);
                break;
            case NDKT_CB_CLOSE_COMPLETION:
                d.request = b.u64();
                break;
            case NDKT_CB_CQ_NOTIFICATION:
            case NDKT_CB_SRQ_NOTIFICATION:
                d.object = b.u64();
                d.status = b.i32();
                b.u32();
                break;
            case NDKT_CB_CONNECT_EVENT:
                d.object = b.u64();
                d.made = read_obj(b);
                break;
            case NDKT_CB_DISCONNECT_EVENT:
                d.object = b.u64();
                break;
            case NDKT_CB_DISCONNECT_EVENT_EX:
                d.object = b.u64();
                d.reason = b.u32();
                b.u32();
                break;
            case NDKT_CB_STRAY:
                d.stray_callback = b.u32();
                d.status = b.i32();
                d.context = b.u64();
                break;
            default:
                why = "no callback has number " + std::to_string(n);
                return false;
        }
        if (!b.ok()) {
            why = std::string("its body is shorter than a ") + kind_name(r.head.kind) +
                  " record needs";
            return false;
        }
        return true;
    }
    if (NDKT_KIND_CLASS(r.head.kind) != NDKT_KIND_CALL || n == 0 || n >= NDKT_FN_COUNT) {
        why = "no NDK function has number " + std::to_string(n);
        return false;
    }
    d.object = b.u64();
    switch (n) {
        case NDKT_FN_QUERY_EXTENSION: {
            auto g = b.bytes(16);
            if (g.size() == 16) std::memcpy(d.guid, g.data(), 16);
            d.version.Major = b.u16();
            d.version.Minor = b.u16();
            d.has_out = b.u32() != 0;
            break;
        }
        case NDKT_FN_QUERY_ADAPTER_INFO:
            d.size_in = b.u32();
            d.has_buffer = b.u16() != 0;
            d.has_size = b.u16() != 0;
            break;
        case NDKT_FN_CREATE_CQ:
            d.depth = b.u32();
            d.has_notification = b.u16() != 0;
            d.has_affinity = b.u16() != 0;
            d.request = b.u64();
            break;
        case NDKT_FN_CREATE_PD:
        case NDKT_FN_CREATE_CONNECTOR:
        case NDKT_FN_CREATE_MW:
        case NDKT_FN_DEREGISTER_MR:
        case NDKT_FN_DISCONNECT:
            d.request = b.u64();
            break;
        case NDKT_FN_CREATE_SHARED_ENDPOINT:
            d.request = b.u64();
            d.address = read_address(b);
            break;
        case NDKT_FN_CREATE_LISTENER:
            d.has_event = b.u32() != 0;
            b.u32();
            d.request = b.u64();
            break;
        case NDKT_FN_BUILD_LAM:
            d.lam = b.u64();
            d.length = b.u64();
            d.request = b.u64();
            d.size_in = b.u32();
            d.has_buffer = b.u16() != 0;
            d.has_size = b.u16() != 0;
            d.fbo_in = b.u32();
            b.u32();
            d.mdl = read_mdl_chain(b);
            break;
        case NDKT_FN_RELEASE_LAM:
            d.lam = b.u64();
            break;
        case NDKT_FN_CLOSE:
            d.request = b.u64();
            d.reserved_nonzero = b.u32() != 0;
            b.u32();
            break;
        case NDKT_FN_RESIZE_CQ:
            d.depth = b.u32();
            b.u32();
            d.request = b.u64();
            break;
        case NDKT_FN_ARM_CQ:
            d.type = b.u32();
            b.u32();
            break;
        case NDKT_FN_GET_CQ_RESULTS:
        case NDKT_FN_GET_CQ_RESULTS_EX:
            d.max_results = b.u32();
            b.u32();
            break;
        case NDKT_FN_CONTROL_CQ_INTERRUPT_MODERATION:
            d.interval = b.u32();
            d.count = b.u32();
            break;
        case NDKT_FN_REGISTER_MR:
            d.length = b.u64();
            d.mr_flags = b.u32();
            b.u32();
            d.request = b.u64();
            d.mdl = read_mdl_chain(b);
            break;
        case NDKT_FN_INITIALIZE_FAST_REGISTER_MR:
            d.page_count = b.u32();
            d.remote_access = b.u32() != 0;
            d.request = b.u64();
            break;
        case NDKT_FN_GET_REMOTE_TOKEN_FROM_MR:
        case NDKT_FN_GET_LOCAL_TOKEN_FROM_MR:
        case NDKT_FN_GET_REMOTE_TOKEN_FROM_MW:
        case NDKT_FN_FLUSH:
            break;
        case NDKT_FN_MODIFY_SRQ:
            d.depth = b.u32();
            d.threshold = b.u32();
            d.request = b.u64();
            break;
        case NDKT_FN_SRQ_RECEIVE:
        case NDKT_FN_RECEIVE: {
            d.context = b.u64();
            uint32_t count = b.u32();
            b.u32();
            read_sgl(b, count, d.sgl);
            break;
        }
        case NDKT_FN_SEND: {
            d.context = b.u64();
            uint32_t count = b.u32();
            d.op_flags = b.u32();
            read_sgl(b, count, d.sgl);
            d.inline_payload = read_blob(b);
            d.source = read_dataopt(b);
            break;
        }
        case NDKT_FN_BIND:
            d.context = b.u64();
            d.mr = b.u64();
            d.mw = b.u64();
            d.virtual_address = b.u64();
            d.length = b.u64();
            d.op_flags = b.u32();
            b.u32();
            break;
        case NDKT_FN_FAST_REGISTER: {
            d.context = b.u64();
            d.mr = b.u64();
            d.page_count = b.u32();
            d.fbo = b.u32();
            d.length = b.u64();
            d.base_virtual_address = b.u64();
            d.op_flags = b.u32();
            b.u32();
            if (static_cast<size_t>(d.page_count) * 8 > b.left()) {
                b.skip(b.left() + 1);
                break;
            }
            d.pages.resize(d.page_count);
            for (auto& p : d.pages)
                p = b.u64();
            break;
        }
        case NDKT_FN_INVALIDATE:
            d.context = b.u64();
            d.target = b.u64();
            d.op_flags = b.u32();
            b.u32();
            break;
        case NDKT_FN_READ:
        case NDKT_FN_WRITE: {
            d.context = b.u64();
            d.remote_address = b.u64();
            d.remote_token = b.u32();
            d.op_flags = b.u32();
            uint32_t count = b.u32();
            b.u32();
            read_sgl(b, count, d.sgl);
            if (n == NDKT_FN_WRITE) d.inline_payload = read_blob(b);
            d.source = read_dataopt(b);
            break;
        }
        case NDKT_FN_SEND_AND_INVALIDATE: {
            d.context = b.u64();
            d.op_flags = b.u32();
            d.remote_token = b.u32();
            uint32_t count = b.u32();
            b.u32();
            read_sgl(b, count, d.sgl);
            d.inline_payload = read_blob(b);
            d.source = read_dataopt(b);
            break;
        }
        case NDKT_FN_CREATE_MR:
            d.fast_register = b.u32() != 0;
            b.u32();
            d.request = b.u64();
            break;
        case NDKT_FN_CREATE_SRQ:
            d.depth = b.u32();
            d.max_sge = b.u32();
            d.threshold = b.u32();
            d.has_notification = b.u16() != 0;
            d.has_affinity = b.u16() != 0;
            d.request = b.u64();
            break;
        case NDKT_FN_CREATE_QP:
            d.receive_cq = b.u64();
            d.initiator_cq = b.u64();
            d.qp_context = b.u64();
            d.receive_depth = b.u32();
            d.initiator_depth = b.u32();
            d.receive_sge = b.u32();
            d.initiator_sge = b.u32();
            d.inline_size = b.u32();
            b.u32();
            d.request = b.u64();
            break;
        case NDKT_FN_CREATE_QP_WITH_SRQ:
            d.receive_cq = b.u64();
            d.initiator_cq = b.u64();
            d.srq = b.u64();
            d.qp_context = b.u64();
            d.initiator_depth = b.u32();
            d.initiator_sge = b.u32();
            d.inline_size = b.u32();
            b.u32();
            d.request = b.u64();
            break;
        case NDKT_FN_GET_PRIVILEGED_MEMORY_REGION_TOKEN:
            d.has_out = b.u32() != 0;
            b.u32();
            break;
        case NDKT_FN_GET_LOCAL_ADDRESS:
        case NDKT_FN_GET_PEER_ADDRESS:
            d.length_in = b.u32();
            d.has_buffer = b.u32() != 0;
            break;
        case NDKT_FN_CONNECT:
            d.qp = b.u64();
            d.inbound_read_limit = b.u32();
            d.outbound_read_limit = b.u32();
            d.request = b.u64();
            d.source_address = read_address(b);
            d.destination = read_address(b);
            d.private_data = read_blob(b);
            break;
        case NDKT_FN_CONNECT_WITH_SHARED_ENDPOINT:
            d.qp = b.u64();
            d.shared_endpoint = b.u64();
            d.inbound_read_limit = b.u32();
            d.outbound_read_limit = b.u32();
            d.request = b.u64();
            d.destination = read_address(b);
            d.private_data = read_blob(b);
            break;
        case NDKT_FN_COMPLETE_CONNECT:
        case NDKT_FN_COMPLETE_CONNECT_EX:
            d.has_event = b.u32() != 0;
            b.u32();
            d.request = b.u64();
            break;
        case NDKT_FN_ACCEPT:
        case NDKT_FN_ACCEPT_EX:
            d.qp = b.u64();
            d.inbound_read_limit = b.u32();
            d.outbound_read_limit = b.u32();
            d.has_event = b.u32() != 0;
            b.u32();
            d.request = b.u64();
            d.private_data = read_blob(b);
            break;
        case NDKT_FN_REJECT:
            d.private_data = read_blob(b);
            break;
        case NDKT_FN_GET_CONNECTION_DATA:
            d.length_in = b.u32();
            d.has_buffer = b.u16() != 0;
            d.limit_pointers = b.u16();
            break;
        case NDKT_FN_LISTEN:
            d.request = b.u64();
            d.address = read_address(b);
            break;
        case NDKT_FN_CONTROL_CONNECT_EVENTS:
            d.pause = b.u32() != 0;
            b.u32();
            break;
    }
    if (b.ok()) decode_outcome(n, b, d);
    if (!b.ok()) {
        why = std::string("its body is shorter than a ") + function_name(n) + " record needs";
        return false;
    }
    return true;
}

}  // namespace ndkct::trace
