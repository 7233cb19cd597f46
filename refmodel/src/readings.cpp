// The profile's knobs, typed. Each reading cites the AMB entry that makes it a choice.
#include "ndkct/model/readings.hpp"

#include "ndkct/spec/profile.hpp"

namespace ndkct::model {

Readings read_profile(const spec::Profile& p) {
    Readings r;
    r.version = p.version;
    r.adapter_info = p.adapter_info;
    r.max_frmr_pages = static_cast<uint32_t>(p.integer("limits.max_frmr_pages"));  // AMB-08
    r.callback_timeout_ms = static_cast<uint32_t>(p.integer("limits.callback_timeout_ms"));

    auto is = [&](const char* knob, const char* value) { return p.text(knob) == value; };
    r.fr_read_sink_flag_listed = is("policies.fr_read_sink_flag", "accept");            // AMB-01
    r.read_sink_flag_suffices = is("policies.read_sink_rights", "sink_flag_suffices");  // AMB-37
    r.read_local_invalidate_flag =                                                      // AMB-02
        is("policies.read_local_invalidate_value", "doc_0x200") ? 0x200u : 0x100u;
    r.lone_remote_write_bit_rejected = is("policies.lone_remote_write_bit", "reject");  // AMB-03
    r.unknown_flags_rejected = is("policies.unknown_flags", "reject");                  // AMB-04
    r.zero_base_va_rejected = is("policies.zero_base_virtual_address", "reject");       // AMB-05
    r.build_lam_null_completion_rejected =                                              // AMB-06
        is("policies.build_lam_null_completion", "reject");
    r.fr_token_stable_from_initialize =  // AMB-07
        is("policies.fr_remote_token_timing", "stable_from_initialize");
    r.fr_local_token_from_initialize =  // AMB-40
        is("policies.fr_local_token_timing", "from_initialize");
    r.zero_adapter_page_count_rejected =
        is("policies.zero_adapter_page_count", "reject");            // AMB-09
    r.fr_reinitialize = is("policies.fr_mr_reinitialize", "reject")  // AMB-10
                            ? Readings::FrReinitialize::reject
                            : is("policies.fr_mr_reinitialize", "allow_always")
                                  ? Readings::FrReinitialize::allow_always
                                  : Readings::FrReinitialize::allow_when_unregistered;
    r.fr_usable_at_return = is("policies.fr_init_ready_point", "return");                 // AMB-11
    r.fr_failed_init_unusable = is("policies.fr_failed_initialization", "unusable");      // AMB-38
    r.receive_before_connect_rejected = is("policies.receive_before_connect", "reject");  // AMB-39
    r.read_beyond_remote_inline = is("policies.read_beyond_remote_report", "inline");     // AMB-12
    r.inline_on_write_listed = is("policies.inline_on_write", "accept");                  // AMB-13
    r.build_lam_null_buffer_probe = is("policies.build_lam_null_buffer", "size_probe");   // AMB-14
    r.build_lam_size_check_async =
        is("policies.build_lam_size_check", "inline_or_async");                          // AMB-15
    r.mr_wrong_state_status = is("policies.mr_wrong_state_status", "invalid_parameter")  // AMB-16
                                  ? STATUS_INVALID_PARAMETER
                                  : STATUS_INVALID_DEVICE_STATE;
    r.failed_create_sets_null = is("policies.failed_create_output", "set_null");           // AMB-17
    r.close_may_fail = is("policies.close_status", "allow_error");                         // AMB-18
    r.mw_remote_read_needs_mr_right = is("policies.mw_remote_read_mr_right", "required");  // AMB-20
    r.result_ex_layout =                                                                   // AMB-22
        is("policies.result_ex_layout", "with_provider_error_code")
            ? Readings::ResultExLayout::with_provider_error_code
        : is("policies.result_ex_layout", "without_provider_error_code")
            ? Readings::ResultExLayout::without_provider_error_code
            : Readings::ResultExLayout::by_version;
    r.adapter_info_accepts_96 = is("policies.adapter_info_size", "accept_96");  // AMB-23
    r.moderation_count_zero_or_one =                                            // AMB-24
        is("policies.moderation_count_reading", "count_zero_or_one");
    r.resize_below_queued_rejected = is("policies.resize_cq_below_queued", "reject");  // AMB-25
    r.limit_violation_status_required =                                                // AMB-26
        is("policies.limit_violation_status", "invalid_parameter_required");
    r.zero_queue_depth_rejected = is("policies.zero_queue_depth", "reject");           // AMB-27
    r.foreign_objects_all_inline = is("policies.foreign_object_check", "all_inline");  // AMB-28
    r.fr_bad_request_inline =                                                          // AMB-29
        is("policies.fr_invalid_request_report", "inline_invalid_parameter");
    r.fr_over_valid = is("policies.fr_over_valid_registration", "inline_error")  // AMB-30
                          ? Readings::FrOverValid::inline_error
                          : is("policies.fr_over_valid_registration", "allow")
                                ? Readings::FrOverValid::allow
                                : Readings::FrOverValid::completion_error;
    r.deregister_with_bound_mw_rejected =
        is("policies.deregister_with_bound_mw", "reject");  // AMB-31
    r.invalidate_invalid_token_inline =                     // AMB-32
        is("policies.invalidate_invalid_token", "inline_error");
    r.silent_success_entry_tolerated = is("policies.silent_success_entry", "tolerated");  // AMB-33
    r.completion_order_relaxed = is("policies.completion_order", "relaxed");              // AMB-35
    r.live_lam_warns = is("policies.live_lam_at_adapter_close", "release_and_warn");      // AMB-36
    r.unlisted_flag_rejected = is("policies.flag_not_listed_for_call", "reject");         // OPF-01
    r.over_max_registration_status =
        is("policies.over_max_registration_status", "insufficient_resources")
            ? STATUS_INSUFFICIENT_RESOURCES
            : STATUS_INVALID_PARAMETER;
    r.zero_length_mapping_rejected = is("policies.zero_length_mapping", "reject");
    r.completion_error_status_exact = is("policies.completion_error_status", "exact");
    r.cq_capacity_checked = is("policies.cq_capacity_check", "reject_undersized");  // CQP-CQ-01
    r.modify_srq_below_queued_rejected =
        is("policies.modify_srq_below_queued", "reject");  // MODEL-SRQ-01
    r.srq_initial_notify_immediate =
        is("policies.srq_initial_notify", "immediate");  // MODEL-SRQ-02
    r.queue_overflow_resources =                         // MODEL-WR-DEPTH-01
        is("policies.queue_overflow_status", "insufficient_resources");
    r.post_resource_failure_allowed =  // MODEL-WR-RES-01
        is("policies.post_resource_failure", "allowed");
    r.private_data_over_limit_invalid =  // MODEL-CONN-PD-01
        is("policies.private_data_over_limit", "invalid_parameter");
    r.over_max_window_invalid =
        is("policies.over_max_window_status", "invalid_parameter");                  // MODEL-BND-01
    r.outbound_read_overflow_fails = is("policies.outbound_read_overflow", "fail");  // MODEL-RD-01
    r.resize_cq_unsupported_status =  // MODEL-CQ-RESIZE-01
        is("policies.resize_cq_unsupported", "invalid_device_request")
            ? STATUS_INVALID_DEVICE_REQUEST
            : STATUS_NOT_SUPPORTED;
    r.receive_on_srq_qp_status =  // MODEL-RCV-01
        is("policies.receive_on_srq_qp", "invalid_parameter") ? STATUS_INVALID_PARAMETER
                                                              : STATUS_INVALID_DEVICE_REQUEST;
    r.post_after_cq_error_cancelled =  // MODEL-CQ-STATUS-01
        is("policies.post_after_cq_or_srq_error", "cancelled_completion");
    r.flush_leaves_error = !is("policies.post_after_flush", "usable");  // MODEL-FLS-01

    auto& ref = r.reference;
    ref.seed = static_cast<uint64_t>(p.integer("reference_provider.seed"));
    ref.pending_percent = static_cast<uint32_t>(p.integer("reference_provider.pending_percent"));
    ref.resource_failure_percent =
        static_cast<uint32_t>(p.integer("reference_provider.resource_failure_percent"));
    ref.resource_failure_async_percent =
        static_cast<uint32_t>(p.integer("reference_provider.resource_failure_async_percent"));
    ref.callback_thread = is("reference_provider.callback_thread", "inline_thread")
                              ? Readings::ReferenceProvider::CallbackThread::inline_thread
                          : is("reference_provider.callback_thread", "mixed")
                              ? Readings::ReferenceProvider::CallbackThread::mixed
                              : Readings::ReferenceProvider::CallbackThread::worker;
    ref.relaxed_completion_order = is("reference_provider.completion_order", "relaxed");
    ref.hold_deferred = is("reference_provider.defer_doorbell", "hold");
    ref.rearm_fires_on_old_entries = p.flag("reference_provider.rearm_fires_on_old_entries");
    ref.write_fbo_on_buffer_too_small = p.flag("reference_provider.write_fbo_on_buffer_too_small");
    ref.sequential_tokens = is("reference_provider.token_values", "sequential");
    ref.contiguous_logical_addresses =
        is("reference_provider.logical_address_layout", "contiguous");
    return r;
}

}  // namespace ndkct::model
