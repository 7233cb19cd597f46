// Fuzz target: the oracle (refmodel's Model in check mode) fed arbitrary call sequences with
// arbitrary handles and arguments, and arbitrary provider answers: statuses, out-parameters,
// callbacks, CQ entries and events. Whatever a provider (or a trace) presents, the oracle must
// answer with verdicts: never crash, never hang, never grow without bound.
//
// The input is a little program: each step reads an opcode byte, then what it needs. Handles
// are mostly the ids of objects the model knows (so sequences reach deep states), sometimes any
// 32-bit value. Every call is answered half the time as the model itself expects (so objects
// get created and connected), otherwise with a status from the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ndkct/model/model.hpp"
#include "ndkct/ntstatus.h"
#include "ndkct/spec/profile.hpp"

namespace {

using namespace ndkct::model;
namespace calls = ndkct::model::calls;

// Reads the input front to back; past the end everything is 0.
class Input {
  public:
    Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    bool empty() const { return at_ >= size_; }
    uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
    uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
    uint32_t u32() { return u16() | (static_cast<uint32_t>(u16()) << 16); }
    uint64_t u64() { return u32() | (static_cast<uint64_t>(u32()) << 32); }
    bool flag() { return u8() & 1; }
    // Small values are the interesting ones for sizes and counts; now and then any value.
    uint32_t count() {
        uint8_t b = u8();
        return b < 0xF0 ? b % 48 : u32();
    }

  private:
    const uint8_t* data_;
    size_t size_;
    size_t at_ = 0;
};

constexpr NTSTATUS kStatuses[] = {
    STATUS_SUCCESS,
    STATUS_PENDING,
    STATUS_INSUFFICIENT_RESOURCES,
    STATUS_INVALID_PARAMETER,
    STATUS_CANCELLED,
    STATUS_CONNECTION_INVALID,
    STATUS_NOT_SUPPORTED,
    STATUS_BUFFER_TOO_SMALL,
    STATUS_ACCESS_VIOLATION,
    STATUS_IO_TIMEOUT,
    STATUS_CONNECTION_REFUSED,
    STATUS_INVALID_DEVICE_STATE,
    STATUS_BUFFER_OVERFLOW,
};

struct Fuzz {
    Input in;
    Model& model;
    std::vector<uint64_t> pendings;  // ids of requests that returned STATUS_PENDING
    std::vector<Context> contexts;   // request contexts used so far (for CQ entries)

    ObjectId handle() {
        uint8_t b = in.u8();
        if (b >= 0xF8) return in.u32();
        return b % static_cast<ObjectId>(model.object_count() + 3);
    }
    Context context() {
        Context c = in.u8() < 0xE0 ? Context(in.u8()) << 4 : in.u64();
        contexts.push_back(c);
        if (contexts.size() > 256) contexts.erase(contexts.begin());
        return c;
    }
    NTSTATUS status() {
        uint8_t b = in.u8();
        if (b < 0xF0) return kStatuses[b % std::size(kStatuses)];
        return static_cast<NTSTATUS>(in.u32());
    }
    uint64_t address() { return in.flag() ? uint64_t(in.u16()) << 4 : in.u64(); }
    std::vector<Sge> sgl() {
        std::vector<Sge> out(in.u8() % 5);
        for (auto& s : out)
            s = {address(), in.count(), in.u32()};
        return out;
    }
    std::vector<std::byte> payload() {
        std::vector<std::byte> out(in.u8() % 16);
        for (auto& b : out)
            b = std::byte(in.u8());
        return out;
    }
    MdlView mdl() {
        MdlView v;
        v.present = in.u8() < 0xF0;
        v.contiguous = in.u8() < 0xE0;
        v.virtual_address = address();
        v.first_byte_offset = in.u8() < 0xF0 ? in.u16() % 4096 : in.u32();
        v.pfns.resize(in.u8() % 6);
        // Mostly pages of the arena, sometimes pages it does not have.
        for (auto& pfn : v.pfns)
            pfn = in.u8() < 0xF0 ? in.u8() % 40 : in.u64();
        v.chain_bytes = in.flag() ? v.pfns.size() * 4096ull : in.u64();
        return v;
    }
    SocketAddress socket() {
        SocketAddress a;
        a.present = in.u8() < 0xF0;
        a.family = in.flag() ? 2 : in.flag() ? 10 : in.u16();
        a.port = in.u8() < 0x80 ? 0 : in.u16();
        a.address[0] = 127;
        a.address[3] = 1;
        if (in.u8() >= 0xC0)
            for (auto& b : a.address)
                b = in.u8();
        a.length = a.family == 10 ? 28 : in.flag() ? 16 : in.u8();
        return a;
    }

    // One call of each kind; `which` picks the variant alternative.
    Call call(uint8_t which) {
        switch (which % std::variant_size_v<Call>) {
            case 0:
                return calls::QueryAdapterInfo{handle(), in.count(), in.flag()};
            case 1:
                return calls::CreateCq{handle(), in.count(), in.flag(), in.flag()};
            case 2:
                return calls::CreatePd{handle()};
            case 3:
                return calls::CreateSharedEndpoint{handle(), socket()};
            case 4:
                return calls::CreateConnector{handle()};
            case 5:
                return calls::CreateListener{handle(), in.flag()};
            case 6:
                return calls::BuildLam{handle(),  mdl(),     in.count(),
                                       in.flag(), in.flag(), in.count()};
            case 7:
                return calls::ReleaseLam{handle(), handle()};
            case 8:
                return calls::ResizeCq{handle(), in.count()};
            case 9:
                return calls::ArmCq{handle(), uint32_t(in.u8() % 4)};
            case 10:
                return calls::GetCqResults{handle(), in.count(), in.flag()};
            case 11:
                return calls::ControlCqInterruptModeration{handle(), in.count(), in.count()};
            case 12:
                return calls::RegisterMr{handle(), mdl(), in.count(), in.u32()};
            case 13:
                return calls::DeregisterMr{handle()};
            case 14:
                return calls::InitializeFastRegisterMr{handle(), in.count(), in.flag()};
            case 15:
                return calls::GetRemoteTokenFromMr{handle()};
            case 16:
                return calls::GetLocalTokenFromMr{handle()};
            case 17:
                return calls::GetRemoteTokenFromMw{handle()};
            case 18:
                return calls::ModifySrq{handle(), in.count(), in.count()};
            case 19:
                return calls::SrqReceive{handle(), context(), sgl()};
            case 20:
                return calls::Flush{handle()};
            case 21:
                return calls::Send{handle(), context(), sgl(), in.u32(), payload()};
            case 22:
                return calls::Receive{handle(), context(), sgl()};
            case 23:
                return calls::Bind{handle(),  context(),  handle(), handle(),
                                   address(), in.count(), in.u32()};
            case 24: {
                calls::FastRegister c{handle(),   context(),  handle(),  {},
                                      in.count(), in.count(), address(), in.u32()};
                c.adapter_pages.resize(in.u8() % 6);
                for (auto& p : c.adapter_pages)
                    p = address();
                return c;
            }
            case 25:
                return calls::Invalidate{handle(), context(), handle(), in.u32()};
            case 26:
                return calls::Read{handle(), context(), sgl(), address(), in.u32(), in.u32()};
            case 27:
                return calls::Write{handle(), context(), sgl(),    address(),
                                    in.u32(), in.u32(),  payload()};
            case 28:
                return calls::SendAndInvalidate{handle(), context(), sgl(),
                                                in.u32(), in.u32(),  payload()};
            case 29:
                return calls::CreateMr{handle(), in.flag()};
            case 30:
                return calls::CreateMw{handle()};
            case 31:
                return calls::CreateSrq{handle(), in.count(), in.count(), in.count(), in.flag()};
            case 32:
                return calls::CreateQp{handle(),   handle(),   handle(),   context(), in.count(),
                                       in.count(), in.count(), in.count(), in.count()};
            case 33:
                return calls::CreateQpWithSrq{handle(),  handle(),   handle(),   handle(),
                                              context(), in.count(), in.count(), in.count()};
            case 34:
                return calls::GetPrivilegedMemoryRegionToken{handle()};
            case 35:
                return calls::Connect{handle(),   handle(),   socket(),  socket(),
                                      in.count(), in.count(), in.count()};
            case 36:
                return calls::ConnectWithSharedEndpoint{handle(),   handle(),   handle(),  socket(),
                                                        in.count(), in.count(), in.count()};
            case 37:
                return calls::CompleteConnect{handle(), in.flag(), in.flag()};
            case 38:
                return calls::Accept{handle(),   handle(),  in.count(), in.count(),
                                     in.count(), in.flag(), in.flag()};
            case 39:
                return calls::Reject{handle(), in.count()};
            case 40:
                return calls::GetConnectionData{handle(), in.flag(), in.count(), in.flag()};
            case 41:
                return calls::GetLocalAddress{handle(), in.count()};
            case 42:
                return calls::GetPeerAddress{handle(), in.count()};
            case 43:
                return calls::Disconnect{handle()};
            case 44:
                return calls::Listen{handle(), socket()};
            case 45:
                return calls::ControlConnectEvents{handle(), in.flag()};
            case 46:
                return calls::CloseObject{handle(), in.flag()};
            default:
                return calls::QueryExtensionInterface{handle()};
        }
    }

    NDK_RESULT_EX result() {
        NDK_RESULT_EX r{};
        r.Status = status();
        r.BytesTransferred = in.count();
        r.QPContext = reinterpret_cast<void*>(static_cast<uintptr_t>(in.flag() ? in.u8() : 0));
        Context request = !contexts.empty() && in.flag() ? contexts[in.u8() % contexts.size()]
                                                         : Context(in.u64());
        r.RequestContext = reinterpret_cast<void*>(static_cast<uintptr_t>(request));
        r.Type = static_cast<NDK_OPERATION_TYPE>(in.u8() % 10);
        r.ProviderErrorCode = in.u32();
        r.TypeSpecificCompletionOutput = in.u32();
        return r;
    }

    // A provider's answer to a call: the model's own choice, or a status from the input with
    // out-parameters filled from it.
    Observed answer(const Call& c) {
        Observed o;
        bool as_expected = in.flag();
        o.status = as_expected ? model.expect(c).model_status() : status();
        o.value = in.flag() ? in.u32() : in.u8();
        if (in.flag()) o.size_out = in.count();
        if (in.flag()) o.fbo_out = in.u16();
        if (std::holds_alternative<calls::BuildLam>(c)) {
            o.lam_pages.resize(in.u8() % 6);
            for (auto& p : o.lam_pages)
                p = address();
        }
        if (std::holds_alternative<calls::GetCqResults>(c)) {
            o.results.resize(in.u8() % 4);
            for (auto& r : o.results)
                r = result();
        }
        if (in.u8() >= 0xF0) o.address = socket();
        o.inbound_read_limit = in.count();
        o.outbound_read_limit = in.count();
        o.output_written_while_pending = in.u8() >= 0xF8;
        return o;
    }

    void step() {
        switch (in.u8() % 8) {
            case 0:
            case 1:
            case 2: {  // a call and the provider's answer
                Call c = call(in.u8());
                Observed o = answer(c);
                Applied a = model.apply(c, o);
                if (o.status == STATUS_PENDING && a.pending) pendings.push_back(a.pending);
                break;
            }
            case 3: {  // a pending request's callback, the right one or any
                uint64_t id = !pendings.empty() && in.u8() < 0xE0
                                  ? pendings[in.u8() % pendings.size()]
                                  : in.u64();
                Observed o;
                o.status = status();
                (void)model.complete(id, o.status, o);
                break;
            }
            case 4: {  // an entry from NdkGetCqResults(Ex)
                NDK_RESULT_EX r = result();
                (void)model.observe_completion(handle(), r, in.flag());
                break;
            }
            case 5: {  // a callback that is not a request's: notification, connect, disconnect
                Event e{};
                e.kind = static_cast<Event::Kind>(in.u8() % 5);
                e.object = handle();
                e.created = handle();
                e.status = status();
                e.pending =
                    !pendings.empty() && in.flag() ? pendings[in.u8() % pendings.size()] : in.u64();
                (void)model.observe_event(e);
                break;
            }
            case 6:  // the harness gave up waiting for a QP's entries
                (void)model.expect_nothing_outstanding(handle());
                (void)model.outstanding_completions(handle());
                (void)model.notification_owed(handle());
                break;
            default: {  // introspection a harness does between calls
                ObjectId h = handle();
                (void)model.find(h);
                (void)model.object_of_token(handle(), in.u32(), in.flag());
                break;
            }
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const Readings readings = read_profile(ndkct::spec::builtin_profile("default"));
    // 40 pages of host memory: MDLs name pages inside it and, now and then, outside.
    static std::vector<std::byte> arena(40 * PAGE_SIZE);
    std::fill(arena.begin(), arena.end(), std::byte{0});
    Model model(readings, HostMemoryView{arena.data(), 40}, Mode::check);
    Fuzz fuzz{Input(data, size), model, {}, {}};
    ObjectId adapter = model.open_adapter();
    size_t steps = 0;
    while (!fuzz.in.empty() && steps < 4096) {
        fuzz.step();
        ++steps;
        // Bounded growth: every call creates at most one object.
        if (model.object_count() > steps + 1) __builtin_trap();
    }
    (void)model.close_adapter(adapter);
    return 0;
}
