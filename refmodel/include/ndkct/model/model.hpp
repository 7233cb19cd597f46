// ndkct/model/model.hpp: the executable specification of NDKPI.
//
// The model holds the state the documentation speaks of and the rules that govern it. For any
// call in any state it gives the set of outcomes the docs allow (expect); given the outcome a
// provider produced, it judges it, naming the rules it breaks, and advances (apply). Work
// requests are executed in the model's order: in Mode::simulate the model moves the bytes and
// fills the CQs (the reference provider is a thin shell around this); in Mode::check it records
// which completions and which bytes must appear, and judges what a real provider produces.
//
// Pure C++: no I/O, no threads, no clock. Providers and harnesses translate pointers to
// ObjectIds and deliver callbacks; the model only reasons.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ndkct/model/calls.hpp"
#include "ndkct/model/expectation.hpp"
#include "ndkct/model/memory.hpp"
#include "ndkct/model/readings.hpp"
#include "ndkct/model/state.hpp"
#include "ndkct/model/verdict.hpp"

namespace ndkct::model {

enum class Mode {
    simulate,  // the model is the provider: it moves bytes and produces completions
    check,     // the model judges a provider: it predicts completions and checks bytes
};

// What a provider answered, beyond the status: the out-parameters the call defines.
struct Observed {
    NTSTATUS status = STATUS_SUCCESS;
    uint32_t value = 0;                // UINT32/ULONG returns: a token, a result count
    std::optional<uint32_t> size_out;  // *pLAMSize, *pBufferSize, *pAddressSize, *pLength
    std::optional<uint32_t> fbo_out;   // NdkBuildLam *pFBO
    std::vector<uint64_t> lam_pages;   // NdkBuildLam: the AdapterPageArray written
    std::optional<NDK_ADAPTER_INFO> adapter_info;
    std::vector<NDK_RESULT_EX> results;    // NdkGetCqResults(Ex): what was returned
    std::optional<SocketAddress> address;  // address getters
    uint32_t inbound_read_limit = 0, outbound_read_limit = 0;  // NdkGetConnectionData
    // The harness saw an out-parameter written although the call returned STATUS_PENDING
    // (GEN-CREATE-01, LAM-ST-02).
    bool output_written_while_pending = false;
    // NdkGetCqResults(Ex): results (by index) whose target bytes the observer could not see (an
    // offline trace without them): where they landed is not judged.
    std::vector<uint32_t> landings_unseen;
};

// Something the provider owes the consumer that is not a return value: in simulate mode the
// reference provider delivers these; in check mode the harness reports the ones it saw.
struct Event {
    enum class Kind : uint8_t {
        cq_notification,   // NDK_FN_CQ_NOTIFICATION_CALLBACK(status)
        srq_notification,  // NDK_FN_SRQ_NOTIFICATION_CALLBACK(status)
        connect_request,   // NDK_FN_CONNECT_EVENT_CALLBACK(listener, new connector)
        disconnect,        // NDK_FN_DISCONNECT_EVENT_CALLBACK(_EX) of a connector
        request_complete,  // a pending request's callback (simulate: the model decided it)
    } kind;
    ObjectId object = 0;   // the CQ, SRQ, listener or connector
    ObjectId created = 0;  // connect_request: the passive connector
    NTSTATUS status = STATUS_SUCCESS;
    uint64_t pending = 0;  // request_complete
};

// What apply() returns.
struct Applied {
    Verdict verdict;
    ObjectId created = 0;  // a create call's new object (also while its creation pends)
    uint64_t pending = 0;  // the request to complete() after STATUS_PENDING
};

// Where a call's success is applied: inline, or in two steps around STATUS_PENDING.
enum class Stage : uint8_t {
    done,       // returned STATUS_SUCCESS (or a value): apply the whole effect
    pending,    // returned STATUS_PENDING: enter the in-between state
    completed,  // its callback reported success: finish the effect
    failed,     // its callback reported failure: undo the in-between state
    refused,    // returned a failure inline: only out-parameters are checked
};

// Check mode: how many expected landings not yet checked lie on each page. Counted on every
// landing recorded and checked, so kept dense (a count per page number, grown as page numbers
// are met) for the page numbers of an ordinary arena, and in a hash map above that.
class PageCounts {
  public:
    bool empty() const { return pages_ == 0; }
    bool contains(PFN_NUMBER pfn) const {
        if (pfn < dense_.size()) return dense_[pfn] != 0;
        return pfn >= kDenseLimit && sparse_.contains(pfn);
    }
    void add(PFN_NUMBER pfn) {
        if (pfn < kDenseLimit) {
            if (pfn >= dense_.size()) dense_.resize(std::max<size_t>(pfn + 1, 2 * dense_.size()));
            if (dense_[pfn]++ == 0) ++pages_;
        } else if (sparse_[pfn]++ == 0) {
            ++pages_;
        }
    }
    void remove(PFN_NUMBER pfn) {
        if (pfn < kDenseLimit) {
            if (pfn < dense_.size() && dense_[pfn] != 0 && --dense_[pfn] == 0) --pages_;
            return;
        }
        auto it = sparse_.find(pfn);
        if (it != sparse_.end() && --it->second == 0) {
            sparse_.erase(it);
            --pages_;
        }
    }

  private:
    static constexpr PFN_NUMBER kDenseLimit = PFN_NUMBER{1} << 20;  // 4 MiB of counts at most
    std::vector<uint32_t> dense_;
    std::unordered_map<PFN_NUMBER, uint32_t> sparse_;
    size_t pages_ = 0;  // pages with a count
};

class Model {
  public:
    Model(Readings readings, HostMemoryView memory, Mode mode);

    const Readings& readings() const { return readings_; }
    Mode mode() const { return mode_; }
    const HostMemoryView& memory() const { return memory_; }

    // Adapters open and close outside the dispatch tables (VER-02, CLOSE-ADP-01).
    ObjectId open_adapter();
    Verdict close_adapter(ObjectId adapter);
    // The outcomes the docs allow for OpenNdkAdapter asked for `requested` (major + lowest
    // minor) on a provider whose highest version is the profile's (VER-02/04/05, ADP-OPEN-*).
    Expectation expect_open(NDK_VERSION requested) const;

    // The outcomes the docs allow for `call` now.
    Expectation expect(const Call& call) const;
    // Judges what the provider did and advances the state.
    Applied apply(const Call& call, const Observed& observed);
    // The completion callback of a request that returned STATUS_PENDING.
    Applied complete(uint64_t pending, NTSTATUS status, const Observed& outputs = {});

    // ---- Completions ----
    // Simulate: the entries a CQ holds, oldest first (what NdkGetCqResults would return).
    const std::deque<Completion>& cq_entries(ObjectId cq) const;
    // Check: a completion the provider returned from NdkGetCqResults(Ex). Without
    // `landing_seen` the bytes at its target are not compared (the observer could not see them).
    Verdict observe_completion(ObjectId cq, const NDK_RESULT_EX& result, bool ex,
                               bool landing_seen = true);
    // Check: while false, bytes that requests place are not checked where they land (an offline
    // observer that cannot reconstruct what the requests read: conformance/trace).
    void set_landings_observable(bool observable) { landings_observable_ = observable; }
    // Check: how many bytes the completion the provider returned is expected to have landed (its
    // own and, for an initiator entry, those of the silent requests before it); 0 when it is
    // not one the model expects.
    uint64_t expected_landing_bytes(ObjectId cq, const NDK_RESULT_EX& result) const;
    // Check: bytes are expected to land within these bytes and have not been checked yet (to
    // the byte: a source beside a landing on its page is not overlapped by it).
    bool landing_expected_within(const Extent& bytes);
    // Check: the harness drained long enough; whatever the model still expects of this QP is
    // missing (WR-05), and whatever completions it can no longer expect are dropped.
    Verdict expect_nothing_outstanding(ObjectId qp);
    // DEFER-04: the requests an inline refusal handed to the hardware, still without their
    // entries once the harness has waited for them (before it flushes the QP).
    Verdict expect_handed_over_completed(ObjectId qp) const;
    // s11frq: the page rules a wait for entries on `cq` that gave up breaks first, judged by
    // the requests still expected there: where every one is an NdkFastRegister, its page's
    // (FR-DEFER-02 handed over by its refusal, FR-DEFER-01 deferred, else FR-ST-01); empty
    // otherwise (the generic WR-10 alone).
    RuleIds missing_entry_page_rules(ObjectId cq) const;
    // Completions the model still expects on a QP (check) or that are queued (simulate).
    size_t outstanding_completions(ObjectId qp) const;
    // A notification the provider owes: an arm is outstanding and an event that satisfies it
    // has happened (CQ-NOT-07); a harness waits for it.
    bool notification_owed(ObjectId cq) const;
    // The rules an owed notification that never came breaks (CQ-NOT-07 and the rule of what
    // satisfied the arm: SND-04 and CQ-NOT-10 for a solicited send's receive).
    RuleIds owed_notification_rules(ObjectId cq) const;
    // Owed beyond doubt: the CQ failed, or a solicited send's receive came while the arm was
    // outstanding (not an entry that may have come before the arm, or been retrieved already).
    bool notification_certainly_owed(ObjectId cq) const;

    // ---- Events ----
    // Simulate: events the provider now owes, in order; taking them clears them.
    std::vector<Event> take_events();
    // Check: an event the provider delivered; for connect requests, returns the new connector.
    Applied observe_event(const Event& event);

    // ---- Introspection ----
    // How messages name an object: by default its model number ("7"); an observer that knows
    // the provider's handles names them instead ("0x7fd5080012d0"), as the consumer, a trace
    // dump and a debugger see them.
    void name_objects(std::function<std::string(ObjectId)> namer) { namer_ = std::move(namer); }
    std::string object_text(ObjectId id) const {
        std::string named = namer_ ? namer_(id) : std::string();
        return named.empty() ? std::to_string(id) : named;
    }
    // Inline: the oracle looks objects up a few dozen times per NDK call.
    const Object* find(ObjectId id) const {
        return id > 0 && id < objects_.size() ? &objects_[id] : nullptr;
    }
    template <typename T>
    const T* state_of(ObjectId id) const {
        const Object* o = find(id);
        return o ? std::get_if<T>(&o->state) : nullptr;
    }
    size_t object_count() const { return objects_.size() - 1; }
    // Resolves a token the consumer passed: the MR or MW whose reported token it is, or 0.
    ObjectId object_of_token(ObjectId adapter, uint32_t token, bool remote) const;
    // IFR-TOK-01, AMB-40: the fast-registered MR whose local token read after its initialization
    // (before this registration) is `token`, when the getter reported another one since; or 0.
    ObjectId initialized_token_holder(ObjectId adapter, uint32_t token) const;

  private:
    struct Pending {
        uint64_t id;
        Call call;
        Expectation expected;
        ObjectId object;   // the object the request is on (or creates)
        ObjectId created;  // a create's new object
        // Its STATUS_PENDING stage was applied. A call that must fail applies none: its
        // failure, inline or through the callback, leaves the state as it was.
        bool committed = true;
    };

    // Each NDK call: expect_* lists the allowed outcomes, commit_* applies a success.
#define NDKCT_MODEL_CALL(T)                              \
    Expectation expect_call(const calls::T& call) const; \
    void commit(const calls::T& call, const Observed& observed, Applied& applied, Stage stage);
    NDKCT_MODEL_CALL(QueryAdapterInfo)
    NDKCT_MODEL_CALL(CreateCq)
    NDKCT_MODEL_CALL(CreatePd)
    NDKCT_MODEL_CALL(CreateSharedEndpoint)
    NDKCT_MODEL_CALL(CreateConnector)
    NDKCT_MODEL_CALL(CreateListener)
    NDKCT_MODEL_CALL(BuildLam)
    NDKCT_MODEL_CALL(ReleaseLam)
    NDKCT_MODEL_CALL(ResizeCq)
    NDKCT_MODEL_CALL(ArmCq)
    NDKCT_MODEL_CALL(GetCqResults)
    NDKCT_MODEL_CALL(ControlCqInterruptModeration)
    NDKCT_MODEL_CALL(RegisterMr)
    NDKCT_MODEL_CALL(DeregisterMr)
    NDKCT_MODEL_CALL(InitializeFastRegisterMr)
    NDKCT_MODEL_CALL(GetRemoteTokenFromMr)
    NDKCT_MODEL_CALL(GetLocalTokenFromMr)
    NDKCT_MODEL_CALL(GetRemoteTokenFromMw)
    NDKCT_MODEL_CALL(ModifySrq)
    NDKCT_MODEL_CALL(SrqReceive)
    NDKCT_MODEL_CALL(Flush)
    NDKCT_MODEL_CALL(Send)
    NDKCT_MODEL_CALL(Receive)
    NDKCT_MODEL_CALL(Bind)
    NDKCT_MODEL_CALL(FastRegister)
    NDKCT_MODEL_CALL(Invalidate)
    NDKCT_MODEL_CALL(Read)
    NDKCT_MODEL_CALL(Write)
    NDKCT_MODEL_CALL(SendAndInvalidate)
    NDKCT_MODEL_CALL(CreateMr)
    NDKCT_MODEL_CALL(CreateMw)
    NDKCT_MODEL_CALL(CreateSrq)
    NDKCT_MODEL_CALL(CreateQp)
    NDKCT_MODEL_CALL(CreateQpWithSrq)
    NDKCT_MODEL_CALL(GetPrivilegedMemoryRegionToken)
    NDKCT_MODEL_CALL(Connect)
    NDKCT_MODEL_CALL(ConnectWithSharedEndpoint)
    NDKCT_MODEL_CALL(CompleteConnect)
    NDKCT_MODEL_CALL(Accept)
    NDKCT_MODEL_CALL(Reject)
    NDKCT_MODEL_CALL(GetConnectionData)
    NDKCT_MODEL_CALL(GetLocalAddress)
    NDKCT_MODEL_CALL(GetPeerAddress)
    NDKCT_MODEL_CALL(Disconnect)
    NDKCT_MODEL_CALL(Listen)
    NDKCT_MODEL_CALL(ControlConnectEvents)
    NDKCT_MODEL_CALL(CloseObject)
    NDKCT_MODEL_CALL(QueryExtensionInterface)
#undef NDKCT_MODEL_CALL

    // ---- Shared machinery (model.cpp) ----
    Object* find_mutable(ObjectId id) {
        return id > 0 && id < objects_.size() ? &objects_[id] : nullptr;
    }
    template <typename T>
    T* state_mut(ObjectId id) {
        Object* o = find_mutable(id);
        return o ? std::get_if<T>(&o->state) : nullptr;
    }
    // The object must exist, be of `kind` and be usable; otherwise the expectation becomes
    // "undefined" (a consumer duty is broken: CLOSE-06 and the like). Returns it or nullptr.
    const Object* require(Expectation& e, ObjectId id, Kind kind, const char* role) const;
    ObjectId create_object(Kind kind, ObjectId parent, ObjectState state,
                           std::vector<ObjectId> antecedents = {});
    void ready(ObjectId id);
    void destroy(ObjectId id);  // close completed: release edges, mark closed
    // Simulate: a pending close whose successors and requests are all gone completes now
    // (CLOSE-02/03).
    void finish_close(ObjectId id);
    // Simulate: the peer of a connector that gave up fails its waiting connect or accept.
    void abandon_connection(ObjectId connector);
    void tear_down_connection(ObjectId connector);  // its QP flushed and left in error
    void leave_in_error(ObjectId qp);               // MODEL-FLS-01: flushed, stays in error
    // Check mode: an entry showed the reading not chosen; the QP's later outcomes are open.
    void open_outcomes(ObjectId qp);
    void error_reaches_peer(ObjectId qp);  // check mode: what a QP error may cancel
    uint64_t add_pending(const Call& call, const Expectation& e, ObjectId object, ObjectId created);
    void emit(Event event);
    // Indexes (AdapterState, CqState::qps, SrqState::qps), kept here only: a token value an MR
    // or MW now holds (nullopt: none), and an object's entries at creation and at close.
    void set_token(ObjectId object, bool remote, std::optional<uint32_t> value);
    void index_object(ObjectId id);
    void unindex_object(ObjectId id);
    // Check mode: a closed QP whose last due entry was retrieved leaves its CQs' index.
    void forget_closed_qp(ObjectId qp);
    // Check mode: the oracle expects entries on this CQ that have not been retrieved.
    bool entries_due(ObjectId cq) const;
    // The four stages of a create call, shared by every NdkCreateXxx.
    void create_stage(Kind kind, ObjectId parent, ObjectState state,
                      std::vector<ObjectId> antecedents, Applied& applied, Stage stage);
    // AMB-16: an MR used against its kind or state.
    void wrong_mr_state(Expectation& e, const char* rule, std::string why) const;
    // The adapter limits in force (the profile's, or what the provider reported).
    const NDK_ADAPTER_INFO& adapter_info(ObjectId any_object) const;
    void mark_indeterminate(const Call& call);

    // Flag checks shared by the initiator calls (OPF-01, AMB-04, DEFER-01, WR-04).
    void check_op_flags(Expectation& e, uint32_t flags, uint32_t listed, const char* call,
                        const char* rule) const;
    // WR-04 / FR-ST-02 ...: initiator calls on an unconnected QP.
    const QpState* require_connected_qp(Expectation& e, ObjectId qp, const char* rule) const;
    // MODEL-CQ-STATUS-01, MODEL-WR-DEPTH-01: a post to an unusable QP, or beyond a queue's depth.
    void check_usable(Expectation& e, const QpState& q) const;
    bool may_have_overrun(ObjectId cq) const;
    // Checks shared by Send, SendAndInvalidate, Read and Write (SGE-*, depths, read limit).
    void check_data_request(Expectation& e, const QpState& q, const std::vector<Sge>& sgl,
                            uint32_t flags, bool read) const;
    void check_depth(Expectation& e, uint32_t outstanding, uint32_t depth, const char* rule) const;
    // AMB-26: a limit the consumer keeps and whose violation has no documented status: a
    // consumer error (inline STATUS_INVALID_PARAMETER expected; any outcome is a warning under
    // invalid_parameter_required, another error passes silently under the advisory reading).
    void limit_exceeded(Expectation& e, RuleIds rules, std::string why) const;
    static void promise_first(Expectation& e, const char* rule);

    // ---- Memory (rules_memory.cpp) ----
    // Resolves an SGE list to arena bytes with the needed local rights. Returns false and
    // explains in `why` when a token, range or right is wrong.
    bool resolve_local(ObjectId qp, const std::vector<Sge>& sgl, uint32_t need, Extent& out,
                       std::string& why, RuleIds& rules) const;
    // The rules that grant the local access `need` of a resolved SGE list (the first SGE a page
    // rule covers): see Completion::grant_rules. Empty when no rule of the seed pages does.
    RuleList local_grant_rules(ObjectId qp, const std::vector<Sge>& sgl, uint32_t need) const;
    // IFR-TOK-01, AMB-40: an expected success through a local token read after initialization
    // that the getter no longer reports names IFR-TOK-01 first if it fails (a warning under
    // after_fast_register_returns).
    void note_initialized_local_token(ObjectId qp, const std::vector<Sge>& sgl,
                                      Completion& done) const;
    bool resolve_remote(ObjectId qp, uint32_t token, uint64_t address, uint64_t bytes,
                        uint32_t need, Extent& out, std::string& why, RuleIds& rules,
                        ObjectId* target = nullptr) const;
    // FR-SILENT-02: a remote access through `token` that failed and that a silent fast
    // registration which had to fail would have let through (MrState::failed_silent): marks
    // `done` so that its error entry shows that registration did not take effect.
    void note_refuted_registration(ObjectId qp, uint32_t token, uint64_t address, uint64_t bytes,
                                   uint32_t need, Completion& done) const;
    std::optional<PFN_NUMBER> pfn_of_logical(ObjectId adapter, uint64_t logical) const;
    bool from_live_mappings(ObjectId qp, const std::vector<Sge>& sgl) const;  // LAM-USE-02
    bool through_lam_outliving_release(ObjectId qp,
                                       const std::vector<Sge>& sgl) const;  // LAM-REL-01
    // LAM-ERR-01, LAM-ST-03: the rules a STATUS_INSUFFICIENT_RESOURCES refusal of this valid
    // NdkBuildLam breaks now (lam_witness_), or none where a shortage may be real.
    RuleList lam_refusal_rules(const calls::BuildLam& c) const;
    // A NdkFastRegister, NdkInvalidate or NdkBind (`type`) of the MR or MW was posted and its entry
    // not yet retrieved (check mode: the device may not have run it yet).
    bool request_in_flight(ObjectId target, NDK_OPERATION_TYPE type) const;
    // A work request accepted off the documented path: its entry, whatever it says, is taken
    // without judging (QpState::unjudged).
    void remember_unjudged(const Call& call);
    void invalidate_token_of(ObjectId object);
    void initialization_failed(ObjectId mr);  // AMB-38

    // ---- Connections (rules_connection.cpp) ----
    struct ConnectArgs;
    void connect_stage(const ConnectArgs& args, Stage stage);

    // ---- Work requests (rules_qp.cpp: the calls; rules_execute.cpp: the engine;
    //      rules_access.cpp: tokens and pages; rules_completion.cpp: the entries seen) ----
    void post(ObjectId qp, const Call& call, Context request_context, uint32_t flags,
              bool receive_queue, std::optional<Completion> decided = std::nullopt,
              std::shared_ptr<const WorkRequest::Undo> undo_info = nullptr);
    void release_deferred(ObjectId qp);  // DEFER-04: hand earlier DEFER requests to the "HW"
    // An initiator post refused inline: it may never show up on a CQ (WR-05, checked through
    // the remembered context), and earlier DEFER requests reach the "HW" first (DEFER-04).
    // `fast_register_status`: the inline status of a refused NdkFastRegister, whose page names
    // these duties for itself (FR-ST-04, FR-ACC-04, FR-DEFER-02).
    void refuse_post(ObjectId qp, Context request_context,
                     std::optional<NTSTATUS> fast_register_status = std::nullopt);
    // `target`: the MR or MW a FastRegister, Bind or Invalidate acts on (Completion::target).
    Completion initiator_completion(ObjectId qp, Context request_context, NDK_OPERATION_TYPE type,
                                    ObjectId target) const;
    void remote_failure(ObjectId qp, Completion& done, NTSTATUS status, RuleIds rules,
                        std::string why);
    void record_landing(Completion& done, const Extent& target, std::vector<std::byte> bytes);
    void run_queues(ObjectId qp);  // execute what can run, in order
    // FLS-03 (check mode): whether the consumer cannot know when the device reaches this request
    // of the QP, so that if it fails, the moment its QP goes to error is open.
    bool reached_at_unknown_moment(const QpState& q, ObjectId qp, const WorkRequest& wr) const;
    // `call` is the request's call (wr.call when it was queued; the caller's when it runs as it
    // is posted, not copied). False: it must wait.
    bool execute(ObjectId qp, WorkRequest& wr, const Call& call, Completion& done);
    void deliver(Completion&& completion);  // to the CQ (simulate) or the expected list (check)
    void fail_qp(ObjectId qp, bool flush_receives);
    void flush_qp(ObjectId qp);
    void undo(const WorkRequest& wr);  // a request flushed before it ran changes nothing
    // CQ-STATUS-02/03, SRQ-15: the CQ (SRQ) failed; it and every QP using it are unusable.
    void fail_cq(ObjectId cq, NTSTATUS status);
    void fail_srq(ObjectId srq);
    void make_unusable(ObjectId qp);
    // A completion was retrieved from its CQ: its queue slot (and read slot) is free again.
    void retrieved(const Completion& done);
    // Check mode: the bytes a request reads from local memory, as far as the requests before it
    // fix them (WR-FENCE-01): false when they depend on an order the docs leave open.
    // RMR-VA-03, LAM-VA-01: the landing's bytes moved through the pages a decoy-VA MDL's VA
    // maps: they sit, whole, on the target's VA pages, or are the source's VA pages' bytes.
    bool moved_through_va(const Completion::Landing& landing) const;
    bool read_from_another_source_page(const Completion::Landing& landing, size_t at,
                                       const std::byte* landed, uint32_t size) const;
    // FR-MAP-01: the bytes of piece `index` (from `at` in the data) are missing at their page
    // of the fast registration and sit instead where the run from its first entry puts them
    // (Completion::Landing::fast_registered_runs); for a read's source, the landed bytes are
    // the ones that run's page holds (source_fast_registered_runs).
    bool landed_as_run(const Completion::Landing& landing, size_t index, size_t at) const;
    bool read_as_run(const Completion::Landing& landing, size_t at, const std::byte* landed,
                     uint32_t size) const;
    // FR-APC-01 (check mode): the fast registrations of two or more pages a request reaches and
    // its shape (Completion::page_reaches): `remote`, the MR or MW a read or write names, with
    // its range; `local` and `used`, the request's own SGEs and the bytes moved through them;
    // for a send, `receiver` and `received`, the receive's SGEs it lands in. Null when none.
    std::shared_ptr<const Completion::PageReaches> page_reaches_of(
        ObjectId qp, NDK_OPERATION_TYPE type, uint32_t flags, uint32_t remote_token,
        ObjectId remote, uint64_t remote_address, uint64_t remote_bytes,
        const std::vector<Sge>* local, uint64_t used, ObjectId receiver = 0,
        const std::vector<Sge>* received = nullptr) const;
    // ...a request that succeeded: how far it reached (MrState::reached_by_shape).
    void note_pages_reached(const Completion::PageReaches& reaches);
    // ...a request that must succeed and failed: 2 when one of its shape succeeded reaching
    // less far into a fast registration it reaches (the region's backing ends before this one's
    // last page: FR-APC-01 first), 1 when it reaches the last page of one and no such witness
    // is known (FR-APC-01 among the rules, last), else 0; `because` says which.
    int short_region(const Completion::PageReaches& reaches, std::string& because) const;
    bool gather_expected(ObjectId qp, const Extent& source, bool fenced,
                         std::vector<std::byte>& out);
    void remove_edge(ObjectId successor, ObjectId antecedent);  // LIFE-TREE-*: an edge undone
    // Check mode: pages where expected bytes have yet to be seen landing (a hint index for
    // gather_expected; +1 when a landing is recorded, -1 when it is checked or dropped).
    void note_landing(const Completion::Landing& landing, int delta);
    void srq_check_threshold(ObjectId srq);  // SRQ-10/11/12, MODEL-SRQ-02
    void observe_cq_notification(ObjectId cq, NTSTATUS status, Verdict& v);
    void observe_srq_notification(ObjectId srq, NTSTATUS status, Verdict& v);
    Completion cancelled(ObjectId qp, const WorkRequest& wr, bool receive_queue) const;
    void notify_cq(ObjectId cq, bool error_entry, bool solicited);

    Readings readings_;
    HostMemoryView memory_;
    Mode mode_;
    std::function<std::string(ObjectId)> namer_;
    std::vector<Object> objects_;  // index = ObjectId; [0] unused
    std::map<uint64_t, Pending> pending_;
    uint64_t next_pending_ = 1;
    // The request being posted (check mode: one that runs later than its own post, having
    // waited, fails at a moment the consumer cannot know; QpState::error_timing_open).
    ObjectId posting_qp_ = 0;
    uint64_t posting_sequence_ = 0;
    std::vector<Event> events_;
    PageCounts landing_pages_;
    // Check mode: QPs that were given landings to check (a superset of those that still hold
    // some: one that holds none leaves it when a scan finds it empty), so that the scans for
    // overlapping landings visit these QPs and not every object (100,000 live MRs made each
    // scan 100,000 objects long: refmodel/bench, scale).
    std::vector<ObjectId> landing_qps_;
    void note_landing_qp(ObjectId qp) {
        if (std::find(landing_qps_.begin(), landing_qps_.end(), qp) == landing_qps_.end())
            landing_qps_.push_back(qp);
    }
    // Calls visit(QpState&, ObjectId) for every QP of landing_qps_ that still holds a landing,
    // dropping the others.
    template <typename Visit>
    void for_each_landing_qp(Visit&& visit);
    // Some page of `bytes` has bytes expected to land on it (the cheap test before a byte one).
    bool on_landing_pages(const Extent& bytes) const;
    bool landings_observable_ = true;
    // The call apply() is applying: a commit's `c` is one of its alternatives, so post() takes
    // the request's call from here instead of copying it (call_of). Null outside apply().
    const Call* applying_ = nullptr;
    Call call_copy_;  // call_of's copy when `c` is not applying_'s (reused: no allocation)
    template <typename T>
    const Call& call_of(const T& c) {
        if (applying_ && std::get_if<T>(applying_) == &c) return *applying_;
        call_copy_ = c;
        return call_copy_;
    }
    // Check mode: every QP ever created (request_in_flight visits these, not every object).
    std::vector<ObjectId> qps_;
    // LAM-ERR-01, LAM-ST-03: the last NdkBuildLam that succeeded with nothing else pending, kept
    // while only failed NdkBuildLam requests and NdkReleaseLam calls follow it (any other call,
    // or callback, on any adapter, drops it: rules_memory.cpp, lam_refusal_rules).
    struct LamWitness {
        ObjectId adapter = 0;           // 0: none
        ObjectId mapping = 0;           // the mapping it built
        uint64_t pages = 0;             // the pages it spans
        uint32_t failures = 0;          // NdkBuildLam requests failed since (either form)
        uint32_t lacked_resources = 0;  // of them, with STATUS_INSUFFICIENT_RESOURCES
    } lam_witness_;
};

}  // namespace ndkct::model
