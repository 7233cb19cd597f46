// GEN-CREATE-05: trap tables the consumer writes into objects' Dispatch members; every entry
// forwards to the object's original table and tells the consumer's calls from the provider's.
// See dispatch_trap.hpp.
#include "ndkct/conformance/dispatch_trap.hpp"

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <type_traits>
#include <unordered_map>

namespace ndkct::conformance {

namespace {

struct Trapped {
    const void* original = nullptr;  // the provider's table, as it was at install
    const void** member = nullptr;   // &object->Dispatch
    const void* trap = nullptr;      // the trap table written there
    NDK_OBJECT_TYPE type = NdkObjectTypeAdapter;
    bool closed = false;  // closed through the trap: its memory may be gone
};

struct State {
    std::mutex mutex;
    bool active = false;
    std::thread::id consumer;  // the thread whose calls are the consumer's
    std::unordered_map<const void*, Trapped> objects;
    const void* fallback[NdkObjectTypeMax] = {};  // an original table per type (see enter())
    size_t consumer_calls = 0;
    std::vector<std::string> provider_calls;
    size_t reported = 0;
};

State& state() {
    static State s;
    return s;
}

// > 0 while a trapped call runs on this thread; the outermost one's name.
thread_local int t_depth = 0;
thread_local const char* t_outer = nullptr;

const char* type_name(NDK_OBJECT_TYPE type) {
    switch (type) {
        case NdkObjectTypeAdapter:
            return "the adapter";
        case NdkObjectTypePd:
            return "a PD";
        case NdkObjectTypeCq:
            return "a CQ";
        case NdkObjectTypeMr:
            return "an MR";
        case NdkObjectTypeMw:
            return "an MW";
        case NdkObjectTypeQp:
            return "a QP";
        case NdkObjectTypeSrq:
            return "an SRQ";
        case NdkObjectTypeConnector:
            return "a connector";
        case NdkObjectTypeListener:
            return "a listener";
        case NdkObjectTypeSharedEndpoint:
            return "a shared endpoint";
        default:
            return "an object of unknown type";
    }
}

// The original table for a trapped call; records the call as the provider's unless it is the
// consumer's: on its thread, or in a Session hook (the consumer's code inside a provider
// callback), and not nested in another trapped call.
const void* enter(const void* object, NDK_OBJECT_TYPE type, const char* name) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.objects.find(object);
    bool consumer =
        t_depth == 0 && (std::this_thread::get_id() == s.consumer || Session::in_hook());
    if (consumer) {
        ++s.consumer_calls;
    } else {
        std::string where = t_depth > 0 ? std::string("from inside the consumer's ") + t_outer
                                        : std::string("on a thread of the provider's");
        s.provider_calls.push_back(
            std::string("provider called through the object's Dispatch after handout: ") + name +
            " of " + type_name(type) + ", " + where);
    }
    if (it != s.objects.end()) return it->second.original;
    // A trap entry called for an object never trapped: the provider copied the table pointer
    // to another object. Forward to the type's original so nothing crashes; it is recorded.
    s.provider_calls.push_back(std::string("a trap table entry (") + name + ") was called for " +
                               type_name(type) + " the consumer never trapped");
    return s.fallback[type];
}

void mark_closed(const void* object) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (auto it = s.objects.find(object); it != s.objects.end()) it->second.closed = true;
}

struct Nested {
    const char* saved;
    explicit Nested(const char* name) : saved(t_outer) {
        ++t_depth;
        if (!saved) t_outer = name;
    }
    ~Nested() {
        --t_depth;
        t_outer = saved;
    }
};

template <typename Table>
constexpr NDK_OBJECT_TYPE type_of_table() {
    if constexpr (std::is_same_v<Table, NDK_ADAPTER_DISPATCH>) return NdkObjectTypeAdapter;
    if constexpr (std::is_same_v<Table, NDK_PD_DISPATCH>) return NdkObjectTypePd;
    if constexpr (std::is_same_v<Table, NDK_CQ_DISPATCH>) return NdkObjectTypeCq;
    if constexpr (std::is_same_v<Table, NDK_MR_DISPATCH>) return NdkObjectTypeMr;
    if constexpr (std::is_same_v<Table, NDK_MW_DISPATCH>) return NdkObjectTypeMw;
    if constexpr (std::is_same_v<Table, NDK_QP_DISPATCH>) return NdkObjectTypeQp;
    if constexpr (std::is_same_v<Table, NDK_SRQ_DISPATCH>) return NdkObjectTypeSrq;
    if constexpr (std::is_same_v<Table, NDK_CONNECTOR_DISPATCH>) return NdkObjectTypeConnector;
    if constexpr (std::is_same_v<Table, NDK_LISTENER_DISPATCH>) return NdkObjectTypeListener;
    if constexpr (std::is_same_v<Table, NDK_SHARED_ENDPOINT_DISPATCH>)
        return NdkObjectTypeSharedEndpoint;
}

// One trap entry per dispatch member. Every NDK dispatch function takes its object first, so
// the entry finds the object's original table by that pointer and forwards the call unchanged.
template <auto Member>
struct Trap;

template <typename Table, typename R, typename Object, typename... Args,
          R (*Table::*Member)(Object*, Args...)>
struct Trap<Member> {
    static inline const char* name = "?";
    static inline bool closes = false;  // the object's NdkCloseObject entry

    static R call(Object* object, Args... args) {
        const auto* original =
            static_cast<const Table*>(enter(object, type_of_table<Table>(), name));
        if (!original) {  // unreachable unless a table of a type never trapped was called
            if constexpr (std::is_void_v<R>)
                return;
            else
                return R{};
        }
        Nested nested(name);
        if constexpr (std::is_same_v<R, NTSTATUS>) {
            // Marked before the call returns: once the close completes the memory may be reused.
            if (closes) mark_closed(object);
            NTSTATUS status = (original->*Member)(object, args...);
            if (closes && status != STATUS_SUCCESS && status != STATUS_PENDING) {
                // The close was refused: the object is still open and still trapped.
                std::lock_guard lock(state().mutex);
                if (auto it = state().objects.find(object); it != state().objects.end())
                    it->second.closed = false;
            }
            return status;
        } else {
            return (original->*Member)(object, args...);
        }
    }
};

template <auto Member, typename Fn>
void trap(Fn*& slot, const char* name, bool closes = false) {
    Trap<Member>::name = name;
    Trap<Member>::closes = closes;
    slot = &Trap<Member>::call;
}

#define NDKCT_TRAP(table, member) \
    trap<&std::remove_reference_t<decltype(table)>::member>(table.member, #member)
#define NDKCT_TRAP_CLOSE(table, member) \
    trap<&std::remove_reference_t<decltype(table)>::member>(table.member, #member, true)

struct TrapTables {
    NDK_ADAPTER_DISPATCH adapter{};
    NDK_PD_DISPATCH pd{};
    NDK_CQ_DISPATCH cq{};
    NDK_MR_DISPATCH mr{};
    NDK_MW_DISPATCH mw{};
    NDK_QP_DISPATCH qp{};
    NDK_SRQ_DISPATCH srq{};
    NDK_CONNECTOR_DISPATCH connector{};
    NDK_LISTENER_DISPATCH listener{};
    NDK_SHARED_ENDPOINT_DISPATCH shared_endpoint{};

    TrapTables() {
        NDKCT_TRAP(adapter, NdkQueryExtension);
        NDKCT_TRAP(adapter, NdkQueryAdapterInfo);
        NDKCT_TRAP(adapter, NdkCreateCq);
        NDKCT_TRAP(adapter, NdkCreatePd);
        NDKCT_TRAP(adapter, NdkCreateSharedEndpoint);
        NDKCT_TRAP(adapter, NdkCreateConnector);
        NDKCT_TRAP(adapter, NdkCreateListener);
        NDKCT_TRAP(adapter, NdkBuildLAM);
        NDKCT_TRAP(adapter, NdkReleaseLAM);

        NDKCT_TRAP_CLOSE(pd, NdkClosePd);
        NDKCT_TRAP(pd, NdkQueryExtension);
        NDKCT_TRAP(pd, NdkCreateMr);
        NDKCT_TRAP(pd, NdkCreateMw);
        NDKCT_TRAP(pd, NdkCreateSrq);
        NDKCT_TRAP(pd, NdkCreateQp);
        NDKCT_TRAP(pd, NdkCreateQpWithSrq);
        NDKCT_TRAP(pd, NdkGetPrivilegedMemoryRegionToken);

        NDKCT_TRAP_CLOSE(cq, NdkCloseCq);
        NDKCT_TRAP(cq, NdkQueryExtension);
        NDKCT_TRAP(cq, NdkResizeCq);
        NDKCT_TRAP(cq, NdkArmCq);
        NDKCT_TRAP(cq, NdkGetCqResults);
        NDKCT_TRAP(cq, NdkControlCqInterruptModeration);
        NDKCT_TRAP(cq, NdkGetCqResultsEx);

        NDKCT_TRAP_CLOSE(mr, NdkCloseMr);
        NDKCT_TRAP(mr, NdkQueryExtension);
        NDKCT_TRAP(mr, NdkRegisterMr);
        NDKCT_TRAP(mr, NdkDeregisterMr);
        NDKCT_TRAP(mr, NdkInitializeFastRegisterMr);
        NDKCT_TRAP(mr, NdkGetRemoteTokenFromMr);
        NDKCT_TRAP(mr, NdkGetLocalTokenFromMr);

        NDKCT_TRAP_CLOSE(mw, NdkCloseMw);
        NDKCT_TRAP(mw, NdkQueryExtension);
        NDKCT_TRAP(mw, NdkGetRemoteTokenFromMw);

        NDKCT_TRAP_CLOSE(qp, NdkCloseQp);
        NDKCT_TRAP(qp, NdkQueryExtension);
        NDKCT_TRAP(qp, NdkFlush);
        NDKCT_TRAP(qp, NdkSend);
        NDKCT_TRAP(qp, NdkReceive);
        NDKCT_TRAP(qp, NdkBind);
        NDKCT_TRAP(qp, NdkFastRegister);
        NDKCT_TRAP(qp, NdkInvalidate);
        NDKCT_TRAP(qp, NdkRead);
        NDKCT_TRAP(qp, NdkWrite);
        NDKCT_TRAP(qp, NdkSendAndInvalidate);

        NDKCT_TRAP_CLOSE(srq, NdkCloseSrq);
        NDKCT_TRAP(srq, NdkQueryExtension);
        NDKCT_TRAP(srq, NdkModifySrq);
        NDKCT_TRAP(srq, NdkSrqReceive);

        NDKCT_TRAP_CLOSE(connector, NdkCloseConnector);
        NDKCT_TRAP(connector, NdkQueryExtension);
        NDKCT_TRAP(connector, NdkConnect);
        NDKCT_TRAP(connector, NdkConnectWithSharedEndpoint);
        NDKCT_TRAP(connector, NdkCompleteConnect);
        NDKCT_TRAP(connector, NdkAccept);
        NDKCT_TRAP(connector, NdkReject);
        NDKCT_TRAP(connector, NdkGetConnectionData);
        NDKCT_TRAP(connector, NdkGetLocalAddress);
        NDKCT_TRAP(connector, NdkGetPeerAddress);
        NDKCT_TRAP(connector, NdkDisconnect);
        NDKCT_TRAP(connector, NdkCompleteConnectEx);
        NDKCT_TRAP(connector, NdkAcceptEx);

        NDKCT_TRAP_CLOSE(listener, NdkCloseListener);
        NDKCT_TRAP(listener, NdkQueryExtension);
        NDKCT_TRAP(listener, NdkListen);
        NDKCT_TRAP(listener, NdkGetLocalAddress);
        NDKCT_TRAP(listener, NdkControlConnectEvents);

        NDKCT_TRAP_CLOSE(shared_endpoint, NdkCloseSharedEndpoint);
        NDKCT_TRAP(shared_endpoint, NdkQueryExtension);
        NDKCT_TRAP(shared_endpoint, NdkGetLocalAddress);
    }

    const void* of(NDK_OBJECT_TYPE type) const {
        switch (type) {
            case NdkObjectTypeAdapter:
                return &adapter;
            case NdkObjectTypePd:
                return &pd;
            case NdkObjectTypeCq:
                return &cq;
            case NdkObjectTypeMr:
                return &mr;
            case NdkObjectTypeMw:
                return &mw;
            case NdkObjectTypeQp:
                return &qp;
            case NdkObjectTypeSrq:
                return &srq;
            case NdkObjectTypeConnector:
                return &connector;
            case NdkObjectTypeListener:
                return &listener;
            case NdkObjectTypeSharedEndpoint:
                return &shared_endpoint;
            default:
                return nullptr;
        }
    }
};

#undef NDKCT_TRAP
#undef NDKCT_TRAP_CLOSE

const TrapTables& trap_tables() {
    static const TrapTables tables;
    return tables;
}

// Every NDK object has its Dispatch right after the 40-byte header (GEN-LAYOUT-01).
const void** dispatch_member(void* object) {
    return reinterpret_cast<const void**>(static_cast<char*>(object) + offsetof(NDK_PD, Dispatch));
}

}  // namespace

DispatchTrap::DispatchTrap(Session& session) : session_(session) {
    trap_tables();  // built before any object points at them
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.active) throw SessionError("DispatchTrap: only one may be active at a time");
    s.active = true;
    s.consumer = std::this_thread::get_id();
    s.objects.clear();
    s.consumer_calls = 0;
    s.provider_calls.clear();
    s.reported = 0;
}

DispatchTrap::~DispatchTrap() {
    report();  // also sees Dispatch members the provider rewrote, before they are restored
    State& s = state();
    std::lock_guard lock(s.mutex);
    for (auto& [object, trapped] : s.objects)
        if (!trapped.closed && *trapped.member == trapped.trap) *trapped.member = trapped.original;
    s.objects.clear();
    s.active = false;
}

void DispatchTrap::install(void* object) {
    if (!object) throw SessionError("DispatchTrap::install: no object");
    auto type = static_cast<NDK_OBJECT_HEADER*>(object)->ObjectType;
    const void* table = trap_tables().of(type);
    if (!table)
        throw SessionError("DispatchTrap::install: Header.ObjectType " + std::to_string(type) +
                           " is no NDK object type");
    const void** member = dispatch_member(object);
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.objects.find(object);
    if (it != s.objects.end() && !it->second.closed && *member == table) return;  // trapped
    Trapped trapped;
    trapped.original = *member;
    trapped.member = member;
    trapped.trap = table;
    trapped.type = type;
    s.objects[object] = trapped;
    s.fallback[type] = trapped.original;
    *member = table;  // GEN-CREATE-05: the consumer may overwrite it once the object is handed out
}

size_t DispatchTrap::consumer_calls() const {
    std::lock_guard lock(state().mutex);
    return state().consumer_calls;
}

std::vector<std::string> DispatchTrap::provider_calls() const {
    std::lock_guard lock(state().mutex);
    return state().provider_calls;
}

size_t DispatchTrap::report() {
    std::map<std::string, size_t> seen;  // each distinct finding once, with its count
    {
        State& s = state();
        std::lock_guard lock(s.mutex);
        // GEN-CREATE-05: the member belongs to the consumer after handout; a provider that
        // writes it undoes the consumer's overwrite.
        for (auto& [object, trapped] : s.objects)
            if (!trapped.closed && *trapped.member != trapped.trap) {
                s.provider_calls.push_back(std::string("the provider rewrote the Dispatch of ") +
                                           type_name(trapped.type) + " after handing it out");
                trapped.trap = *trapped.member;  // reported once
            }
        for (size_t i = s.reported; i < s.provider_calls.size(); ++i)
            ++seen[s.provider_calls[i]];
        s.reported = s.provider_calls.size();
    }
    if (seen.empty()) return 0;
    model::Verdict v;
    size_t count = 0;
    for (const auto& [what, times] : seen) {
        count += times;
        v.add({{"GEN-CREATE-05"},
               times > 1 ? what + " (" + std::to_string(times) + " times)" : what,
               false});
    }
    session_.report(std::move(v));
    return count;
}

}  // namespace ndkct::conformance
