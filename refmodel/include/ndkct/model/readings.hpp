// ndkct/model/readings.hpp: the profile as the model reads it.
//
// Where the documentation is silent or contradicts itself, the model does not decide in code:
// it reads the profile. Each field below is one knob of spec/profiles/profile.schema.json,
// typed, with the AMB entry that says what the docs leave open.
#pragma once

#include <cstdint>

#include "ndkct/ndkinfo.h"
#include "ndkct/ntstatus.h"

namespace ndkct::spec {
struct Profile;
}

namespace ndkct::model {

struct Readings {
    NDK_VERSION version{2, 1};
    NDK_ADAPTER_INFO adapter_info{};

    // ---- limits.* ----
    uint32_t max_frmr_pages = 4096;  // AMB-08: largest AdapterPageCount before IMPLEMENTATION_LIMIT
    uint32_t callback_timeout_ms = 10000;

    // ---- policies.* (the AMB readings) ----
    bool fr_read_sink_flag_listed = true;  // AMB-01 accept
    bool read_sink_flag_suffices = false;  // AMB-37 local_write_and_sink / sink_flag_suffices
    uint32_t read_local_invalidate_flag = 0x100;      // AMB-02 header_0x100 / doc_0x200
    bool lone_remote_write_bit_rejected = false;      // AMB-03 normalize / reject
    bool unknown_flags_rejected = false;              // AMB-04 ignore / reject
    bool zero_base_va_rejected = false;               // AMB-05 allow_with_fbo_zero / reject
    bool build_lam_null_completion_rejected = false;  // AMB-06 complete_inline / reject
    bool fr_token_stable_from_initialize = false;     // AMB-07
    bool fr_local_token_from_initialize = true;       // AMB-40 from_initialize / after_fast_...
    bool zero_adapter_page_count_rejected = true;     // AMB-09
    enum class FrReinitialize { allow_when_unregistered, reject, allow_always };
    FrReinitialize fr_reinitialize = FrReinitialize::allow_when_unregistered;  // AMB-10
    bool fr_usable_at_return = false;         // AMB-11 completion / return
    bool fr_failed_init_unusable = false;     // AMB-38 keep_previous / unusable
    bool read_beyond_remote_inline = false;   // AMB-12 completion / inline
    bool inline_on_write_listed = true;       // AMB-13 accept / treat_as_unlisted
    bool build_lam_null_buffer_probe = true;  // AMB-14 size_probe / reject
    bool build_lam_size_check_async = false;  // AMB-15 inline_only / inline_or_async
    NTSTATUS mr_wrong_state_status = STATUS_INVALID_DEVICE_STATE;  // AMB-16
    bool failed_create_sets_null = false;                          // AMB-17 untouched / set_null
    bool close_may_fail = false;                                   // AMB-18
    bool mw_remote_read_needs_mr_right = false;                    // AMB-20
    enum class ResultExLayout { by_version, with_provider_error_code, without_provider_error_code };
    ResultExLayout result_ex_layout = ResultExLayout::by_version;  // AMB-22
    bool adapter_info_accepts_96 = true;                           // AMB-23
    bool moderation_count_zero_or_one = true;                      // AMB-24
    bool resize_below_queued_rejected = true;                      // AMB-25
    bool limit_violation_status_required = false;                  // AMB-26
    bool zero_queue_depth_rejected = false;                        // AMB-27
    bool receive_before_connect_rejected = false;                  // AMB-39
    bool foreign_objects_all_inline = false;                       // AMB-28
    bool fr_bad_request_inline = true;                             // AMB-29, AMB-08
    enum class FrOverValid { completion_error, inline_error, allow };
    FrOverValid fr_over_valid = FrOverValid::completion_error;         // AMB-30
    bool deregister_with_bound_mw_rejected = false;                    // AMB-31
    bool invalidate_invalid_token_inline = false;                      // AMB-32
    bool silent_success_entry_tolerated = false;                       // AMB-33
    bool completion_order_relaxed = false;                             // AMB-35
    bool live_lam_warns = true;                                        // AMB-36
    bool unlisted_flag_rejected = false;                               // OPF-01
    NTSTATUS over_max_registration_status = STATUS_INVALID_PARAMETER;  // MODEL-RMR-LEN-01
    bool zero_length_mapping_rejected = true;                          // MODEL-RMR-LEN-02
    bool completion_error_status_exact = false;                        // MODEL-CQ-ERR-01
    bool cq_capacity_checked = false;                                  // CQP-CQ-01
    bool modify_srq_below_queued_rejected = true;                      // MODEL-SRQ-01
    bool srq_initial_notify_immediate = false;                         // MODEL-SRQ-02
    bool queue_overflow_resources =
        false;  // MODEL-WR-DEPTH-01 (any_error / insufficient_resources)
    bool post_resource_failure_allowed = true;    // MODEL-WR-RES-01 (allowed / forbidden)
    bool private_data_over_limit_invalid = true;  // MODEL-CONN-PD-01
    bool over_max_window_invalid = true;          // MODEL-BND-01
    bool outbound_read_overflow_fails = false;    // MODEL-RD-01 (queue / fail)
    NTSTATUS resize_cq_unsupported_status = STATUS_NOT_SUPPORTED;       // MODEL-CQ-RESIZE-01
    NTSTATUS receive_on_srq_qp_status = STATUS_INVALID_DEVICE_REQUEST;  // MODEL-RCV-01
    bool post_after_cq_error_cancelled = false;                         // MODEL-CQ-STATUS-01
    bool flush_leaves_error = true;  // MODEL-FLS-01 (cancelled / usable)

    // ---- reference_provider.* (how the reference provider picks among allowed outcomes) ----
    struct ReferenceProvider {
        uint64_t seed = 1;
        uint32_t pending_percent = 50;
        uint32_t resource_failure_percent = 0;
        uint32_t resource_failure_async_percent = 50;
        enum class CallbackThread {
            inline_thread,
            worker,
            mixed
        } callback_thread = CallbackThread::worker;
        bool relaxed_completion_order = false;
        bool hold_deferred = true;
        bool rearm_fires_on_old_entries = false;
        bool write_fbo_on_buffer_too_small = true;
        bool sequential_tokens = false;
        bool contiguous_logical_addresses = false;
    } reference;

    bool version_at_least(USHORT major, USHORT minor) const {
        return NDKCT_VERSION_AT_LEAST(version, major, minor);
    }
};

// Reads a checked profile (spec::load_profile). Throws spec::ProfileError if a knob the model
// needs is missing, which the spec tests rule out for the shipped schema.
Readings read_profile(const spec::Profile& profile);

}  // namespace ndkct::model
