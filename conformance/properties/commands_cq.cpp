// The property commands of a CQ.
#include "commands.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "ndkct/spec/hex.hpp"

namespace ndkct::properties {

using conformance::Done;
using spec::hex;
namespace gen = rc::gen;

// ================= CQ =================

GetCqResults::GetCqResults(const World& w)
    : cq(w.pick(Kind::cq)), max_results(*gen::inRange<uint32_t>(1, 17)) {
    ex = NDKCT_VERSION_AT_LEAST(w.info->Version, 1, 2) && *gen::arbitrary<bool>();  // VER-11
}

void GetCqResults::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CQ>(cq);
    if (!c) return skipped(sut, *this, "the CQ was never created");
    auto results = sut.session.poll(c, max_results, ex);
    std::ostringstream a;
    a << results.size() << " results";
    for (const auto& r : results)
        a << " {" << spec::status_name(r.Status) << ", RequestContext=" << r.RequestContext
          << ", Type=" << r.Type << ", Bytes=" << r.BytesTransferred << "}";
    finish(sut, *this, a.str());
}

ArmCq::ArmCq(const World& w) : cq(w.pick(Kind::cq)) {
    type = *gen::weightedOneOf<uint32_t>({{3, gen::just<uint32_t>(NDK_CQ_NOTIFY_ANY)},
                                          {2, gen::just<uint32_t>(NDK_CQ_NOTIFY_ERRORS)},
                                          {2, gen::just<uint32_t>(NDK_CQ_NOTIFY_SOLICITED)}});
}

void ArmCq::run(const World&, Sut& sut) const {
    auto* c = sut.object<NDK_CQ>(cq);
    if (!c) return skipped(sut, *this, "the CQ was never created");
    sut.session.arm_cq(c, type);
    finish(sut, *this, "");
}

}  // namespace ndkct::properties
