// ndkct/trace/decode.hpp: a call or callback record's fields, decoded once.
//
// One flat struct holds the fields of every record kind (named as in
// spec/trace/trace-format.json); decode() fills the ones its kind has, in the format's order.
// The checker (judge.hpp) and the replay (replay.hpp) both start from it. A Decoded is meant
// to be reused: its vectors keep their capacity from record to record.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ndkct/ntstatus.h"
#include "ndkct/trace/reader.hpp"

namespace ndkct::trace {

struct Result {
    NTSTATUS status = 0;
    uint32_t bytes_transferred = 0;
    uint64_t qp_context = 0, request_context = 0;
    uint32_t type = 0, provider_error_code = 0;
    uint64_t type_specific = 0;
};

struct Landing {
    uint32_t result_index = 0;
    Data data;
};

struct Decoded {
    uint16_t kind = 0;
    uint32_t function = 0;  // NDKT_FN_* for calls, NDKT_CB_* for callbacks
    uint64_t object = 0;    // the call's object; a callback's CQ, SRQ, listener or connector

    // ---- Arguments ----
    uint64_t request = 0;  // the id a completion callback will carry (0: no routine given)
    uint64_t context = 0, qp = 0, mr = 0, mw = 0, target = 0, srq = 0, shared_endpoint = 0;
    uint64_t receive_cq = 0, initiator_cq = 0, qp_context = 0, lam = 0;
    uint64_t length = 0, virtual_address = 0, remote_address = 0, base_virtual_address = 0;
    uint32_t depth = 0, max_sge = 0, threshold = 0, type = 0, max_results = 0, interval = 0,
             count = 0;
    uint32_t receive_depth = 0, initiator_depth = 0, receive_sge = 0, initiator_sge = 0,
             inline_size = 0;
    uint32_t op_flags = 0, mr_flags = 0, remote_token = 0, page_count = 0, fbo = 0;
    uint32_t inbound_read_limit = 0, outbound_read_limit = 0;
    uint32_t size_in = 0, fbo_in = 0, length_in = 0, limit_pointers = 0;
    bool has_notification = false, has_affinity = false, has_event = false, has_buffer = false,
         has_size = false, has_out = false, fast_register = false, remote_access = false,
         pause = false, reserved_nonzero = false;
    uint8_t guid[16] = {};
    NDK_VERSION version{0, 0};
    std::vector<Sge> sgl;
    Blob inline_payload, private_data;
    std::optional<Data> source;
    MdlChainRecord mdl;
    Address address, source_address, destination;
    std::vector<uint64_t> pages;

    // ---- Outcome ----
    bool has_outcome = true;  // false: the call had not returned when written (EXPIRED)
    NTSTATUS status = 0;
    uint32_t create_flags = 0, filled = 0, written = 0, token = 0, size_out = 0;
    ObjRecord made;  // a create's object, a create completion's, a connect event's connector
    Blob info, data_out;
    LamOut lam_out;
    bool has_lam_out = false;
    uint32_t results_returned = 0;  // NdkGetCqResults's return value
    std::vector<Result> results;
    std::vector<Landing> landings;
    Address address_out;
    uint32_t length_out = 0, ird_out = 0, ord_out = 0;
    uint32_t reason = 0;          // DisconnectEventEx
    uint32_t stray_callback = 0;  // StrayCallback: which NDKT_CB_*
};

// Fills `d` from a call or callback record. Returns false (with why) when the body does not hold
// the fields its kind has. An EXPIRED call decodes with has_outcome false.
bool decode(const Record& r, Decoded& d, std::string& why);

// The outcome fields of a RETURN record (for the call whose record expired).
bool decode_outcome(uint32_t function, Body& b, Decoded& d);

}  // namespace ndkct::trace
