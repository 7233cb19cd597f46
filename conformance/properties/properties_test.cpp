// The property-based cross-check of model and provider: random sequences of NDK calls, valid and
// invalid alike, run against the provider; the oracle judges every answer; the first violation
// fails the property and RapidCheck shrinks the sequence to a minimal one, printed as NDK calls.
//
// Each property is a googletest test per provider under test (--provider=SPEC, like the directed
// suite) with a stable dotted ID. A failure records, for the runner's JSON report:
// counterexample (the minimal sequence), replay (a command line that runs exactly it), seed,
// shrunk_calls (its length after the setup), shrink_cut when shrinking stopped at its budget
// (--ndkct_shrink_ms) before it was done.
#include <iostream>

#include "commands.hpp"
#include "commands_access_flags.hpp"
#include "commands_chains_past_length.hpp"
#include "commands_decoy_va_mappings.hpp"
#include "commands_decoy_virtual_addresses.hpp"
#include "commands_fast_register.hpp"
#include "commands_fast_register_completion.hpp"
#include "commands_fast_register_invalidation.hpp"
#include "commands_fast_register_labels.hpp"
#include "commands_fast_register_page_counts.hpp"
#include "commands_fast_register_page_runs.hpp"
#include "commands_first_registrations.hpp"
#include "commands_initialized_tokens.hpp"
#include "commands_lam_releases.hpp"
#include "commands_mapping_failures.hpp"
#include "commands_mappings_and_initializations.hpp"
#include "commands_memory_bounds.hpp"
#include "commands_qp_creation.hpp"
#include "commands_qp_limits.hpp"
#include "commands_read_fence.hpp"
#include "commands_registered_addressing.hpp"
#include "commands_silent_failure.hpp"
#include "ndkct/conformance/suite.hpp"
#include "property.hpp"

namespace ndkct::properties {
namespace {

using conformance::ProviderSpec;

class Properties : public ::testing::TestWithParam<ProviderSpec> {
  protected:
    void check(const std::string& id, const CommandGen& commands) {
        const auto& options = PropertyOptions::from_command_line();
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = test->name();
        name = name.substr(0, name.find('/'));
        if (auto it = conformance::declared_tests().find("Properties." + name);
            it != conformance::declared_tests().end()) {
            std::string rules;
            for (const auto& r : it->second->rules)
                rules += (rules.empty() ? "" : ",") + r;
            RecordProperty("rules", rules);
        }
        RecordProperty("ndkct_id", id);
        RecordProperty("provider", GetParam().text);
        RecordProperty("seed", std::to_string(options.seed));
        PropertyOutcome outcome;
        try {
            outcome = check_property(id, GetParam(), commands, options);
        } catch (const std::exception& error) {
            FAIL() << "cannot open the provider or read its waivers: " << error.what();
        }
        if (sequences_across_nodes() > 0) RecordProperty("nodes", 2);  // conformance/twonode
        for (const auto& line : outcome.waived)
            std::cout << "[ ndkct  ] " << id << ": " << line << "\n";
        if (!outcome.waived.empty()) {
            std::string all;
            for (const auto& line : outcome.waived)
                all += (all.empty() ? "" : "\n") + line;
            RecordProperty("waived", all);
        }
        if (outcome.passed) {
            std::cout << "[ ndkct  ] " << id << ": " << outcome.sequences
                      << " sequences passed (seed " << options.seed << ")\n";
            return;
        }
        std::string full_name = std::string(test->test_suite_name()) + "." + test->name();
        std::string replay = "RC_PARAMS=\"" + outcome.reproduce + "\" " +
                             ::testing::internal::GetArgvs()[0] + " --provider=" + GetParam().text +
                             " --gtest_filter=" + full_name;
        RecordProperty("counterexample", outcome.message);
        RecordProperty("shrunk_calls", std::to_string(outcome.shrunk_calls));
        if (outcome.shrink_cut) RecordProperty("shrink_cut", "true");
        if (!outcome.reproduce.empty()) RecordProperty("replay", replay);
        conformance::RuleScope scope(outcome.rules);
        ADD_FAILURE() << id << " failed after " << outcome.sequences << " passing sequences (seed "
                      << options.seed << ")\n"
                      << outcome.message
                      << (outcome.reproduce.empty() ? "" : "replay: " + replay + "\n");
    }
};

INSTANTIATE_TEST_SUITE_P(Providers, Properties,
                         ::testing::ValuesIn(conformance::providers_under_test()),
                         conformance::provider_label);

// A property: its declaration (stable ID, the rules it is built to exercise) and its test.
#define NDKCT_PROPERTY(name, test_id, ...)                    \
    const conformance::TestDeclaration ndkct_property_##name{ \
        "Properties", #name, test_id, {__VA_ARGS__}};         \
    TEST_P(Properties, name)

// Registration in every shape: RegisterMr over whole, split and broken chains with any flags,
// fast registration over LAMs of any buffer size, with any page count, FBO, length, address
// and flags, on MRs of either kind, then used, invalidated and deregistered. (Every property
// overwrites every object's Dispatch, GEN-CREATE-05: the Sut's DispatchTrap.)
NDKCT_PROPERTY(MemoryRegistration, "ndk.property.memory_registration", "RMR-MDL-01", "RMR-FLG-03",
               "IFR-APC-04", "IFR-ST-01", "LAM-SIZE-01", "LAM-SIZE-04", "FR-ALIGN-01",
               "FR-ALIGN-03", "FR-ACC-01", "FR-ACC-02", "FR-ST-03", "FR-TOK-01", "WR-05", "AMB-16",
               "GEN-CREATE-05") {
    check(
        "ndk.property.memory_registration",
        machine<CreatePd, CreateMr, CreateMr, RegisterMr, RegisterMr, DeregisterMr,
                InitializeFastRegisterMr, InitializeFastRegisterMr, BuildLam, BuildLam, ReleaseLam,
                FastRegister, FastRegister, FastRegister, FastRegistration, FastRegistration,
                Invalidate, Write, Read, DeferredChain, GetCqResults, GetCqResults, CloseObject>());
}

// A region's bounds (issue 13; a property of its own, so that the others' sequences stay as they
// were): regions registered and fast-registered with their ends inside a page, then reached by
// accesses that start a few bytes before the end and run a few bytes past it (they must fail
// and touch nothing, RMR-ACC-03, FR-LEN-03), among ordinary transfers, deregistrations and
// invalidations (commands_memory_bounds.hpp).
NDKCT_PROPERTY(MemoryBounds, "ndk.property.memory_bounds", "RMR-ACC-03", "FR-LEN-03", "RMR-VA-01",
               "FR-MAP-01") {
    check("ndk.property.memory_bounds",
          machine<CreateMr, RegisterMr, DeregisterMr, InitializeFastRegisterMr, BuildLam,
                  FastRegister, FastRegistration, Invalidate, Write, Read, GetCqResults,
                  AccessAcrossTheEnd, AccessAcrossTheEnd, RegionEndAccess, RegionEndAccess,
                  FastRegionEndAccess, FastRegionEndAccess>());
}

// The data path over the connected pair: Read, Write, Send and Receive through registered
// regions and bound windows, with bad tokens, lengths and flags; Flush; CQ polling (either
// form) and arming, and calls from inside the notification callback.
NDKCT_PROPERTY(DataPath, "ndk.property.data_path", "WRT-01", "RD-01", "SND-01", "RCV-03",
               "CQ-RES-01", "CQ-RES-03", "CQ-RES-04", "CQ-RES-05", "WR-SILENT-01", "FLS-02",
               "MW-02", "WR-05", "GEN-IRQL-01") {
    check("ndk.property.data_path",
          machine<CreateMr, CreateMr, RegisterMr, RegisterMr, RegisterMr, CreateMw, Bind,
                  Invalidate, Read, Read, Write, Write, Write, Send, Send, Receive, Receive,
                  SendToReceive, SendToReceive, SendToReceive, DeferredChain, Flush, GetCqResults,
                  GetCqResults, GetCqResults, ArmCq, CallFromNotification, DeregisterMr>());
}

// Lifetimes: objects created and closed in any order (antecedents before successors pend,
// CLOSE-02; a connector's close cancels its pending connect, CLOSE-08; a CQ closed from its own
// notification callback, CLOSE-07), QPs of any shape, connected and disconnected (whole
// handshakes, or step by step with the connection data read between the steps), used on the
// way.
NDKCT_PROPERTY(Lifetime, "ndk.property.lifetime", "CLOSE-02", "GEN-ASYNC-01", "GEN-ASYNC-03",
               "GEN-CREATE-04", "GEN-CREATE-06", "GEN-MAND-01", "VER-03", "CQP-LIM-01",
               "CQP-LIM-06", "WR-04", "CLOSE-07", "CLOSE-08", "CONN-PD-03", "CONN-RL-02") {
    check("ndk.property.lifetime",
          machine<QueryAdapterInfo, CreatePd, CreateCq, CreateQp, CreateQp, CreateMr, CreateMw,
                  Connect, Connect, StartConnect, Accept, CompleteConnect, GetConnectionData,
                  GetConnectionData, Disconnect, CloseObject, CloseObject, CloseObject, Send,
                  Receive, DeferredChain, GetCqResults, CallFromNotification, NotifiedCq, BuildLam,
                  ReleaseLam, Flush>());
}

// Connections step by step: handshakes begun and left pending, accepted, completed or
// abandoned, each side with its read limits and private data; the connection data read between
// the steps (probes, short buffers, NULL limit pointers); connectors closed at any step (a close
// cancels a pending connect, CLOSE-08); data sent over the new connections.
NDKCT_PROPERTY(Connection, "ndk.property.connection", "CONN-PD-03", "CONN-PD-04", "CONN-PD-05",
               "CONN-RL-01", "CONN-RL-02", "CONN-RL-03", "CONN-21", "CONN-28", "CLOSE-03",
               "CLOSE-08") {
    check("ndk.property.connection",
          machine<CreateCq, CreateQp, CreateQp, CreateQp, StartConnect, StartConnect, Accept,
                  Accept, Accept, CompleteConnect, GetConnectionData, GetConnectionData,
                  GetConnectionData, Connect, Disconnect, CloseObject, Send, Receive>());
}

// QPs held to the sizes they were created with: receives and initiator requests posted exactly
// at a QP's own depths, SGE counts and InlineDataSize (commands_qp_limits.hpp), on the setup pair
// and on QPs of any shape connected to each other, with polling, sends, receives and flushes
// between.
NDKCT_PROPERTY(QpLimits, "ndk.property.qp_limits", "CQP-DEPTH-01", "CQP-DEPTH-02", "CQP-SGE-01",
               "CQP-SGE-02", "CQP-INL-01") {
    check("ndk.property.qp_limits",
          machine<CreateCq, CreateQp, CreateQp, Connect, PostAtTheQpLimits, PostAtTheQpLimits,
                  PostAtTheQpLimits, GetCqResults, GetCqResults, Send, Receive, Flush,
                  CloseObject>());
}

// NdkCreateQp's page beyond a QP's sizes (commands_qp_creation.hpp): QPs made on an SRQ with an
// initiator size at or one past its maximum, a QP's PD, CQ or SRQ closed before it, NdkCreateQp
// from inside a CQ notification callback, a QP's queues on CQs of their own; beside QPs and CQs
// of the World and their closes.
NDKCT_PROPERTY(QpCreation, "ndk.property.qp_creation", "CQP-SRQ-02", "CQP-SRQ-03", "CQP-SRQ-04",
               "CQP-SRQ-05", "CQP-SRQ-06", "CQP-LIFE-01", "CQP-IRQL-01", "CQP-OBJ-02") {
    check("ndk.property.qp_creation",
          machine<CreateCq, CreateQp, QpWithItsAntecedents, QpWithItsAntecedents,
                  CreateQpFromNotification, QueuesOnTheirOwnCqs, GetCqResults, CloseObject>());
}

// NdkFastRegister's arguments and addressing (issue 13): fast registrations with every flag
// (FR-FLG-01) and peer writes naming a region's bare offset (FR-ZBVA-01), with what makes and
// uses fast-register MRs, in a machine small enough that they meet within a few calls.
NDKCT_PROPERTY(FastRegisterAddressing, "ndk.property.fast_register_addressing", "FR-FLG-01",
               "FR-ZBVA-01", "FR-APC-03") {
    check("ndk.property.fast_register_addressing",
          machine<CreateMr, InitializeFastRegisterMr, BuildLam, FastRegister, FencedFastRegister,
                  FastRegistration, FastRegistration, BareOffsetWrite, BareOffsetWrite, Write,
                  Invalidate, GetCqResults>());
}

// Regions registered with NdkRegisterMr, named otherwise than while registered by their
// virtual address (issue 13, s11rmr; a property of its own, so that the others' sequences stay
// as they were): by their bare offset (RMR-VA-02: no zero-based addressing), or through their
// tokens after NdkDeregisterMr completed (RMR-DEREG-01); MRs registered twice in a row (after a
// lack of resources the MR is unregistered, RMR-ST-03), or registered again and used through
// its new local token (RMR-TOK-01); among ordinary registrations from mid-page, transfers
// reaching their ends and deregistrations (RMR-VA-01: the region starts at VA, StartVa +
// ByteOffset; commands_registered_addressing.hpp).
NDKCT_PROPERTY(RegisteredRegions, "ndk.property.registered_regions", "RMR-VA-02", "RMR-DEREG-01",
               "RMR-ST-03", "RMR-TOK-01", "RMR-VA-01") {
    check(
        "ndk.property.registered_regions",
        machine<CreateMr, RegisterMr, DeregisterMr, Write, Read, GetCqResults,
                RegisteredBareOffsetWrite, RegisteredBareOffsetAccess, RegisteredBareOffsetAccess,
                WriteAfterDeregister, DeregisteredRegionAccess, DeregisteredRegionAccess,
                RegisterTwice, RegisterTwice, ReregisteredSourceWrite, ReregisteredSourceWrite>());
}

// NdkBuildLam's chains and IRQL and overlapping initializations (issue 13): mappings of the
// first piece of a chain broken past Length (LAM-MDL-04: it must be mapped), builds from inside a
// CQ's notification callback (LAM-IRQL-01: they may not wait there) and two fast-register MRs
// initialized there back to back (IFR-CONC-01: each completes on its own), sends from a mapping's
// logical addresses with the privileged token (LAM-USE-02), with ordinary builds and releases
// (commands_mappings_and_initializations.hpp).
NDKCT_PROPERTY(MappingsAndInitializations, "ndk.property.mappings_and_initializations",
               "LAM-MDL-04", "LAM-IRQL-01", "IFR-CONC-01", "LAM-USE-02") {
    check("ndk.property.mappings_and_initializations",
          machine<BuildLam, ReleaseLam, BuildLamBeforeABreak, BuildLamBeforeABreak, NotifiedLam,
                  NotifiedLam, OverlappingInitializations, SendFromMapping, GetCqResults>());
}

// Mappings released while others stay live (issue 13, s12lamrel; a property of its own, so that
// the others' sequences stay as they were): sends from a mapping's logical addresses after an
// older mapping was released (LAM-REL-01: releasing one LAM leaves the others mapped), among
// ordinary builds, releases and sends from mappings (commands_lam_releases.hpp).
NDKCT_PROPERTY(LamReleases, "ndk.property.lam_releases", "LAM-REL-01", "LAM-USE-02") {
    check("ndk.property.lam_releases", machine<BuildLam, ReleaseLam, SendAfterARelease,
                                               SendAfterARelease, SendFromMapping, GetCqResults>());
}

// Failing mapping requests between builds of one mapping (issue 13, s13lam; a property of its
// own, so that the others' sequences stay as they were): size probes that fail (LAM-ERR-01) and
// requests too large for the adapter (LAM-ST-03) must leave no resources behind, among ordinary
// builds and releases (commands_mapping_failures.hpp).
NDKCT_PROPERTY(MappingFailures, "ndk.property.mapping_failures", "LAM-ERR-01", "LAM-ST-03") {
    check("ndk.property.mapping_failures",
          machine<BuildLam, ReleaseLam, ProbeBuildAndRelease, ShortageBetweenBuilds>());
}

// The access flags and addressing of NdkRegisterMr and NdkFastRegister (issue 13, s11flags; a
// property of its own, so that the others' sequences stay as they were): fast registrations at
// BaseVirtualAddress 0 with FBO 0 (FR-ALIGN-02) among ordinary ones, registrations with any
// flags (the read-sink flag among them, RMR-SINK-02/03, FR-SINK-02/03), used as sources and
// targets of writes, reads, sends and receives (RMR-FLG-*, FR-FLG-*; commands_access_flags.hpp).
NDKCT_PROPERTY(AccessFlags, "ndk.property.access_flags", "FR-ALIGN-02", "FR-FLG-03", "RMR-SINK-02",
               "FR-SINK-02") {
    check("ndk.property.access_flags",
          machine<LocalAccessProbe, LocalAccessProbe, LocalAccessProbe, CreateMr, RegisterMr,
                  InitializeFastRegisterMr, BuildLam, FastRegister, ZeroBaseFastRegister,
                  ZeroBaseFastRegister, FastRegistration, Write, Read, Receive, SendToReceive,
                  GetCqResults>());
}

// NdkFastRegister's completion contract (issue 13, s11frq): fast registrations of every kind
// with the writes, reads and invalidations that use them, chains of DEFER requests (FR-DEFER-01,
// FR-DEFER-02) and the CQ polling that judges their entries, and fast registrations made from
// inside the initiator CQ's notification callback (FR-IRQL-01: they may not wait there).
NDKCT_PROPERTY(FastRegisterCompletion, "ndk.property.fast_register_completion", "FR-IRQL-01",
               "FR-ST-01", "FR-ST-04", "FR-DEFER-01", "FR-DEFER-02", "FR-QP-01") {
    check("ndk.property.fast_register_completion",
          machine<CreateMr, InitializeFastRegisterMr, BuildLam, FastRegister, FastRegistration,
                  Write, Read, Invalidate, DeferredChain, DeferredChain, GetCqResults,
                  FastRegisterFromNotification, FastRegisterAfterAnEntry,
                  FastRegisterAfterAnEntry>());
}

// NdkRegisterMr over chains contiguous for whole pages of Length and broken past them (issue 13,
// s11mdl; a property of its own, so that the others' sequences stay as they were): they must be
// registered (RMR-MDL-04) and written into, among ordinary registrations, deregistrations and
// writes (commands_chains_past_length.hpp).
NDKCT_PROPERTY(ChainsPastLength, "ndk.property.chains_past_length", "RMR-MDL-04") {
    check("ndk.property.chains_past_length",
          machine<CreateMr, RegisterMr, DeregisterMr, Write, GetCqResults, RegisteredBeforeABreak,
                  RegisteredBeforeABreak>());
}

// NdkFastRegister's READ_FENCE (issue 13, s12fence; a property of its own, so that the others'
// sequences stay as they were): reads, and fenced fast registrations posted right after a read
// on the same QP (commands_read_fence.hpp), their entries polled in batches of any size: a fenced
// registration's entry may not come ahead of an earlier read's (FR-FENCE-01, WR-FENCE-01).
NDKCT_PROPERTY(ReadFence, "ndk.property.read_fence", "FR-FENCE-01", "WR-FENCE-01") {
    check("ndk.property.read_fence", machine<ReadThenFencedFastRegister, ReadThenFencedFastRegister,
                                             Read, FencedFastRegister, BuildLam, GetCqResults>());
}

// NdkFastRegister's BaseVirtualAddress beyond every pointer (issue 13, s13align; a property of its
// own, so that the others' sequences stay as they were): registrations at labels with bit 47 or 63
// set, written into by the peer, beside ordinary ones (commands_fast_register_labels.hpp): the
// address is a label, however large (FR-ALIGN-01).
NDKCT_PROPERTY(FastRegisterLabels, "ndk.property.fast_register_labels", "FR-ALIGN-01") {
    check("ndk.property.fast_register_labels",
          machine<HighLabelFastRegistration, HighLabelFastRegistration, FastRegistration, Write,
                  GetCqResults>());
}

// The tokens of an initialized fast-register MR (issue 13, s13tok2; a property of its own, so
// that the others' sequences stay as they were): first registrations of two MRs, the second's
// remote token read after its initialization (commands_first_registrations.hpp): the read changes
// nothing, so it must be taken like the first (IFR-TOK-02).
NDKCT_PROPERTY(FirstRegistrationsAfterTokenReads, "ndk.property.first_registrations",
               "IFR-TOK-02") {
    check("ndk.property.first_registrations",
          machine<FirstRegistrations, FirstRegistrations, GetCqResults>());
}

// A fast registration ended by NdkInvalidate (issue 13, s13inv; a property of its own, so that
// the others' sequences stay as they were): valid fast registrations invalidated at once on their
// QP and then written through their old remote token (FR-INV-01, INV-01: the invalidation must
// be carried out, and the token then grants nothing), beside plain registrations the writes
// may take as sources (commands_fast_register_invalidation.hpp).
NDKCT_PROPERTY(FastRegisterInvalidation, "ndk.property.fast_register_invalidation", "FR-INV-01",
               "INV-01") {
    check("ndk.property.fast_register_invalidation",
          machine<FastRegisteredThenInvalidated, FastRegisteredThenInvalidated, CreateMr,
                  RegisterMr, GetCqResults>());
}

// Fast-register MRs used through the local token they reported before their first fast
// registration (issue 13, s13tok; a property of its own, so that the others' sequences stay as
// they were): writes from the region through the token read once the initialization completed
// (IFR-TOK-01; AMB-40 from_initialize: it reaches the region the next fast registration makes),
// among ordinary fast registrations, writes and invalidations (commands_initialized_tokens.hpp).
NDKCT_PROPERTY(InitializedTokens, "ndk.property.initialized_tokens", "IFR-TOK-01", "AMB-40") {
    check("ndk.property.initialized_tokens",
          machine<InitializedTokenSourceWrite, InitializedTokenSourceWrite, FastRegistration, Write,
                  Invalidate, GetCqResults>());
}

// Fast registrations over pages that are not one run of consecutive logical pages (issue 13,
// s13map; a property of its own, so that the others' sequences stay as they were): byte k of the
// region lands on page AdapterPageArray[(FBO + k) / PAGE_SIZE] (FR-MAP-01, FR-PAGE-02), among
// ordinary fast registrations and writes (commands_fast_register_page_runs.hpp).
NDKCT_PROPERTY(FastRegisterPageRuns, "ndk.property.fast_register_page_runs", "FR-MAP-01",
               "FR-PAGE-02") {
    check("ndk.property.fast_register_page_runs",
          machine<PagesNotARunWrite, PagesNotARunWrite, FastRegistration, Write, GetCqResults>());
}

// NdkFastRegister's SILENT_SUCCESS when the registration fails (issue 13, s13silent; a property
// of its own, so that the others' sequences stay as they were): a silent registration over a
// valid one (AMB-30), then the peer's write into its region (commands_silent_failure.hpp). A write
// that fails shows it did not take effect, so its error entry is owed (FR-SILENT-02).
NDKCT_PROPERTY(SilentFailure, "ndk.property.silent_failure", "FR-SILENT-02", "FR-SILENT-01") {
    check("ndk.property.silent_failure",
          machine<SilentFastRegisterOverValid, SilentFastRegisterOverValid, Write, GetCqResults>());
}

// NdkRegisterMr over decoy-VA MDLs (issue 13, s13va; a property of its own, so that the others'
// sequences stay as they were): the VA labels the region, the PFNs carry its bytes, so writes
// into such a region and reads from it move the real pages' bytes, never the decoy's
// (RMR-VA-03), among ordinary registrations, deregistrations, writes and reads
// (commands_decoy_virtual_addresses.hpp).
NDKCT_PROPERTY(DecoyVirtualAddresses, "ndk.property.decoy_virtual_addresses", "RMR-VA-03") {
    check("ndk.property.decoy_virtual_addresses",
          machine<CreateMr, RegisterMr, DeregisterMr, Write, Read, GetCqResults,
                  RegisteredWithDecoyVa, RegisteredWithDecoyVa>());
}

// NdkBuildLam over decoy-VA MDLs (issue 13, s13lamva; a property of its own, so that the others'
// sequences stay as they were): the VA labels the start of the range, the PFNs are what the
// mapping reaches, so a send through the LAM's logical addresses carries the real pages' bytes,
// never the decoy's (LAM-VA-01), among ordinary builds, releases and sends from mappings
// (commands_decoy_va_mappings.hpp).
NDKCT_PROPERTY(DecoyVaMappings, "ndk.property.decoy_va_mappings", "LAM-VA-01", "LAM-USE-02") {
    check("ndk.property.decoy_va_mappings",
          machine<BuildLam, ReleaseLam, SendFromMapping, GetCqResults, SendFromDecoyVaMapping,
                  SendFromDecoyVaMapping>());
}

// Every page of a fast registration backs it (issue 13, s14apc; a property of its own, so that
// the others' sequences stay as they were): the peer's request at a region's start, then the same
// in its last page (FR-APC-01, FR-MAP-01), among ordinary fast registrations and writes
// (commands_fast_register_page_counts.hpp).
NDKCT_PROPERTY(FastRegisterPageCounts, "ndk.property.fast_register_page_counts", "FR-APC-01",
               "FR-MAP-01") {
    check("ndk.property.fast_register_page_counts",
          machine<LastPageAfterFirst, LastPageAfterFirst, FastRegistration, Write, GetCqResults>());
}

// Every command at once: the one big machine.
NDKCT_PROPERTY(AllCalls, "ndk.property.all_calls", "GEN-ASYNC-01", "WR-05", "WR-10") {
    check("ndk.property.all_calls",
          machine<QueryAdapterInfo, CreatePd, CreateCq, CreateQp, CreateMr, CreateMw, RegisterMr,
                  RegisterMr, DeregisterMr, InitializeFastRegisterMr, BuildLam, ReleaseLam,
                  FastRegister, FastRegister, FastRegistration, Invalidate, Bind, Read, Write,
                  Write, Send, Receive, SendToReceive, DeferredChain, Flush, GetCqResults,
                  GetCqResults, ArmCq, CallFromNotification, NotifiedCq, Connect, StartConnect,
                  Accept, CompleteConnect, GetConnectionData, Disconnect, CloseObject>());
}

}  // namespace
}  // namespace ndkct::properties
