// Every `must` and `model-choice` rule of the catalog is implemented and cited in the model's
// sources (refmodel/src: a `// RULE-ID` comment or the ID in a RuleIds list beside the code that
// implements it), or is in one of two reasoned lists below: rules the model cannot check that
// the conformance harness checks (or has to check) on a running provider, and rules no NDKPI call
// can observe (the NDIS miniport's duties). Consumer-duty rules are the caller's: their reason is
// in the catalog, and they need neither. The sources are read at run time from NDKCT_REFMODEL_SRC
// (and the harness's from NDKCT_HARNESS_SRC), set by CMake.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "ndkct/spec/catalog.hpp"

#ifndef NDKCT_REFMODEL_SRC
#error "NDKCT_REFMODEL_SRC must name refmodel/src"
#endif

namespace ndkct::model::test {
namespace {

// A rule outside the model, with the reason. `harness_id` names the rule ID the harness's
// sources cite where they check it (the test holds them to it); empty when the check is the
// harness's job but is not written yet, which the reason then says.
struct Outside {
    std::string reason;
    std::string harness_id;
};

// Rules the model, being pure (no threads, no IRQL, no pointers, no dispatch tables, no object
// memory), cannot check: they concern the running provider, and the harness (conformance/)
// checks them or has to.
const std::map<std::string, Outside, std::less<>> kCheckedByTheHarness = {
    // The callback contract: the harness counts callbacks per request and sees the return value.
    {"GEN-ASYNC-03",
     {"a callback after a final inline status: seen by the harness's callback records",
      "GEN-ASYNC-03"}},
    {"GEN-CB-05",
     {"event callbacks' contexts: the harness's event records reject a stranger context "
      "(GEN-CB-03)",
      "GEN-CB-03"}},
    // Objects as memory: header, dispatch pointer, out-pointers.
    {"GEN-CREATE-03",
     {"Dispatch set before an object is handed out: the harness's check_object", "GEN-CREATE-03"}},
    {"GEN-CREATE-04",
     {"the out-pointer untouched after STATUS_PENDING: the harness's sentinel", "GEN-CREATE-04"}},
    {"GEN-CREATE-06", {"Header.ObjectType: the harness's check_object", "GEN-CREATE-06"}},
    {"VER-03", {"Header.Version of each object: the harness's check_object", "VER-03"}},
    {"GEN-CREATE-05",
     {"the provider never rereads Dispatch: only a harness that overwrites it can tell; the "
      "harness's DispatchTrap (dispatch_trap.cpp) does",
      "GEN-CREATE-05"}},
    {"GEN-CREATE-07",
     {"Header.NdkReserved zeroed and left alone: the harness's check_object and close_async",
      "GEN-CREATE-07"}},
    {"EXT-02",
     {"*pExtensionInterface filled on success: the harness's sentinel in "
      "query_extension_interface",
      "EXT-02"}},
    {"AMB-17",
     {"the output pointer after a failed create: written by the provider shell (adapters/model "
      "applies "
      "the reading), read by no test (GEN-CREATE-02, which the model implements)",
      ""}},
    {"LAM-REL-02",
     {"the MDL chain's bytes unchanged by build and release: memory the model does not read; "
      "the harness compares snapshots of the chain",
      "LAM-REL-02"}},
    {"CONN-PD-03",
     {"the private data bytes copied: the model sees lengths only (CONN-27, CONN-PD-05 it "
      "checks); the harness compares the bytes with what the peer's call sent",
      "CONN-PD-03"}},
    // The ABI: layouts and member orders, pinned by spec/include's static asserts; the harness
    // calls every provider through them.
    {"AI-04",
     {"NDK_ADAPTER_DISPATCH's members and order: the ABI header (spec/include) the harness calls "
      "through",
      ""}},
    {"AI-13", {"NDK_ADAPTER_INFO's member order: the ABI header (spec/include)", ""}},
    {"EXT-03",
     {"every table's NdkQueryExtensionInterface slot: the ABI header (spec/include)", ""}},
    {"GEN-DISP-01", {"dispatch member order: the ABI header (spec/include)", ""}},
    {"GEN-LAYOUT-01", {"header then Dispatch at fixed offsets: the ABI header (spec/include)", ""}},
    {"CLOSE-API-01", {"each table starts with its close entry: the ABI header (spec/include)", ""}},
    {"CQ-RES-08",
     {"NDK_RESULT's layout and its agreement with NDK_RESULT_EX: the ABI header; the harness reads "
      "both",
      ""}},
    {"ADP-REG-01",
     {"the provider's two entry points (open and close): found by the harness's loader", ""}},
    // Threads, IRQL, blocking: properties of a running provider. (The seed pages' *-IRQL-01 and
    // *-CTX-01 are cited by model/page_rules.hpp, which the harness's judgements name.)
    {"GEN-IRQL-01",
     {"no blocking below PASSIVE_LEVEL: a property of a running provider (the harness calls "
      "from callbacks); not checked yet",
      ""}},
    {"GEN-CB-01",
     {"not touching an object after initiating its callback: threads and memory, for the harness",
      ""}},
    {"GEN-CB-04",
     {"a close from inside a callback must not deadlock: threads, for the harness", ""}},
    {"CQ-NOT-03",
     {"notification callbacks of one CQ never overlap: the harness counts running callbacks",
      "CQ-NOT-03"}},
    {"CLOSE-05",
     {"an antecedent's close waits for a successor's running close callback: the harness's "
      "check_close_order",
      "CLOSE-05"}},
    {"CLOSE-07",
     {"a close waits for a running event callback: the harness's check_close_order", "CLOSE-07"}},
    {"WR-03", {"NdkFlush concurrent with a post: threads, for the harness", ""}},
    {"WR-07", {"posts to the two queues of a QP at once: threads, for the harness", ""}},
    {"WR-08",
     {"no locks only to serialize posts: a property of the implementation (performance)", ""}},
    {"WR-09", {"closing the QP's connector during a post: threads, for the harness", ""}},
};

// Rules about the NDIS miniport, its INF and OIDs, and the adapter's environment, which a
// user-space suite calling NDKPI functions cannot observe.
const std::map<std::string, std::string, std::less<>> kNotObservable = {
    {"ADP-OPEN-02",
     "not observable from NDKPI calls: NDK is switched off by the miniport (OID_NDK_SET_STATE)"},
    {"AI-03",
     "not observable from NDKPI calls: NDIS_NDK_CAPABILITIES go from the miniport to NDIS"},
    {"AI-09", "not observable from NDKPI calls: how many fast-register MRs an FRMRPageCount costs"},
    {"AI-10", "not observable from NDKPI calls: NDIS_NDK_CAPABILITIES.NdkInfo is NDIS's copy"},
    {"AI-12", "not observable from NDKPI calls: adapter-wide totals reported to NDIS"},
    {"AI-FLAG-04", "not observable from NDKPI calls: whether separate engines serve connections"},
    {"AMB-21",
     "not observable from NDKPI calls: the two header-only functions are in no dispatch table"},
    {"CQ-CREATE-03", "not observable from NDKPI calls: on which processor notifications run"},
    {"CQ-IM-12",
     "not observable from NDKPI calls: how long an interrupt is held back (moderation "
     "changes timing only; the settings in force are modelled, CQ-IM-05..10)"},
    {"SRQ-08", "not observable from NDKPI calls: on which processor notifications run"},
    {"MINI-INIT-01", "not observable from NDKPI calls: miniport initialization attributes"},
    {"MINI-INIT-02", "not observable from NDKPI calls: the miniport's OID support"},
    {"MINI-STATE-01", "not observable from NDKPI calls: OID_NDK_SET_STATE"},
    {"MINI-STATE-02", "not observable from NDKPI calls: OID_NDK_SET_STATE"},
    {"MINI-STATE-03", "not observable from NDKPI calls: NdisMNetPnPEvent from MiniportOidRequest"},
    {"MINI-STATE-04", "not observable from NDKPI calls: NetEventNDKEnable/Disable PnP events"},
    {"MINI-OID-01", "not observable from NDKPI calls: OID_NDK_CONNECTIONS"},
    {"MINI-OID-02", "not observable from NDKPI calls: OID_NDK_CONNECTIONS entries mapped to TCP"},
    {"MINI-OID-03", "not observable from NDKPI calls: OID_NDK_LOCAL_ENDPOINTS"},
    {"MINI-OID-04", "not observable from NDKPI calls: OID_NDK_STATISTICS"},
    {"MINI-STAT-01", "not observable from NDKPI calls: the miniport's performance counters"},
    {"MINI-STAT-02", "not observable from NDKPI calls: the miniport's performance counters"},
    {"MINI-STAT-03", "not observable from NDKPI calls: the miniport's performance counters"},
    {"MINI-INF-01", "not observable from NDKPI calls: the driver's INF keywords"},
    {"MINI-INF-02", "not observable from NDKPI calls: the driver's INF keywords"},
    {"MINI-INF-03", "not observable from NDKPI calls: the driver's INF keywords (RoCE frame size)"},
    {"MINI-HDR-01",
     "not observable from NDKPI calls: NDIS object headers of the miniport's structures"},
};

struct Source {
    std::string name;
    std::string text;
};

// The .cpp files of a directory and its internal headers (.hpp beside them: templates and inline
// helpers the .cpp files share implement rules too). readings.cpp is left out: it reads the
// profile's knobs, and naming a rule there does not implement it.
std::vector<Source> sources_in(const std::filesystem::path& dir) {
    std::vector<Source> out;
    if (!std::filesystem::is_directory(dir)) return out;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const auto extension = entry.path().extension();
        if ((extension != ".cpp" && extension != ".hpp") ||
            entry.path().filename() == "readings.cpp")
            continue;
        std::ifstream in(entry.path());
        std::ostringstream text;
        text << in.rdbuf();
        out.push_back({entry.path().filename().string(), text.str()});
    }
    std::sort(out.begin(), out.end(),
              [](const Source& a, const Source& b) { return a.name < b.name; });
    return out;
}

std::vector<Source> model_sources() {
    return sources_in(NDKCT_REFMODEL_SRC);
}

std::vector<Source> harness_sources() {
#ifdef NDKCT_HARNESS_SRC
    return sources_in(NDKCT_HARNESS_SRC);
#else
    return {};
#endif
}

// The ID as a whole token: "FR-APC-01" is not cited by "IFR-APC-01" or "FR-APC-010".
bool cites(std::string_view text, std::string_view id) {
    auto part_of_id = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    };
    for (size_t at = text.find(id); at != std::string_view::npos; at = text.find(id, at + 1)) {
        bool starts = at == 0 || !part_of_id(text[at - 1]);
        bool ends = at + id.size() == text.size() || !part_of_id(text[at + id.size()]);
        if (starts && ends) return true;
    }
    return false;
}

std::string where_cited(const std::vector<Source>& sources, std::string_view id) {
    std::string out;
    for (const auto& s : sources)
        if (cites(s.text, id)) out += (out.empty() ? "" : ", ") + s.name;
    return out;
}

bool judged(const spec::Rule& rule) {
    return rule.level != spec::RuleLevel::consumer_duty;
}

TEST(Citations, TokenMatchingIsWholeWord) {
    EXPECT_TRUE(cites("// FR-APC-01, AMB-08", "FR-APC-01"));
    EXPECT_TRUE(cites("{\"FR-APC-01\"}", "FR-APC-01"));
    EXPECT_FALSE(cites("// IFR-APC-01", "FR-APC-01"));
    EXPECT_FALSE(cites("// FR-APC-012", "FR-APC-01"));
    EXPECT_FALSE(cites("// CQ-RI-01/02", "CQ-RI-02"));  // a range names only its first rule
}

TEST(Citations, SourcesAreFound) {
    auto sources = model_sources();
    ASSERT_FALSE(sources.empty()) << "no .cpp files in " << NDKCT_REFMODEL_SRC;
    EXPECT_TRUE(std::any_of(sources.begin(), sources.end(),
                            [](const Source& s) { return s.name == "rules_memory.cpp"; }));
    EXPECT_TRUE(std::none_of(sources.begin(), sources.end(),
                             [](const Source& s) { return s.name == "readings.cpp"; }));
}

// The acceptance: every catalog rule is implemented and cited in the model, or is
// outside it with a reason (harness-checked, not observable), or is a consumer duty.
TEST(Citations, EveryRuleIsCitedByTheModelOrOutsideItWithAReason) {
    const spec::Catalog& catalog = spec::builtin_catalog();
    auto sources = model_sources();
    ASSERT_FALSE(sources.empty());
    std::string uncited, stale;
    size_t cited = 0, harness = 0, unobservable = 0, duties = 0;
    for (const spec::Rule& rule : catalog.rules()) {
        if (!judged(rule)) {
            ++duties;
            continue;
        }
        std::string cited_in = where_cited(sources, rule.id);
        bool listed_harness = kCheckedByTheHarness.contains(rule.id);
        bool listed_unobservable = kNotObservable.contains(rule.id);
        if (listed_harness || listed_unobservable) {
            if (!cited_in.empty())
                stale += "  " + rule.id + " is cited in " + cited_in + ": take it off the " +
                         (listed_harness ? "harness" : "not-observable") + " list\n";
            if (listed_harness)
                ++harness;
            else
                ++unobservable;
            continue;
        }
        if (cited_in.empty()) {
            uncited += "  " + rule.id + " [" + std::string(spec::to_string(rule.level)) + ", " +
                       rule.function + "]: " + rule.summary.substr(0, 110) + "\n";
            continue;
        }
        ++cited;
    }
    std::cout << "citations: " << cited << " rules cited by the model, " << harness
              << " checked by the harness, " << unobservable << " not observable, " << duties
              << " consumer duties (of " << catalog.size() << ")\n";
    EXPECT_GT(cited, 350u) << "the model cites too few rules: was refmodel/src found?";
    EXPECT_TRUE(uncited.empty()) << "rules neither cited in " << NDKCT_REFMODEL_SRC
                                 << " nor listed with a reason (implement and cite them, or list "
                                    "them in citation_test.cpp):\n"
                                 << uncited;
    EXPECT_TRUE(stale.empty()) << stale;
}

// The lists name catalog rules the provider is judged on, each with a reason.
TEST(Citations, ListsNameJudgedRulesWithReasons) {
    const spec::Catalog& catalog = spec::builtin_catalog();
    std::string wrong;
    auto check = [&](const std::string& id, const std::string& reason, const char* list) {
        const spec::Rule* rule = catalog.find(id);
        if (!rule)
            wrong += "  " + id + " (" + list + ") is not in the catalog\n";
        else if (!judged(*rule))
            wrong +=
                "  " + id + " (" + list + ") is a consumer duty: its reason is in the catalog\n";
        if (reason.empty()) wrong += "  " + id + " (" + list + ") has no reason\n";
    };
    for (const auto& [id, outside] : kCheckedByTheHarness)
        check(id, outside.reason, "harness");
    for (const auto& [id, reason] : kNotObservable) {
        check(id, reason, "not observable");
        if (reason.rfind("not observable from NDKPI calls", 0) != 0)
            wrong += "  " + id +
                     ": a not-observable reason starts with \"not observable from NDKPI calls\"\n";
        if (kCheckedByTheHarness.contains(id)) wrong += "  " + id + " is on both lists\n";
    }
    EXPECT_TRUE(wrong.empty()) << wrong;
}

// Where the harness list says the harness checks a rule, the harness's sources cite the ID they
// check it under.
TEST(Citations, HarnessCitesWhatTheListSaysItChecks) {
    auto sources = harness_sources();
    if (sources.empty())
        GTEST_SKIP() << "the conformance harness's sources are not beside refmodel";
    std::string missing;
    for (const auto& [id, outside] : kCheckedByTheHarness)
        if (!outside.harness_id.empty() && where_cited(sources, outside.harness_id).empty())
            missing += "  " + id + ": the harness does not cite " + outside.harness_id + "\n";
    EXPECT_TRUE(missing.empty()) << missing;
}

// The model's citations name rules that exist: every rule-ID-shaped token in its sources
// ("FR-ALIGN-01", "MODEL-CQ-ERR-01") is in the catalog (a typo cites nothing).
TEST(Citations, RuleIdsCitedByTheModelExistInTheCatalog) {
    const spec::Catalog& catalog = spec::builtin_catalog();
    const std::regex id_shape("[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-[0-9]{2}");
    auto part_of_id = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    };
    std::set<std::string> unknown;
    size_t seen = 0;
    for (const auto& source : model_sources()) {
        const std::string& t = source.text;
        for (auto it = std::sregex_iterator(t.begin(), t.end(), id_shape);
             it != std::sregex_iterator(); ++it) {
            size_t at = static_cast<size_t>(it->position()),
                   end = at + static_cast<size_t>(it->length());
            if ((at > 0 && part_of_id(t[at - 1])) || (end < t.size() && part_of_id(t[end])))
                continue;
            ++seen;
            if (!catalog.find(it->str())) unknown.insert(it->str() + " (" + source.name + ")");
        }
    }
    EXPECT_GT(seen, 200u);
    std::string list;
    for (const auto& id : unknown)
        list += "  " + id + "\n";
    EXPECT_TRUE(unknown.empty()) << "the model cites rule IDs the catalog does not have:\n" << list;
}

}  // namespace
}  // namespace ndkct::model::test
