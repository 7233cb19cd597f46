#include "harness.hpp"

#include <algorithm>

namespace ndkct::model::test {

Readings default_readings() {
    return read_profile(spec::builtin_profile("default"));
}

Readings readings_from(std::string_view profile_json) {
    return read_profile(spec::load_profile(profile_json, "<test profile>"));
}

Readings readings_with(std::string_view policy, std::string_view value) {
    std::string json = R"({"name": "test", "policies": {")" + std::string(policy) + R"(": ")" +
                       std::string(value) + R"("}})";
    return readings_from(json);
}

HostMemoryView view_of(const Arena& arena) {
    return {static_cast<std::byte*>(arena.host_memory().PhysicalBase),
            arena.host_memory().PageCount};
}

bool names(const RuleIds& rules, std::string_view rule) {
    return std::find(rules.begin(), rules.end(), rule) != rules.end();
}

bool fails_with(const Expectation& e, NTSTATUS s, std::string_view rule) {
    return std::any_of(e.failures.begin(), e.failures.end(), [&](const ExpectedFailure& f) {
        return f.status == s && names(f.rules, rule);
    });
}

bool failure_names(const Expectation& e, std::string_view rule) {
    return std::any_of(e.failures.begin(), e.failures.end(),
                       [&](const ExpectedFailure& f) { return names(f.rules, rule); });
}

bool violation_names(const Verdict& v, std::string_view rule) {
    return std::any_of(v.violations.begin(), v.violations.end(),
                       [&](const Violation& x) { return !x.warning && names(x.rules, rule); });
}

bool warning_names(const Verdict& v, std::string_view rule) {
    return std::any_of(v.violations.begin(), v.violations.end(),
                       [&](const Violation& x) { return x.warning && names(x.rules, rule); });
}

std::string describe(const Expectation& e) {
    std::string out = e.undefined ? "undefined(" + e.undefined_why + ") " : "";
    for (const auto& f : e.failures) {
        out += "[" + std::to_string(f.status) + ":";
        for (const auto& r : f.rules)
            out += " " + r;
        out += " (" + f.why + ")] ";
    }
    return out.empty() ? "valid" : out;
}

SocketAddress ipv4(uint16_t port, uint8_t host) {
    SocketAddress a;
    a.present = true;
    a.family = 2;
    a.port = port;
    a.address = {127, 0, 0, host};
    a.length = 16;
    return a;
}

Observed status(NTSTATUS s) {
    Observed o;
    o.status = s;
    return o;
}

Observed pending() {
    return status(STATUS_PENDING);
}

Harness::Harness(Mode mode, Readings readings, size_t pages)
    : arena(pages, 7), model(std::move(readings), view_of(arena), mode) {
    adapter = model.open_adapter();
}

Applied Harness::accept(const Call& call, const Observed& observed) {
    Applied applied = model.apply(call, observed);
    EXPECT_TRUE(applied.verdict.clean()) << show(call) << ": " << applied.verdict.describe();
    return applied;
}

ObjectId Harness::create(const Call& call) {
    Applied applied = accept(call);
    EXPECT_NE(applied.created, 0u)
        << show(call) << " created nothing: " << describe(model.expect(call));
    return applied.created;
}

ObjectId Harness::pd() {
    return create(calls::CreatePd{adapter});
}

ObjectId Harness::cq(uint32_t depth) {
    return create(calls::CreateCq{adapter, depth});
}

ObjectId Harness::mr(ObjectId pd, bool fast_register) {
    return create(calls::CreateMr{pd, fast_register});
}

calls::CreateQp Harness::qp_call(ObjectId pd, ObjectId receive_cq, ObjectId initiator_cq,
                                 Context qp_context) const {
    return calls::CreateQp{pd, receive_cq, initiator_cq, qp_context, 16, 16, 4, 4, 64};
}

ObjectId Harness::qp(ObjectId pd, ObjectId receive_cq, ObjectId initiator_cq, Context qp_context) {
    return create(qp_call(pd, receive_cq, initiator_cq, qp_context));
}

uint32_t Harness::local_token(ObjectId mr) {
    Observed o;
    o.value = next_token();
    accept(calls::GetLocalTokenFromMr{mr}, o);
    return o.value;
}

uint32_t Harness::remote_token(ObjectId mr) {
    Observed o;
    o.value = next_token();
    accept(calls::GetRemoteTokenFromMr{mr}, o);
    return o.value;
}

uint32_t Harness::privileged_token(ObjectId pd) {
    Observed o;
    o.value = 0x7FFF0000u + pd;
    accept(calls::GetPrivilegedMemoryRegionToken{pd}, o);
    return o.value;
}

Region Harness::register_mr(ObjectId pd, const LockedBuffer& buffer, size_t offset, size_t length,
                            uint32_t flags) {
    Region r;
    r.mr = mr(pd, false);
    MdlChain chain = platform::describe(buffer, offset, length);
    MdlView view = view_mdl(chain.head(), length);
    r.va = view.virtual_address;
    accept(calls::RegisterMr{r.mr, view, length, flags});
    r.local = local_token(r.mr);
    r.remote = remote_token(r.mr);
    return r;
}

Lam Harness::build_lam(const LockedBuffer& buffer, size_t offset, size_t length) {
    MdlChain chain = platform::describe(buffer, offset, length);
    MdlView view = view_mdl(chain.head(), length);
    Lam lam;
    lam.fbo = view.first_byte_offset;
    for (PFN_NUMBER pfn : view.pfns)
        lam.pages.push_back(logical_of(pfn));
    Observed o;
    o.lam_pages = lam.pages;
    o.size_out = static_cast<uint32_t>(NDK_LOGICAL_ADDRESS_MAPPING_SIZE(lam.pages.size()));
    o.fbo_out = lam.fbo;
    lam.id = accept(calls::BuildLam{adapter, view, length, true, true, 1u << 20}, o).created;
    EXPECT_NE(lam.id, 0u);
    return lam;
}

ObjectId Harness::fr_mr(ObjectId pd, uint32_t pages, bool remote_access) {
    ObjectId id = mr(pd, true);
    accept(calls::InitializeFastRegisterMr{id, pages, remote_access});
    return id;
}

void Harness::connect(ObjectId qp_a, ObjectId qp_b, uint16_t port) {
    SocketAddress address = ipv4(port);
    ObjectId listener = create(calls::CreateListener{adapter});
    accept(calls::Listen{listener, address});
    ObjectId active = create(calls::CreateConnector{adapter});
    Applied connecting = accept(
        calls::Connect{active, qp_a, ipv4(static_cast<uint16_t>(port + 1), 2), address, 4, 4, 0},
        pending());
    ASSERT_NE(connecting.pending, 0u);

    // The connect request reaches the listener.
    ObjectId passive = 0;
    if (mode() == Mode::simulate) {
        for (const Event& e : model.take_events())
            if (e.kind == Event::Kind::connect_request && e.object == listener) passive = e.created;
    } else {
        Applied event = model.observe_event({Event::Kind::connect_request, listener});
        EXPECT_TRUE(event.verdict.clean()) << event.verdict.describe();
        passive = event.created;
    }
    ASSERT_NE(passive, 0u) << "no connect event reached the listener";

    Applied accepting = accept(calls::Accept{passive, qp_b, 4, 4, 0}, pending());
    ASSERT_NE(accepting.pending, 0u);
    if (mode() == Mode::simulate) {
        bool connect_done = false;
        for (const Event& e : model.take_events())
            connect_done |= e.kind == Event::Kind::request_complete &&
                            e.pending == connecting.pending && e.status == STATUS_SUCCESS;
        EXPECT_TRUE(connect_done) << "the accept did not complete the connect request";
    }
    Applied done = model.complete(connecting.pending, STATUS_SUCCESS);
    EXPECT_TRUE(done.verdict.clean()) << done.verdict.describe();

    accept(calls::CompleteConnect{active});
    if (mode() == Mode::simulate) {
        bool accept_done = false;
        for (const Event& e : model.take_events())
            accept_done |=
                e.kind == Event::Kind::request_complete && e.pending == accepting.pending;
        EXPECT_TRUE(accept_done) << "CompleteConnect did not complete the accept";
    }
    done = model.complete(accepting.pending, STATUS_SUCCESS);
    EXPECT_TRUE(done.verdict.clean()) << done.verdict.describe();
}

Pair Harness::connected_pair(uint32_t depth) {
    Pair p;
    p.pd = pd();
    p.cq_a = cq(depth);
    p.cq_b = cq(depth);
    p.qp_a = qp(p.pd, p.cq_a, p.cq_a, p.ctx_a);
    p.qp_b = qp(p.pd, p.cq_b, p.cq_b, p.ctx_b);
    connect(p.qp_a, p.qp_b, static_cast<uint16_t>(5000 + 2 * next_port_++));
    return p;
}

std::vector<Completion> Harness::drain(ObjectId cq) {
    const auto& entries = model.cq_entries(cq);
    std::vector<Completion> out(entries.begin(), entries.end());
    Observed o;
    o.value = static_cast<uint32_t>(out.size());
    accept(calls::GetCqResults{cq, 1024}, o);
    return out;
}

void fill(std::span<std::byte> bytes, uint8_t seed) {
    for (size_t i = 0; i < bytes.size(); ++i)
        bytes[i] = std::byte(static_cast<uint8_t>(seed + i * 7));
}

std::vector<std::byte> pattern(size_t n, uint8_t seed) {
    std::vector<std::byte> out(n);
    fill(out, seed);
    return out;
}

}  // namespace ndkct::model::test
