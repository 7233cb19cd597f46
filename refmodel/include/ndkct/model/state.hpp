// ndkct/model/state.hpp: the NDKPI state the rules speak of.
//
// Objects with their parents, antecedents and lifetime (LIFE-TREE-01/02, CLOSE-*); memory
// regions, windows and mappings with their tokens; queue pairs with their connection state and
// queues; completion queues with their entries and arming. Pure data: the rules that change it
// live in the model (model.hpp).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "ndkct/model/calls.hpp"
#include "ndkct/model/fifo.hpp"
#include "ndkct/model/small_vector.hpp"
#include "ndkct/model/verdict.hpp"
#include "ndkct/ndkpi.h"

namespace ndkct::model {

enum class Kind : uint8_t {
    adapter,
    pd,
    cq,
    qp,
    srq,
    mr,
    mw,
    lam,
    connector,
    listener,
    shared_endpoint
};
const char* kind_name(Kind kind);  // "QP"

// CLOSE-*: an object is created (possibly pending), used, then closed (possibly pending until
// its successors are closed and its callbacks returned).
enum class Life : uint8_t { creating, ready, closing, closed };

// Access rights, as the model tracks them (not NDK flag values: those overlap, AMB-03).
enum Access : uint32_t {
    kLocalWrite = 1u << 0,
    kRemoteRead = 1u << 1,
    kRemoteWrite = 1u << 2,
    kReadSink = 1u << 3,
    // Only in what a request needs (resolve_local): local write, which the read-sink right also
    // gives (AMB-37, sink_flag_suffices).
    kWriteBySink = 1u << 4,
};

// An address span mapped onto arena pages: a registered region, a fast registration, a bound
// window. Addresses are indices (RMR-VA-01): `base` is the span's first address, which lies
// `first_byte_offset` bytes into pages[0].
struct Region {
    uint64_t base = 0;
    uint64_t length = 0;
    uint32_t first_byte_offset = 0;
    std::vector<PFN_NUMBER> pages;
    uint32_t access = 0;
    // RMR-VA-03: the pages the registered MDL's VA maps, where they are not `pages` (a decoy-VA
    // MDL, MdlView::va_pfns); empty otherwise. Forensics only: never where bytes belong.
    std::vector<PFN_NUMBER> va_pages;

    bool covers(uint64_t address, uint64_t bytes) const {
        return address >= base && bytes <= length && address - base <= length - bytes;
    }
};

struct AdapterState {
    NDK_ADAPTER_INFO info{};  // the profile's limits, replaced by what the provider reports
    uint32_t open_lams = 0;
    // Indexes the model keeps (model.cpp, and only there) so that lookups never scan every
    // object: which MRs and MWs hold a reported token value (local / remote), and which live
    // mappings hold a logical page (LAM id, index in its AdapterPageArray).
    std::unordered_map<uint32_t, std::vector<ObjectId>> local_tokens, remote_tokens;
    // An MR of this adapter registered with a remote right was seen with different local and
    // remote tokens: its keys are not one (as they are on rxe, lkey == rkey), so a remote token
    // equal to the local one is the getter's mistake (RMR-TOK-02, FR-TOK-01) when the peer
    // refuses it.
    bool tokens_differ = false;
    // RMR-DEREG-01: token values of MRs whose NdkDeregisterMr completed (local and remote alike),
    // kept until an object is reported holding the value again: an access through one that
    // succeeds is named by the deregistration's rule, not only as a stray token (TOK-03).
    std::unordered_map<uint32_t, ObjectId> deregistered_tokens;
    // IFR-TOK-01, AMB-40: values NdkGetLocalTokenFromMr reported for an initialized fast-register
    // MR before its first fast registration (MrState::initialized_local_token says which still
    // hold).
    std::unordered_map<uint32_t, ObjectId> initialized_local_tokens;
    std::unordered_map<uint64_t, std::vector<std::pair<ObjectId, uint32_t>>> logical_pages;
    uint64_t lam_releases = 0;  // NdkReleaseLam calls on live mappings so far (LAM-REL-01)
    // IFR-TOK-02: this provider took an MR's first fast registration after its initialization
    // with no remote token read in between, so refusing one after such a read points at the read.
    bool took_first_registration_unread = false;
};

struct PdState {
    std::optional<uint32_t> privileged_token;  // as the provider reported it (PTOK-01)
};

struct MrState {
    // RMR-ST-03: its last NdkRegisterMr failed with STATUS_INSUFFICIENT_RESOURCES (inline or
    // through the callback), which leaves it unregistered: a registration of it that is then
    // refused names that rule first (the failed one registered something after all).
    bool lacked_resources = false;
    bool fast_register = false;  // CMR-01: fixed at creation
    // Counts the fast registrations, invalidations and initializations that changed it: a
    // flushed request's undo applies only while nothing changed the MR after it (Model::undo).
    uint64_t changes = 0;
    enum class Phase : uint8_t {
        unregistered,     // normal MR before NdkRegisterMr / after NdkDeregisterMr
        registering,      // NdkRegisterMr pending
        registered,       // normal MR registered
        deregistering,    // NdkDeregisterMr pending
        uninitialized,    // fast-register MR before NdkInitializeFastRegisterMr
        initializing,     // NdkInitializeFastRegisterMr pending
        initialized,      // ready for NdkFastRegister (no valid registration)
        fast_registered,  // a fast registration is valid
        invalidated,      // invalidated (locally or by a peer's SendAndInvalidate)
    } phase = Phase::unregistered;
    Region region;  // the registration, when there is one
    // FR-MAP-01 (forensics only, never an expectation): the pages a provider that took
    // AdapterPageArray for one run of consecutive logical pages from entry 0 would map, entry i
    // as AdapterPageArray[0] + i * PAGE_SIZE, parallel to region.pages (kNoPage where that
    // address maps no page); null where the run is the array itself. Set by each fast
    // registration.
    std::shared_ptr<const std::vector<PFN_NUMBER>> run_from_first_entry;
    static constexpr PFN_NUMBER kNoPage = ~PFN_NUMBER(0);
    uint32_t flags = 0;      // NdkRegisterMr flags
    uint32_t max_pages = 0;  // NdkInitializeFastRegisterMr AdapterPageCount
    bool remote_access = false;
    // AMB-10: what an initialization pending on it replaces (restored if that one fails).
    Phase phase_before_init = Phase::uninitialized;
    uint32_t max_pages_before_init = 0;
    bool remote_access_before_init = false;
    bool pending_init_valid = false;  // the pending one was a valid call (not a refused reading)
    std::optional<uint32_t> local_token;  // values the provider reported for this registration
    std::optional<uint32_t> remote_token;
    // IFR-TOK-01, AMB-40: the local token read while initialized (no fast registration since the
    // initialization), and MrState::changes then: it is the token of the region the next fast
    // registration makes (changes one more), even if the getter reports another one after it.
    std::optional<uint32_t> initialized_local_token;
    uint64_t initialized_local_changes = 0;
    std::vector<ObjectId> bound_windows;
    bool indeterminate = false;  // a consumer duty was broken on it: its state is unknown
    // AMB-38: an initialization failed after an earlier one had made the MR usable (what that
    // leaves behind is the reading's).
    bool reinit_failed = false;
    // FR-SILENT-02 (check mode): the last fast registration of this MR was posted with
    // NDK_OP_FLAG_SILENT_SUCCESS and had to fail in its completion (the model kept what was
    // there). A remote access that it would have let through and that fails shows it did not
    // take effect (Completion::refutes_request). Valid while `changes` is unchanged.
    struct FailedSilentRegistration {
        ObjectId qp = 0;
        Context request_context = 0;
        uint64_t changes = 0;
        Region requested;  // base, length and access only
    };
    std::optional<FailedSilentRegistration> failed_silent;
    // FR-APC-01 (check mode, forensics only): how far into this fast registration (the highest
    // page index of its region reached) requests of each shape (Completion::PageReaches::shape)
    // were seen to succeed. Valid while `changes` is unchanged; at most a few shapes are kept.
    struct ReachedByShape {
        uint64_t shape = 0;
        uint64_t changes = 0;
        uint32_t last_page = 0;
    };
    std::vector<ReachedByShape> reached_by_shape;
};

struct MwState {
    uint64_t changes = 0;  // binds and invalidations (MrState::changes)
    // LIFE-TREE-04: per MR, the binds to it not undone; the MR stops being the MW's antecedent
    // when the last of them is undone (flushed binds never bound it). Kept across undo.
    std::vector<std::pair<ObjectId, uint32_t>> binds_per_mr;
    bool bound = false;
    ObjectId mr = 0;
    ObjectId qp = 0;  // the QP the bind was posted on
    Region region;
    std::optional<uint32_t> remote_token;
    bool indeterminate = false;
    // Check mode: the bind that made `mr` its antecedent was posted while its QP's error timing
    // was open (the peer's failure, AMB-12; FLS-03): the device may have flushed it, and then
    // the MR waits for nothing (CLOSE-02 cannot require its close to pend).
    bool edge_uncertain = false;
};

struct LamState {
    uint64_t virtual_address = 0;
    uint64_t length = 0;
    uint32_t first_byte_offset = 0;
    std::vector<PFN_NUMBER> pfns;         // the pages behind it
    std::vector<uint64_t> logical_pages;  // what the provider returned, one per pfn
    // LAM-REL-01: the adapter's AdapterState::lam_releases when this mapping was built; a later
    // release of another mapping must leave this one as it was.
    uint64_t releases_before = 0;
    // LAM-VA-01: the pages the MDL's VA maps, where they are not `pfns` (a decoy-VA MDL,
    // MdlView::va_pfns); empty otherwise. Forensics only: never where bytes belong.
    std::vector<PFN_NUMBER> va_pfns;
};

// An entry the model expects on (or, simulating, has put on) a CQ.
struct Completion {
    ObjectId qp = 0;
    ObjectId cq = 0;
    uint64_t sequence = 0;  // posting order within the queue
    bool receive_queue = false;
    Context qp_context = 0;
    Context request_context = 0;
    NDK_OPERATION_TYPE type = NdkOperationTypeSend;
    enum class Outcome : uint8_t {
        success,
        error,
        cancelled,
        success_or_cancelled,  // a flush raced with it (FLS-03)
        any,                   // what happens is open (the peer's error, a consumer error)
        any_error,             // it must fail, with any error status (MODEL-CQ-STATUS-01)
    } outcome = Outcome::success;
    NTSTATUS status = STATUS_SUCCESS;  // the model's status for it
    RuleIds rules;                     // why it fails, when it does
    std::string why;
    uint32_t bytes_transferred = 0;  // receive completions (CQ-RES-01)
    bool invalidated = false;        // ReceiveAndInvalidate
    bool solicited = false;          // a receive of a SEND_AND_SOLICIT_EVENT send (CQ-NOT-10)
    uint32_t invalidated_token = 0;
    ObjectId srq = 0;  // a receive taken from this SRQ
    // MODEL-RD-01 (fail): a read beyond the OutboundReadLimit that the provider queued instead of
    // failing; its success is a warning.
    bool success_warns = false;
    // Another outcome the docs allow but the profile's reading does not choose (DESIGN section
    // 5): success, or an error, as other_reading_succeeds says. An entry that shows it is a
    // warning naming these rules, and what the QP does afterwards is open (QpState::outcome_open).
    RuleIds other_reading;
    bool other_reading_succeeds = false;
    // Bytes that must be in place when the completion is seen (check mode).
    struct Landing {
        SmallVector<std::pair<PFN_NUMBER, uint32_t>, 4> at;  // page, offset of each piece
        SmallVector<uint32_t, 4> sizes;
        std::vector<std::byte> bytes;
        bool from_read = false;  // a read's sink: bytes a later fenced request may depend on
        bool unchecked = false;  // the bytes depend on an order the docs do not fix
        // The pages of the fast registration the bytes land in, in AdapterPageArray order: bytes
        // found on another of its pages show the mapping's order broken (FR-PAGE-02).
        std::shared_ptr<const std::vector<PFN_NUMBER>> fast_registered_pages;
        // FR-MAP-01: parallel to fast_registered_pages, the pages each entry would be if the
        // provider took the array for one run from its first entry (MrState::
        // run_from_first_entry); null when no registration it holds differs from that run.
        std::shared_ptr<const std::vector<PFN_NUMBER>> fast_registered_runs;
        // A read's source when it is a fast registration: its pages in AdapterPageArray order and
        // the in-page offset of the first byte read; landed bytes found at the same offset of
        // another of its pages show the source's mapping order broken (FR-PAGE-02).
        std::shared_ptr<const std::vector<PFN_NUMBER>> source_fast_registered_pages;
        // FR-MAP-01: the source's run from its first entry, as fast_registered_runs.
        std::shared_ptr<const std::vector<PFN_NUMBER>> source_fast_registered_runs;
        uint32_t source_first_offset = 0;
        uint32_t source_first_page = 0;  // the index of the page it starts on
        // RMR-VA-03 (LAM-VA-01): where the bytes land in a region (mapping) whose MDL's VA maps
        // other pages than its PFNs, each such PFN with the page its VA maps, and the rule: bytes
        // found on those pages instead show a provider that wrote through the VA.
        std::shared_ptr<const std::vector<std::pair<PFN_NUMBER, PFN_NUMBER>>> va_aliases;
        const char* va_rule = nullptr;
        // RMR-VA-03 (LAM-VA-01) for the source: the source extent with each page of a decoy-VA
        // region replaced by the page its VA maps; the landed bytes equal to what it holds show
        // a provider that read through the VA. Null when no source page is such.
        std::shared_ptr<const Extent> source_through_va;
    };
    SmallVector<Landing, 1> landings;  // (one, or a few with the silent ones before it)
    bool silent = false;               // success makes no entry (SILENT_SUCCESS)
    bool silent_flag = false;          // posted with SILENT_SUCCESS (whatever its outcome)
    ObjectId target = 0;               // the MR or MW a FastRegister, Invalidate or Bind acts on
    bool deferred = false;  // posted with NDK_OP_FLAG_DEFER (a lost one breaks DEFER-03 too)
    // Posted with NDK_OP_FLAG_READ_FENCE and run (not flushed): its entry may not come ahead of
    // an earlier read of its QP (WR-FENCE-01, FR-FENCE-01 for a fast registration).
    bool read_fence = false;
    // The rule a failure of this expected success breaks before the data-path rule: the remote
    // token the consumer was given is the MR's local token (RMR-TOK-02, FR-TOK-01), so the
    // failed access shows the token getter wrong, not the access. Likewise a local SGE's token
    // of an MR's previous registration (RMR-TOK-01), a range in a mid-page region's tail
    // (RMR-VA-01), and logical addresses of a LAM that outlived another's release (LAM-REL-01).
    const char* token_rule = nullptr;
    // The page rules that grant the local access this expected success relies on (Model::
    // local_grant_rules: RMR-FLG-02/03, FR-FLG-02/03, FR-TOK-02), named before the data-path
    // rule when it fails: a provider that denies that access breaks the grant, not the transfer.
    RuleList grant_rules;
    // FR-SILENT-02: this expected failure is a remote access that a silent fast registration
    // which had to fail (on QP refutes_qp, with this RequestContext) would have let through; its
    // error entry shows that registration did not take effect (Model::note_refuted_registration).
    ObjectId refutes_qp = 0;
    Context refutes_request = 0;
    // A silent fast registration that had to fail and that a failed access showed did not take
    // effect: with no entry, its error entry was dropped (FR-SILENT-02), not a silent success.
    bool registration_refuted = false;
    // FR-APC-01 (check mode, forensics only): the fast registrations of two or more pages this
    // expected success reaches (through a remote token, a local SGE, or for a send the receive
    // it lands in), each with the highest page index of its region reached, and the request's
    // shape: its QP, type and flags and the tokens it names (a send's with its receive's), the
    // address and length left out. A request of one shape that succeeds records how far it
    // reached (MrState::reached_by_shape); one of that shape reaching further that fails names
    // FR-APC-01 first (the region's backing ends short of its last AdapterPageArray pages),
    // one that fails in the last page of the array without that witness names it last.
    // Null when it reaches none.
    struct PageReach {
        ObjectId mr = 0;
        uint64_t changes = 0;  // MrState::changes: the registration it reaches
        uint32_t last_page = 0;
        uint32_t pages = 0;  // AdapterPageCount of that registration
    };
    struct PageReaches {
        uint64_t shape = 0;
        SmallVector<PageReach, 2> reaches;
    };
    std::shared_ptr<const PageReaches> page_reaches;
};

// A request posted to a queue, waiting for the model to execute it.
struct WorkRequest {
    uint64_t sequence = 0;
    Call call;  // the post call (Send, Read, FastRegister, ... or Receive/SrqReceive)
    Context request_context = 0;
    uint32_t flags = 0;
    bool deferred = false;
    // FastRegister, Bind and Invalidate take effect when posted (FR-TOK-01, MW-02): their
    // completion is decided then.
    std::optional<Completion> decided;
    // What such a request changed when posted, restored if it is flushed before it runs.
    struct Undo {
        ObjectId mr = 0;                  // an MR whose state it changed
        std::optional<MrState> mr_state;  // ...and that state before
        ObjectId mw = 0;
        std::optional<MwState> mw_state;
        ObjectId window_mr = 0;  // the MR whose bound windows a bind changed
        std::vector<ObjectId> window_mr_windows;
        ObjectId bound_mr = 0;  // a bind: the MR it made (or kept) the MW's antecedent
    };
    std::shared_ptr<const Undo> undo;
    bool over_read_limit = false;  // MODEL-RD-01: a read beyond the OutboundReadLimit
};

struct CqState {
    uint32_t depth = 0;
    bool has_notification = false;
    std::deque<Completion> entries;  // simulate: the CQ's content; check: expected arrivals
    // Arming (CQ-NOT-*): -1 = not armed, else NDK_CQ_NOTIFY_* (combined per CQ-NOT-04).
    int armed = -1;
    bool new_since_notification = false;
    // Check mode: entries that may or may not appear came since (Outcome::any: requests in flight
    // when their QP or its peer went to error). They explain a notification, but none is owed
    // for them: a provider whose device never made them has nothing to notify.
    bool uncertain_since_notification = false;
    // Check mode: arms that came while the previous arm's notification was owed; each such
    // notification may still arrive after the new arm's (CQ-NOT-01 tolerance, commit of ArmCq).
    uint32_t notifications_in_flight = 0;
    // Check mode: the outstanding arm was made with entries in the CQ (CQ-NOT-08).
    bool armed_with_entries = false;
    bool overrun = false;  // CQ-STATUS-01: STATUS_BUFFER_OVERFLOW, CQ and its QPs dead
    bool failed = false;   // overrun or fatal (CQ-STATUS-02/03): no further completions
    NTSTATUS failure = STATUS_SUCCESS;          // the CqStatus it failed with
    bool solicited_since_notification = false;  // a solicited or error entry (CQ-NOT-10/11)
    bool solicited_by_send = false;  // ...and a solicited send's receive among them (SND-04)
    // A solicited send's receive came while the SOLICITED (or ANY) arm was outstanding: the
    // notification is owed for certain (CQ-NOT-07), with no doubt whether the entry came
    // before the arm or was already retrieved (CQ-NOT-02).
    bool owed_for_certain = false;
    uint32_t interrupt_interval = 0;
    uint32_t interrupt_count = 0;
    std::vector<ObjectId> qps;  // index: QPs that complete here, by id (model.cpp keeps it)
};

struct SrqState {
    uint32_t depth = 0;
    uint32_t max_sge = 0;
    uint32_t notify_threshold = 0;
    bool notify_armed = false;
    bool has_notification = false;
    // MODEL-SRQ-02 (after_threshold_reached): the arm made at creation fires only once the
    // queued receives have reached the threshold; `reached` says they have.
    bool needs_reach = false;
    bool reached = false;
    uint64_t posted = 0;       // receives posted since creation
    uint32_t outstanding = 0;  // posted and not yet retrieved from a CQ (SRQ-17)
    bool failed = false;       // SRQ-15: a fatal error, the SRQ and its QPs unusable
    // Check mode: the arm of an NdkModifySrq still pending already fired (a provider may notify
    // before the request's callback): its completion does not arm again.
    bool armed_by_pending_modify_fired = false;
    std::deque<WorkRequest> receives;
    std::vector<ObjectId> qps;  // index: QPs attached to it, by id (model.cpp keeps it)
};

struct QpState {
    ObjectId pd = 0, receive_cq = 0, initiator_cq = 0, srq = 0;
    Context qp_context = 0;
    uint32_t receive_depth = 0, initiator_depth = 0;
    uint32_t max_receive_sge = 0, max_initiator_sge = 0, inline_data_size = 0;
    enum class Connection : uint8_t {
        idle,
        connecting,
        connected,
        disconnecting,
        disconnected
    } connection = Connection::idle;
    ObjectId connector = 0;
    ObjectId peer = 0;            // the QP at the other end
    bool error = false;           // a request failed: the rest is flushed (STATUS_CANCELLED)
    bool flushed = false;         // MODEL-FLS-01: NdkFlush left it in error (cancelled reading)
    bool flushed_usable = false;  // MODEL-FLS-01 (usable): NdkFlush came, the QP works on
    bool peer_error = false;      // the peer's request failed: what happens here is open
    // Check mode: the QP went to error when a peer's message arrived (a receive it failed), a
    // moment the consumer cannot know until an entry shows it: requests posted meanwhile may
    // still run before the error (FLS-03). Cleared by the first error entry retrieved.
    bool error_timing_open = false;
    // Check mode: an entry of this QP showed the reading the profile did not choose
    // (Completion::other_reading); the model's prediction of what followed no longer holds, so
    // every later outcome here is open.
    bool outcome_open = false;
    // Its CQ or SRQ failed (CQ-STATUS-02/03, SRQ-15): the QP is unusable, and later posts
    // behave as MODEL-CQ-STATUS-01 reads.
    bool unusable = false;
    std::deque<WorkRequest> initiator;  // posted, not yet executed
    std::deque<WorkRequest> receive;    // posted receives, not yet consumed
    // Executed, completion not yet seen (check mode). (Fifo: no heap node per entry.)
    Fifo<Completion> initiator_pending;
    Fifo<Completion> receive_pending;
    uint64_t next_sequence = 1;
    // Posted and not yet retrieved from the CQ (the consumer's view of the queue depth,
    // CQP-DEPTH-01/02). A silent success frees its slot once a later entry of its queue is
    // retrieved (completions of one queue come in order).
    uint32_t initiator_outstanding = 0;
    uint32_t receive_outstanding = 0;
    uint32_t initiator_silent = 0;
    // Reads posted and not yet retrieved (RD-08, MODEL-RD-01), silent ones apart as above.
    uint32_t reads_outstanding = 0;
    uint32_t reads_silent = 0;
    uint32_t outbound_read_limit =
        0;  // the connection's effective OutboundReadLimit (CONN-RL-01/02)
    // Check mode: contexts of requests that must never show up on a CQ (WR-05, WR-SILENT-01).
    std::deque<Context> failed_inline;
    // s11frq: those of failed_inline refused by NdkFastRegister, whose page says it itself (an
    // entry names FR-ST-04 first), and of these the ones refused with STATUS_ACCESS_VIOLATION
    // (FR-ACC-04 first).
    std::deque<Context> failed_inline_fast_register;
    std::deque<Context> failed_inline_access_violation;
    std::deque<Context> silent_successes;
    // Of those, the ones whose failure the oracle would trace to a rule further up (a token
    // getter's or a flag's grant: Completion::token_rule, grant_rules): an error entry of a
    // silent request the model ran as a success names them first, as a non-silent one's does.
    std::vector<std::pair<Context, RuleList>> silent_success_hints;
    // Requests the oracle already reported against (accepted although they had to fail): their
    // entries, if any, are not judged again.
    std::vector<Context> unjudged;  // (vectors: an empty deque still allocates)
    // Requests posted after the QP became unusable whose CQ failed: no entry may appear
    // (MODEL-CQ-STATUS-01).
    std::vector<Context> never;
    // Initiator requests accepted with NDK_OP_FLAG_DEFER since the last one without it, and
    // those an inline refusal then had to hand to the hardware (DEFER-04): a missing entry of
    // one of the latter names DEFER-04 before WR-10.
    std::vector<Context> deferred_posted;
    std::vector<Context> handed_over;
    // s11frq: those of handed_over an NdkFastRegister's inline refusal handed over (FR-DEFER-02
    // first: the page states the duty for its own refusal).
    std::vector<Context> handed_over_by_fast_register;
    // Check mode: bytes a silent success moved, checked with the queue's next completion.
    std::vector<Completion::Landing> silent_landings;
};

struct ConnectorState {
    enum class Phase : uint8_t {
        idle,
        connecting,
        connected_pending_complete,
        accepting_incoming,
        accepting,
        established,
        rejected,
        disconnecting,
        disconnected,
        failed
    } phase = Phase::idle;
    ObjectId qp = 0;
    ObjectId peer = 0;      // the connector at the other end
    ObjectId listener = 0;  // for a passive connector: its listener
    ObjectId shared_endpoint = 0;
    SocketAddress local, remote;
    // The effective read limits (CONN-RL-01/02): capped at the adapter's maxima, lowered to the
    // peer's opposite ones once known; and the values the consumer asked for.
    uint32_t inbound_read_limit = 0, outbound_read_limit = 0;
    uint32_t requested_inbound = 0, requested_outbound = 0;
    uint32_t private_data_length = 0;       // what the peer sent
    uint32_t sent_private_data_length = 0;  // what this side sent (CONN-27)
    bool ex = false;               // completed with an Ex call: NdkDisconnectEventCallbackEx
    bool ephemeral_local = false;  // the local port was picked by the provider (CONN-11)
    bool has_disconnect_event = false;
    bool disconnect_event_delivered = false;  // simulate: the event was emitted
    uint32_t disconnect_events = 0;           // check: disconnect callbacks seen (CONN-DISC-02)
};

struct ListenerState {
    bool listening = false;
    bool paused = false;
    bool has_connect_event = false;
    SocketAddress address;
    bool ephemeral = false;  // listened on port 0: the provider picked the port (CONN-25)
};

struct SharedEndpointState {
    SocketAddress address;
    bool ephemeral = false;  // created with port 0: the provider picked the port (CONN-07)
};

using ObjectState =
    std::variant<AdapterState, PdState, CqState, QpState, SrqState, MrState, MwState, LamState,
                 ConnectorState, ListenerState, SharedEndpointState>;

struct Object {
    ObjectId id = 0;
    Kind kind = Kind::adapter;
    ObjectId parent = 0;   // LIFE-TREE-01
    ObjectId adapter = 0;  // the adapter it belongs to
    Life life = Life::creating;
    // LIFE-TREE-02: objects whose close must wait for this one (it is their successor).
    std::vector<ObjectId> antecedents;
    uint32_t open_successors = 0;   // children and successors not yet closed (CLOSE-02)
    uint32_t pending_requests = 0;  // asynchronous requests on it not yet completed (CLOSE-03)
    bool close_requested = false;
    ObjectState state;
};

}  // namespace ndkct::model
