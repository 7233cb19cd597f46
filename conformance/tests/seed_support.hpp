// conformance/tests/seed_support.hpp: small helpers shared by the directed tests of the five seed
// functions (NdkFastRegister, NdkRegisterMr, NdkInitializeFastRegisterMr, NdkBuildLam,
// NdkCreateQp). Header-only; everything goes through Session, so the oracle sees every call.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "ndkct/conformance/suite.hpp"
#include "ndkct/spec/profile.hpp"

namespace ndkct::conformance::seed {

// A byte pattern that differs from page to page and from the zero fill of fresh buffers.
// 127.0.0.1:port, and the same as the sockaddr NDK calls take.
inline sockaddr_in loopback4(uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

// A fixed port for a test's own listener or connect target (k < 16: which one in the test), one
// set per process (test processes run in parallel and share a real device's port space). Below
// 49152: providers pick their ephemeral ports from 49152..65535 (CONN-25), and a fixed port that
// happens to be a connector's picked one is rightly refused (CONN-LST-01) while the oracle, which
// does not learn picked ports, expects success. Above the Session's own 20000..39999.
inline uint16_t test_port(unsigned k) {
    return static_cast<uint16_t>(40000 + (getpid() % 572) * 16 + k % 16);
}

inline const sockaddr* as_sockaddr(const sockaddr_in& a) {
    return reinterpret_cast<const sockaddr*>(&a);
}

inline std::byte pattern(size_t i, uint8_t seed) {
    return std::byte(uint8_t(i * 31 + seed) | 1);
}

inline void fill(const platform::LockedBuffer& b, uint8_t seed) {
    for (size_t i = 0; i < b.size(); ++i)
        b.data()[i] = pattern(i, seed);
}

// True while every byte of b is still the one fill(b, seed) wrote (nothing landed there).
inline bool still_filled(const platform::LockedBuffer& b, uint8_t seed) {
    for (size_t i = 0; i < b.size(); ++i)
        if (b.data()[i] != pattern(i, seed)) return false;
    return true;
}

// True when [offset, offset + length) of b is all zero (nothing landed there).
inline bool untouched(const platform::LockedBuffer& b, size_t offset, size_t length) {
    return std::all_of(b.data() + offset, b.data() + offset + length,
                       [](std::byte x) { return x == std::byte{0}; });
}

inline uint64_t address_of(const platform::LockedBuffer& b, size_t offset = 0) {
    return reinterpret_cast<uint64_t>(b.data() + offset);
}

// An SGE naming an address as a plain value (fast-registered regions are addressed by their
// BaseVirtualAddress, which need not be a pointer of this process).
inline NDK_SGE sge_at(uint64_t address, ULONG length, UINT32 token) {
    NDK_SGE s{};
    s.LogicalAddress.QuadPart = static_cast<LONG64>(address);
    s.Length = length;
    s.MemoryRegionToken = token;
    return s;
}

// A page-aligned base far from any real pointer: FastRegister addresses are labels (FR-ALIGN-01).
constexpr uint64_t kFarBase = 0x0000'5A00'0000'0000ull;

// The logical pages of [offset, offset + length) of a buffer, from NdkBuildLam over one MDL.
struct Mapping {
    platform::MdlChain chain;
    LamResult lam;
    std::vector<NDK_LOGICAL_ADDRESS> pages;
    bool ok() const { return lam.done.ok(); }
};

inline Mapping map_buffer(Session& s, const platform::LockedBuffer& b, size_t offset = 0,
                          size_t length = 0) {
    Mapping m;
    if (length == 0) length = b.size() - offset;
    // One MDL describes at most 4089 pages: longer ranges are a chain of 4000-page pieces.
    constexpr size_t kPiece = 4000 * PAGE_SIZE;
    if (offset % PAGE_SIZE + length <= 4089 * PAGE_SIZE) {
        m.chain = platform::describe(b, offset, length);
    } else {
        std::vector<size_t> pieces(length / kPiece, kPiece);
        if (length % kPiece) pieces.push_back(length % kPiece);
        m.chain = platform::describe_split(b, offset, pieces);
    }
    size_t pages = (offset % PAGE_SIZE + length + PAGE_SIZE - 1) / PAGE_SIZE;
    m.lam = s.build_lam(m.chain.head(), length,
                        static_cast<ULONG>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(pages)));
    m.pages = m.lam.pages();
    return m;
}

// Releases mappings at the end of a test, after every object is closed (a fast-registered MR
// must not outlive the logical addresses it maps: LAM-REL-03). Declare it first in a test body.
class Mappings {
  public:
    explicit Mappings(Session& s) : s_(s) {}
    ~Mappings() {
        s_.close_all();
        for (auto& m : held_)
            if (m->ok()) s_.release_lam(m->lam);
    }
    Mappings(const Mappings&) = delete;
    Mappings& operator=(const Mappings&) = delete;
    Mapping& add(const platform::LockedBuffer& b, size_t offset = 0, size_t length = 0) {
        held_.push_back(std::make_unique<Mapping>(map_buffer(s_, b, offset, length)));
        return *held_.back();
    }

  private:
    Session& s_;
    std::vector<std::unique_ptr<Mapping>> held_;
};

// A fast-register MR of pd, initialized for `pages` pages; nullptr when either step failed.
inline NDK_MR* fast_register_mr(Session& s, NDK_PD* pd, ULONG pages, bool remote_access) {
    auto made = s.create_mr(pd, true);
    if (!made.object) return nullptr;
    Done d = s.initialize_fast_register_mr(made.object, pages, remote_access);
    return d.ok() ? made.object : nullptr;
}

// The first `n` pages of a mapping.
inline std::vector<NDK_LOGICAL_ADDRESS> first(const std::vector<NDK_LOGICAL_ADDRESS>& pages,
                                              size_t n) {
    return {pages.begin(), pages.begin() + std::min(n, pages.size())};
}

// The one completion a request posted on a QP of `cq` makes, which must carry its RequestContext:
// its status (a failure, and STATUS_PENDING, when none came).
inline NTSTATUS completion_status(Session& s, NDK_CQ* cq, const void* context) {
    auto results = s.drain(cq, 1);
    if (results.size() != 1) {
        ADD_FAILURE() << "a posted request did not complete";
        return STATUS_PENDING;
    }
    EXPECT_EQ(results[0].RequestContext, context);
    return results[0].Status;
}

// Waits for exactly `count` entries, then looks a little longer for any extra one.
inline std::vector<NDK_RESULT_EX> settle(Session& s, NDK_CQ* cq, size_t count) {
    auto results = s.drain(cq, count);
    if (results.size() >= count) {
        auto more = s.drain(cq, 1, milliseconds(30));
        results.insert(results.end(), more.begin(), more.end());
    }
    return results;
}

inline const NDK_RESULT_EX* find_result(const std::vector<NDK_RESULT_EX>& results,
                                        const void* context) {
    for (const auto& r : results)
        if (r.RequestContext == context) return &r;
    return nullptr;
}

// Scratch regions for a harmless marker request (an 8-byte RDMA write on the pair).
struct Marker {
    platform::LockedBuffer source, target;
    Registered src, dst;
};

inline Marker make_marker(Session& s, NDK_PD* pd) {
    Marker m;
    m.source = s.buffer(PAGE_SIZE);
    m.target = s.buffer(PAGE_SIZE);
    fill(m.source, 0x5A);
    m.src = s.register_buffer(pd, m.source, 0);
    m.dst = s.register_buffer(pd, m.target, NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
    return m;
}

// Posts the marker on qp and returns everything the CQ held until the marker's completion and
// a little after. A request refused inline before it must not be among them (WR-05, FR-ST-04).
inline std::vector<NDK_RESULT_EX> after_marker(Session& s, NDK_QP* qp, NDK_CQ* cq, Marker& m,
                                               const void* context) {
    NDKCT_RULE("WR-10");  // the marker is a valid write: accepted, it completes once
    NDK_SGE sge = Session::sge(m.source, 0, 8, m.src.local_token);
    NTSTATUS posted = s.write(qp, const_cast<void*>(context), {&sge, 1}, address_of(m.target),
                              m.dst.remote_token);
    {
        NDKCT_RULE("WRT-01");
        EXPECT_STATUS(STATUS_SUCCESS, posted) << "the marker write";
    }
    std::vector<NDK_RESULT_EX> all;
    auto deadline = std::chrono::steady_clock::now() + Session::scaled(milliseconds(5000));
    while (!find_result(all, context) && std::chrono::steady_clock::now() < deadline) {
        auto got = s.drain(cq, 1, milliseconds(50));
        all.insert(all.end(), got.begin(), got.end());
    }
    auto more = s.drain(cq, 1, milliseconds(30));
    all.insert(all.end(), more.begin(), more.end());
    EXPECT_TRUE(find_result(all, context)) << "the marker write did not complete";
    return all;
}

// A request refused inline made no CQ entry: post a marker behind it and look.
inline void expect_no_entry_for(Session& s, NDK_QP* qp, NDK_CQ* cq, Marker& m,
                                const void* refused) {
    static int marker_context;
    auto results = after_marker(s, qp, cq, m, &marker_context);
    NDKCT_RULE("WR-05");
    EXPECT_FALSE(find_result(results, refused)) << "a request refused inline made a CQ entry";
    EXPECT_EQ(results.size(), 1u) << "only the marker's entry was expected";
}

// A fast registration that must not take effect, in either form AMB-29 allows: refused inline
// (an error status, no CQ entry ever) or accepted (STATUS_SUCCESS) and completed with an error
// status. `why`: the rule that makes it invalid (a success completion breaks that rule). Returns
// true when it was refused inline (the QP is then still usable).
inline bool expect_not_registered(Session& s, NDK_QP* qp, NDK_CQ* cq, Marker& m, NTSTATUS status,
                                  const void* context, const std::vector<std::string>& why) {
    {
        NDKCT_RULE("FR-ST-03");
        EXPECT_NE(status, STATUS_PENDING) << "NdkFastRegister never pends (FR-ST-03)";
    }
    if (NT_ERROR(status)) {
        expect_no_entry_for(s, qp, cq, m, context);
        return true;
    }
    NDKCT_RULE("AMB-29", "FR-ST-01");  // accepted: then it completes, with an error
    EXPECT_STATUS(STATUS_SUCCESS, status);
    auto results = s.drain(cq, 1);
    EXPECT_EQ(results.size(), 1u) << "an accepted request must complete (FR-ST-01)";
    if (!results.empty()) {
        EXPECT_EQ(results[0].RequestContext, context);
        RuleScope invalid(why);
        EXPECT_TRUE(NT_ERROR(results[0].Status))
            << "the request must not register the region, but completed with "
            << spec::status_name(results[0].Status);
    }
    return false;
}

// ---- A second session with an edited profile ----
//
// Opens the provider under test again, its profile's JSON text changed by regex replacements
// (e.g. {"\"resource_failure_percent\": [0-9]+", "\"resource_failure_percent\": 30"}). The
// reference provider then behaves accordingly (its limits, its injected resource failures);
// another provider reports its own NDK_ADAPTER_INFO and ignores the reference_provider section,
// so a test must read the limits from the session's info(). Returns nullptr (with a failure)
// when the session cannot be opened.
inline std::unique_ptr<Session> session_with(
    const ProviderSpec& spec, const std::vector<std::pair<std::string, std::string>>& edits) {
    static std::atomic<int> counter{0};
    std::string json = spec::resolve_profile(spec.profile).json;
    for (const auto& [pattern, replacement] : edits) {
        std::string edited = std::regex_replace(json, std::regex(pattern), replacement);
        if (edited == json) {
            ADD_FAILURE() << "the profile has nothing matching " << pattern;
            return nullptr;
        }
        json = std::move(edited);
    }
    auto path =
        std::filesystem::temp_directory_path() /
        ("ndkct-seed-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".json");
    std::ofstream(path) << json;
    SessionOptions options;
    options.profile_override = path.string();
    std::unique_ptr<Session> s;
    try {
        s = std::make_unique<Session>(spec, options);
    } catch (const std::exception& error) {
        ADD_FAILURE() << "cannot open the provider with an edited profile: " << error.what();
    }
    std::filesystem::remove(path);
    return s;
}

// Closes everything of a second session and fails the test on what its oracle found.
inline void finish(Session& s) {
    s.close_all();
    for (const auto& v : s.verdict().violations) {
        if (v.warning) continue;
        RuleScope scope(v.rules, FailureKind::oracle);
        ADD_FAILURE() << "oracle (second session): " << v.describe();
    }
}

// For a second session whose reference provider fails calls for want of resources: repeats a
// call while it reports STATUS_INSUFFICIENT_RESOURCES (inline or through its callback).
template <typename Call>
auto until_resources(Call call, int attempts = 64) {
    auto result = call();
    for (int i = 1; i < attempts && result.final_status == STATUS_INSUFFICIENT_RESOURCES; ++i)
        result = call();
    return result;
}

// The edit that makes the reference provider fail `percent`% of the calls that may lack
// resources, half inline and half through the callback (GEN-ASYNC-02).
inline std::vector<std::pair<std::string, std::string>> resource_pressure(int percent) {
    return {{"\"resource_failure_percent\": [0-9]+",
             "\"resource_failure_percent\": " + std::to_string(percent)}};
}

}  // namespace ndkct::conformance::seed
